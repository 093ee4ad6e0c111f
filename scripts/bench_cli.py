"""Cold-process latency of the command line on real corpora, against ripgrep and `--version`.

    .venv/bin/python scripts/bench_cli.py [--corpora flask,django] [--runs 20] [--build]

For each corpus (fetched by scripts/fetch_corpora.py into bench-data/corpora/) and its index in
bench-data/store/<name> (built first with --build: `code-compass index`, embeddings included),
runs, interleaved round by round so machine load hits every command alike:
  - `code-compass --version`                       the floor: interpreter + entry point
  - `code-compass search QUERY --top-k 5`          a cold process, index already built
  - `code-compass ask QUESTION` (no API key)       the extractive answer path
  - `rg -n PATTERN TREE`                           the tool developers already have
and prints p50/p95 (wall seconds) per command, the p50 of its CPU time (user + system, less
sensitive to a loaded machine than the wall clock) and the peak RSS of each process kind
(ru_maxrss of the child, from wait4). With --compare DIR (a checkout's `server/` folder, e.g.
the code before a change), the same code-compass commands also run with PYTHONPATH=DIR in the
same rounds, so before and after share the machine's load. The index state (chunks, embedded)
is printed first: a partly embedded index is said so. Targets on a 2-core machine: search on
Django p50 <= 0.8 s, --version <= 0.3 s, peak RSS of search <= 200 MB on Django. Figures, not
assertions: nothing here fails on a miss.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "bench-data" / "corpora"
STORES = ROOT / "bench-data" / "store"

# (search queries, ask questions, ripgrep pattern) per corpus: rotated over the runs.
WORKLOAD: dict[str, tuple[list[str], list[str], str]] = {
    "flask": (
        ["register_blueprint", "how are url rules matched", "session cookie signing", "teardown"],
        ["where does flask register a blueprint?", "how does flask sign the session cookie?"],
        "def register_blueprint",
    ),
    "django": (
        ["validate user passwords", "PBKDF2 iterations", "QuerySet select_related", "csrf token"],
        ["where does django validate user passwords?", "how does the csrf middleware work?"],
        "def validate_password",
    ),
}


@dataclass(slots=True)
class Figures:
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # user + system seconds of the child
    rss_kb: list[int] = field(default_factory=list)
    failures: int = 0


def corpus_tree(name: str) -> Path:
    spec = json.loads((ROOT / "eval" / "realqa" / "corpora.json").read_text("utf-8"))
    for c in spec["corpora"]:
        if c["name"] == name:
            tree = CORPORA / f"{name}-{c['version']}"
            if not tree.is_dir():
                sys.exit(f"{tree} missing: run scripts/fetch_corpora.py --only {name}")
            return tree
    sys.exit(f"unknown corpus {name}")


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds, peak RSS (KB) and exit code of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _pid, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return took, usage.ru_utime + usage.ru_stime, int(usage.ru_maxrss), proc.returncode


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def report(name: str, f: Figures) -> str:
    if not f.seconds:
        return f"  {name:<19} no run"
    fail = f"  ({f.failures} non-zero exits)" if f.failures else ""
    return (
        f"  {name:<19} p50 {statistics.median(f.seconds):6.3f} s  p95 {pct(f.seconds, 95):6.3f} s"
        f"  cpu p50 {statistics.median(f.cpu):6.3f} s"
        f"  peak RSS {max(f.rss_kb) / 1024:6.1f} MB{fail}"
    )


def bench(name: str, cc: list[str], runs: int, build: bool, compare: Path | None) -> None:
    tree = corpus_tree(name)
    storage = STORES / name
    # No API key: `ask` takes its extractive path. Bytecode is written (and a first round, not
    # counted, writes it): an installed package has its .pyc files, so a user's cold process
    # does not compile the sources; PYTHONDONTWRITEBYTECODE in the caller's shell would.
    drop = ("ANTHROPIC_API_KEY", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    base = ["--workspace", str(tree), "--storage", str(storage)]
    if build:
        print(f"{name}: building the index (embeddings included) ...", flush=True)
        subprocess.run([*cc, "index", *base], check=True, env=env, stdout=subprocess.DEVNULL)
    status = subprocess.run(
        [*cc, "status", "--json", *base], capture_output=True, text=True, env=env, check=True
    )
    proj = json.loads(status.stdout)["projects"][0]
    part = "" if proj["embedded"] >= proj["chunks"] else "  (PARTLY EMBEDDED)"
    print(
        f"{name}: {proj['files']} files, {proj['chunks']} chunks, "
        f"{proj['embedded']}/{proj['embedTotal']} embedded{part}; {runs} runs each",
        flush=True,
    )
    queries, questions, pattern = WORKLOAD[name]
    kinds = ["--version", "search", "ask"]
    variants = [("", env)]
    if compare is not None:
        variants.append((" (before)", {**env, "PYTHONPATH": str(compare)}))
    figures = {k + tag: Figures() for tag, _e in variants for k in kinds}
    figures["rg"] = Figures()
    rg = shutil.which("rg")
    for i in range(-1, runs):  # round -1 warms up: bytecode, page cache
        cmds: list[tuple[str, list[str], dict[str, str]]] = []
        for tag, venv in variants:
            cmds += [
                ("--version" + tag, [*cc, "--version"], venv),
                ("search" + tag, [*cc, "search", queries[i % len(queries)], "--top-k", "5", *base],
                 venv),
                ("ask" + tag, [*cc, "ask", questions[i % len(questions)], *base], venv),
            ]  # fmt: skip
        if rg:
            cmds.append(("rg", [rg, "-n", pattern, str(tree)], env))
        for key, cmd, cenv in cmds:
            took, cpu, rss, code = timed(cmd, cenv)
            if i < 0:
                continue
            fig = figures[key]
            fig.seconds.append(took)
            fig.cpu.append(cpu)
            fig.rss_kb.append(rss)
            # rg exits 1 when nothing matches; the pattern is chosen to match
            fig.failures += code != 0
    for key, fig in figures.items():
        print(report(key, fig))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="flask,django")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--build", action="store_true", help="index each corpus first (embeddings)")
    ap.add_argument(
        "--code-compass",
        default=str(Path(sys.executable).with_name("code-compass")),
        help="the entry point to time (default: beside this interpreter)",
    )
    ap.add_argument("--compare", type=Path, help="PYTHONPATH of the code to compare against")
    args = ap.parse_args()
    cc = [args.code_compass_server]
    print(f"code-compass: {cc[0]}  PYTHONPATH={os.environ.get('PYTHONPATH', '')}")
    for name in args.corpora.split(","):
        bench(name.strip(), cc, args.runs, args.build, args.compare)


if __name__ == "__main__":
    main()
