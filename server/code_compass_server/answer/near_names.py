"""Names a question spells as code without saying what kind of thing they are ("pass
max_retries to the decorator", "call AddRecursive", `Event.OldName`, `gaussian=True`), and the
real name of the index spelled most like one that does not exist.

Writers name a missing thing bare far more often than as "the `x` option": a name is a
candidate here by its shape alone (snake_case, camelCase, PascalCase with an inner capital,
dotted `A.b`, a call `f()`, a keyword `name=`), never a plain word (those need a kind word:
absent.named_members). Whether it exists is the index's answer (answer/absent.py); this module
only reads the question and compares spellings.
"""

from __future__ import annotations

import builtins
import difflib
import re
from collections.abc import Iterable, Sequence

from code_compass_server.answer.name_meaning import MeaningScores, doc_line
from code_compass_server.answer.verify import identifiers
from code_compass_server.constants import STUB_SUFFIXES
from code_compass_server.query.lexicon import portuguese_lexicon
from code_compass_server.records import SearchHit

_BACKTICK = re.compile(r"`([^`]+)`")
# A method called on a call's result (`BarStyle().Head("=>")`): the method, owned by the call.
_CHAINED = re.compile(r"\b([A-Za-z_]\w*)\([^()]*\)\.([A-Za-z_]\w*)\s*\(")
# A quoted literal passed as an argument or assigned (`set_locale('fr_FR')`, `fmt="%d_x"`) is a
# value, not a name; a name quoted in prose ("the 'max_size' option") stays one.
_QUOTED = re.compile(r"(?<=[(,=:\[])\s*(?:'[^'\n]*'|\"[^\"\n]*\")")
# A call's argument list (no nested parentheses) in the question's own code.
_CALL = re.compile(r"\b[A-Za-z_][\w.]*\(([^()]*)\)")
# A variable the writer's own snippet reads: `${DB_HOST:-localhost}`, `$HOME` (shell, .env).
_INTERPOLATED = re.compile(r"\$\{?([A-Za-z_]\w*)")
_ENV_LINE = re.compile(r"`([A-Za-z_]\w*)=[^`]*\$")
# An argument that is a variable, or an attribute of one (`allTokens`, `ctx.expression`,
# `this.someRule`): the last part lower-case first. A constant or type (`decor.ET_STYLE`,
# `Create`) is the library's, a call or keyword is code the question asks about.
_VALUE_ARG = re.compile(r"^\s*(?:[A-Za-z_]\w*\.)*([a-z_][A-Za-z0-9_]*)\s*$")
# `name=value` in prose: a keyword argument, code by its position ("pass gaussian=True").
_KWARG = re.compile(r"(?<![\w.=!<>])([A-Za-z_][A-Za-z0-9_]{2,})=(?!=)")
# Identifier parts: snake_case pieces, camelCase humps, digits.
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# Code-shaped identifiers a passage holds (one part alone is a word, not a name).
_TEXT_IDENT = re.compile(
    r"(?<![\w])(?:_*[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*"
    r"|[A-Z]{2,}[a-z]\w*)"  # an acronym first: `WCSyncWidth`, `HTTPServer`
)
# Parts too common to make two names alike on their own.
_WEAK_PARTS = frozenset(
    {"get", "set", "is", "has", "new", "the", "to", "of", "on", "in", "by", "for", "with"}
    | {"from", "and", "or", "not", "no", "if", "do", "at", "as", "max", "min"}
)
# Words that name the same action or measure in identifiers (`dropBar` is what a `RemoveBar`
# would be, `cache_clear` a `cache_invalidate`): a shared part when two names differ by them.
_SAME_SENSE = (
    {"remove", "delete", "drop", "discard", "erase", "clear", "evict", "purge", "invalidate"},
    {"add", "insert", "append", "push"},
    {"fetch", "read", "load", "retrieve", "lookup"},
    {"put", "write", "store", "save"},
    {"start", "begin", "launch"},
    {"stop", "halt", "cancel", "abort", "terminate", "shutdown"},
    {"create", "make", "build", "construct"},
    {"count", "size", "length", "len", "total"},
    {"maximum", "max", "upper", "ceil", "ceiling"},
    {"minimum", "min", "lower", "floor"},
    {"error", "err", "exception", "failure"},
    {"callback", "hook", "listener", "handler"},
)
_SENSE = {w: i for i, group in enumerate(_SAME_SENSE) for w in group}
_SAME_SENSE_OF = {**dict(enumerate(_SAME_SENSE)), -1: set()}
_ONE_WORD_MIN = 6  # a one-word name's word said in a passage: long enough to mean one thing
PARTS_MIN = 0.5  # share of the longer name's parts two names must have in common
SPELLED_MIN = 0.75  # or this SequenceMatcher ratio of the lower-cased names
# Names of the languages themselves, not of a workspace (`KeyboardInterrupt`, `Promise`): a
# question about how the code treats them names nothing missing.
LANGUAGE_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("_")) | frozenset(
    {"Promise", "Object", "Array", "JSON", "Map", "Set", "WeakMap", "WeakSet", "Symbol"}
    | {"Error", "TypeError", "RangeError", "SyntaxError", "AbortController", "AbortSignal"}
    | {"setTimeout", "setInterval", "clearTimeout", "clearInterval", "queueMicrotask"}
    | {"ReadableStream", "WritableStream", "TextEncoder", "TextDecoder", "URLSearchParams"}
)
_TEST_PATH = re.compile(r"(?:^|/)(?:tests?|spec|__tests__|testing)/|(?:^|/)test_[^/]*$|_test\.\w+$")
_DOC_LANGUAGES = frozenset({"markdown", "rst", "text", "plaintext", "restructuredtext", ""})


