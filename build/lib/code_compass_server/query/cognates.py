"""English cognates of Portuguese words the lexicon lacks, kept only when the index has them.

Much of a developer's Portuguese is Latin vocabulary English shares under regular spelling
changes: configuração -> configuration, validade -> validity, automaticamente ->
automatically, serializável -> serializable, referência -> reference, normalizar ->
normalize, recursivo -> recursive, parâmetro -> parameter. `candidates` spells those changes
out for a folded word and for the lemmas it may be an inflection of (query/lexicon.py), most
specific rule first, then a few English spelling variants (t -> th, i -> y, f -> ph, a consonant
doubled after a vowel, es- -> s-). The rules over-generate on purpose: a candidate
is used only when the workspace's own lexical index holds it as a word (`first_known`), so no
invented word reaches a query. The lexicon is consulted first, so a false friend it lists
(pasta -> folder, not "past") never gets this far.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from code_compass_server.query.lexicon import portuguese_lexicon

# (Portuguese ending, English endings), longest and most specific first. Applied to the folded
# word and to each of its lemmas; every rule that matches contributes, in this order.
_SUFFIXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ificacao", ("ification",)),
    ("izacao", ("ization",)),
    ("ificar", ("ify",)),
    ("izar", ("ize", "")),
    ("bilidade", ("bility",)),
    ("idade", ("ity",)),
    ("dade", ("ty",)),
    ("cao", ("tion", "ction")),
    ("stao", ("stion",)),
    ("sao", ("sion",)),
    ("xao", ("ction", "xion")),
    ("avel", ("able",)),
    ("ivel", ("ible", "able")),
    ("encia", ("ence", "ency")),
    ("ancia", ("ance", "ancy")),
    ("cial", ("tial", "cial")),
    ("ente", ("ent",)),
    ("ante", ("ant",)),
    ("ico", ("ic", "ical")),
    ("ica", ("ic", "ical", "ics")),
    ("ivo", ("ive",)),
    ("iva", ("ive",)),
    ("oso", ("ous",)),
    ("osa", ("ous",)),
    ("ario", ("ary",)),
    ("aria", ("ary",)),
    ("orio", ("ory",)),
    ("oria", ("ory",)),
    ("ismo", ("ism",)),
    ("ista", ("ist",)),
    ("agem", ("age",)),
    ("ura", ("ure",)),
    ("ador", ("ator", "er", "or")),
    ("idor", ("itor", "er")),
    ("edor", ("er",)),
    ("sor", ("ter", "sor")),
    ("ulo", ("ule", "le")),
    ("ula", ("ule", "le")),
    ("tro", ("ter",)),
    ("eto", ("ect",)),
    ("eta", ("ect",)),
    ("ato", ("act", "at", "ate")),
    ("ata", ("act", "at", "ate")),
    ("ito", ("it", "ict", "ite")),
    ("ita", ("it", "ict", "ite")),
    ("ido", ("id",)),
    ("ida", ("id",)),
    ("ema", ("em",)),
    ("uo", ("ual", "uous")),
    ("ua", ("ual", "uous")),
    ("ia", ("y",)),
    ("io", ("y", "ious")),
    # verbs, in the infinitive (a lemma of the inflected form)
    ("uir", ("ute", "ude")),
    ("trar", ("ter",)),
    ("ear", ("e", "")),
    ("ar", ("ate", "e", "")),
    ("er", ("", "e")),
    ("ir", ("e", "")),
)
# A bare final vowel dropped or made "e" (documento -> document, caso -> case): only on
# stems this long, where a short false friend (nota -> "not") cannot arise.
_VOWELS = ("o", "a", "e")
_MIN_VOWEL_STEM = 4
_MIN_STEM = 2  # opção -> "op" + "tion"; shorter stems are not a word's root
# Shorter English words are too often a coincidence (comando -> "come", saída -> "said").
_MIN_CANDIDATE = 5
_MIN_VARIANT = 6  # a respelled short stem is rarely the word (matar -> "math")
_CONSONANTS = frozenset("bcdfglmnprst")
MIN_CHUNKS = 2
MAX_CANDIDATES = 64  # bounds the index look-ups of one word

# English function words of candidate length: a rule may spell one, and every index has them.
_ENGLISH_STOP = frozenset(
    {"other", "their", "there", "these", "those", "under", "until", "which", "while", "would"}
)


def _mente(word: str) -> list[str]:
    """Adverbs: the adjective's cognate plus -ly (automaticamente -> automatically)."""
    if not word.endswith("mente") or len(word) - 5 < _MIN_STEM:
        return []
    out: list[str] = []
    for adjective in _stems(word[:-5]):
        if adjective.endswith("ic"):
            out.append(adjective + "ally")
        elif adjective.endswith("le"):
            out.append(adjective[:-1] + "y")
        else:
            out.append(adjective + "ly")
    return out


def _stems(word: str) -> list[str]:
    """English forms of one (folded) Portuguese form by the ending rules."""
    out: list[str] = []
    for ending, replacements in _SUFFIXES:
        stem = word[: len(word) - len(ending)]
        if word.endswith(ending) and len(stem) >= _MIN_STEM:
            out.extend(stem + r for r in replacements)
    if word[-1:] in _VOWELS and len(word) - 1 >= _MIN_VOWEL_STEM:
        stem = word[:-1]
        out.append(stem)
        if not stem.endswith("e"):
            out.append(stem + "e")
    return out


def _variants(candidate: str) -> list[str]:
    """English spellings Portuguese simplified: th, y, ph, a consonant doubled after a vowel
    (comando -> command, atributo -> attribute), es- -> s-."""
    out: list[str] = []
    if "t" in candidate and "th" not in candidate:
        out.append(candidate.replace("t", "th", 1))
    if "i" in candidate[1:]:
        at = candidate.index("i", 1)
        out.append(candidate[:at] + "y" + candidate[at + 1 :])
    if "f" in candidate:
        out.append(candidate.replace("f", "ph", 1))
    for at in range(1, len(candidate) - 1):
        c = candidate[at]
        if candidate[at - 1] in "aeiou" and c in _CONSONANTS and candidate[at + 1] != c:
            out.append(candidate[: at + 1] + candidate[at:])
    if candidate.startswith("es") and candidate[2:3] not in ("", *"aeiou"):
        out.append(candidate[1:])
    return out


@lru_cache(maxsize=4096)
def candidates(word: str) -> tuple[str, ...]:
    """English words a folded Portuguese word may be a cognate of, most likely first; the
    word itself is not among them."""
    forms = [word, *(f for f in portuguese_lexicon().lemmas(word)[1:] if len(f) >= _MIN_STEM)]
    base: list[str] = _mente(word)
    for form in forms:
        base.extend(_stems(form))
    out = [*base, *(v for b in base if len(b) >= _MIN_VARIANT - 1 for v in _variants(b))]
    by_rule = set(base)
    kept = (
        c
        for c in dict.fromkeys(out)
        if c != word
        and len(c) >= _MIN_CANDIDATE
        and c not in _ENGLISH_STOP
        and (c in by_rule or len(c) >= _MIN_VARIANT)
    )
    return tuple(kept)[:MAX_CANDIDATES]


def first_known(word: str, count: Callable[[str], int]) -> str | None:
    """The first cognate of `word` that at least MIN_CHUNKS chunks of the index hold (`count`:
    the lexical index's count of a word in any of its forms), or None. A word found in a single
    chunk is as likely a stray foreign word there ("novembre" in a locale table) as the cognate."""
    return next((c for c in candidates(word) if count(c) >= MIN_CHUNKS), None)
