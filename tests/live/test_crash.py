"""kill -9 at random moments of indexing (lexical, embedding, a server mid watcher storm), and
two servers on one workspace. The long variant is scripts/attack_kill.py."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import tantivy

from code_compass_server.engine import Engine
from code_compass_server.settings import EngineSettings
from code_compass_server.validation import validate_search
from tests.conftest import write_tree
from tests.live.test_watch import catalog_state
from tests.reliability.attacks import (
    Tally,
    fresh_state,
    phase_windows,
    run_kill_case,
    run_server_storm_case,
    write_workspace,
)

KILLS = 20
FILES = 500


def lexical_ids(engine: Engine) -> list[str]:
    project = engine.project(engine.projects()[0])
    project.lexical.reload()
    searcher = project.lexical.index.searcher()
    n = searcher.num_docs
    hits = searcher.search(tantivy.Query.all_query(), max(n, 1)).hits
    return [searcher.doc(addr)["chunk_id"][0] for _s, addr in hits]


def assert_consistent(engine: Engine) -> None:
    project = engine.project(engine.projects()[0])
    in_catalog = {str(r[0]) for r in project.catalog._query("SELECT id FROM chunks")}
    ids = lexical_ids(engine)
    assert len(ids) == len(set(ids)), "a chunk is indexed twice"
    assert set(ids) == in_catalog


def _module(i: int, salt: int) -> str:
    funcs = "\n\n".join(
        f"def f{i}_{j}_{salt}(x):\n    '''Helper {j} of module {i}.'''\n    return x + {j}\n"
        for j in range(6)
    )
    return f'"""Module {i}, revision {salt}."""\n\n{funcs}'


def test_kill_9_loop_leaves_a_consistent_index(tmp_path: Path) -> None:
    rng = random.Random(1234)
    ws = write_tree(tmp_path / "ws", {f"pkg/m{i}.py": _module(i, 0) for i in range(FILES)})
    store = tmp_path / "store"
    cmd = [sys.executable, "-m", "code_compass_server", "index", "--no-embed",
           "--workspace", str(ws), "--storage", str(store)]  # fmt: skip
    env = {**os.environ, "CODE_COMPASS_ANNOUNCE_START": "1"}
    # How long one whole run takes on this machine (its load varies): the kills below land at
    # random moments within that span, so every phase gets hit whatever the machine's speed.
    for i in range(FILES):
        (ws / f"pkg/m{i}.py").write_text(_module(i, KILLS + 1))
    # Timed from the same announcement the kills wait for (start-up is not part of the span).
    ref = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert ref.stdout is not None
    ref.stdout.readline()
    started = time.monotonic()
    ref.stdout.read()
    assert ref.wait() == 0
    span = time.monotonic() - started
    killed = 0
    for round_ in range(1, KILLS + 1):
        for i in range(FILES):  # every run has real work to do
            (ws / f"pkg/m{i}.py").write_text(_module(i, round_))
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        assert proc.stdout is not None
        proc.stdout.readline()  # the CLI says when indexing starts: kill after that
        time.sleep(rng.uniform(0.0, 0.8 * span))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            killed += 1
        proc.wait()
        engine = Engine.open(store, EngineSettings(embeddings=False))
        engine.add_project(ws)  # must open (or rebuild by itself) after any kill
        engine.index()
        assert_consistent(engine)
        engine.close()
    assert killed >= KILLS * 0.6, f"only {killed} runs were still indexing when killed"

    fresh = Engine.open(tmp_path / "fresh", EngineSettings(embeddings=False))
    fresh.add_project(ws)
    fresh.index()
    survivor = Engine.open(store, EngineSettings(embeddings=False))
    survivor.add_project(ws)
    (summary,) = survivor.index()
    assert summary.changed == 0  # nothing already indexed was lost or needs redoing
    assert catalog_state(survivor) == catalog_state(fresh)
    survivor.close()
    fresh.close()


HOLDER = """
import sys, time
from pathlib import Path
from code_compass_server.engine import Engine
from code_compass_server.settings import EngineSettings
e = Engine.open(Path(sys.argv[1]), EngineSettings(embeddings=False))
e.add_project(Path(sys.argv[2]))
e.index()
print("ready", flush=True)
sys.stdin.readline()  # hold the writer until told to go
Path(sys.argv[2], "late.py").write_text("def latearrivalzz():\\n    pass\\n")
e.update_paths(e.projects()[0], ["late.py"])
print("wrote", flush=True)
sys.stdin.readline()
e.close()
"""


def test_second_server_serves_read_only_then_takes_over(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    ws = write_tree(tmp_path / "ws", {"a.py": "def firstserverzz():\n    pass\n"})
    store = tmp_path / "store"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store), str(ws)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "ready"
        second = Engine.open(store, EngineSettings(embeddings=False))
        name = second.add_project(ws)
        status = second.status().projects[0]
        assert status.read_only is True
        (summary,) = second.index()  # does not write, does not fail
        assert summary.files == 1
        hits = second.search(validate_search("firstserverzz", mode="lexical"))
        assert [h.path for h in hits] == ["a.py"]

        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "wrote"
        hits = second.search(validate_search("latearrivalzz", mode="lexical"))
        assert [h.path for h in hits] == ["late.py"]  # sees the writer's commits

        holder.stdin.write("bye\n")
        holder.stdin.flush()
        holder.wait(10)
        (ws / "b.py").write_text("def aftertakeoverzz():\n    pass\n")
        second.index()  # the writer is gone: this server takes over writing
        assert second.status().projects[0].read_only is False
        hits = second.search(validate_search("aftertakeoverzz", mode="lexical", project=name))
        assert [h.path for h in hits] == ["b.py"]
        second.close()
    finally:
        holder.kill()


EMBED_KILLS = 3
EMBED_FILES = 40
STORM_KILLS = 2


def _model_available() -> bool:
    from code_compass_server.embed.model import Embedder

    try:
        Embedder()
    except Exception:
        return False
    return True


def test_kill_9_while_embedding_leaves_every_chunk_embedded_after_the_next_run(
    tmp_path: Path,
) -> None:
    """Vectors computed but not saved, flags set or not: the next `index` ends with the fresh
    chunk set, every chunk flagged embedded and stored (never stuck at "embedding")."""
    if not _model_available():
        import pytest

        pytest.skip("embedding model not available")
    rng = random.Random(99)
    ws = write_workspace(tmp_path / "ws", EMBED_FILES, 0)
    lo, hi = phase_windows(tmp_path, ws, embed=True)["embed"]
    tally = Tally()
    store = tmp_path / "store"
    for salt in range(1, EMBED_KILLS + 1):
        write_workspace(ws, EMBED_FILES, salt)  # new text: nothing of it is in the cache
        want = fresh_state(tmp_path, ws)
        delay = rng.uniform(lo, lo + (hi - lo) * 0.8)
        tally.add(run_kill_case(store, ws, "embed", delay, want, embed=True))
    # Edits that keep most chunks: their flags are reset and their vectors dropped in memory;
    # a kill before the store's next save leaves vectors on disk for unflagged chunks.
    for salt in range(EMBED_KILLS + 1, 2 * EMBED_KILLS + 1):
        write_workspace(ws, EMBED_FILES, salt, keep_defs=True)
        want = fresh_state(tmp_path, ws)
        delay = rng.uniform(lo, lo + (hi - lo) * 0.3)
        tally.add(run_kill_case(store, ws, "embed", delay, want, embed=True))
    print(tally.table())
    assert not tally.broken(), [o.detail for o in tally.broken()]


def test_kill_9_of_a_server_in_a_watcher_storm_leaves_a_consistent_index(tmp_path: Path) -> None:
    rng = random.Random(5)
    ws = write_workspace(tmp_path / "ws", FILES // 5, 0)
    tally = Tally()
    for _ in range(STORM_KILLS):
        tally.add(
            run_server_storm_case(
                tmp_path, tmp_path / "store", ws, FILES // 5, rng.uniform(0.5, 2.0), rng,
                embed=False,
            )
        )  # fmt: skip
    print(tally.table())
    assert not tally.broken(), [o.detail for o in tally.broken()]
