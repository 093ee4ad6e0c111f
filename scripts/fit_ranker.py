#!/usr/bin/env python3
"""Train the learned ranker (search/ranker.py) with LightGBM LambdaMART on dev questions.

    .venv/bin/python scripts/fit_ranker.py collect [--blind Q.jsonl NAME=DIR ...]  # pools
    .venv/bin/python scripts/fit_ranker.py loco                 # leave-one-corpus-out figures
    .venv/bin/python scripts/fit_ranker.py fit                  # train on all, write the model

Needs `pip install lightgbm==4.7.0` (training only: the package evaluates the dumped trees
with numpy). Pools are the hybrid candidates of every question exactly as `search` builds them
(query builder, both channels' 30 candidates, merged, signals.compute, the linear z), with
ranker.inputs and a label per candidate:

- eval/realqa dev split, corpora with a fully embedded storage (scripts/eval_realqa.py):
  2 = overlaps a gold span, 1 = a chunk a reader judged to answer (graded.jsonl), 0 = other;
- extra sets given by path (`--set Q.jsonl NAME=DIR ...`, e.g. last round's blind set once it
  has been measured), every split: 2 = gold, 0 = other;
- the docstring-sentence dev split (eval/search; scripts/eval_search.py's storage): 2 = the
  documented definition, 0 = other.

Test splits are never read. Only answerable questions carry a ranking signal. The trees are
boosted from the linear z (init_score), so the model corrects the hand-fitted relevance rather
than replacing it, and stays on its scale. `loco` trains without one corpus at a time and
prints MRR@10 / R@5 of the held-out corpus before (linear z) and after, the order `search`
shows (diversified: overlapping chunks and the per-file cap as in fusion.diversify).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "eval" / "realqa"))
sys.path.insert(0, str(ROOT / "eval" / "search"))

from code_compass_server.constants import (  # noqa: E402
    SEARCH_CANDIDATE_POOL,
    SEARCH_DEDUP_OVERLAP,
    SEARCH_MAX_HITS_PER_FILE,
)
from code_compass_server.index.project import Project  # noqa: E402
from code_compass_server.records import SearchParams  # noqa: E402
from code_compass_server.search import ranker  # noqa: E402
from code_compass_server.search.calibration import signal_values  # noqa: E402
from code_compass_server.search.fusion import merge  # noqa: E402
from code_compass_server.search.searcher import (  # noqa: E402
    lexical_candidates,
    project_query,
)
from code_compass_server.search.signals import query_info  # noqa: E402

POOLS = ROOT / "bench-data" / "realqa" / "ranker-pools"  # one file per corpus (--pools)
MODEL = ROOT / "server" / "code_compass_server" / "search" / ranker.RANKER_FILE
TOP = 10
PARAMS: dict[str, Any] = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "eval_at": [10],
    "label_gain": [0.0, 1.0, 3.0],
    "lambdarank_truncation_level": 20,
    "learning_rate": 0.05,
    "num_leaves": 15,
    "max_depth": 6,
    "min_data_in_leaf": 40,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "verbose": -1,
    "seed": 7,
    "num_threads": 1,
    "deterministic": True,
}
ROUNDS = 100


# --- pools ---------------------------------------------------------------------------------


def pool_of(
    project: Project, semantic: Any, text_query: str, project_name: str
) -> tuple[list[Any], list[list[float]], list[float]]:
    """The hybrid candidates of one question as `search` builds them: rows, inputs, linear z."""
    params = SearchParams(text_query, TOP, None, None, None, project=project_name, mode="hybrid")
    query, text = project_query(project, params)
    lex = lexical_candidates(
        project, replace(params, query=query.lexical, rewrite=None), SEARCH_CANDIDATE_POOL
    )
    sem = semantic(project, replace(params, query=query.rewritten, rewrite=None), 30)
    info = query_info(text)
    cands = merge(lex, sem)
    zs = signal_values(cands, info, "hybrid")
    return cands, ranker.inputs(cands, info, zs), zs


def _record(
    qid: str, corpus: str, lang: str, cands: list[Any], x: list[list[float]], zs: list[float],
    labels: list[int],
) -> dict[str, Any]:  # fmt: skip
    return {
        "id": qid,
        "corpus": corpus,
        "lang": lang,
        "x": [[round(v, 5) for v in row] for row in x],
        "z": [round(z, 5) for z in zs],
        "y": labels,
        "span": [[c.row.path, c.row.start_line, c.row.end_line] for c in cands],
    }


def collect_realqa(
    questions: list[dict[str, Any]], trees: dict[str, tuple[Path, Path]], graded: dict[str, Any]
) -> list[dict[str, Any]]:
    """Pools of answerable questions; `trees`: corpus -> (its folder, its embedded storage)."""
    from grade import block_of, graded_answers

    from eval_realqa import embedded_project, relevant

    out: list[dict[str, Any]] = []
    for corpus, (tree, storage) in trees.items():
        qs = [q for q in questions if q["corpus"] == corpus and q["kind"] == "answerable"]
        if not qs:
            continue
        with embedded_project(storage, tree, corpus) as opened:
            if opened is None:
                continue
            project, name, semantic = opened
            for q in qs:
                cands, x, zs = pool_of(project, semantic, q["question"], name)
                labels = []
                for c in cands:
                    h = {"path": c.row.path, "startLine": c.row.start_line,
                         "endLine": c.row.end_line}  # fmt: skip
                    gold = relevant(h, q["gold"])
                    judged = graded_answers(h, graded.get(block_of(q["id"]), []))
                    labels.append(2 if gold else 1 if judged else 0)
                out.append(_record(q["id"], corpus, q["lang"], cands, x, zs, labels))
            print(f"{corpus}: {len(qs)} questions", file=sys.stderr, flush=True)
    return out


def collect_docstrings() -> list[dict[str, Any]]:
    """Pools of the docstring-sentence dev split (eval/search), on eval_search.py's storage."""
    import devset
    import harness

    from eval_search import correct

    dirs = devset.build_all(None)
    engine = harness.open_engine(devset.OUT / "storage", {n: d / "tree" for n, d in dirs.items()})
    out: list[dict[str, Any]] = []
    try:
        semantic = engine.embeddings.semantic_channel()
        assert semantic is not None
        for name, d in dirs.items():
            project = engine.project(name)
            qs = [q for q in devset.load_queries(d) if q.split == "dev"]
            for q in qs:
                cands, x, zs = pool_of(project, semantic, q.query, name)
                labels = [
                    2 if correct(q, name, c.row.path, c.row.start_line, c.row.end_line,
                                 c.row.symbol) else 0
                    for c in cands
                ]  # fmt: skip
                out.append(_record(q.id, f"doc:{name}", "en", cands, x, zs, labels))
            print(f"doc:{name}: {len(qs)} questions", file=sys.stderr, flush=True)
    finally:
        engine.close()
    return out


