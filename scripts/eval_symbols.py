"""First definition shown by hover, before (name lookup) -> after (jedi resolution), per kind.

Reads eval/symbols/positions.jsonl (flask 3.1.0 positions; gold = "path:line" of the
definition, or null with `outside` for names defined outside the workspace). Indexes flask
(lexical only) to get the symbol table the name lookup reads, then for each position:
before = the name lookup's first definition; after = what the hover shows (jedi within the
hover budget, else the name lookup). Outside names are right when no workspace definition
is shown.

    python scripts/eval_symbols.py [--flask DIR] [--budget-ms 150]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from code_compass.engine import Engine
from code_compass.lsp.resolve import SymbolResolver
from code_compass.settings import EngineSettings

ROOT = Path(__file__).resolve().parent.parent
POSITIONS = ROOT / "eval" / "symbols" / "positions.jsonl"
CACHE = ROOT / "bench-data"


def flask_source() -> Path:
    target = CACHE / "flask-3.1.0"
    if (target / "src" / "flask").is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
         "flask==3.1.0", "-d", str(CACHE)],
        check=True,
    )  # fmt: skip
    with tarfile.open(CACHE / "flask-3.1.0.tar.gz") as tar:
        tar.extractall(CACHE, filter="data")
    return target


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--flask", type=Path, default=None)
    ap.add_argument("--budget-ms", type=float, default=150.0)
    args = ap.parse_args()
    root = (args.flask or flask_source()).resolve()
    rows = [json.loads(x) for x in POSITIONS.read_text().splitlines() if x.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        engine = Engine.open(Path(tmp), EngineSettings(embeddings=False))
        project = engine.add_project(root)
        engine.index(project, embed=False)
        resolver = SymbolResolver()
        # Warm-up (the server's first hovers do the same in the background).
        first = rows[0]
        text = (root / first["path"]).read_text()
        resolver.resolve(root, first["path"], "python", text, 0, 0, budget_s=30)
        before: dict[str, list[bool]] = defaultdict(list)
        after: dict[str, list[bool]] = defaultdict(list)
        fell_back = 0
        times: list[float] = []
        for r in rows:
            defs = engine.symbols_named(r["name"], project)
            by_name = f"{defs[0].path}:{defs[0].name_line}" if defs else None
            text = (root / r["path"]).read_text()
            t0 = time.perf_counter()
            res = resolver.resolve(
                root, r["path"], "python", text, r["line"] - 1, r["col"], args.budget_ms / 1000
            )
            times.append((time.perf_counter() - t0) * 1000)
            if res is None:
                fell_back += 1
                resolver.wait_idle(30)
                shown = by_name
            elif res.targets:
                shown = f"{res.targets[0].path}:{res.targets[0].line}"
            else:
                shown = None
            before[r["kind"]].append(by_name == r["gold"])
            after[r["kind"]].append(shown == r["gold"])
        engine.close()
    print(f"{len(rows)} positions on flask 3.1.0; jedi budget {args.budget_ms:.0f} ms")
    print(f"{'kind':<18} {'n':>3}  {'before':>7} -> {'after':>6}")
    for kind in sorted(before):
        b, a = before[kind], after[kind]
        print(
            f"{kind:<18} {len(b):>3}  {100 * sum(b) / len(b):6.0f}% -> "
            f"{100 * sum(a) / len(a):5.0f}%"
        )
    allb = [x for v in before.values() for x in v]
    alla = [x for v in after.values() for x in v]
    print(f"{'overall':<18} {len(allb):>3}  {100 * sum(allb) / len(allb):6.0f}% -> "
          f"{100 * sum(alla) / len(alla):5.0f}%")  # fmt: skip
    times.sort()
    print(
        f"fell back to the name lookup: {fell_back}; resolve p50 {times[len(times) // 2]:.0f} ms,"
        f" p95 {times[int(0.95 * (len(times) - 1))]:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
