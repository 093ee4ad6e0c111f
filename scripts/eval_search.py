"""Search quality on the CodeSearchNet-style dev set: R@1/5/10, MRR@10 and calibration per mode.

    .venv/bin/python scripts/eval_search.py [--split dev|test|both] [--corpora django,go]
    .venv/bin/python scripts/eval_search.py --fit   # refit SEARCH_WEIGHTS/SEARCH_BIAS on dev

Queries are first sentences of docstrings/doc comments, blanked in the indexed copy
(eval/search/devset.py). A hit is correct when it is in the target's file and holds the line of
the definition's name (or carries its qualified symbol). Unanswerable queries are one corpus's
queries run against another corpus (PAIRS). Calibration: the share of answerable queries whose
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

from code_compass.constants import (  # noqa: E402
    DEFAULT_MIN_SCORE,
    SEARCH_CANDIDATE_POOL,
    SEARCH_THRESHOLD,
    SEARCH_TOP_SHARE,
    SEARCH_WEIGHTS,
)
from code_compass.engine import Engine  # noqa: E402
from code_compass.records import SearchParams  # noqa: E402
from code_compass.search.calibration import relevance, score_candidates  # noqa: E402
from code_compass.search.candidates import Candidate  # noqa: E402
from code_compass.search.fusion import diversify, fuse, merge  # noqa: E402
from code_compass.search.searcher import lexical_candidates  # noqa: E402
from code_compass.search.signals import FEATURES, query_info  # noqa: E402

PAIRS = {"django": "typescript", "stdlib": "go", "typescript": "django", "go": "stdlib"}
MODES = ("lexical", "semantic", "hybrid")
MODE_FEATURES = {
    "lexical": ("lex", "coverage", "rank_lex", "symbol", "path", "test", "test_wanted", "window"),
    "semantic": ("cos", "rank_sem", "test", "test_wanted", "window"),
    "hybrid": FEATURES,
}
TOP = 10
EVIDENCE = ("cos", "lex", "coverage", "symbol", "path")


@dataclass
class Row:
    ranks: list[int | None] = field(default_factory=list)  # 0-based rank of the correct hit
    kept: list[bool] = field(default_factory=list)  # correct hit (top 10) scored >= minScore
    false_keep: list[bool] = field(default_factory=list)  # unanswerable: any hit >= minScore

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
    return table


def print_table(title: str, table: dict[tuple[str, str], Row], corpora: Sequence[str]) -> None:
    print(f"\n## {title}\n")
    print(
        "| mode | corpus | n | R@1 | R@5 | R@10 | MRR@10 | correct kept >=0.6 | unanswerable kept |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    modes = sorted({m for m, _ in table}, key=lambda m: ("bm25", *MODES).index(m))
    for mode in modes:
        for c in corpora:
            r = table.get((mode, c))
            if r is None:
                continue
            kept = f"{np.mean(r.kept):.1%}" if r.kept else "-"
            fk = f"{np.mean(r.false_keep):.1%}" if r.false_keep else "-"
            print(
                f"| {mode} | {c} | {len(r.ranks)} | {r.recall(1):.3f} | {r.recall(5):.3f} |"
                f" {r.recall(10):.3f} | {r.mrr():.3f} | {kept} | {fk} |"
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


def collect(engine: Engine, queries: Sequence[devset.Query]) -> list[Pool]:
    semantic = engine._semantic
    assert semantic is not None, "no semantic channel: run without --no-embed"
    pools: list[Pool] = []
    for q in queries:
        for project, answerable in ((q.corpus, True), (PAIRS[q.corpus], False)):
            proj = engine.project(project)
            p = params(q, project, "hybrid")
            lex = lexical_candidates(proj, p, SEARCH_CANDIDATE_POOL)
            sem = semantic(proj, p, SEARCH_CANDIDATE_POOL)
            pools.append(Pool(q, answerable, lex, sem))
    return pools


def ranked(mode: str, pool: Pool) -> list[Candidate]:
    """What search_projects returns for one project (before minScore), replayed from a pool."""
    qi = query_info(pool.q.query)
    if mode == "hybrid":
        return fuse(pool.q.query, pool.lex, pool.sem)
    src = pool.lex if mode == "lexical" else pool.sem
    return diversify(score_candidates(src, qi, mode))


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
        cands = pool.lex if mode == "lexical" else pool.sem if mode == "semantic" else None
        if cands is None:
            cands = merge(pool.lex, pool.sem)
        scored = score_candidates(cands, query_info(pool.q.query), mode)
        for c in scored:
            xs.append([c.features[f] for f in feats])
            ys.append(1.0 if is_hit(pool, c) else 0.0)
            ws.append(float(gi))
    return np.array(xs), np.array(ys), np.array(ws)


def logistic(x: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    """Pointwise L2 logistic regression by Newton's method; positives up-weighted (rare)."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    beta = np.zeros(xb.shape[1])
    pos = max(1.0, float(y.sum()))
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
    return beta[:-1]


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


