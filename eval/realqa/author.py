"""Build questions.jsonl from the hand-written question sources in eval/realqa/src/<corpus>.txt.

    .venv/bin/python eval/realqa/author.py show flask [ID...]   # print each gold span to read it
    .venv/bin/python eval/realqa/author.py build                # write questions.jsonl

A source file is blocks separated by blank lines (`#` lines are comments):

    id: flask-a01
    style: navigation            # navigation | how | why | what-happens | conceptual
    en: where is AppContextProxy defined?
    pt: onde está definido o AppContextProxy?     # optional: the Portuguese twin
    gold: src/flask/globals.py::AppContextProxy   # 1-3 lines; see below
    absent: minif                # unanswerable instead: regexes that must match nothing
    note: free text added to the unanswerable note

Gold references, resolved against the unpacked corpus (scripts/fetch_corpora.py):
`path::Qual.name` (Python: a def/class with its decorators, or a module-level assignment, also
inside `if TYPE_CHECKING:`/`try` blocks; TypeScript: a top-level declaration with its leading doc
comment, overloads included, as for a Python name defined more than once; Go: `Func`, `Type`, `Type.Method`, `Type.Field`, a const/var name,
each with its leading `//` comment), `path#Heading text` (a reST or Markdown section, up to
the next heading of the same or a higher level), `path:12-30` (explicit lines). An `absent`
regex is searched case-insensitively in every text file of the corpus; a match stops the build.
The split is a fixed-seed stratified half (corpus x kind), twins always together; the six first
corpora share one generator, each later corpus has its own (SHARED_SPLIT).
"""

from __future__ import annotations

import ast
import json
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import tree_sitter
import tree_sitter_go

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from fetch_corpora import corpus_dir, load_corpora  # noqa: E402

SRC = HERE / "src"
OUT = HERE / "questions.jsonl"
SEED = 20260514
# The first six corpora drew their split from one generator in stratum order; a corpus added
# later draws from a generator of its own, so adding one never moves an earlier question.
SHARED_SPLIT = ("attrs", "click", "django", "flask", "httpx", "rxjs")
STYLES = ("navigation", "how", "why", "what-happens", "conceptual")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+.:_])\1{2,}\s*$")
_RST_TARGET = re.compile(r"^\.\. (_[^:]+:|[a-z-]+:: \S+)\s*$")
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


@dataclass
class Block:
    id: str
    corpus: str
    style: str = ""
    en: str = ""
    pt: str = ""
    gold: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    note: str = ""


def parse_source(path: Path) -> list[Block]:
    corpus = path.stem
    blocks: list[Block] = []
    cur: Block | None = None
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if line.startswith("#"):
            continue
        if not line:
            cur = None
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise SystemExit(f"{path}:{n}: expected 'key: value'")
        key, value = key.strip(), value.strip()
        if key == "id":
            cur = Block(value, corpus)
            blocks.append(cur)
            continue
        if cur is None:
            raise SystemExit(f"{path}:{n}: a block starts with 'id:'")
        if key in ("gold", "absent"):
            getattr(cur, key).append(value)
        elif key in ("style", "en", "pt", "note"):
            setattr(cur, key, value)
        else:
            raise SystemExit(f"{path}:{n}: unknown key {key!r}")
    return blocks


# --- gold resolution -------------------------------------------------------------------------


def _python_spans(text: str) -> dict[str, tuple[int, int]]:
    """Qualified name -> (first line, last line) of every def/class and module-level name."""
    tree = ast.parse(text)
    spans: dict[str, tuple[int, int]] = {}

    def start(node: ast.AST) -> int:
        decos = getattr(node, "decorator_list", [])
        return min([d.lineno for d in decos] + [node.lineno])  # type: ignore[attr-defined]

    def visit(body: list[ast.stmt], prefix: str, module_level: bool) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                q = f"{prefix}{node.name}"
                span = (start(node), node.end_lineno or node.lineno)
                # `@overload` stubs, then the implementation (or a property and its setter):
                # the name's span runs from the first definition to the last, as in TypeScript.
                first = spans.get(q, span)
                spans[q] = (min(first[0], span[0]), max(first[1], span[1]))
                if isinstance(node, ast.ClassDef):
                    visit(node.body, q + ".", False)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        spans.setdefault(
                            f"{prefix}{t.id}", (node.lineno, node.end_lineno or node.lineno)
                        )
            elif isinstance(node, ast.If | ast.Try) and (module_level or prefix):
                visit(node.body, prefix, module_level)
                visit(getattr(node, "orelse", []), prefix, module_level)
                for h in getattr(node, "handlers", []):
                    visit(h.body, prefix, module_level)

    visit(tree.body, "", True)
    return spans


