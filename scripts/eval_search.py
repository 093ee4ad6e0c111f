"""Search quality on the CodeSearchNet-style dev set: R@1/5/10, MRR@10 and calibration per mode.

    .venv/bin/python scripts/eval_search.py [--split dev|test|both] [--corpora django,go]
    .venv/bin/python scripts/eval_search.py --fit   # refit SEARCH_* weights and calibration on dev

Queries are first sentences of docstrings/doc comments, blanked in the indexed copy
(eval/search/devset.py). A hit is correct when it is in the target's file and holds the line of
the definition's name (or carries its qualified symbol). Unanswerable queries are one corpus's
queries run against a corpus of another domain (PAIRS;
SAME_DOMAIN is reported too). Calibration: the share of answerable queries whose
correct hit (when in the top 10) scores >= minScore, and the share of unanswerable queries with
any hit >= minScore. `bm25` is the raw baseline: Tantivy's BM25 order with no calibration,
de-duplication or caps. --fit tunes on the dev half only and prints the constants to paste.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "eval" / "search"))

import devset  # noqa: E402
import harness  # noqa: E402

from code_compass_server.constants import (  # noqa: E402
    DEFAULT_MIN_SCORE,
    SEARCH_ANSWER_WEIGHTS,
    SEARCH_CANDIDATE_POOL,
    SEARCH_RANK_SLOPE,
    SEARCH_THRESHOLD,
    SEARCH_WEIGHTS,
)
from code_compass_server.engine import Engine  # noqa: E402
from code_compass_server.records import SearchParams  # noqa: E402
from code_compass_server.search.calibration import relevance, score_candidates  # noqa: E402
from code_compass_server.search.candidates import Candidate  # noqa: E402
from code_compass_server.search.fusion import diversify, fuse, merge  # noqa: E402
from code_compass_server.search.searcher import lexical_candidates  # noqa: E402
from code_compass_server.search.signals import (  # noqa: E402
    FEATURES,
    QUERY_SIGNALS,
    query_info,
    query_signals,
)

# Unanswerable queries: each corpus's queries against a corpus of another domain. rxjs (reactive
# streams) shares no subject with the three others; Django's web framework none with it. The
# earlier pairing stdlib<->go is still reported ("same-domain") but is not a clean negative set:
# both are standard libraries, and many Go doc sentences have a real Python counterpart (on the
# test split, "decodes \\uXXXX from the beginning of s" -> json's _decode_uXXXX, "returns all
# values associated with the given key" -> email's Message.get_all).
PAIRS = {"django": "typescript", "stdlib": "typescript", "typescript": "django", "go": "typescript"}
SAME_DOMAIN = {"django": "stdlib", "stdlib": "go", "typescript": "django", "go": "stdlib"}
MODES = ("lexical", "semantic", "hybrid")
MODE_FEATURES = {
    "lexical": (
        "lex",
        "coverage",
        "rank_lex",
        "symbol",
        "name",
        "path",
        "test",
        "test_wanted",
        "window",
    ),
    "semantic": ("cos", "rank_sem", "test", "test_wanted", "window"),
    "hybrid": FEATURES,
}
ANSWER_FEATURES = {
    "lexical": ("z_top", "lex_top", "bm25_per_word", "nwords"),
    "semantic": ("z_top", "cos_top", "cos_gap", "nwords"),
    "hybrid": QUERY_SIGNALS,
}
ANSWER_EVIDENCE = ("z_top", "cos_top", "cos_gap", "lex_top", "bm25_per_word")
SLOPES = (0.1, 0.15, 0.2, 0.3, 0.5)  # >= 0.1: a list's scores must fall with its relevance
TOP = 10
EVIDENCE = ("cos", "lex", "coverage", "symbol", "name", "path")


@dataclass
class Row:
    ranks: list[int | None] = field(default_factory=list)  # 0-based rank of the correct hit
    kept: list[bool] = field(default_factory=list)  # correct hit (top 10) scored >= minScore
    false_keep: list[bool] = field(default_factory=list)  # unanswerable: any hit >= minScore
    false_same: list[bool] = field(default_factory=list)  # same, against SAME_DOMAIN's corpus

    def recall(self, k: int) -> float:
        return sum(1 for r in self.ranks if r is not None and r < k) / max(1, len(self.ranks))

    def mrr(self) -> float:
        return sum(1 / (r + 1) for r in self.ranks if r is not None and r < TOP) / max(
            1, len(self.ranks)
        )


def correct(q: devset.Query, project: str, path: str, start: int, end: int, symbol: str) -> bool:
    return (
        project == q.corpus
        and path == q.path
        and (start <= q.name_line <= end or symbol == q.symbol)
    )


def params(q: devset.Query, project: str, mode: str) -> SearchParams:
    return SearchParams(q.query, TOP, None, None, None, project=project, mode=mode)


# --- evaluation through the engine ----------------------------------------------------------


def evaluate(
    engine: Engine, queries: Sequence[devset.Query], modes: Sequence[str]
) -> dict[tuple[str, str], Row]:
    table: dict[tuple[str, str], Row] = {}
    for q in queries:
        for mode in modes:
            row = table.setdefault((mode, q.corpus), Row())
            if mode == "bm25":
                proj = engine.project(q.corpus)
                found = proj.lexical.search(q.query, TOP)
                rows = proj.catalog.chunks_by_ids(h.chunk_id for h in found)
                rank = next(
                    (
                        i
                        for i, h in enumerate(found)
                        if h.chunk_id in rows
                        and correct(
                            q,
                            q.corpus,
                            rows[h.chunk_id].path,
                            rows[h.chunk_id].start_line,
                            rows[h.chunk_id].end_line,
                            rows[h.chunk_id].symbol,
                        )
                    ),
                    None,
                )
                row.ranks.append(rank)
                continue
            hits = engine.search(params(q, q.corpus, mode))
            rank = next(
                (
                    i
                    for i, h in enumerate(hits)
                    if correct(q, h.project, h.path, h.start_line, h.end_line, h.symbol)
                ),
                None,
            )
            row.ranks.append(rank)
            if rank is not None:
                row.kept.append(hits[rank].score >= DEFAULT_MIN_SCORE)
            other = engine.search(params(q, PAIRS[q.corpus], mode))
            row.false_keep.append(bool(other) and other[0].score >= DEFAULT_MIN_SCORE)
            if SAME_DOMAIN[q.corpus] != PAIRS[q.corpus]:
                same = engine.search(params(q, SAME_DOMAIN[q.corpus], mode))
                row.false_same.append(bool(same) and same[0].score >= DEFAULT_MIN_SCORE)
    return table


def print_table(title: str, table: dict[tuple[str, str], Row], corpora: Sequence[str]) -> None:
    print(f"\n## {title}\n")
    print(
        "| mode | corpus | n | R@1 | R@5 | R@10 | MRR@10 | correct kept >=0.6 | unanswerable kept"
        " | same-domain kept |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    modes = sorted({m for m, _ in table}, key=lambda m: ("bm25", *MODES).index(m))
    for mode in modes:
        for c in corpora:
            r = table.get((mode, c))
            if r is None:
                continue
            kept = f"{np.mean(r.kept):.1%}" if r.kept else "-"
            fk = f"{np.mean(r.false_keep):.1%}" if r.false_keep else "-"
            fs = f"{np.mean(r.false_same):.1%}" if r.false_same else "-"
            print(
                f"| {mode} | {c} | {len(r.ranks)} | {r.recall(1):.3f} | {r.recall(5):.3f} |"
                f" {r.recall(10):.3f} | {r.mrr():.3f} | {kept} | {fk} | {fs} |"
            )
    if all((m, c) in table for m in MODES for c in corpora):
        print("\nhybrid MRR@10 ratios (targets: >= 1.3x lexical, >= 1.15x semantic):")
        for c in corpora:
            h = table[("hybrid", c)].mrr()
            lx, sm = table[("lexical", c)].mrr(), table[("semantic", c)].mrr()
            bm = table[("bm25", c)].mrr() if ("bm25", c) in table else float("nan")
            print(
                f"  {c}: {h / max(lx, 1e-9):.2f}x lexical, {h / max(sm, 1e-9):.2f}x semantic,"
                f" {h / max(bm, 1e-9):.2f}x raw bm25"
            )


# --- fitting on dev --------------------------------------------------------------------------


@dataclass
class Pool:
    q: devset.Query
    answerable: bool
    lex: list[Candidate]
    sem: list[Candidate]
    same_domain: bool = False  # unanswerable pool against SAME_DOMAIN's corpus (reported only)


def collect(engine: Engine, queries: Sequence[devset.Query]) -> list[Pool]:
    semantic = engine.embeddings.semantic_channel()
    assert semantic is not None, "no semantic channel: run without --no-embed"
    pools: list[Pool] = []
    for q in queries:
        targets = [(q.corpus, True, False), (PAIRS[q.corpus], False, False)]
        if SAME_DOMAIN[q.corpus] != PAIRS[q.corpus]:
            targets.append((SAME_DOMAIN[q.corpus], False, True))
        for project, answerable, same in targets:
            proj = engine.project(project)
            p = params(q, project, "hybrid")
            lex = lexical_candidates(proj, p, SEARCH_CANDIDATE_POOL)
            sem = semantic(proj, p, SEARCH_CANDIDATE_POOL)
            pools.append(Pool(q, answerable, lex, sem, same))
    return pools


def scored(mode: str, pool: Pool) -> tuple[list[Candidate], dict[str, float]]:
    """A mode's scored candidates of one pool (best first) and the list's query signals."""
    qi = query_info(pool.q.query)
    if mode == "hybrid":
        src = merge(pool.lex, pool.sem)
    else:
        src = pool.lex if mode == "lexical" else pool.sem
    out = score_candidates(src, qi, mode)
    zs = [relevance(c.features, mode) for c in out]
    cosines = [c.cosine for c in out if c.cosine is not None]
    qsig = query_signals([c.features for c in out], cosines, max(zs, default=0.0), len(qi.words))
    return out, qsig


def ranked(mode: str, pool: Pool) -> list[Candidate]:
    """What search_projects returns for one project (before minScore), replayed from a pool."""
    if mode == "hybrid":
        return fuse(pool.q.query, pool.lex, pool.sem)
    return diversify(scored(mode, pool)[0])


def is_hit(pool: Pool, c: Candidate) -> bool:
    r = c.row
    return correct(pool.q, c.project, r.path, r.start_line, r.end_line, r.symbol)


def design(mode: str, pools: Sequence[Pool]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Signals, labels and query index of every candidate of the answerable pools."""
    feats = MODE_FEATURES[mode]
    xs: list[list[float]] = []
    ys: list[float] = []
    ws: list[float] = []
    for gi, pool in enumerate(pools):
        if not pool.answerable:
            continue
        for c in scored(mode, pool)[0]:
            xs.append([c.features[f] for f in feats])
            ys.append(1.0 if is_hit(pool, c) else 0.0)
            ws.append(float(gi))
    return np.array(xs), np.array(ys), np.array(ws)


