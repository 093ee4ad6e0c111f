"""Lens counts equal an independent count: NAME tokens (tokenize) and doc mentions."""

from __future__ import annotations

import asyncio
import copy
import io
import re
import time
import tokenize
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.lsp.conftest import CAPABILITIES, write

FILES = {
    "shop/pricing.py": (
        "def apply_discount(total, rate):\n"
        '    """Return total minus rate; apply_discount in a docstring is not a usage."""\n'
        "    return total * (1 - rate)\n"
        "\n"
        "\n"
        "def run(job):\n"
        "    return job\n"
    ),
    "shop/cart.py": (
        "from shop.pricing import apply_discount, run\n"
        "\n"
        "# apply_discount in a comment is not a usage\n"
        "LABEL = 'apply_discount in a string is not a usage'\n"
        "\n"
        "\n"
        "def checkout(cart):\n"
        "    total = apply_discount(cart.total, 0.1)\n"
        "    return run(apply_discount(total, 0.0))\n"
    ),
    "shop/batch.py": (
        "from shop.pricing import apply_discount\n\n\ndef batch(totals):\n"
        + "".join(
            f"    t{i} = apply_discount(totals[{i}], 0.1)  # apply_discount\n" for i in range(60)
        )
    ),
    "ci.yaml": "steps:\n  - run: make test\n  - run: apply_discount\n",
    "docs/guide.md": (
        "# Guide\n"
        "\n"
        "Call `apply_discount` before checkout; apply_discount also rounds.\n"
        "You can run the shop. Use `run` to start a job.\n"
    ),
}


def reference(root: Path, name: str) -> tuple[int, int]:
    """(doc lines, code lines) counted without the server: tokenize for code (minus the
    definition's line), backticks or a code-looking bare name for docs."""
    code: set[tuple[str, int]] = set()
    for f in root.rglob("*.py"):
        for tok in tokenize.generate_tokens(io.StringIO(f.read_text()).readline):
            if tok.type == tokenize.NAME and tok.string == name:
                code.add((f.name, tok.start[0]))
    code -= {("pricing.py", n) for n, line in enumerate(FILES["shop/pricing.py"].split("\n"), 1)
             if line.startswith(f"def {name}(")}  # fmt: skip
    bare = "_" in name
    docs = 0
    for line in (root / "docs/guide.md").read_text().split("\n"):
        ident = rf"(?<!\w){re.escape(name)}(?!\w)"
        if re.search(rf"`{ident}`", line) or (bare and re.search(ident, line)):
            docs += 1
    return docs, len(code)


async def test_lens_numbers_equal_an_independent_count(start: Any, tmp_path: Path) -> None:
    root = write(tmp_path / "ws", FILES)
    s = await start([root])
    await s.wait_indexed()
    uri = s.open(root / "shop/pricing.py")
    lenses = await s.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    titles = {}
    for lens in lenses or []:
        # Within its budget a resolve counts what it could not resolve yet "by name" (a
        # loaded machine); the rest is resolved in the background and the next resolve
        # sees it: ask again until nothing is left by name.
        deadline = time.monotonic() + 120
        while True:
            done = await s.client.code_lens_resolve_async(lens)
            assert done.command is not None
            titles[lens.data["name"]] = done.command.title
            if "by name" not in done.command.title or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
    for name in ("apply_discount", "run"):
        docs, usages = reference(root, name)
        m = re.search(r"(\d+) doc references? · (\d+) usages?", titles[name])
        assert m is not None, titles[name]
        # `run:` in ci.yaml and "You can run" in prose are not counted
        assert (int(m.group(1)), int(m.group(2))) == (docs, usages), (name, titles[name])
    # past the 50 listed locations the count goes on (from the indexed passages)
    assert reference(root, "run") == (1, 2) and reference(root, "apply_discount") == (1, 64)
    assert "showing 50 of 65" in titles["apply_discount"]


