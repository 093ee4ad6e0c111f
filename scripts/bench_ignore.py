#!/usr/bin/env python3
"""ReDoS corpus for ignore rules, and a front door kept answering during a hostile scan (#32).

1. Patterns known to make backtracking matchers explode (`*a*a*...ab`, `**/a**/...`, `?`,
   classes, anchored `**` chains, 10,000-line rule files) x paths of 10 to 4,000 characters
   and 1 to 200 components: the worst time of one `GlobMatcher.check`, against pathspec (the
   previous matcher, same machine, same run, each case in a subprocess cut at --cap seconds).
2. `code-compass index --no-embed` on the issue's case (`*a*a*a*a*a*a*a*ab` and a file of 100
   `a`s) plus N such files: wall time.
3. The language server on that workspace: `codeCompass/status` latency while it scans.
4. SIGINT to `index` during a long scan: time until the process has exited.

Targets: worst per path <= 10 ms; index of the issue's case <= 5 s; status <= 100 ms;
Ctrl-C <= 1 s. (The run with N files reports its index time too: that is mostly indexing.)

    nice python scripts/bench_ignore.py [--files 20000] [--cap 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from attack_protocol import Client
from code_compass_server.index.ignore import GlobMatcher

EVIL = "*a*a*a*a*a*a*a*ab"
INDEX = [sys.executable, "-m", "code_compass_server", "index", "--workspace"]


def corpus() -> list[tuple[str, list[str]]]:
    cases: list[tuple[str, list[str]]] = []
    for stars in (4, 8, 16, 32):
        cases.append((f"*a x{stars} b", ["*a" * stars + "b"]))
    cases.append(("**/a** chain", ["**/a**/a**/a**/a**/a**/b"]))
    cases.append(("a?a? x16 b", ["a?" * 16 + "b"]))
    cases.append(("[a]* x12 b", ["[a]*" * 12 + "b"]))
    cases.append(("anchored a/**/ x8 b", ["a/" + "**/a/" * 8 + "b"]))
    cases.append(("*a*b alternating", ["*a*b" * 10 + "c"]))
    cases.append(("10k literal lines", [f"dir{i}/file{i}.py" for i in range(10_000)]))
    cases.append(("1k generic globs", [f"*x{i}*y*z{i}?" for i in range(1_000)]))
    cases.append(("1k distinct evil", [f"*a*a*a*a*a*a*a*a{'a' * (i % 40)}b" for i in range(1_000)]))
    cases.append(
        ("1k evil + negations", [("!" if i % 3 == 0 else "") + EVIL for i in range(1_000)])
    )
    return cases


def paths() -> list[str]:
    out = []
    for length in (10, 100, 251):  # a name has at most 255 bytes (NAME_MAX)
        out.append("a" * length + ".py")
        out.append("a" * length)
    out.append("/".join(["a" * 250] * 16))  # a path near PATH_MAX (4,096)
    out.append("/".join(["a" * 249 + "ab"] * 16))  # every evil literal present
    out.append("a" * 250 + "b")
    every = "abcdefghijklmnopqrstuvwxyz0123456789._-"  # passes every literal pre-filter
    out.append((every * 7)[:250])
    out.append("/".join([(every * 7)[:250]] * 16))
    for depth in (10, 50, 200):
        out.append("/".join(["a"] * depth) + "/aaaa.py")
        out.append("/".join(["aa"] * depth) + "/")
    return out


def worst_ms(lines: list[str], targets: list[str]) -> float:
    matcher = GlobMatcher(lines)
    worst = 0.0
    for rel in targets:
        start = time.perf_counter()
        matcher.check(rel)
        worst = max(worst, time.perf_counter() - start)
    return worst * 1000


_PATHSPEC = """
import json, sys, time, pathspec
lines, targets = json.load(sys.stdin)
spec = pathspec.GitIgnoreSpec.from_lines(lines)
worst = 0.0
for rel in targets:
    start = time.perf_counter()
    spec.check_file(rel)
    worst = max(worst, time.perf_counter() - start)
