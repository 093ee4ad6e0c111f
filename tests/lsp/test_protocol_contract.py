"""The protocol contract, held in three places: `code_compass_server.lsp.protocol_types` (the
declaration), the real server's responses, and the client's `protocol.ts`; plus
docs/protocol.md.

The first test calls every custom method on the real server, checks each response against
its declaration and records it (paths and timings made stable) under
`client-vscode/test/fixtures/protocol/`, where the client's unit tests check the same JSON
against `protocol.ts`: a field renamed on the server fails here, or there.
"""

from __future__ import annotations

import json
import re
import types as pytypes
import typing
from pathlib import Path
from typing import Any, Literal, NotRequired, Required, Union, get_args, get_origin

from code_compass_server.lsp import protocol_types as pt
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.lsp.conftest import poll_until

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "client-vscode" / "test" / "fixtures" / "protocol"
PROTOCOL_TS = REPO / "client-vscode" / "src" / "protocol.ts"
PROTOCOL_MD = REPO / "docs" / "protocol.md"

REPLY = "Gold customers get 20% off, computed by `compute_discount` {cite:E1}. Taxes come later."


# -- a small checker of JSON against the TypedDicts -------------------------------------


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def _hints(td: type) -> dict[str, Any]:
    return typing.get_type_hints(td, vars(pt))


def _strip(tp: Any) -> Any:
    while get_origin(tp) in (NotRequired, Required):
        tp = get_args(tp)[0]
    return tp