_TS_DECL = (
    r"^\s*(export\s+)?(declare\s+)?(default\s+)?(abstract\s+)?(async\s+)?"
    r"(function\*?|class|interface|type|const|let|var|enum)\s+{}\b"
)


def _ts_span(lines: list[str], name: str) -> tuple[int, int]:
    """1-based (first, last) line of a TypeScript declaration with its leading doc comment.

    Overload signatures (`function f(...): T;` lines) are followed to the implementation; the
    end is where brackets balance on a line closing the declaration (`}` or `;`).
    """
    rx = re.compile(_TS_DECL.format(re.escape(name)))
    starts = [i for i, line in enumerate(lines) if rx.match(line)]
    if not starts:
        raise SystemExit(f"{name}: no TypeScript declaration")
    i = starts[0]
    first = i
    if first > 0 and lines[first - 1].strip().endswith("*/"):
        k = first - 1
        while k > 0 and not lines[k].lstrip().startswith("/**"):
            k -= 1
        first = k
    depth = 0
    j = i
    while j < len(lines):
        code = re.sub(r"//.*$", "", re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "''", lines[j]))
        depth += sum(code.count(c) for c in "{([") - sum(code.count(c) for c in "})]")
        stripped = code.rstrip()
        if depth <= 0 and j >= i and (stripped.endswith(("}", ";")) or stripped.endswith("})")):
            later = [k for k in starts if k > j]
            # an overload signature: go on to the next declaration of the same name
            if (
                stripped.endswith(";")
                and later
                and all(
                    not lines[m].strip() or lines[m].lstrip().startswith(("/*", "*", "//"))
                    for m in range(j + 1, later[0])
                )
                and "function" in lines[i]
            ):
                i = j = later[0]
                depth = 0
                continue
            return first + 1, j + 1
        j += 1
    return first + 1, len(lines)


def _go_spans(source: bytes) -> dict[str, tuple[int, int]]:
    """Qualified name -> 1-based (first, last) line of every top-level Go declaration.

    `Func`, `Type`, `Type.Method` (pointer or value receiver), `Type.Field` (struct fields) and
    each const/var name; a declaration starts at its leading comment lines. A name declared
    alone spans its whole `type`/`const`/`var` statement, one inside a `( ... )` group its spec.
    """
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_go.language()))
    root = parser.parse(source).root_node
    spans: dict[str, tuple[int, int]] = {}

    def text(node: tree_sitter.Node | None) -> str:
        return "" if node is None or node.text is None else node.text.decode()

    def first_row(node: tree_sitter.Node) -> int:
        """The node's first row, or that of the comment lines just above it (a comment ending
        the line of an earlier declaration belongs to that one)."""
        row = node.start_point.row
        prev = node.prev_sibling
        while prev is not None and prev.type == "comment" and prev.end_point.row == row - 1:
            before = prev.prev_sibling
            if before is not None and before.end_point.row == prev.start_point.row:
                break
            row = prev.start_point.row
            prev = before
        return row

    def add(name: str, start: int, node: tree_sitter.Node) -> None:
        if name:
            spans.setdefault(name, (start + 1, node.end_point.row + 1))

    def receiver_type(node: tree_sitter.Node) -> str:
        recv = node.child_by_field_name("receiver")
        for param in recv.named_children if recv else []:
            t = param.child_by_field_name("type")
            while t is not None and t.type in ("pointer_type", "generic_type"):
                inner = t.child_by_field_name("type")
                t = inner if inner is not None else next(iter(t.named_children), None)
            return text(t)
        return ""

    for node in root.named_children:
        if node.type == "function_declaration":
            add(text(node.child_by_field_name("name")), first_row(node), node)
        elif node.type == "method_declaration":
            name = text(node.child_by_field_name("name"))
            add(f"{receiver_type(node)}.{name}", first_row(node), node)
        elif node.type in ("type_declaration", "const_declaration", "var_declaration"):
            specs = [c for c in node.named_children if c.type.endswith(("_spec", "_alias"))]
            for lst in (c for c in node.named_children if c.type.endswith("_spec_list")):
                specs.extend(c for c in lst.named_children if c.type.endswith("_spec"))
            grouped = any(c.type == "(" for c in node.children) or any(
                c.type.endswith("_spec_list") for c in node.named_children
            )
            for spec in specs:
                whole = spec if grouped else node
                names = spec.children_by_field_name("name")
                for ident in names:
                    add(text(ident), first_row(whole), whole)
                body = spec.child_by_field_name("type")
                if spec.type == "type_spec" and body is not None and body.type == "struct_type":
                    fields = next((c for c in body.named_children if c.type.endswith("list")), None)
                    for fd in fields.named_children if fields else []:
                        for ident in fd.children_by_field_name("name"):
                            add(f"{text(names[0])}.{text(ident)}", first_row(fd), fd)
    return spans


