#!/usr/bin/env python3
"""Portuguese vs English retrieval on the realistic question set, with and without the query
builder (search/query: lexicon rewrite of non-English questions).

    .venv/bin/python scripts/eval_query_builder.py [--split dev|test|both] [--builder on|off]
        [--corpora flask,django] [--lexical django] [--questions FILE] [--out results.json]

Questions come from the dev-set worktree's eval/realqa/questions.jsonl (EN/PT twins with gold
spans; --questions to point elsewhere), corpora from its bench-data/corpora/<name>-<version>/.
Each corpus is indexed in-process into bench-data/realqa/storage/ of THIS checkout (reused when
present) and every question is searched through `Engine.search` (the path `ask` and the CLI
use), top 10, no minScore. `--builder off` replaces the query builder with a pass-through, which
is exactly the behaviour before it existed (the searcher then sees the question as written).

Relevant hit: in a gold span's file, lines overlapping it. Printed per corpus x language and
pooled: MRR@10, R@5, answerable kept (top-1 >= 0.6), unanswerable passing (top-1 >= 0.6).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DEVSET = Path("/work/wt/devset")
QUESTIONS = DEVSET / "eval" / "realqa" / "questions.jsonl"
CORPORA_JSON = DEVSET / "eval" / "realqa" / "corpora.json"
CORPORA = DEVSET / "bench-data" / "corpora"
STORAGE = ROOT / "bench-data" / "realqa" / "storage"
TOP_K = 10
MIN_SCORE = 0.6

from code_compass.engine import Engine  # noqa: E402
from code_compass.records import SearchParams  # noqa: E402
from code_compass.settings import EngineSettings  # noqa: E402


@dataclass
class Result:
    qid: str
    corpus: str
    lang: str
    answerable: bool
    ranks: list[bool] = field(default_factory=list)  # relevance of each hit, best first
    top1: float = 0.0
    pair: str = ""

    @property
    def rank(self) -> int | None:
        return next((i for i, r in enumerate(self.ranks[:TOP_K]) if r), None)


def relevant(hit: dict[str, object], gold: Sequence[dict[str, object]]) -> bool:
    return any(
        hit["path"] == g["path"]
        and int(str(hit["startLine"])) <= int(str(g["endLine"]))
        and int(str(hit["endLine"])) >= int(str(g["startLine"]))
        for g in gold
    )


def summarize(results: Sequence[Result]) -> dict[str, float | int | None]:
    ans = [r for r in results if r.answerable]
    una = [r for r in results if not r.answerable]
    ranks = [r.rank for r in ans]
    return {
        "n_answerable": len(ans),
        "n_unanswerable": len(una),
        "mrr10": float(np.mean([0.0 if k is None else 1 / (k + 1) for k in ranks]))
        if ans
        else None,
        "r5": float(np.mean([k is not None and k < 5 for k in ranks])) if ans else None,
        "kept": float(np.mean([r.top1 >= MIN_SCORE for r in ans])) if ans else None,
        "u_passing": float(np.mean([r.top1 >= MIN_SCORE for r in una])) if una else None,
    }


def fmt(v: object) -> str:
    return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def disable_builder() -> None:
    """The searcher as it was before the query builder: the question goes in as written."""
    from code_compass.search import searcher

    if hasattr(searcher, "build_query"):
        from code_compass.query.builder import passthrough

        searcher.build_query = passthrough  # type: ignore[attr-defined]


def run_corpus(
    corpus: dict[str, str], questions: list[dict[str, object]], lexical: bool
) -> list[Result]:
    folder = f"{corpus['name']}-{corpus['version']}"
    storage = STORAGE / (folder + ("-lexical" if lexical else ""))
    engine = Engine.open(storage, EngineSettings(embeddings=not lexical))
    try:
        name = engine.add_project(CORPORA / folder)
        t0 = time.perf_counter()
        engine.index(embed=not lexical, background_embed=False)
        print(f"{folder}: indexed in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        out: list[Result] = []
        mode = "lexical" if lexical else "hybrid"
        for q in questions:
            params = SearchParams(str(q["question"]), TOP_K, None, None, None, name, mode)
            hits = [h.to_json() for h in engine.search(params)]
            gold = q["gold"]
            assert isinstance(gold, list)
            r = Result(str(q["id"]), corpus["name"], str(q["lang"]), q["kind"] == "answerable")
            r.pair = str(q.get("pair") or "")
            r.ranks = [relevant(h, gold) for h in hits]
            r.top1 = float(hits[0]["score"]) if hits else 0.0
            out.append(r)
        return out
    finally:
        engine.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--split", choices=("dev", "test", "both"), default="dev")
    ap.add_argument("--builder", choices=("on", "off"), default="on")
    ap.add_argument("--corpora", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--lexical", default="", help="corpora searched without embeddings")
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.builder == "off":
        disable_builder()
    corpora = json.loads(CORPORA_JSON.read_text(encoding="utf-8"))["corpora"]
    wanted = {n for n in args.corpora.split(",") if n}
    corpora = [c for c in corpora if not wanted or c["name"] in wanted]
    lexical = set(args.lexical.split(","))
    splits = {"dev", "test"} if args.split == "both" else {args.split}
    questions = [
        q
        for q in map(json.loads, args.questions.read_text(encoding="utf-8").splitlines())
        if q["split"] in splits
    ]
    results: list[Result] = []
    for c in corpora:
        qs = [q for q in questions if q["corpus"] == c["name"]]
        if qs:
            results.extend(run_corpus(c, qs, c["name"] in lexical))
    groups: dict[str, dict[str, float | int | None]] = {}
    for c in corpora:
        for lang in ("en", "pt"):
            rs = [r for r in results if r.corpus == c["name"] and r.lang == lang]
            if rs:
                groups[f"{c['name']} {lang}"] = summarize(rs)
    for lang in ("en", "pt"):
        groups[f"ALL {lang}"] = summarize([r for r in results if r.lang == lang])
    # The same questions in both languages: only EN/PT twins that are both in the run.
    ids = {r.qid for r in results}
    for lang in ("en", "pt"):
        twins = [r for r in results if r.lang == lang and r.pair in ids]
        groups[f"TWINS {lang}"] = summarize(twins)
    print(f"\n## {args.split} split, builder {args.builder}\n")
    print("| group | n A/U | MRR@10 | R@5 | kept >=0.6 | U passing |")
    print("| --- | --- | --- | --- | --- | --- |")
    for g, s in groups.items():
        print(
            f"| {g} | {s['n_answerable']}/{s['n_unanswerable']} | {fmt(s['mrr10'])} |"
            f" {fmt(s['r5'])} | {fmt(s['kept'])} | {fmt(s['u_passing'])} |"
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "split": args.split,
            "builder": args.builder,
            "groups": groups,
            "questions": [
                {"id": r.qid, "rank": r.rank, "top1": round(r.top1, 4), "ranks": r.ranks}
                for r in results
            ],
        }
        args.out.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
