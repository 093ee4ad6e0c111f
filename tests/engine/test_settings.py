"""Settings: the one parser, the per-folder view, change events, and each field applied live
through the engine's own subscription (no language server here; tests/lsp has that path)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from code_compass_server.cli import build_parser
from code_compass_server.cli.commands import open_engine
from code_compass_server.constants import BYTES_PER_KB, DEFAULT_MAX_FILE_BYTES
from code_compass_server.engine import Engine
from code_compass_server.engine_status import status_to_json
from code_compass_server.index.scan import ScanSettings
from code_compass_server.settings import (
    KEYS,
    RESOURCE_KEYS,
    EngineSettings,
    SettingsChange,
    SettingsStore,
    client_values,
    kb_to_bytes,
    parse_settings,
)
from code_compass_server.validation import validate_search
from tests.conftest import write_tree
from tests.fakes.fake_anthropic import FakeAnthropic

# One non-default value per key, as a client sends it.
NEW_VALUES = {
    "include": ["src/**"],
    "exclude": ["vendor/**"],
    "maxFileSizeKb": 7,
    "documentGlobs": ["**/*.plan"],
    "embeddings.enabled": False,
    "search.minScore": 0.25,
    "search.topK": 9,
    "llm.model": "claude-test-2",
    "llm.maxTokens": 321,
    "llm.temperature": 0.5,
    "hover.enabled": False,
    "codeLens.enabled": False,
}


def test_every_key_is_parsed_and_shown_back_in_client_units() -> None:
    assert set(NEW_VALUES) == {k.name for k in KEYS}
    for name, value in NEW_VALUES.items():
        s, warnings = parse_settings({name: value})
        assert warnings == [] and client_values(s)[name] == value, name
        assert s != EngineSettings(), name


def test_parse_nested_dotted_wrapped_clamped_and_bad_values() -> None:
    s, warnings = parse_settings({"search": {"topK": 50}, "embeddings.enabled": False})
    assert s.top_k == 20 and s.embeddings is False and warnings == []
    s2, warnings = parse_settings(
        {"codeCompass": {"search.minScore": "high", "llm": {"model": " m "}}}, s
    )
    assert s2.min_score == s.min_score and s2.model == "m"
    assert len(warnings) == 1 and "search.minScore" in warnings[0]
    same, warnings = parse_settings({"search": {"topK": None}, "other.tool": 1, "trace": {}}, s2)
    assert same == s2 and warnings == []
    bad, warnings = parse_settings(
        {"llm.maxTokens": 10, "llm.temperature": 2, "maxFileSizeKb": 0.5, "include": [1]}
    )
    assert bad == EngineSettings() and len(warnings) == 4
    assert parse_settings([1, 2])[1] == ["codeCompass settings must be an object, got list"]


def test_sizes_are_si_kilobytes_in_the_editor_setting_and_the_cli(tmp_path: Path) -> None:
    assert kb_to_bytes(1000) == 1_000_000 == DEFAULT_MAX_FILE_BYTES and BYTES_PER_KB == 1000
    from_editor, _ = parse_settings({"maxFileSizeKb": 3})
    flags = ["--workspace", str(tmp_path), "--storage", str(tmp_path / "st")]
    args = build_parser().parse_args(["status", *flags, "--max-file-kb", "3"])
    engine, _names = open_engine(args)
    try:
        assert engine.settings.scan.max_file_bytes == from_editor.scan.max_file_bytes == 3000
    finally:
        engine.close()


def test_folder_values_override_resource_keys_only_and_inherit_window_changes(
    tmp_path: Path,
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    s, warnings = parse_settings(
        {"exclude": ["dist/**"]},
        folders={
            a: {"exclude": ["vendor/**"], "maxFileSizeKb": 5, "search.topK": 2},
            b: {"exclude": ["dist/**"], "include": []},  # VS Code sends resolved values
        },
    )
    assert warnings == [] and s.top_k == 5  # topK is window-wide: ignored in a folder
    assert s.scan_for(a) == ScanSettings(max_file_bytes=5000, exclude=("vendor/**",))
    assert s.scan_for(b) == s.scan == ScanSettings(exclude=("dist/**",))
    assert [f.root for f in s.folders] == [a.resolve()]  # b's values are the window's
    later, _ = parse_settings({"exclude": ["build/**"], "include": ["src/**"]}, s)
    assert later.scan_for(b).exclude == ("build/**",)
    assert later.scan_for(a) == ScanSettings(
        max_file_bytes=5000, include=("src/**",), exclude=("vendor/**",)
    )
    assert client_values(later, a)["maxFileSizeKb"] == 5
    assert set(RESOURCE_KEYS) == {"include", "exclude", "maxFileSizeKb", "documentGlobs"}


def test_a_complete_answer_resets_what_it_leaves_out(tmp_path: Path) -> None:
    """A workspace/configuration answer is the client's whole configuration."""
    a = tmp_path / "a"
    s, _ = parse_settings({"search.topK": 2, "llm.model": "m"}, folders={a: {"exclude": ["x"]}})
    pulled, _ = parse_settings({"search.topK": 3}, s, folders={a: {}}, complete=True)
    assert (pulled.top_k, pulled.model, pulled.folders) == (3, EngineSettings().model, ())
    kept, _ = parse_settings(None, s, folders={}, complete=True)  # null: nothing to give
    assert kept == s
    merged, _ = parse_settings({"search.topK": 3}, s)  # a push changes only what it names
    assert (merged.top_k, merged.model, merged.folders) == (3, "m", s.folders)


