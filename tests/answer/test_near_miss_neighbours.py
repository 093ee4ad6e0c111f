"""How a missing name's neighbour is chosen and which forms name one (answer/absent.py,
answer/near_names.py), over the real engine on real Go and Python files, offline: a method
chained on a call and a capitalized word beside a method word; an owner the index does not
define giving way to one it does; a package written as the owner (a folder, not a README
section titled after it); words of the same sense as shared parts; the public definition
calling an internal one; the definition whose text says the name's words; and what stays a
name that exists."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from code_compass_server.answer import AskRequest, ask
from code_compass_server.answer.absent import named_members
from code_compass_server.answer.near_names import (
    bare_names,
    likeness,
    same_sense_names,
    spelled_neighbour,
)
from code_compass_server.engine import Engine
from code_compass_server.records import SearchHit
from tests.answer.conftest import nearest_of_absent

BAR_GO = """\
package bars

// Bar is one progress bar.
type Bar struct {
	container *Progress
	index     int
}

// Abort interrupts the bar. If drop is true the bar is taken off the screen as well.
func (b *Bar) Abort(drop bool) {
	if drop {
		b.container.dropBar(b)
	}
}
"""

PROGRESS_GO = """\
package bars

// Progress holds the bars drawn together.
type Progress struct {
	bars []*Bar
}

// AddBar puts a new bar below the others.
func (p *Progress) AddBar(total int64) *Bar {
	b := &Bar{container: p, index: len(p.bars)}
	p.bars = append(p.bars, b)
	return b
}

func (p *Progress) dropBar(b *Bar) {
	p.bars = append(p.bars[:b.index], p.bars[b.index+1:]...)
}
"""

STYLE_GO = """\
package bars

// StyleComposer alters the look of a bar.
type StyleComposer interface {
	Lbound(string) StyleComposer
	Tip(string) StyleComposer
}

// Style constructs the default bar style, altered through StyleComposer.
func Style() StyleComposer {
	return nil
}
"""

DECOR_GO = """\
package decor

// WC is a width configuration of a decorator.
type WC struct {
	W int
	C int
}

// Widths most decorators use.
var (
	WCSyncWidth  = WC{C: 1}
	WCSyncWidthR = WC{C: 2}
	WCSyncSpace  = WC{C: 3}
)

// TimeStyle is how a duration is printed.
type TimeStyle int

// TimeStyle kinds.
const (
	ET_STYLE_GO TimeStyle = iota
	ET_STYLE_HHMMSS
	ET_STYLE_MMSS
)

// Name returns a decorator printing a name.
func Name(str string, wcc ...WC) string {
	return str
}
"""

ETA_GO = """\
package decor

func chooseTimeProducer(style TimeStyle) func(int) string {
	switch style {
	case ET_STYLE_HHMMSS:
		return func(s int) string { return "hh:mm:ss" }
	case ET_STYLE_MMSS:
		return func(s int) string { return "mm:ss" }
	default:
		return func(s int) string { return "go" }
	}
}

// Elapsed prints the time elapsed in the given style.
func Elapsed(style TimeStyle) string {
	return chooseTimeProducer(style)(0)
}
"""


def _backend(name: str) -> str:
    # The other backends' copies say more of the question's words: only the file name tells.
    more = "" if name == "inotify" else " How many watches are used: len(WatchList())."
    return f"""\
package notify

// Watcher watches files through {name}.
type Watcher struct {{
	watches map[string]int
}}

// WatchList returns all paths explicitly added with Add() (and are not yet removed).{more}
func (w *Watcher) WatchList() []string {{
	entries := make([]string, 0, len(w.watches))
	for pathname := range w.watches {{
		entries = append(entries, pathname)
	}}
	return entries
}}
"""


TIME_PY = '''\
"""Durations in words."""


def naturaldelta(value, months=True, minimum_unit="seconds"):
    """A duration in words, never below minimum_unit."""
    return str(value) + minimum_unit


def precisedelta(value, minimum_unit="seconds", suppress=()):
    """A precise duration."""
    return str(value)
'''

I18N_PY = '''\
"""Turning translations on and off."""

_CURRENT = {}


def activate(locale, path=None):
    """Set `locale` as the current locale for the calling thread."""
    _CURRENT["locale"] = locale
    return locale


def deactivate():
    """Deactivate translations for the calling thread."""
    _CURRENT.pop("locale", None)
'''

RETRY_PY = '''\
"""Retrying a call."""


class BaseRetrying:
    def __init__(self, stop=None, retry_error_callback=None):
        self.stop = stop
        self.retry_error_callback = retry_error_callback

    def _post_stop_check_actions(self, retry_state):
        if self.retry_error_callback:
            return self.retry_error_callback(retry_state)
        raise RuntimeError("retries exhausted")
'''

ASYNC_RETRY_PY = '''\
"""Retrying a coroutine."""

from retrying import BaseRetrying


class AsyncRetrying(BaseRetrying):
    def __init__(self, stop=None, retry_error_callback=None):
        super().__init__(
            stop=stop,
            retry_error_callback=retry_error_callback,
        )
'''

MEMO_PY = '''\
"""Memoizing wrappers."""


class _Wrapper:
    def cache_info(self):
        """Hits and misses so far."""
        return (0, 0)

    def cache_parameters(self):
        """The maxsize and typed of the cache."""
        return {}

    def cache_clear(self):
        """Empty the cache and its statistics."""
        return None
'''

README_MD = """\
# humanely

