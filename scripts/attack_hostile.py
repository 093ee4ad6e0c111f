"""Attack suite (long variant): hostile files, planted secrets, injected evidence, orphans.

Prints one row per promise: tries, held, broken (and the worst time where a time is promised),
then every broken try. The fast variants of the same attacks are tests under tests/security/.

- hostile files: each crafted file (PDF deflate bomb, 50,000 pages, a 2-million-object xref,
  a page-tree loop, arrays nested 200,000 deep, a PDF over its time budget, a 50 MB single
  line, deeply nested code) alone in a workspace beside a control file, serial and in the
  worker pool; held = counted with its reason (or indexed), the control indexed, < 30 s.
- secrets: the planted corpus (67 values, 48 kinds) with a new seed each round, indexed and
  asked file by file through the real pipeline against the fake Messages API; held = no
  fragment of the value in any request body, and every file was sent as evidence.
- injection: every closer/opener/turn variant; held = it stays inside one of our blocks and
  no block, closer or question is added.
- orphans: `code-compass index` killed with SIGKILL or interrupted with SIGINT (its process
  group, as a terminal's Ctrl-C) at a random moment; held = no process it started is alive
  5 s later. With --pytest, also a whole `pytest tests/security` run.

Usage: scripts/attack_hostile.py [--rounds N] [--only hostile,secrets,injection,orphans]
       [--pytest]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from code_compass_server.answer import AskRequest, LlmConfig, ask
from code_compass_server.engine import Engine
from code_compass_server.index.parse_pool import PARALLEL_MIN_FILES
from code_compass_server.settings import EngineSettings
from fakes.fake_anthropic import FakeAnthropic, evidence_blocks
from security.conftest import sent_text
from security.hostile_files import Hostile, hostile_set
from security.secrets_corpus import build_corpus, fragments
from security.test_injection import ATTACK, OPENER, VARIANTS, _module

ROOT = Path(__file__).resolve().parent.parent
STALL_LIMIT_S = 30.0
ORPHAN_GRACE_S = 5.0
LLM = LlmConfig(model="claude-test", max_retries=1, backoff_base_s=0.01, timeout_s=10.0)


@dataclass
class Row:
    promise: str
    tries: int = 0
    held: int = 0
    worst_s: float = 0.0
    broken: list[str] = field(default_factory=list)

    def check(self, ok: bool, what: str, seconds: float = 0.0) -> None:
        self.tries += 1
        self.worst_s = max(self.worst_s, seconds)
        if ok:
            self.held += 1
        else:
            self.broken.append(what)


def _engine(ws: Path, storage: Path) -> Engine:
    eng = Engine.open(storage, EngineSettings(embeddings=False))
    eng.add_project(ws)
    return eng


# --- hostile files -------------------------------------------------------------------------
def attack_hostile(rounds: int, rows: dict[str, Row]) -> None:
    serial, pooled = rows["hostile files (serial)"], rows["hostile files (worker pool)"]
    files = hostile_set(full=True)
    for _ in range(rounds):
        for f in files:
            _one_hostile(f, serial)
        _all_hostile(files, pooled)


def _one_hostile(f: Hostile, row: Row) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        (ws / f.rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / f.rel).write_bytes(f.data)
        (ws / "control.py").write_text("def control_function():\n    return 1\n")
        eng = _engine(ws, Path(tmp) / "storage")
        try:
            t0 = time.monotonic()
            summary = eng.index(embed=False)[0]
            took = time.monotonic() - t0
            files = eng.project(eng.projects()[0]).catalog.files()
        finally:
            eng.close()
    want = 1
    counted = f.rel in files if f.outcome == "indexed" else summary.skipped.get(f.outcome) == want
    ok = counted and "control.py" in files and took < STALL_LIMIT_S
    row.check(ok, f"{f.rel}: {dict(summary.skipped)} in {took:.1f} s", took)


def _all_hostile(files: list[Hostile], row: Row) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        for f in files:
            (ws / f.rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / f.rel).write_bytes(f.data)
        for i in range(PARALLEL_MIN_FILES + 20):
            (ws / "pkg" / f"m{i}.py").parent.mkdir(parents=True, exist_ok=True)
            (ws / "pkg" / f"m{i}.py").write_text(f"def handler_{i}(x):\n    return x + {i}\n")
        eng = _engine(ws, Path(tmp) / "storage")
        try:
            t0 = time.monotonic()
            summary = eng.index(embed=False)[0]
            took = time.monotonic() - t0
            indexed = eng.project(eng.projects()[0]).catalog.files()
        finally:
            eng.close()
    want = Counter(f.outcome for f in files if f.outcome != "indexed")
    for f in files:
        ok = (
            f.rel in indexed
            if f.outcome == "indexed"
            else summary.skipped.get(f.outcome) == want[f.outcome]
        )
        row.check(ok, f"{f.rel} (pool): {dict(summary.skipped)}", took)
    normal = sum(1 for rel in indexed if rel.startswith("pkg/"))
    row.check(normal == PARALLEL_MIN_FILES + 20, f"pool indexed {normal} ordinary files", took)


# --- secrets ---------------------------------------------------------------------------------
def attack_secrets(rounds: int, rows: dict[str, Row], fake: FakeAnthropic) -> None:
    row = rows["planted secrets reach no request"]
    for r in range(rounds):
        corpus = build_corpus(seed=1000 + r)
        fake.requests.clear()
        with tempfile.TemporaryDirectory() as tmp:
            corpus.write(Path(tmp) / "ws")
            eng = _engine(Path(tmp) / "ws", Path(tmp) / "storage")
            try:
                eng.index(embed=False)
                for rel, topic in corpus.topics.items():
                    ask(AskRequest(topic, path_prefix=rel, min_score=0.0, top_k=10), eng, llm=LLM)
            finally:
                eng.close()
        sent = sent_text(fake)
        paths = {b["path"] for b in evidence_blocks(sent)}
        for p in corpus.planted:
            leaked = [frag for frag in fragments(p.value) if frag and frag in sent]
            ok = not leaked and p.file in paths
            why = f"seed {1000 + r} {p.kind} in {p.file}: " + (
                f"leaked {leaked[0][:24]}…" if leaked else "file never sent as evidence"
            )
            row.check(ok, why)


# --- injection -------------------------------------------------------------------------------
def attack_injection(rounds: int, rows: dict[str, Row], fake: FakeAnthropic) -> None:
    row = rows["injected evidence stays data"]
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        for name, payload in VARIANTS.items():
            (ws / "src").mkdir(parents=True, exist_ok=True)
            (ws / "src" / f"{name}.py").write_text(_module(name, payload), encoding="utf-8")
        eng = _engine(ws, Path(tmp) / "storage")
        try:
            eng.index(embed=False)
            for _ in range(rounds):
                for name in VARIANTS:
                    fake.requests.clear()
                    req = AskRequest(
                        f"render {name} banner helpers", path_prefix=f"src/{name}.py", min_score=0.0
                    )
                    ans = ask(req, eng, llm=LLM)
                    row.check(*_injection_held(fake, len(ans.evidences), name))
        finally:
            eng.close()


def _injection_held(fake: FakeAnthropic, n_evidence: int, name: str) -> tuple[bool, str]:
    if not fake.message_requests:
        return False, f"{name}: no request made"
    body = fake.message_requests[-1].json
    messages = body["messages"]
    user = messages[-1]["content"] if isinstance(messages[-1]["content"], str) else ""
    openers = list(OPENER.finditer(user))
    problems = []
    if [m["role"] for m in messages] != ["user"]:
        problems.append("extra turn")
    if len(openers) != n_evidence or user.count("<evidence") != n_evidence:
        problems.append("extra block")
    if user.count("</evidence>") != n_evidence:
        problems.append("extra closer")
    if user.count("<question>") != 1:
        problems.append("extra question")
    at = user.find(ATTACK)
    if at < 0 or not any(m.start() < at < user.find("</evidence>", m.end()) for m in openers):
        problems.append("attack text outside every block")
    return not problems, f"{name}: {', '.join(problems)}"


# --- orphans ---------------------------------------------------------------------------------
def _marked(mark: str) -> list[int]:
    out = []
    for proc in psutil.process_iter(["pid", "status"]):
        try:
            if (
                proc.info["status"] != psutil.STATUS_ZOMBIE
                and proc.environ().get("CODE_COMPASS_ATTACK_RUN") == mark
            ):
                out.append(proc.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return out


def _wait_orphans(mark: str) -> list[int]:
    deadline = time.monotonic() + ORPHAN_GRACE_S
    left = _marked(mark)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = _marked(mark)
    for pid in left:  # clean up, then report
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).kill()
    return left


def attack_orphans(
    rounds: int, rows: dict[str, Row], with_pytest: bool, rng: random.Random
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        (ws / "pkg").mkdir(parents=True)
        for i in range(3_000):
            body = "\n\n".join(f"def f{i}_{j}(x):\n    return x + {j}\n" for j in range(30))
            (ws / "pkg" / f"m{i}.py").write_text(body)
        for kind, sig in (("SIGKILL", signal.SIGKILL), ("SIGINT to the group", signal.SIGINT)):
            row = rows[f"orphans after {kind} of index"]
            for r in range(rounds):
                store = Path(tmp) / f"store-{kind[:4]}-{r}"
                _signal_index(ws, store, sig, rng.uniform(0.5, 6.0), row)
    if with_pytest:
        row = rows["orphans after pytest tests/security"]
        mark = uuid.uuid4().hex
        env = {**os.environ, "CODE_COMPASS_ATTACK_RUN": mark}
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/security"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
        )  # fmt: skip
        left = _wait_orphans(mark)
        row.check(not left, f"pytest left {len(left)} process(es)")


def _signal_index(ws: Path, store: Path, sig: int, after_s: float, row: Row) -> None:
    mark = uuid.uuid4().hex
    env = {**os.environ, "CODE_COMPASS_ATTACK_RUN": mark}
    cmd = [sys.executable, "-m", "code_compass_server", "index", "--no-embed",
           "--workspace", str(ws), "--storage", str(store)]  # fmt: skip
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    time.sleep(after_s)
    workers = len(_marked(mark)) - 1
    if sig == signal.SIGKILL:
        proc.kill()
    else:
        os.killpg(proc.pid, sig)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    left = _wait_orphans(mark)
    row.check(not left, f"{len(left)} left after {after_s:.1f} s ({workers} workers then)")


# --- main ------------------------------------------------------------------------------------
SUITES: dict[str, list[str]] = {
    "hostile": ["hostile files (serial)", "hostile files (worker pool)"],
    "secrets": ["planted secrets reach no request"],
    "injection": ["injected evidence stays data"],
    "orphans": ["orphans after SIGKILL of index", "orphans after SIGINT to the group of index"],
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default="hostile,secrets,injection,orphans")
    ap.add_argument("--pytest", action="store_true", help="also count orphans after pytest")
    ap.add_argument("--seed", type=int, default=16)
    args = ap.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    rows = {name: Row(name) for s in only for name in SUITES[s]}
    if args.pytest and "orphans" in only:
        rows["orphans after pytest tests/security"] = Row("orphans after pytest tests/security")
    rng = random.Random(args.seed)
    with FakeAnthropic() as fake:
        os.environ["ANTHROPIC_BASE_URL"] = fake.base_url
        os.environ["ANTHROPIC_API_KEY"] = "attack-key-not-secret"
        fake.forever("Answered from the evidence {cite:E1}.")
        steps: dict[str, Callable[[], None]] = {
            "hostile": lambda: attack_hostile(args.rounds, rows),
            "secrets": lambda: attack_secrets(args.rounds, rows, fake),
            "injection": lambda: attack_injection(args.rounds, rows, fake),
            "orphans": lambda: attack_orphans(args.rounds, rows, args.pytest, rng),
        }
        for name in only:
            t0 = time.monotonic()
            steps[name]()
            print(f"[{name}] {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    print(f"{'promise':46} {'tries':>6} {'held':>6} {'broken':>7} {'worst s':>8}")
    for row in rows.values():
        worst = f"{row.worst_s:8.1f}" if row.worst_s else f"{'':8}"
        print(f"{row.promise:46} {row.tries:6d} {row.held:6d} {len(row.broken):7d} {worst}")
    broken = [(r.promise, b) for r in rows.values() for b in r.broken]
    for promise, what in broken:
        print(f"BROKEN {promise}: {what}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
