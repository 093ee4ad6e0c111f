#!/usr/bin/env python3
"""Added latency of the offline query builder, per query: building alone, and whole searches.

    .venv/bin/python scripts/bench_query_builder.py [--questions FILE] [--corpus DIR --storage DIR]
        [--repeat 5]

1. `build_query` on every question of the file (Portuguese and English), cache cleared before
   each round: p50 / p95 / max in microseconds, and the one-off lexicon load.
2. With --corpus (an indexed workspace; --storage its storage): `Engine.search` of the
   Portuguese questions with the builder (the lexicon, and the cognates the workspace's index
   holds) and with its pass-through (the question as written),
   interleaved in alternating order after a warm-up round, hybrid mode when the storage has
   vectors: p50 / p95 in milliseconds of each, and of the per-query difference.
Without a questions file, a built-in handful of Portuguese and English questions is used.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "eval" / "realqa" / "questions.jsonl"
SAMPLE = [
    ("pt", "onde o flask registra as rotas?"),
    ("pt", "Como o Flask carrega configuração de variáveis de ambiente?"),
    ("pt", "onde o django valida as senhas dos usuários?"),
    ("pt", "como o transaction.atomic se comporta quando está aninhado dentro de outro bloco?"),
    ("en", "Where does flask register routes?"),
    ("en", "How does Flask load configuration from environment variables?"),
]

from code_compass_server.query import builder  # noqa: E402
from code_compass_server.query.cognates import candidates  # noqa: E402
from code_compass_server.query.lexicon import _lemmas, portuguese_lexicon  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q))


def load(path: Path | None) -> list[tuple[str, str]]:
    if path is None or not path.exists():
        return SAMPLE
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [(str(r["lang"]), str(r["question"])) for r in rows]


def bench_build(questions: list[tuple[str, str]], repeat: int) -> None:
    t0 = time.perf_counter()
    portuguese_lexicon()
    print(f"lexicon load (once per process): {(time.perf_counter() - t0) * 1000:.1f} ms")
    for lang in ("pt", "en"):
        qs = [q for ln, q in questions if ln == lang]
        if not qs:
            continue
        times: list[float] = []
        for _ in range(repeat):
            builder.build_query.cache_clear()
            _lemmas.cache_clear()
            for q in qs:
                t = time.perf_counter()
                builder.build_query(q)
                times.append((time.perf_counter() - t) * 1e6)
        print(
            f"build_query, {lang} ({len(qs)} questions x {repeat}, cold caches): "
            f"p50 {pct(times, 50):.0f} us, p95 {pct(times, 95):.0f} us, max {max(times):.0f} us"
        )


def bench_fit(qs: list[str], index: builder.Vocabulary, rounds: int) -> None:
    """The per-workspace step alone: `build_query` then `fit_to_index` (the cognates the index
    holds), every cache of the query package cleared before each round."""
    times: list[float] = []
    changed = 0
    for _ in range(rounds):
        for cached in (builder.build_query, builder._unknown_words, candidates, _lemmas):
            cached.cache_clear()
        for q in qs:
            t = time.perf_counter()
            offline = builder.build_query(q)
            fitted = builder.fit_to_index(offline, index)
            times.append((time.perf_counter() - t) * 1e6)
            changed += fitted.rewritten != offline.rewritten
    print(
        f"build_query + fit_to_index, pt ({len(qs)} questions x {rounds}, cold caches): "
        f"p50 {pct(times, 50):.0f} us, p95 {pct(times, 95):.0f} us, max {max(times):.0f} us; "
        f"{changed / rounds:.0f} questions given a cognate per round"
    )


def bench_search(
    questions: list[tuple[str, str]], corpus: Path, storage: Path, rounds: int
) -> None:
    from code_compass_server.engine import Engine
    from code_compass_server.records import SearchParams
    from code_compass_server.search import searcher
    from code_compass_server.settings import EngineSettings

    engine = Engine.open(storage, EngineSettings())
    try:
        name = engine.add_project(corpus)
        engine.index(embed=True, background_embed=False)
        qs = [q for ln, q in questions if ln == "pt"]
        bench_fit(qs, engine.project(name).lexical, rounds)
        variants = ((builder.build_query, []), (builder.passthrough, []))
        on: list[float] = variants[0][1]
        off: list[float] = variants[1][1]
        for rnd in range(1 + rounds):  # round 0 warms both variants' caches, not timed
            for i, q in enumerate(qs):
                params = SearchParams(q, 10, None, None, None, name, "hybrid")
                order = variants if (i + rnd) % 2 == 0 else variants[::-1]
                for fn, out in order:
                    searcher.build_query = fn  # type: ignore[attr-defined]
                    t = time.perf_counter()
                    engine.search(params)
                    if rnd:
                        out.append((time.perf_counter() - t) * 1000)
        searcher.build_query = builder.build_query  # type: ignore[attr-defined]
        diff = [a - b for a, b in zip(on, off, strict=True)]
        print(
            f"Engine.search of {len(qs)} Portuguese questions x {rounds} rounds on {corpus.name}"
            " (hybrid; caches warm, order alternated):"
        )
        print(f"  with the builder   p50 {pct(on, 50):.1f} ms, p95 {pct(on, 95):.1f} ms")
        print(f"  as written         p50 {pct(off, 50):.1f} ms, p95 {pct(off, 95):.1f} ms")
        print(
            f"  difference/query  median {statistics.median(diff):+.1f} ms, "
            f"p95 {pct(diff, 95):+.1f} ms"
        )
    finally:
        engine.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--corpus", type=Path, help="an indexed workspace to search")
    ap.add_argument("--storage", type=Path, help="its storage")
    args = ap.parse_args(argv)
    questions = load(args.questions)
    bench_build(questions, args.repeat)
    if args.corpus is not None:
        if args.storage is None:
            print("--corpus needs --storage", file=sys.stderr)
            return 2
        bench_search(questions, args.corpus, args.storage, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