def bare_names(question: str) -> list[tuple[str, str]]:
    """(name, owner) of each code-shaped name of the question: `Event.OldName` is `OldName`
    with the owner `Event`; a call or keyword is its name; owner "" when none is written."""
    out: dict[str, str] = {}
    values = writer_values(question)
    question = _QUOTED.sub("''", question)
    # Code written in backticks with its arguments (`revertPatches(state, patches)`) names
    # its call too; identifiers() keeps a backticked span only when it is one name.
    spans = [identifiers(m.group(1)) for m in _BACKTICK.finditer(question)]
    for tok in [*identifiers(question), *(t for span in spans for t in span)]:
        name = tok.split("(", 1)[0]
        owner, _, last = name.rpartition(".")
        if last and not last[0].isdigit() and last not in LANGUAGE_NAMES:
            out.setdefault(last, owner)
    for m in _CHAINED.finditer(question):
        if m.group(2) not in LANGUAGE_NAMES:
            out.setdefault(m.group(2), m.group(1))
    for m in _KWARG.finditer(question):
        out.setdefault(m.group(1), "")
    return [(n, o) for n, o in out.items() if n not in values]


def writer_values(question: str) -> set[str]:
    """Names the question's own code uses as data, not as the thing it asks about: a
    variable or attribute passed as a positional argument (`new MyParser(allTokens, ...)`,
    `this.visit(ctx.expression)`) and a variable its snippet interpolates
    (`URL=${DB_HOST:-localhost}`). Such a name is the writer's wherever else the question
    repeats it ("a DB_HOST defined earlier")."""
    found = set(_INTERPOLATED.findall(question))
    # A line of the writer's .env or shell opening a code span (`URL=${DB_HOST}`): its
    # variable is theirs too.
    found.update(m.group(1) for m in _ENV_LINE.finditer(question))
    for call in _CALL.finditer(_QUOTED.sub("''", question)):
        for arg in re.split(r",(?![^\[\]{}]*[\]}])", call.group(1)):
            m = _VALUE_ARG.match(arg)
            if m and m.group(1) not in LANGUAGE_NAMES:
                found.add(m.group(1))
    return found


