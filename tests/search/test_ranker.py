"""The learned ranker: the shipped trees evaluated by numpy give LightGBM's own predictions,
and the model is read only for the mode it was trained for."""

from __future__ import annotations

import json

import numpy as np
import pytest

from code_compass_server.search import ranker
from code_compass_server.search.candidates import Candidate
from tests.search.helpers import cand, row


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


def _hybrid_list() -> list[Candidate]:

    texts = [
        ("a", "src/retry.py", "method", "Client.retry", "def retry(self, request):\n    backoff\n"),
        ("b", "docs/retry.md", "paragraph", "", "Retries use an exponential backoff policy.\n"),
        ("c", "src/retry.py", "class", "Client", "class Client:\n    retries: int\n"),
        ("d", "tests/test_retry.py", "function", "test_retry", "def test_retry():\n    pass\n"),
        ("e", "src/pool.py", "window", "", "pool = Pool(size=4)\n"),
        ("f", "src/types.pyi", "interface", "RetryOptions", "class RetryOptions: ...\n"),
    ]
    out = []
    for i, (cid, path, kind, symbol, text) in enumerate(texts):
        cat = "doc" if path.endswith(".md") else "test" if "tests/" in path else "code"
        r = row(
            cid, path, 1 + 10 * i, 9 + 10 * i, kind=kind, symbol=symbol, category=cat, text=text
        )
        out.append(cand(r, bm25=8.0 - i, lexical_rank=i, cosine=0.55 + 0.05 * (i % 3),
                        semantic_rank=(5 - i)))  # fmt: skip
    return out


def test_hybrid_lists_follow_the_ranker_and_the_gate_reads_the_linear_order() -> None:
    from code_compass_server.search.calibration import list_evidence, signal_values
    from code_compass_server.search.gate import gate_signals, question_terms
    from code_compass_server.search.signals import query_info, query_signals

    if "hybrid" not in ranker.shipped():
        pytest.skip("no hybrid model in ranker_model.json")
    q = query_info("how does the client retry a request with backoff")
    ranked, zs, gsig = list_evidence(_hybrid_list(), q, "hybrid")
    assert zs == sorted(zs, reverse=True)  # shown in the ranker's order
    fresh = _hybrid_list()
    linear = signal_values(fresh, q, "hybrid")
    learned = ranker.corrected(fresh, q, linear, "hybrid")
    assert learned is not None and learned != linear  # the trees moved z
    by_id = {c.row.id: z for c, z in zip(fresh, learned, strict=True)}
    assert [c.row.id for c in ranked] == sorted(by_id, key=by_id.__getitem__, reverse=True)
    # The gate's inputs: the same list in the linear z's order, as without a ranker.
    order = sorted(range(len(fresh)), key=linear.__getitem__, reverse=True)
    cosines = [c.cosine for c in fresh if c.cosine is not None]
    z_top = linear[order[0]]
    base = query_signals([c.features for c in fresh], cosines, z_top, len(q.words))
    terms = question_terms(" ".join(q.words), None)
    want = gate_signals([fresh[i] for i in order], [linear[i] for i in order], base, terms)
    assert gsig == want


def test_lexical_lists_have_no_ranker() -> None:
    from code_compass_server.search.calibration import list_evidence, signal_values
    from code_compass_server.search.signals import query_info

    q = query_info("how does the client retry a request with backoff")
    _, zs, _ = list_evidence(_hybrid_list(), q, "lexical")
    assert zs == sorted(signal_values(_hybrid_list(), q, "lexical"), reverse=True)
