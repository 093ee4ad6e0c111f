"""First definition shown by hover, per kind: name lookup -> parse-tree fast path -> hover.

Reads eval/symbols/positions*.jsonl: Python (flask 3.1.0, Django 5.2.8; gold from jedi without
a time budget), TypeScript (rxjs 7.8.2; gold from the TypeScript language service,
eval/symbols/ts_definitions.js) and Go (gorilla/mux 1.8.0 from Debian's package; gold read
from the source). Gold = "path:line" of the definition, or null with `outside` for names
defined outside the workspace. Indexes each repository (lexical only) for the symbol table
the name lookup reads, then per position:

- name: the name lookup's first definition (what hovers showed before resolution);
- fast: the parse-tree resolver alone (`None` -> the name lookup answers);
- hover: what the first hover shows (fast path, else jedi within the hover budget, else names);
- again: what a second hover shows once jedi has finished in the background (its cache);
- definition: what `code-compass definition` / the MCP tool `definition` answers (the engine's
  SymbolNavigator: a resolver of its own, jedi without the hover's deadline), timed per call.

Outside names are right when no workspace definition is shown. Figures per kind and overall,
and the fast path's time per position.

    python scripts/eval_symbols.py [--budget-ms 5] [--only flask-3.1.0]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import django_source, pypi_source
from code_compass_server.engine import Engine
from code_compass_server.settings import EngineSettings
from code_compass_server.symbols.navigation import Lookup
from code_compass_server.symbols.resolve import Resolution, SymbolResolver

ROOT = Path(__file__).resolve().parent.parent
SETS = ROOT / "eval" / "symbols"
CORPORA = ROOT / "bench-data" / "corpora"


def rxjs_source() -> Path:
    """rxjs's npm package (TypeScript sources), through scripts/fetch_corpora.py."""
    target = CORPORA / "rxjs-7.8.2"
    if not (target / "src" / "index.ts").is_file():
        subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "fetch_corpora.py"), "--only", "rxjs"],
            check=True,
        )
    return target


def gomux_source() -> Path:
    """gorilla/mux's Go sources from Debian's golang-github-gorilla-mux-dev package."""
    target = ROOT / "bench-data" / "gomux-1.8.0"
    if (target / "mux" / "mux.go").is_file():
        return target
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["apt-get", "download", "golang-github-gorilla-mux-dev=1.8.0-1"],
                       cwd=tmp, check=True)  # fmt: skip
        deb = next(Path(tmp).glob("*.deb"))
        subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True)
        src = Path(tmp) / "usr/share/gocode/src/github.com/gorilla/mux"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copytree(src, target / "mux", dirs_exist_ok=True)
    return target


REPOS = {
    "flask-3.1.0": lambda: pypi_source("flask", "3.1.0", "src/flask/__init__.py"),
    "django-5.2.8": django_source,
    "rxjs-7.8.2": rxjs_source,
    "gomux-1.8.0": gomux_source,
}
COLUMNS = ("name", "fast", "hover", "again", "definition")


def shown(res: Resolution | None, by_name: str | None) -> str | None:
    """The first definition the hover shows for this resolution (None: none in the workspace)."""
    if res is None or (not res.targets and not res.outside):
        return by_name
    return f"{res.targets[0].path}:{res.targets[0].line}" if res.targets else None


def first_definition(found: Lookup) -> str | None:
    """The first location a definition request returns (None: none in the workspace)."""
    return f"{found.locations[0].path}:{found.locations[0].line}" if found.locations else None


