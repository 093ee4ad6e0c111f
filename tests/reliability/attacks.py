"""Attack cases on a project's storage: kill -9 of `index` at each phase, damage to each file.

Shared by the fast tests beside this file and the long runs (scripts/attack_kill.py,
scripts/attack_damage.py). Every case drives the real command line in a subprocess, then reads
the stores directly (SQLite, Tantivy, the vector store's files), changing nothing, and compares
them with a fresh index of the same workspace: the promise holds when the chunk set and the
embedded set are the same, and a damage the next open had to repair was reported (`rebuilt`).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import tantivy

from code_compass_server.storage import project_storage

DAMAGE_MODES = ("truncate", "random", "delete", "zero")
KILL_PHASES = ("scan", "parse", "commit", "embed")


@dataclass(frozen=True, slots=True)
class StoreState:
    """What one project's storage holds, read without opening an engine."""

    chunks: frozenset[str]
    lexical: tuple[str, ...]  # Tantivy's chunk ids, duplicates kept
    embedded: frozenset[str]  # catalog chunks flagged embedded
    vectors: frozenset[str]  # chunk ids in the committed vector store
    error: str = ""


@dataclass(slots=True)
class Outcome:
    promise: str
    case: str
    held: bool
    reported: bool
    detail: str = ""


@dataclass(slots=True)
class Tally:
    rows: dict[str, list[Outcome]] = field(default_factory=dict)

    def add(self, outcome: Outcome) -> None:
        self.rows.setdefault(outcome.promise, []).append(outcome)

    def table(self) -> str:
        lines = [f"{'promise':<44} {'tries':>5} {'held':>5} {'broken':>6} {'reported':>8}"]
        for promise, outs in self.rows.items():
            held = sum(o.held for o in outs)
            rep = sum(o.reported for o in outs)
            lines.append(f"{promise:<44} {len(outs):>5} {held:>5} {len(outs) - held:>6} {rep:>8}")
        return "\n".join(lines)

    def broken(self) -> list[Outcome]:
        return [o for outs in self.rows.values() for o in outs if not o.held]


def module_text(i: int, salt: int, funcs: int = 6, *, keep_defs: bool = False) -> str:
    """A module of `funcs` functions; `keep_defs`: only the docstring changes with `salt`
    (the functions' chunks keep their ids, as in most real edits)."""
    names = 0 if keep_defs else salt
    body = "\n\n".join(
        f"def f{i}_{j}_{names}(x):\n    '''Helper {j} of module {i}.'''\n    return x + {j}\n"
        for j in range(funcs)
    )
    return f'"""Module {i}, revision {salt}."""\n\n{body}'


def write_workspace(ws: Path, files: int, salt: int, *, keep_defs: bool = False) -> Path:
    for i in range(files):
        path = ws / "pkg" / f"m{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module_text(i, salt, keep_defs=keep_defs), encoding="utf-8")
    return ws


