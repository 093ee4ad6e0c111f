"""Which natural language a question or answer is written in (docs/rules.md: answer-language).

A stop-word vote: cheap, dependency-free and good enough to catch an answer in the wrong
language. Returns None when unsure (short text, mostly code) so nothing is flagged on a guess.
`question_language` adds, for questions too short to vote ("senha usuario"), the Portuguese
lexicon's word list: the query builder and the answer's messages follow that decision.
"""

from __future__ import annotations

import re
from functools import lru_cache

from code_compass_server.query.lexicon import fold, portuguese_lexicon

NAMES = {
    "en": "English",
    "pt": "Portuguese",
    "es": "Spanish",
    "fr": "French",
    "de": "German",
    "it": "Italian",
}


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_STOPWORDS: dict[str, frozenset[str]] = {
    "en": _set(
        "the is are was were of and to in on where what how which why does do did this that "
        "these those with for it its be been by from an can when who there defined function "
        "file class method used uses called returns not"
    ),
    "pt": _set(
        "o os a as um uma uns umas do da dos das no na nos nas em é são foi onde qual quais "
        "como que não com para por pelo pela isso essa esse este esta está função arquivo "
        "classe método usado usa chamada retorna também quando porque ao aos definido"
    ),
    "es": _set(
        "el los la las un una unos unas del al en es son fue donde dónde cuál cuáles cómo qué "
        "que no con para por esto esta este está función archivo clase método usado usa "
        "llamada devuelve también cuando porque se lo definido"
    ),
    "fr": _set(
        "le les la un une des du de et est sont été où quel quelle quels comment que qui ne "
        "pas avec pour par ce cette ces dans fichier fonction classe méthode utilisé utilise "
        "appelée retourne aussi quand parce sur au aux défini"
    ),
    "de": _set(
        "der die das ein eine einen und ist sind war wo welche welcher wie was warum nicht mit "
        "für von zu im in auf dem den des datei funktion klasse methode verwendet gibt auch "
        "wenn weil definiert"
    ),
    "it": _set(
        "il lo la i gli le un una del della dei delle è sono dove quale quali come che non "
        "con per questo questa nel nella file funzione classe metodo usato usa chiamata "
        "restituisce anche quando perché definito"
    ),
}

_CODE_BLOCK = re.compile(r"```.*?```", re.S)
_INLINE_CODE = re.compile(r"`[^`]*`")
_CITATION = re.compile(r"\[E\d+\]")
_WORD = re.compile(r"[^\W\d_]+", re.U)
_CODEY = re.compile(r"\S*[_./\\()=<>{}]\S*")


def words(text: str) -> list[str]:
    """Natural-language words of `text`: code blocks, inline code and identifiers removed."""
    text = _CODE_BLOCK.sub(" ", text)
    text = _INLINE_CODE.sub(" ", text)
    text = _CITATION.sub(" ", text)
    text = _CODEY.sub(" ", text)
    return [w.lower() for w in _WORD.findall(text)]


def detect_language(text: str, *, min_hits: int = 2) -> str | None:
    """ISO 639-1 code of the most likely language, or None if the vote is too thin or close."""
    toks = words(text)
    if not toks:
        return None
    scores = {lang: sum(1 for t in toks if t in sw) for lang, sw in _STOPWORDS.items()}
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
    (best, top), (_, second) = ranked[0], ranked[1]
    if top < min_hits or top < second * 1.5 + 0.5:
        return None
    return best


def language_name(code: str | None) -> str | None:
    return NAMES.get(code) if code else None


# Letters English words never have and Portuguese ones often do.
_PORTUGUESE_LETTERS = re.compile(r"[ãõçáéíóúâêôà]", re.I)
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")


def question_language(text: str) -> str | None:
    """The stop-word vote; when it is unsure, Portuguese if more of the words are Portuguese
    (the lexicon's words, function words included, or spelled with Portuguese letters) than
    are English stop words. Words English shares ("data", "use", "no") vote for neither."""
    text = _QUOTED.sub(" ", text)  # a quoted message is not the asker's language
    found = detect_language(text)
    if found is not None:
        return found
    toks = words(text)
    english = sum(1 for t in toks if t in _STOPWORDS["en"])
    portuguese = sum(1 for t in toks if _portuguese_word(t))
    return "pt" if portuguese > english else None


def _portuguese_word(word: str) -> bool:
    if _PORTUGUESE_LETTERS.search(word):
        return True
    if word in _STOPWORDS["en"] or word in _english_words():
        return False
    return portuguese_lexicon().lookup(fold(word)) is not None


@lru_cache(maxsize=1)
def _english_words() -> frozenset[str]:
    """Words of the lexicon's English renderings, and one-letter words: English as well."""
    return portuguese_lexicon().english_words | {"a", "e", "i", "o"}
