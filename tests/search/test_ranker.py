"""The learned ranker: the shipped trees evaluated by numpy give LightGBM's own predictions,
and the model is read only for the mode it was trained for."""

from __future__ import annotations

import json

import numpy as np
import pytest

from code_compass_server.search import ranker


def test_numpy_trees_predict_what_lightgbm_predicts() -> None:
    lgb = pytest.importorskip("lightgbm", reason="lightgbm (dev extra) trains the ranker")
    rng = np.random.default_rng(3)
    n_q, per = 40, 12
    x = rng.random((n_q * per, len(ranker.INPUTS)))
    # A relevance that needs several inputs together, so the trees split on many of them.
    y = ((x[:, 0] + x[:, 6] * x[:, 15] > 0.9) + (x[:, 2] > 0.8)).astype(int)
    data = lgb.Dataset(x, y, group=[per] * n_q)
    params = {"objective": "lambdarank", "num_leaves": 7, "min_data_in_leaf": 5, "verbose": -1}
    booster = lgb.train(params, data, num_boost_round=25)
    trees = ranker.from_dump(json.loads(json.dumps(booster.dump_model())))
    probe = rng.random((200, len(ranker.INPUTS)))
    assert np.allclose(trees.predict(probe), booster.predict(probe), atol=1e-9)


def test_the_shipped_model_reads_the_inputs_it_was_trained_on() -> None:
    models = ranker.shipped()
    if not models:
        pytest.skip("no ranker_model.json in the package (scripts/fit_ranker.py fit writes it)")
    assert set(models) == {"hybrid"}  # lexical search never loads numpy for a ranker
    trees = ranker.ensemble("hybrid")
    assert trees is not None
    x = np.zeros((3, len(ranker.INPUTS)))
    x[1, ranker.INPUTS.index("cos")] = 0.9
    assert trees.predict(x).shape == (3,)
