"""Code-lens counts against an independent count, on a real repository (flask 3.1.0).

Starts the real server over stdio on flask's sdist (lexical index), asks for the lenses of a
few source files and resolves the first 20, then counts the same things independently:

- usages: lines of the workspace's Python files where the name is a NAME token
  (`tokenize`, so never in a comment, docstring or string), minus the lines that define a
  symbol of that name (the symbol table's definition lines);
- doc references: lines of the docs (.rst/.md/.txt) that mention the symbol: the name in
  backticks, qualified by its container (`Flask.run`), or bare when it cannot be an English
  word (snake_case, inner capitals).

Prints both per symbol and how many agree exactly.

    python scripts/check_lens_counts.py [--files app.py,blueprints.py,helpers.py] [--n 20]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import re
import sys
import tempfile
import tokenize
from pathlib import Path

from lsprotocol import types

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lsp import Bench
from benchdata import pypi_source
from code_compass.engine import Engine
from code_compass.settings import EngineSettings

TITLE = re.compile(r"(\d+) doc references? · (\d+) usages?")
DOC_SUFFIXES = (".rst", ".md", ".txt")


def token_lines(root: Path, name: str) -> set[tuple[str, int]]:
    out: set[tuple[str, int]] = set()
    for f in root.rglob("*.py"):
        text = f.read_text(encoding="utf-8", errors="replace")
        if name not in text:
            continue
        rel = f.relative_to(root).as_posix()
        try:
            for tok in tokenize.generate_tokens(io.StringIO(text).readline):
                if tok.type == tokenize.NAME and tok.string == name:
                    out.add((rel, tok.start[0]))
        except (tokenize.TokenError, SyntaxError):
            continue
    return out


def doc_lines(root: Path, name: str, container: str) -> int:
    code_like = "_" in name.strip("_") or any(c.isupper() for c in name[1:])
    ident = rf"(?<![\w$]){re.escape(name)}(?![\w$])"
    n = 0
    for f in root.rglob("*"):
        if f.suffix not in DOC_SUFFIXES or not f.is_file():
            continue
        for line in f.read_text(encoding="utf-8", errors="replace").split("\n"):
            ticks = any(re.search(ident, m) for m in re.findall(r"`+([^`]+)`+", line))
            qualified = bool(container) and re.search(rf"{re.escape(container)}\.{ident}", line)
            if ticks or qualified or (code_like and re.search(ident, line)):
                n += 1
    return n


async def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--files", default="app.py,blueprints.py,helpers.py,ctx.py,sessions.py")
    ap.add_argument("--n", type=int, default=20)
    args = ap.parse_args()
    root = pypi_source("flask", "3.1.0", "src/flask/__init__.py").resolve()
    files = [root / "src" / "flask" / f for f in args.files.split(",")]
    with tempfile.TemporaryDirectory(prefix="lens-counts-") as tmp:
        engine = Engine.open(Path(tmp) / "table", EngineSettings(embeddings=False))
        project = engine.add_project(root)
        engine.index(project, embed=False)
        bench = Bench(root, Path(tmp) / "storage", False, "flask")
        await bench.start()
        await bench.open_files(files)
        while (await bench.status())["indexing"]:
            await asyncio.sleep(0.3)
        rows = []
        for f in files:
            lp = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=f.as_uri()))
            for lens in await bench.client.text_document_code_lens_async(lp) or []:
                if len(rows) >= args.n:
                    break
                done = await bench.client.code_lens_resolve_async(lens)
                m = TITLE.search(done.command.title if done.command else "")
                data = lens.data or {}
                if m is None:
                    continue
                name, container = data["name"], data.get("container") or ""
                defs = {(d.path, d.name_line) for d in engine.symbols_named(name, project)}
                usages = len(token_lines(root, name) - defs)
                docs = doc_lines(root, name, container.rsplit(".", 1)[-1])
                capped = "+" in done.command.title if done.command else False
                rows.append(
                    (name, container, int(m.group(1)), int(m.group(2)), docs, usages, capped)
                )
        await bench.stop()
        engine.close()
    print(f"{'symbol':<34} {'lens docs':>9} {'ref':>5} {'lens usages':>11} {'ref':>5}")
    exact = capped_n = 0
    for name, container, ld, lu, rd, ru, capped in rows:
        ok = ld == rd and lu == ru
        exact += ok
        capped_n += capped and not ok
        label = f"{container}.{name}" if container else name
        verdict = "=" if ok else ("capped (LENS_SCAN_CHUNKS: a lower bound)" if capped else "DIFF")
        print(f"{label:<34} {ld:>9} {rd:>5} {lu:>11} {ru:>5}  {verdict}")
    print(f"{exact}/{len(rows)} lenses equal to the independent count (docs and usages); "
          f"{capped_n} differ because the scan was capped (the title says so)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
