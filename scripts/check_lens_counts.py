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
import json
import os
import re
import subprocess
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
from code_compass_server.engine import Engine
from code_compass_server.index.languages import language_for
from code_compass_server.records import SymbolDef
from code_compass_server.settings import EngineSettings
from code_compass_server.symbols.code_names import code_columns_in
from code_compass_server.symbols.lens_references import lens_references
from code_compass_server.symbols.lens_usages import UsageResolver
from code_compass_server.symbols.mentions import Subject
from code_compass_server.symbols.resolve import SymbolResolver
from eval_symbols import rxjs_source

TITLE = re.compile(r"(\d+) doc references? · (\d+) usages?(?: · (\d+) by name)?")
REPO = Path(__file__).resolve().parents[1]
# typescript comes from the client's packages (`npm ci` in client-vscode), or from NODE_PATH.
NODE_MODULES = Path(os.environ.get("NODE_PATH") or REPO / "client-vscode" / "node_modules")
TS_FILES = [
    "Observable.ts", "Subscriber.ts", "Subscription.ts", "Subject.ts", "util/pipe.ts",
    "operators/map.ts", "observable/from.ts", "util/isFunction.ts", "scheduler/AsyncAction.ts",
]  # fmt: skip
FILES = "app.py,blueprints.py,helpers.py,ctx.py,sessions.py,config.py,templating.py,wrappers.py"
SETTLE_S = 90.0

Loc = tuple[str, int, int]  # path, 1-based line, 0-based column


def numbers(title: str) -> tuple[int, int, int]:
    m = TITLE.search(title)
    if m is None:
        raise SystemExit(f"unexpected lens title: {title!r}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def in_code(root: Path, loc: Loc, name: str) -> bool:
    """Is the reference an identifier token in code? The TypeScript service also counts
    `{@link Name}` in JSDoc comments, which are never usages (comments are prose)."""
    path = root / loc[0]
    language = language_for(loc[0]) or "text"
    columns = code_columns_in(path.read_text(encoding="utf-8"), language, name)
    return loc[2] in columns.get(loc[1], [])


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


def ts_references(
    root: Path, groups: list[list[SymbolDef]], def_lines: list[set[tuple[str, int]]]
) -> list[set[Loc]]:
    """The TypeScript language service's findReferences for each group's definitions."""
    rows = [
        {"path": d.path, "line": d.name_line, "col": d.name_col, "group": i}
        for i, group in enumerate(groups)
        for d in group
    ]
    done = subprocess.run(
        ["node", str(REPO / "eval" / "symbols" / "ts_references.js"), str(root)],
        input="\n".join(json.dumps(r) for r in rows), capture_output=True, text=True, check=True,
        env={**os.environ, "NODE_PATH": str(NODE_MODULES)},
    )  # fmt: skip
    out: list[set[Loc]] = [set() for _ in groups]
    for line in done.stdout.splitlines():
        row = json.loads(line)
        i = row["group"]
        own = {(d.path, d.name_line, d.name_col) for d in groups[i]}
        for ref in row["refs"]:
            rel, ln, col = ref.rsplit(":", 2)
            loc = (rel, int(ln), int(col))
            if loc not in own and (rel, loc[1]) not in def_lines[i]:
                out[i].add(loc)
    return out


async def check(root: Path, files: list[Path], n: int, language: str) -> int:
    """Resolve `n` lenses of `files` through the server and in this process, then compare
    with the language's reference resolver."""
    project_jedi = jedi.Project(root, added_sys_path=[str(root / "src")])
    with tempfile.TemporaryDirectory(prefix="lens-counts-") as tmp:
        engine = Engine.open(Path(tmp) / "table", EngineSettings(embeddings=False))
        project = engine.add_project(root)
        engine.index(project, embed=False)
        resolver = SymbolResolver()
        usages = UsageResolver(resolver)
        bench = Bench(root, Path(tmp) / "storage", False, root.name)
        await bench.start()
        await bench.open_files(files)
        while (await bench.status())["indexing"]:
            await asyncio.sleep(0.3)
        per_file: list[list[types.CodeLens]] = []
        for f in files:
            lp = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=f.as_uri()))
            per_file.append(list(await bench.client.text_document_code_lens_async(lp) or []))
        picked: list[types.CodeLens] = []
        while len(picked) < n and any(per_file):
            for lenses in per_file:
                if lenses and len(picked) < n:
                    picked.append(lenses.pop(0))
        first_ms: list[float] = []
        rows = []
        groups: list[list[SymbolDef]] = []
        def_lines: list[set[tuple[str, int]]] = []
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
            groups.append(group)
            def_lines.append({(d.path, d.name_line) for d in engine.symbols_named(name, project)})
            label = f"{container}.{name}" if container else name
            rows.append([label, first, settled, ours, by_name, set()])
        await bench.stop()
        resolver.close()
        engine.close()
    if language == "python":
        golds = [
            jedi_references(root, project_jedi, g, d)
            for g, d in zip(groups, def_lines, strict=True)
        ]
        reference = "jedi's get_references"
    else:
        golds = ts_references(root, groups, def_lines)
        reference = "the TypeScript language service's findReferences"
    for row, gold in zip(rows, golds, strict=True):
        row[5] = {loc for loc in gold if in_code(root, loc, row[0].rsplit(".", 1)[-1])}
        row.append(gold - row[5])
    print(f"\n{root.name}: lens usages against {reference}")
    return report(rows, first_ms)


