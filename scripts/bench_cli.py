"""Cold-process latency and peak RSS of the command line, paired against a baseline checkout.

    .venv/bin/python scripts/bench_cli.py [--corpora date-fns,django] [--runs 15] [--build]
        [--baseline ../perf-base] [--read-only-check]

Corpora: date-fns (npm, scripts/benchdata.py `date_fns_source`) and Django (PyPI sdist,
`django_source`); their indexes live in bench-data/store/<name> (built with --build, or by
`code-compass index`; a partly embedded index is said so). Each variant gets its own copy of
the index (bench-data/store/<name>-<variant>), so one variant's writes never change what the
other reads.

The baseline is another checkout with its own venv, e.g. today's main:

    git worktree add --detach ../perf-base 12e01d2
    (cd ../perf-base && python3 -m venv .venv && .venv/bin/pip install -q -r requirements.lock \\
        && .venv/bin/pip install -q --no-deps -e . && mkdir -p models \\
        && ln -s "$PWD/../perf/models/build" models/build)

Per corpus, interleaved round by round (so machine load hits every variant alike), each a fresh
process: `--version`, `search QUERY --top-k 5` (hybrid, the default), `search --mode lexical`,
`status`, and `rg -n PATTERN TREE` (the tool developers already have). Printed: p50/p95 wall
seconds, p50 CPU seconds (user + system: less sensitive to a loaded machine) and peak RSS
(ru_maxrss, from wait4), then the ratio current/baseline of the p50s. Round -1 warms up
(bytecode, page cache) and is not counted. Targets (issue #31, a 2-core machine): search p50
<= 0.3 s on date-fns and <= 0.5 s on Django, status <= 0.2 s, --version <= 0.1 s.

--read-only-check (root only: a read-only bind mount; root ignores file modes) copies each
index, mounts the copy read-only and runs `search --json` there and on the writable copy:
same hits or not, per variant (the baseline is expected to fail there: it takes the writer
lock). Figures, not assertions: nothing here fails on a miss.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STORES = ROOT / "bench-data" / "store"
sys.path.insert(0, str(ROOT / "scripts"))

from benchdata import date_fns_source, django_source  # noqa: E402

# (search queries, ripgrep pattern) per corpus: rotated over the runs.
WORKLOAD: dict[str, tuple[list[str], str]] = {
    "date-fns": (
        ["format distance to now", "addBusinessDays", "parse ISO week date", "locale month names"],
        "function addBusinessDays",
    ),
    "django": (
        ["validate user passwords", "PBKDF2 iterations", "QuerySet select_related", "csrf token"],
        "def validate_password",
    ),
}
SOURCES = {"date-fns": date_fns_source, "django": django_source}
TARGETS = {"search date-fns": 0.3, "search django": 0.5, "status": 0.2, "--version": 0.1}


@dataclass(slots=True)
class Figures:
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # user + system seconds of the child
    rss_kb: list[int] = field(default_factory=list)
    failures: int = 0


@dataclass(frozen=True, slots=True)
class Variant:
    tag: str  # "" for the code under test, "base" for the baseline
    cc: str  # its code-compass entry point


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds, peak RSS (KB) and exit code of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _pid, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - t0
    return (
        took,
        usage.ru_utime + usage.ru_stime,
        int(usage.ru_maxrss),
        os.waitstatus_to_exitcode(status),
    )


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def report(name: str, f: Figures, target: float | None) -> str:
    if not f.seconds:
        return f"  {name:<24} no run"
    fail = f"  ({f.failures} non-zero exits)" if f.failures else ""
    p50 = statistics.median(f.seconds)
    goal = "" if target is None else f"  target {target:.2f} {'met' if p50 <= target else 'MISSED'}"
    return (
        f"  {name:<24} p50 {p50:6.3f} s  p95 {pct(f.seconds, 95):6.3f} s"
        f"  cpu p50 {statistics.median(f.cpu):6.3f} s"
        f"  peak RSS {max(f.rss_kb) / 1024:6.1f} MB{goal}{fail}"
    )


def child_env() -> dict[str, str]:
    # No API key; bytecode is written (the warm-up round writes it): an installed package has
    # its .pyc files, so a user's cold process does not compile the sources.
    drop = ("ANTHROPIC_API_KEY", "PYTHONDONTWRITEBYTECODE", "CODE_COMPASS_LOG")
    return {k: v for k, v in os.environ.items() if k not in drop}


def index_state(cc: str, tree: Path, storage: Path, env: dict[str, str]) -> str:
    out = subprocess.run(
        [cc, "status", "--json", "--workspace", str(tree), "--storage", str(storage)],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    p = json.loads(out.stdout)["projects"][0]
    part = "" if p["embedded"] >= p["chunks"] else "  (PARTLY EMBEDDED)"
    done = f"{p['embedded']}/{p['embedTotal']} embedded"
    return f"{p['files']} files, {p['chunks']} chunks, {done}{part}"


def bench(name: str, variants: list[Variant], runs: int, build: bool, ro_check: bool) -> None:
    tree = SOURCES[name]()
    env = child_env()
    source = STORES / name
    if build or not source.exists():
        print(f"{name}: building the index (embeddings included) ...", flush=True)
        subprocess.run(
            [variants[0].cc, "index", "--workspace", str(tree), "--storage", str(source)],
            check=True, env=env, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    stores = {}
    for v in variants:  # a private copy each: one variant's writes never feed the other
        stores[v.tag] = STORES / f"{name}-{v.tag or 'current'}"
        shutil.rmtree(stores[v.tag], ignore_errors=True)
        shutil.copytree(source, stores[v.tag])
    print(f"{name}: {index_state(variants[0].cc, tree, source, env)}; {runs} runs each", flush=True)
    queries, pattern = WORKLOAD[name]
    kinds = ["--version", "search", "search lexical", "status"]
    figures = {f"{k} {v.tag}".strip(): Figures() for v in variants for k in kinds}
    figures["rg"] = Figures()
    rg = shutil.which("rg")
    for i in range(-1, runs):
        cmds: list[tuple[str, list[str]]] = []
        for v in variants:
            base = ["--workspace", str(tree), "--storage", str(stores[v.tag])]
            q = queries[i % len(queries)]
            lexical = ["--mode", "lexical"]
            cmds += [
                (f"--version {v.tag}", [v.cc, "--version"]),
                (f"search {v.tag}", [v.cc, "search", q, "--top-k", "5", *base]),
                (f"search lexical {v.tag}", [v.cc, "search", q, "--top-k", "5", *lexical, *base]),
                (f"status {v.tag}", [v.cc, "status", *base]),
            ]  # fmt: skip
        if rg:
            cmds.append(("rg", [rg, "-n", pattern, str(tree)]))
        for key, cmd in cmds:
            took, cpu, rss, code = timed(cmd, env)
            if i < 0:
                continue
            fig = figures[key.strip()]
            fig.seconds.append(took)
            fig.cpu.append(cpu)
            fig.rss_kb.append(rss)
            fig.failures += code != 0  # rg exits 1 on no match; its pattern matches
    for key, fig in figures.items():
        kind = key.removesuffix(" base").strip()
        target = TARGETS.get(f"{kind} {name}", TARGETS.get(kind))
        print(report(key, fig, target if not key.endswith(" base") else None))
    if len(variants) > 1:
        for kind in kinds:
            cur, old = figures[kind], figures[f"{kind} base"]
            if cur.seconds and old.seconds:
                ratio = statistics.median(cur.seconds) / statistics.median(old.seconds)
                cpu = statistics.median(cur.cpu) / statistics.median(old.cpu)
                print(f"  {kind:<24} current/base p50 {ratio:5.2f}x wall, {cpu:5.2f}x cpu")
    if ro_check:
        for v in variants:
            outcome = read_only_check(v, tree, stores[v.tag], env)
            print(f"  read-only mount, {v.tag or 'current'}: {outcome}")


@contextlib.contextmanager
def read_only_copy(storage: Path) -> Iterator[Path]:
    """A copy of the index, bind-mounted read-only (root: file modes would not stop it)."""
    work = Path(tempfile.mkdtemp(prefix="cc-ro-"))
    copy, mount = work / "copy", work / "mnt"
    shutil.copytree(storage, copy)
    mount.mkdir()
    subprocess.run(["mount", "--bind", str(copy), str(mount)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(mount)], check=True)
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)
        shutil.rmtree(work, ignore_errors=True)


def read_only_check(v: Variant, tree: Path, storage: Path, env: dict[str, str]) -> str:
    if os.geteuid() != 0:
        return "skipped (needs root for a read-only bind mount)"
    query = ["search", "validate", "--top-k", "10", "--mode", "lexical", "--json"]

    def hits(store: Path) -> tuple[int, list[tuple[str, int]], str]:
        out = subprocess.run(
            [v.cc, *query, "--workspace", str(tree), "--storage", str(store)],
            capture_output=True, text=True, env=env,
        )  # fmt: skip
        if out.returncode != 0:
            return out.returncode, [], (out.stderr.strip().splitlines() or ["?"])[-1][:160]
        found = json.loads(out.stdout)["hits"]
        return 0, [(h["path"], h["startLine"]) for h in found], ""

    code, writable, _ = hits(storage)
    with read_only_copy(storage) as mount:
        ro_code, ro_hits, err = hits(mount)
    if ro_code != 0:
        return f"exit {ro_code}: {err}"
    same = ro_hits == writable and code == 0
    return f"{'same' if same else 'DIFFERENT'} hits ({len(ro_hits)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="date-fns,django")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--build", action="store_true", help="index each corpus first (embeddings)")
    ap.add_argument(
        "--code-compass",
        default=str(Path(sys.executable).with_name("code-compass")),
        help="the entry point to time (default: beside this interpreter)",
    )
    ap.add_argument("--baseline", type=Path, help="a checkout with its own .venv to compare with")
    ap.add_argument("--read-only-check", action="store_true")
    args = ap.parse_args()
    variants = [Variant("", args.code_compass)]
    if args.baseline is not None:
        base_cc = args.baseline / ".venv" / "bin" / "code-compass"
        if not base_cc.exists():
            sys.exit(f"{base_cc} missing: give the baseline checkout its venv (see --help)")
        variants.append(Variant("base", str(base_cc)))
    for v in variants:
        commit = subprocess.run(
            ["git", "-C", str(Path(v.cc).resolve().parents[2]), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip
        print(f"{v.tag or 'current'}: {v.cc} at {commit or '?'}")
    for name in args.corpora.split(","):
        bench(name.strip(), variants, args.runs, args.build, args.read_only_check)


if __name__ == "__main__":
    main()
