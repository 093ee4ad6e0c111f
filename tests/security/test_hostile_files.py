"""Hostile files cannot stall indexing: each is skipped within its budget and counted with its
reason, and the rest of the workspace is indexed (docs/rules.md: hostile-file-budget)."""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

from code_compass_server.engine import Engine
from code_compass_server.index.chunk import SkipFile, parse_file
from code_compass_server.index.parse_pool import (
    SKIP_MEMORY,
    SKIP_TIMEOUT,
    GuardedPool,
    LoadArgs,
    LoadedFile,
    load_guarded,
)
from code_compass_server.index.scan import FileEntry
from code_compass_server.settings import EngineSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ -> `security` importable
from security.hostile_files import (
    deeply_nested_js,
    pdf_ok,
    pdf_slow_pages,
    pdf_text_bomb,
    single_line,
    write_hostile_set,
)

NORMAL = {
    "src/billing.py": "def charge_invoice(amount):\n    return amount * 2\n",
    "src/ledger.js": "function postLedgerEntry(entry) {\n  return entry;\n}\n",
    "README.md": "# Billing\n\nThe ledger keeps every invoice charge.\n",
}


def _args(root: Path, rel: str, language: str, max_bytes: int = 1_000_000) -> LoadArgs:
    p = root / rel
    st = p.stat()
    return (FileEntry(rel, p, st.st_size, st.st_mtime_ns, language), None, None, max_bytes)


def test_hostile_workspace_indexes_the_rest_and_counts_each_skip(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    files = write_hostile_set(ws, full=False)
    for rel, text in NORMAL.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (ws / "docs" / "ok.pdf").write_bytes(pdf_ok())
    engine = Engine.open(tmp_path / "storage", EngineSettings(embeddings=False))
    try:
        engine.add_project(ws)
        t0 = time.monotonic()
        summary = engine.index(embed=False)[0]
        elapsed = time.monotonic() - t0
        expected = Counter(f.outcome for f in files if f.outcome != "indexed")
        for reason, count in expected.items():
            assert summary.skipped.get(reason) == count, (reason, summary.skipped)
        indexed = set(engine.project(engine.projects()[0]).catalog.files())
        wanted = set(NORMAL) | {"docs/ok.pdf"}
        wanted |= {f.rel for f in files if f.outcome == "indexed"}
        assert wanted <= indexed, wanted - indexed
        assert elapsed < 60, f"hostile set took {elapsed:.1f} s"  # generous: 2 shared cores
    finally:
        engine.close()


def test_a_pdf_over_its_time_budget_is_skipped_not_waited_for(tmp_path: Path) -> None:
    (tmp_path / "slow.pdf").write_bytes(pdf_slow_pages())
    t0 = time.monotonic()
    assert load_guarded(_args(tmp_path, "slow.pdf", "pdf")) == "pdf_limits"
    assert time.monotonic() - t0 < 30


def test_watchdog_replaces_a_stalled_worker_and_the_next_file_is_parsed(tmp_path: Path) -> None:
    (tmp_path / "slow.pdf").write_bytes(pdf_slow_pages())
    (tmp_path / "ok.pdf").write_bytes(pdf_ok())
    pool = GuardedPool(1, timeout_s=3.0)
    try:
        todo = [_args(tmp_path, "slow.pdf", "pdf"), _args(tmp_path, "ok.pdf", "pdf")]
        results = {a[0].rel: r for item in pool.run(todo) if item for a, r in [item]}
        stalled = pool.workers and pool.workers[0].proc.pid
    finally:
        pool.close()
    assert results["slow.pdf"] == SKIP_TIMEOUT
    assert isinstance(results["ok.pdf"], LoadedFile)
    assert pool.replaced == 1 and stalled


def test_a_file_over_the_memory_cap_is_skipped_and_counted(tmp_path: Path) -> None:
    (tmp_path / "tall.txt").write_bytes(b"x\n" * 20_000_000)  # 40 MB, 20 M line objects
    (tmp_path / "ok.py").write_text("def fine():\n    return 1\n")
    pool = GuardedPool(1, memory_limit=300 * 1024**2)
    try:
        todo = [
            _args(tmp_path, "tall.txt", "text", max_bytes=100_000_000),
            _args(tmp_path, "ok.py", "python"),
        ]
        results = {a[0].rel: r for item in pool.run(todo) if item for a, r in [item]}
    finally:
        pool.close()
    assert results["tall.txt"] in (SKIP_MEMORY, "parse_crashed")
    assert isinstance(results["ok.py"], LoadedFile)


def test_giant_line_is_skipped_as_long_line() -> None:
    try:
        parse_file("notes.md", single_line(300_000), "markdown")
    except SkipFile as skip:
        assert skip.reason == "long_line"
    else:
        raise AssertionError("a 300,000-character line was indexed")


def test_pdf_bomb_is_skipped_fast_and_deep_code_still_chunks() -> None:
    t0 = time.monotonic()
    try:
        parse_file("bomb.pdf", pdf_text_bomb(), "pdf")
    except SkipFile as skip:
        assert skip.reason == "pdf_limits"
    assert time.monotonic() - t0 < 10
    assert parse_file("nested.js", deeply_nested_js(20_000), "javascript").chunks


def test_big_run_in_worker_processes_counts_hostile_files(tmp_path: Path) -> None:
    """Past PARALLEL_MIN_FILES files the run parses in the guarded pool: same outcome."""
    ws = tmp_path / "ws"
    files = write_hostile_set(ws, full=False)
    for i in range(320):
        (ws / "pkg" / f"mod_{i}.py").parent.mkdir(parents=True, exist_ok=True)
        (ws / "pkg" / f"mod_{i}.py").write_text(f"def handler_{i}(x):\n    return x + {i}\n")
    engine = Engine.open(tmp_path / "storage", EngineSettings(embeddings=False))
    try:
        engine.add_project(ws)
        summary = engine.index(embed=False)[0]
    finally:
        engine.close()
    expected = Counter(f.outcome for f in files if f.outcome != "indexed")
    for reason, count in expected.items():
        assert summary.skipped.get(reason) == count, (reason, summary.skipped)
    assert summary.files >= 320 + sum(f.outcome == "indexed" for f in files)