async def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--files", default=FILES)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--ts", type=int, default=10, help="rxjs lenses (0: Python only)")
    args = ap.parse_args()
    # A reference count must be complete: jedi stops after 30 parsed files by default.
    jedi.inference.references._PARSED_FILE_LIMIT = 100_000  # type: ignore[attr-defined]
    root = flask_source().resolve()
    files = [root / "src" / "flask" / f for f in args.files.split(",")]
    await check(root, files, args.n, "python")
    if args.ts:
        rx = rxjs_source().resolve()
        await check(rx, [rx / "src" / "internal" / f for f in TS_FILES], args.ts, "typescript")
    return 0


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
    print(f"{'symbol':<30} {'first answer':>16} {'settled':>16} {'ref':>5}  verdict")
    exact = 0
    notes: list[str] = []
    in_comments = 0
    for label, first, settled, ours, by_name, gold, *rest in rows:
        in_comments += len(rest[0]) if rest else 0
        _, u1, b1 = numbers(first)
        _, u2, b2 = numbers(settled)
        if (u2, b2) != (len(ours), len(by_name)):
            counted = f"{len(ours)} usages, {len(by_name)} by name"
            notes.append(f"{label}: the server's settled title {settled!r}; here: {counted}")
        ok = ours == gold and not by_name
        exact += ok
        missing, extra = gold - ours, ours - gold
        if "+" in settled:
            missing_note = "; the scan was capped (LENS_SCAN_CHUNKS, the title says '+')"
        else:
            missing_note = ""
        verdict = "=" if ok else (
            f"by name {len(by_name & gold)}/{len(by_name)} in the reference; "
            f"missing {len(missing - by_name)}, extra {len(extra)}{missing_note}"
        )  # fmt: skip
        print(f"{label:<30} {f'{u1} +{b1} by name':>16} {f'{u2} +{b2} by name':>16}"
              f" {len(gold):>5}  {verdict}")  # fmt: skip
        for loc in sorted(missing - by_name)[:3]:
            notes.append(f"{label}: the reference has {loc[0]}:{loc[1]}:{loc[2]}, the lens not")
        for loc in sorted(extra)[:3]:
            notes.append(f"{label}: the lens has {loc[0]}:{loc[1]}:{loc[2]}, the reference not")
        for loc in sorted(by_name)[:2]:
            said = "the reference has it" if loc in gold else "not in the reference"
            notes.append(f"{label}: by name {loc[0]}:{loc[1]}:{loc[2]} ({said})")
    print(f"\n{exact}/{len(rows)} lenses list exactly the reference's (settled, none by name)")
    if in_comments:
        print(f"{in_comments} references in comments (JSDoc {{@link}}) left out: never usages")
    tokens = sum(len(r[3]) + len(r[4]) for r in rows)
    agree = sum(len(r[3] & r[5]) for r in rows)
    gold_n = sum(len(r[5]) for r in rows)
    print(f"usages: {agree} of the reference's {gold_n} listed as usages; "
          f"{sum(len(r[4]) for r in rows)} by name; {tokens} tokens in all")  # fmt: skip
    print(f"first codeLens/resolve: p50 {pct(first_ms, 0.5):.0f} ms, "
          f"p95 {pct(first_ms, 0.95):.0f} ms over {len(first_ms)} lenses")  # fmt: skip
    if notes:
        print("\n" + "\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
