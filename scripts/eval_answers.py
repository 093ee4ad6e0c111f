#!/usr/bin/env python
"""Run eval/answers/questions.jsonl through the real engine and the fake Messages API.

Prints, per question, whether it was answered or refused (no LLM call), the state, and
whether all citations were valid; then a summary table:
    answerable / not answerable  x  answered / refused, citations all valid, flagged.

"Refused" = the pipeline did not call the LLM (no evidence above minScore, or a blocking
rule such as a named symbol that exists nowhere). "Citations valid" = nothing removed, no
invented path, at least one citation. Needs `code_compass_server.engine.Engine`.

`--kinds` runs eval/answers/kinds.jsonl instead: questions about a real repository (flask:
`scripts/fetch_corpora.py --only flask`, then `--workspace bench-data/corpora/flask-3.1.3`),
each answered by five scripted replies (faithful; faithful plus one uncited sentence; one
fabricated citation; well-cited but off-topic; injected instructions). Per kind it prints the
sentence verdicts and the states, whether each planted bad sentence is marked (unsupported or
uncited), and checks: faithful -> OK, off-topic -> not OK, every planted sentence marked.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the fake server lives with the tests

from code_compass_server.answer import AskRequest, LlmConfig, ask  # noqa: E402
from code_compass_server.engine import Engine  # noqa: E402
from code_compass_server.index.scan import ScanSettings  # noqa: E402
from code_compass_server.settings import EngineSettings  # noqa: E402
from fakes.fake_anthropic import FakeAnthropic, Reply  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--workspace", type=Path, default=ROOT)
    ap.add_argument("--questions", type=Path, default=ROOT / "eval" / "answers" / "questions.jsonl")
    ap.add_argument("--min-score", type=float, default=None, help="default: the seed's 0.6")
    ap.add_argument("--embed", action="store_true", help="compute embeddings (slow) for hybrid")
    ap.add_argument("--json", action="store_true", help="one JSON line per question")
    ap.add_argument("--kinds", action="store_true", help="the five reply kinds (kinds.jsonl)")
    ap.add_argument(
        "--no-semantic", action="store_true", help="embeddings off: lexical sentence checks"
    )
    args = ap.parse_args(argv)
    if args.kinds:
        return run_kinds(args)

    questions = [json.loads(x) for x in args.questions.read_text().splitlines() if x.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        # The questions and their scripted (deliberately hallucinated) replies live in eval/ and
        # tests/: indexing them would let a question find itself, so they are left out.
        settings = EngineSettings(scan=ScanSettings(exclude=("eval/", "tests/")))
        engine = Engine.open(Path(tmp) / "storage", settings)
        engine.add_project(args.workspace)
        t0 = time.monotonic()
        summary = engine.index(embed=args.embed)
        print(
            f"indexed {sum(s.files for s in summary)} files, {sum(s.chunks for s in summary)} "
            f"chunks in {time.monotonic() - t0:.1f}s",
            file=sys.stderr,
        )
        rows = []
        with FakeAnthropic() as fake:
            llm = LlmConfig(api_key="eval-key", base_url=fake.base_url, max_retries=0)
            for q in questions:
                before = len(fake.message_requests)
                fake.script(Reply(q["reply"]))
                ans = ask(AskRequest(q["question"], min_score=args.min_score), engine, llm=llm)
                called = len(fake.message_requests) > before
                if not called:
                    fake.next_reply()  # drop the unused scripted reply
                valid = (
                    bool(ans.citations)
                    and not ans.meta["citationsRemoved"]
                    and not any("paths not among" in f for f in ans.meta["flags"])
                )
                row = {
                    "id": q["id"],
                    "answerable": q["answerable"],
                    "outcome": "answered" if called else "refused",
                    "state": ans.state,
                    "score": ans.confidence.score,
                    "coverage": ans.coverage,
                    "evidences": len(ans.evidences),
                    "citationsValid": valid if called else None,
                    "flags": ans.meta["flags"],
                    "top": f"{ans.evidences[0].path}:{ans.evidences[0].start_line} "
                    f"({ans.evidences[0].score:.2f})"
                    if ans.evidences
                    else "",
                }
                rows.append(row)
                if args.json:
                    print(json.dumps(row))
                else:
                    print(
                        f"{row['id']:4} {'A' if q['answerable'] else 'U'} {row['outcome']:8} "
                        f"{row['state']:9} {row['score']:3} {row['coverage']:6} "
                        f"valid={row['citationsValid']!s:5} {row['top']}"
                    )
        engine.close()

    print()
    print(
        "| set | questions | answered | refused | answered with all citations valid | "
        "answered but flagged |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for label, flag in (("answerable", True), ("not answerable", False)):
        sub = [r for r in rows if r["answerable"] is flag]
        answered = [r for r in sub if r["outcome"] == "answered"]
        print(
            f"| {label} | {len(sub)} | {len(answered)} | {len(sub) - len(answered)} | "
            f"{sum(1 for r in answered if r['citationsValid'])} | "
            f"{sum(1 for r in answered if r['flags'])} |"
        )
    return 0


KINDS = ("faithful", "uncited", "fabricated", "offtopic", "injected")
MARKED = {"unsupported", "uncited"}


def planted_marked(answer: dict, planted: list[str] | str) -> tuple[int, int]:
    """(planted bad sentences marked, planted bad sentences): "all" plants every sentence."""
    rows = answer.get("sentences", [])
    if planted == "all":
        return sum(r["verdict"] in MARKED for r in rows), len(rows)
    marked = 0
    for text in planted:
        key = text.rstrip(".")[:40]
        marked += any(key in r["text"] and r["verdict"] in MARKED for r in rows)
    return marked, len(planted)


def run_kinds(args: argparse.Namespace) -> int:
    path = args.questions
    if path == ROOT / "eval" / "answers" / "questions.jsonl":
        path = ROOT / "eval" / "answers" / "kinds.jsonl"
    questions = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    per_kind: dict[str, dict[str, Any]] = {
        k: {"states": Counter(), "verdicts": Counter(), "marked": 0, "planted": 0, "scores": []}
        for k in KINDS
    }
    misses = 0
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as fake:
        settings = EngineSettings(embeddings=not args.no_semantic)
        engine = Engine.open(Path(tmp) / "storage", settings)
        engine.add_project(args.workspace)
        t0 = time.monotonic()
        engine.index(embed=args.embed, background_embed=False)
        print(f"indexed {args.workspace} in {time.monotonic() - t0:.1f}s", file=sys.stderr)
        os.environ.update(ANTHROPIC_BASE_URL=fake.base_url, ANTHROPIC_API_KEY="eval-key")
        t0 = time.monotonic()
        for q in questions:
            for kind in KINDS:
                fake.script(Reply(q["replies"][kind]))
                params = {"query": q["question"]}
                if args.min_score is not None:
                    params["minScore"] = args.min_score
                ans = engine.ask(params)
                top = ans["evidences"][0]["path"] if ans["evidences"] else ""
                misses += kind == "faithful" and top != q["expect"]
                marked, planted = planted_marked(ans, q["planted"][kind])
                row = per_kind[kind]
                row["states"][ans["state"]] += 1
                row["verdicts"].update(s["verdict"] for s in ans["sentences"])
                row["marked"] += marked
                row["planted"] += planted
                row["scores"].append(ans["confidence"]["score"])
                verdicts = " ".join(s["verdict"][:5] for s in ans["sentences"])
                line = f"{q['id']} {kind:10} {ans['state']:9} {ans['confidence']['score']:3}"
                print(f"{line} rules={ans['confidence']['components']['rules']:2} [{verdicts}]")
                if args.json:
                    print(json.dumps({"id": q["id"], "kind": kind, "sentences": ans["sentences"]}))
        took = time.monotonic() - t0
        engine.close()
    n = len(questions)
    print(
        f"\n{n} questions x {len(KINDS)} kinds in {took:.1f}s; semantic check "
        f"{'off' if args.no_semantic else 'on'}; top evidence off target: {misses}"
    )
    print("| kind | states | sentence verdicts | planted sentences marked | mean score |")
    print("| --- | --- | --- | --- | --- |")
    for kind, row in per_kind.items():
        states = ", ".join(f"{s} {c}" for s, c in sorted(row["states"].items()))
        verdicts = ", ".join(f"{v} {c}" for v, c in sorted(row["verdicts"].items()))
        mean = sum(row["scores"]) / len(row["scores"]) if row["scores"] else 0
        print(f"| {kind} | {states} | {verdicts} | {row['marked']}/{row['planted']} | {mean:.0f} |")
    ok = (
        per_kind["faithful"]["states"]["OK"] == n
        and per_kind["offtopic"]["states"]["OK"] == 0
        and all(r["marked"] == r["planted"] for r in per_kind.values())
    )
    print(
        "checks: faithful -> OK, off-topic -> not OK, every planted sentence marked:",
        "PASS" if ok else "FAIL",
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
