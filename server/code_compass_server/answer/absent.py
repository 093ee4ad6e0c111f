"""Near misses: the option, parameter, method or setting a question names, checked against the
evidence before an answer is composed.

Retrieval is right to find the real neighbour of a thing that does not exist (`parseISO` for
"the `strict` option of `parseISO`"), but an answer composed from it would present the neighbour
as the answer. So each member the question names (`owner(name=...)`, "the `name` option",
"a opção `name`", `--name`, `Owner.name`) is looked for as a whole identifier in the evidence,
in the whole files the evidence comes from, and (for methods and attributes) in the symbol
table. One found nowhere is *absent*: the answer says so in the question's language, cites the
closest real thing (the owner's definition, else the best evidence) and lists what it does have
(docs/answers.md: near misses; shared/DESIGN.md: `absent`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from code_compass_server.answer.cli_flags import command_passage, declared_flags
from code_compass_server.answer.go_packages import foreign_go_folders, hit_folder
from code_compass_server.answer.name_meaning import MeaningScores, name_meaning
from code_compass_server.answer.near_names import (
    LANGUAGE_NAMES,
    bare_names,
    defines,
    file_words,
    internal,
    is_code_definition,
    is_stub,
    is_test_path,
    name_parts,
    public_caller,
    question_words,
    same_sense_names,
    spelled_neighbour,
    strong_parts,
)
from code_compass_server.answer.reread import Evidence
from code_compass_server.answer.source import EvidenceSource
from code_compass_server.query.lexicon import portuguese_lexicon
from code_compass_server.records import SearchHit, SearchParams

# Words that name what kind of member a question asks about, English and Portuguese, with the
# kind the answer uses.
_KINDS = {
    "option": "option",
    "options": "option",
    "opção": "option",
    "opcao": "option",
    "parameter": "parameter",
    "param": "parameter",
    "parâmetro": "parameter",
    "parametro": "parameter",
    "argument": "parameter",
    "arg": "parameter",
    "argumento": "parameter",
    "kwarg": "parameter",
    "keyword": "parameter",
    "flag": "flag",
    "setting": "setting",
    "configuração": "setting",
    "configuracao": "setting",
    "config": "setting",
    "method": "method",
    "método": "method",
    "metodo": "method",
    "function": "method",
    "função": "method",
    "funcao": "method",
    "attribute": "attribute",
    "atributo": "attribute",
    "property": "attribute",
    "propriedade": "attribute",
    "field": "attribute",
    "campo": "attribute",
}
_KIND_WORDS = "|".join(sorted(map(re.escape, _KINDS), key=len, reverse=True))
_NAME = r"`?(--?[A-Za-z][\w-]*|[A-Za-z_]\w*)`?"
# "the `strict` option", "a `style` setting", "strict flag"
_NAME_THEN_KIND = re.compile(rf"{_NAME}\s+(?:{_KIND_WORDS})\b", re.I)
# "option `strict`", "a opção strict", "parameter called strict"
_KIND_THEN_NAME = re.compile(
    rf"\b(?:{_KIND_WORDS})\s+(?:(?:called|named|chamad[oa]|de nome)\s+)?{_NAME}", re.I
)
# `owner(name=...)`, `owner(name: ...)`, `owner({ name: ... })`, `owner(x, { name: ... })`:
# the call and its arguments (no nested parentheses), each keyword read from them.
_CALL_ARGS = re.compile(r"\b([A-Za-z_][\w.]*)\(([^()]*)\)?")
_ARG_KEY = re.compile(r"(?:^|[,{])\s*([A-Za-z_]\w*)\s*(?:=(?!=)|:)")
_CLI_FLAG = re.compile(r"(?<![\w-])(--[a-z][\w-]+)")
_BACKTICK = re.compile(r"`([^`]+)`")
_IDENT = re.compile(r"[A-Za-z_][\w.]*")
# A name that is code by its spelling: snake_case, camelCase, UPPER_CASE (3+ letters).
_CODE_NAME = re.compile(r"^(?:_*[a-z]\w*_\w*|_*[a-z]+[A-Z]\w*|[A-Z][A-Z0-9]*_[A-Z0-9_]+|__\w+__)$")
_CODE_LIKE = re.compile(
    r"^(?:[A-Za-z_]\w*\.[\w.]+|\w*[a-z][A-Z]\w*|\w+_\w+|[A-Za-z_]\w*\(\)|[A-Z]{2,}[a-z]\w*)$"
)
# Words that stand before a kind word without naming anything ("the option", "which flag").
_NOT_NAMES = frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "that",
        "which",
        "what",
        "any",
        "some",
        "each",
        "every",
        "its",
        "his",
        "their",
        "my",
        "your",
        "our",
        "no",
        "new",
        "other",
        "another",
        "same",
        "one",
        "two",
        "default",
        "given",
        "optional",
        "extra",
        "custom",
        "special",
        "specific",
        "such",
        "o",
        "os",
        "as",
        "um",
        "uma",
        "uns",
        "umas",
        "este",
        "esta",
        "esse",
        "essa",
        "aquele",
        "aquela",
        "qual",
        "quais",
        "que",
        "algum",
        "alguma",
        "nenhum",
        "nenhuma",
        "cada",
        "seu",
        "sua",
        "outro",
        "outra",
        "mesmo",
        "mesma",
        "tem",
        "have",
        "has",
        "with",
        "without",
        "for",
        "of",
        "to",
        "in",
        "on",
        "by",
        "from",
        "as",
        "is",
        "does",
        "do",
        "did",
        "can",
        "could",
        "should",
        "would",
        "will",
        "use",
        "uses",
        "using",
        "set",
        "sets",
        "pass",
        "passing",
        "accept",
        "accepts",
        "support",
        "supports",
        "take",
        "takes",
        "there",
        "exist",
        "exists",
        "named",
        "called",
        "de",
        "da",
        "do",
        "das",
        "dos",
        "em",
        "no",
        "na",
        "com",
        "sem",
        "para",
        "por",
        "uma",
    ]
)
_MEMBER_KINDS = frozenset({"method", "attribute"})
# Kinds a plain word may name ("a strict flag", "o argumento rng"): "the main function" or
# "the date field" are prose far more often than a name.
_WORD_KINDS = frozenset({"option", "parameter", "flag", "setting"})
_PLAIN_WORD = re.compile(r"^[a-z][a-z0-9]{2,}$")
# A word with no vowel is an abbreviation (`rng`, `ttl`), a name rather than prose.
_ABBREVIATION = re.compile(r"^[^aeiouy]+$", re.I)
# Kind words a plain English word before them qualifies rather than names.
_PROSE_KINDS = frozenset({"config", "keyword"})
_CAPITALIZED = re.compile(r"^[A-Z][a-z0-9]{2,}$")
_PT_ONLY_KINDS = frozenset(
    {"opção", "opcao", "parâmetro", "parametro", "argumento", "configuração", "configuracao"}
)
# "flag" is the same word in both languages; "a flag strict" is how Portuguese names one.
_PT_KINDS = _PT_ONLY_KINDS | {"flag"}
_CALLED = re.compile(r"\b(?:called|named)\b", re.I)
# English words that qualify a kind word without naming anything ("a positional argument",
# "the required parameter"); Portuguese ones are the lexicon's (query/lexicon_pt.tsv).
_QUALIFIERS = frozenset(
    {"positional", "optional", "required", "mandatory", "boolean", "global", "local"}
    | {"additional", "corresponding", "relevant", "valid", "invalid", "correct", "proper"}
    | {"right", "wrong", "single", "multiple", "first", "last", "following", "previous"}
    | {"next", "main", "only", "whole", "separate", "similar", "equivalent", "public"}
    | {"private", "internal", "hidden", "undocumented", "deprecated", "experimental", "magic"}
    | {"command", "line", "cli", "env", "environment", "config", "configuration", "init"}
    | {"constructor", "class", "instance", "module", "package", "library", "function"}
    | {"more", "less", "most", "least", "better", "best", "simple", "easy", "similar"}
    # Portuguese adjectives after a kind word ("o argumento posicional") the lexicon lacks.
    | {"posicional", "opcional", "obrigatório", "obrigatorio", "nomeado", "nomeada", "padrão"}
    | {"padrao", "booleano", "booleana", "extra", "novo", "nova", "interno", "interna"}
)
# "the `x` option to/of `owner`", "a opção x do/pro owner": the word after the preposition
# is the owner when the index defines it (NamedMember.guessed).
_OWNER_AFTER = (
    r"`?{name}`?\s+(?:(?:{kinds})\s+)?(?:to|of|for|on|in|do|da|pro|pra|para|no|na|ao)\s+"
    r"(?:(?:the|a|an|o|a|os|as)\s+)?`?([A-Za-z_][\w.]*)`?"
)
NAME_KIND = "name"  # a bare name: what kind of thing it is, the question does not say
# How a strict absence's neighbour was found: the owner written on it, a name spelled alike,
# another name of the question, or only the best code definition of the evidence.
HOW_OWNER, HOW_SPELLED, HOW_NAMED, HOW_BEST = "owner", "spelled", "named", "best"
_PARAM_NAME = re.compile(r"^\s*\**\s*([A-Za-z_]\w*)")
_PROPERTY = re.compile(r"^[ \t]+(?:readonly\s+)?([A-Za-z_]\w*)\??\s*:[ \t]*[\w\[(\"'|{]", re.M)
_GO_FIELD = re.compile(r"^\t([A-Z]\w*)\s+[\w*\[\]]", re.M)
_LISTED = 8
NEIGHBOUR_HITS = 3
_SPELLED_MIN = 0.75  # SequenceMatcher ratio of a setting's name to a real one's
_IDENT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")


@dataclass(frozen=True, slots=True)
class NamedMember:
    name: str  # as the question spells it (`--no-color`, `strict`)
    kind: str  # option | parameter | flag | setting | method | attribute | name
    owner: str  # the identifier it would belong to, "" when the question names none
    # Absent only when the whole index lacks it (a bare code-shaped name, a plain word before
    # a kind word): nothing but its spelling says it is code, so only "nowhere" is evidence.
    strict: bool = False
    # The owner is a plain word after a preposition ("an onPatch option to produce"): kept
    # only when the index defines it (resolve_owners).
    guessed: bool = False
    # The owner is another name of the question, put for one the index does not define
    # (resolve_owners): it chooses the neighbour, but the member is looked for everywhere.
    borrowed: bool = False
    # A plain English word before a kind word ("a strict flag"): prose as often as a name
    # ("a stricter option"), so a name only beside an owner the index defines, or when it
    # is an abbreviation (`rng`: no vowel) (resolve_owners).
    plain: bool = False


@dataclass(frozen=True, slots=True)
class Absence:
    """A member the question names that the workspace does not have, with its real neighbour."""

    name: str
    kind: str
    owner: str
    nearest: Evidence | None
    has: list[str] = field(default_factory=list)  # what the neighbour does have (its members)
    closest: str = ""  # the one of `has` spelled most like `name`
    how: str = ""  # how a bare name's neighbour was chosen (HOW_*); "" for a member

    def to_json(self) -> dict[str, Any]:
        near = self.nearest
        return {
            "name": self.name,
            "nearest": None
            if near is None
            else {
                "path": near.path,
                "startLine": near.start_line,
                "endLine": near.end_line,
                "symbol": near.hit.symbol,
            },
        }


def _clean(name: str) -> str:
    return name.strip("`'\" ").rstrip("()")


def _owners(question: str, exclude: str) -> list[str]:
    """Identifiers the question names (backticked or code-shaped), the member excluded."""
    found: list[str] = []
    for m in _BACKTICK.finditer(question):
        inner = m.group(1).strip()
        call = re.match(r"([A-Za-z_][\w.]*)\s*\(", inner)
        if call:
            found.append(call.group(1))
        elif _IDENT.fullmatch(inner):
            found.append(inner)
    bare = _BACKTICK.sub(" ", question)
    for tok in re.findall(r"[A-Za-z_][\w.]*(?:\(\))?", bare):
        # "e.g.", "i.e." are abbreviations, not dotted names.
        if _CODE_LIKE.match(tok) and any(len(p) > 1 for p in tok.split(".")):
            found.append(tok.rstrip("()"))
    return [o for o in dict.fromkeys(found) if o and o != exclude and not o.startswith("-")]


def _owner_after(question: str, name: str) -> str | None:
    """The word after the member and a preposition ("option to produce"), or None."""
    rx = _OWNER_AFTER.format(name=re.escape(name), kinds=_KIND_WORDS)
    m = re.search(rx, question, re.I)
    word = m.group(1) if m else ""
    return word if len(word) >= 3 and word.lower() not in _NOT_NAMES else None


def resolve_owners(
    named: list[NamedMember], source: EvidenceSource, question: str = ""
) -> list[NamedMember]:
    """Owners kept only when the index defines them (a symbol of that name). One it does not
    define (`minimum_unit`, a sibling parameter in "naturaldelta has minimum_unit; its
    maximum_unit option") gives way to the first name of the question it does define
    (`naturaldelta`); a guessed one with no such name is dropped."""
    out: list[NamedMember] = []
    for m in named:
        owned = bool(m.owner) and defined(m.owner, source)
        if m.plain and not _ABBREVIATION.match(m.name) and not owned:
            continue  # prose: "a stricter option", "a dict argument ... TypeError"
        if not m.owner or m.strict or defined(m.owner, source):
            out.append(m)
            continue
        other = _defined_word(question, {m.name, m.owner}, source)
        if other:
            out.append(replace(m, owner=other, guessed=False, borrowed=True))
        elif m.guessed:
            out.append(replace(m, owner="", guessed=False))
        else:
            # The writer's own type (`new MyParser(..., { lookaheadDepth: 5 })`): nothing of
            # the index to read its options from, so the member is absent only when the whole
            # index lacks it, and its neighbour is chosen as a bare name's.
            out.append(replace(m, owner="", strict=True))
    return out


def _defined_word(question: str, skip: set[str], source: EvidenceSource) -> str:
    """The first name of the question (code-shaped first, then a plain word) that a symbol
    of the index is named exactly so; "" when none."""
    names = [*_owners(question, ""), *re.findall(r"[A-Za-z_]\w{3,}", _BACKTICK.sub(" ", question))]
    for n in dict.fromkeys(names):
        if n in skip or n.lower() in _NOT_NAMES or n.lower() in _KINDS or n in LANGUAGE_NAMES:
            continue
        if defined(n, source):
            return n
    return ""


def defined(name: str, source: EvidenceSource) -> bool:
    """A symbol of the index is named exactly so (when the source can list symbols, as the
    engine does; else any mention of it)."""
    symbols_named = getattr(source, "symbols_named", None)
    if callable(symbols_named):
        return bool(symbols_named(name.rsplit(".", 1)[-1]))
    return source.symbol_exists(name)


def _plain_name(word: str) -> bool:
    """A plain lower-case word that may be a name: not a qualifier, not Portuguese."""
    return (
        bool(_PLAIN_WORD.match(word))
        and word not in _QUALIFIERS
        and not (portuguese_lexicon().lookup(word))
    )


def _capitalized_name(word: str, question: str) -> bool:
    """A capitalized word inside a sentence beside a method or attribute word, of an owner
    ("the Head method of BarStyle") or after the kind word ("o método Head"): a Go or C#
    member's name. Not a sentence's first word (capitalized by grammar), nor a proper noun
    qualifying a kind word ("the Python function foo")."""
    e = re.escape(word)
    return (
        bool(_CAPITALIZED.match(word))
        and word not in LANGUAGE_NAMES
        and bool(re.search(rf"(?<=[\w,;:] ){e}\b", question))
        and bool(
            re.search(rf"\b{e}\s+(?:{_KIND_WORDS})\s+(?:of|on|in|from|do|da|no|na)\b", question)
            or re.search(rf"\b(?:{_KIND_WORDS})\s+{e}\b", question, re.I)
        )
    )


def named_members(question: str) -> list[NamedMember]:
    """The members (options, parameters, flags, settings, methods, attributes) a question
    names, each with the owner it would belong to."""
    out: dict[str, NamedMember] = {}

    def add(
        name: str,
        kind: str,
        owner: str = "",
        code: bool = True,
        plain: bool = False,
        english: bool = False,
    ) -> None:
        """`code`: the name came in a code position (a call's keyword, a flag); otherwise it
        must look like code itself (backticked, snake_case, camelCase, UPPER_CASE), or be a
        plain lower-case word before or after an option/parameter/flag/setting word ("a
        strict flag"), then absent only if the index has it nowhere ("the version option"
        in a workspace that has `version` names nothing missing). `english`: the plain word
        stands before an English kind word, where prose is as common as a name ("a stricter
        option", "a dict argument"): it names something only beside an owner the index
        defines, or as an abbreviation (resolve_owners)."""
        name = _clean(name)
        if not name or name.lower() in _NOT_NAMES or name.lower() in _KINDS or len(name) < 2:
            return
        strict = weak = False
        if not code and f"`{name}`" not in question and not _CODE_NAME.match(name):
            if not (plain and kind in _WORD_KINDS and _plain_name(name)) and not (
                kind in _MEMBER_KINDS and _capitalized_name(name, question)
            ):
                return
            strict, weak = True, english and bool(_PLAIN_WORD.match(name))
        if name not in out:
            owners = [owner] if owner else _owners(question, name)
            after = None if owners else _owner_after(question, name)
            if kind in _MEMBER_KINDS and not owners and not after:
                return  # a function named alone: the unknown-symbol check's (grounds.py)
            out[name] = NamedMember(
                name, kind, owners[0] if owners else after or "", strict, bool(after), plain=weak
            )

    for m in _CALL_ARGS.finditer(question):
        for k in _ARG_KEY.finditer(m.group(2)):
            add(k.group(1), "parameter", m.group(1))
    for m in _NAME_THEN_KIND.finditer(question):
        # After the name's closing backtick: "the `x` field" is a field, not the default.
        kind_word = question[m.end(1) :].lstrip("`").split()[0].strip("`").lower()
        kind = _KINDS.get(kind_word.rstrip("s,.?"), _KINDS.get(kind_word, "option"))
        # A plain word names before an English kind word ("a strict flag") and after a
        # Portuguese one ("o argumento rng"); the other order is prose ("options declared",
        # "keyword inesperada", "carrega configuração"). Before "config" or "keyword" it is
        # prose ("nested config dicts", "an unexpected keyword").
        word = kind_word.rstrip("s,.?")
        english = word not in _PT_ONLY_KINDS
        add(m.group(1), kind, code=False, plain=english and word not in _PROSE_KINDS,
            english=english)  # fmt: skip
    for m in _KIND_THEN_NAME.finditer(question):
        kind_word = m.group(0).split()[0].lower()
        plain = kind_word in _PT_KINDS or bool(_CALLED.search(m.group(0)))
        add(m.group(1), _KINDS.get(kind_word, "option"), code=False, plain=plain)
    for m in _CLI_FLAG.finditer(question):
        add(m.group(1), "flag")
    # Bare names last, the owners of the members above left out: they are the context of
    # the question (one that is missing stays the unknown-symbol refusal's: grounds.py).
    owners = {m.owner.rsplit(".", 1)[-1] for m in out.values() if m.owner}
    for name, owner in bare_names(question):
        if name in out or name in owners or name.lower() in _NOT_NAMES or len(name) < 3:
            continue
        if owner and re.search(rf"(?<![\w.]){re.escape(owner)}\.{name}\s*=(?!=)", question):
            continue  # `draft.items.meta = 1`: the writer's own attribute, set in their code
        out[name] = NamedMember(name, NAME_KIND, owner, strict=True)
    return list(out.values())


def _spellings(name: str) -> set[str]:
    """`--no-color` is `no_color` or `noColor` in code; a setting may be upper case."""
    core = name.lstrip("-")
    snake = core.replace("-", "_")
    parts = [p for p in snake.split("_") if p]
    camel = parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:]) if parts else core
    return {core, snake, camel, snake.upper(), core.lower()}


def _has_word(text: str, spellings: set[str]) -> bool:
    """A spelling used as code: `.name`, `name=`, `name:`, `name(`, quoted, a flag, a
    definition, a Go field line (`Name Type`). Prose that only uses the word ("make it
    immutable") is no such member."""
    for s in spellings:
        e = re.escape(s)
        if re.search(
            rf"(?:[.`'\"$]|--|\b(?:def|func|function|fn|var|let|const|class|type)\s+){e}(?!\w)"
            rf"|(?<![\w-]){e}\s*(?:\??:|=(?!=)|\(|`|'|\")"
            rf"|^[ \t]*{e}[ \t]+[\w*\[]",
            text,
            re.M,
        ):
            return True
    return False


def _found_elsewhere(source: EvidenceSource, name: str, spellings: set[str]) -> bool:
    """With no owner to read, the name itself searched (no gate): a flag or setting the
    evidence's files lack may still be code elsewhere (`--version` in another module)."""
    params = SearchParams(query=name, top_k=5, path_prefix=None, language=None, min_score=None)
    return any(_has_word(h.text, spellings) for h in source.search(params))


def _owned_by(ev: Evidence, owner: str) -> bool:
    """The evidence defines the owner or is one of its members."""
    last = owner.rsplit(".", 1)[-1]
    return bool(ev.hit.symbol) and last in ev.hit.symbol.split(".")


def _defines(ev: Evidence, owner: str) -> bool:
    """The evidence is the code definition of `owner` (a README section titled after the
    package is not the package)."""
    last = owner.rsplit(".", 1)[-1]
    return is_code_definition(ev.hit) and ev.hit.symbol.rsplit(".", 1)[-1] == last


def _params(text: str) -> list[str] | None:
    """Parameter names of the first function signature in `text`; None when it has none."""
    sig = re.search(r"\b(?:def|function|func|fn)\s+(?:\([^)]*\)\s*)?\w+\s*(?:<[^>]*>)?\(", text)
    if sig is None:
        sig = re.search(r"^\s*(?:constructor|\w+\s*=\s*(?:async\s*)?)\(", text, re.M)
    if sig is None:
        return None
    depth, i, start = 1, sig.end(), sig.end()
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    names: list[str] = []
    for part in re.split(r",(?![^\[\](){}<>]*[\])}>])", text[start : i - 1]):
        m = _PARAM_NAME.match(part.replace("...", ""))
        if m and m.group(1) not in ("self", "cls", "this"):
            names.append(m.group(1))
    return names


_CONTAINER_KINDS = frozenset({"class", "interface", "struct", "type", "enum", "trait"})


def members_of(ev: Evidence, evidences: Sequence[Evidence] = ()) -> list[str]:
    """What a definition has: a function's parameters; a class's constructor parameters (from
    its constructor's evidence, when there) and its field or option lines (`name: type`,
    `name = value`, Go's `Name Type`)."""
    names: list[str] = []
    if ev.hit.kind in _CONTAINER_KINDS:
        ctor = next(
            (
                e
                for e in evidences
                if e.hit.symbol.rsplit(".", 1)[0] == ev.hit.symbol
                and e.hit.symbol.rsplit(".", 1)[-1] in ("__init__", "constructor", "__new__")
            ),
            None,
        )
        names = (_params(ctor.text) or []) if ctor else []
        names += _PROPERTY.findall(ev.text) + _GO_FIELD.findall(ev.text)
    else:
        names = _params(ev.text) or []
    return list(dict.fromkeys(n for n in names if n not in ("self", "cls")))[:40]


def find_absent(question: str, evidences: list[Evidence], source: EvidenceSource) -> list[Absence]:
    """The members the question names that neither the evidence nor its files hold."""
    named = resolve_owners(named_members(question), source, question)
    if not named or not evidences:
        return []
    files: dict[tuple[str, str], str] = {}
    for ev in evidences:
        key = (ev.hit.project, ev.path)
        if key not in files:
            files[key] = source.read_text(*key) or ev.text
    seen_text = "\n".join([*(e.text for e in evidences), *files.values()])
    out: list[Absence] = []
    for member in named:
        if member.strict:
            found = _strict_absence(member, named, evidences, source, seen_text, question)
            if found is not None:
                out.append(found)
            continue
        spellings = _spellings(member.name)
        # The owner's own definition (and its members: a class's constructor) is where its
        # options live; only without it are the whole files read (`copy` is code in attrs,
        # not a parameter of `define`).
        owned = [
            e.text
            for e in evidences
            if member.owner and not member.borrowed and _owned_by(e, member.owner)
        ]
        if _has_word("\n".join(owned) if owned else seen_text, spellings):
            continue
        if not owned and _found_elsewhere(source, member.name, spellings):
            continue
        if member.kind in _MEMBER_KINDS and any(written(s, source) for s in sorted(spellings)):
            continue
        nearest = next((e for e in evidences if member.owner and _defines(e, member.owner)), None)
        returned = returned_type(member, source)
        typed = [e for e in evidences if returned and _defines(e, returned)]
        typed.sort(key=lambda e: is_stub(e.path))
        nearest = typed[0] if typed else nearest
        if nearest is None and member.owner:
            # A member of the owner (`Client.request` for `httpx.Client`), else a mention.
            nearest = next((e for e in evidences if _owned_by(e, member.owner)), None)
            nearest = nearest or next((e for e in evidences if member.owner in e.text), None)
        if nearest is None and member.kind == "flag":
            found = _flag_absence(member, evidences, question)
            if found is not None:
                out.append(found)
                continue
        spelled = None if member.owner else spelled_like(member.name, evidences)
        if nearest is None and spelled is None:  # named alone, nothing spelled like it here
            found = _with_neighbour(
                member, named, evidences, question, meaning=name_meaning(source), source=source
            )
            if found is not None:
                out.append(found)
                continue
        nearest = nearest or (spelled[0] if spelled else evidences[0])
        has = members_of(nearest, evidences)
        close = difflib.get_close_matches(member.name.lstrip("-"), has, n=1, cutoff=0.5)
        if spelled and not close:
            close = [spelled[1]]
        out.append(
            Absence(
                member.name,
                member.kind,
                member.owner,
                nearest,
                has[:_LISTED],
                close[0] if close else "",
            )
        )
    return out


def _flag_absence(member: NamedMember, evidences: list[Evidence], question: str) -> Absence | None:
    """A flag no code declares: the command declaring the real ones is its neighbour
    (`run` with `--override/--no-override` for `dotenv run --dry-run`), its flags listed."""
    i = command_passage([(e.hit, e.text) for e in evidences], question)
    if i < 0:
        return None
    command = evidences[i]
    has = declared_flags(command.text)
    close = difflib.get_close_matches(member.name, has, n=1, cutoff=0.5)
    owner = command.hit.symbol.rsplit(".", 1)[-1]
    return Absence(
        member.name, member.kind, owner, command, has[:_LISTED], close[0] if close else ""
    )


def exists_anywhere(name: str, source: EvidenceSource, seen_text: str = "") -> bool:
    """Some spelling of `name` is a whole word of the evidence's files or of the index (a
    symbol, an identifier, a config key, a word of the docs)."""
    spellings = _spellings(name)
    if any(re.search(rf"(?<![\w-]){re.escape(s)}(?!\w)", seen_text) for s in spellings):
        return True
    return any(written(s, source) for s in sorted(spellings))


def written(name: str, source: EvidenceSource) -> bool:
    """`name` is in the index in this very spelling. The lexical index folds case, so
    `maxSize` (the camelCase spelling of a missing `max_size`) would match `maxsize`: a hit
    of the name searched must hold it as written (or define it)."""
    if not source.symbol_exists(name):
        return False
    symbols_named = getattr(source, "symbols_named", None)
    if callable(symbols_named) and symbols_named(name):
        return True
    word = re.compile(rf"(?<![\w-]){re.escape(name)}(?!\w)")
    params = SearchParams(query=name, top_k=10, path_prefix=None, language=None, min_score=None)
    hits = source.search(params)
    return not hits or any(h.symbol.rsplit(".", 1)[-1] == name or word.search(h.text) for h in hits)


def _strict_absence(
    member: NamedMember,
    named: Sequence[NamedMember],
    evidences: list[Evidence],
    source: EvidenceSource,
    seen_text: str,
    question: str = "",
) -> Absence | None:
    """A name found nowhere in the index, with its real neighbour among the evidence (None
    when it exists, or when no code neighbour is in the evidence: the unknown-symbol refusal
    then stands)."""
    if exists_anywhere(member.name, source, seen_text):
        return None
    context = context_paths(question, named, source)
    return _with_neighbour(
        member, named, evidences, question, context, name_meaning(source), source
    )


def _with_neighbour(
    member: NamedMember,
    named: Sequence[NamedMember],
    evidences: list[Evidence],
    question: str = "",
    context: frozenset[str] = frozenset(),
    meaning: MeaningScores | None = None,
    source: EvidenceSource | None = None,
) -> Absence | None:
    """The absence of `member` citing its neighbour: the definition of the owner it was
    written on (`Event` of `Event.OldName`; the class `Cache` of a variable `cache`), else the
    name spelled most like it (in the module it was written on: `keys` of `keys.instancekey`,
    else where the question's words point: spelled_neighbour), else another name of the
    question defined here, else the best code definition of the evidence."""
    has: list[str] = []
    closest, how = "", HOW_OWNER
    module = [e for e in evidences if member.owner and _in_module(e.path, member.owner)]
    if module and source is not None:
        package = member.owner.rsplit(".", 1)[-1]
        foreign = foreign_go_folders([e.hit for e in module], package, source)
        module = [e for e in module if hit_folder(e.hit) not in foreign]
    nearest = owner_definition(evidences, member.owner, module=bool(module))
    if nearest is not None:
        has = members_of(nearest, evidences)
        close = difflib.get_close_matches(member.name, has, n=1, cutoff=0.5)
        closest = close[0] if close else nearest.hit.symbol.rsplit(".", 1)[-1]
    else:
        pool = module or evidences
        i, closest = spelled_neighbour(
            member.name,
            [(e.hit, e.text) for e in pool],
            question,
            context,
            member=bool(member.owner) and not module,
            meaning=meaning,
            owner=member.owner,
        )
        nearest, how = (pool[i], HOW_SPELLED) if i >= 0 else (None, how)
        if nearest is None and module:
            nearest, how = module[0], HOW_OWNER
            closest = nearest.hit.symbol.rsplit(".", 1)[-1]
    if nearest is None:
        others = [m.owner or m.name for m in named if m.name != member.name]
        nearest = next((e for o in others for e in evidences if o and _defines(e, o)), None)
        how = HOW_NAMED
        if nearest is None:
            nearest = next((e for e in evidences if is_code_definition(e.hit)), None)
            how = HOW_BEST
        closest = nearest.hit.symbol.rsplit(".", 1)[-1] if nearest else ""
    if nearest is None:
        return None
    return Absence(member.name, member.kind, member.owner, nearest, has[:_LISTED], closest, how)


def owner_definition(
    evidences: Sequence[Evidence], owner: str, module: bool = False
) -> Evidence | None:
    """The evidence defining `owner`. A lower-case owner written as a receiver (`cache` of
    `cache.resize(...)`) is a variable: the class spelled like it (`Cache`) comes before a
    member that happens to share its name (`_WrapperBase.cache`). One that names a module or
    package of the evidence (`module`: `dotenv.x`, `parser.x`) is that module, defined by no
    single passage, unless a top-level definition has its very name."""
    if not owner:
        return None
    last = owner.rsplit(".", 1)[-1]
    if last[:1].islower():
        # A top-level definition of that very name (`ttl_cache`) is the owner itself.
        top = next(
            (e for e in evidences if e.hit.symbol == last and is_code_definition(e.hit)), None
        )
        if module:
            return top
        cls = next((e for e in evidences if _class_named(e.hit, last)), None)
        if top or cls:
            return top or cls
    return next((e for e in evidences if _defines(e, owner)), None)


_RETURNS = re.compile(r"\)\s*(?:->|:)\s*([A-Z]\w*)")


def returned_type(member: NamedMember, source: EvidenceSource) -> str:
    """The type a function owner returns, when the member is a field ("the `evictions` field
    in cache_info()": a function has no fields, what it returns does), from the owner's
    signatures in the symbol table (a stub's `-> CacheInfo` included); "" otherwise."""
    symbols_named = getattr(source, "symbols_named", None)
    if member.kind != "attribute" or not member.owner or not callable(symbols_named):
        return ""
    for sym in symbols_named(member.owner.rsplit(".", 1)[-1]):
        m = _RETURNS.search(sym.signature or "")
        if m and m.group(1) not in ("None", "Any", "Promise"):
            return m.group(1)
    return ""


def _class_named(hit: SearchHit, variable: str) -> bool:
    """The hit is a class the variable is named after: `Cache` for `cache`, `RetryCallState`
    for `retry_state` (the variable's parts, in order, among the class's)."""
    if hit.kind not in _CONTAINER_KINDS:
        return False
    cls = hit.symbol.rsplit(".", 1)[-1]
    if cls.lower() == variable.lower():
        return True
    want, have = name_parts(variable), iter(name_parts(cls))
    return len(want) >= 2 and all(p in have for p in want)


def _in_module(path: str, owner: str) -> bool:
    """`path` is in the module or package `owner` names (`keys` -> `src/pkg/keys.py`, `a.b`
    -> `a/b.ts`; a package is a folder: `decor` -> `decor/name.go`, `pkg` ->
    `src/pkg/i18n.py`)."""
    last = owner.rsplit(".", 1)[-1]
    *folders, name = path.split("/")
    stem = name.split(".", 1)[0]
    return bool(last) and (stem == last or last in folders) and not is_test_path(path)


def _package_folder(paths: Sequence[str], owner: str) -> str | None:
    """The folder (`src/dotenv/`, `decor/`) of the package `owner` names, from paths in it;
    None when the owner is a file's module (`keys.py`) or no path is in it."""
    last = owner.rsplit(".", 1)[-1]
    for p in paths:
        folders = p.split("/")[:-1]
        if last in folders:
            return "/".join(folders[: folders.index(last) + 1]) + "/"
    return None


def context_paths(
    question: str, named: Sequence[NamedMember], source: EvidenceSource
) -> frozenset[str]:
    """Files defining the names the question writes besides its missing ones (`LRUCache` in
    "max_size ... an LRUCache"): where a missing name would live."""
    symbols_named = getattr(source, "symbols_named", None)
    if not callable(symbols_named):
        return frozenset()
    missing = {m.name for m in named}
    names = [*_owners(question, ""), *(m.owner for m in named if m.owner)]
    paths: set[str] = set()
    for n in dict.fromkeys(names):
        last = n.rsplit(".", 1)[-1]
        if last and last not in missing:
            paths.update(s.path for s in symbols_named(last) if not is_test_path(s.path))
    return frozenset(paths)


_KIND_NAMES = {
    "en": {
        "option": ("option", "options"),
        "parameter": ("parameter", "parameters"),
        "flag": ("flag", "flags"),
        "setting": ("setting", "settings"),
        "method": ("method", "members"),
        "attribute": ("attribute", "members"),
        NAME_KIND: ("name", "members"),
    },
    "pt": {
        "option": ("a opção", "estas são as suas opções"),
        "parameter": ("o parâmetro", "estes são os seus parâmetros"),
        "flag": ("a flag", "estas são as suas flags"),
        "setting": ("a configuração", "estas são as suas configurações"),
        "method": ("o método", "estes são os seus membros"),
        "attribute": ("o atributo", "estes são os seus membros"),
        NAME_KIND: ("o nome", "estes são os seus membros"),
    },
}


def absence_sentence(a: Absence, language: str | None) -> str:
    """ "`parseISO` has no `strict` option; these are its options: … [E1]." in the question's
    language (Portuguese or English)."""
    pt = language == "pt"
    if a.kind == NAME_KIND:
        return _name_sentence(a, pt)
    one, many = _KIND_NAMES["pt" if pt else "en"][a.kind]
    cite = f" [{a.nearest.id}]" if a.nearest else ""
    listed = ", ".join(f"`{h}`" for h in a.has)
    where = a.owner
    if pt:
        head = (
            f"`{where}` não tem {one} `{a.name}`"
            if where
            else f"{one[0].upper()}{one[1:]} `{a.name}` não existe neste workspace"
        )
        tail = f"; {many}: {listed}" if listed else ""
        if a.closest:
            tail += (
                f" (o mais próximo: `{a.closest}`)"
                if listed
                else f"; o mais próximo é `{a.closest}`"
            )
        return f"{head}{tail}.{cite}"
    head = f"`{where}` has no `{a.name}` {one}" if where else f"No `{a.name}` {one} exists here"
    tail = f"; these are its {many}: {listed}" if listed else ""
    if a.closest:
        tail += f" (the closest: `{a.closest}`)" if listed else f"; the closest is `{a.closest}`"
    return f"{head}{tail}.{cite}"


def _name_sentence(a: Absence, pt: bool) -> str:
    """ "`OldName` does not exist here (not in `Event`); the closest is `Name` [E1]." """
    cite = f" [{a.nearest.id}]" if a.nearest else ""
    listed = ", ".join(f"`{h}`" for h in a.has)
    if pt:
        where = f" (não está em `{a.owner}`)" if a.owner else ""
        tail = f"; o mais próximo é `{a.closest}`" if a.closest else ""
        tail += f"; estes são os seus membros: {listed}" if listed else ""
        return f"`{a.name}` não existe neste workspace{where}{tail}.{cite}"
    where = f" (not in `{a.owner}`)" if a.owner else ""
    tail = f"; the closest is `{a.closest}`" if a.closest else ""
    tail += f"; these are its members: {listed}" if listed else ""
    return f"`{a.name}` does not exist here{where}{tail}.{cite}"


def absence_fact(a: Absence) -> str:
    """The prompt's instruction for one absence (English: the prompt's language)."""
    near = (
        f" The closest real thing is {a.nearest.id}"
        + (f" (`{a.nearest.hit.symbol}`)" if a.nearest and a.nearest.hit.symbol else "")
        if a.nearest
        else ""
    )
    has = f" What it has: {', '.join(a.has)}." if a.has else ""
    owner = f" of `{a.owner}`" if a.owner else ""
    kind = "" if a.kind == NAME_KIND else f" {a.kind}"
    closest = f" The closest name is `{a.closest}`." if a.closest else ""
    return (
        f"Checked against the workspace: there is no `{a.name}`{kind}{owner}; say first and "
        f"plainly that it does not exist, then cite the real neighbour.{near}.{has}{closest}"
    )


def spelled_like(name: str, evidences: Sequence[Evidence]) -> tuple[Evidence, str] | None:
    """The evidence holding the identifier spelled most like `name` (a setting named without
    an owner: `SESSION_COOKIE_ENCRYPT` -> `SESSION_COOKIE_SECURE`), and that identifier."""
    best: tuple[float, Evidence, str] | None = None
    want = name.lstrip("-").lower()
    for ev in evidences:
        for ident in set(_IDENT_WORD.findall(ev.text)):
            if abs(len(ident) - len(want)) > 8:
                continue
            ratio = difflib.SequenceMatcher(None, want, ident.lower()).ratio()
            if ratio >= _SPELLED_MIN and (best is None or ratio > best[0]):
                best = (ratio, ev, ident)
    return (best[1], best[2]) if best else None


def _owner_rank(symbol: str, owners: set[str]) -> int:
    """0: the hit defines an owner; 1: it is a member of one (its constructor); 2: neither."""
    parts = symbol.split(".") if symbol else []
    if parts and parts[-1] in owners:
        return 0
    return 1 if any(p in owners for p in parts[:-1]) else 2


def neighbour_hits(question: str, params: SearchParams, source: EvidenceSource) -> list[SearchHit]:
    """When nothing clears minScore, the definitions of the owners a near-miss question names
    (`parseISO` for its missing `strict` option), searched without the gate: a thing that
    does not exist makes the whole list look unanswerable, yet its owner is the answer's
    neighbour. Only definitions of a named owner are returned, at most NEIGHBOUR_HITS; for a
    bare name the index lacks, its neighbours (strict_neighbour_hits)."""
    named = resolve_owners(named_members(question), source, question)
    members = [m for m in named if not m.strict]
    owners = {m.owner.rsplit(".", 1)[-1] for m in members if m.owner}
    if not named:
        return []
    hits = source.search(replace(params, min_score=None, top_k=max(params.top_k, 10)))
    strict = strict_neighbour_hits(named, hits, params, source, question)
    if not members:
        return strict
    # A flag: the command declaring flags, the one the question names first.
    flag = [h for h in hits if any(m.kind == "flag" for m in members)]
    at = command_passage([(h, h.text) for h in flag], question)
    commands = [flag[at]] if at >= 0 else []
    if not owners:  # a setting named alone: the hits holding a name spelled like it
        names = [m.name.lstrip("-").lower() for m in members]
        return [
            h
            for h in hits
            if any(
                difflib.get_close_matches(n, [w.lower() for w in _IDENT_WORD.findall(h.text)],
                                          n=1, cutoff=_SPELLED_MIN)
                for n in names
            )
        ][:NEIGHBOUR_HITS] + commands + strict  # fmt: skip
    ranked = sorted(
        (h for h in hits if _owner_rank(h.symbol, owners) < 2),
        key=lambda h: _owner_rank(h.symbol, owners),
    )
    # A field of what a function returns: the returned type's definition, code before stubs.
    for t in dict.fromkeys(filter(None, (returned_type(m, source) for m in members))):
        found = _search_alone(source, params, t)
        ranked = (
            sorted(
                (h for h in found if h.symbol.rsplit(".", 1)[-1] == t),
                key=lambda h: is_stub(h.path),
            )[:1]
            + ranked
        )
    if not ranked:  # the owner alone: a bare identifier is a navigation query (search/names.py)
        for owner in sorted({m.owner for m in members if m.owner}):
            found = _search_alone(source, params, owner)
            ranked += [h for h in found if _owner_rank(h.symbol, owners) == 0][:1]
    return ranked[:NEIGHBOUR_HITS] + strict


def _search_alone(
    source: EvidenceSource, params: SearchParams, query: str, *, top_k: int | None = None
) -> list[SearchHit]:
    """The index searched for `query` as written (no rewrite) and ungated (no minScore): a
    name's definition or its neighbours, under the question's own filters."""
    asked = replace(params, query=query, rewrite=None, min_score=None)
    return source.search(asked if top_k is None else replace(asked, top_k=top_k))


def strict_neighbour_hits(
    named: Sequence[NamedMember],
    hits: list[SearchHit],
    params: SearchParams,
    source: EvidenceSource,
    question: str = "",
) -> list[SearchHit]:
    """For each bare name the index lacks (`AddRecursive`), the passages its answer may cite:
    the definition of the owner it was written on, the definition spelled most like it (its
    parts searched: "add recursive"), the definition of another name of the question, and the
    best code definition for the whole question (`hits`, ungated)."""
    out: list[SearchHit] = []
    for m in named:
        # A member with an owner is the owner's (neighbour_hits); one named alone is like a
        # bare name.
        if (m.owner and not m.strict) or exists_anywhere(m.name, source):
            continue
        module: list[SearchHit] = []
        if m.owner:
            last = m.owner.rsplit(".", 1)[-1]
            # Wide enough for the class `Cache` of a variable `cache` below members named so.
            wide = max(params.top_k, 20)
            found = _search_alone(source, params, last, top_k=wide)
            top = [h for h in found if h.symbol == last and is_code_definition(h)]
            # `keys.instancekey`: the module `keys`; `decor.X`, `dotenv.x`, `parser.x`: the
            # package's folder (before a class spelled like it: `DotEnv`, `Parser`). The
            # question's own hits there first, then its words searched in the folder.
            module = [] if top else [h for h in [*hits, *found] if _in_module(h.path, last)]
            folder = _package_folder([h.path for h in module], last)
            if folder:
                words = " ".join(name_parts(m.name)) or m.name
                inside = _search_alone(source, replace(params, path_prefix=folder), words)
                module += [h for h in inside if not is_test_path(h.path)]
            # A Go package is what its files' clause says (`cmd/jwt` may be `package main`).
            foreign = foreign_go_folders(module, last, source)
            module = [h for h in module if hit_folder(h) not in foreign]
            cls = [h for h in found if last[:1].islower() and _class_named(h, last)]
            owner_hits = (
                top
                or ([] if module else cls)
                or ([] if module else [h for h in found if _owner_rank(h.symbol, {last}) == 0])
            )
            out += owner_hits[:1]
        words = " ".join(name_parts(m.name)) or m.name
        by_name = _search_alone(source, params, words)
        # Each strong part alone (`patches` of `revertPatches`): the names sharing it
        # (`applyPatches`, `enablePatches`), for the question's words to choose among.
        by_part = [h for p in strong_parts(m.name)[:2] for h in _search_alone(source, params, p)]
        # The name with a word swapped for one of the same sense, when a symbol is so named
        # (`cache_clear` for `cache_invalidate`): searched for its definition.
        by_sense = [
            h
            for v in same_sense_names(m.name)
            if defined(v, source)
            for h in _search_alone(source, params, v)
            if h.symbol.rsplit(".", 1)[-1] == v
        ]
        # The definitions of the other names the question writes (`createDraft` beside a
        # missing `discardDraft`): where its own words point.
        by_other = [
            h
            for o in [n.name for n in named if n.name != m.name and not n.owner][:2]
            for h in _search_alone(source, params, o)
            if h.symbol.rsplit(".", 1)[-1] == o
        ]
        pool = [*module, *hits, *by_name, *by_other, *by_part, *by_sense]
        if module:  # a module's member is one of its names
            pool = [h for h in pool if _in_module(h.path, m.owner)]
        context = context_paths(question, named, source)
        i, alike = spelled_neighbour(
            m.name,
            [(h, h.text) for h in pool],
            question,
            context,
            member=bool(m.owner) and not module,
            meaning=name_meaning(source),
            owner=m.owner,
        )
        caller: SearchHit | None = None
        alike_hits: list[SearchHit] | None = None  # the name spelled alike, searched once
        if i >= 0 and internal(alike, pool[i].language) and not internal(m.name, pool[i].language):
            # An internal name the pool has no public caller of: its callers searched.
            found = alike_hits = _search_alone(source, params, alike)
            at = public_caller(alike, [(h, h.text) for h in found])
            caller = found[at] if at >= 0 else None
        if caller is not None:
            out.append(caller)
        elif i >= 0:
            out.append(pool[i])
            # Where the name spelled alike is defined (in the question's context first, then
            # in a file the question names: "the inotify limit"), when the passage only
            # mentions it or is a copy elsewhere.
            said = question_words(question)
            elsewhere = (context and pool[i].path not in context) or not (
                pool[i].symbol.rsplit(".", 1)[-1] == alike or defines(pool[i].text, alike)
            )
            if elsewhere or not file_words(pool[i].path) & said:
                if alike_hits is None:
                    alike_hits = _search_alone(source, params, alike)
                named_so = [
                    h
                    for h in alike_hits
                    if (h.symbol.rsplit(".", 1)[-1] == alike or defines(h.text, alike))
                    # Only to find a copy in a named file, no other copy is added.
                    and (elsewhere or file_words(h.path) & said)
                ]
                named_so.sort(key=lambda h: (h.path not in context, not file_words(h.path) & said))
                out += named_so[:1]
        elif module:
            out.append(module[0])
        others = {o.owner.rsplit(".", 1)[-1] or o.name for o in named if o.name != m.name}
        out += [h for h in hits if h.symbol and h.symbol.rsplit(".", 1)[-1] in others][:1]
        out += [h for h in pool if is_code_definition(h)][:1]
    unique = {(h.path, h.start_line, h.end_line): h for h in reversed(out)}
    return list(reversed(unique.values()))[: NEIGHBOUR_HITS + 2]


def needs_neighbour(
    evidences: list[Evidence], absent: list[Absence], question: str, missing: Sequence[str] = ()
) -> bool:
    """No evidence while the question names a member of an owner, a member said absent whose
    owner's definition is not among the evidence (its nearest is then only a mention), a bare
    name whose neighbour among the evidence is only the best code there, or a name refused as
    unknown (`missing`: it may have a neighbour below the gate)."""
    if not evidences:
        return bool(named_members(question))
    # A bare name's neighbour chosen among the evidence alone may be a mere mention: its own
    # words searched bring the names alike in spelling and meaning (strict_neighbour_hits).
    if missing or any(a.how in (HOW_BEST, HOW_SPELLED) for a in absent):
        return True
    # A plain word named with a kind word ("which seed parameter") that the evidence does not
    # hold and that was not said absent: no code neighbour was among the evidence (a
    # changelog line), so its neighbours are searched (the absence is then checked there).
    said = {a.name for a in absent}
    text = "\n".join(e.text for e in evidences)
    if any(
        m.strict
        and m.name not in said
        and not _has_word(text, _spellings(m.name))
        and not re.search(rf"(?<![\w-]){re.escape(m.name)}(?!\w)", text)
        for m in named_members(question)
    ):
        return True
    if any(a.kind == "flag" and not a.has for a in absent):
        return True  # a flag answered without the command declaring the real ones
    return any(a.owner and (a.nearest is None or not _defines(a.nearest, a.owner)) for a in absent)
