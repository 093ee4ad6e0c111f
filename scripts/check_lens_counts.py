"""Code-lens usages against a real resolver's references, on a real repository (flask 3.1.3).

Starts the real server over stdio on flask's sdist (lexical index), takes lenses from a few
source files (round robin, so not all from one file) and resolves them: the first answer
(timed), then again once background resolution has settled. The reference is jedi's
`Script.get_references` (project scope) on the definition's name, with jedi's parse limit
lifted (it stops after 30 files by default, which would undercount `Flask`), minus the
definitions themselves and the lines that define another symbol of that name (the lens never
counts those).

The lens's own locations are computed once more in this process with the server's code
(`lens_references`: the peek lists at most 50, docs first), so each difference is shown by
location and explained: a reference the lens lists "by name" (its resolution failed), one it
misses, or one it has that jedi does not.

    python scripts/check_lens_counts.py [--files app.py,blueprints.py,...] [--n 20]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import jedi
import jedi.inference.references
from lsprotocol import types

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lsp import Bench, pct
from benchdata import flask_source
from code_compass.engine import Engine
from code_compass.lsp.features.codelens import lens_references
from code_compass.lsp.features.evidence import Subject
from code_compass.lsp.lens_usages import UsageResolver
from code_compass.lsp.resolve import SymbolResolver
from code_compass.records import SymbolDef
from code_compass.settings import EngineSettings

TITLE = re.compile(r"(\d+) doc references? · (\d+) usages?(?: · (\d+) by name)?")
FILES = "app.py,blueprints.py,helpers.py,ctx.py,sessions.py,config.py,templating.py,wrappers.py"
SETTLE_S = 90.0

Loc = tuple[str, int, int]  # path, 1-based line, 0-based column


def numbers(title: str) -> tuple[int, int, int]:
    m = TITLE.search(title)
    if m is None:
        raise SystemExit(f"unexpected lens title: {title!r}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def jedi_references(
    root: Path, project: Any, group: list[SymbolDef], def_lines: set[tuple[str, int]]
) -> set[Loc]:
    out: set[Loc] = set()
    own = {(d.path, d.name_line, d.name_col) for d in group}
    for d in group:
        script = jedi.Script(path=str(root / d.path), project=project)
        for n in script.get_references(d.name_line, d.name_col, scope="project"):
            if n.module_path is None or n.line is None:
                continue
            try:
                rel = Path(n.module_path).resolve().relative_to(root).as_posix()
            except ValueError:
                continue  # site-packages, typeshed
            loc = (rel, n.line, n.column)
            if loc not in own and (rel, n.line) not in def_lines:
                out.add(loc)
    return out


async def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--files", default=FILES)
    ap.add_argument("--n", type=int, default=20)
    args = ap.parse_args()
    root = flask_source().resolve()
    files = [root / "src" / "flask" / f for f in args.files.split(",")]
    # A reference count must be complete: jedi stops after 30 parsed files by default.
    jedi.inference.references._PARSED_FILE_LIMIT = 100_000  # type: ignore[attr-defined]
    project_jedi = jedi.Project(root, added_sys_path=[str(root / "src")])
    with tempfile.TemporaryDirectory(prefix="lens-counts-") as tmp:
        engine = Engine.open(Path(tmp) / "table", EngineSettings(embeddings=False))
        project = engine.add_project(root)
        engine.index(project, embed=False)
        resolver = SymbolResolver()
        usages = UsageResolver(resolver)
        bench = Bench(root, Path(tmp) / "storage", False, "flask")
        await bench.start()
        await bench.open_files(files)
        while (await bench.status())["indexing"]:
            await asyncio.sleep(0.3)
        per_file: list[list[types.CodeLens]] = []
        for f in files:
            lp = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=f.as_uri()))
            per_file.append(list(await bench.client.text_document_code_lens_async(lp) or []))
        picked: list[types.CodeLens] = []
        while len(picked) < args.n and any(per_file):
            for lenses in per_file:
                if lenses and len(picked) < args.n:
                    picked.append(lenses.pop(0))
        first_ms: list[float] = []
        rows = []
        for lens in picked:
            t0 = time.perf_counter()
            done = await bench.client.code_lens_resolve_async(lens)
            first_ms.append((time.perf_counter() - t0) * 1000)
            first = done.command.title if done.command else ""
            settled = await settle(bench, lens, first)
            data = lens.data or {}
            name, container = data["name"], data.get("container") or ""
            rel = Path(data["uri"].removeprefix("file://")).relative_to(root).as_posix()
            group = [
                d for d in engine.symbols_in_file(project, rel)
                if d.name == name and d.container == container
            ]  # fmt: skip
            subject = Subject(name, (container,) if container else ())
            lens_references(engine, project, root, usages, subject, group)
            usages.wait_idle(SETTLE_S)
            refs = lens_references(engine, project, root, usages, subject, group)
            ours = {(m.path, m.line, m.column) for m in refs.usages}
            by_name = {(m.path, m.line, m.column) for m in refs.by_name}
            def_lines = {(d.path, d.name_line) for d in engine.symbols_named(name, project)}
            gold = jedi_references(root, project_jedi, group, def_lines)
            rows.append((f"{container}.{name}" if container else name, first, settled,
                         ours, by_name, gold))  # fmt: skip
        await bench.stop()
        resolver.close()
        engine.close()
    return report(rows, first_ms)


async def settle(bench: Bench, lens: types.CodeLens, title: str) -> str:
    """Resolve again until the title stops changing (background resolution done)."""
    deadline = time.perf_counter() + SETTLE_S
    same = 0
    while same < 3 and time.perf_counter() < deadline:
        await asyncio.sleep(0.5)
        done = await bench.client.code_lens_resolve_async(lens)
        now = done.command.title if done.command else ""
        same = same + 1 if now == title else 0
        title = now
    return title


def report(rows: list[Any], first_ms: list[float]) -> int:
    print(f"{'symbol':<30} {'first answer':>16} {'settled':>16} {'jedi':>5}  verdict")
    exact = 0
    notes: list[str] = []
    for label, first, settled, ours, by_name, gold in rows:
        _, u1, b1 = numbers(first)
        _, u2, b2 = numbers(settled)
        if (u2, b2) != (len(ours), len(by_name)):
            counted = f"{len(ours)} usages, {len(by_name)} by name"
            notes.append(f"{label}: the server's settled title {settled!r}; here: {counted}")
        ok = ours == gold and not by_name
        exact += ok
        missing, extra = gold - ours, ours - gold
        verdict = "=" if ok else (
            f"by name {len(by_name & gold)}/{len(by_name)} are jedi's; "
            f"missing {len(missing - by_name)}, extra {len(extra)}"
        )  # fmt: skip
        print(f"{label:<30} {f'{u1} +{b1} by name':>16} {f'{u2} +{b2} by name':>16}"
              f" {len(gold):>5}  {verdict}")  # fmt: skip
        for loc in sorted(missing - by_name)[:3]:
            notes.append(f"{label}: jedi has {loc[0]}:{loc[1]}:{loc[2]}, the lens does not")
        for loc in sorted(extra)[:3]:
            notes.append(f"{label}: the lens has {loc[0]}:{loc[1]}:{loc[2]}, jedi does not")
        for loc in sorted(by_name)[:2]:
            said = "jedi: a reference" if loc in gold else "jedi: not one"
            notes.append(f"{label}: by name {loc[0]}:{loc[1]}:{loc[2]} ({said})")
    print(f"\n{exact}/{len(rows)} lenses list exactly jedi's references (settled, none by name)")
    tokens = sum(len(r[3]) + len(r[4]) for r in rows)
    agree = sum(len(r[3] & r[5]) for r in rows)
    gold_n = sum(len(r[5]) for r in rows)
    print(f"usages: {agree} of jedi's {gold_n} references listed as usages; "
          f"{sum(len(r[4]) for r in rows)} by name; {tokens} tokens in all")  # fmt: skip
    print(f"first codeLens/resolve: p50 {pct(first_ms, 0.5):.0f} ms, "
          f"p95 {pct(first_ms, 0.95):.0f} ms over {len(first_ms)} lenses")  # fmt: skip
    if notes:
        print("\n" + "\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
