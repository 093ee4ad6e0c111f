"""What is never absent (answer/absent.py, answer/near_names.py), over the real engine on real
files, offline: a plain English word before a kind word with no owner the index defines ("a
stricter option", "a dict argument"; any word before "config" or "keyword"), while an
abbreviation (`rnd`) or a word beside a defined owner still names one; a quoted value passed
to a call is no name; a nested `def` defines its name. (Ported from branch h/nm5b.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from code_compass_server.answer import AskRequest, ask
from code_compass_server.answer.absent import named_members
from code_compass_server.answer.near_names import bare_names, defines
from code_compass_server.engine import Engine
from tests.answer.conftest import indexed_engine, nearest_of_absent

README_MD = """\
# textfmt

Human-friendly formatting of numbers and sizes.

## textfmt

Call `textfmt.activate("de_DE")` to translate the output.
"""

TEXTFMT_INIT_PY = '''\
"""Human-friendly formatting."""

from textfmt.i18n import activate, deactivate
from textfmt.number import intcomma, parse_size
'''

TEXTFMT_I18N_PY = '''\
"""Translations of the formatted words."""

import threading

_CURRENT = threading.local()


def activate(locale, path=None):
    """Activate the translation for a locale in the current thread."""
    _CURRENT.locale = locale
    return locale


def deactivate():
    """Go back to the untranslated words in the current thread."""
    _CURRENT.locale = None
'''

TEXTFMT_NUMBER_PY = '''\
"""Numbers written for people."""


def intcomma(value, ndigits=None):
    """Put a comma every three digits."""
    return f"{value:,}"


def parse_size(text, min_unit="bytes", strict=False):
    """Read a size such as "3 MB", never smaller than min_unit."""
    return float(text.split()[0])
'''

STYLE_GO = """\
package bars

// StyleComposer sets the characters a bar is drawn with.
type StyleComposer interface {
\tLbound(string) StyleComposer
\tRbound(string) StyleComposer
\tTip(string) StyleComposer
}

type barStyle struct {
\tlbound, rbound, tip string
}

// Style is the default bar style: [=>-].
func Style() StyleComposer {
\treturn &barStyle{lbound: "[", rbound: "]", tip: ">"}
}

func (s *barStyle) Lbound(v string) StyleComposer { s.lbound = v; return s }
func (s *barStyle) Rbound(v string) StyleComposer { s.rbound = v; return s }
func (s *barStyle) Tip(v string) StyleComposer    { s.tip = v; return s }
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    files = {
        "README.md": README_MD,
        "src/textfmt/__init__.py": TEXTFMT_INIT_PY,
        "src/textfmt/i18n.py": TEXTFMT_I18N_PY,
        "src/textfmt/number.py": TEXTFMT_NUMBER_PY,
        "bars/style.go": STYLE_GO,
    }
    eng = indexed_engine(tmp_path_factory.mktemp("owners"), files)
    yield eng
    eng.close()


@pytest.mark.parametrize(
    "question",
    [
        "the whole thing sometimes takes longer than the limit; is there a stricter option?",
        "my function takes a dict argument and the call blows up with TypeError; why?",
        "what does the Tip method of Style draw?",
        "how does parse_size turn env vars into nested config dicts?",
        "why do I get TypeError about an unexpected keyword when I call intcomma?",
        "does intcomma() take a grouping parameter for the digits?",
    ],
)
def test_plain_words_without_a_defined_owner_are_never_absent(
    engine: Engine, question: str
) -> None:
    # "stricter", "dict" are prose before a kind word (no owner the index defines), as is any
    # word before "config" or "keyword", and the workspace has none of them; "grouping" has
    # an owner (`intcomma`) and is absent (the control that the form is read).
    ans = ask(AskRequest(question, min_score=0.0), engine)
    said = [a["name"] for a in ans.to_json()["absent"]]
    assert said == (["grouping"] if "grouping" in question else []), ans.answer


def test_forms_read_from_the_question() -> None:
    # A quoted value passed to a call is no name; a chained call's method is one.
    assert bare_names("is textfmt.use_locale('de_DE') global?") == [("use_locale", "textfmt")]
    assert ("Arrow", "Style") in bare_names('e.g. Style().Arrow(">")')
    # A capitalised word beside a method word names a method of the owner after "of".
    by_name = {m.name: m for m in named_members("the Close method of Watcher")}
    assert by_name["Close"].owner == "Watcher" and by_name["Close"].strict
    assert "Which" not in {m.name for m in named_members("Which method of Watcher blocks?")}


def test_an_abbreviation_before_a_kind_word_is_a_name_without_an_owner(engine: Engine) -> None:
    # No vowel: no English word, so no owner is needed for `rnd` to name something.
    question = "how do I pass a rnd argument to the size parsing so results are stable?"
    assert nearest_of_absent(question, engine, "rnd")["path"].startswith("src/textfmt/")


def test_a_nested_def_defines_its_name() -> None:
    # A method written inside a class's passage (`cache_clear` of `_Wrapper`) is a definition
    # there, not a mention: its passage is cited rather than searched again.
    text = "class _Wrapper:\n    def cache_clear(self):\n        pass\n"
    assert defines(text, "cache_clear") and not defines("self.cache_clear()", "cache_clear")
    go = "func (p *Pool) dropItem(it *Item) {}"
    assert defines(go, "dropItem")
