"""Near misses whose neighbour the question's own context chooses (answer/absent.py,
answer/near_names.py), over the real engine on real files, offline: the class a lower-case
receiver is named after, the module written as an owner, the name the question's other words
point to, the file of the question's other names before a copy elsewhere; forms detected
(object-literal options, backticked calls with arguments, a plain word beside an acronym class
name); and what is never absent (a name spelled only alike, an attribute the writer assigns)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from code_compass_server.answer import AskRequest, ask
from code_compass_server.answer.absent import named_members
from code_compass_server.answer.near_names import bare_names
from code_compass_server.engine import Engine
from tests.answer.conftest import nearest_of_absent

CACHES_PY = '''\
"""Caches with a maximum size."""

import random


class Cache:
    """A mapping holding at most maxsize items."""

    def __init__(self, maxsize, getsizeof=None):
        self.__maxsize = maxsize
        self.__getsizeof = getsizeof

    @property
    def maxsize(self):
        """The maximum size of the cache."""
        return self.__maxsize


class LRUCache(Cache):
    """Least Recently Used cache: evicts the item used longest ago."""

    def __init__(self, maxsize, getsizeof=None):
        Cache.__init__(self, maxsize, getsizeof)


class RRCache(Cache):
    """Random Replacement cache: evicts a random item."""

    def __init__(self, maxsize, choice=random.choice, getsizeof=None):
        Cache.__init__(self, maxsize, getsizeof)
        self.__choice = choice
'''

UNBOUND_PY = '''\
"""An unbounded stand-in used by the function decorators."""


class _UnboundStandIn(dict):
    @property
    def maxsize(self):
        return None
'''

WRAPPER_PY = '''\
"""The wrapper of a memoized method."""


class _WrapperBase:
    def __init__(self, obj):
        self.__obj = obj

    @property
    def cache(self):
        return self.__obj
'''

KEYS_PY = '''\
"""Key functions for memoizing decorators."""


def hashkey(*args, **kwargs):
    """Return a cache key for the specified hashable arguments."""
    return tuple(args) + tuple(sorted(kwargs.items()))


def methodkey(self, *args, **kwargs):
    """Return a cache key for use with cached methods."""
    return hashkey(*args, **kwargs)
'''

INFO_PY = '''\
"""Statistics of a memoized function."""

import collections


class CacheInfo(collections.namedtuple("CacheInfo", "hits misses maxsize currsize")):
    """Named tuple holding cache statistics."""


class _InfoMixin:
    def cache_info(self):
        return CacheInfo(self.hits, self.misses, None, 0)
'''

INFO_PYI = """\
from typing import NamedTuple

class CacheInfo(NamedTuple):
    hits: int
    misses: int

class _InfoMixin:
    def cache_info(self) -> CacheInfo: ...
"""

DRAFTS_TS = """\
export interface Patch {
  op: string
  path: string[]
  value?: unknown
}

/** Returns true if the given value is a draft */
export function isDraft(value: any): boolean {
  return !!value && !!value.__state
}

export class Immer {
  /** Creates a draft that can be changed until finishDraft is called. */
  createDraft<T>(base: T): T {
    return base
  }

  /** Finishes a draft made by createDraft and revokes it. */
  finishDraft<D>(draft: D): D {
    return draft
  }

  /** Applies patches, such as the inverse patches of a change, to a base state. */
  applyPatches<T>(base: T, patches: readonly Patch[]): T {
    return base
  }
}

/** Turns on patch generation. */
export function enablePatches(): void {
  const generated: Patch[] = []
  void generated
}

/** Turns on drafting of Map and Set. */
export function enableMapSet(): void {
  const supported = true
  void supported
}
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("context")
    ws = root / "ws"
    (ws / "caches").mkdir(parents=True)
    (ws / "caches" / "__init__.py").write_text(CACHES_PY, encoding="utf-8")
    (ws / "caches" / "unbound.py").write_text(UNBOUND_PY, encoding="utf-8")
    (ws / "caches" / "wrapper.py").write_text(WRAPPER_PY, encoding="utf-8")
    (ws / "caches" / "keys.py").write_text(KEYS_PY, encoding="utf-8")
    (ws / "caches" / "info.py").write_text(INFO_PY, encoding="utf-8")
    (ws / "caches" / "info.pyi").write_text(INFO_PYI, encoding="utf-8")
    (ws / "drafts.ts").write_text(DRAFTS_TS, encoding="utf-8")
    eng = Engine.open(root / "storage")
    eng.add_project(ws)
    eng.index(embed=False)
    yield eng
    eng.close()