def question_words(question: str) -> set[str]:
    """The question's words, lower-cased (a Portuguese word with its English ones from the
    lexicon: "aplicar" says `apply`), and its names as written."""
    words = {w.lower() for w in re.findall(r"[^\W\d_]{3,}", question)}
    lexicon = portuguese_lexicon()
    english = {e for w in words if (entry := lexicon.lookup(w)) for e in entry.english}
    return words | english | set(re.findall(r"[A-Za-z_]\w+", question))


def name_parts(name: str) -> list[str]:
    return [p.lower() for p in _PART.findall(name.lstrip("-"))]


def same_sense_names(name: str) -> list[str]:
    """`name` spelled with one word swapped for one of the same sense, in its own style and
    with either first letter (`cache_invalidate` -> `cache_clear`, ...; `RemoveBar` ->
    `dropBar`, ...): names to look up, not guesses to cite."""
    parts = name_parts(name)
    out: list[str] = []
    for i, p in enumerate(parts):
        for w in sorted(_SAME_SENSE_OF[_SENSE.get(p, -1)] - {p}):
            swapped = [*parts[:i], w, *parts[i + 1 :]]
            if "_" in name.strip("_"):
                out.append("_".join(swapped))
            else:
                camel = swapped[0] + "".join(x.capitalize() for x in swapped[1:])
                out += [camel, camel[:1].upper() + camel[1:]]
    return out


def strong_parts(name: str) -> list[str]:
    """The parts of a name that make two names alike (not `get`, `max`; 4 letters or more)."""
    return [p for p in name_parts(name) if p not in _WEAK_PARTS and len(p) >= 4]


def likeness(a: str, b: str) -> float:
    """How alike two names are: the share of the longer one's parts they have in common
    (shared_words), or their spelling ratio, whichever is higher."""
    ratio = difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()
    return max(shared_words(a, b), ratio if ratio >= SPELLED_MIN else 0.0)


def shared_words(a: str, b: str) -> float:
    """The share of the longer name's parts the two have in common, inflections aside
    (`tracking` is `track`) and words of the same sense counted (`drop` for `remove`); 0 when
    only a weak part is shared."""
    pa, pb = name_parts(a), name_parts(b)
    senses = {_SENSE[p] for p in pb if p in _SENSE}
    stems = {_stem(p) for p in pb}
    shared = [p for p in pa if _stem(p) in stems or _SENSE.get(p, -1) in senses]
    strong = [p for p in shared if p not in _WEAK_PARTS and len(p) >= 3]
    return len(shared) / max(len(pa), len(pb)) if pa and pb and strong else 0.0


def _stem(part: str) -> str:
    """A part without its inflection (`tracking`, `tracked` -> `track`; `locations` ->
    `location`; `cached` and `cache` -> `cach`): `trackNodeLocations` and
    `nodeLocationTracking` share all their words."""
    for suffix in ("ing", "ed", "s"):
        if part.endswith(suffix) and len(part) - len(suffix) >= 3 and not part.endswith("ss"):
            part = part[: -len(suffix)]
            break
    # `cache` / `cached`, `parse` / `parsing`: a final e comes and goes with the inflection.
    return part[:-1] if part.endswith("e") and len(part) > 3 else part


def is_code_definition(hit: SearchHit) -> bool:
    """A definition in a source file that is not a test (the neighbour a missing name
    has: the real option's function, not a README section or a test using it)."""
    return bool(hit.symbol) and hit.language not in _DOC_LANGUAGES and not is_test_path(hit.path)


def is_test_path(path: str) -> bool:
    return bool(_TEST_PATH.search(path))