def test_store_events_name_what_changed_and_skip_no_ops(tmp_path: Path) -> None:
    store = SettingsStore()
    seen: list[SettingsChange] = []
    unsubscribe = store.subscribe(seen.append)
    store.merge({"exclude": ["vendor/**"], "search": {"topK": 5}})  # topK 5 is the default
    store.merge({"exclude": ["vendor/**"]})  # no change, no event
    store.merge(None, folders={tmp_path: {"include": ["x/**"]}})
    assert [c.fields for c in seen] == [frozenset({"scan"}), frozenset({"folders"})]
    assert seen[0].old == EngineSettings() and seen[0].new.scan.exclude == ("vendor/**",)
    assert seen[0].keys() == ["exclude"] and seen[1].keys([tmp_path.resolve()]) == ["include"]
    assert seen[1].scan_changed(tmp_path.resolve()) and not seen[1].scan_changed(Path("/x"))
    unsubscribe()
    store.merge({"llm.model": "m"})
    assert len(seen) == 2 and store.current.model == "m"


# --- applied live, through Engine.settings_store ------------------------------------------------

FILES: dict[str, str | bytes] = {
    "src/app.py": "def alpha_handler():\n    return 'alpha'\n",
    "vendor/lib.py": "def beta_vendored():\n    return 'beta'\n",
    "notes.plan": "gamma milestone: ship the planner\n",
    # 1,010 bytes: over 1 KB of 1,000 bytes, under a KiB of 1,024.
    "src/big.py": "def delta_big():\n    return 1\n" + "#" * 979 + "\n",
}


def paths(engine: Engine, name: str) -> set[str]:
    catalog = engine.project(name).catalog
    return {str(r[0]) for r in catalog._query("SELECT path FROM files")}


