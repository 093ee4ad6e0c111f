"""The identifier under the cursor, with language-aware word boundaries.

Hover must answer `null` for words that name nothing: keywords, literals, numbers and
text inside string literals. Builtins are not listed: they fall through to the symbol
table, which knows nothing about them unless the workspace defines them.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass

from code_compass_server.index.languages import DOC_LANGUAGES

_C_LIKE_LITERALS = frozenset({"true", "false", "null"})


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


KEYWORDS: dict[str, frozenset[str]] = {
    # Soft keywords (match, case, type, _) are left out: `re.match` is a real name.
    "python": frozenset(keyword.kwlist),
    "javascript": _words(
        """break case catch class const continue debugger default delete do else export
        extends finally for function if import in instanceof let new return super switch
        this throw try typeof var void while with yield async await of static get set
        true false null undefined NaN Infinity"""
    ),
    "typescript": _words(
        """break case catch class const continue debugger default delete do else export
        extends finally for function if import in instanceof let new return super switch
        this throw try typeof var void while with yield async await of static get set
        true false null undefined NaN Infinity abstract any as asserts boolean declare
        enum implements interface keyof infer is module namespace never number object
        private protected public readonly require satisfies string symbol type unique
        unknown bigint override accessor from"""
    ),
    "go": _words(
        """break case chan const continue default defer else fallthrough for func go goto
        if import interface map package range return select struct switch type var
        true false nil iota"""
    ),
    "java": _words(
        """abstract assert boolean break byte case catch char class const continue default
        do double else enum extends final finally float for goto if implements import
        instanceof int interface long native new package private protected public return
        short static strictfp super switch synchronized this throw throws transient try
        void volatile while var record sealed permits yield non-sealed"""
    )
    | _C_LIKE_LITERALS,
    "rust": _words(
        """as async await break const continue crate dyn else enum extern false fn for if
        impl in let loop match mod move mut pub ref return self Self static struct super
        trait true type unsafe use where while abstract become box do final macro override
        priv typeof unsized virtual yield try"""
    ),
}
KEYWORDS["tsx"] = KEYWORDS["typescript"]
# Contextual keywords of JavaScript/TypeScript: names too (rxjs's `of()` and `from()`,
# `map.get(k)`), when the code uses them as names: called, or a member.
_CONTEXTUAL = _words(
    """of get set static async await from as type is module namespace declare abstract any
    asserts boolean infer keyof never number object readonly require satisfies string symbol
    unique unknown bigint override accessor undefined"""
)
_CONTEXTUAL_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})

# Quote characters that open a single-line string literal, per language.
_QUOTES: dict[str, str] = {
    "python": "\"'",
    "javascript": "\"'`",
    "typescript": "\"'`",
    "tsx": "\"'`",
    "go": '"`',
    "java": '"',
    "rust": '"',
}
_LINE_COMMENT: dict[str, str] = {"python": "#"}


@dataclass(frozen=True, slots=True)
class Word:
    text: str
    start: int  # index into the line (Python str units)
    end: int  # exclusive


def _is_ident_char(ch: str, language: str) -> bool:
    if ch.isalnum() or ch == "_":
        return True
    return ch == "$" and language in ("javascript", "typescript", "tsx", "java")


def _in_string(line: str, pos: int, language: str) -> bool:
    """Heuristic, single line: is `pos` inside a string literal? (cheap, no parse). The
    code inside an f-string's `{…}` or a template literal's `${…}` is not: it names things."""
    quotes = _QUOTES.get(language)
    if not quotes:
        return False
    comment = _LINE_COMMENT.get(language, "//")
    open_q: str | None = None
    interpolates = False  # the open string has `{…}` (f-string) / `${…}` (template) code
    depth = 0  # how many interpolations deep `i` is, inside the open string
    i = 0
    while i < pos:
        ch = line[i]
        if open_q is None:
            if line.startswith(comment, i):
                return False  # the rest of the line is a comment, not a string
            if ch in quotes:
                if language == "rust" and ch == "'":
                    pass  # lifetimes and chars; not strings
                else:
                    open_q = ch
                    prefix = line[max(0, i - 2) : i].lower()
                    interpolates = (language == "python" and "f" in prefix) or ch == "`"
                    depth = 0
        elif depth:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
        elif ch == "\\":
            i += 1
        elif ch == open_q:
            open_q = None
        elif interpolates and ch == "{":
            if open_q == "`":
                depth = 1 if i > 0 and line[i - 1] == "$" else 0
            elif line.startswith("{{", i):
                i += 1  # an escaped brace
            else:
                depth = 1
        i += 1
    return open_q is not None and depth == 0


_PRIVATE_NAME_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})


def word_at(line: str, character: int, language: str) -> Word | None:
    """The identifier at (or just before) `character`, or None if there is none. A
    JavaScript/TypeScript private name (`#count`) includes its `#`: the `#` is part of the
    name (`#count` and `count` are two members), and compilers place it at the `#`."""
    if not line or character < 0:
        return None
    character = min(character, len(line))
    private = language in _PRIVATE_NAME_LANGUAGES
    if (
        private
        and character + 1 < len(line)
        and line[character] == "#"
        and _is_ident_char(line[character + 1], language)
    ):
        character += 1  # on the `#` itself: the name it starts
    start = character
    if start == len(line) or not _is_ident_char(line[start], language):
        # Cursor just after a word ("foo|") still means that word.
        if start > 0 and _is_ident_char(line[start - 1], language):
            start -= 1
        else:
            return None
    end = start
    while start > 0 and _is_ident_char(line[start - 1], language):
        start -= 1
    while end < len(line) and _is_ident_char(line[end], language):
        end += 1
    if private and start > 0 and line[start - 1] == "#":
        start -= 1
    return Word(line[start:end], start, end)


def _looks_like_code(line: str, word: Word) -> bool:
    """In prose, only names that look like code: in backticks, snake_case or camelCase."""
    if "_" in word.text.strip("_") or any(c.isupper() for c in word.text[1:]):
        return True
    return line.count("`", 0, word.start) % 2 == 1


def _used_as_name(line: str, word: Word) -> bool:
    """A JavaScript/TypeScript keyword used as a name: a contextual one called or a member
    (`of(1)`, `x.get(k)`); any reserved word after a member dot (`map.delete(k)`,
    `p.catch(f)`, `x?.default`), where the language reads it as a property name."""
    before = line[: word.start].rstrip()
    member = before.endswith(".") and not before.endswith("...")
    if word.text not in _CONTEXTUAL:
        return member
    after = line[word.end :].lstrip()[:1]
    return member or after in ("(", "<", ".")


def identifier_at(line: str, character: int, language: str) -> Word | None:
    """A word that may name a symbol; None for keywords, literals, numbers and strings."""
    word = word_at(line, character, language)
    if word is None:
        return None
    text = word.text
    if text[0].isdigit() or not any(c.isalpha() for c in text):
        return None  # numbers (1e3, 0x1F, 10_000) and lone underscores
    raw_ident = language == "rust" and line[max(0, word.start - 2) : word.start] == "r#"
    keyword = text in KEYWORDS.get(language, ()) and not raw_ident
    if keyword and not (language in _CONTEXTUAL_LANGUAGES and _used_as_name(line, word)):
        return None
    if language in DOC_LANGUAGES:
        return word if _looks_like_code(line, word) else None
    if _in_string(line, word.start, language):
        return None
    return word
