"""Folders as projects (docs/protocol.md, initialize and didChangeWorkspaceFolders)."""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.lsp.conftest import WEATHER, Session, poll_until, write

eventually = partial(poll_until, timeout=20.0)  # this module's patience


async def names(s: Session) -> list[str]:
    return [p["name"] for p in (await s.request("codeCompass/status", {}))["projects"]]


async def test_duplicate_folder_names_get_unique_project_names(start: Any, tmp_path: Path) -> None:
    first = write(tmp_path / "one" / "shop", {"a.py": "def alpha_only():\n    pass\n"})
    second = write(tmp_path / "two" / "shop", {"b.py": "def beta_only():\n    pass\n"})
    s = await start([first, second])
    status = await s.wait_indexed()
    assert await names(s) == ["shop", "shop-2"]
    roots = {p["name"]: p["root"] for p in status["projects"]}
    assert roots == {"shop": str(first), "shop-2": str(second)}
    hits = await s.request("codeCompass/search", {"query": "beta_only", "project": "shop-2"})
    assert [h["path"] for h in hits["hits"]] == ["b.py"]


async def test_root_path_is_the_project_without_folders_or_root_uri(
    start: Any, alpha: Path
) -> None:
    s = await start([alpha], root_path_only=True)
    status = await s.wait_indexed()
    assert [p["name"] for p in status["projects"]] == ["alpha"]
    assert status["projects"][0]["files"] == 3


async def test_files_changed_on_disk_are_indexed_by_the_watcher(start: Any, alpha: Path) -> None:
    s = await start([alpha])
    await s.wait_indexed()

    async def paths(query: str) -> set[str]:
        hits = await s.request("codeCompass/search", {"query": query, "mode": "lexical"})
        return {h["path"] for h in hits["hits"]}

    (alpha / "weather.py").write_text(WEATHER)  # created on disk, no reindex request

    async def created() -> bool:
        return "weather.py" in await paths("forecast_rainfall")

    await eventually(created)
    (alpha / "weather.py").unlink()

    async def deleted() -> bool:
        return "weather.py" not in await paths("forecast_rainfall")

    await eventually(deleted)


async def test_removed_folder_keeps_its_index_on_disk_for_next_time(
    start: Any, alpha: Path, beta: Path
) -> None:
    s = await start([alpha, beta])
    status = await s.wait_indexed()
    storage = Path(next(p["storage"] for p in status["projects"] if p["name"] == "beta"))
    s.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(uri=beta.as_uri(), name="beta")]
            )
        )
    )

    async def gone() -> bool:
        return await names(s) == ["alpha"]

    await eventually(gone)
    assert (storage / "catalog.sqlite").is_file() and (storage / "lexical").is_dir()
    s.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=beta.as_uri(), name="beta")], removed=[]
            )
        )
    )

    async def back() -> bool:
        return await names(s) == ["alpha", "beta"]

    await eventually(back)
    status = await s.wait_indexed()
    entry = next(p for p in status["projects"] if p["name"] == "beta")
    assert entry["storage"] == str(storage) and entry["rebuilt"] == "" and entry["files"] == 2


async def test_a_failed_pass_is_reported_as_last_error(start: Any, alpha: Path) -> None:
    s = await start([alpha])
    status = await s.wait_indexed()
    # The lexical index vanishes under the server: its next commit fails.
    shutil.rmtree(Path(status["projects"][0]["storage"]) / "lexical")
    write(alpha, {"extra.py": "def extra_function():\n    pass\n"})
    await s.request("codeCompass/reindex", {"project": "alpha"})

    async def failed() -> bool:
        status = await s.request("codeCompass/status", {})
        return bool(status["projects"][0].get("lastError"))

    async def notified() -> bool:
        # The notification follows the status change: on a loaded machine it may come later.
        states = s.seen("codeCompass/indexState")
        return any(p.get("lastError") for st in states for p in st["projects"])

    await eventually(failed)
    await eventually(notified)