def test_scan_settings_change_rescans_live(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    engine = make_engine(write_tree(tmp_path / "ws", FILES))
    engine.index(embed=False)
    assert len((tmp_path / "ws/src/big.py").read_bytes()) == 1010
    assert paths(engine, "ws") == {"src/app.py", "vendor/lib.py", "src/big.py"}  # *.plan: unknown
    steps: list[tuple[dict[str, object], set[str]]] = [
        ({"exclude": ["vendor/**"]}, {"src/app.py", "src/big.py"}),
        ({"maxFileSizeKb": 1}, {"src/app.py"}),
        ({"documentGlobs": ["*.plan"]}, {"src/app.py", "notes.plan"}),  # indexed as text
        ({"include": ["src/**"]}, {"src/app.py"}),
        (
            {"include": [], "exclude": [], "maxFileSizeKb": 1000, "documentGlobs": []},
            {"src/app.py", "vendor/lib.py", "src/big.py"},
        ),
    ]
    for change, expected in steps:
        assert engine.settings_store.merge(change) == []
        assert engine.wait_idle(30)
        assert paths(engine, "ws") == expected, change


def test_folder_override_rescans_that_folder_only(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    one = write_tree(tmp_path / "one", FILES)
    two = write_tree(tmp_path / "two", FILES)
    engine = make_engine(one, two)
    engine.index(embed=False)
    runs = {name: engine.project(name).extra["last_summary"] for name in ("one", "two")}
    engine.settings_store.merge(None, folders={one: {"exclude": ["vendor/**"]}})
    assert engine.wait_idle(30)
    assert "vendor/lib.py" not in paths(engine, "one")
    assert "vendor/lib.py" in paths(engine, "two")
    # Only the folder whose settings changed was scanned again.
    assert engine.project("one").extra["last_summary"] is not runs["one"]
    assert engine.project("two").extra["last_summary"] is runs["two"]


@pytest.fixture
def embed_ready() -> None:
    from code_compass_server.embed.model import Embedder

    try:
        Embedder()
    except Exception as exc:  # the model is built by scripts/setup
        pytest.skip(f"embedding model not built (scripts/build_model.py): {exc}")


def test_embeddings_off_and_on_live(
    tmp_path: Path, make_engine: Callable[..., Engine], embed_ready: None
) -> None:
    files = {"geometry.py": "def circle_area(r):\n    return 3.14159 * r * r\n"}
    engine = make_engine(write_tree(tmp_path / "ws", files))  # embeddings off
    engine.index(embed=False)
    semantic = validate_search("surface of a round shape", 3, mode="semantic")
    hybrid = validate_search("surface of a round shape", 3, mode="hybrid")
    lexical = validate_search("surface of a round shape", 3, mode="lexical")
    assert engine.search(semantic) == [] and engine.status().embeddings == "off"

    engine.settings_store.merge({"embeddings": {"enabled": True}})
    assert engine.status().embeddings == "on"
    assert engine.wait_embedded(60)
    counts = engine.project("ws").catalog.counts()
    assert counts["embedded"] == counts["chunks"] > 0
    on_hits = engine.search(semantic)
    assert [h.symbol for h in on_hits] == ["circle_area"]
    assert engine.search(hybrid) != engine.search(lexical)  # the semantic channel answers

    engine.settings_store.merge({"embeddings": {"enabled": False}})
    assert engine.search(semantic) == []
    assert engine.search(hybrid) == engine.search(lexical)
    status = status_to_json(engine.status())
    assert status["embeddings"] == "off" and status["projects"][0]["embedTotal"] == 0


def test_llm_settings_reach_the_next_ask(
    tmp_path: Path, make_engine: Callable[..., Engine], fake_api: FakeAnthropic
) -> None:
    engine = make_engine(write_tree(tmp_path / "ws", FILES))
    engine.index(embed=False)
    fake_api.forever("`alpha_handler` returns alpha {cite:E1}.")
    question = {"query": "alpha_handler return value", "minScore": 0.0}
    engine.ask(question)
    engine.settings_store.merge({"llm": {"model": "claude-test-2", "maxTokens": 321}})
    engine.ask(question)
    engine.settings_store.merge({"llm.temperature": 0.5})
    engine.ask(question)
    sent = [r.json for r in fake_api.message_requests]
    assert [(b["model"], b["max_tokens"]) for b in sent] == [
        (EngineSettings().model, EngineSettings().max_tokens),
        ("claude-test-2", 321),
        ("claude-test-2", 321),
    ]
    # Temperature is sent only when changed from the default (docs/answers.md).
    assert "temperature" not in sent[1] and sent[2]["temperature"] == 0.5
