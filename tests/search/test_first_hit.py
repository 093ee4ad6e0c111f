"""The first shown hit's relevance: its own calibration, on the population of first hits."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from code_compass_server.search.calibration import (
    FIRST_SIGNALS,
    MODES,
    calibrate_first,
    first_probability,
    first_signals,
    fitted,
    score_candidates,
)
from code_compass_server.search.candidates import Candidate
from code_compass_server.search.gate import question_terms
from code_compass_server.search.signals import query_info
from tests.search.helpers import cand, row
from tests.search.test_calibration import QUESTION, Counts, _list

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def _scored(strong: int | None, mode: str = "hybrid") -> list[Candidate]:
    df = {"parse_config": 1, "parse": 40, "config": 60, "read": 300, "settings": 80, "file": 400}
    terms = question_terms(QUESTION, Counts(df))
    return score_candidates(_list(8, strong), query_info(QUESTION), mode, terms)


@pytest.mark.parametrize("mode", MODES)
def test_only_the_first_hits_relevance_is_recalibrated(mode: str) -> None:
    out = _scored(0, mode)
    below = [c.relevance for c in out[1:]]
    calibrate_first(out, mode)
    assert [c.relevance for c in out[1:]] == below  # hits below keep P(ans) * P(rel | ans)
    best = out[0].features
    values = {
        **{k.removeprefix("list_"): v for k, v in best.items() if k.startswith("list_")},
        **first_signals(best["answerable"], best["p_hit"], False, False),
    }
    assert out[0].relevance == pytest.approx(first_probability(values, mode))
    assert 0.0 < out[0].relevance < 1.0


@pytest.mark.parametrize("mode", MODES)
def test_a_list_that_matches_puts_its_first_hit_above_one_that_does_not(mode: str) -> None:
    strong, weak = _scored(0, mode), _scored(None, mode)
    calibrate_first(strong, mode)
    calibrate_first(weak, mode)
    assert strong[0].relevance > weak[0].relevance
    assert weak[0].relevance < 0.5  # nothing in the weak list matches the question


def test_a_definition_the_name_channel_put_first_is_calibrated_too() -> None:
    out = _scored(None)
    named = cand(row("def", "names.py", symbol="parse_config"), score=out[0].score)
    named.exact_definition, named.name_match = True, 1.0
    shown = [named, *out]
    calibrate_first(shown, "hybrid")
    # Not scored by the relevance model: the list's best P(rel | ans) stands for it.
    values = {
        **{k.removeprefix("list_"): v for k, v in out[0].features.items() if k.startswith("list_")},
        **first_signals(out[0].features["answerable"], out[0].features["p_hit"], True, False),
    }
    assert named.relevance == pytest.approx(first_probability(values, "hybrid"))


def test_first_hit_weights_on_the_two_probabilities_are_not_negative() -> None:
    for mode in (*MODES, "partial"):
        model = fitted()[mode]["first"]
        assert set(FIRST_SIGNALS) & set(model["weights"]), mode
        for name in ("answer", "hit"):
            assert model["weights"].get(name, 0.0) >= 0.0, f"{mode}: {name}"


def _fit_module() -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location("fit_calibration", SCRIPTS / "fit_calibration.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_fit_refuses_test_verdicts_and_the_test_split(tmp_path: Path) -> None:
    fit = _fit_module()
    questions = [
        {"id": "x-a01-en", "split": "dev"},
        {"id": "x-a02-en", "split": "test"},
    ]
    verdict = {"path": "a.py", "startLine": 1, "endLine": 2, "answers": True}
    graded = tmp_path / "graded.jsonl"
    graded.write_text(json.dumps({"block": "x-a01", **verdict}) + "\n")
    assert set(fit.dev_verdicts(questions, graded)) == {"x-a01"}
    graded.write_text(json.dumps({"block": "x-a02", **verdict}) + "\n")
    with pytest.raises(SystemExit, match="refusing to fit"):
        fit.dev_verdicts(questions, graded)
    with pytest.raises(SystemExit, match="refusing to collect the test split"):
        fit.collect("test")


def test_search_gives_its_first_hit_the_first_hit_models_relevance(tmp_path: Path) -> None:
    from code_compass_server.engine import Engine
    from code_compass_server.settings import EngineSettings
    from code_compass_server.validation import validate_search

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "config.py").write_text(
        "def parse_config(path):\n    '''Read the TOML settings file at path.'''\n"
        "    return open(path).read()\n\n\n"
        "def render(x):\n    return str(x)\n",
        encoding="utf-8",
    )
    (ws / "notes.md").write_text("# Notes\n\nThe settings file is TOML.\n", encoding="utf-8")
    eng = Engine.open(tmp_path / "storage", EngineSettings(embeddings=False))
    try:
        eng.add_project(ws)
        eng.index(embed=False)
        hits = list(eng.search(validate_search("how is the TOML settings file read?", 5)))
        assert hits and hits[0].symbol == "parse_config"
        best = next(h for h in hits if "answerable" in h.signals).signals
        values = {
            **{k.removeprefix("list_"): v for k, v in best.items() if k.startswith("list_")},
            **first_signals(best["answerable"], hits[0].signals["p_hit"], False, False),
        }
        assert hits[0].relevance == pytest.approx(first_probability(values, "lexical"), abs=2e-3)
        # Below the first, relevance stays P(ans) * P(rel | ans).
        for h in hits[1:]:
            assert h.relevance == pytest.approx(best["answerable"] * h.signals["p_hit"], abs=2e-3)
    finally:
        eng.close()