print(worst * 1000)
"""


def pathspec_ms(lines: list[str], targets: list[str], cap: float) -> str:
    try:
        out = subprocess.run(
            [sys.executable, "-c", _PATHSPEC],
            input=json.dumps([lines, targets]),
            capture_output=True,
            text=True,
            timeout=cap,
        )
    except subprocess.TimeoutExpired:
        return f"> {cap * 1000:.0f}"
    return f"{float(out.stdout.strip() or 'nan'):.2f}" if out.returncode == 0 else "error"


def hostile_workspace(root: Path, files: int) -> Path:
    ws = root / "ws"
    ws.mkdir(parents=True)
    (ws / ".gitignore").write_text(EVIL + "\n")
    (ws / ("a" * 100 + ".py")).touch()
    (ws / "ok.py").write_text("def kept():\n    return 1\n")
    for i in range(files):
        sub = ws / f"d{i // 1000}"
        sub.mkdir(exist_ok=True)
        (sub / ("a" * 90 + f"{i}.py")).touch()
    return ws


def index_seconds(ws: Path, storage: Path) -> float:
    env = {**os.environ, "CODE_COMPASS_HOME": str(storage)}
    start = time.monotonic()
    subprocess.run(
        [*INDEX, str(ws), "--no-embed"],
        env=env,
        check=True,
        capture_output=True,
    )
    return time.monotonic() - start


def sigint_seconds(ws: Path, storage: Path) -> float:
    env = {**os.environ, "CODE_COMPASS_HOME": str(storage)}
    proc = subprocess.Popen(
        [*INDEX, str(ws), "--no-embed"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # wait until it is scanning
        if "scan" in line:
            break
    time.sleep(0.3)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    return time.monotonic() - sent


async def status_latencies(ws: Path, storage: Path) -> list[float]:
    client = await Client.start()
    try:
        await client.initialize(ws, storage)
        latencies: list[float] = []
        for i in range(400):
            start = time.monotonic()
            reply = await client.request(f"s{i}", "codeCompass/status", {}, timeout=60)
            latencies.append(time.monotonic() - start)
            status = reply.get("result") or {}
            projects = status.get("projects", [])
            if (
                i > 5
                and not status.get("indexing")
                and all(p.get("state") == "ready" for p in projects)
            ):
                break
            await asyncio.sleep(0.02)
        return latencies
    finally:
        await client.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--cap", type=float, default=5.0)
    args = parser.parse_args()
    targets = paths()
    print(f"{'case':<24} {'ours worst ms':>14} {'pathspec worst ms':>18}")
    overall = 0.0
    for name, lines in corpus():
        ours = worst_ms(lines, targets)
        overall = max(overall, ours)
        print(f"{name:<24} {ours:>14.2f} {pathspec_ms(lines, targets, args.cap):>18}")
    print(f"worst per path over the corpus: {overall:.2f} ms (target <= 10)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bare = hostile_workspace(root / "bare", 0)
        secs = index_seconds(bare, root / "store0")
        print(f"index --no-embed, the issue's case alone: {secs:.2f} s (target <= 5)")
        ws = hostile_workspace(root, args.files)
        secs = index_seconds(ws, root / "store1")
        print(f"index --no-embed, issue case + {args.files} files: {secs:.2f} s (target <= 5)")
        lat = sorted(asyncio.run(status_latencies(ws, root / "store2")))
        p50 = lat[len(lat) // 2] * 1000
        print(
            f"status during scan: {len(lat)} polls, p50 {p50:.1f} ms, max {lat[-1] * 1000:.1f} ms"
        )
        stop = sigint_seconds(ws, root / "store3")
        print(f"SIGINT during scan: exited after {stop:.2f} s (target <= 1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
