"""Projects from workspace folders: isolation, add/remove at run time, settings, buffers."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Session, poll_until

eventually = partial(poll_until, timeout=5.0)  # this module's patience


async def paths_for(s: Session, query: str, **params: Any) -> set[tuple[str, str]]:
    r = await s.request("codeCompass/search", {"query": query, "topK": 20, **params})
    return {(h["project"], h["path"]) for h in r["hits"]}


async def snippets_with(s: Session, word: str) -> set[str]:
    """Paths of hits whose snippet really contains `word` (not just a fuzzy match)."""
    r = await s.request("codeCompass/search", {"query": word, "topK": 20, "mode": "lexical"})
    return {h["path"] for h in r["hits"] if word in h["snippet"]}


async def test_multi_root_isolation(start: Any, alpha: Path, beta: Path) -> None:
    s = await start([alpha, beta])
    status = await s.wait_indexed()
    assert sorted(p["name"] for p in status["projects"]) == ["alpha", "beta"]
    # Each folder's unique words are found in it...
    assert ("beta", "weather.py") in await paths_for(s, "zanzibar monsoon", project="beta")
    assert ("alpha", "pricing.py") in await paths_for(s, "quokka ledger", project="alpha")
    # ...and a query scoped to one folder never returns the other's content.
    for query in ("zanzibar monsoon", "forecast_rainfall", "compute_discount", "quokka"):
        for project in ("alpha", "beta"):
            hits = await s.request(
                "codeCompass/search", {"query": query, "project": project, "topK": 20}
            )
            for h in hits["hits"]:
                assert h["project"] == project, (query, project, h)
                root = alpha if project == "alpha" else beta
                assert (root / h["path"]).exists()
    assert await paths_for(s, "zanzibar", project="alpha") == set()
    assert await paths_for(s, "quokka", project="beta") == set()
    # Unscoped: both projects may answer, each hit labelled with its own project.
    both = await paths_for(s, "forecast_rainfall compute_discount")
    assert {p for p, _ in both} == {"alpha", "beta"}


async def test_folders_added_and_removed_at_run_time(start: Any, alpha: Path, beta: Path) -> None:
    s = await start([alpha])
    await s.wait_indexed()
    s.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=beta.as_uri(), name="beta")], removed=[]
            )
        )
    )

    async def beta_ready() -> bool:
        st = await s.request("codeCompass/status", {})
        return any(p["name"] == "beta" and p["state"] == "ready" for p in st["projects"])

    await eventually(beta_ready, timeout=15)
    assert ("beta", "weather.py") in await paths_for(s, "zanzibar", project="beta")

    s.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[],
                removed=[types.WorkspaceFolder(uri=alpha.as_uri(), name="alpha")],
            )
        )
    )

    async def alpha_gone() -> bool:
        st = await s.request("codeCompass/status", {})
        return [p["name"] for p in st["projects"]] == ["beta"]

    await eventually(alpha_gone, timeout=15)
    assert await paths_for(s, "compute_discount quokka") == set()
    with pytest.raises(JsonRpcException) as info:
        await s.request("codeCompass/search", {"query": "quokka", "project": "alpha"})
    assert info.value.code == -32602


async def test_settings_from_init_change_and_pull(start: Any, alpha: Path) -> None:
    s = await start([alpha], settings={"embeddings": {"enabled": False}, "search.topK": 1})
    await s.wait_indexed()
    query = {"query": "order total discount"}
    assert len((await s.request("codeCompass/search", query))["hits"]) == 1

    # Push model: the settings object in the notification.
    s.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"codeCompass": {"search": {"topK": 3}}})
    )

    async def top_k_is(n: int) -> bool:
        st = await s.request("codeCompass/status", {})
        return bool(st["settings"]["search.topK"] == n)

    await eventually(lambda: top_k_is(3))
    assert len((await s.request("codeCompass/search", query))["hits"]) == 3

    # Pull model (VS Code): settings null -> the server asks workspace/configuration.
    # The answer is the whole configuration: keys left out go back to their defaults.
    s.client.set_configuration(
        {"search": {"topK": 2}, "embeddings": {"enabled": False}}, section="codeCompass"
    )
    s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await eventually(lambda: top_k_is(2))
    assert len((await s.request("codeCompass/search", query))["hits"]) == 2

    # A bad value is reported and ignored; the server keeps the previous one.
    s.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"search": {"topK": "many"}})
    )

    async def warned() -> bool:
        return any("search.topK" in m.message for m in s.client.log_messages)

    await eventually(warned)
    assert await top_k_is(2)


async def test_unsaved_buffer_is_searchable_and_gone_after_close(start: Any, alpha: Path) -> None:
    s = await start([alpha])
    await s.wait_indexed()
    path = alpha / "pricing.py"
    on_disk = path.read_text()
    uri = s.open(path)
    # An incremental edit that adds a new function, not saved.
    s.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=2, character=0),
                        end=types.Position(line=2, character=0),
                    ),
                    text="def sneaky_platypus_rate():\n    return 0.5\n\n",
                )
            ],
        )
    )

    async def found() -> bool:
        return "pricing.py" in await snippets_with(s, "sneaky_platypus_rate")

    t0 = time.monotonic()
    await eventually(found, timeout=5)
    visible_after = time.monotonic() - t0
    assert path.read_text() == on_disk  # nothing was written to disk

    # Hover on the buffer-only symbol knows it, at its buffer line.
    async def hover_knows() -> bool:
        h = await s.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=2, character=6),
            )
        )
        return h is not None and "pricing.py:3`" in h.contents.value  # type: ignore[union-attr]

    await eventually(hover_knows, timeout=3)

    s.client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )

    async def gone() -> bool:
        return await snippets_with(s, "sneaky_platypus_rate") == set()

    await eventually(gone, timeout=5)
    # Evidence that no longer matches the text is dropped at once; the disk version of
    # the file is indexed again right after.

    async def back_to_disk() -> bool:
        return "pricing.py" in await snippets_with(s, "compute_discount")

    await eventually(back_to_disk, timeout=5)

    assert visible_after < 2.0
