#!/usr/bin/env python3
"""Fit the calibrated score (search/calibration_fit.json) on the dev split of eval/realqa.

    .venv/bin/python scripts/fit_calibration.py            # collect dev pools, fit, write, report
    .venv/bin/python scripts/fit_calibration.py --check    # refit, report, do not write
    .venv/bin/python scripts/fit_calibration.py --loco --set Q.jsonl NAME=DIR ...   # + a set

One command, reproducible: every corpus (scripts/fetch_corpora.py; indexed by
scripts/eval_realqa.py into bench-data/realqa/storage/, fully embedded) is opened in process and
every dev question goes through the very functions `search_projects` uses (query builder,
both channels' 30 candidates, signals, relevance z, the list's gate signals, diversity), for
four models: `hybrid` (complete vectors), `lexical` (no vectors: the same candidates without the
semantic list), `semantic`, and `partial` (the lexical model with its own cut, for a project
only partly embedded). Then, per model:

- gate: P(the workspace answers) from the list signals (search/gate.py), a logistic regression,
  answerable dev questions against unanswerable ones of the same repository; signals whose
  weight comes out with the wrong sign are dropped and the fit redone.
- hit: P(hit relevant | answerable) from the hit's gap to the best relevance, its rank and
  whether it is first, over the top 10 shown for answerable questions. Relevant = overlaps a
  gold span, or is a chunk a reader judged to answer too (eval/realqa/graded.jsonl, dev only);
  a hit nobody judged counts as not relevant.

- first: P(the hit shown first is relevant), over the first hit of every dev question
  (unanswerable ones included): logit P(ans), logit P(rel | ans), named / guessed definition.
- offset and γ: the shift of P(ans)'s logit that puts 0.6 at the answerable/unanswerable cut,
  and the exponent of the hits below the best (docs/search.md, "Score"). The cut is placed on
  held-out logits: each question's from the gate fitted without its corpus (held_out_gate), so
  0.6 is where the gate separates the two on a repository it has not seen.

`--set Q.jsonl NAME=DIR ...` adds a question set fitted whole (the blind sets once measured);
`--loco-gate` prints the gate's leave-one-corpus-out kept / passing / AUROC per corpus.

relevance = gate x hit (the first hit: its own model); score = S(gate) x (hit / best hit)^γ.
Test is never read here.
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

from grade import GRADED, block_of, graded_answers, load_graded  # noqa: E402

from code_compass_server.constants import NAME_EXACT_SCORE, SEARCH_CANDIDATE_POOL  # noqa: E402
from code_compass_server.index.project import Project  # noqa: E402
from code_compass_server.records import SearchParams  # noqa: E402
from code_compass_server.search import calibration  # noqa: E402
from code_compass_server.search.calibration import (  # noqa: E402
    FIRST_SIGNALS,
    HIT_SIGNALS,
    first_signals,
    hit_signals,
    list_evidence,
)
from code_compass_server.search.candidates import Candidate  # noqa: E402
from code_compass_server.search.fusion import diversify, merge  # noqa: E402
from code_compass_server.search.gate import GATE_SIGNALS, question_terms  # noqa: E402
from code_compass_server.search.names import QueryNames, definitions, place, query_names  # noqa: E402
from code_compass_server.search.searcher import (  # noqa: E402
    lexical_candidates,
    project_query,
)
from code_compass_server.search.signals import query_info  # noqa: E402
from code_compass_server.validation import validate_search  # noqa: E402
from eval_realqa import (  # noqa: E402
    QUESTIONS,
    TOP_K,
    embedded_project,
    local_corpus,
    relevant,
    storage_for,
    tree_of,
)
from fetch_corpora import corpus_dir, load_corpora  # noqa: E402

# Signals a model may not read: the channel it does not have (a partly embedded project's
# cosines come from a few chunks only, so the lexical model must not lean on them).
EXCLUDED = {
    "lexical": {"cos_top", "cos_gap", "agree"},
    "semantic": {"lex_top", "bm25_per_word", "agree"},
    "hybrid": set(),
}
# Signals that can only speak against answering (their weight must be <= 0), and signals that
# may speak either way (naming an identifier or an option is neither good nor bad by itself);
# every other gate signal's weight must be >= 0.
NEGATIVE = {"absent", "ident_missing", "kwarg_missing"}
EITHER = {"ident_named", "kwarg_named"}
MODELS = ("hybrid", "lexical", "semantic")
POOLS = ROOT / "bench-data" / "realqa" / "pools-dev.json"
FIT_PATH = ROOT / "server" / "code_compass_server" / "search" / calibration.FIT_FILE


def dev_verdicts(
    questions: list[dict[str, Any]], path: Path = GRADED
) -> dict[str, list[dict[str, object]]]:
    """graded.jsonl's verdicts. Refuses a verdict on any block that is not dev: the test split's
    completed labels (graded_test.jsonl) exist for the report and are never fitted on."""
    graded = load_graded(path)
    split_of = {block_of(q["id"]): q["split"] for q in questions}
    bad = sorted(b for b in graded if split_of.get(b) != "dev")
    if bad:
        raise SystemExit(f"refusing to fit: {path.name} judges non-dev blocks {bad[:5]}")
    return graded


def collect(
    split: str, only: set[str] | None = None, sets: list[list[str]] | None = None
) -> list[dict[str, Any]]:
    """Per dev question and model: the gate signals and the shown hits' (z gap, rank, label).
    `only`: a subset of the corpora (default: those corpora.json does not keep out of the fit).
    `sets`: extra question sets given by path, `[Q.jsonl, NAME=DIR, ...]` each (a held-out set
    once it has been measured); every question of theirs is fitted, whatever its split. A corpus
    whose storage is not fully embedded is left out (its hybrid pools would be lexical)."""
    if split != "dev":
        raise SystemExit(f"refusing to collect the {split} split: the fit reads dev only")
    questions = [json.loads(x) for x in QUESTIONS.read_text().splitlines() if x.strip()]
    graded = dev_verdicts(questions)
    jobs: list[tuple[str, Path, Path, list[dict[str, Any]]]] = []
    for corpus in load_corpora():
        if (only is None and not corpus.fit) or (only is not None and corpus.name not in only):
            continue
        qs = [q for q in questions if q["corpus"] == corpus.name and q["split"] == split]
        jobs.append((corpus.name, corpus_dir(corpus), storage_for(corpus, False), qs))
    for spec in sets or []:
        extra = [json.loads(x) for x in Path(spec[0]).read_text().splitlines() if x.strip()]
        for corpus in map(local_corpus, spec[1:]):
            qs = [q for q in extra if q["corpus"] == corpus.name]
            jobs.append((corpus.name, tree_of(corpus), storage_for(corpus, False), qs))
    out: list[dict[str, Any]] = []
    for corpus_name, tree, storage, qs in jobs:
        if not qs:
            continue
        with embedded_project(storage, tree, corpus_name) as opened:
            if opened is None:
                continue
            project, name, semantic = opened
            for q in qs:
                params = validate_search(q["question"], TOP_K, project=name)
                query, text = project_query(project, params)
                lex_p = replace(params, query=query.lexical, rewrite=None)
                sem_p = replace(params, query=query.rewritten, rewrite=None)
                lex = lexical_candidates(project, lex_p, SEARCH_CANDIDATE_POOL)
                sem = semantic(project, sem_p, SEARCH_CANDIDATE_POOL)
                terms = question_terms(text, project.lexical)
                info = query_info(text)
                names = query_names(params.query, query.rewritten)
                block = graded.get(block_of(q["id"]), [])
                row: dict[str, Any] = {k: q[k] for k in ("id", "corpus", "lang", "kind", "style")}
                for model in MODELS:
                    cands = {"hybrid": merge(lex, sem), "lexical": merge(lex, []),
                             "semantic": merge([], sem)}[model]  # fmt: skip
                    ordered, zs, gsig = list_evidence(cands, info, model, terms)
                    rank_of = {id(c): i for i, c in enumerate(ordered)}
                    z_of = {id(c): z for c, z in zip(ordered, zs, strict=True)}
                    full = diversify(ordered)
                    shown = full[:TOP_K]
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
                    first = _first_shown(project, params, names, full, z_of, rank_of, zs)
                    if first is not None:
                        first.update(relevant=relevant(first, q["gold"]),
                                     answers=relevant(first, q["gold"])
                                     or graded_answers(first, block))  # fmt: skip
                    row[model] = {"gate": gsig, "hits": hits, "first": first}
                out.append(row)
            print(f"{corpus_name}: {len(qs)} questions", file=sys.stderr)
    return out


def _first_shown(
    project: Project,
    params: SearchParams,
    names: QueryNames,
    shown: list[Candidate],
    z_of: dict[int, float],
    rank_of: dict[int, int],
    zs: list[float],
) -> dict[str, Any] | None:
    """The hit `search` shows first, once the name channel has placed its definitions
    (search/names.py) and the list is diversified again, as in searcher.project_candidates:
    its place in the relevance list (None when the name channel added it) and its name flags.
    The list's order stands in for its scores (place() orders by score, and no score of the
    list exceeds the best's)."""
    if not shown:
        return None
    for i, c in enumerate(shown):
        c.score = 1.0 - i / 1000.0
    placed = shown
    if names.refs or names.words:
        placed = diversify(place(shown, definitions(project, names, params), names.navigation))
    c = placed[0]
    scored = id(c) in z_of
    return {
        "path": c.row.path,
        "startLine": c.row.start_line,
        "endLine": c.row.end_line,
        "signals": hit_signals(z_of[id(c)], zs[0], rank_of[id(c)]) if scored else None,
        "named": c.exact_definition,
        "guess": c.name_guess,
        "floor": NAME_EXACT_SCORE * c.name_match
        if names.navigation and c.exact_definition and not c.name_guess
        else 0.0,
    }


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