def logistic(x: np.ndarray, y: np.ndarray, l2: float, balanced: bool = False) -> np.ndarray:
    """L2 logistic regression by Newton's method; returns (weights..., bias).

    Positives are up-weighted (rare: one per query), or both classes weigh half when balanced.
    """
    xb = np.hstack([x, np.ones((len(x), 1))])
    beta = np.zeros(xb.shape[1])
    pos = max(1.0, float(y.sum()))
    if balanced:
        w = np.where(y > 0, 0.5 * len(y) / pos, 0.5 * len(y) / max(1.0, len(y) - pos))
    else:
        w = np.where(y > 0, (len(y) - pos) / pos / 10, 1.0)
    reg = np.full(xb.shape[1], max(l2, 1e-3))
    reg[-1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-(xb @ beta)))
        grad = xb.T @ (w * (p - y)) + reg * beta
        hess = (xb * (w * p * (1 - p))[:, None]).T @ xb + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-6:
            break
    return beta


def listwise(x: np.ndarray, y: np.ndarray, groups: np.ndarray, l2: float) -> np.ndarray:
    """Weights maximising the softmax probability of each query's correct candidate (Adam).

    Queries whose pool lacks the target teach nothing about ranking and are left out.
    """
    _, g = np.unique(groups, return_inverse=True)
    has_pos = np.bincount(g, weights=y) > 0
    sel = has_pos[g]
    x, y, g = x[sel], y[sel], np.unique(g[sel], return_inverse=True)[1]
    n_groups = int(g.max()) + 1
    beta = np.zeros(x.shape[1])
    m = np.zeros_like(beta)
    v = np.zeros_like(beta)
    for it in range(1, 601):
        z = x @ beta
        zmax = np.full(n_groups, -np.inf)
        np.maximum.at(zmax, g, z)
        e = np.exp(z - zmax[g])
        p = e / np.bincount(g, weights=e, minlength=n_groups)[g]
        grad = x.T @ (p - y) / n_groups + l2 * beta
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad**2
        beta -= 0.05 * (m / (1 - 0.9**it)) / (np.sqrt(v / (1 - 0.999**it)) + 1e-8)
    return beta


