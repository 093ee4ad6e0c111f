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
import math
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
    SEARCH_BIAS,
    SEARCH_CANDIDATE_POOL,
    SEARCH_WEIGHTS,
)
from code_compass.engine import Engine  # noqa: E402
from code_compass.records import SearchParams  # noqa: E402
from code_compass.search.calibration import score_candidates  # noqa: E402
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
    feats = MODE_FEATURES[mode]
    xs: list[list[float]] = []
    ys: list[float] = []
    ws: list[float] = []
    for pool in pools:
        cands = pool.lex if mode == "lexical" else pool.sem if mode == "semantic" else None
        if cands is None:
            cands = merge(pool.lex, pool.sem)
        scored = score_candidates(cands, query_info(pool.q.query), mode)
        for c in scored:
            xs.append([c.features[f] for f in feats])
            ys.append(1.0 if pool.answerable and is_hit(pool, c) else 0.0)
            ws.append(1.0)
    return np.array(xs), np.array(ys), np.array(ws)


def logistic(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by Newton's method (bias unpenalised)."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    beta = np.zeros(xb.shape[1])
    pos = max(1.0, float((y * w).sum()))
    w = w * np.where(y > 0, (w.sum() - pos) / pos / 10, 1.0)  # positives are rare: upweight
    reg = np.full(xb.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-(xb @ beta)))
        grad = xb.T @ (w * (p - y)) + reg * beta
        hess = (xb * (w * p * (1 - p))[:, None]).T @ xb + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-6:
            break
    return beta[:-1], float(beta[-1])


def calibration_points(mode: str, pools: Sequence[Pool]) -> tuple[list[float], list[float]]:
    """Logits of correct hits in the top 10 (answerable) and of the top hit (unanswerable)."""
    pos: list[float] = []
    neg: list[float] = []
    for pool in pools:
        top = ranked(mode, pool)[:TOP]
        if pool.answerable:
            hit = next((c for c in top if is_hit(pool, c)), None)
            if hit is not None:
                pos.append(math.log(hit.score / max(1e-12, 1 - hit.score)))
        elif top:
            neg.append(math.log(top[0].score / max(1e-12, 1 - top[0].score)))
    return pos, neg


def place_threshold(pos: list[float], neg: list[float]) -> float:
    """The logit to map to minScore: mid-point of the range meeting both targets, else the
    point with the best kept-correct minus kept-unanswerable (Youden's J)."""
    cands = sorted(set(pos) | set(neg))
    p, n = np.array(pos), np.array(neg)
    best_t, best_j = 0.0, -2.0
    feasible: list[float] = []
    for t in cands:
        keep = float((p >= t).mean()) if len(p) else 0.0
        fk = float((n >= t).mean()) if len(n) else 0.0
        if keep >= 0.9 and fk <= 0.1:
            feasible.append(t)
        if keep - fk > best_j:
            best_j, best_t = keep - fk, t
    if feasible:
        return (min(feasible) + max(feasible)) / 2
    return best_t


def fit(pools: Sequence[Pool], l2: float, log: Callable[[str], None]) -> dict[str, object]:
    out: dict[str, object] = {}
    for mode in MODES:
        x, y, w = design(mode, pools)
        feats = list(MODE_FEATURES[mode])
        keep = list(range(len(feats)))
        while True:
            coef, bias = logistic(x[:, keep], y, w, l2)
            # Evidence must never lower the score (monotonic calibration): drop such a signal.
            bad = [k for k, c in zip(keep, coef, strict=True) if feats[k] in EVIDENCE and c < 0]
            if not bad:
                break
            keep.remove(bad[0])
        SEARCH_WEIGHTS[mode].clear()
        SEARCH_WEIGHTS[mode].update(
            {feats[k]: round(float(c), 3) for k, c in zip(keep, coef, strict=True)}
        )
        SEARCH_BIAS[mode] = bias
        pos, neg = calibration_points(mode, pools)
        t = place_threshold(pos, neg)
        SEARCH_BIAS[mode] = round(
            bias - t + math.log(DEFAULT_MIN_SCORE / (1 - DEFAULT_MIN_SCORE)), 3
        )
        log(f"fit {mode}: {len(y)} candidates, {int(y.sum())} positives, threshold logit {t:.2f}")
    out["weights"] = {m: dict(SEARCH_WEIGHTS[m]) for m in MODES}
    out["bias"] = dict(SEARCH_BIAS)
    return out


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
    ap.add_argument("--l2", type=float, default=1.0)
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
        print(f"SEARCH_BIAS = {json.dumps(fitted['bias'])}")
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