Durations and numbers in words, in many languages: `activate("fr_FR")` turns French on.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("neighbours")
    ws = root / "ws"
    (ws / "decor").mkdir(parents=True)
    (ws / "src" / "humanely").mkdir(parents=True)
    (ws / "bar.go").write_text(BAR_GO, encoding="utf-8")
    (ws / "progress.go").write_text(PROGRESS_GO, encoding="utf-8")
    (ws / "style.go").write_text(STYLE_GO, encoding="utf-8")
    (ws / "decor" / "decorator.go").write_text(DECOR_GO, encoding="utf-8")
    (ws / "decor" / "eta.go").write_text(ETA_GO, encoding="utf-8")
    (ws / "notify").mkdir()
    for backend in ("kqueue", "inotify", "windows"):
        (ws / "notify" / f"backend_{backend}.go").write_text(_backend(backend), encoding="utf-8")
    (ws / "src" / "humanely" / "__init__.py").write_text('"""humanely."""\n', encoding="utf-8")
    (ws / "src" / "humanely" / "time.py").write_text(TIME_PY, encoding="utf-8")
    (ws / "src" / "humanely" / "i18n.py").write_text(I18N_PY, encoding="utf-8")
    (ws / "src" / "humanely" / "memo.py").write_text(MEMO_PY, encoding="utf-8")
    (ws / "README.md").write_text(README_MD, encoding="utf-8")
    (ws / "retrying" / "asyncio").mkdir(parents=True)
    (ws / "retrying" / "__init__.py").write_text(RETRY_PY, encoding="utf-8")
    (ws / "retrying" / "asyncio" / "__init__.py").write_text(ASYNC_RETRY_PY, encoding="utf-8")
    eng = Engine.open(root / "storage")
    eng.add_project(ws)
    eng.index(embed=False)
    yield eng
    eng.close()


@pytest.mark.parametrize(
    "question",
    [
        'how do I set the tip with the Head method of Style, e.g. Style().Head("=>")?',
        "como defino a seta na ponta com o método Head do Style?",
    ],
)
def test_a_method_chained_or_capitalized_beside_a_method_word_cites_its_owner(
    engine: Engine, question: str
) -> None:
    near = nearest_of_absent(question, engine, "Head")
    assert near["path"] == "style.go" and near["symbol"] == "Style", near


def test_forms_that_name_a_method_and_forms_that_do_not() -> None:
    assert ("Head", "Style") in bare_names('e.g. Style().Head("=>")?')
    by_name = {m.name: m for m in named_members("the Head method of Style")}
    assert by_name["Head"].owner == "Style" and by_name["Head"].strict
    # A proper noun qualifying a kind word, and a sentence's first word, name nothing.
    assert "Python" not in {
        m.name for m in named_members("what does the Python function foo_bar do?")
    }
    assert "Head" not in {m.name for m in named_members("Head method of Style: does it exist?")}


def test_an_owner_the_index_does_not_define_gives_way_to_one_it_does(engine: Engine) -> None:
    # `minimum_unit` is a parameter, not a definition: `naturaldelta` is the owner.
    for question in (
        "naturaldelta has minimum_unit; how do I use its maximum_unit option?",
        "o naturaldelta tem minimum_unit; como uso a opção maximum_unit dele?",
    ):
        near = nearest_of_absent(question, engine, "maximum_unit")
        assert near["symbol"] == "naturaldelta", near
    # the parameter it has is never absent
    ans = ask(AskRequest("naturaldelta has months; how do I use its minimum_unit option?"), engine)
    assert ans.to_json()["absent"] == [], ans.answer


def test_a_package_owner_cites_the_function_saying_the_name_s_words(engine: Engine) -> None:
    # Not the README section titled after the package: the function whose doc says
    # "Set `locale`".
    near = nearest_of_absent("is humanely.set_locale('fr_FR') thread-local?", engine, "set_locale")
    assert near["path"] == "src/humanely/i18n.py" and near["symbol"] == "activate", near


def test_a_go_package_owner_is_its_folder(engine: Engine) -> None:
    question = "for left-aligned columns should I pass decor.WCSyncWidthL to decor.Name?"
    near = nearest_of_absent(question, engine, "WCSyncWidthL")
    assert near["path"] == "decor/decorator.go", near
    ans = ask(AskRequest(question), engine)
    assert "`WCSyncWidth`" in ans.answer