RESOLVED = {
    "shop/orders.py": (
        "class Cart:\n"
        "    def total(self):\n"
        "        return 1\n"
        "\n"
        "    def twice(self):\n"
        "        return self.total() + self.total()\n"
        "\n"
        "\n"
        "class Order:\n"
        "    def total(self):\n"
        "        return 2\n"
        "\n"
        "\n"
        "def order_total(order: Order):\n"
        "    return order.total()\n"
    ),
    "shop/report.py": (
        "from shop.orders import Cart\n"
        "\n"
        "\n"
        "def report(cart: Cart, anything):\n"
        "    # total in a comment\n"
        "    return cart.total(), anything.total()\n"
    ),
}


async def test_lens_usages_are_references_that_resolve(start: Any, tmp_path: Path) -> None:
    """Cart.total's usages are the calls that name it; Order.total's call is not one, and a
    call on a value of unknown type is counted apart, by name. The title's numbers are the
    locations the lens's command lists."""
    root = write(tmp_path / "ws", RESOLVED)
    s = await start([root])
    await s.wait_indexed()
    uri = s.open(root / "shop/orders.py")
    lenses = await s.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    by_container = {
        lens.data["container"]: lens for lens in lenses or [] if lens.data["name"] == "total"
    }
    done = await s.client.code_lens_resolve_async(by_container["Cart"])
    assert done.command is not None
    title, locations = done.command.title, done.command.arguments[2]
    listed = sorted((loc["uri"].rsplit("/", 1)[-1], loc["range"]["start"]["line"] + 1,
                     loc["range"]["start"]["character"]) for loc in locations)  # fmt: skip
    # self.total() twice on line 6, cart.total() in report.py; anything.total() by name
    assert listed == [("orders.py", 6, 20), ("orders.py", 6, 35), ("report.py", 6, 16),
                      ("report.py", 6, 34)], (title, listed)  # fmt: skip
    assert title.startswith("0 doc references · 3 usages · 1 by name"), title
    done = await s.client.code_lens_resolve_async(by_container["Order"])
    assert done.command is not None
    assert done.command.title.startswith("0 doc references · 1 usage · 1 by name")
    assert len(done.command.arguments[2]) == 2


JEDI_ONLY = {
    "shop/carts.py": (
        "class Cart:\n"
        "    def checkout(self):\n"
        "        return 1\n"
        "\n"
        "\n"
        "def new_cart():\n"
        "    return Cart()\n"
    ),
    "shop/flow.py": (
        "from shop.carts import new_cart\n"
        "\n"
        "\n"
        "def buy():\n"
        "    cart = new_cart()\n"
        "    return cart.checkout()\n"
    ),
}


async def test_a_token_only_jedi_resolves_moves_from_by_name_to_usages(
    start: Any, tmp_path: Path
) -> None:
    """`new_cart().checkout()`: the parse tree cannot type a call's result, so the first answer
    counts the token by name; jedi resolves it in the background and a later resolve counts it
    as a usage."""
    root = write(tmp_path / "ws", JEDI_ONLY)
    caps = copy.deepcopy(CAPABILITIES)
    assert caps.workspace is not None
    caps.workspace.code_lens = types.CodeLensWorkspaceClientCapabilities(refresh_support=True)
    s = await start([root], capabilities=caps)
    refreshes: list[object] = []

    @s.client.feature("workspace/codeLens/refresh")
    def _refresh(*args: object) -> None:  # pygls passes (client, params)
        refreshes.append(args)

    await s.wait_indexed()
    uri = s.open(root / "shop/carts.py")
    lenses = await s.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    lens = next(lens for lens in lenses or [] if lens.data["name"] == "checkout")
    first = await s.client.code_lens_resolve_async(lens)
    assert first.command is not None
    assert first.command.title == "0 doc references · 0 usages · 1 by name", first.command.title
    deadline = time.monotonic() + 60
    title = first.command.title
    while title != "0 doc references · 1 usage" and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        done = await s.client.code_lens_resolve_async(lens)
        assert done.command is not None
        title = done.command.title
        assert len(done.command.arguments[2]) == 1
    assert title == "0 doc references · 1 usage"
    # the client that can refresh its lenses was asked to, once jedi's answer changed one
    assert refreshes
