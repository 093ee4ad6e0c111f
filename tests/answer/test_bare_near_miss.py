"""Near misses named bare (answer/near_names.py, answer/absent.py): a question that writes a
missing name as code without a kind word or backticks ("pass default_timezone to parse_iso",
`Event.OldName`, "call AddRecursive") is answered "does not exist here; the closest is …" with
the real neighbour cited, offline, over the real engine on real files; a question naming
things that exist is never turned into an absence."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from code_compass_server.answer import AskRequest, ask
from code_compass_server.answer.absent import NAME_KIND, named_members
from code_compass_server.answer.near_names import bare_names, likeness
from code_compass_server.engine import Engine
from tests.answer.test_near_miss import DATES_PY

WATCH_GO = """\
package watch

import "errors"

var (
\tErrNonExistentWatch = errors.New("can't remove non-existent watch")
\tErrEventOverflow    = errors.New("event queue overflow")
)

// Event is one change to a watched file.
type Event struct {
\t// Name is the path of the file that changed.
\tName string
\t// Op is what happened to it.
\tOp Op
}

// Op is a set of file operations.
type Op uint32

// Watcher watches a set of paths and sends their events.
type Watcher struct {
\tEvents chan Event
\tErrors chan error
}

// NewWatcher starts a watcher.
func NewWatcher() (*Watcher, error) {
\treturn &Watcher{Events: make(chan Event), Errors: make(chan error)}, nil
}

// Add starts watching the named file or directory (not its subdirectories).
func (w *Watcher) Add(name string) error {
\tif name == "" {
\t\treturn ErrNonExistentWatch
\t}
\treturn nil
}
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("bare")
    ws = root / "ws"
    ws.mkdir()
    (ws / "dates.py").write_text(DATES_PY, encoding="utf-8")
    (ws / "watch.go").write_text(WATCH_GO, encoding="utf-8")
    eng = Engine.open(root / "storage")
    eng.add_project(ws)
    eng.index(embed=False)
    yield eng
    eng.close()


def test_bare_names_of_a_question() -> None:
    assert bare_names("on a rename, how do I read Event.OldName?") == [("OldName", "Event")]
    assert bare_names("how do I call AddRecursive on a tree?") == [("AddRecursive", "")]
    assert bare_names("can I pass gaussian=True to the wait?") == [("gaussian", "")]
    assert bare_names("what should I pass to max_retries?") == [("max_retries", "")]
    assert bare_names("como pauso com Pause() e retomo depois?") == [("Pause", "")]
    # plain words and hyphenated prose are not names
    assert bare_names("is the parser thread-safe in Python, and is it well-tested?") == []


def test_a_plain_word_is_a_name_only_with_a_kind_word() -> None:
    assert [(m.name, m.strict) for m in named_members("does it take a strict flag?")] == [
        ("strict", True)
    ]
    assert [m.name for m in named_members("como passo um argumento rng pra espera?")] == ["rng"]
    assert named_members("is the parsing strict about time zones?") == []
    assert named_members("qual parâmetro opcional define o fuso?") == []
    kinds = {m.name: m.kind for m in named_members("how do I read Event.OldName?")}
    assert kinds == {"OldName": NAME_KIND}


def test_likeness_of_names() -> None:
    assert likeness("ErrWatchLimit", "ErrNonExistentWatch") >= 0.5  # shared parts
    assert likeness("NewBufferedWatcher", "NewWatcher") >= 0.5
    assert likeness("default_timezone", "default_tz") >= 0.75  # spelling
    assert likeness("max_retries", "max_delay") == 0.0  # `max` alone is too common
    assert likeness("Pause", "Close") == 0.0


def _absent(ans) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    return {a["name"]: a for a in ans.to_json()["absent"]}


def test_bare_snake_case_name_is_absent_with_the_name_spelled_like_it(engine) -> None:
    ans = ask(AskRequest("how do I pass default_timezone to parse_iso?"), engine)
    absent = _absent(ans)
    assert set(absent) == {"default_timezone"}, ans.answer
    assert absent["default_timezone"]["nearest"]["path"] == "dates.py"
    assert "`default_timezone` does not exist here; the closest is `default_tz`" in ans.answer
    assert ans.state != "OK" and not ans.meta["llmCalled"]