def test_a_name_spelled_only_alike_is_absent_and_cites_the_definition_in_the_question_file(
    engine: Engine,
) -> None:
    # `max_size` is not `maxsize` (the lexical index folds case: its camelCase `maxSize`
    # matched `maxsize`); of the two `maxsize`, the one in LRUCache's module.
    for question in (
        "what's the right value for max_size if I want an LRUCache holding 1000 entries?",
        "qual o valor certo de max_size se eu quero um LRUCache com 1000 entradas?",
    ):
        near = nearest_of_absent(question, engine, "max_size")
        assert near["path"] == "caches/__init__.py", near


def test_a_plain_word_beside_an_acronym_class_name_cites_that_class(engine: Engine) -> None:
    question = "RRCache — which seed parameter do I give it to get reproducible evictions?"
    near = nearest_of_absent(question, engine, "seed")
    assert near["path"] == "caches/__init__.py" and near["symbol"].startswith("RRCache"), near


def test_a_lower_case_receiver_is_the_class_named_after_it(engine: Engine) -> None:
    near = nearest_of_absent(
        "can I grow a running cache with cache.resize(5000)?", engine, "resize"
    )
    assert near["symbol"] == "Cache" and near["path"] == "caches/__init__.py", near


def test_a_module_owner_cites_its_module(engine: Engine) -> None:
    question = "for a method I want self included in the key; should I use `keys.instancekey`?"
    near = nearest_of_absent(question, engine, "instancekey")
    assert near["path"] == "caches/keys.py", near


def test_a_field_of_a_function_s_result_cites_the_type_it_returns(engine: Engine) -> None:
    # cache_info() returns CacheInfo (said by the stub); its definition in code, not the stub.
    question = "does the `evictions` field in cache_info() count expired items too?"
    near = nearest_of_absent(question, engine, "evictions")
    assert near["symbol"] == "CacheInfo" and near["path"] == "caches/info.py", near


def test_the_question_s_other_name_is_the_neighbour_among_names_alike(engine: Engine) -> None:
    # `isDraft` is spelled as close to `discardDraft`; the question writes `createDraft`.
    question = "if the user cancels, do I call discardDraft on the draft from createDraft?"
    assert nearest_of_absent(question, engine, "discardDraft")["symbol"] == "Immer.createDraft"


@pytest.mark.parametrize(
    "question",
    [
        "for undo, should I call `revertPatches(state, patches)` or apply the inverse ones?",
        "pra fazer undo, devo chamar `revertPatches(state, patches)` ou aplicar os inversos?",
    ],
)
def test_the_question_s_words_choose_among_names_alike(engine: Engine, question: str) -> None:
    # "apply" (Portuguese "aplicar" through the lexicon) points to `applyPatches`, not to
    # `enablePatches` spelled as close.
    assert nearest_of_absent(question, engine, "revertPatches")["symbol"] == "Immer.applyPatches"


def test_an_object_literal_option_of_a_call_cites_the_call(engine: Engine) -> None:
    question = "enableMapSet({ draftKeys: true }) — are object keys of a Map drafted then?"
    assert nearest_of_absent(question, engine, "draftKeys")["symbol"] == "enableMapSet"


def test_an_attribute_the_writer_assigns_is_never_absent(engine: Engine) -> None:
    ans = ask(
        AskRequest("I set draft.items.meta = 1 on a draft and it throws; why?", min_score=0.0),
        engine,
    )
    assert ans.to_json()["absent"] == [], ans.answer


def test_forms_read_from_the_question() -> None:
    assert bare_names("should I call `revertPatches(state, patches)`?") == [("revertPatches", "")]
    by_name = {m.name: m for m in named_members("can I pass an onPatch option to produce?")}
    assert by_name["onPatch"].owner == "produce" and by_name["onPatch"].guessed
    by_name = {m.name: m for m in named_members("freeze(data, { maxDepth: 2 }) — how deep?")}
    assert by_name["maxDepth"].owner == "freeze" and by_name["maxDepth"].kind == "parameter"
    # a Portuguese adjective after a kind word names nothing
    question = "dá pra passar uma opção onPatch pro produce em vez do argumento posicional?"
    assert "posicional" not in {m.name for m in named_members(question)}