@dataclass
class CalPoint:
    corpus: str
    qsig: np.ndarray  # the list's query signals (ANSWER_FEATURES order)
    answerable: bool
    delta: float = 0.0  # z of the correct hit minus z_top (answerable, hit in the top 10)


def calibration_points(mode: str, pools: Sequence[Pool]) -> list[CalPoint]:
    """Answerable queries whose correct hit is in the top 10, and unanswerable queries (PAIRS)."""
    names = ANSWER_FEATURES[mode]
    out: list[CalPoint] = []
    for pool in pools:
        if pool.same_domain:
            continue
        cands, qsig = scored(mode, pool)
        top = diversify(cands)[:TOP]
        if not top:
            continue
        vec = np.array([qsig[n] for n in names])
        if not pool.answerable:
            out.append(CalPoint(pool.q.corpus, vec, False))
            continue
        hit = next((c for c in top if is_hit(pool, c)), None)
        if hit is not None:
            delta = relevance(hit.features, mode) - qsig["z_top"]
            out.append(CalPoint(pool.q.corpus, vec, True, delta))
    return out


def shares(
    points: Sequence[CalPoint], v: np.ndarray, slope: float, t: float
) -> dict[str, tuple[float, float]]:
    """Per corpus: (share of correct hits kept >= 0.6, share of unanswerable with a hit >= 0.6)."""
    out: dict[str, tuple[float, float]] = {}
    for c in sorted({p.corpus for p in points}):
        kept = [p.qsig @ v + slope * p.delta >= t for p in points if p.corpus == c and p.answerable]
        false = [p.qsig @ v >= t for p in points if p.corpus == c and not p.answerable]
        out[c] = (float(np.mean(kept)) if kept else 0.0, float(np.mean(false)) if false else 0.0)
    return out


