"""The name channel: a query that names a defined symbol gets that symbol's definitions.

Neither BM25 nor the embedding knows that `AppContextProxy` in "where is AppContextProxy
defined" is a name to look up rather than a word to match: the definition is one short line
that any file using the name outranks. The catalog's symbol table knows, exactly. Names are
taken from the query where they are unmistakable (backticked, snake_case, camelCase, dotted,
the whole query being one identifier) or where the question's shape says a word is a name
("where is update defined", "class Foo", "X implementation"); each is looked up exactly, and
the chunks holding its definitions become candidates flagged `exact_definition`. A navigation
question puts them first; other questions keep the model's order (docs may explain better).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from code_compass_server.constants import NAME_EXACT_SCORE, NAME_MAX_DEFINITIONS
from code_compass_server.index.project import Project
from code_compass_server.records import VALUE_KINDS, SearchParams, SymbolDef
from code_compass_server.search.candidates import Candidate

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_QUALIFIED = rf"{_IDENT}(?:\.{_IDENT})*"
_DOTTED = re.compile(rf"(?<![\w.]){_IDENT}(?:\.{_IDENT})*(?![\w])")
_BACKTICKED = re.compile(r"`([^`\s]+)`")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
# Words that read as a name in the patterns below but never are one worth looking up.
_NOT_NAMES = frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "is",
        "are",
        "be",
        "was",
        "where",
        "which",
        "what",
        "how",
        "who",
        "why",
        "when",
        "does",
        "do",
        "did",
        "defined",
        "declared",
        "implemented",
        "implementation",
        "definition",
        "declaration",
        "set",
        "located",
        "class",
        "function",
        "method",
        "interface",
        "type",
        "enum",
        "struct",
        "const",
        "constant",
        "variable",
        "alias",
        "def",
        "func",
        "module",
        "file",
        "code",
        "default",
        "main",
        "of",
        "for",
        "de",
        "do",
        "da",
        "dos",
        "das",
        "que",
        "classe",
        "função",
        "funcao",
        "método",
        "metodo",
        "atributo",
        "constante",
        "variável",
        "variavel",
        "tipo",
        "propriedade",
        "campo",
        "o",
        "a",
        "os",
        "as",
        "um",
        "uma",
        "onde",
        "e",
        "é",
    ]
)
# Words that are names as often as not: rejected where a name is guessed from prose, taken where
# the question's shape says they are the name ("where is main defined", a bare `default`).
_WEAK_NAMES = frozenset({"default", "main", "file", "code", "module"})
_KINDS_WORDS = (
    r"class|def|function|func|method|interface|type|enum|struct|const|constant|variable|alias|"
    r"attribute|property|field"
)
_PT_KINDS_WORDS = (
    r"classe|função|funcao|método|metodo|interface|tipo|enum|struct|constante|variável|variavel|"
    r"atributo|propriedade|campo"
)
# What a kind word in the question asks for, among the symbol table's kinds: those definitions
# go first when the name has some (a name with none of that kind keeps all its definitions).
_KIND_WANTED: dict[str, frozenset[str]] = {
    "class": frozenset({"class", "struct"}),
    "classe": frozenset({"class", "struct"}),
    "struct": frozenset({"class", "struct"}),
    "def": frozenset({"function", "method"}),
    "function": frozenset({"function"}),
    "func": frozenset({"function", "method"}),
    "função": frozenset({"function"}),
    "funcao": frozenset({"function"}),
    "method": frozenset({"method", "constructor"}),
    "método": frozenset({"method", "constructor"}),
    "metodo": frozenset({"method", "constructor"}),
    "interface": frozenset({"interface", "type", "trait"}),
    "type": frozenset({"type", "interface", "class", "struct", "enum"}),
    "tipo": frozenset({"type", "interface", "class", "struct", "enum"}),
    "alias": frozenset({"type", "variable", "constant"}),
    "enum": frozenset({"enum"}),
    "const": frozenset({"constant", "variable"}),
    "constant": frozenset({"constant", "variable"}),
    "constante": frozenset({"constant", "variable"}),
    "variable": frozenset({"variable", "constant"}),
    "variável": frozenset({"variable", "constant"}),
    "variavel": frozenset({"variable", "constant"}),
    # A Python property is a method; a field declared in a class is an attribute.
    "attribute": frozenset({"attribute", "method"}),
    "atributo": frozenset({"attribute", "method"}),
    "property": frozenset({"attribute", "method"}),
    "propriedade": frozenset({"attribute", "method"}),
    "field": frozenset({"attribute", "variable", "constant"}),
    "campo": frozenset({"attribute", "variable", "constant"}),
}
_KIND_WORD = re.compile(rf"\b(?:{_KINDS_WORDS}|{_PT_KINDS_WORDS})\b", re.I)
_OTHER_KIND = 0.9  # a definition of another kind than the one the question names
# Shapes in which a plain word (`update`, `frozen`) is a name: English and Portuguese. Strong
# shapes say outright that the word is a name, so a weak word (`main`) is taken there.
_Q = rf"`?({_QUALIFIED})`?(?!\w)"  # a whole word: not "fun" of "função"
_NAME_SHAPES: tuple[tuple[re.Pattern[str], bool], ...] = (
    (
        re.compile(
            rf"\bwhere(?:\s+is|\s+are|'s)\s+(?:the\s+)?{_Q}\s+(?:defined|declared|implemented)\b",
            re.I,
        ),
        True,
    ),
    (
        re.compile(
            rf"\bwhere(?:\s+is|\s+are|'s)\s+(?:the\s+)?{_Q}\s+(?:set|located|created)\b", re.I
        ),
        False,
    ),
    (re.compile(rf"^\s*(?:{_KINDS_WORDS})\s+{_Q}\s*\??\s*$", re.I), True),
    (
        re.compile(
            rf"^\s*(?:the\s+)?{_Q}\s+(?:{_KINDS_WORDS}|implementation|definition|source)"
            r"\s*\??\s*$",
            re.I,
        ),
        True,
    ),
    # "where is the url_for method", "where's the Config class defined?"
    (
        re.compile(rf"\bwhere(?:\s+is|\s+are|'s)\s+(?:the\s+)?{_Q}\s+(?:{_KINDS_WORDS})\b", re.I),
        True,
    ),
    # "where is the class Config", "where is function foo defined"
    (
        re.compile(rf"\bwhere(?:\s+is|\s+are|'s)\s+(?:the\s+)?(?:{_KINDS_WORDS})\s+{_Q}", re.I),
        False,
    ),
    # "implementation of main": the whole question, so the word is the name
    (
        re.compile(
            rf"^\s*(?:the\s+)?(?:implementation|definition|declaration|source)\s+of\s+(?:the\s+)?"
            rf"(?:(?:{_KINDS_WORDS})\s+)?{_Q}(?:\s+(?:{_KINDS_WORDS}))?\s*\??\s*$",
            re.I,
        ),
        True,
    ),
    (
        re.compile(
            r"\bonde\s+(?:é|e|está|esta|fica)\s+(?:definid[oa]s?|declarad[oa]s?|implementad[oa]s?)"
            rf"\s+(?:(?:o|a|os|as)\s+)?{_Q}",
            re.I,
        ),
        True,
    ),
    (
        re.compile(
            rf"\bonde\s+(?:(?:o|a)\s+)?{_Q}\s+(?:é|e|está|esta|fica)\s+"
            r"(?:definid|declarad|implementad)",
            re.I,
        ),
        True,
    ),
    # "onde fica a classe Config", "onde está definida a função url_for"
    (
        re.compile(
            r"\bonde\s+(?:é|e|está|esta|fica)\s+(?:(?:definid|declarad|implementad)[oa]s?\s+)?"
            rf"(?:(?:o|a|os|as)\s+)?(?:{_PT_KINDS_WORDS})\s+{_Q}",
            re.I,
        ),
        True,
    ),
    # "implementação de asdict", "definição da classe Factory": the whole question
    (
        re.compile(
            r"^\s*(?:a\s+)?(?:implementação|implementacao|definição|definicao|declaração|"
            rf"declaracao)\s+d[eoa]s?\s+(?:(?:{_PT_KINDS_WORDS})\s+)?{_Q}\s*\??\s*$",
            re.I,
        ),
        True,
    ),
)
_NAVIGATION = re.compile(
    r"\b(?:where|which\s+(?:file|module|function|class|method)|find|locate|go\s+to|jump\s+to|"
    r"defined|declared|definition|declaration|implementation|implemented|"
    r"onde|definid[oa]s?|declarad[oa]s?|implementad[oa]s?|implementação|definição)\b",
    re.I,
)
# Definitions before values, values before attributes: what a bare name usually means.
_KIND_RANK = {"attribute": 2}


@dataclass(frozen=True, slots=True)
class NameRef:
    """A name the query uses: `name` looked up exactly, `scope` its dotted qualifier."""

    name: str
    scope: str = ""  # "Class" in `Class.method`, "attr" in `attr.dataclass`; "" when bare


@dataclass(frozen=True, slots=True)
class QueryNames:
    refs: tuple[NameRef, ...]
    navigation: bool  # the question asks where something is, not how it works
    # A navigation question's content words, in order (of the English text: as asked, or as the
    # query builder rendered it), from which phrase_names() guesses identifiers ("default
    # timeout" -> DEFAULT_TIMEOUT).
    words: tuple[tuple[str, ...], ...] = ()
    # Kinds a navigation question asks for ("the url_for method"): those definitions first.
    kinds: frozenset[str] = frozenset()


# Words of a navigation question that say what is asked, not what it is about.
_NOT_PHRASE = (_NOT_NAMES - {"default", "main", "file", "module"}) | {
    "find", "locate", "built", "build", "stored", "kept", "live", "lives", "handled",
    "happen", "happens", "put", "added", "registered", "get", "got", "use", "used", "uses",
    "define", "declare", "implement", "create", "created",
}  # fmt: skip
_PHRASE_WORD = re.compile(r"[A-Za-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Za-z][a-z]+|[A-Z]+(?![a-z])")
_WHERE = re.compile(r"\bwhere\b", re.I)
_PHRASE_MAX_DEFS = 3  # phrase guesses put first, at most (past that, the guess means little)


def _phrase_words(text: str) -> list[str]:
    from code_compass_server.index.tokens import is_stop_word

    return [
        w
        for w in (m.group(0).lower() for m in _PHRASE_WORD.finditer(text))
        if len(w) > 1 and w not in _NOT_PHRASE and not is_stop_word(w)
    ]


def phrase_names(words: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """Identifiers a phrase of the question may spell: (three-word names, two-word names,
    prefixes), each as snake_case (matched ignoring case, so DEFAULT_TIMEOUT too), private
    (_DEFAULT_TIMEOUT) and glued (DefaultTimeout, defaultTimeout). Two words may have one word
    between them ("default runserver port" -> default_port) or come in the other order when
    adjacent (a rendered "timeout default"); a name may go on (`default_timeout_` prefix)."""
    three: list[str] = []
    two: list[str] = []
    prefixes: list[str] = []
    for i in range(len(words)):
        if i + 2 < len(words):
            trio = words[i : i + 3]
            three += ["_".join(trio), "_" + "_".join(trio), "".join(trio)]
        for j in (i + 1, i + 2):
            if j < len(words) and words[i] != words[j]:
                pairs = [(words[i], words[j])]
                if j == i + 1:  # "timeout padrão" renders "timeout default": default_timeout
                    pairs.append((words[j], words[i]))
                # "validate passwords" names validate_password: a plural's last word singular.
                pairs += [(a, _singular(b)) for a, b in pairs if _singular(b) != b]
                for pair in pairs:
                    two += ["_".join(pair), "_" + "_".join(pair), "".join(pair)]
                    if j == i + 1:
                        prefixes += ["_".join(pair) + "_", "_" + "_".join(pair) + "_"]
    return list(dict.fromkeys(three)), list(dict.fromkeys(two)), list(dict.fromkeys(prefixes))


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _code_like(token: str) -> bool:
    """Shaped like an identifier rather than an English word."""
    core = token.strip("_")
    if not core or not any(ch.isalpha() for ch in core):
        return False
    return "_" in core or token.startswith("__") or bool(_CAMEL.search(core))


def _ref(token: str, strong: bool = False) -> NameRef | None:
    parts = [p for p in token.strip(".").split(".") if p]
    if not parts or len(parts[-1]) < 2:
        return None
    last = parts[-1].lower()
    if last in _NOT_NAMES and not (strong and last in _WEAK_NAMES):
        return None
    return NameRef(parts[-1], ".".join(parts[:-1]))


def query_names(*texts: str) -> QueryNames:
    """Names in the question (as asked, and as the query builder rendered it)."""
    found: dict[NameRef, None] = {}
    navigation = False
    kinds: set[str] = set()
    for text in texts:
        stripped = text.strip().strip("?`'\" ")
        navigation = navigation or bool(_NAVIGATION.search(text))
        tokens: list[tuple[str, bool]]  # (token, said outright to be a name)
        if re.fullmatch(rf"{_IDENT}(?:\.{_IDENT})*", stripped):
            navigation = True  # a bare identifier: take me to it
            tokens = [(stripped, True)]
        else:
            tokens = [(m.group(1), True) for m in _BACKTICKED.finditer(text)]
            tokens += [(t, False) for t in _DOTTED.findall(text) if "." in t or _code_like(t)]
            for shape, strong in _NAME_SHAPES:
                m = shape.search(text)
                if m is not None:
                    navigation = True
                    tokens.append((m.group(1), strong))
                    # The kind said next to the name ("the url_for method"), not one in prose.
                    found_kinds = _KIND_WORD.findall(m.group(0))
                    kinds.update(k for w in found_kinds for k in _KIND_WANTED[w.lower()])
        for token, strong in tokens:
            if "." in token and not all(len(p) > 1 for p in token.split(".")):
                continue  # "e.g", "i.e": abbreviations, not qualified names
            ref = _ref(token, strong)
            if ref is not None:
                found[ref] = None
    words: tuple[tuple[str, ...], ...] = ()
    # Only "where ..." questions: a docstring-like query that merely says "find" or "locate"
    # names its target in prose, not in identifier words. The last text is the English one
    # (the query builder's rendering of a Portuguese "onde ...").
    if navigation and texts and _WHERE.search(texts[-1]):
        words = (tuple(_phrase_words(texts[-1])),)
    return QueryNames(
        tuple(found), navigation, words, frozenset(kinds) if navigation else frozenset()
    )


def _module_parts(path: str) -> list[str]:
    """`src/flask/json/__init__.py` -> [src, flask, json]: the dotted module a file is."""
    parts = path.split("/")
    parts[-1] = parts[-1].split(".", 1)[0]
    if len(parts) > 1 and parts[-1] in ("__init__", "index", "mod"):
        parts.pop()
    return parts


def _ends_with(parts: Sequence[str], tail: Sequence[str]) -> bool:
    return 0 < len(tail) <= len(parts) and list(parts[-len(tail) :]) == list(tail)


def _scope_match(d: SymbolDef, scope: str) -> int:
    """2: `Class.method` names the container, `module.name` (or `module.Class.method`) the
    module the definition is at the top of; 1: the scope's last part is only a folder or file
    stem on the path (`models.QuerySet`, re-exported by the package); 0: no match."""
    if d.container == scope or d.container.endswith("." + scope):
        return 2
    scope_parts = scope.split(".")
    module = _module_parts(d.path)
    container = d.container.split(".") if d.container else []
    if container and _ends_with(scope_parts, container):
        prefix = scope_parts[: len(scope_parts) - len(container)]
        if prefix and _ends_with(module, prefix):
            return 2
    if not container and _ends_with(module, scope_parts):
        return 2
    stems = {p.split(".", 1)[0] for p in d.path.split("/")}
    return 1 if scope_parts[-1] in stems else 0


def _lookup(
    project: Project, ref: NameRef, params: SearchParams, kinds: frozenset[str] = frozenset()
) -> list[tuple[SymbolDef, float]]:
    """Definitions of one name, each with how surely the query means it."""
    defs = [
        d
        for d in project.catalog.symbols_named(ref.name)
        if (params.path_prefix is None or d.path.startswith(params.path_prefix))
        and (params.language is None or d.language == params.language)
    ]
    if not defs:
        return []
    if ref.scope:
        matches = [(_scope_match(d, ref.scope), d) for d in defs]
        best = max(m for m, _ in matches)
        if best:
            defs = [d for m, d in matches if m == best]
        elif not _code_like(ref.name):
            return []  # `settings.py`, `os.path`: a plain word under an unknown scope
    # The fewer definitions a name has, the more surely it means each one.
    strength = 1.0 / (1.0 + 0.1 * (len(defs) - 1))
    # A kind the question names ("the url_for method") puts those definitions first.
    wanted = kinds if any(d.kind in kinds for d in defs) else frozenset()

    def other(d: SymbolDef) -> bool:
        return bool(wanted) and d.kind not in wanted

    defs.sort(key=lambda d: (other(d), *_def_order(d)))
    return [(d, strength * (_OTHER_KIND if other(d) else 1.0)) for d in defs[:NAME_MAX_DEFINITIONS]]


def _phrase_lookup(
    project: Project, texts: Sequence[Sequence[str]], params: SearchParams
) -> list[tuple[SymbolDef, float]]:
    """Definitions spelt by the question's phrases, surest first: a three-word name before a
    two-word one before a prefix, each weaker the more definitions share it."""
    three: list[str] = []
    two: list[str] = []
    prefixes: list[str] = []
    for words in texts:
        t3, t2, pre = phrase_names(words)
        three += t3
        two += t2
        prefixes += pre
    none: list[str] = []
    tiers = ((three, none, 0.9), (two, none, 0.85), (none, prefixes, 0.6))
    out: list[tuple[SymbolDef, float]] = []
    seen: set[tuple[str, int]] = set()
    for exact, pre, base in tiers:
        defs = [
            d
            for d in project.catalog.symbols_named_nocase(exact, pre)
            if (params.path_prefix is None or d.path.startswith(params.path_prefix))
            and (params.language is None or d.language == params.language)
            and (d.path, d.name_line) not in seen
        ]
        if not defs:
            continue
        strength = base / (1.0 + 0.1 * (len(defs) - 1))
        defs.sort(key=_def_order)
        for d in defs:
            seen.add((d.path, d.name_line))
            out.append((d, strength))
        if len(out) >= _PHRASE_MAX_DEFS:
            break
    return out[:_PHRASE_MAX_DEFS]


def _def_order(d: SymbolDef) -> tuple[bool, int, int, str, int]:
    """Which of a name's definitions a reader means first: implementation before tests,
    definitions before values before attributes, then the shallower module (a package's
    `__init__` is where `import` finds the name; deeper modules implement it)."""
    return (_in_tests(d), _kind_rank(d), len(_module_parts(d.path)), d.path, d.start_line)


def _in_tests(d: SymbolDef) -> bool:
    tests = ("test", "tests", "testing")
    return any(p in tests or p.startswith("test_") for p in d.path.split("/"))


def _kind_rank(d: SymbolDef) -> int:
    return _KIND_RANK.get(d.kind, 1 if d.kind in VALUE_KINDS else 0)


def definitions(project: Project, names: QueryNames, params: SearchParams) -> list[Candidate]:
    """Candidates holding the definitions of the query's names, one per chunk; for a
    navigation question naming none, those its phrases spell (flagged `name_guess`)."""
    out: dict[str, Candidate] = {}
    found: list[tuple[SymbolDef, float, bool]] = [
        (d, s, False) for ref in names.refs for d, s in _lookup(project, ref, params, names.kinds)
    ]
    if names.words:
        found += [(d, s, True) for d, s in _phrase_lookup(project, names.words, params)]
    for d, strength, guess in found:
        chunks = project.catalog.chunks_at(d.path, d.name_line)
        if not chunks:
            continue
        qualified = d.qualified_name
        row = next((c for c in chunks if c.symbol == qualified), chunks[0])
        have = out.get(row.id)
        if have is not None and guess and not have.name_guess:
            continue  # written by name: that match stands
        if have is None or have.name_match < strength:
            out[row.id] = Candidate(
                row=row,
                project=project.name,
                exact_definition=True,
                name_match=strength,
                name_guess=guess,
            )
    return list(out.values())


def place(
    ranked: Sequence[Candidate], found: Iterable[Candidate], navigation: bool
) -> list[Candidate]:
    """Flag the scored candidates that hold a named definition; for a navigation question,
    add the missing ones and put them all first with at least NAME_EXACT_SCORE x strength;
    definitions guessed from the question's phrases go first without a floor (see below)."""
    found = list(found)
    # Named definitions that tie keep the order the name channel gave them (_def_order);
    # guessed ones keep the model's order, which knows more about them than their paths.
    order = {(f.project, f.row.id): i for i, f in enumerate(found) if not f.name_guess}
    by_id = {(c.project, c.row.id): c for c in ranked}
    top = max((c.score for c in ranked), default=0.0)
    top_relevance = max((c.relevance for c in ranked), default=0.0)
    out = list(ranked)
    for f in found:
        have = by_id.get((f.project, f.row.id))
        if have is None:
            if not navigation:
                continue  # unscored: nothing says where it belongs in this list
            have = f
            out.append(f)
        have.exact_definition = True
        have.name_match = max(have.name_match, f.name_match)
        have.features["exact_definition"] = 1.0
        have.features["name_match"] = have.name_match
        if f.name_guess:
            # A name guessed from the question's words goes first but decides nothing: it
            # reads the list's best score (the gate's verdict), never a floor of its own.
            # (Placed second instead, it cost more on dev than the wrong guesses it demoted.)
            have.score = max(have.score, top)
            have.relevance = max(have.relevance, top_relevance)
        elif navigation:
            floor = NAME_EXACT_SCORE * have.name_match
            have.score = max(have.score, top, min(1.0, floor))
            # The definition a navigation question names is what it asks for.
            have.relevance = max(have.relevance, min(1.0, floor))
    last = len(order)
    out.sort(
        key=lambda c: (
            c.score,
            c.exact_definition,
            c.name_match,
            -order.get((c.project, c.row.id), last),
        ),
        reverse=True,
    )
    return out
