"""The first shown hit's relevance: its own calibration, on the population of first hits."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from code_compass.search.calibration import (
    FIRST_SIGNALS,
    MODES,
    calibrate_first,
    first_probability,
    first_signals,
    fitted,
    score_candidates,
)
from code_compass.search.candidates import Candidate
from code_compass.search.gate import question_terms
from code_compass.search.signals import query_info
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