def shape_errors(value: Any, tp: Any, where: str) -> list[str]:
    """Why `value` is not a `tp` (empty when it is): keys, nesting and JSON kinds."""
    tp = _strip(tp)
    origin = get_origin(tp)
    if tp is Any:
        return []
    if origin in (Union, pytypes.UnionType):
        options = [shape_errors(value, t, where) for t in get_args(tp)]
        return [] if any(not o for o in options) else min(options, key=len)
    if origin is Literal:
        return [] if value in get_args(tp) else [f"{where}: {value!r} is not one of {get_args(tp)}"]
    if tp is type(None):
        return [] if value is None else [f"{where}: expected null, got {value!r}"]
    if _is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{where}: expected an object ({tp.__name__}), got {type(value).__name__}"]
        hints = _hints(tp)
        errors = [
            f"{where}: undeclared key {k!r}: declare it in {tp.__name__} (lsp/protocol_types.py)"
            for k in value
            if k not in hints
        ]
        errors += [
            f"{where}: missing key {k!r} of {tp.__name__}"
            for k in tp.__required_keys__
            if k not in value
        ]
        for k, v in value.items():
            if k in hints:
                errors += shape_errors(v, hints[k], f"{where}.{k}")
        return errors
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {type(value).__name__}"]
        return [
            e
            for i, v in enumerate(value)
            for e in shape_errors(v, get_args(tp)[0], f"{where}[{i}]")
        ]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {type(value).__name__}"]
        return [
            e for k, v in value.items() for e in shape_errors(v, get_args(tp)[1], f"{where}.{k}")
        ]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{where}: expected a boolean, got {value!r}"]
    if tp in (int, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        ok = ok and (tp is float or isinstance(value, int))
        return [] if ok else [f"{where}: expected {tp.__name__}, got {value!r}"]
    if tp is str:
        return [] if isinstance(value, str) else [f"{where}: expected a string, got {value!r}"]
    raise AssertionError(f"{where}: the checker does not know {tp!r}")


# -- recording ---------------------------------------------------------------------------


def _stable(value: Any, tmp: str, key: str = "") -> Any:
    """The response with what changes between runs (temp paths, timings) fixed."""
    if isinstance(value, dict):
        return {k: _stable(v, tmp, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_stable(v, tmp) for v in value]
    if isinstance(value, str):
        value = value.replace(tmp, "/tmp/contract")
        # A project's storage folder is named after a hash of its (temporary) root.
        return re.sub(r"-[0-9a-f]{12}\b", "-0123456789ab", value) if key == "storage" else value
    if key in ("tookMs", "embedRate", "embedEtaS") and isinstance(value, int | float):
        return 12 if isinstance(value, int) else 12.5
    return value


def record(name: str, value: Any, tmp: Path) -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_stable(value, str(tmp)), indent=2, ensure_ascii=False) + "\n"
    path = FIXTURES / f"{name}.json"
    if not path.exists() or path.read_text() != text:  # unchanged: leave the file alone
        path.write_text(text)


def check(name: str, value: Any, tp: Any, tmp: Path) -> None:
    errors = shape_errors(value, tp, name)
    assert not errors, "\n".join(errors)
    record(name, value, tmp)


async def test_every_custom_method_answers_as_declared(
    start: Any, alpha: Path, tmp_path: Path
) -> None:
    with FakeAnthropic() as fake:
        fake.forever(REPLY)
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test-key-not-secret"}
        s = await start([alpha], env=env)
        await s.wait_indexed()
        hits = await s.request("codeCompass/search", {"query": "gold discount", "topK": 3})
        assert hits["hits"], hits
        check("search", hits, pt.WireSearchResult, tmp_path)
        empty = await s.request("codeCompass/search", {"query": "kafka consumer", "minScore": 0.99})
        assert not empty["hits"] and empty["reason"]
        check("search-empty", empty, pt.WireSearchResult, tmp_path)
        ask = {"question": "How is the discount for gold customers computed?", "minScore": 0.0}
        answer = await s.request(
            "codeCompass/ask", {**ask, "requestId": "r-1", "conversationId": "c-1"}, 60
        )
        assert answer["meta"]["llmCalled"] and answer["sentences"], answer
        check("ask", answer, pt.WireAnswer, tmp_path)
        refusal = await s.request(
            "codeCompass/ask", {"question": "How are kafka consumer groups rebalanced?"}, 60
        )
        assert refusal["state"] == "FAIL" and refusal["suggestions"], refusal
        check("ask-refusal", refusal, pt.WireAnswer, tmp_path)
        # A misspelled name: refused without the model, with a spelling fix and the definition
        # to open, whatever the scores (the client's action tests read this one).
        spelling = await s.request(
            "codeCompass/ask", {"question": "How does `compute_discont` work?"}, 60
        )
        kinds = [a["kind"] for a in spelling["actions"]]
        assert spelling["state"] == "FAIL" and "ask" in kinds and "open" in kinds, spelling
        check("ask-spelling", spelling, pt.WireAnswer, tmp_path)
        status = await s.request("codeCompass/status", {})
        check("status", status, pt.StatusResult, tmp_path)
        ready = await _ready_state(s)  # recorded before the reindex: the same on every run
        reindex = await s.request("codeCompass/reindex", {})
        check("reindex", reindex, pt.ReindexResult, tmp_path)
    deltas = s.seen("codeCompass/answerDelta")
    assert deltas
    check("answerDelta", deltas[0], pt.AnswerDelta, tmp_path)
    check("indexState", ready, pt.IndexStateParams, tmp_path)


async def _ready_state(s: Any) -> Any:
    """The latest indexState notification in which every project is ready."""
    ready: list[Any] = []

    async def seen() -> bool:
        ready[:] = [
            st
            for st in s.seen("codeCompass/indexState")
            if all(p["state"] == "ready" for p in st["projects"])
        ]
        return bool(ready)

    await poll_until(seen, timeout=10.0)
    return ready[-1]


def test_the_checker_rejects_a_renamed_and_a_missing_field() -> None:
    good = {"started": True, "projects": ["a"]}
    assert shape_errors(good, pt.ReindexResult, "r") == []
    renamed = {"started": True, "project": ["a"]}
    errors = shape_errors(renamed, pt.ReindexResult, "r")
    assert any("undeclared key 'project'" in e for e in errors)
    assert any("missing key 'projects'" in e for e in errors)
    assert shape_errors({"started": "yes", "projects": []}, pt.ReindexResult, "r")


# -- protocol.ts mirrors the module -----------------------------------------------------

_INTERFACE = re.compile(r"export interface (\w+)(?: extends (\w+))? \{(.*?)\n\}", re.S)
_FIELD = re.compile(r'^\s{2}(?:"([^"]+)"|(\w+))(\??):', re.M)


def ts_interfaces() -> dict[str, dict[str, bool]]:
    """protocol.ts interfaces: name -> field -> optional (inherited fields included)."""
    raw: dict[str, tuple[str | None, dict[str, bool]]] = {}
    for m in _INTERFACE.finditer(PROTOCOL_TS.read_text()):
        fields = {(f[0] or f[1]): f[2] == "?" for f in _FIELD.findall(m.group(3))}
        raw[m.group(1)] = (m.group(2), fields)

    def resolve(name: str) -> dict[str, bool]:
        base, fields = raw[name]
        return {**(resolve(base) if base in raw else {}), **fields}

    return {name: resolve(name) for name in raw}


def test_client_protocol_ts_declares_the_same_fields() -> None:
    client = ts_interfaces()
    problems: list[str] = []
    for td in pt.WIRE_TYPES:
        name = pt.client_name(td)  # WireSearchHit here is SearchHit there
        if name not in client:
            problems.append(f"protocol.ts has no interface {name}")
            continue
        declared = {k: k in td.__optional_keys__ for k in _hints(td)}
        for k, optional in declared.items():
            if k not in client[name]:
                problems.append(f"{name}.{k}: in protocol_types.py, not in protocol.ts")
            elif client[name][k] != optional:
                problems.append(
                    f"{name}.{k}: optional={optional} on the server, not in protocol.ts"
                )
        problems += [
            f"{name}.{k}: in protocol.ts, not in protocol_types.py"
            for k in client[name]
            if k not in declared
        ]
    assert not problems, "\n".join(problems)


# -- docs/protocol.md --------------------------------------------------------------------


def _section(doc: str, method: str) -> str:
    start = doc.index(f"### `{method}`") if f"### `{method}`" in doc else doc.index(f"`{method}`")
    nxt = doc.find("\n### ", start + 4)
    return doc[start : nxt if nxt > 0 else len(doc)]


def _fields(tp: Any, seen: set[str]) -> set[str]:
    tp = _strip(tp)
    out: set[str] = set()
    if _is_typeddict(tp):
        if tp.__name__ in seen:
            return out
        seen.add(tp.__name__)
        for k, v in _hints(tp).items():
            out.add(k)
            out |= _fields(v, seen)
    for arg in get_args(tp):
        out |= _fields(arg, seen)
    return out


# A section may describe its fields by pointing at another one ("as in indexState").
SEE_ALSO = {
    "codeCompass/status": ("codeCompass/indexState",),
    "codeCompass/ask": ("codeCompass/search",),
}


def test_docs_protocol_md_names_every_method_and_field() -> None:
    doc = PROTOCOL_MD.read_text()
    missing: list[str] = []
    for method in pt.METHODS:
        if f"`{method.name}`" not in doc:
            missing.append(f"{method.name}: not in docs/protocol.md")
            continue
        text = "".join(_section(doc, m) for m in (method.name, *SEE_ALSO.get(method.name, ())))
        for tp in (method.params, method.result):
            if tp is None:
                continue
            for f in sorted(_fields(tp, set())):
                if f'"{f}"' not in text and f"`{f}`" not in text:
                    missing.append(f"{method.name}: field {f!r} not in its section")
    assert not missing, "\n".join(missing)
