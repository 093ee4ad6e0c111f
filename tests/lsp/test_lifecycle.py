"""Progress, indexState, status/reindex/ask shapes, embeddings, clean shutdown."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import psutil

from tests.lsp.conftest import write

STATUS_KEYS = {"name", "root", "state", "files", "chunks", "embedded", "embedTotal", "errors"}


async def test_progress_and_index_state_notifications(start: Any, alpha: Path) -> None:
    s = await start([alpha])
    await s.wait_indexed()
    # window/workDoneProgress: created token, begin, reports with files done/total, end.
    (token, reports), *_ = s.client.progress_reports.items()
    assert "alpha" in str(token)
    kinds = [r.kind for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds
    files = [r.message for r in reports if r.kind == "report" and "files" in (r.message or "")]
    assert "3/3 files" in files
    assert all(0 <= (r.percentage or 0) <= 100 for r in reports if r.kind == "report")

    # codeCompass/indexState: per-project entries, the last one says ready.
    await asyncio.sleep(0.1)
    states = s.seen("codeCompass/indexState")
    assert states, "no codeCompass/indexState notification"
    last = states[-1]["projects"]
    assert [p["name"] for p in last] == ["alpha"]
    assert set(last[0]) >= STATUS_KEYS
    assert last[0]["state"] == "ready" and last[0]["files"] == 3
    assert any(p["indexing"] for st in states for p in st["projects"])


async def test_status_reindex_search_and_ask_shapes(start: Any, alpha: Path) -> None:
    s = await start([alpha])
    await s.wait_indexed()
    status = await s.request("codeCompass/status")
    assert {"projects", "model", "llmConfigured", "storage", "indexing"} <= set(status)
    assert status["llmConfigured"] is False  # no key in the server's environment
    assert set(status["projects"][0]) >= STATUS_KEYS

    result = await s.request("codeCompass/search", {"query": "discount for a customer tier"})
    assert set(result) == {"hits", "partialIndex", "tookMs"}
    hit = result["hits"][0]
    assert set(hit) == {
        "path", "startLine", "endLine", "score", "relevance", "symbol", "kind", "language",
        "project", "snippet",
    }  # fmt: skip
    nothing = await s.request("codeCompass/search", {"query": "kubernetes helm chart ingress"})
    assert nothing["hits"] == [] and nothing["reason"].startswith("nothing in this workspace")
    assert hit["path"] == "pricing.py" and hit["symbol"] == "compute_discount"
    assert 0.0 <= hit["score"] <= 1.0 and hit["startLine"] <= hit["endLine"]

    n_tokens = len(s.client.progress_reports)
    assert await s.request("codeCompass/reindex", {"project": "alpha"}) == {
        "started": True,
        "projects": ["alpha"],
    }
    assert (await s.request("codeCompass/reindex", {}))["projects"] == ["alpha"]
    await asyncio.sleep(0.2)
    await s.wait_indexed()
    assert len(s.client.progress_reports) > n_tokens  # a new progress for the reindex

    answer = await s.request(
        "codeCompass/ask", {"question": "How is the discount for gold customers computed?"}
    )
    for key in ("state", "confidence", "coverage", "answer", "citations", "evidences", "meta"):
        assert key in answer, key
    assert answer["meta"]["llmCalled"] is False  # no API key: extractive, labelled answer
    cited = {c["path"] for c in answer["citations"]}
    assert cited <= {e["path"] for e in answer["evidences"]}


async def test_watcher_rescan_shows_progress(start: Any, alpha: Path) -> None:
    s = await start([alpha])
    await s.wait_indexed()
    await asyncio.sleep(0.3)  # the watcher has registered the tree
    before = set(s.client.progress_reports)
    (alpha / ".gitignore").write_text("docs/\n")  # ignore rules changed: a rescan

    def rescan_reports() -> list[Any]:
        new = [t for t in s.client.progress_reports if t not in before]
        return s.client.progress_reports[new[0]] if new else []

    deadline = time.monotonic() + 15
    while not (rescan_reports() and rescan_reports()[-1].kind == "end"):
        assert time.monotonic() < deadline, "no progress for the rescan"
        await asyncio.sleep(0.05)
    reports = rescan_reports()
    assert reports[0].kind == "begin" and reports[0].title == "Code Compass: indexing alpha"
    assert any(r.kind == "report" for r in reports)
    status = await s.wait_indexed()
    assert status["projects"][0]["skipped"].get("gitignored") == 1  # docs/pricing.md


def many_files(root: Path, n: int) -> Path:
    return write(
        root,
        {
            f"pkg{i // 50}/mod{i}.py": "\n".join(
                f"def func_{i}_{j}(value):\n    return value + {j}\n" for j in range(30)
            )
            for i in range(n)
        },
    )


async def test_no_request_waits_on_indexing_and_shutdown_mid_index_is_clean(
    start: Any, tmp_path: Path
) -> None:
    big = many_files(tmp_path / "big", 500)
    s = await start([big])
    proc = psutil.Process(s.process_pid)
    await asyncio.sleep(0.3)  # indexing is under way
    # Requests are served from the last committed state meanwhile, without waiting.
    t0 = time.monotonic()
    status = await s.request("codeCompass/status")
    await s.request("codeCompass/search", {"query": "func_1_1"})
    assert time.monotonic() - t0 < 1.0
    assert status["indexing"] is True and status["projects"][0]["name"] == "big"

    t0 = time.monotonic()
    await asyncio.wait_for(s.client.shutdown_session(), 15)
    assert time.monotonic() - t0 < 5.0  # the indexing thread stopped promptly
    assert s.client._server is not None and s.client._server.returncode == 0
    assert not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE

    # A new server on the same storage opens that index without a rebuild and finishes it.
    s2 = await start([big])
    deadline = time.monotonic() + 60
    while True:  # "ready" can be read before the reopened project's run has started
        status = await s2.wait_indexed(60)
        entry = status["projects"][0]
        if entry["files"] == 500 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    assert entry["rebuilt"] == ""
    assert entry["files"] == 500


async def test_root_uri_only_then_exit_without_shutdown(start: Any, alpha: Path) -> None:
    s = await start([alpha], root_uri_only=True)
    st = await s.wait_indexed()
    assert [p["name"] for p in st["projects"]] == ["alpha"]
    assert st["projects"][0]["files"] == 3
    s.client.exit(None)  # no shutdown first: still exits, with code 1 as the spec says
    assert s.client._server is not None
    code = await asyncio.wait_for(s.client._server.wait(), 10)
    assert code == 1


async def test_embeddings_on_reports_progress_to_the_end(start: Any, alpha: Path) -> None:
    s = await start([alpha], settings={"embeddings": {"enabled": True}})
    status = await s.wait_indexed(60)
    entry = status["projects"][0]
    assert entry["embedTotal"] == entry["chunks"] > 0
    assert entry["embedded"] == entry["embedTotal"]
    hits = await s.request(
        "codeCompass/search",
        {"query": "how much money off do loyal buyers get", "mode": "semantic"},
    )
    assert hits["hits"] and hits["hits"][0]["path"] in {"pricing.py", "docs/pricing.md"}