def evaluate(repo: str, rows: list[dict[str, object]], budget_s: float) -> list[dict[str, object]]:
    root = REPOS[repo]().resolve()
    out: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        engine = Engine.open(Path(tmp), EngineSettings(embeddings=False))
        project = engine.add_project(root)
        engine.index(project, embed=False)
        resolver = SymbolResolver(budget_s)
        for r in rows:
            rel, line, col = str(r["path"]), int(r["line"]) - 1, int(r["col"])  # type: ignore[call-overload]
            language = str(r.get("language", "python"))
            text = (root / rel).read_text()
            defs = engine.symbols_named(str(r["name"]), project)
            by_name = f"{defs[0].path}:{defs[0].name_line}" if defs else None
            t0 = time.perf_counter()
            fast = resolver.fast(root, rel, language, text, line, col)
            fast_ms = (time.perf_counter() - t0) * 1000
            resolver.wait_idle(60)
            first = resolver.resolve(root, rel, language, text, line, col)
            resolver.wait_idle(60)
            again = resolver.resolve(root, rel, language, text, line, col)
            t0 = time.perf_counter()
            defined = engine.definitions(project, rel, line + 1, col + 1)
            def_ms = (time.perf_counter() - t0) * 1000
            got = {
                "name": by_name,
                "fast": shown(fast, by_name),
                "hover": shown(first, by_name),
                "again": shown(again, by_name),
                "definition": first_definition(defined),
            }
            out.append({**r, **{f"ok_{k}": v == r["gold"] for k, v in got.items()},
                        "got": got["hover"], "fast_ms": fast_ms, "def_ms": def_ms})  # fmt: skip
        resolver.close()
        engine.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--budget-ms", type=float, default=5.0, help="jedi's time on the hover")
    ap.add_argument("--only", default="", help="comma-separated repositories")
    ap.add_argument("--misses", action="store_true", help="list positions the hover gets wrong")
    args = ap.parse_args()
    by_repo: dict[str, list[dict[str, object]]] = defaultdict(list)
    for f in sorted(SETS.glob("positions*.jsonl")):
        for x in f.read_text().splitlines():
            if x.strip():
                row = json.loads(x)
                by_repo[row.get("repo", "flask-3.1.0")].append(row)
    only = set(filter(None, args.only.split(",")))
    results: list[dict[str, object]] = []
    for repo, rows in by_repo.items():
        if not only or repo in only:
            results += evaluate(repo, rows, args.budget_ms / 1000)
    print(f"{len(results)} positions ({', '.join(sorted(by_repo))}); jedi budget "
          f"{args.budget_ms:.0f} ms; first definition right, %")  # fmt: skip
    print(f"{'kind':<22} {'n':>4}  " + "  ".join(f"{c:>6}" for c in COLUMNS))
    groups: dict[str, list[dict[str, object]]] = defaultdict(list)
    for r in results:
        groups[str(r["kind"])].append(r)
        groups[f"[{r.get('language', 'python')}]"].append(r)
        groups["workspace symbols" if r["gold"] else "outside the workspace"].append(r)
        groups["overall"].append(r)
    order = [*sorted(k for k in groups if k != "overall"), "overall"]
    for kind in order:
        rs = groups[kind]
        cells = "  ".join(
            f"{100 * sum(bool(r[f'ok_{c}']) for r in rs) / len(rs):6.0f}" for c in COLUMNS
        )
        print(f"{kind:<22} {len(rs):>4}  {cells}")
    times = sorted(float(r["fast_ms"]) for r in results)  # type: ignore[arg-type]
    p50, p95 = times[len(times) // 2], times[int(0.95 * (len(times) - 1))]
    print(f"fast path: p50 {p50:.2f} ms, p95 {p95:.2f} ms (a file's first call parses it)")
    times = sorted(float(r["def_ms"]) for r in results)  # type: ignore[arg-type]
    p50, p95 = times[len(times) // 2], times[int(0.95 * (len(times) - 1))]
    print(f"definition (engine.definitions, in process): p50 {p50:.2f} ms, p95 {p95:.2f} ms")
    if args.misses:
        for r in results:
            if not r["ok_hover"]:
                print(f"  miss {r['kind']:<16} {r['path']}:{r['line']}:{r['col']} {r['name']}"
                      f" gold {r['gold'] or r['outside']} got {r['got']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