def collect(sets: list[list[str]], only: set[str], where: Path = POOLS) -> None:
    """Collect the pools of each corpus into its own file under `where` (a corpus whose file
    exists is kept unless named in `only`: corpora are indexed at different times)."""
    from grade import GRADED, load_graded

    from eval_realqa import QUESTIONS, local_corpus, storage_for, tree_of
    from fetch_corpora import corpus_dir, load_corpora

    where.mkdir(parents=True, exist_ok=True)

    def wanted(name: str) -> bool:
        return name in only or (not only and not (where / f"{name}.json").exists())

    def save(name: str, pools: list[dict[str, Any]]) -> None:
        if pools:
            (where / f"{name}.json").write_text(json.dumps(pools))

    questions = [json.loads(x) for x in QUESTIONS.read_text().splitlines() if x.strip()]
    dev = [q for q in questions if q["split"] == "dev"]
    graded = load_graded(GRADED)
    for c in load_corpora():
        if wanted(c.name) and storage_for(c, False).is_dir():
            save(c.name, collect_realqa(dev, {c.name: (corpus_dir(c), storage_for(c, False))},
                                        graded))  # fmt: skip
    for spec in sets:
        extra = [json.loads(x) for x in Path(spec[0]).read_text().splitlines() if x.strip()]
        for c in map(local_corpus, spec[1:]):
            if wanted(c.name):
                save(c.name, collect_realqa(extra, {c.name: (tree_of(c), storage_for(c, False))},
                                            {}))  # fmt: skip
    if wanted("docstrings"):
        save("docstrings", collect_docstrings())


def load_pools(where: Path = POOLS) -> list[dict[str, Any]]:
    pools: list[dict[str, Any]] = []
    for f in sorted(where.glob("*.json")):
        pools += json.loads(f.read_text())
    return pools


# --- training and figures --------------------------------------------------------------------


