#!/usr/bin/env python3
"""Depth controller latency: classification over the labelled set x N, and pack building.

Usage: .venv/bin/python scripts/bench_depth.py [--reps 20]
Baseline in the same run: a bare `normalize` + one regex per question, to show the cost of
the full classifier relative to touching the text at all.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from pathlib import Path

from code_compass_server.constants import DEPTH_CLASSIFY_BUDGET_MS
from code_compass_server.depth.classifier import classify
from code_compass_server.depth.conversation import ConversationStore
from code_compass_server.depth.evaluation import load_dataset
from code_compass_server.depth.pack import build_pack
from code_compass_server.depth.retrieval_plan import plan_for
from code_compass_server.records import SearchHit

DATASET = Path(__file__).resolve().parent.parent / "eval" / "depth" / "dataset.jsonl"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def fake_search(query: str, k: int) -> list[SearchHit]:
    body = "\n".join(f"    total += weight_{i} * value_{i}  # accumulate" for i in range(40))
    return [
        SearchHit(f"pkg/m{i}.py", 1, 40, 0.9 - i * 0.02, f"f{i}", "function", "python", "p", body)
        for i in range(k)
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    items = load_dataset(DATASET)
    probe = re.compile(r"\bwhy\b")

    base: list[float] = []
    lat: list[float] = []
    for _ in range(args.reps):
        for it in items:
            t = time.perf_counter()
            probe.search(it.question.lower())
            base.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            classify(it.question, it.history)
            lat.append((time.perf_counter() - t) * 1000)
    print(f"classification: {len(lat)} calls ({len(items)} items x {args.reps})")
    print(
        f"  p50 {statistics.median(lat):.3f} ms  p95 {pct(lat, 95):.3f} ms  max {max(lat):.3f} ms"
        f"  (budget {DEPTH_CLASSIFY_BUDGET_MS} ms, docs/rules.md: classify-fast)"
    )
    print(
        f"  baseline lower()+1 regex: p50 {statistics.median(base) * 1000:.1f} us;"
        f" classifier/baseline p50 ratio {statistics.median(lat) / statistics.median(base):.0f}x"
    )

    store = ConversationStore()
    for n in range(20):
        store.record_answer(
            "bench",
            f"Where is helper number {n} defined and who calls it?",
            f"helper_{n} is defined in pkg/m{n}.py [E1]. It is called by main() [E2]. " * 3,
            fake_search("x", 2),
        )
    turns = store.turns("bench")
    print("pack building (fake search, 20-exchange history, long snippets):")
    for depth in ("D0", "D1", "D2", "D3", "D4"):
        plan = plan_for(depth)  # type: ignore[arg-type]
        decision = classify("No, that's wrong: helper_3 is in pkg/other.py.", turns)
        times: list[float] = []
        tokens = 0
        for _ in range(max(3, args.reps // 2)):
            t = time.perf_counter()
            pack = build_pack(decision, plan, "Where is helper_3?", turns, search=fake_search)
            times.append((time.perf_counter() - t) * 1000)
            tokens = pack.tokens
        print(
            f"  {depth}: p50 {statistics.median(times):.2f} ms  max {max(times):.2f} ms"
            f"  tokens {tokens}/{plan.max_tokens}  dropped {pack.dropped}"
        )


if __name__ == "__main__":
    main()