def defines(text: str, name: str) -> bool:
    """The passage assigns or declares `name` at a line's start (`ErrX = errors.New(...)`
    in a Go var block, `NAME = 3`, `const name =`), or alone on an indented line of a Go
    `const (` block (`ET_STYLE_MMSS` after an `iota`): a definition with no symbol of its
    own."""
    e = re.escape(name)
    return bool(
        re.search(rf"(?m)^[ \t]*(?:var |const |let |export const )?{e}\s*(?::=|=(?!=))", text)
        # A nested `def` / `func` / method inside the passage (`cache_clear` of a wrapper).
        or re.search(
            rf"(?m)^[ \t]*(?:async\s+)?(?:def|class|function|func(?:\s*\([^)]*\))?)\s+{e}\b",
            text,
        )
        or (
            re.search(r"\bconst \($", text, re.M)
            and re.search(rf"(?m)^[ \t]+{e}[ \t]*(?://.*)?$", text)
        )
    )


def candidate_names(hit: SearchHit, text: str) -> Iterable[tuple[str, bool]]:
    """(name, defined here) of a code passage: its symbol's parts, then its code-shaped
    words; none for docs and tests (a README's example is not the real thing)."""
    if hit.language in _DOC_LANGUAGES or is_test_path(hit.path):
        return
    for part in hit.symbol.split(".") if hit.symbol and " > " not in hit.symbol else []:
        yield part, True
    for ident in dict.fromkeys(_TEXT_IDENT.findall(text)):
        yield ident, defines(text, ident)


def spelled_neighbour(
    name: str,
    passages: Sequence[tuple[SearchHit, str]],
    question: str = "",
    context_paths: frozenset[str] = frozenset(),
    member: bool = False,
    meaning: MeaningScores | None = None,
    owner: str = "",
) -> tuple[int, str]:
    """(index of the passage, name) of the name spelled most like `name` among the passages
    (first a name the question's own words point to: one it writes (`createDraft`) or whose
    other parts it says ("apply the inverse ones" for `applyPatches`, over a `GeneratePatches`
    spelled closer); then the most alike; then one of the same kind (`member`: the name was
    written on a value, `p.RemoveBar(...)`: a method before a function); one the caller can
    use (public, when `name` is); a definition before a mention, one in a file defining
    another name of the question (`context_paths`: `LRUCache`'s file, not a copy in another
    module), code before tests and docs; of two copies the one whose file the question
    names, then the nearer the root; then list order). An internal name chosen for a public
    one gives way to the public definition calling it (`Abort` calling `dropBar`). With no
    name alike enough, a name ending with the noun written beside it (_headed), else the
    code definition whose own text says the name's words ("Set `locale` as the current
    locale" for `set_locale`); (-1, "") when none."""
    want = name.lstrip("-")
    # The missing name's own words point nowhere (`cache` of `cache_exceptions`).
    said = question_words(re.sub(rf"(?<!\w){re.escape(want)}(?!\w)", " ", question))
    rows: list[tuple[int, str, bool, float]] = []  # (passage, name, defined there, likeness)
    for i, (hit, text) in enumerate(passages):
        for cand, defined in candidate_names(hit, text):
            if cand == want or cand.lower() == want.lower():
                continue
            score = likeness(want, cand)
            if score > 0 and (score >= PARTS_MIN or score >= SPELLED_MIN):
                rows.append((i, cand, defined, score))
    near = _meanings(want, rows, passages, meaning)
    kin = _owner_kin(owner, rows, passages, meaning)
    best: tuple[tuple[float, ...], int, str] | None = None
    for (i, cand, defined, score), sense, owned in zip(rows, near, kin, strict=True):
        hit = passages[i][0]
        tie = difflib.SequenceMatcher(None, want.lower(), cand.lower()).ratio()
        own = set(strong_parts(cand)) - set(name_parts(want))
        pointed = 0 if cand in said or (own and own <= said) else 1
        kind = 0 if not member or _is_method(hit, cand) else 1
        hidden = 1 if _hidden(hit, cand) and not internal(want, hit.language) else 0
        # Code before a stub (the declaration of code living elsewhere), tests and docs.
        code = (1 if is_stub(hit.path) else 0) if is_code_definition(hit) else 2
        # With a model, alike is spelling and meaning together: `unset_key` for a missing
        # `delete_key` (where `set_key` shares as much spelling), `maxLookahead` for
        # `lookaheadDepth` (not `lookAheadPaths`, spelled closer but about another thing).
        # Names sharing words are compared by their words and spelling together (`origValue`
        # before `updatedValue` for `oldValue`); names whose words split otherwise by their
        # spelling alone (`maxsize`, `max_size`).
        words = shared_words(want, cand)
        spelled = (words + tie) / 2 if words else score
        alike = (spelled + sense) / 2 if meaning is not None and len(rows) > 1 else score
        key = (
            pointed,
            -round(alike, 2),
            # Of copies of one name, the member of the type nearest in meaning to the owner
            # written (`parser.resetInput()`: the recognizer's `reset`, not a visitor's).
            -round(owned, 2),
            kind,
            hidden,
            0 if defined else 1,
            0 if hit.path in context_paths else 1,
            -round(tie, 2),
            code,
            # Copies of one name: one whose file the question names ("the inotify
            # limit": backend_inotify.go), the package's own module before a
            # subpackage's (the sync class before its asyncio twin).
            0 if file_words(hit.path) & said else 1,
            hit.path.count("/"),
            i,
        )
        if best is None or key < best[0]:
            best = (key, i, cand)
    if best is None:
        headed = _headed(want, passages, question)
        return headed if headed[0] >= 0 else _described(want, passages)
    i, cand = best[1], best[2]
    if internal(cand, passages[i][0].language) and not internal(want, passages[i][0].language):
        caller = public_caller(cand, passages)
        if caller >= 0:
            return caller, passages[caller][0].symbol.rsplit(".", 1)[-1]
    return i, cand