def fit_calibration(
    mode: str, pools: Sequence[Pool], log: Callable[[str], None]
) -> tuple[dict[str, float], float, float]:
    """Answer weights (logistic: answered vs unanswerable), then the slope and threshold whose
    worst corpus is furthest inside the targets (>= 90 % kept, <= 10 % false)."""
    names = list(ANSWER_FEATURES[mode])
    points = calibration_points(mode, pools)
    x = np.array([p.qsig for p in points])
    y = np.array([1.0 if p.answerable else 0.0 for p in points])
    keep = list(range(len(names)))
    while True:
        mu, sd = x[:, keep].mean(0), x[:, keep].std(0) + 1e-9
        beta = logistic((x[:, keep] - mu) / sd, y, 1e-2, balanced=True)
        coef = beta[:-1] / sd
        # Evidence of the whole list must never lower a hit's score (monotonic calibration).
        bad = [k for k, c in zip(keep, coef, strict=True) if names[k] in ANSWER_EVIDENCE and c < 0]
        if not bad:
            break
        keep.remove(bad[0])
    v = np.zeros(len(names))
    v[keep] = coef
    answers = x @ v
    best: tuple[tuple[float, float], float, float] | None = None
    for slope in SLOPES:
        for t in np.quantile(answers, np.linspace(0.01, 0.99, 197)):
            res = shares(points, v, slope, float(t))
            worst = min(min(k - 0.9, 0.1 - f) for k, f in res.values())
            key = (worst, float(np.mean([k - f for k, f in res.values()])))
            if best is None or key > best[0]:
                best = (key, slope, float(t))
    assert best is not None
    _, slope, t = best
    res = shares(points, v, slope, t)
    log(
        f"calibrate {mode}: slope {slope}, dev kept/false "
        + ", ".join(f"{c} {k:.1%}/{f:.1%}" for c, (k, f) in res.items())
    )
    weights = {names[k]: round(float(v[k]), 3) for k in keep}
    return weights, slope, round(t, 3)


def fit(pools: Sequence[Pool], l2: float, log: Callable[[str], None]) -> dict[str, object]:
    for mode in MODES:
        x, y, groups = design(mode, pools)
        feats = list(MODE_FEATURES[mode])
        best_mrr = -1.0
        chosen: dict[str, float] = {}
        for method in ("listwise", "pointwise"):
            keep = list(range(len(feats)))
            while True:
                if method == "listwise":
                    coef = listwise(x[:, keep], y, groups, l2)
                else:
                    coef = logistic(x[:, keep], y, l2)[:-1]
                # Evidence must never lower the score (monotonic calibration): drop it.
                bad = [k for k, c in zip(keep, coef, strict=True) if feats[k] in EVIDENCE and c < 0]
                if not bad:
                    break
                keep.remove(bad[0])
            SEARCH_WEIGHTS[mode].clear()
            SEARCH_WEIGHTS[mode].update(
                {feats[k]: round(float(c), 3) for k, c in zip(keep, coef, strict=True)}
            )
            mrr = replay_table_mode(mode, pools)
            log(f"  {mode} {method}: dev MRR@10 {mrr:.4f}")
            # Listwise weights calibrate better at equal MRR: pointwise must win clearly.
            margin = 0.01 if method == "pointwise" else 0.0
            if mrr > best_mrr + margin or not chosen:
                best_mrr, chosen = mrr, dict(SEARCH_WEIGHTS[mode])
        SEARCH_WEIGHTS[mode].clear()
        SEARCH_WEIGHTS[mode].update(chosen)
        answer, slope, t = fit_calibration(mode, pools, log)
        SEARCH_ANSWER_WEIGHTS[mode].clear()
        SEARCH_ANSWER_WEIGHTS[mode].update(answer)
        SEARCH_RANK_SLOPE[mode] = slope
        SEARCH_THRESHOLD[mode] = t
    return {
        "weights": {m: dict(SEARCH_WEIGHTS[m]) for m in MODES},
        "answer_weights": {m: dict(SEARCH_ANSWER_WEIGHTS[m]) for m in MODES},
        "threshold": dict(SEARCH_THRESHOLD),
        "rank_slope": dict(SEARCH_RANK_SLOPE),
    }