def _heading_levels(lines: list[str], markdown: bool) -> list[tuple[int, str, str]]:
    """(0-based line, level key, title) of every Markdown or reST heading."""
    out: list[tuple[int, str, str]] = []
    in_fence = False
    for i, line in enumerate(lines):
        if markdown:
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
            m = _MD_HEADING.match(line)
            if m and not in_fence:
                out.append((i, "#" * len(m.group(1)), m.group(2)))
            continue
        if (
            i + 1 < len(lines)
            and line.strip()
            and _RST_UNDERLINE.match(lines[i + 1])
            and len(lines[i + 1].rstrip()) >= len(line.rstrip()) - 1
        ):
            over = i > 0 and _RST_UNDERLINE.match(lines[i - 1]) is not None
            out.append((i - 1 if over else i, ("o" if over else "") + lines[i + 1][0], line))
    return out


def resolve(root: Path, ref: str) -> dict[str, object]:
    if "::" in ref:
        rel, qual = ref.split("::", 1)
        text = (root / rel).read_text(encoding="utf-8")
        if rel.endswith((".ts", ".tsx", ".js", ".mjs")):
            a, b = _ts_span(text.splitlines(), qual)
        elif rel.endswith(".go"):
            go = _go_spans(text.encode())
            if qual not in go:
                raise SystemExit(f"{ref}: no such Go declaration")
            a, b = go[qual]
        else:
            spans = _python_spans(text)
            if qual not in spans:
                raise SystemExit(f"{ref}: no such definition")
            a, b = spans[qual]
    elif "#" in ref:
        rel, title = ref.split("#", 1)
        lines = (root / rel).read_text(encoding="utf-8").splitlines()
        heads = _heading_levels(lines, rel.endswith((".md", ".markdown")))
        idx = [k for k, (_, _, t) in enumerate(heads) if t.replace("`", "").strip() == title]
        if len(idx) != 1:
            raise SystemExit(f"{ref}: {len(idx)} headings with that title")
        k = idx[0]
        order: list[str] = []
        for _, lvl, _ in heads:  # reST levels: order of first appearance
            if lvl not in order:
                order.append(lvl)

        def rank(lvl: str) -> int:
            return len(lvl) if lvl.startswith("#") else order.index(lvl)

        a = heads[k][0] + 1
        b = len(lines)
        for line_no, lvl, _ in heads[k + 1 :]:
            if rank(lvl) <= rank(heads[k][1]):
                b = line_no
                break
        # A reST label or index directive just before the next heading belongs to it.
        while b > a and (not lines[b - 1].strip() or _RST_TARGET.match(lines[b - 1])):
            b -= 1
    else:
        m = re.fullmatch(r"(.+):(\d+)-(\d+)", ref)
        if not m:
            raise SystemExit(f"{ref}: not path::name, path#heading or path:a-b")
        rel, a, b = m.group(1), int(m.group(2)), int(m.group(3))
    n_lines = len((root / rel).read_text(encoding="utf-8").splitlines())
    if not (1 <= a <= b <= n_lines):
        raise SystemExit(f"{ref}: lines {a}-{b} outside 1-{n_lines}")
    return {"path": rel, "startLine": a, "endLine": b}


# --- absence ---------------------------------------------------------------------------------


