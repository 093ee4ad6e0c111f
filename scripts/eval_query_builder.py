#!/usr/bin/env python3
"""Portuguese vs English retrieval on the realistic question set (eval/realqa), with and without
the query builder (code_compass_server/query: lexicon rewrite of non-English questions).

    .venv/bin/python scripts/eval_query_builder.py [--split dev|test|both] [--builder on|off]
        [--cognates on|off] [--holdout] [--corpora flask,django] [--lexical django]
        [--out results.json]

Corpora and storages are eval_realqa's (scripts/fetch_corpora.py, bench-data/realqa/storage/;
indexed here when missing). Every question is searched in process through `Engine.search` (the
path `ask` and the CLI use), top 10, no minScore. `--builder off` replaces the query builder
with a pass-through: the searcher sees the question as written, as before the builder existed;
`--cognates off` keeps the lexicon but not the per-workspace cognates (query/cognates.py).
`--holdout` is a generalisation check for a split the lexicon was tuned on: the lexicon entries
(verbs, nouns, adjectives; not the function words) of every word of the run's Portuguese questions
are removed, as if the lexicon had never seen them, so what still renders them is the generic
path (cognates, the words' own spelling).

Relevance and every figure are eval_realqa's (a hit overlapping a gold span; MRR@10, R@5,
answerable kept and unanswerable passing at minScore 0.6), per corpus x language, pooled, and
over the EN/PT twins that are both in the run (the same questions in both languages).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from code_compass_server.validation import validate_search  # noqa: E402
from eval_realqa import TOP_K, Hit, Result, fmt, relevant, summarize  # noqa: E402
from fetch_corpora import Corpus, load_corpora  # noqa: E402
from realqa_corpus import load_questions, open_corpus  # noqa: E402

FIGURES = ("n_answerable", "n_unanswerable", "mrr10", "r5", "kept", "unanswerable_passing")


def disable_builder() -> None:
    """The searcher as it was before the query builder: the question goes in as written."""
    from code_compass_server.query.builder import passthrough
    from code_compass_server.search import searcher

    searcher.build_query = passthrough  # type: ignore[attr-defined]


def disable_cognates() -> None:
    """The lexicon rendering only: words it lacks stay as asked in every workspace."""
    from code_compass_server.search import searcher

    searcher.fit_to_index = lambda query, _index: query  # type: ignore[attr-defined]


def hold_out(questions: list[dict[str, object]]) -> int:
    """Remove the content-word entries the Portuguese questions use (see the module doc)."""
    from code_compass_server.query import builder, language, lexicon

    lex = lexicon.portuguese_lexicon()
    used: set[tuple[str, ...]] = set()
    for q in questions:
        if q["lang"] == "pt":
            for word in re.findall(r"\w+", str(q["question"])):
                entry = lex.lookup(lexicon.fold(word))
                if entry is not None and entry.english:
                    used.add(entry.words)
    text = (
        resources.files("code_compass_server.query")
        .joinpath(lexicon.LEXICON_FILE)
        .read_text("utf-8")
    )
    content = text[text.index("# --- verbs") :]  # the function words come before
    held = {e.words for e in lexicon.parse_lexicon(content)} & used
    parse = lexicon.parse_lexicon
    lexicon.parse_lexicon = lambda t: [e for e in parse(t) if e.words not in held]  # type: ignore[assignment]
    for cached in (lexicon.portuguese_lexicon, builder.build_query, language._english_words):
        cached.cache_clear()
    return len(held)


def run_corpus(corpus: Corpus, questions: list[dict[str, object]], lexical: bool) -> list[Result]:
    with open_corpus(corpus, lexical=lexical) as (engine, name):
        mode = "lexical" if lexical else "hybrid"
        out: list[Result] = []
        for q in questions:
            params = validate_search(str(q["question"]), TOP_K, project=name, mode=mode)
            r = Result(str(q["id"]), corpus.name, str(q["lang"]), str(q["kind"]),
                       str(q["style"]), str(q["split"]))  # fmt: skip
            gold = q["gold"]
            assert isinstance(gold, list)
            for h in engine.search(params):
                j = h.to_json()
                r.hits.append(Hit(h.path, h.start_line, h.end_line, h.score,
                                  relevant(j, gold), h.relevance))  # fmt: skip
            out.append(r)
        return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--split", choices=("dev", "test", "both"), default="dev")
    ap.add_argument("--builder", choices=("on", "off"), default="on")
    ap.add_argument("--cognates", choices=("on", "off"), default="on")
    ap.add_argument("--holdout", action="store_true", help="see the module doc")
    ap.add_argument("--corpora", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--lexical", default="", help="corpora searched without embeddings")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.builder == "off":
        disable_builder()
    if args.cognates == "off":
        disable_cognates()
    wanted = {n for n in args.corpora.split(",") if n}
    corpora = [c for c in load_corpora() if not wanted or c.name in wanted]
    lexical = set(args.lexical.split(","))
    questions = load_questions(args.split)
    if args.holdout:
        print(f"held out {hold_out(questions)} lexicon entries", file=sys.stderr)
    pair = {str(q["id"]): str(q.get("pair") or "") for q in questions}
    results: list[Result] = []
    for c in corpora:
        qs = [q for q in questions if q["corpus"] == c.name]
        if qs:
            results.extend(run_corpus(c, qs, c.name in lexical))
    groups: dict[str, dict[str, object]] = {}
    for c in corpora:
        for lang in ("en", "pt"):
            rs = [r for r in results if r.corpus == c.name and r.lang == lang]
            if rs:
                groups[f"{c.name} {lang}"] = summarize(rs)
    for lang in ("en", "pt"):
        groups[f"ALL {lang}"] = summarize([r for r in results if r.lang == lang])
    ids = {r.qid for r in results}
    for lang in ("en", "pt"):
        groups[f"TWINS {lang}"] = summarize(
            [r for r in results if r.lang == lang and pair[r.qid] in ids]
        )
    print(f"\n## {args.split} split, builder {args.builder}, cognates {args.cognates}\n")
    print("| group | n A/U | MRR@10 | R@5 | kept >=0.6 | U passing |")
    print("| --- | --- | --- | --- | --- | --- |")
    for g, s in groups.items():
        print(
            f"| {g} | {s['n_answerable']}/{s['n_unanswerable']} | {fmt(s['mrr10'])} |"
            f" {fmt(s['r5'])} | {fmt(s['kept'], True)} | {fmt(s['unanswerable_passing'], True)} |"
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "split": args.split,
            "builder": args.builder,
            "groups": {g: {k: s[k] for k in FIGURES} for g, s in groups.items()},
            "questions": [{"id": r.qid, "rank": r.rank, "top1": round(r.top1, 4)} for r in results],
        }
        args.out.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
