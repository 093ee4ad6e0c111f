#!/usr/bin/env python
"""Run eval/answers/questions.jsonl through the real engine and the fake Messages API.

Prints, per question, whether it was answered or refused (no LLM call), the state, and
whether all citations were valid; then a summary table:
    answerable / not answerable  x  answered / refused, citations all valid, flagged.

"Refused" = the pipeline did not call the LLM (no evidence above minScore, or a blocking
rule such as a named symbol that exists nowhere). "Citations valid" = nothing removed, no
invented path, at least one citation. Needs `code_compass.engine.Engine`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the fake server lives with the tests

from code_compass.answer import AskRequest, LlmConfig, ask  # noqa: E402
from code_compass.engine import Engine  # noqa: E402
from code_compass.index.scan import ScanSettings  # noqa: E402
from code_compass.settings import EngineSettings  # noqa: E402
from fakes.fake_anthropic import FakeAnthropic, Reply  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--workspace", type=Path, default=ROOT)
    ap.add_argument("--questions", type=Path, default=ROOT / "eval" / "answers" / "questions.jsonl")
    ap.add_argument("--min-score", type=float, default=None, help="default: the seed's 0.6")
    ap.add_argument("--embed", action="store_true", help="compute embeddings (slow) for hybrid")
    ap.add_argument("--json", action="store_true", help="one JSON line per question")
    args = ap.parse_args(argv)

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


if __name__ == "__main__":
    sys.exit(main())