def text_files(root: Path) -> list[Path]:
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.stat().st_size < 2_000_000:
            try:
                p.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            out.append(p)
    return out


def check_absent(root: Path, files: list[Path], patterns: list[str]) -> str:
    for pat in patterns:
        rx = re.compile(pat, re.I)
        for p in files:
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
                if rx.search(line):
                    rel = p.relative_to(root)
                    raise SystemExit(f"absent {pat!r} matches {rel}:{n}: {line.strip()[:120]}")
    greps = "; ".join(f"grep -riE '{p}'" for p in patterns)
    return f"{greps} over all {len(files)} text files of {root.name}: no match"


# --- commands --------------------------------------------------------------------------------


def load_blocks(only: str | None = None) -> list[Block]:
    blocks: list[Block] = []
    for src in sorted(SRC.glob("*.txt")):
        if only is None or src.stem == only:
            blocks.extend(parse_source(src))
    return blocks


def show(corpus: str, ids: list[str]) -> None:
    root = {c.name: corpus_dir(c) for c in load_corpora()}[corpus]
    for b in load_blocks(corpus):
        if ids and b.id not in ids:
            continue
        print(f"=== {b.id} [{b.style}] {b.en}\n    pt: {b.pt}")
        for ref in b.gold:
            g = resolve(root, ref)
            lines = (root / str(g["path"])).read_text(encoding="utf-8").splitlines()
            a, z = int(str(g["startLine"])), int(str(g["endLine"]))
            print(f"--- {g['path']}:{a}-{z} ({z - a + 1} lines)")
            numbered = list(enumerate(lines[a - 1 : z], a))
            if len(numbered) > 40:
                numbered = [*numbered[:30], (0, "..."), *numbered[-5:]]
            for n, line in numbered:
                print(f"  {n:5d} {line}" if n else "        ...")
        for pat in b.absent:
            print(f"--- absent: {pat}")


def build() -> None:
    roots = {c.name: corpus_dir(c) for c in load_corpora()}
    blocks = load_blocks()
    seen: set[str] = set()
    strata: dict[tuple[str, str], list[Block]] = {}
    files_cache: dict[str, list[Path]] = {}
    rows: dict[str, list[dict[str, object]]] = {}
    for b in blocks:
        if b.id in seen:
            raise SystemExit(f"duplicate id {b.id}")
        seen.add(b.id)
        if b.style not in STYLES or not b.en or bool(b.gold) == bool(b.absent):
            raise SystemExit(f"{b.id}: needs a style, an en question and gold xor absent")
        root = roots[b.corpus]
        kind = "answerable" if b.gold else "unanswerable"
        gold = [resolve(root, r) for r in b.gold]
        note = ""
        if b.absent:
            files = files_cache.setdefault(b.corpus, text_files(root))
            note = check_absent(root, files, b.absent) + (f". {b.note}" if b.note else "")
        langs = [("en", b.en)] + ([("pt", b.pt)] if b.pt else [])
        rows[b.id] = []
        for lang, text in langs:
            qid = f"{b.id}-{lang}"
            twin = f"{b.id}-{'pt' if lang == 'en' else 'en'}" if b.pt else None
            rows[b.id].append(
                {
                    "id": qid,
                    "corpus": b.corpus,
                    "lang": lang,
                    "kind": kind,
                    "style": b.style,
                    "question": text,
                    "gold": gold,
                    "split": "",
                    "pair": twin,
                    "note": note,
                }
            )
        strata.setdefault((b.corpus, kind), []).append(b)
    shared = random.Random(SEED)
    for key in sorted(strata, key=lambda k: (k[0] not in SHARED_SPLIT, k)):
        own = key[0] not in SHARED_SPLIT
        rng = random.Random(f"{SEED}:{key[0]}:{key[1]}") if own else shared
        group = sorted(strata[key], key=lambda b: b.id)
        rng.shuffle(group)
        half = (len(group) + 1) // 2
        for i, b in enumerate(group):
            for r in rows[b.id]:
                r["split"] = "dev" if i < half else "test"
    with OUT.open("w", encoding="utf-8") as f:
        for b in blocks:
            for r in rows[b.id]:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {sum(len(v) for v in rows.values())} questions to {OUT}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["show"] and len(argv) >= 2:
        show(argv[1], argv[2:])
    elif argv[:1] == ["build"]:
        build()
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