def _diversified_top(order: list[int], span: list[list[Any]]) -> list[int]:
    """fusion.diversify on recorded spans: drop a chunk mostly overlapping a better one of its
    file, at most SEARCH_MAX_HITS_PER_FILE per file; the first TOP indices."""
    kept: list[int] = []
    by_file: dict[str, list[int]] = {}
    for i in order:
        path, a0, a1 = span[i]
        same = by_file.setdefault(path, [])
        if len(same) >= SEARCH_MAX_HITS_PER_FILE:
            continue
        clash = False
        for j in same:
            _, b0, b1 = span[j]
            lo, hi = max(a0, b0), min(a1, b1)
            shorter = min(a1 - a0, b1 - b0) + 1
            if hi >= lo and (hi - lo + 1) / shorter >= SEARCH_DEDUP_OVERLAP:
                clash = True
                break
        if clash:
            continue
        same.append(i)
        kept.append(i)
        if len(kept) == TOP:
            break
    return kept


def first_relevant(pool: dict[str, Any], scores: np.ndarray) -> int | None:
    order = [int(i) for i in np.argsort(-scores, kind="stable")]
    top = _diversified_top(order, pool["span"])
    return next((r for r, i in enumerate(top) if pool["y"][i] == 2), None)


def figures(pools: list[dict[str, Any]], scores: list[np.ndarray]) -> dict[str, float]:
    ranks = [first_relevant(p, s) for p, s in zip(pools, scores, strict=True)]
    return {
        "n": len(ranks),
        "mrr": float(np.mean([0.0 if r is None else 1 / (r + 1) for r in ranks])),
        "r5": float(np.mean([r is not None and r < 5 for r in ranks])),
    }


def _scale(params: dict[str, Any]) -> float:
    return float(params.get("z_scale", 0.3))


# Inputs the trees may not split on (leave-one-corpus-out decided; see docs/search.md).
DROPPED: tuple[str, ...] = ()
DOC_WEIGHT = 0.3


def _matrix(rows: list[list[float]], dropped: tuple[str, ...]) -> np.ndarray:
    x = np.array(rows, dtype=float)
    for name in dropped:
        x[:, ranker.INPUTS.index(name)] = 0.0
    return x


def train(pools: list[dict[str, Any]], params: dict[str, Any], rounds: int) -> Any:
    import lightgbm as lgb

    usable = [p for p in pools if any(v == 2 for v in p["y"])]
    s = _scale(params)
    x = _matrix([row for p in usable for row in p["x"]], params.get("dropped", DROPPED))
    y = np.array([v for p in usable for v in p["y"]], dtype=int)
    init = np.array([z * s for p in usable for z in p["z"]], dtype=float)
    # A docstring sentence is a narrower task than a developer's question: its many queries
    # count DOC_WEIGHT each (LambdaMART weighs a query by its first row's weight).
    doc_w = float(params.get("doc_weight", DOC_WEIGHT))
    w = np.array([doc_w if p["corpus"].startswith("doc:") else 1.0 for p in usable
                  for _ in p["y"]])  # fmt: skip
    data = lgb.Dataset(x, y, group=[len(p["y"]) for p in usable], init_score=init, weight=w,
                       feature_name=list(ranker.INPUTS), free_raw_data=False)  # fmt: skip
    lgb_params = {k: v for k, v in params.items() if k not in ("z_scale", "dropped", "doc_weight")}
    return lgb.train(lgb_params, data, num_boost_round=rounds)


def predict(booster: Any, pool: dict[str, Any], params: dict[str, Any]) -> np.ndarray:
    x = _matrix(pool["x"], params.get("dropped", DROPPED))
    return np.asarray(pool["z"]) + booster.predict(x) / _scale(params)


def loco(pools: list[dict[str, Any]], params: dict[str, Any], rounds: int) -> dict[str, Any]:
    corpora = sorted({p["corpus"] for p in pools})
    table: dict[str, Any] = {}
    before_all, after_all, held_all = [], [], []
    for held in corpora:
        test = [p for p in pools if p["corpus"] == held and any(v == 2 for v in p["y"])]
        booster = train([p for p in pools if p["corpus"] != held], params, rounds)
        before = [np.asarray(p["z"]) for p in test]
        after = [predict(booster, p, params) for p in test]
        table[held] = {"before": figures(test, before), "after": figures(test, after)}
        for lang in ("en", "pt"):
            idx = [i for i, p in enumerate(test) if p["lang"] == lang]
            if idx and not held.startswith("doc:"):
                table[f"{held} {lang}"] = {
                    "before": figures([test[i] for i in idx], [before[i] for i in idx]),
                    "after": figures([test[i] for i in idx], [after[i] for i in idx]),
                }
        before_all += before
        after_all += after
        held_all += test
    table["ALL"] = {"before": figures(held_all, before_all), "after": figures(held_all, after_all)}
    # Developers' questions only (eval/realqa and extra sets), without the docstring sentences.
    qa = [i for i, p in enumerate(held_all) if not p["corpus"].startswith("doc:")]
    table["ALL questions"] = {
        "before": figures([held_all[i] for i in qa], [before_all[i] for i in qa]),
        "after": figures([held_all[i] for i in qa], [after_all[i] for i in qa]),
    }
    for lang in ("en", "pt"):
        idx = [i for i in qa if held_all[i]["lang"] == lang]
        table[f"ALL questions {lang}"] = {
            "before": figures([held_all[i] for i in idx], [before_all[i] for i in idx]),
            "after": figures([held_all[i] for i in idx], [after_all[i] for i in idx]),
        }
    return table