def _meanings(
    want: str,
    rows: Sequence[tuple[int, str, bool, float]],
    passages: Sequence[tuple[SearchHit, str]],
    meaning: MeaningScores | None,
) -> list[float]:
    """Each row's closeness in meaning to `want` (0 without a model): the names' split words,
    with the doc line of the passage defining the name when the pool has it (the same score
    for a name wherever it is mentioned)."""
    if meaning is None or len({cand for _, cand, _, _ in rows}) < 2:
        return [0.0] * len(rows)
    docs: dict[str, str] = {}
    for i, cand, _, _ in rows:
        hit, text = passages[i]
        if hit.symbol.rsplit(".", 1)[-1] == cand and not docs.get(cand):
            docs[cand] = doc_line(text)
    names = list(dict.fromkeys(cand for _, cand, _, _ in rows))
    got = meaning(
        " ".join(name_parts(want)), [(" ".join(name_parts(c)), docs.get(c, "")) for c in names]
    )
    score = dict(zip(names, got, strict=True))
    return [score[cand] for _, cand, _, _ in rows]


def _owner_kin(
    owner: str,
    rows: Sequence[tuple[int, str, bool, float]],
    passages: Sequence[tuple[SearchHit, str]],
    meaning: MeaningScores | None,
) -> list[float]:
    """Each row's closeness in meaning of the type it is a member of to the owner the
    question writes (0 without an owner, a model, or for a name that is no member)."""
    types = [
        hit.symbol.rsplit(".", 1)[0] if _is_method(hit, cand) else ""
        for i, cand, _, _ in rows
        for hit in [passages[i][0]]
    ]
    named = list(dict.fromkeys(t for t in types if t))
    if meaning is None or not owner or len(named) < 2:
        return [0.0] * len(rows)
    words = " ".join(name_parts(owner.rsplit(".", 1)[-1]))
    got = dict(
        zip(named, meaning(words, [(" ".join(name_parts(t)), "") for t in named]), strict=True)
    )
    return [got.get(t, 0.0) for t in types]


def file_words(path: str) -> set[str]:
    """The words of a file's name (`backend_inotify.go` -> backend, inotify), 4 letters on."""
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return {w for w in re.split(r"[_\W]+", stem.lower()) if len(w) >= 4}


