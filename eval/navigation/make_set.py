"""Build eval/navigation/queries.jsonl: queries that name a defined symbol, with gold from an
independent source (Python's `ast`, the TypeScript compiler's parser), never our symbol table.

    .venv/bin/python eval/navigation/make_set.py [--seed 20261125] [--per-cell 6]

Needs the six corpora of eval/realqa/corpora.json in bench-data/corpora/ (scripts/fetch_corpora.py)
and node with `typescript` (client-vscode/node_modules). Deterministic for a seed and corpus set.
See README.md for what is sampled and why.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import random
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from fetch_corpora import corpus_dir, load_corpora  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE / "queries.jsonl"
MAX_DEFS = 5  # a bare name with more definitions is not looked up bare (`get`, `Meta`)
# Library source a developer navigates; gold is searched in every file of the corpus.
SOURCE_ROOTS = {
    "flask": ("src/flask/",),
    "click": ("src/click/",),
    "httpx": ("httpx/",),
    "attrs": ("src/attr/", "src/attrs/"),
    "django": ("django/",),
    "rxjs": ("src/internal/",),
}
_TYPING_BASES = frozenset(
    {
        "Union", "Optional", "Callable", "Dict", "List", "Tuple", "Set", "FrozenSet", "Mapping",
        "MutableMapping", "Sequence", "Iterable", "Iterator", "AsyncIterator", "AsyncIterable",
        "Awaitable", "Coroutine", "Type", "Literal", "Generator", "AsyncGenerator", "Any",
        "Annotated", "dict", "list", "tuple", "type", "frozenset", "set",
    }
)  # fmt: skip
_TYPE_CALLS = frozenset({"TypeVar", "NewType", "ParamSpec", "TypeVarTuple"})
_UPPER = re.compile(r"^_*[A-Z][A-Z0-9_]*$")


@dataclass(frozen=True)
class Def:
    """One definition: where its name is written, what it is and what contains it."""

    path: str
    line: int  # 1-based line of the name
    name: str
    kind: str  # function class method constant variable type_alias class_attr interface const enum
    container: str  # enclosing class(es), dotted; "" at module level
    module: str  # dotted module path of the file ("flask.helpers"; "" for TypeScript)
    guarded: bool  # inside an `if`/`try`/`with` block (TYPE_CHECKING, import fallbacks)
    public: bool  # a name a developer looks up: no leading underscore, in library source


# --- Python: ast --------------------------------------------------------------------------------


def _module_of(rel: str) -> str:
    parts = rel[: -len(Path(rel).suffix)].split("/")
    if parts[0] == "src":
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_type_value(value: ast.expr | None, annotation: ast.expr | None) -> bool:
    if annotation is not None and ast.unparse(annotation).endswith("TypeAlias"):
        return True
    if isinstance(value, ast.Call):
        callee = ast.unparse(value.func).rsplit(".", 1)[-1]
        return callee in _TYPE_CALLS
    if isinstance(value, ast.Subscript):
        base = ast.unparse(value.value).rsplit(".", 1)[-1]
        return base in _TYPING_BASES
    return False


def _value_kind(
    name: str, value: ast.expr | None, annotation: ast.expr | None, in_class: bool
) -> str:
    if in_class:
        return "class_attr"
    if _is_type_value(value, annotation):
        return "type_alias"
    return "constant" if _UPPER.match(name) else "variable"


def python_defs(base: Path, rel: str, public_file: bool) -> list[Def]:
    """Definitions at module and class level (and in their `if`/`try`/`with` blocks); not
    inside function bodies, which nobody looks up by name."""
    try:
        tree = ast.parse((base / rel).read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return []
    module = _module_of(rel)
    out: list[Def] = []

    def add(line: int, name: str, kind: str, container: str, guarded: bool) -> None:
        public = (
            public_file
            and not name.startswith("_")
            and not any(p.startswith("_") for p in container.split(".") if p)
        )
        out.append(Def(rel, line, name, kind, container, module, guarded, public))

    def walk(body: list[ast.stmt], container: str, guarded: bool) -> None:
        in_class = bool(container)
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                add(st.lineno, st.name, "method" if in_class else "function", container, guarded)
            elif isinstance(st, ast.ClassDef):
                # The name line: decorators come before it.
                add(st.lineno, st.name, "class", container, guarded)
                walk(st.body, f"{container}.{st.name}" if container else st.name, guarded)
            elif isinstance(st, ast.Assign):
                for target in st.targets:
                    names = [target] if isinstance(target, ast.Name) else []
                    if isinstance(target, (ast.Tuple, ast.List)):
                        names = [e for e in target.elts if isinstance(e, ast.Name)]
                    for n in names:
                        kind = _value_kind(n.id, st.value, None, in_class)
                        add(n.lineno, n.id, kind, container, guarded)
            elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                kind = _value_kind(st.target.id, st.value, st.annotation, in_class)
                add(st.target.lineno, st.target.id, kind, container, guarded)
            elif isinstance(st, ast.If):
                walk(st.body, container, True)
                walk(st.orelse, container, True)
            elif isinstance(st, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                walk(st.body, container, True)
                for h in st.handlers:
                    walk(h.body, container, True)
                walk(st.orelse, container, True)
                walk(st.finalbody, container, True)
            elif isinstance(st, (ast.With, ast.AsyncWith)):
                walk(st.body, container, True)

    walk(tree.body, "", False)
    return out


def corpus_python_defs(name: str, base: Path) -> list[Def]:
    roots = SOURCE_ROOTS[name]
    out: list[Def] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in ("node_modules", ".git"))
        for f in sorted(filenames):
            if not f.endswith((".py", ".pyi")):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), base).replace(os.sep, "/")
            public_file = rel.startswith(roots) and "/tests/" not in rel and not f.endswith(".pyi")
            out += python_defs(base, rel, public_file)
    return out


# --- TypeScript: the compiler's parser ------------------------------------------------------------


def corpus_ts_defs(name: str, base: Path) -> list[Def]:
    node_path = ROOT / "client-vscode" / "node_modules"
    if not (node_path / "typescript").exists():
        node_path = Path("/work/main/client-vscode/node_modules")
    out = subprocess.run(
        ["node", str(HERE / "ts_declarations.js"), str(base)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "NODE_PATH": str(node_path)},
    ).stdout
    roots = SOURCE_ROOTS[name]
    defs: list[Def] = []
    for row in map(json.loads, out.splitlines()):
        public = (
            row["exported"]
            and row["path"].startswith(roots)
            and not row["name"].startswith("_")
            and row["kind"] != "namespace"
        )
        kind, container = row["kind"], row["container"]
        defs.append(Def(row["path"], row["line"], row["name"], kind, container, "", False, public))
    return defs


# --- queries ------------------------------------------------------------------------------------

KIND_WORDS = {  # English word, Portuguese article + word
    "function": ("function", "a função"),
    "class": ("class", "a classe"),
    "method": ("method", "o método"),
    "constant": ("constant", "a constante"),
    "const": ("constant", "a constante"),
    "variable": ("variable", "a variável"),
    "type_alias": ("type", "o tipo"),
    "interface": ("interface", "a interface"),
    "class_attr": ("attribute", "o atributo"),
    "enum": ("enum", "o enum"),
}
# Kinds a reader does not tell apart by the word the question uses.
KIND_FAMILY = {"method": "member", "class_attr": "member", "constant": "value", "variable": "value",
               "const": "value", "interface": "type", "type_alias": "type"}  # fmt: skip
FORMS = ("bare", "where", "impl", "qualified", "where_kind", "pt_defined", "pt_where_kind")


def render(form: str, target: str, kind: str, rng: random.Random) -> tuple[str, str]:
    """The query text and its language."""
    en, pt = KIND_WORDS[kind]
    if form in ("bare", "qualified"):
        return target, "en"
    if form == "where":
        return rng.choice(
            [
                f"where is {target} defined",
                f"where is {target} defined?",
                f"where's {target} defined?",
                f"where is `{target}` declared",
            ]
        ), "en"
    if form == "impl":
        return rng.choice(
            [f"{target} implementation", f"{target} implementation", f"implementation of {target}"]
        ), "en"
    if form == "where_kind":
        return rng.choice([f"where is the {target} {en}", f"where's the {target} {en}?"]), "en"
    if form == "pt_defined":
        return rng.choice([f"onde {target} é definido", f"onde {target} é definido?"]), "pt"
    if form == "pt_where_kind":
        return rng.choice([f"onde fica {pt} {target}", f"onde fica {pt} {target}?"]), "pt"
    raise ValueError(form)


@dataclass
class Symbol:
    """One sampled definition and the names it can be asked by."""

    corpus: str
    d: Def
    kind: str  # the stratum: d.kind, or "guarded"
    bare_gold: list[Def] = field(default_factory=list)
    qualifier: str = ""  # "Class" or "module.path" for the qualified form
    qualified_gold: list[Def] = field(default_factory=list)


def _scope_ok(d: Def, qualifier: str) -> bool:
    if d.container:
        return d.container == qualifier or d.container.endswith("." + qualifier)
    return bool(d.module) and (d.module == qualifier or d.module.endswith("." + qualifier))


def symbols_of(corpus: str, defs: list[Def], rng: random.Random) -> list[Symbol]:
    by_name: dict[str, list[Def]] = collections.defaultdict(list)
    for d in defs:
        by_name[d.name].append(d)
    out: list[Symbol] = []
    seen: set[tuple[str, str]] = set()
    for d in defs:
        if not d.public or len(d.name) < 3 or d.name.startswith("__"):
            continue
        if d.kind in ("namespace", "enum"):
            continue
        kind = "guarded" if d.guarded else d.kind
        if kind == "variable" and corpus == "rxjs":
            continue
        same = by_name[d.name]
        if d.container:
            qualifier = d.container.rsplit(".", 1)[-1]
        elif d.module and rng.random() < 0.5:
            qualifier = d.module  # full dotted module path
        else:
            qualifier = d.module.rsplit(".", 1)[-1] if d.module else ""
        if d.module and not d.container and qualifier == d.module.rsplit(".", 1)[-1] == d.name:
            qualifier = d.module  # `click.click` reads oddly: take the dotted path
        key = (d.name, qualifier)
        if key in seen:
            continue
        seen.add(key)
        qualified = [x for x in same if qualifier and _scope_ok(x, qualifier)]
        if qualifier and not qualified:
            continue
        if len(same) > MAX_DEFS and (not qualified or len(qualified) > MAX_DEFS):
            continue
        bare = same if len(same) <= MAX_DEFS else []
        out.append(Symbol(corpus, d, kind, bare, qualifier, qualified))
    return out


def _gold(defs: list[Def]) -> list[dict[str, object]]:
    return [
        {"path": g.path, "line": g.line, "kind": g.kind, "container": g.container} for g in defs
    ]


def queries_for(sym: Symbol, forms: list[str], rng: random.Random) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    shown_kind = sym.d.kind
    for form in forms:
        use_qualified = form == "qualified" or not sym.bare_gold
        if use_qualified and not sym.qualifier:
            continue
        target = f"{sym.qualifier}.{sym.d.name}" if use_qualified else sym.d.name
        gold = sym.qualified_gold if use_qualified else sym.bare_gold
        if form in ("where_kind", "pt_where_kind"):
            # The kind named in the question narrows the gold to that kind's family when the
            # name has one (a Python property is an attribute to its reader: members are one).
            family = KIND_FAMILY.get(shown_kind, shown_kind)
            narrowed = [g for g in gold if KIND_FAMILY.get(g.kind, g.kind) == family]
            gold = narrowed or gold
        text, lang = render(form, target, shown_kind, rng)
        out.append(
            {
                "corpus": sym.corpus,
                "form": form,
                "kind": sym.kind,
                "def_kind": shown_kind,
                "lang": lang,
                "query": text,
                "name": sym.d.name,
                "qualifier": sym.qualifier if use_qualified else "",
                "n_defs": len(gold),
                "gold": _gold(sorted(gold, key=lambda g: (g.path, g.line))),
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seed", type=int, default=20261125)
    ap.add_argument("--per-cell", type=int, default=6, help="symbols per corpus x kind")
    ap.add_argument("--forms-per-symbol", type=int, default=2)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    rows: list[dict[str, object]] = []
    stats: dict[str, collections.Counter[str]] = {}
    for c in load_corpora(ROOT / "eval" / "realqa" / "corpora.json"):
        base = corpus_dir(c)
        if not base.exists():
            raise SystemExit(f"missing corpus {base}: run scripts/fetch_corpora.py")
        ts = c.name == "rxjs"
        defs = corpus_ts_defs(c.name, base) if ts else corpus_python_defs(c.name, base)
        syms = symbols_of(c.name, defs, rng)
        by_kind: dict[str, list[Symbol]] = collections.defaultdict(list)
        for s in syms:
            by_kind[s.kind].append(s)
        stats[c.name] = collections.Counter({k: len(v) for k, v in by_kind.items()})
        form_turn = 0
        for kind in sorted(by_kind):
            pool = sorted(by_kind[kind], key=lambda s: (s.d.path, s.d.line, s.d.name))
            picked = rng.sample(pool, min(args.per_cell, len(pool)))
            # Dev/test by symbol, alternating within the cell: both splits get every stratum.
            order = list(range(len(picked)))
            rng.shuffle(order)
            for i, sym in enumerate(picked):
                split = "dev" if order[i] % 2 == 0 else "test"
                forms: list[str] = []
                for _ in range(args.forms_per_symbol):
                    # Round-robin over the forms (per corpus) keeps them balanced in every cell.
                    for _try in range(len(FORMS)):
                        form = FORMS[form_turn % len(FORMS)]
                        form_turn += 1
                        if form == "qualified" and not sym.qualifier:
                            continue
                        if form not in forms:
                            forms.append(form)
                            break
                for q in queries_for(sym, forms, rng):
                    q["split"] = split
                    q["symbol"] = f"{c.name}:{sym.d.path}:{sym.d.line}:{sym.d.name}"
                    rows.append(q)
    for i, q in enumerate(rows):
        q["id"] = f"nav-{q['corpus']}-{i:04d}"
    keys = ("id", "corpus", "split", "lang", "form", "kind", "def_kind", "query", "name",
            "qualifier", "n_defs", "symbol", "gold")  # fmt: skip
    args.out.write_text(
        "".join(json.dumps({k: q[k] for k in keys}, ensure_ascii=False) + "\n" for q in rows),
        encoding="utf-8",
    )
    print(f"{len(rows)} queries -> {args.out}")
    for name, counter in stats.items():
        print(f"  {name}: candidate symbols per kind {dict(sorted(counter.items()))}")
    for dim in ("corpus", "kind", "form", "split", "lang"):
        print(f"  by {dim}: {dict(sorted(collections.Counter(str(q[dim]) for q in rows).items()))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
