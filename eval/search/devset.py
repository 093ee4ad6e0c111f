"""The search dev set, CodeSearchNet-style: query = a doc's first sentence, target = its definition.

For each corpus of corpora.json the builder copies the included files into
bench-data/eval-search/<corpus>/tree with every documentation string or doc comment blanked
(spaces and empty lines, so line numbers stay), and writes queries.jsonl: a fixed-seed sample of
documented definitions from implementation files (tests stay in the tree as distractors), each
with a dev/test split. Go docs start with the symbol's own name by convention; that word is
dropped from the query, as a person asking would not know it.
"""

from __future__ import annotations

import ast
import json
import random
import re
import shutil
import subprocess
import tarfile
from dataclasses import asdict, dataclass
from pathlib import Path

from code_compass_server.index.categories import category_for
from code_compass_server.index.chunk.code import parse_code
from code_compass_server.index.languages import language_for
from code_compass_server.index.textio import split_lines

SPEC = Path(__file__).with_name("corpora.json")
ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench-data"
OUT = BENCH / "eval-search"
BUILD_VERSION = "1"  # bump when the builder changes: cached sets are rebuilt

_EXT = {"python": (".py",), "typescript": (".ts",), "go": (".go",)}
_SKIP_DIRS = {"testdata", "__pycache__", "locale", "migrations", "vendor"}
_MIN_WORDS, _MAX_WORDS = 4, 30
_BAD_START = re.compile(
    r"^(deprecated|todo|see |internal|copyright|note:|xxx|used internally)", re.I
)


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    corpus: str
    language: str
    query: str
    path: str  # workspace-relative in the corpus tree
    symbol: str  # qualified name as the chunker names it
    name_line: int  # the line holding the definition's name
    start_line: int
    end_line: int
    split: str  # "dev" | "test"


def load_spec() -> dict[str, object]:
    data: dict[str, object] = json.loads(SPEC.read_text())
    return data


# --- query text -----------------------------------------------------------------------------


def first_sentence(doc: str, name: str) -> str:
    para = re.split(r"\n\s*\n", doc.strip())[0]
    para = re.sub(r"\{@link(?:code|plain)?\s+([^}|\s]+)[^}]*\}", r"\1", para)
    para = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", para)  # reST roles
    para = para.replace("``", "").replace("`", "")
    para = " ".join(para.split())
    m = re.search(r"(?<=[\w)\]'\"])[.!?](\s|$)", para)
    sent = para[: m.start()] if m else para
    words = sent.split()
    if words and words[0].strip(",:") == name:  # Go: "Contains reports whether ..."
        words = words[1:]
    return " ".join(words).strip(" :,;-")


def acceptable(query: str) -> bool:
    n = len(query.split())
    return (
        _MIN_WORDS <= n <= _MAX_WORDS
        and not _BAD_START.match(query)
        and "http" not in query
        and not query.startswith("@")
    )


# --- blanking --------------------------------------------------------------------------------


def _blank_span(lines: list[str], l1: int, c1: int, l2: int, c2: int, keep: str) -> None:
    """Blank [l1:c1, l2:c2) (0-based lines, character columns); `keep` replaces its start."""
    if l1 == l2:
        seg = lines[l1][c1:c2]
        lines[l1] = lines[l1][:c1] + keep + " " * max(0, len(seg) - len(keep)) + lines[l1][c2:]
        return
    lines[l1] = lines[l1][:c1] + keep
    for i in range(l1 + 1, l2):
        lines[i] = ""
    lines[l2] = " " * c2 + lines[l2][c2:]


def _char_col(line: str, byte_col: int) -> int:
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))


def blank_python(text: str) -> tuple[str, list[tuple[str, str, int]]]:
    """Docstrings blanked to `""`; returns (text, [(qualified, doc, def line)])."""
    tree = ast.parse(text)
    lines = text.split("\n")
    docs: list[tuple[str, str, int]] = []

    def visit(node: ast.AST, prefix: str, depth: int) -> None:
        body = getattr(node, "body", None)
        if isinstance(body, list) and body:
            first = body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
                and first.end_lineno is not None
                and first.end_col_offset is not None
            ):
                l1, l2 = first.lineno - 1, first.end_lineno - 1
                c1 = _char_col(lines[l1], first.col_offset)
                c2 = _char_col(lines[l2], first.end_col_offset)
                _blank_span(lines, l1, c1, l2, c2, '""')
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    docs.append((prefix, first.value.value, node.lineno))
        if depth >= 2:
            return
        for child in getattr(node, "body", []):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}.{child.name}" if prefix else child.name
                # Functions nested in functions are not chunked as symbols: don't target them.
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                visit(child, name, depth + 1)

    visit(tree, "", 0)
    return "\n".join(lines), docs


_COMMENT_LINE = re.compile(r"^\s*(//|/\*|\*|\*/)")


def blank_comment_docs(
    rel: str, text: str, language: str
) -> tuple[str, list[tuple[str, str, int]]]:
    """Doc comments (the comment lines a definition starts with) blanked to spaces."""
    lines = split_lines(text)
    parsed = parse_code(rel, text, lines, language)
    defs = {(s.qualified_name, s.start_line): s for s in parsed.symbols}
    out = text.split("\n")
    docs: list[tuple[str, str, int]] = []
    seen: set[tuple[str, int]] = set()
    for ch in parsed.chunks:
        if not ch.doc or ch.kind in ("module", "window"):
            continue
        sym = defs.get((ch.symbol, ch.start_line))
        if sym is None or (ch.symbol, sym.name_line) in seen:
            continue
        seen.add((ch.symbol, sym.name_line))
        for i in range(sym.start_line - 1, sym.name_line - 1):
            if _COMMENT_LINE.match(out[i]):
                out[i] = " " * len(out[i])
        docs.append((ch.symbol, ch.doc, sym.name_line))
    return "\n".join(out), docs