def test_a_constant_of_a_go_const_block_is_cited_where_it_is_declared(engine: Engine) -> None:
    # `ET_STYLE_MMSS` is declared alone on its line after an `iota`; the switch only uses it.
    question = "what does decor.Elapsed(decor.ET_STYLE_SECONDS) print, just seconds?"
    near = nearest_of_absent(question, engine, "ET_STYLE_SECONDS")
    assert near["path"] == "decor/decorator.go", near
    assert "`ET_STYLE_MMSS`" in ask(AskRequest(question), engine).answer


def test_an_internal_name_of_the_same_sense_gives_way_to_its_public_caller(
    engine: Engine,
) -> None:
    # `dropBar` is what a `RemoveBar` would be (drop = remove), but a user cannot call it:
    # `Bar.Abort` does; `AddBar` shares a part only.
    for question in (
        "does p.RemoveBar(bar) block until the bar has disappeared?",
        "o p.RemoveBar(bar) bloqueia até a barra sumir?",
    ):
        near = nearest_of_absent(question, engine, "RemoveBar")
        assert near["symbol"] == "Bar.Abort" and near["path"] == "bar.go", near


def test_a_name_of_the_same_sense_is_the_neighbour_among_names_sharing_a_part(
    engine: Engine,
) -> None:
    question = "does the memoized wrapper have a cache_invalidate method taking the same args?"
    near = nearest_of_absent(question, engine, "cache_invalidate")
    assert near["symbol"] == "_Wrapper.cache_clear", near


def test_of_copies_of_a_name_the_one_in_the_file_the_question_names(engine: Engine) -> None:
    question = (
        "is there a WatchCount method to know how many watches I used against the inotify limit?"
    )
    near = nearest_of_absent(question, engine, "WatchCount")
    assert near["path"] == "notify/backend_inotify.go", near


def test_copies_chosen_by_the_file_the_question_names_then_by_depth() -> None:
    def hit(path: str) -> tuple[SearchHit, str]:
        text = _backend("x")
        return SearchHit(path, 9, 16, 0.5, "Watcher.WatchList", "method", "go", "p", text), text

    copies = [hit("notify/backend_kqueue.go"), hit("notify/backend_inotify.go")]
    question = "is there a WatchCount method to know the watches used against the inotify limit?"
    assert spelled_neighbour("WatchCount", copies, question) == (1, "WatchList")
    assert spelled_neighbour("WatchCount", copies, "is there a WatchCount method?")[0] == 0
    nested = [hit("pkg/asyncio/backend.go"), hit("pkg/backend.go")]
    assert spelled_neighbour("WatchCount", nested, "is there a WatchCount method?")[0] == 1


def test_code_before_its_stub_and_a_public_type_before_an_internal_one_s_member() -> None:
    def hit(path: str, symbol: str, kind: str = "method") -> tuple[SearchHit, str]:
        text = f"def {symbol.rsplit('.', 1)[-1]}(self): ..."
        return SearchHit(path, 1, 2, 0.5, symbol, kind, "python", "p", text), text

    stubbed = [
        hit("pkg/__init__.pyi", "_wrapper.cache_clear"),
        hit("pkg/_deco.py", "_Mixin.cache_clear"),
    ]
    assert spelled_neighbour("cache_invalidate", stubbed) == (1, "cache_clear")
    members = [hit("pkg/_method.py", "_WrapperBase.cache"), hit("pkg/core.py", "Cache", "class")]
    assert spelled_neighbour("cache_none", members) == (1, "Cache")


def test_words_of_the_same_sense_are_shared_parts() -> None:
    assert likeness("RemoveBar", "dropBar") == 1.0
    assert likeness("cache_invalidate", "cache_clear") == 1.0
    assert likeness("RemoveBar", "AddBar") == 0.5
    assert likeness("max_size", "max_age") == 0.0  # a weak part alone
    assert likeness("max_units", "minimum_unit") == 0.5  # `units` is `unit` inflected
    assert "cache_clear" in same_sense_names("cache_invalidate")
    assert {"dropBar", "DropBar"} <= set(same_sense_names("RemoveBar"))


@pytest.mark.parametrize(
    "question",
    [
        "how do I register an on_giveup callback that runs once all retries are exhausted?",
        "como registro um callback on_giveup que roda quando as tentativas se esgotam?",
    ],
)
def test_a_name_ending_with_the_noun_written_beside_the_missing_one(
    engine: Engine, question: str
) -> None:
    # Nothing is spelled like `on_giveup`; "callback" is what it is: `retry_error_callback`,
    # in the package's own module before its asyncio twin.
    near = nearest_of_absent(question, engine, "on_giveup")
    assert near["path"] == "retrying/__init__.py", near
    assert "`retry_error_callback`" in ask(AskRequest(question), engine).answer