def _is_method(hit: SearchHit, cand: str) -> bool:
    """`cand` is the passage's own symbol and a member of a type (`Progress.dropBar`)."""
    return "." in hit.symbol and hit.symbol.rsplit(".", 1)[-1] == cand


def _hidden(hit: SearchHit, cand: str) -> bool:
    """`cand` is internal, or the passage's own member of an internal type
    (`_WrapperBase.cache`)."""
    owners = hit.symbol.split(".")[:-1] if _is_method(hit, cand) else []
    return any(internal(n, hit.language) for n in [*owners, cand])


def is_stub(path: str) -> bool:
    """A type stub (`.pyi`, `.d.ts`): the declaration of code that lives elsewhere."""
    return path.endswith(STUB_SUFFIXES)


def internal(name: str, language: str) -> bool:
    """A name its package keeps to itself: `_private`, or lower-case in Go."""
    return name.startswith("_") or (language == "go" and name[:1].islower())


def public_caller(name: str, passages: Sequence[tuple[SearchHit, str]]) -> int:
    """Index of the first public code definition among the passages that calls `name`
    (`Bar.Abort` calling `dropBar`: how a user reaches an internal function); -1 if none."""
    call = re.compile(rf"(?<![\w]){re.escape(name)}\s*\(")
    for i, (hit, text) in enumerate(passages):
        own = hit.symbol.rsplit(".", 1)[-1]
        if (
            is_code_definition(hit)
            and own != name
            and not internal(own, hit.language)
            and call.search(text)
        ):
            return i
    return -1


def _headed(name: str, passages: Sequence[tuple[SearchHit, str]], question: str) -> tuple[int, str]:
    """(index, name) of the first name of the code passages (a definition first) whose last
    word is the noun the question writes beside `name` ("an on_giveup callback", "um
    callback on_giveup" -> `retry_error_callback`: a name ends with what kind of thing it
    is), a word of the same sense counted; (-1, "") when none."""
    e = re.escape(name)
    beside = re.findall(
        rf"(?<![\w`]){e}`?\s+([a-z]{{4,}})\b|\b([a-z]{{4,}})\s+`?{e}(?![\w`])", question
    )
    heads = {w for pair in beside for w in pair if w}
    senses = {_SENSE[w] for w in heads if w in _SENSE}
    best: tuple[tuple[int, int, int], int, str] | None = None
    for i, (hit, text) in enumerate(passages):
        for cand, defined in candidate_names(hit, text):
            last = name_parts(cand)[-1:] or [""]
            if cand != name and (last[0] in heads or _SENSE.get(last[0], -1) in senses):
                key = (hit.path.count("/"), 0 if defined else 1, i)
                if best is None or key < best[0]:
                    best = (key, i, cand)
    return (best[1], best[2]) if best else (-1, "")


def _described(name: str, passages: Sequence[tuple[SearchHit, str]]) -> tuple[int, str]:
    """(index, symbol) of the first code definition whose text says the words of `name` in
    order ("Set `locale`", "sets the locale" for `set_locale`), or a one-word name's word
    however inflected ("speculative" for `SPECULATE`: `BACKTRACK`'s comment); (-1, "") when
    none does."""
    parts = name_parts(name)
    if not strong_parts(name) or (len(parts) == 1 and len(parts[0]) < _ONE_WORD_MIN):
        return -1, ""
    gap = r"[\s`'\"*]+(?:(?:the|a|an)\s+`?)?"
    one = len(parts) == 1
    words = [re.escape(_stem(p)) + r"\w{0,4}" if one else re.escape(p) + r"\w{0,3}" for p in parts]
    said = re.compile(r"\b" + gap.join(words) + r"\b", re.I)
    for i, (hit, text) in enumerate(passages):
        if is_code_definition(hit) and said.search(text):
            return i, hit.symbol.rsplit(".", 1)[-1]
    return -1, ""