# --- sources ---------------------------------------------------------------------------------


def ensure_source(name: str, cfg: dict[str, object]) -> Path:
    root = Path(str(cfg["root"]))
    if not root.is_absolute():
        root = BENCH / root
    if root.exists():
        return root
    download = str(cfg.get("download", ""))
    dl = BENCH / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    if name == "django":
        import sys

        sys.path.insert(0, str(ROOT / "scripts"))
        from benchdata import django_source

        django_source()
    elif download.startswith("npm:"):
        pkg = download[4:]
        subprocess.run(["npm", "pack", pkg, "--silent"], cwd=dl, check=True)
        tgz = sorted(dl.glob(pkg.split("@")[0] + "-*.tgz"))[-1]
        target = dl / pkg.split("@")[0]
        target.mkdir(exist_ok=True)
        with tarfile.open(tgz) as tar:
            tar.extractall(target, filter="data")
    elif download.startswith("debian:"):
        pkg = download[7:]
        subprocess.run(["apt-get", "download", pkg], cwd=dl, check=True)
        deb = sorted(dl.glob(f"{pkg}_*.deb"))[-1]
        subprocess.run(["dpkg", "-x", str(deb), str(dl / "go")], check=True)
    if not root.exists():
        raise SystemExit(f"corpus {name}: {root} is missing after download")
    return root


def _files(root: Path, includes: list[str], language: str) -> list[Path]:
    out: list[Path] = []
    for inc in includes:
        p = root / inc
        cands = [p] if p.is_file() else sorted(p.rglob("*"))
        for f in cands:
            if not f.is_file() or not f.name.endswith(_EXT[language]) or f.name.endswith(".d.ts"):
                continue
            if _SKIP_DIRS & set(f.relative_to(root).parts):
                continue
            out.append(f)
    return out


# --- building --------------------------------------------------------------------------------


def build_corpus(
    name: str, cfg: dict[str, object], seed: int, max_q: int, dev_share: float
) -> Path:
    """Blanked tree + queries.jsonl under bench-data/eval-search/<name>; cached by BUILD_VERSION."""
    out = OUT / name
    stamp = out / "BUILD"
    want = f"{BUILD_VERSION} {json.dumps(cfg, sort_keys=True)} {seed} {max_q} {dev_share}"
    if stamp.exists() and stamp.read_text() == want:
        return out
    shutil.rmtree(out, ignore_errors=True)
    tree = out / "tree"
    language = str(cfg["language"])
    src = ensure_source(name, cfg)
    includes = [str(x) for x in cfg["include"]]  # type: ignore[attr-defined]
    pool: list[dict[str, object]] = []
    for f in _files(src, includes, language):
        rel = f.relative_to(src).as_posix()
        try:
            text = f.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        try:
            if language == "python":
                blanked, docs = blank_python(text)
            else:
                blanked, docs = blank_comment_docs(rel, text, language_for(rel) or language)
        except (SyntaxError, ValueError):
            continue
        dest = tree / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(blanked, encoding="utf-8")
        if category_for(rel, language) != "code":
            continue
        for qualified, doc, line in docs:
            q = first_sentence(doc, qualified.rsplit(".", 1)[-1])
            if acceptable(q):
                pool.append({"query": q, "path": rel, "symbol": qualified, "name_line": line})
    # A query text that documents several definitions has no single answer: drop them all.
    counts: dict[str, int] = {}
    for p in pool:
        counts[str(p["query"]).lower()] = counts.get(str(p["query"]).lower(), 0) + 1
    pool = [p for p in pool if counts[str(p["query"]).lower()] == 1]
    rng = random.Random(f"{seed}-{name}")
    rng.shuffle(pool)
    chosen = pool[:max_q]
    n_dev = round(len(chosen) * dev_share)
    queries = [
        Query(
            id=f"{name}-{i:04d}",
            corpus=name,
            language=language,
            query=str(p["query"]),
            path=str(p["path"]),
            symbol=str(p["symbol"]),
            name_line=int(p["name_line"]),  # type: ignore[call-overload]
            start_line=int(p["name_line"]),  # type: ignore[call-overload]
            end_line=int(p["name_line"]),  # type: ignore[call-overload]
            split="dev" if i < n_dev else "test",
        )
        for i, p in enumerate(chosen)
    ]
    with (out / "queries.jsonl").open("w") as fh:
        for query in queries:
            fh.write(json.dumps(asdict(query)) + "\n")
    stamp.write_text(want)
    return out


def build_all(names: list[str] | None = None) -> dict[str, Path]:
    spec = load_spec()
    corpora: dict[str, dict[str, object]] = spec["corpora"]  # type: ignore[assignment]
    seed = int(spec["seed"])  # type: ignore[call-overload]
    max_q = int(spec["max_queries"])  # type: ignore[call-overload]
    dev_share = float(spec["dev_share"])  # type: ignore[arg-type]
    return {
        n: build_corpus(n, cfg, seed, max_q, dev_share)
        for n, cfg in corpora.items()
        if names is None or n in names
    }


def load_queries(corpus_dir: Path) -> list[Query]:
    with (corpus_dir / "queries.jsonl").open() as fh:
        return [Query(**json.loads(line)) for line in fh if line.strip()]


if __name__ == "__main__":
    for n, d in build_all().items():
        qs = load_queries(d)
        n_files = sum(1 for _ in (d / "tree").rglob("*") if _.is_file())
        print(f"{n}: {n_files} files, {len(qs)} queries -> {d}")
