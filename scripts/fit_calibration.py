#!/usr/bin/env python3
"""Fit the calibrated score (search/calibration_fit.json) on the dev split of eval/realqa.

    .venv/bin/python scripts/fit_calibration.py            # collect dev pools, fit, write, report
    .venv/bin/python scripts/fit_calibration.py --check    # refit, report, do not write

One command, reproducible: every corpus (scripts/fetch_corpora.py; indexed by
scripts/eval_realqa.py into bench-data/realqa/storage/, fully embedded) is opened in process and
every dev question goes through the very functions `search_projects` uses (query builder,
both channels' 30 candidates, signals, relevance z, the list's gate signals, diversity), for
three models: `hybrid` (complete vectors), `lexical` (no vectors, or partly embedded: the same
candidates without the semantic list) and `semantic`. Then, per model:

- gate: P(the workspace answers) from the list signals (search/gate.py), a logistic regression,
  answerable dev questions against unanswerable ones of the same repository; signals whose
  weight comes out with the wrong sign are dropped and the fit redone.
- hit: P(hit relevant | answerable) from the hit's gap to the best relevance, its rank and
  whether it is first, over the top 10 shown for answerable questions. Relevant = overlaps a
  gold span, or is a chunk a reader judged to answer too (eval/realqa/graded.jsonl, dev only);
  a hit nobody judged counts as not relevant.

score = gate x hit. Test is never read here.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "eval" / "realqa"))

from grade import block_of, graded_answers, load_graded  # noqa: E402

from code_compass.engine import Engine  # noqa: E402
from code_compass.search import calibration  # noqa: E402
from code_compass.search.calibration import HIT_SIGNALS, hit_signals, list_evidence  # noqa: E402
from code_compass.search.fusion import diversify, merge  # noqa: E402
from code_compass.search.gate import GATE_SIGNALS, question_terms  # noqa: E402
from code_compass.search.searcher import (  # noqa: E402
    CANDIDATE_POOL,
    lexical_candidates,
    retrieval_query,
    scored_text,
)
from code_compass.search.signals import query_info  # noqa: E402
from code_compass.settings import EngineSettings  # noqa: E402
from code_compass.validation import validate_search  # noqa: E402
from eval_realqa import QUESTIONS, TOP_K, relevant, storage_for  # noqa: E402
from fetch_corpora import corpus_dir, load_corpora  # noqa: E402

# Signals a model may not read: the channel it does not have (a partly embedded project's
# cosines come from a few chunks only, so the lexical model must not lean on them).
EXCLUDED = {
    "lexical": {"cos_top", "cos_gap", "agree"},
    "semantic": {"lex_top", "bm25_per_word", "agree"},
    "hybrid": set(),
}
# Signals that can only speak against answering (their weight must be <= 0).
NEGATIVE = {"absent", "ident_missing"}
MODELS = ("hybrid", "lexical", "semantic")
POOLS = ROOT / "bench-data" / "realqa" / "pools-dev.json"


def collect(split: str, only: set[str] | None = None) -> list[dict[str, Any]]:
    """Per dev question and model: the gate signals and the shown hits' (z gap, rank, label).
    `only`: a subset of the corpora (default all)."""
    questions = [json.loads(x) for x in QUESTIONS.read_text().splitlines() if x.strip()]
    graded = load_graded()
    out: list[dict[str, Any]] = []
    for corpus in load_corpora():
        if only is not None and corpus.name not in only:
            continue
        qs = [q for q in questions if q["corpus"] == corpus.name and q["split"] == split]
        if not qs:
            continue
        engine = Engine.open(storage_for(corpus, False), EngineSettings())
        try:
            name = engine.add_project(corpus_dir(corpus))
            project = engine.project(name)
            semantic = engine.embeddings.semantic_channel()  # None until the model loads
            assert semantic is not None, "embeddings are off: build the model first"
            for q in qs:
                params = validate_search(q["question"], TOP_K, project=name)
                query = retrieval_query(params)
                lex_p = replace(params, query=query.lexical, rewrite=None)
                sem_p = replace(params, query=query.rewritten, rewrite=None)
                lex = lexical_candidates(project, lex_p, CANDIDATE_POOL)
                sem = semantic(project, sem_p, CANDIDATE_POOL)
                text = scored_text(query, project.lexical)
                terms = question_terms(text, project.lexical)
                info = query_info(text)
                row: dict[str, Any] = {k: q[k] for k in ("id", "corpus", "lang", "kind", "style")}
                for model in MODELS:
                    cands = {"hybrid": merge(lex, sem), "lexical": merge(lex, []),
                             "semantic": merge([], sem)}[model]  # fmt: skip
                    ordered, zs, gsig = list_evidence(cands, info, model, terms)
                    rank_of = {id(c): i for i, c in enumerate(ordered)}
                    z_of = {id(c): z for c, z in zip(ordered, zs, strict=True)}
                    shown = diversify(ordered)[:TOP_K]
                    hits = []
                    for c in shown:
                        h = {"path": c.row.path, "startLine": c.row.start_line,
                             "endLine": c.row.end_line}  # fmt: skip
                        hits.append(
                            {
                                "signals": hit_signals(z_of[id(c)], zs[0], rank_of[id(c)]),
                                "relevant": relevant(h, q["gold"]),
                                "answers": relevant(h, q["gold"])
                                or graded_answers(h, graded.get(block_of(q["id"]), [])),
                                **h,
                            }
                        )
                    row[model] = {"gate": gsig, "hits": hits}
                out.append(row)
            print(f"{corpus.name}: {len(qs)} {split} questions", file=sys.stderr)
        finally:
            engine.close()
    return out


def _fit(x: np.ndarray, y: np.ndarray, names: list[str], signs: dict[str, int], c: float) -> dict:
    """Logistic regression; a weight with the wrong sign drops its signal and the fit is redone."""
    keep = list(range(len(names)))
    while True:
        m = LogisticRegression(C=c, max_iter=5000).fit(x[:, keep], y)
        w = m.coef_[0]
        bad = [k for k, wk in zip(keep, w, strict=True) if wk * signs.get(names[k], 1) < 0]
        if not bad:
            return {
                "bias": round(float(m.intercept_[0]), 5),
                "weights": {names[k]: round(float(wk), 5) for k, wk in zip(keep, w, strict=True)},
            }
        keep = [k for k in keep if k not in bad]


def fit(pools: list[dict[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for model in MODELS:
        gnames = [g for g in GATE_SIGNALS if g not in EXCLUDED[model]]
        gx = np.array([[p[model]["gate"][g] for g in gnames] for p in pools])
        gy = np.array([p["kind"] == "answerable" for p in pools], dtype=int)
        gate = _fit(gx, gy, gnames, {g: -1 for g in NEGATIVE}, c=1.0)
        hrows = [h for p in pools if p["kind"] == "answerable" for h in p[model]["hits"]]
        hnames = list(HIT_SIGNALS) + gnames
        hx = np.array([[h["signals"][s] for s in HIT_SIGNALS] + [g[n] for n in gnames]
                       for p in pools if p["kind"] == "answerable"
                       for g in [p[model]["gate"]] for h in p[model]["hits"]])  # fmt: skip
        hy = np.array([h.get("answers", h["relevant"]) for h in hrows], dtype=int)
        hit = _fit(hx, hy, hnames, {"dz": 1, "rank": 1, "top": 1, **{n: 0 for n in gnames}}, c=1.0)
        result[model] = {"gate": gate, "hit": hit, "offset": _offset(gx, gy, gnames, gate)}
        result[model]["evidence_gamma"] = _gamma(pools, model, result[model])
    # While a project is being embedded the lexical model answers for the hybrid one: its cut
    # keeps >= 97 % of answerable questions (a refusal caused only by missing vectors must not
    # happen; the answer says the index is partial), at the cost of more unanswerable passing.
    lex = result["lexical"]
    gnames = list(lex["gate"]["weights"])
    gx = np.array([[p["lexical"]["gate"][g] for g in gnames] for p in pools])
    gy = np.array([p["kind"] == "answerable" for p in pools], dtype=int)
    result["partial"] = {**lex, "offset": _offset(gx, gy, gnames, lex["gate"], kept=0.97)}
    result["partial"]["evidence_gamma"] = _gamma(pools, "lexical", result["partial"])
    return result


GAMMAS = (1.0, 0.7, 0.5, 0.4, 0.35, 0.3, 0.25, 0.2, 0.15)


def _below_best(
    pools: list[dict[str, Any]], pool: str, params: dict[str, Any]
) -> list[tuple[float, float, bool]]:
    """(best score, relevance odds against the best, answers) of every hit below the best in
    the answerable dev lists the gate keeps (best >= 0.6)."""
    g, h = params["gate"], params["hit"]
    out: list[tuple[float, float, bool]] = []
    for p in pools:
        if p["kind"] != "answerable" or not p[pool]["hits"]:
            continue
        gs = p[pool]["gate"]
        top = calibration.sigmoid(calibration.linear(g, gs) - params["offset"])
        if top < calibration.DEFAULT_MIN_SCORE:
            continue
        probs = [calibration.sigmoid(calibration.linear(h, {**gs, **x["signals"]}))
                 for x in p[pool]["hits"]]  # fmt: skip
        for x, pi in zip(p[pool]["hits"][1:], probs[1:], strict=True):
            out.append((top, min(1.0, pi / probs[0]), bool(x.get("answers", x["relevant"]))))
    return out


def _evidence_figures(rows: list[tuple[float, float, bool]], gamma: float) -> tuple[int, int, int]:
    """(hits >= minScore, of them answering, answering in all) for one gamma."""
    shown = [y for top, r, y in rows if top * r**gamma >= calibration.DEFAULT_MIN_SCORE]
    return len(shown), sum(shown), sum(y for _, _, y in rows)


def _gamma(pools: list[dict[str, Any]], pool: str, params: dict[str, Any]) -> float:
    """The softening of the relevance odds below the best that maximizes F1 of the answering
    hits clearing minScore (graded dev labels)."""
    rows = _below_best(pools, pool, params)
    best, pick = -1.0, 1.0
    for gamma in GAMMAS:
        shown, right, answering = _evidence_figures(rows, gamma)
        f1 = 2 * right / (shown + answering) if shown + answering else 0.0
        if f1 > best + 1e-9:
            best, pick = f1, gamma
    return pick


def _offset(
    gx: np.ndarray, gy: np.ndarray, names: list[str], gate: dict, kept: float = 0.90
) -> float:
    """Where the gate probability should meet minScore 0.6: the cut furthest inside the targets
    (>= `kept` of answerable questions kept, <= 15 % of unanswerable passing), as a logit shift."""
    target = kept
    gate_p = [calibration.linear(gate, dict(zip(names, row, strict=True))) for row in gx]
    probs = np.array([calibration.sigmoid(v) for v in gate_p])
    best, cut = -1e9, 0.6
    for t in np.arange(0.40, 0.91, 0.01):
        got, passing = np.mean(probs[gy == 1] >= t), np.mean(probs[gy == 0] >= t)
        # Above 90 % the kept share comes first: the highest cut that still keeps it.
        margin = min(got - target, 0.15 - passing) if target <= 0.90 else float(got >= target)
        if margin > best + 1e-9:
            best, cut = margin, float(t)
    return round(float(np.log(cut / (1 - cut)) - calibration.ANCHOR), 4)


def report(pools: list[dict[str, Any]], params: dict[str, Any]) -> None:
    """Dev figures of the fitted model (the full table: scripts/eval_realqa.py): ECE of the
    relevance probability (top-1 and every shown hit), and the gate at minScore 0.6."""
    from eval_realqa import auroc, ece

    for model in (*MODELS, "partial"):
        g, h = params[model]["gate"], params[model]["hit"]
        pool = "lexical" if model == "partial" else model
        top_s, top_y, all_s, all_y, ans, una = [], [], [], [], [], []
        for p in pools:
            gs = p[pool]["gate"]
            pa = calibration.sigmoid(calibration.linear(g, gs))
            rel = [pa * calibration.sigmoid(calibration.linear(h, {**gs, **x["signals"]}))
                   for x in p[pool]["hits"]]  # fmt: skip
            labels = [x.get("answers", x["relevant"]) for x in p[pool]["hits"]]
            if rel:
                top_s.append(rel[0])
                top_y.append(labels[0])
                all_s += rel
                all_y += labels
            top = calibration.sigmoid(calibration.linear(g, gs) - params[model]["offset"])
            (ans if p["kind"] == "answerable" else una).append(top if rel else 0.0)
        kept = np.mean([a >= 0.6 for a in ans])
        passing = np.mean([u >= 0.6 for u in una])
        print(
            f"{model:9s} relevance ECE top-1 {ece(top_s, top_y):.3f} all {ece(all_s, all_y):.3f}"
            f" | gate AUROC {auroc(ans, una):.3f} kept {kept:.0%} passing {passing:.0%}"
        )
        evidence_report(pools, params, model)


def evidence_report(pools: list[dict[str, Any]], params: dict[str, Any], model: str) -> None:
    """The hits below the best that clear minScore in the answerable lists the gate keeps: per
    list, the share of them that answer (graded labels) and the share of the answering ones
    kept, with the plain odds (gamma 1) and the fitted gamma."""
    pool = "lexical" if model == "partial" else model
    rows = _below_best(pools, pool, params[model])
    lists = len({(round(t, 9)) for t, _, _ in rows}) or 1
    for gamma in sorted({1.0, float(params[model]["evidence_gamma"])}, reverse=True):
        shown, right, answering = _evidence_figures(rows, gamma)
        print(
            f"    below the best, gamma {gamma:.2f}: {shown / lists:.2f} per kept list >= 0.6,"
            f" {right / max(shown, 1):.0%} answer, {right / max(answering, 1):.0%} of the"
            " answering ones kept"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fit and report, do not write")
    ap.add_argument("--reuse", action="store_true", help="reuse the collected dev pools")
    ap.add_argument("--corpora", default="", help="a subset, for a look (implies --check)")
    args = ap.parse_args(argv)
    only = {n for n in args.corpora.split(",") if n} or None
    if args.reuse and POOLS.exists() and only is None:
        pools = json.loads(POOLS.read_text())
    else:
        pools = collect("dev", only)
        (POOLS if only is None else POOLS.with_name("pools-dev-subset.json")).write_text(
            json.dumps(pools)
        )
        args.check = args.check or only is not None
    params = fit(pools)
    report(pools, params)
    if not args.check:
        calibration.FIT_FILE.write_text(json.dumps(params, indent=1) + "\n")
        print(f"wrote {calibration.FIT_FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
