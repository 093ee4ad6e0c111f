"""The Portuguese developer-vocabulary lexicon (lexicon_pt.tsv) and its look-up rules.

Entries are lemmas; a word of a question is matched through the forms it may be an inflection
of: plurals (-s, -es, -ões/-ães -> -ão, -ais -> -al, -éis -> -el, -ns -> -m), feminine
adjectives (-a -> -o) and verb endings (-a, -am, -ou, -ava, -ando, -ado, ... -> -ar/-er/-ir).
A form counts only when the lexicon has it, so over-generating candidates is safe. Accents
are folded on both sides ("configuração" and "configuracao" are the same key).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

LEXICON_FILE = "lexicon_pt.tsv"
MAX_PHRASE_WORDS = 4
ALTERNATIVE_SEPARATOR = "|"

# (ending, replacements): a word ending so may be an inflection of the word ending with any
# replacement. Longest endings first; the first candidate the lexicon knows wins, so the
# order also breaks ties (a participle before a plural, a plural before a verb form).
_PARTICIPLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ando", ("ar",)),
    ("endo", ("er",)),
    ("indo", ("ir",)),
    ("ados", ("ar",)),
    ("adas", ("ar",)),
    ("idos", ("er", "ir")),
    ("idas", ("er", "ir")),
    ("ado", ("ar",)),
    ("ada", ("ar",)),
    ("ido", ("er", "ir")),
    ("ida", ("er", "ir")),
)
_PLURALS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("oes", ("ao",)),
    ("aes", ("ao",)),
    ("ais", ("al",)),
    ("eis", ("el", "il")),
    ("ns", ("m",)),
    ("res", ("r",)),
    ("zes", ("z",)),
    ("ses", ("s",)),
    ("is", ("il",)),
    ("s", ("",)),
)
_VERB_FORMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ariam", ("ar",)),
    ("eriam", ("er",)),
    ("iriam", ("ir",)),
    ("aria", ("ar",)),
    ("eria", ("er",)),
    ("iria", ("ir",)),
    ("arao", ("ar",)),
    ("erao", ("er",)),
    ("irao", ("ir",)),
    ("arem", ("ar",)),
    ("erem", ("er",)),
    ("irem", ("ir",)),
    ("aram", ("ar",)),
    ("eram", ("er",)),
    ("iram", ("ir",)),
    ("avam", ("ar",)),
    ("amos", ("ar",)),
    ("emos", ("er",)),
    ("imos", ("ir",)),
    ("quei", ("car",)),
    ("guei", ("gar",)),
    ("que", ("car",)),
    ("gue", ("gar",)),
    ("ava", ("ar",)),
    ("iam", ("er", "ir")),
    ("ara", ("ar",)),
    ("era", ("er",)),
    ("ira", ("ir",)),
    ("ia", ("er", "ir")),
    ("am", ("ar",)),
    ("em", ("er", "ir", "ar")),
    ("ou", ("ar",)),
    ("eu", ("er",)),
    ("iu", ("ir",)),
    ("ei", ("ar",)),
    ("jo", ("ger",)),
    ("es", ("ar", "er", "ir")),
    ("as", ("ar", "er", "ir")),
    ("a", ("ar", "er", "ir")),
    ("e", ("ar", "er", "ir")),
    ("o", ("ar", "er", "ir")),
    ("i", ("er", "ir")),
)
_FEMININE: tuple[tuple[str, tuple[str, ...]], ...] = (("as", ("o",)), ("a", ("o",)))
_RULES = (_PARTICIPLES, _PLURALS, _VERB_FORMS, _FEMININE)
_MIN_STEM = 2  # "ia" is not the verb "ir" with an ending


def fold(text: str) -> str:
    """Lower-case without accents: "Configuração" -> "configuracao"."""
    if text.isascii():  # most lines and words: nothing to decompose (halves the lexicon load)
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@dataclass(frozen=True, slots=True)
class Entry:
    """One lexicon line: the Portuguese words (folded) and their English renderings."""

    words: tuple[str, ...]
    english: tuple[str, ...]  # empty: a function word, dropped


class Lexicon:
    """Look-ups by lemma, by inflected form, and of phrases starting at a word."""

    def __init__(self, entries: list[Entry]) -> None:
        # Later lines win, so spellings that fold alike ("por que", "por quê") are one entry.
        by_words = {e.words: e for e in entries}
        self.words: dict[str, Entry] = {}
        self.phrases: dict[str, list[Entry]] = {}  # first word -> phrases, longest first
        for words, e in by_words.items():
            if len(words) == 1:
                self.words[words[0]] = e
            else:
                self.phrases.setdefault(words[0], []).append(e)
        for group in self.phrases.values():
            group.sort(key=lambda e: len(e.words), reverse=True)
        # The English words the lexicon renders to: a known English word, whatever it ends in.
        self.english_words = frozenset(
            w for e in by_words.values() for r in e.english for w in fold(r).split()
        )

    def __len__(self) -> int:
        return len(self.words) + sum(len(g) for g in self.phrases.values())

    def lemmas(self, word: str) -> tuple[str, ...]:
        """The folded word and the lemmas it may be an inflection of, most likely first."""
        return _lemmas(word)

    def lookup(self, word: str) -> Entry | None:
        """The entry of a (folded) word or of the first of its lemmas the lexicon has."""
        for form in self.lemmas(word):
            entry = self.words.get(form)
            if entry is not None:
                return entry
        return None

    def phrase_at(self, words: list[str], start: int) -> Entry | None:
        """The longest phrase entry matching `words[start:]` (each word in any inflection)."""
        firsts = self.lemmas(words[start])
        for first in firsts:
            for entry in self.phrases.get(first, ()):
                n = len(entry.words)
                if start + n <= len(words) and all(
                    entry.words[i] in self.lemmas(words[start + i]) for i in range(1, n)
                ):
                    return entry
        return None


@lru_cache(maxsize=65536)
def _lemmas(word: str) -> tuple[str, ...]:
    out = [word]
    for rules in _RULES:
        for ending, replacements in rules:
            if word.endswith(ending) and len(word) - len(ending) >= _MIN_STEM:
                stem = word[: len(word) - len(ending)]
                out.extend(stem + r for r in replacements)
    return tuple(dict.fromkeys(out))


def parse_lexicon(text: str) -> list[Entry]:
    """Entries of a lexicon file (format: lexicon_pt.tsv's header)."""
    entries: list[Entry] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        portuguese, _, english = line.partition("\t")
        words = tuple(fold(portuguese).split())
        renderings = tuple(e.strip() for e in english.split(ALTERNATIVE_SEPARATOR) if e.strip())
        if words and len(words) <= MAX_PHRASE_WORDS:
            entries.append(Entry(words, renderings))
    return entries


@lru_cache(maxsize=1)
def portuguese_lexicon() -> Lexicon:
    text = resources.files("code_compass_server.query").joinpath(LEXICON_FILE).read_text("utf-8")
    return Lexicon(parse_lexicon(text))
