"""Text normalisation and content terms for the classifier (EN + PT, code-aware).

Matching runs on lower-case text without accents, so "não"/"nao" and "por quê"/"por que"
are the same to the lexicons; identifiers are split (retry_with_backoff, EmbeddingCache,
http/client.py) so a question and an answer that name the same code share terms.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_QUOTES = str.maketrans(
    {"’": "'", "‘": "'", "“": '"', "”": '"', "—": " - ", "–": " - ", "…": "..."}
)
_WS = re.compile(r"\s+")
_WORD = re.compile(r"[A-Za-z0-9À-ÿ]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def _wordlist(text: str) -> list[str]:
    return text.split()


# Function words of both languages and question words: they say nothing about the topic.
_STOP_EN = _wordlist(
    """a an the and or but if then so of to in on at by for from with without into onto
about as is are was were be been being do does did done have has had it its this that these those
there here they them their we our us you your i me my he she his her what which who whom whose
where when why how whether can could should would will shall may might must not no yes any some
all each every more most other such only own same than too very just also again ever still yet
let lets please ok okay hmm wait well really actually like get got make made want need know think
tell show give see look find does did up down out over under between through during before after
one two new now"""
)
_STOP_PT = _wordlist(
    """o a os as um uma uns umas de do da dos das no na nos nas em ao aos à às pelo pela
pelos pelas por para com sem sob sobre entre e ou mas se que qual quais quem onde quando como
porque pq porquê é são ser foi era está estão estar esta isso isto esse essa esses essas este
aquele aquela aquilo ele ela eles elas dele dela nele nela lhe me mim meu minha nosso nossa você
vocês voce voces eu nós nos tem têm ter há ha já ja ainda também tambem muito mais menos só so
não nao sim aqui ali lá la então entao agora fica ficam onde faz fazer feito feita vai pode
posso deve quanto quantos quantas algum alguma todo toda todos todas cada outro outra mesmo
mesma ok hmm tipo coisa"""
)
# Words every code question uses: sharing them is no evidence of a shared topic.
_GENERIC = _wordlist(
    """file files function functions code class classes method methods module modules line
lines project repo repository use uses used using call calls called defined define definition
work works value values name names type types return returns returned thing things question
answer test tests tested testing py js ts go rs java md txt json toml yml yaml html css
arquivo arquivos funcao funcoes codigo classe classes metodo metodos modulo modulos linha linhas
projeto repositorio usa usar usado usada usados chama chamada chamado definido definida definir
funciona funcionar valor valores nome tipo retorna retorno pergunta resposta teste testes mostra
mostre mostrar where onde list liste listar lista explain explica explique explicar summarize
summarise resuma resumir describe descreva topic subject tema assunto different diferente
unrelated another outro outra"""
)


def _fold(text: str) -> str:
    nfkd = unicodedata.normalize("NFKD", text)
    return "".join(c for c in nfkd if not unicodedata.combining(c))


def normalize(text: str) -> str:
    """Lower case, no accents, straight quotes, single spaces."""
    return _WS.sub(" ", _fold(text.translate(_QUOTES)).lower()).strip()


_STOP = frozenset(normalize(w) for w in (*_STOP_EN, *_STOP_PT))
_GENERIC_SET = frozenset(normalize(w) for w in _GENERIC)

# Suffixes removed before truncation so parse/parser/parsing and teste/testes meet.
_SUFFIXES = (
    "ations", "ation", "acoes", "acao", "coes", "cao", "ings", "ing", "ies", "ers",
    "er", "es", "ed", "s", "e",
)  # fmt: skip
_STEM_LEN = 5


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    if word.isdigit():
        return word
    for suf in _SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            word = word[: -len(suf)] + ("y" if suf == "ies" else "")
            break
    return word[:_STEM_LEN]


def split_identifier(token: str) -> list[str]:
    """EmbeddingCache -> [embedding, cache]; retry_with_backoff is split by the word regex."""
    parts = _CAMEL.findall(token)
    return parts or [token]


@lru_cache(maxsize=4096)  # history messages are re-read on every turn
def content_terms(text: str) -> frozenset[str]:
    """Stems of the topic-bearing words of `text` (identifiers split, stop/generic words out)."""
    out: set[str] = set()
    for raw in _WORD.findall(_fold(text.translate(_QUOTES))):
        pieces = [raw]
        if not raw.islower():
            # keep the whole identifier and its parts; acronym stubs ("SQ" of SQLite) add noise
            pieces += [p for p in split_identifier(raw) if len(p) >= 3]
        for piece in pieces:
            w = piece.lower()
            if len(w) < 2 or w in _STOP or w in _GENERIC_SET:
                continue
            if w.isdigit() and len(w) < 2:
                continue
            out.add(stem(w))
    return frozenset(out)


def words(text_norm: str) -> list[str]:
    return _WORD.findall(text_norm)