GATE_SIGNS = {g: -1 for g in NEGATIVE} | {g: 0 for g in EITHER}


def _gate_rows(
    pools: list[dict[str, Any]], model: str, gnames: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    gx = np.array([[p[model]["gate"][g] for g in gnames] for p in pools])
    gy = np.array([p["kind"] == "answerable" for p in pools], dtype=int)
    return gx, gy


def held_out_gate(pools: list[dict[str, Any]], model: str, gnames: list[str]) -> np.ndarray:
    """Each question's gate logit from the gate fitted without its corpus: what the gate says
    on a repository it has never seen. The cut is placed on these, not on the in-sample
    logits, which sit further from the cut on the corpora they were fitted on (the in-sample
    cut kept 54 % of answerable questions on two new corpora)."""
    corpora = sorted({p["corpus"] for p in pools})
    out = np.zeros(len(pools))
    if len(corpora) < 3:  # too few corpora to hold one out: in sample
        gx, gy = _gate_rows(pools, model, gnames)
        gate = _fit(gx, gy, gnames, GATE_SIGNS, c=1.0)
        return np.array([calibration.linear(gate, dict(zip(gnames, r, strict=True))) for r in gx])
    for held in corpora:
        train = [p for p in pools if p["corpus"] != held]
        gx, gy = _gate_rows(train, model, gnames)
        gate = _fit(gx, gy, gnames, GATE_SIGNS, c=1.0)
        for i, p in enumerate(pools):
            if p["corpus"] == held:
                row = {g: p[model]["gate"][g] for g in gnames}
                out[i] = calibration.linear(gate, row)
    return out


def fit(pools: list[dict[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    held: dict[str, np.ndarray] = {}
    for model in MODELS:
        gnames = [g for g in GATE_SIGNALS if g not in EXCLUDED[model]]
        gx, gy = _gate_rows(pools, model, gnames)
        gate = _fit(gx, gy, gnames, GATE_SIGNS, c=1.0)
        hrows = [h for p in pools if p["kind"] == "answerable" for h in p[model]["hits"]]
        hnames = list(HIT_SIGNALS) + gnames
        hx = np.array([[h["signals"][s] for s in HIT_SIGNALS] + [g[n] for n in gnames]
                       for p in pools if p["kind"] == "answerable"
                       for g in [p[model]["gate"]] for h in p[model]["hits"]])  # fmt: skip
        hy = np.array([h.get("answers", h["relevant"]) for h in hrows], dtype=int)
        hit = _fit(hx, hy, hnames, {"dz": 1, "rank": 1, "top": 1, **{n: 0 for n in gnames}}, c=1.0)
        held[model] = held_out_gate(pools, model, gnames)
        offset = _offset(held[model], gy, _floors(pools, model))
        result[model] = {"gate": gate, "hit": hit, "offset": offset}
        result[model]["evidence_gamma"] = _gamma(pools, model, result[model])
        result[model]["first"] = _fit_first(pools, model, result[model])
    # While a project is being embedded the lexical model answers for the hybrid one: its cut
    # keeps >= 97 % of answerable questions (a refusal caused only by missing vectors must not
    # happen; the answer says the index is partial), at the cost of more unanswerable passing.
    lex = result["lexical"]
    gy = np.array([p["kind"] == "answerable" for p in pools], dtype=int)
    floors = _floors(pools, "lexical")
    result["partial"] = {**lex, "offset": _offset(held["lexical"], gy, floors, kept=0.97)}
    result["partial"]["evidence_gamma"] = _gamma(pools, "lexical", result["partial"])
    return result


# Gate signals the first-hit model reads besides FIRST_SIGNALS (chosen by leave-one-corpus-out).
FIRST_EXTRA: tuple[str, ...] = ()
FIRST_C = 1.0


def _first_rows(
    pools: list[dict[str, Any]], pool: str, params: dict[str, Any]
) -> tuple[list[dict[str, float]], list[dict[str, Any]]]:
    """Per question whose list shows a first hit: the first-hit model's inputs under the gate and
    hit models of `params`, and the pool row."""
    g, h = params["gate"], params["hit"]
    xs, rows = [], []
    for p in pools:
        first = p[pool].get("first")
        if first is None:
            continue
        gs = p[pool]["gate"]
        answer = calibration.sigmoid(calibration.linear(g, gs))
        # Added by the name channel: the list's best P(rel | ans) stands for it (as at search).
        sig = first["signals"] or p[pool]["hits"][0]["signals"]
        hit = calibration.sigmoid(calibration.linear(h, {**gs, **sig}))
        xs.append({**gs, **first_signals(answer, hit, first["named"], first["guess"])})
        rows.append(p)
    return xs, rows


def _fit_first(pools: list[dict[str, Any]], pool: str, params: dict[str, Any]) -> dict[str, Any]:
    """P(the first shown hit is relevant), over the first hits of every dev question
    (unanswerable ones are never relevant), graded labels."""
    xs, rows = _first_rows(pools, pool, params)
    names = [*FIRST_SIGNALS, *(e for e in FIRST_EXTRA if e not in EXCLUDED[pool])]
    x = np.array([[v[n] for n in names] for v in xs])
    y = np.array([bool(p[pool]["first"]["answers"]) for p in rows], dtype=int)
    signs = {n: 0 for n in names} | {"answer": 1, "hit": 1}
    return _fit(x, y, names, signs, c=FIRST_C)


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


def _floors(pools: list[dict[str, Any]], pool: str) -> np.ndarray:
    """Per question, the score the name channel gives the definition a navigation question
    names when it shows it first (search/names.py: a floor the gate does not decide), else 0."""
    return np.array([float((p[pool].get("first") or {}).get("floor", 0.0)) for p in pools])


def _offset(logits: np.ndarray, gy: np.ndarray, floors: np.ndarray, kept: float = 0.90) -> float:
    """Where the gate probability should meet minScore 0.6: the cut furthest inside the targets
    (>= `kept` of answerable questions kept, <= 15 % of unanswerable passing), as a logit shift.
    `logits` are the gate's held-out logits (held_out_gate). A question whose named definition
    is shown first above 0.6 passes whatever the cut."""
    target = kept
    probs = np.array([calibration.sigmoid(float(v)) for v in logits])
    named = floors >= calibration.DEFAULT_MIN_SCORE
    best, cut = -1e9, 0.6
    for t in np.arange(0.20, 0.91, 0.01):
        shown = (probs >= t) | named
        got, passing = np.mean(shown[gy == 1]), np.mean(shown[gy == 0])
        # Above 90 % the kept share comes first: the highest cut that still keeps it.
        margin = min(got - target, 0.15 - passing) if target <= 0.90 else float(got >= target)
        if margin > best + 1e-9:
            best, cut = margin, float(t)
    return round(float(np.log(cut / (1 - cut)) - calibration.ANCHOR), 4)


def predict(pools: list[dict[str, Any]], params: dict[str, Any], pool: str) -> list[dict[str, Any]]:
    """Per question: the top score (the gate's number), the first shown hit's relevance and
    labels, and every shown hit's relevance and graded label (the first one replaced by the
    first shown hit, as `search` returns it)."""
    g, h = params["gate"], params["hit"]
    xs, rows = _first_rows(pools, pool, params)
    first_of = {id(p): x for p, x in zip(rows, xs, strict=True)}
    out = []
    for p in pools:
        gs = p[pool]["gate"]
        pa = calibration.sigmoid(calibration.linear(g, gs))
        rel = [pa * calibration.sigmoid(calibration.linear(h, {**gs, **x["signals"]}))
               for x in p[pool]["hits"]]  # fmt: skip
        labels = [bool(x["answers"]) for x in p[pool]["hits"]]
        gold = [bool(x["relevant"]) for x in p[pool]["hits"]]
        first = p[pool].get("first")
        rec: dict[str, Any] = {"corpus": p["corpus"], "lang": p["lang"], "kind": p["kind"],
                               "top": 0.0, "first": None}  # fmt: skip
        if rel and first is not None:
            top = calibration.sigmoid(calibration.linear(g, gs) - params["offset"])
            rec["top"] = max(top, float(first.get("floor", 0.0)))
            f = (
                calibration.sigmoid(calibration.linear(params["first"], first_of[id(p)]))
                if "first" in params
                else rel[0]
            )
            rec["first"] = (f, bool(first["answers"]), bool(first["relevant"]))
            same = [
                i
                for i, x in enumerate(p[pool]["hits"])
                if (x["path"], x["startLine"]) == (first["path"], first["startLine"])
            ]
            rest = [i for i in range(len(rel)) if i not in same]
            rec["all"] = [(f, bool(first["answers"]))] + [(rel[i], labels[i]) for i in rest]
            rec["all"] = rec["all"][:TOP_K]
            rec["all_gold"] = [(f, bool(first["relevant"]))] + [(rel[i], gold[i]) for i in rest]
        out.append(rec)
    return out


def ece_floor(probs: list[float], draws: int = 300) -> float:
    """The ECE a perfectly calibrated model would still show on this many hits: the mean ECE of
    labels drawn from the predicted probabilities themselves (10-bin ECE is noisy at n ~ 300)."""
    from eval_realqa import ece

    rng = np.random.default_rng(0)
    p = np.asarray(probs, dtype=float)
    return float(np.mean([ece(list(p), list(rng.random(len(p)) < p)) for _ in range(draws)]))


def figures(recs: list[dict[str, Any]]) -> dict[str, float]:
    from eval_realqa import auroc, ece

    ans = [r["top"] for r in recs if r["kind"] == "answerable"]
    una = [r["top"] for r in recs if r["kind"] != "answerable"]
    firsts = [r["first"] for r in recs if r["first"] is not None]
    every = [x for r in recs if r["first"] is not None for x in r["all"]]
    every_gold = [x for r in recs if r["first"] is not None for x in r["all_gold"]]
    return {
        "auroc": auroc(ans, una),
        "kept": float(np.mean([a >= 0.6 for a in ans])),
        "passing": float(np.mean([u >= 0.6 for u in una])),
        "ece_first": ece([f[0] for f in firsts], [f[1] for f in firsts]),
        "ece_first_gold": ece([f[0] for f in firsts], [f[2] for f in firsts]),
        "ece_all": ece([x[0] for x in every], [x[1] for x in every]),
        "ece_all_gold": ece([x[0] for x in every_gold], [x[1] for x in every_gold]),
        "ece_first_floor": ece_floor([f[0] for f in firsts]),
        "mean_first": float(np.mean([f[0] for f in firsts])),
        "share_first": float(np.mean([f[1] for f in firsts])),
    }


def show(label: str, f: dict[str, float]) -> None:
    print(
        f"{label:28s} relevance ECE first {f['ece_first']:.3f} (gold {f['ece_first_gold']:.3f},"
        f" floor {f['ece_first_floor']:.3f},"
        f" mean {f['mean_first']:.3f} vs {f['share_first']:.3f}) all {f['ece_all']:.3f}"
        f" (gold {f['ece_all_gold']:.3f}) | gate AUROC {f['auroc']:.3f}"
        f" kept {f['kept']:.0%} passing {f['passing']:.0%}"
    )


def report(pools: list[dict[str, Any]], params: dict[str, Any]) -> None:
    """Dev figures of the fitted model, in sample (the full table: scripts/eval_realqa.py):
    ECE of the relevance probability (first shown hit, and every shown hit; graded labels),
    and the gate at minScore 0.6."""
    for model in (*MODELS, "partial"):
        pool = "lexical" if model == "partial" else model
        show(f"{model} (in sample)", figures(predict(pools, params[model], pool)))
        evidence_report(pools, params, model)


def failures(pools: list[dict[str, Any]], model: str = "hybrid") -> None:
    """Held-out gate errors on dev at minScore 0.6 (for reading dev failures only)."""
    questions = {q["id"]: q for q in map(json.loads, QUESTIONS.read_text().splitlines())}
    for held in sorted({p["corpus"] for p in pools}):
        params = fit([p for p in pools if p["corpus"] != held])[model]
        for p in pools:
            if p["corpus"] != held:
                continue
            gs = p[model]["gate"]
            top = calibration.sigmoid(calibration.linear(params["gate"], gs) - params["offset"])
            top = max(top, float((p[model].get("first") or {}).get("floor", 0.0)))
            answerable = p["kind"] == "answerable"
            if (top >= 0.6) != answerable:
                sig = " ".join(f"{k}={v:.2f}" for k, v in gs.items() if v)
                print(f"{'DROP' if answerable else 'PASS'} {top:.2f} {p['id']}: "
                      f"{questions[p['id']]['question']}\n      {sig}")  # fmt: skip


def loco(pools: list[dict[str, Any]], models: tuple[str, ...] = MODELS) -> dict[str, Any]:
    """Leave one corpus out: fit on the other corpora's dev questions, predict the held-out
    corpus's; the figures over all held-out predictions, and per corpus."""
    corpora = sorted({p["corpus"] for p in pools})
    out: dict[str, Any] = {}
    for model in models:
        recs: list[dict[str, Any]] = []
        for held in corpora:
            params = fit([p for p in pools if p["corpus"] != held])
            recs += predict([p for p in pools if p["corpus"] == held], params[model], model)
        out[model] = {"all": figures(recs)}
        for held in corpora:
            out[model][held] = figures([r for r in recs if r["corpus"] == held])
        for lang in ("en", "pt"):
            out[model][lang] = figures([r for r in recs if r["lang"] == lang])
    return out


def loco_gate(pools: list[dict[str, Any]], model: str = "hybrid") -> dict[str, dict[str, float]]:
    """Leave one corpus out, the gate alone (what minScore reads for the best hit): the gate and
    its cut fitted without the corpus (the cut on the other corpora's held-out logits), then
    kept / passing / AUROC of the held-out corpus, per corpus and language."""
    gnames = [g for g in GATE_SIGNALS if g not in EXCLUDED[model]]
    recs: list[tuple[str, str, bool, float]] = []
    for held in sorted({p["corpus"] for p in pools}):
        train = [p for p in pools if p["corpus"] != held]
        gx, gy = _gate_rows(train, model, gnames)
        gate = _fit(gx, gy, gnames, GATE_SIGNS, c=1.0)
        offset = _offset(held_out_gate(train, model, gnames), gy, _floors(train, model))
        for p in pools:
            if p["corpus"] == held:
                top = calibration.sigmoid(calibration.linear(gate, p[model]["gate"]) - offset)
                top = max(top, float((p[model].get("first") or {}).get("floor", 0.0)))
                recs.append((held, p["lang"], p["kind"] == "answerable", top))
    from eval_realqa import auroc

    def row(rs: list[tuple[str, str, bool, float]]) -> dict[str, float]:
        ans, una = [r[3] for r in rs if r[2]], [r[3] for r in rs if not r[2]]
        kept, passing = np.mean([a >= 0.6 for a in ans]), np.mean([u >= 0.6 for u in una])
        return {"n": len(rs), "kept": float(kept), "passing": float(passing),
                "auroc": auroc(ans, una)}  # fmt: skip

    out = {c: row([r for r in recs if r[0] == c]) for c in sorted({r[0] for r in recs})}
    for lang in ("en", "pt"):
        out[f"ALL {lang}"] = row([r for r in recs if r[1] == lang])
    out["ALL"] = row(recs)
    return out


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
    ap.add_argument("--loco", action="store_true", help="also leave one corpus out (dev)")
    ap.add_argument("--loco-gate", action="store_true", help="leave one corpus out, gate only")
    ap.add_argument("--failures", action="store_true", help="print held-out dev gate errors")
    ap.add_argument(
        "--set",
        nargs="+",
        action="append",
        default=[],
        metavar="ARG",
        help="an extra question set fitted whole: Q.jsonl NAME=DIR [NAME=DIR ...]",
    )
    args = ap.parse_args(argv)
    only = {n for n in args.corpora.split(",") if n} or None
    where = POOLS if only is None else POOLS.with_name("pools-dev-subset.json")
    if args.reuse and where.exists():
        pools = json.loads(where.read_text())
    else:
        pools = collect("dev", only, args.set)
        where.write_text(json.dumps(pools))
    args.check = args.check or only is not None
    params = fit(pools)
    report(pools, params)
    if args.failures:
        failures(pools)
    if args.loco_gate:
        print("| held out | n | kept >= 0.6 | U passing | AUROC |\n| --- | --- | --- | --- | --- |")
        for group, f in loco_gate(pools).items():
            print(
                f"| {group} | {f['n']} | {f['kept']:.0%} | {f['passing']:.0%} | {f['auroc']:.3f} |"
            )
    if args.loco:
        for model, groups in loco(pools).items():
            for group, f in groups.items():
                show(f"{model} held out: {group}", f)
    if not args.check:
        # The package's copy (read through importlib.resources at run time).
        FIT_PATH.write_text(json.dumps(params, indent=1) + "\n")
        print(f"wrote {FIT_PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