def show(table: dict[str, Any]) -> None:
    print("| held out | n | MRR@10 before -> after | R@5 before -> after |")
    print("| --- | --- | --- | --- |")
    for name, row in table.items():
        b, a = row["before"], row["after"]
        print(f"| {name} | {b['n']} | {b['mrr']:.3f} -> {a['mrr']:.3f} |"
              f" {b['r5']:.3f} -> {a['r5']:.3f} |")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("step", choices=("collect", "loco", "fit"))
    ap.add_argument(
        "--set",
        nargs="+",
        action="append",
        default=[],
        metavar="ARG",
        help="an extra question set: Q.jsonl NAME=DIR [NAME=DIR ...] (every split is fitted)",
    )
    ap.add_argument("--corpora", default="", help="collect: only these (recollected)")
    ap.add_argument("--pools", type=Path, default=POOLS, help="the folder of the pools")
    ap.add_argument("--out", type=Path, default=MODEL, help="where `fit` writes the model")
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--without", default="", help="fit: leave these corpora's pools out")
    ap.add_argument("--scale", type=float, default=0.3, help="z's weight in the init score")
    ap.add_argument("--doc-weight", type=float, default=DOC_WEIGHT)
    ap.add_argument("--drop", default=",".join(DROPPED), help="inputs the trees may not use")
    ap.add_argument("--leaves", type=int, default=PARAMS["num_leaves"])
    ap.add_argument("--min-leaf", type=int, default=PARAMS["min_data_in_leaf"])
    args = ap.parse_args(argv)
    dropped = tuple(n for n in args.drop.split(",") if n)
    params = {**PARAMS, "z_scale": args.scale, "num_leaves": args.leaves,
              "min_data_in_leaf": args.min_leaf, "doc_weight": args.doc_weight,
              "dropped": dropped}  # fmt: skip
    if args.step == "collect":
        t0 = time.perf_counter()
        collect(args.set, {n for n in args.corpora.split(",") if n}, args.pools)
        print(f"collected in {time.perf_counter() - t0:.0f}s -> {args.pools}")
        return 0
    pools = load_pools(args.pools)
    if args.step == "loco":
        show(loco(pools, params, args.rounds))
        return 0
    left_out = {n for n in args.without.split(",") if n}
    pools = [p for p in pools if p["corpus"] not in left_out]
    booster = train(pools, params, args.rounds)
    dump = booster.dump_model()
    # The package adds the linear z back at its own scale: leaves are divided by the init scale.
    trees = [{"tree_structure": _slim(t["tree_structure"], 1.0 / _scale(params))}
             for t in dump["tree_info"]]  # fmt: skip
    keep = {"tree_info": trees}
    meta = {"params": {k: v for k, v in params.items() if k != "eval_at"}, "rounds": args.rounds,
            "questions": len(pools), "corpora": sorted({p["corpus"] for p in pools})}  # fmt: skip
    args.out.write_text(
        json.dumps({"inputs": list(ranker.INPUTS), "trained": meta, "models": {"hybrid": keep}})
        + "\n"
    )
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")
    return 0


_NODE_KEYS = ("split_feature", "threshold", "decision_type")


def _slim(node: dict[str, Any], k: float) -> dict[str, Any]:
    """The tree with only what ranker.from_dump reads, leaves scaled by k."""
    if "leaf_value" in node:
        return {"leaf_value": node["leaf_value"] * k}
    return {
        **{key: node[key] for key in _NODE_KEYS},
        "left_child": _slim(node["left_child"], k),
        "right_child": _slim(node["right_child"], k),
    }


if __name__ == "__main__":
    raise SystemExit(main())
