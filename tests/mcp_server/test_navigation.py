"""`definition` and `references` over MCP, driven by the SDK client as an agent would.

The loop: locate with search_code, read the hit with open_file, take the method call it shows,
ask `definition` at that position (two classes define the method: the receiver's type decides),
ask `references` at the definition, and read every reference back with open_file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK (`mcp` in requirements.lock) is not installed")

from tests.conftest import write_tree
from tests.mcp_server.harness import mcp_client, ok, refused, wait_indexed

SHOP = {
    "shop/__init__.py": "",
    "shop/payments.py": (
        "class CardGateway:\n"
        "    def charge(self, amount):\n"
        '        """Charge a card through the acquirer."""\n'
        "        return amount * 100\n"
        "\n"
        "\n"
        "class VoucherGateway:\n"
        "    def charge(self, amount):\n"
        "        return 0\n"
    ),
    "shop/checkout.py": (
        "from shop.payments import CardGateway, VoucherGateway\n"
        "\n"
        "\n"
        "def checkout_total(cart):\n"
        '    """Charge the cart total to the customer card at checkout."""\n'
        "    gateway = CardGateway()\n"
        "    return gateway.charge(sum(cart))\n"
        "\n"
        "\n"
        "def refund(amount, voucher: VoucherGateway):\n"
        "    card: CardGateway = CardGateway()\n"
        "    voucher.charge(amount)\n"
        "    return card.charge(-amount)\n"
    ),
    "docs/notes.md": "The gateway's `charge` is retried once.\n",
    ".env": "SECRET_TOKEN=abc\n",
}


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "shop-ws", SHOP)


async def test_agent_follows_a_call_to_its_definition_and_references(
    shop: Path, tmp_path: Path
) -> None:
    calls: list[str] = []
    async with mcp_client(shop, storage=tmp_path / "st") as client:
        await wait_indexed(client)

        async def use(tool: str, **arguments: Any) -> dict[str, Any]:
            calls.append(tool)
            return await ok(client, tool, **arguments)

        found = await use("search_code", query="charge the cart total to the customer card")
        hit = next(h for h in found["hits"] if h["path"] == "shop/checkout.py")
        read = await use(
            "open_file", path=hit["path"], startLine=hit["startLine"], endLine=hit["endLine"]
        )
        # The agent picks the first method call in what it read: `gateway.charge(...)`.
        lines = read["text"].split("\n")
        offset, text = next((i, t) for i, t in enumerate(lines) if ".charge(" in t)
        line = read["startLine"] + offset
        column = text.index(".charge(") + 2  # 1-based, on the method's name

        defined = await use("definition", path=hit["path"], line=line, column=column)
        assert defined["name"] == "charge"
        first = defined["definitions"][0]
        # CardGateway.charge, not VoucherGateway.charge: the receiver's type decides.
        assert (first["path"], first["line"], first["symbol"]) == (
            "shop/payments.py", 2, "CardGateway.charge"
        )  # fmt: skip
        assert first["resolved"] is True and first["kind"] == "method"
        assert first["snippet"].startswith("    def charge(self, amount):")  # from disk
        assert all(d["symbol"] != "VoucherGateway.charge" for d in defined["definitions"])

        refs = await use(
            "references", path=first["path"], line=first["line"], column=first["column"]
        )
        where = [(r["path"], r["line"], r["kind"]) for r in refs["references"]]
        # The definition first (as compilers list it), then both calls on a CardGateway
        # (inferred and annotated): not the voucher's call, not the Markdown note.
        assert where == [
            ("shop/payments.py", 2, "definition"),
            ("shop/checkout.py", 7, "reference"),
            ("shop/checkout.py", 13, "reference"),
        ]
        assert refs["total"] == 3 and all(r["resolved"] for r in refs["references"])
        for r in refs["references"]:
            back = await use("open_file", path=r["path"], startLine=r["line"], endLine=r["line"])
            assert back["text"].strip() == r["snippet"]
            assert back["text"][r["column"] - 1 :].startswith("charge")

        # And the other class's method has its own reference only.
        voucher = await use("references", path="shop/payments.py", line=8, column=9)
        assert [(r["path"], r["line"]) for r in voucher["references"]] == [
            ("shop/payments.py", 8),
            ("shop/checkout.py", 12),
        ]
    assert calls[:5] == ["search_code", "open_file", "definition", "references", "open_file"]


async def test_outside_names_and_positions_without_identifier(shop: Path, tmp_path: Path) -> None:
    async with mcp_client(shop, storage=tmp_path / "st") as client:
        await wait_indexed(client)
        # `sum` is a builtin: no workspace location, and the result says where it lives.
        builtin = await ok(client, "definition", path="shop/checkout.py", line=7, column=27)
        assert builtin["definitions"] == [] and "sum" in builtin["outside"]
        assert "outside this workspace" in builtin["note"]
        blank = await ok(client, "definition", path="shop/checkout.py", line=2, column=1)
        assert blank["name"] == "" and blank["definitions"] == []
        assert "No identifier" in blank["note"]


async def test_bad_positions_are_tool_errors_with_the_field(shop: Path, tmp_path: Path) -> None:
    async with mcp_client(shop, storage=tmp_path / "st") as client:
        await wait_indexed(client)
        text = await refused(client, "definition", path="../outside.py", line=1, column=1)
        assert text.startswith("path:") and ".." in text
        text = await refused(client, "references", path="/etc/passwd", line=1, column=1)
        assert text.startswith("path:") and "relative" in text
        text = await refused(client, "definition", path=".env", line=1, column=1)
        assert text.startswith("path:") and "secret" in text
        text = await refused(client, "definition", path="shop/nope.py", line=1, column=1)
        assert text.startswith("path:") and "no file" in text
        text = await refused(client, "definition", path="shop/checkout.py", line=0, column=1)
        assert text.startswith("line:")
        text = await refused(client, "definition", path="shop/checkout.py", line=99, column=1)
        assert text.startswith("line:") and "past the end" in text
        text = await refused(client, "definition", path="shop/checkout.py", line=7, column=0)
        assert text.startswith("column:")
        text = await refused(client, "definition", path="shop/checkout.py", line=7, column=500)
        assert text.startswith("column:") and "past the end" in text
        text = await refused(client, "references", path="shop/checkout.py", line=7)
        assert text.startswith("column:") and "required" in text
        assert re.search(r"not a parameter", await refused(
            client, "definition", path="shop/checkout.py", line=7, column=5, col=3
        ))  # fmt: skip


async def test_find_symbol_lists_real_declarations_before_aliases(tmp_path: Path) -> None:
    ws = write_tree(
        tmp_path / "alias-ws",
        {
            "pkg/__init__.py": "",
            "pkg/impl.py": "def render(page):\n    return page\n",
            # A wrapper name bound to the real function, listed first by the symbol table.
            "pkg/a_compat.py": "from pkg.impl import render as _render\n\nrender = _render\n",
        },
    )
    async with mcp_client(ws, storage=tmp_path / "st") as client:
        await wait_indexed(client)
        found = await ok(client, "find_symbol", name="render")
        rows = [(d["path"], d["declaration"]) for d in found["definitions"]]
        assert rows[0] == ("pkg/impl.py", True), rows
        assert ("pkg/a_compat.py", False) in rows, rows