def cli(
    storage: Path, ws: Path, *args: str, timeout: float = 600.0
) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "code_compass_server", *args, "--workspace", str(ws)]
    cmd += ["--storage", str(storage)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def index_cmd(storage: Path, ws: Path, *, embed: bool) -> list[str]:
    cmd = [sys.executable, "-m", "code_compass_server", "index", "--json", "--workspace", str(ws)]
    cmd += ["--storage", str(storage)]
    return cmd if embed else [*cmd, "--no-embed"]


def read_state(storage: Path, ws: Path) -> StoreState:
    """The project's stores as they are on disk (read-only; no engine, no repair)."""
    folder = project_storage(storage, ws)
    try:
        with sqlite3.connect(f"file:{folder / 'catalog.sqlite'}?mode=ro", uri=True) as conn:
            rows = conn.execute("SELECT id, embedded FROM chunks").fetchall()
        chunks = frozenset(str(r[0]) for r in rows)
        embedded = frozenset(str(r[0]) for r in rows if r[1])
        index = tantivy.Index.open(str(folder / "lexical"))
        searcher = index.searcher()
        n = max(int(searcher.num_docs), 1)
        hits = searcher.search(tantivy.Query.all_query(), n).hits
        lexical = tuple(searcher.doc(a)["chunk_id"][0] for _s, a in hits)
        vectors: frozenset[str] = frozenset()
        pointer_path = folder / "vectors" / "store.json"
        if pointer_path.exists():
            pointer = json.loads(pointer_path.read_text("utf-8"))
            gen = pointer["generation"]
            meta = json.loads((folder / "vectors" / f"rows.{gen}.json").read_text("utf-8"))
            vectors = frozenset(meta["chunk_ids"])
    except BaseException as exc:  # a damaged store may panic in tantivy
        if isinstance(exc, KeyboardInterrupt):
            raise
        return StoreState(frozenset(), (), frozenset(), frozenset(), f"{type(exc).__name__}: {exc}")
    return StoreState(chunks, lexical, embedded, vectors)


def compare(got: StoreState, want: StoreState, *, embed: bool) -> str:
    """'' when `got` is what a fresh index holds; else what differs."""
    if got.error:
        return f"stores unreadable: {got.error}"
    problems = []
    if got.chunks != want.chunks:
        extra, missing = len(got.chunks - want.chunks), len(want.chunks - got.chunks)
        problems.append(f"chunks: {extra} extra, {missing} missing")
    if len(got.lexical) != len(set(got.lexical)):
        problems.append("a chunk is in Tantivy twice")
    if set(got.lexical) != got.chunks:
        problems.append(f"Tantivy {len(set(got.lexical))} ids != catalog {len(got.chunks)}")
    if embed:  # a fresh index with embeddings has every chunk embedded
        if got.embedded != want.chunks:
            problems.append(f"embedded {len(got.embedded)} of {len(want.chunks)}")
        if got.vectors != got.embedded:
            problems.append(f"vectors {len(got.vectors)} != embedded flags {len(got.embedded)}")
    return "; ".join(problems)


def fresh_state(tmp: Path, ws: Path) -> StoreState:
    """The chunk set of a fresh index of the workspace as it is now (lexical only: with
    embeddings a fresh index has every one of these chunks embedded)."""
    storage = tmp / f"fresh-{time.monotonic_ns()}"
    subprocess.run(index_cmd(storage, ws, embed=False), capture_output=True, check=True)
    return read_state(storage, ws)


# --- damage ---------------------------------------------------------------------------------


def storage_files(storage: Path, ws: Path) -> list[Path]:
    """Every file of the project's folder and the shared embedding cache (relative to
    `storage`), except the writer lock (damaging a lock file changes nothing it guards)."""
    folder = project_storage(storage, ws)
    found = [p for p in folder.rglob("*") if p.is_file() and p.name != "writer.lock"]
    cache = storage / "embed-cache.sqlite"
    if cache.exists():
        found.append(cache)
    return sorted(p.relative_to(storage) for p in found)


def file_kind(rel: Path) -> str:
    """A damaged file's kind for the table: its store and its type."""
    name = rel.name
    if name.startswith("embed-cache"):
        return "embed-cache.sqlite"
    if name.startswith("catalog.sqlite"):
        return name
    if rel.parent.name == "lexical":
        return f"lexical/*{Path(name).suffix or name}" if not name.startswith(".") else name
    if rel.parent.name == "vectors":
        return f"vectors/{name.split('.')[0]}"
    return str(rel)


def damage(path: Path, mode: str, rng: random.Random) -> None:
    if mode == "delete":
        path.unlink(missing_ok=True)
    elif mode == "zero":
        path.write_bytes(b"")
    elif mode == "truncate":
        size = path.stat().st_size
        with path.open("r+b") as fh:
            fh.truncate(size // 2)
    elif mode == "random":
        size = path.stat().st_size
        data = bytearray(path.read_bytes())
        n = min(2048, max(1, size))
        start = rng.randrange(0, max(1, size - n + 1))
        data[start : start + n] = rng.randbytes(n)
        path.write_bytes(bytes(data))
    else:
        raise ValueError(mode)


def copy_storage(src: Path, dst: Path) -> None:
    import shutil

    shutil.copytree(src, dst)


def run_damage_case(
    base: Path,
    work: Path,
    ws: Path,
    rel: Path,
    mode: str,
    want: StoreState,
    *,
    embed: bool,
    seed: int,
) -> Outcome:
    """Damage one file of a copy of `base`, run `index` as a user would, check the stores."""
    copy_storage(base, work)
    damage(work / rel, mode, random.Random(seed))
    run = cli(work, ws, "index", "--json", *([] if embed else ["--no-embed"]))
    case = f"{rel} {mode}"
    promise = f"damage {file_kind(rel)}"
    if run.returncode != 0:
        tail = (run.stderr.strip().splitlines() or ["?"])[-1]
        return Outcome(promise, case, False, False, f"index exit {run.returncode}: {tail}")
    summary = json.loads(run.stdout)["projects"][0]
    status = cli(work, ws, "status", "--json")
    cache_note = ""
    if status.returncode == 0:
        cache_note = json.loads(status.stdout).get("embedCacheRebuilt", "")
    reported = bool(summary.get("rebuilt") or cache_note)
    search = cli(work, ws, "search", "f3_2_0", "--mode", "lexical", "--json")
    problem = compare(read_state(work, ws), want, embed=embed)
    if not problem and search.returncode != 0:
        problem = f"search exit {search.returncode}"
    elif not problem and "pkg/m3.py" not in search.stdout:
        problem = "search misses a known symbol"
    return Outcome(promise, case, not problem, reported, problem)


# --- kill -9 --------------------------------------------------------------------------------


def phase_windows(tmp: Path, ws: Path, *, embed: bool) -> dict[str, tuple[float, float]]:
    """When each phase of `index` runs, in seconds after it announces its start, measured on a
    reference run of the same size: the lexical part split into scanning (first 15 %), parsing
    and the commits (last 30 %), then embedding. Kills drawn inside a window hit that phase
    (roughly: the windows are estimates)."""
    storage = tmp / f"timing-{time.monotonic_ns()}"
    env = {**os.environ, "CODE_COMPASS_ANNOUNCE_START": "1"}
    t0 = time.monotonic()
    proc = subprocess.Popen(
        index_cmd(storage, ws, embed=False), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    proc.stdout.readline()
    started = time.monotonic() - t0
    proc.wait()
    lexical_done = time.monotonic() - t0
    span = lexical_done - started  # kill_during() sleeps from the announcement on
    windows = {
        "scan": (0.0, span * 0.15),
        "parse": (span * 0.15, span * 0.7),
        "commit": (span * 0.7, span),
    }
    if embed:
        t1 = time.monotonic()
        subprocess.run(index_cmd(storage, ws, embed=True), capture_output=True, check=True)
        windows["embed"] = (span, span + (time.monotonic() - t1))
    return windows


def kill_during(cmd: list[str], delay: float) -> bool:
    """Start `cmd`, kill -9 it `delay` s after it announced its start; True if it was alive."""
    env = {**os.environ, "CODE_COMPASS_ANNOUNCE_START": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    try:
        proc.stdout.readline()
        time.sleep(delay)
        alive = proc.poll() is None
        if alive:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        return alive
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def run_kill_case(
    storage: Path, ws: Path, phase: str, delay: float, want: StoreState, *, embed: bool
) -> Outcome:
    """kill -9 one `index` run, then run `index` again: the stores must equal a fresh index."""
    killed = kill_during(index_cmd(storage, ws, embed=embed), delay)
    again = subprocess.run(index_cmd(storage, ws, embed=embed), capture_output=True, text=True)
    case = f"{phase} +{delay:.2f}s{'' if killed else ' (ended before the kill)'}"
    if again.returncode != 0:
        tail = (again.stderr.strip().splitlines() or ["?"])[-1]
        return Outcome(
            f"kill -9 index: {phase}", case, False, False, f"exit {again.returncode}: {tail}"
        )
    problem = compare(read_state(storage, ws), want, embed=embed)
    return Outcome(f"kill -9 index: {phase}", case, not problem, True, problem)


def delays(window: tuple[float, float], n: int, rng: random.Random) -> Iterator[float]:
    lo, hi = window
    for _ in range(n):
        yield max(0.0, rng.uniform(lo, hi))


# --- kill -9 of `serve` during a watcher storm ---------------------------------------------


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def start_serve(storage: Path, ws: Path, *, embed: bool) -> subprocess.Popen[bytes]:
    """`code-compass serve` over stdio, initialized on `ws` with its storage at `storage`; its
    output is drained in a thread (a full pipe would stall it)."""
    import threading

    proc = subprocess.Popen(
        [sys.executable, "-m", "code_compass_server", "serve"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    answered = threading.Event()
    out = proc.stdout

    def drain() -> None:
        while True:
            header = out.readline()
            if not header:
                answered.set()
                return
            if header.lower().startswith(b"content-length:"):
                n = int(header.split(b":")[1])
                out.readline()
                body = out.read(n)
                if b'"id": 1' in body or b'"id":1' in body:
                    answered.set()

    threading.Thread(target=drain, daemon=True).start()
    settings = {"embeddings": {"enabled": embed}}
    init = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "processId": os.getpid(), "rootUri": ws.as_uri(), "capabilities": {},
            "workspaceFolders": [{"uri": ws.as_uri(), "name": ws.name}],
            "initializationOptions": {"storageUri": storage.as_uri(), "settings": settings},
        },
    }  # fmt: skip
    proc.stdin.write(_frame(init))
    proc.stdin.flush()
    answered.wait(60)
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    proc.stdin.flush()
    return proc


def storm(ws: Path, files: int, seconds: float, rng: random.Random) -> None:
    """Rewrite, create and delete modules as fast as the disk lets us for `seconds`."""
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
        i = rng.randrange(files)
        path = ws / "pkg" / f"m{i}.py"
        if rng.random() < 0.1:
            path.unlink(missing_ok=True)
        else:
            path.write_text(module_text(i, 1000 + n), encoding="utf-8")
        extra = ws / "pkg" / f"new{rng.randrange(20)}.py"
        if rng.random() < 0.2:
            extra.write_text(module_text(10_000 + n, n), encoding="utf-8")
        elif rng.random() < 0.1:
            extra.unlink(missing_ok=True)
        time.sleep(0.005)


def run_server_storm_case(
    tmp: Path,
    storage: Path,
    ws: Path,
    files: int,
    delay: float,
    rng: random.Random,
    *,
    embed: bool,
) -> Outcome:
    """`code-compass serve` indexes and watches while files change under it, and is killed -9
    mid-storm; the next `index` must equal a fresh index of what is on disk."""
    proc = start_serve(storage, ws, embed=embed)
    try:
        storm(ws, files, delay, rng)
        alive = proc.poll() is None
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    promise = "kill -9 serve during a watcher storm"
    case = f"+{delay:.2f}s{'' if alive else ' (server had died)'}"
    again = subprocess.run(index_cmd(storage, ws, embed=embed), capture_output=True, text=True)
    if again.returncode != 0:
        tail = (again.stderr.strip().splitlines() or ["?"])[-1]
        return Outcome(promise, case, False, False, f"exit {again.returncode}: {tail}")
    want = fresh_state(tmp, ws)
    problem = compare(read_state(storage, ws), want, embed=embed)
    if not alive:
        problem = problem or "the server died before the kill"
    return Outcome(promise, case, not problem, True, problem)