def test_dotted_member_cites_its_owner(engine) -> None:
    ans = ask(AskRequest("on a rename event, how do I read Event.OldName?"), engine)
    nearest = _absent(ans)["OldName"]["nearest"]
    assert nearest["path"] == "watch.go" and nearest["symbol"] == "Event"
    assert "`OldName` does not exist here (not in `Event`); the closest is `Name`" in ans.answer
    assert ans.state != "OK"


def test_camel_case_name_named_alone(engine) -> None:
    ans = ask(AskRequest("how do I call AddRecursive so a whole tree is watched?"), engine)
    nearest = _absent(ans)["AddRecursive"]["nearest"]
    assert nearest["path"] == "watch.go" and nearest["symbol"].endswith("Add")
    assert "the closest is `Add`" in ans.answer and ans.state != "OK"


def test_shared_parts_find_a_definition_in_a_var_block(engine) -> None:
    ans = ask(AskRequest("how do I get ErrWatchLimit back from Add?"), engine)
    assert "`ErrWatchLimit` does not exist here" in ans.answer
    assert _absent(ans)["ErrWatchLimit"]["nearest"]["path"] == "watch.go"


def test_portuguese_bare_name(engine) -> None:
    ans = ask(AskRequest("como chamo o AddRecursive pra observar uma árvore inteira?"), engine)
    assert "AddRecursive" in _absent(ans)
    assert "`AddRecursive` não existe neste workspace; o mais próximo é `Add`" in ans.answer
    assert ans.state != "OK"


def test_plain_word_with_a_kind_word(engine) -> None:
    ans = ask(AskRequest("does parse_iso take a lenient flag?"), engine)
    assert "lenient" in _absent(ans)
    assert ans.state != "OK"


@pytest.mark.parametrize(
    "question",
    [
        "what does default_tz do in parse_iso?",
        "how does Watcher.Add report a missing path?",
        "where is ErrNonExistentWatch returned?",
        "does NewWatcher return an error?",
        "can I pass fold=True to parse_iso?",
        "is parse_iso thread-safe for ISO 8601 strings?",
        "o Event.Name traz o caminho do arquivo?",
        "does parse_iso take a fold flag?",
    ],
)
def test_names_that_exist_are_never_absent(engine, question: str) -> None:
    ans = ask(AskRequest(question, min_score=0.0), engine)
    assert ans.to_json()["absent"] == [], ans.answer
    assert "does not exist" not in ans.answer and "não existe" not in ans.answer


def test_an_unknown_bare_name_is_refused_without_a_model_saying_what_is_there(
    engine, fake_api, llm
) -> None:
    # The unknown-symbol rule holds (FAIL, no model, three suggestions); the refusal goes on
    # with the absence and cites the neighbour.
    ans = ask(
        AskRequest("how do I pass default_timezone to parse_iso?", min_score=0.0), engine, llm=llm
    )
    assert fake_api.message_requests == []
    assert ans.state == "FAIL" and len(ans.suggestions) == 3
    refusal, _, said = ans.answer.partition("\n\n")
    assert "`default_timezone`" in refusal
    assert said.startswith("`default_timezone` does not exist here; the closest is `default_tz`")
    assert [a.name for a in ans.absent] == ["default_timezone"]


def test_the_prompt_carries_the_absence_of_a_plain_word(engine, fake_api, llm) -> None:
    fake_api.script("There is no `lenient` flag; `parse_iso` takes `fold` {cite:E1}.")
    ans = ask(
        AskRequest("does parse_iso take a lenient flag for the date text?", min_score=0.0),
        engine,
        llm=llm,
    )
    assert fake_api.message_requests, ans.to_json()
    sent = str(fake_api.message_requests[0].json["messages"][0]["content"])
    assert "there is no `lenient` flag" in sent
    assert ans.state != "OK" and [a.name for a in ans.absent] == ["lenient"]


def test_workspace_files_exist(tmp_path: Path) -> None:
    # the var-block definition rule reads a Go file's assignment lines
    from code_compass_server.answer.near_names import defines

    assert defines(WATCH_GO, "ErrEventOverflow") and not defines(WATCH_GO, "Watcher")