def calibration_points(
    mode: str, pools: Sequence[Pool]
) -> tuple[list[tuple[float, float]], list[float]]:
    """(z, z_top) of correct hits in the top 10 (answerable), z_top of unanswerable queries."""
    pos: list[tuple[float, float]] = []
    neg: list[float] = []
    for pool in pools:
        top = ranked(mode, pool)[:TOP]
        if not top:
            continue
        z_top = relevance(top[0].features, mode)
        if pool.answerable:
            hit = next((c for c in top if is_hit(pool, c)), None)
            if hit is not None:
                pos.append((relevance(hit.features, mode), z_top))
        else:
            neg.append(z_top)
    return pos, neg


def place_threshold(pos: np.ndarray, neg: np.ndarray) -> tuple[float, float, float]:
    """(threshold, kept share, false-keep share): mid-point of the range meeting both targets
    (>= 90 % kept, <= 10 % false), else the point maximising kept minus false (Youden's J)."""
    best = (0.0, 0.0, 1.0)
    feasible: list[float] = []
    for t in np.unique(np.concatenate([pos, neg])):
        keep = float((pos >= t).mean()) if len(pos) else 0.0
        fk = float((neg >= t).mean()) if len(neg) else 0.0
        if keep >= 0.9 and fk <= 0.1:
            feasible.append(float(t))
        if keep - fk > best[1] - best[2]:
            best = (float(t), keep, fk)
    if feasible:
        t = (min(feasible) + max(feasible)) / 2
        return t, float((pos >= t).mean()), float((neg >= t).mean())
    return best


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
                    coef = logistic(x[:, keep], y, l2)
                # Evidence must never lower the score (monotonic calibration): drop it.
                bad = [k for k, c in zip(keep, coef, strict=True) if feats[k] in EVIDENCE and c < 0]
                if not bad:
                    break
                keep.remove(bad[0])
            SEARCH_WEIGHTS[mode].clear()
            SEARCH_WEIGHTS[mode].update(
                {feats[k]: round(float(c), 3) for k, c in zip(keep, coef, strict=True)}
            )
            mrr = float(np.mean([replay_table_mode(mode, pools)]))
            log(f"  {mode} {method}: dev MRR@10 {mrr:.4f}")
            # Listwise weights calibrate better (dev: hybrid 88.8 % kept / 12.2 % false vs
            # 83.4 / 21.2 pointwise) at equal MRR: pointwise must win MRR clearly to be used.
            margin = 0.01 if method == "pointwise" else 0.0
            if mrr > best_mrr + margin or not chosen:
                best_mrr, chosen = mrr, dict(SEARCH_WEIGHTS[mode])
        SEARCH_WEIGHTS[mode].clear()
        SEARCH_WEIGHTS[mode].update(chosen)
        pos, neg = calibration_points(mode, pools)
        zi = np.array([p[0] for p in pos])
        zt = np.array([p[1] for p in pos])
        nz = np.array(neg)
        best: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)
        for share in np.arange(0.0, 0.91, 0.05):
            # A hit clears 0.6 when (1 - share) * z + share * z_top >= threshold.
            t, kept, fk = place_threshold((1 - share) * zi + share * zt, nz)
            if kept - fk > best[2] - best[3] + 1e-9:
                best = (float(share), t, kept, fk)
        SEARCH_TOP_SHARE[mode] = round(best[0], 2)
        SEARCH_THRESHOLD[mode] = round(best[1], 3)
        log(
            f"fit {mode}: {len(y)} candidates, {int(y.sum())} positives; share {best[0]:.2f},"
            f" threshold {best[1]:.2f}: dev kept {best[2]:.1%}, false {best[3]:.1%}"
        )
    return {
        "weights": {m: dict(SEARCH_WEIGHTS[m]) for m in MODES},
        "threshold": dict(SEARCH_THRESHOLD),
        "top_share": dict(SEARCH_TOP_SHARE),
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
                row.false_keep.append(bool(top) and top[0].score >= DEFAULT_MIN_SCORE)
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
    engine, _stores = harness.open_engine(
        devset.OUT / "storage", {n: d / "tree" for n, d in dirs.items()}, devset.OUT, log=log
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
        print(f"SEARCH_THRESHOLD = {json.dumps(fitted['threshold'])}")
        print(f"SEARCH_TOP_SHARE = {json.dumps(fitted['top_share'])}")
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