def replay_table_mode(mode: str, pools: Sequence[Pool]) -> float:
    """Mean MRR@10 over the answerable pools for one mode (macro over corpora)."""
    per: dict[str, list[float]] = {}
    for pool in pools:
        if pool.answerable:
            top = ranked(mode, pool)[:TOP]
            rank = next((i for i, c in enumerate(top) if is_hit(pool, c)), None)
            per.setdefault(pool.q.corpus, []).append(0.0 if rank is None else 1 / (rank + 1))
    return float(np.mean([np.mean(v) for v in per.values()]))


def replay_table(pools: Sequence[Pool]) -> dict[tuple[str, str], Row]:
    table: dict[tuple[str, str], Row] = {}
    for mode in MODES:
        for pool in pools:
            row = table.setdefault((mode, pool.q.corpus), Row())
            top = ranked(mode, pool)[:TOP]
            if pool.answerable:
                rank = next((i for i, c in enumerate(top) if is_hit(pool, c)), None)
                row.ranks.append(rank)
                if rank is not None:
                    row.kept.append(top[rank].score >= DEFAULT_MIN_SCORE)
            else:
                fk = bool(top) and top[0].score >= DEFAULT_MIN_SCORE
                (row.false_same if pool.same_domain else row.false_keep).append(fk)
    return table


# --- main ------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--split", choices=("dev", "test", "both"), default="both")
    ap.add_argument("--corpora", default="", help="comma-separated subset of corpora.json")
    ap.add_argument("--fit", action="store_true", help="refit weights and bias on dev, print them")
    ap.add_argument("--l2", type=float, default=1e-3)
    ap.add_argument("--limit", type=int, default=0, help="at most N queries per corpus and split")
    args = ap.parse_args(argv)

    def log(s: str) -> None:
        print(s, file=sys.stderr, flush=True)

    names = [n for n in args.corpora.split(",") if n] or None
    dirs = devset.build_all(None)  # every corpus: unanswerable queries need the paired one
    engine = harness.open_engine(
        devset.OUT / "storage", {n: d / "tree" for n, d in dirs.items()}, log=log
    )
    corpora = [n for n in dirs if names is None or n in names]
    queries = {n: devset.load_queries(dirs[n]) for n in corpora}

    def pick(split: str) -> list[devset.Query]:
        out: list[devset.Query] = []
        for n in corpora:
            qs = [q for q in queries[n] if q.split == split]
            out.extend(qs[: args.limit] if args.limit else qs)
        return out

    if args.fit:
        t0 = time.perf_counter()
        pools = collect(engine, pick("dev"))
        log(f"collected {len(pools)} candidate pools in {time.perf_counter() - t0:.0f}s")
        print_table("dev, constants before fitting (replayed)", replay_table(pools), corpora)
        fitted = fit(pools, args.l2, log)
        (devset.OUT / "fitted.json").write_text(json.dumps(fitted, indent=1))
        print_table("dev, fitted (replayed)", replay_table(pools), corpora)
        print("\n# paste into constants.py")
        print(f"SEARCH_WEIGHTS = {json.dumps(fitted['weights'])}")
        print(f"SEARCH_ANSWER_WEIGHTS = {json.dumps(fitted['answer_weights'])}")
        print(f"SEARCH_THRESHOLD = {json.dumps(fitted['threshold'])}")
        print(f"SEARCH_RANK_SLOPE = {json.dumps(fitted['rank_slope'])}")
    splits = ("dev", "test") if args.split == "both" else (args.split,)
    for split in splits:
        t0 = time.perf_counter()
        table = evaluate(engine, pick(split), ("bm25", *MODES))
        log(f"{split}: evaluated in {time.perf_counter() - t0:.0f}s")
        print_table(f"{split} split (through Engine.search)", table, corpora)
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
