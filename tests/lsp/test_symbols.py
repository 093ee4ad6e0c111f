"""Hover and code lens resolve symbols as Python does (jedi), in a flask-like workspace."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.lsp.conftest import NO_EMBED, write

GLOBALS = '''"""Context globals."""
from .proxy import LocalProxy

request = LocalProxy("request")
session = LocalProxy("session")
'''

PROXY = '''class LocalProxy:
    """A proxy to a context-local object."""

    def __init__(self, name):
        self.name = name
'''

SANSIO = '''class Blueprint:
    """Records operations to run on an application."""

    def register(self, app, options):
        """Called by the application to register this blueprint."""
        return options
'''

APP = '''import json

from .globals import request
from .sansio.blueprints import Blueprint as SansioBlueprint


class App:
    def make_response(self, rv):
        return rv

    def full_dispatch(self, rv):
        response = self.make_response(rv)
        return response

    def render(self):
        return json.dumps({"request": request})

    def register_blueprint(self, blueprint: SansioBlueprint, options):
        blueprint.register(self, options)


def register():
    """A tutorial view, named like the method."""
    return "register"
'''

OVERLOADS = """from typing import overload


@overload
def convert(value: int) -> int: ...
@overload
def convert(value: str) -> str: ...
def convert(value):
    return value


def use():
    return convert(1) + convert(2)
"""

DOC = """# Guide

Use `request` to read the incoming data. Call `convert` on values.
We convert values here in plain English, which is not a reference.
"""


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return write(
        tmp_path / "shop",
        {
            "pkg/__init__.py": "",
            "pkg/globals.py": GLOBALS,
            "pkg/proxy.py": PROXY,
            "pkg/sansio/__init__.py": "",
            "pkg/sansio/blueprints.py": SANSIO,
            "pkg/app.py": APP,
            "pkg/conv.py": OVERLOADS,
            "docs/guide.md": DOC,
        },
    )


async def hover_text(s: Any, uri: str, line: int, col: int) -> str | None:
    h = await s.client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=col),
        )
    )
    return None if h is None else h.contents.value  # type: ignore[union-attr]


async def resolved_hover(s: Any, uri: str, line: int, col: int, timeout: float = 20.0) -> str:
    """jedi may run over the hover budget while it warms up (the name lookup answers, marked
    "by name"); it finishes in the background, and a later hover is resolved."""
    deadline = time.monotonic() + timeout
    while True:
        text = await hover_text(s, uri, line, col)
        if text is not None and "by name" not in text:
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"never resolved: {text!r}")
        await _sleep(0.2)


async def _sleep(t: float) -> None:
    import asyncio

    await asyncio.sleep(t)


def first_definition(md: str) -> str:
    line = next(x for x in md.split("\n") if x.startswith("Defined at "))
    return line.split("`")[1]


async def test_hover_resolves_globals_locals_aliases_methods_and_builtins(
    start: Any, shop: Path
) -> None:
    s = await start([shop])
    await s.wait_indexed()
    uri = s.open(shop / "pkg/app.py")
    # module-level global proxy `request` (line 16: json.dumps({"request": request}))
    md = await resolved_hover(s, uri, 15, 43)
    assert first_definition(md) == "pkg/globals.py:4"
    # the local `response` (line 13: return response) -> its binding line, no evidence
    md = await resolved_hover(s, uri, 12, 16)
    assert first_definition(md) == "pkg/app.py:12"
    assert "Used in the code" not in md
    # the aliased import -> the class in sansio/blueprints.py
    md = await resolved_hover(s, uri, 17, 45)
    assert first_definition(md) == "pkg/sansio/blueprints.py:1"
    assert "Records operations" in md  # docstring summary
    # blueprint.register(...) -> the method, not the tutorial function of the same name
    md = await resolved_hover(s, uri, 18, 20)
    assert first_definition(md) == "pkg/sansio/blueprints.py:4"
    assert "pkg/app.py:22" not in md
    # a stdlib name -> no workspace definition
    md = await resolved_hover(s, uri, 15, 21)
    assert "Defined at" not in md and "outside the workspace" in md and "json.dumps" in md


async def test_hover_evidence_is_about_the_symbol_not_the_word(start: Any, shop: Path) -> None:
    s = await start([shop])
    await s.wait_indexed()
    uri = s.open(shop / "pkg/conv.py")
    md = await resolved_hover(s, uri, 12, 12)  # convert(1)
    assert "docs/guide.md:3" in md  # `convert` in backticks
    assert "docs/guide.md:4" not in md  # "We convert values" is prose


async def lenses_of(s: Any, uri: str) -> list[types.CodeLens]:
    lenses = await s.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return [await s.client.code_lens_resolve_async(lens) for lens in lenses]


async def test_lens_counts_equal_the_peek_and_overloads_share_one_lens(
    start: Any, shop: Path
) -> None:
    s = await start([shop])
    await s.wait_indexed()
    lenses = await lenses_of(s, s.open(shop / "pkg/conv.py"))
    converts = [lens for lens in lenses if lens.data["name"] == "convert"]
    assert len(converts) == 1  # three defs (two @overload stubs), one lens
    cmd = converts[0].command
    assert cmd is not None
    locations = cmd.arguments[2]
    # usages are references: convert(1) and convert(2), both on one line; the doc line with
    # `convert`; not the prose
    assert cmd.title == "1 doc reference · 2 usages"
    assert len(locations) == 3


async def test_lens_peek_is_capped_and_says_so(start: Any, tmp_path: Path) -> None:
    calls = "\n".join(f"    widget_count({i})" for i in range(70))
    root = write(
        tmp_path / "many",
        {"w.py": f"def widget_count(n):\n    return n\n\n\ndef use():\n{calls}\n"},
    )
    s = await start([root])
    await s.wait_indexed()
    lenses = await lenses_of(s, s.open(root / "w.py"))
    cmd = next(lens.command for lens in lenses if lens.data["name"] == "widget_count")
    assert cmd is not None
    assert len(cmd.arguments[2]) == 50
    assert cmd.title == "0 doc references · 70 usages · showing 50 of 70"


async def test_settings_turn_hover_and_lens_off(start: Any, shop: Path) -> None:
    s = await start(
        [shop], settings={**NO_EMBED, "hover": {"enabled": False}, "codeLens": {"enabled": False}}
    )
    await s.wait_indexed()
    uri = s.open(shop / "pkg/conv.py")
    assert await hover_text(s, uri, 12, 12) is None
    assert await lenses_of(s, uri) == []


async def test_lens_command_runs_on_the_server_for_other_clients(start: Any, shop: Path) -> None:
    s = await start([shop])
    await s.wait_indexed()
    caps = s.capabilities
    assert caps is not None and caps.execute_command_provider is not None
    assert "codeCompass.showReferences" in caps.execute_command_provider.commands
    lens = next(
        lens for lens in await lenses_of(s, s.open(shop / "pkg/conv.py"))
        if lens.data["name"] == "convert"
    )  # fmt: skip
    assert lens.command is not None
    result = await s.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=lens.command.command, arguments=lens.command.arguments)
    )
    assert [loc["uri"] for loc in result] == [loc["uri"] for loc in lens.command.arguments[2]]


async def test_a_client_that_runs_the_command_itself_is_not_offered_it(
    start: Any, shop: Path
) -> None:
    s = await start(
        [shop],
        init_options={"settings": NO_EMBED, "clientCommands": ["codeCompass.showReferences"]},
    )
    caps = s.capabilities
    assert caps is not None
    offered = caps.execute_command_provider.commands if caps.execute_command_provider else []
    assert "codeCompass.showReferences" not in offered
