"""Navigation queries (eval/navigation): is a named symbol's definition first, with a high score?

    .venv/bin/python scripts/eval_navigation.py [--split dev|test|both]
        [--modes lexical,semantic,hybrid] [--corpora flask,rxjs] [--lexical-only] [--misses N]
        [--out results.json]

Each corpus of eval/realqa/corpora.json is refreshed with `code-compass index --json` (a storage
of an older index format is rebuilt; the embedding cache keeps vectors) and the split's queries go
through one batch `code-compass search --queries FILE --json --top-k 10 --mode M` per corpus and
mode. Storages: bench-data/realqa/storage/<corpus>-<version> (embedded, as eval_realqa.py builds
them) for every mode; without it, or with --lexical-only, the `-lexical` storage (indexed with
--no-embed) serves the lexical mode and the other modes are skipped.

A hit is relevant when it is in a gold definition's file and its lines hold the definition's name
line (every definition of the name, with the query's qualifier, is gold: any counts). Printed per
mode, and per mode x form / kind / corpus / language: MRR@10, R@1, the median score of the best
gold hit (0 when none in the top 10) and the share of queries whose gold hit scores >= minScore.
Misses (gold not first) are listed for the dev split only: never look at test failures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from code_compass_server.constants import DEFAULT_MIN_SCORE  # noqa: E402
from eval_realqa import TOP_K, batch_search, index_summary, storage_for  # noqa: E402
from fetch_corpora import load_corpora  # noqa: E402

QUERIES = ROOT / "eval" / "navigation" / "queries.jsonl"
CORPORA = ROOT / "eval" / "realqa" / "corpora.json"
MODES = ("lexical", "semantic", "hybrid")


@dataclass
class Outcome:
    q: dict[str, object]
    mode: str
    hits: list[dict[str, object]] = field(default_factory=list)

    def _relevant(self, h: dict[str, object]) -> bool:
        gold = self.q["gold"]
        assert isinstance(gold, list)
        start, end = int(str(h["startLine"])), int(str(h["endLine"]))
        return any(h["path"] == g["path"] and start <= int(g["line"]) <= end for g in gold)

    @property
    def rank(self) -> int | None:
        return next((i for i, h in enumerate(self.hits[:TOP_K]) if self._relevant(h)), None)

    @property
    def gold_score(self) -> float:
        r = self.rank
        return 0.0 if r is None else float(str(self.hits[r]["score"]))


def summarize(outs: Sequence[Outcome]) -> dict[str, float]:
    ranks = [o.rank for o in outs]
    scores = [o.gold_score for o in outs]
    return {
        "n": len(outs),
        "mrr10": statistics.fmean(0.0 if r is None else 1 / (r + 1) for r in ranks),
        "r1": statistics.fmean(r == 0 for r in ranks),
        "gold_score_median": statistics.median(scores),
        "gold_kept": statistics.fmean(s >= DEFAULT_MIN_SCORE for s in scores),
    }


def print_groups(mode: str, dim: str, outs: Sequence[Outcome]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[Outcome]] = {}
    for o in outs:
        groups.setdefault(str(o.q[dim]), []).append(o)
    table = {k: summarize(v) for k, v in sorted(groups.items())}
    print(f"\n### {mode}: by {dim}\n")
    print(f"| {dim} | n | MRR@10 | R@1 | gold score median | gold >= {DEFAULT_MIN_SCORE} |")
    print("| --- | --- | --- | --- | --- | --- |")
    for k, s in table.items():
        print(f"| {k} | {s['n']} | {s['mrr10']:.3f} | {s['r1']:.3f} |"
              f" {s['gold_score_median']:.3f} | {s['gold_kept']:.0%} |")  # fmt: skip
    return table


def print_misses(mode: str, outs: Sequence[Outcome], limit: int) -> None:
    """Queries whose gold is not first, or first with a score below minScore."""
    misses = [o for o in outs if o.rank != 0 or o.gold_score < DEFAULT_MIN_SCORE]
    print(f"\n### {mode}: misses, or gold first below {DEFAULT_MIN_SCORE} ({len(misses)})\n")
    for o in misses[:limit]:
        gold = o.q["gold"]
        assert isinstance(gold, list)
        where = ", ".join(f"{g['path']}:{g['line']}" for g in gold[:3])
        print(f"- [{o.q['id']}] {o.q['query']!r} rank={o.rank} score={o.gold_score:.3f}"
              f" gold={where} ({o.q['kind']}, {o.q['n_defs']} defs)")  # fmt: skip
        for h in o.hits[:3]:
            print(f"    {float(str(h['score'])):.3f} {h['path']}:{h['startLine']}-{h['endLine']}"
                  f" {h.get('symbol', '')}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--split", choices=("dev", "test", "both"), default="dev")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--corpora", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--lexical-only", action="store_true", help="use the -lexical storages")
    ap.add_argument("--misses", type=int, default=200, help="misses listed per mode (dev only)")
    ap.add_argument("--no-refresh", action="store_true", help="search the storages as they are")
    ap.add_argument("--out", type=Path, help="write the results as JSON here")
    args = ap.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    wanted = {n for n in args.corpora.split(",") if n}
    corpora = [c for c in load_corpora(CORPORA) if not wanted or c.name in wanted]
    splits = {"dev", "test"} if args.split == "both" else {args.split}
    queries = [
        q
        for q in map(json.loads, QUERIES.read_text(encoding="utf-8").splitlines())
        if q["split"] in splits
    ]
    outcomes: dict[str, list[Outcome]] = {m: [] for m in modes}
    skipped: list[str] = []
    for c in corpora:
        qs = [q for q in queries if q["corpus"] == c.name]
        lexical = args.lexical_only or not storage_for(c, False).exists()
        if not args.no_refresh:
            summary = index_summary(c, lexical)
            embedded = f", {summary['embedded']}/{summary['chunks']} chunks embedded"
            print(f"{c.name}: {summary['symbols']} symbols{embedded}", file=sys.stderr)
        for mode in modes:
            if lexical and mode != "lexical":
                skipped.append(f"{c.name}/{mode}")
                continue
            hits = batch_search(c, lexical, mode, {str(q["id"]): str(q["query"]) for q in qs})
            outcomes[mode] += [Outcome(q, mode, hits.get(str(q["id"]), [])) for q in qs]
    if skipped:
        print(f"skipped (no embedded storage): {', '.join(skipped)}", file=sys.stderr)
    print(f"## eval/navigation, {args.split} split, top {TOP_K}\n")
    print(f"| mode | n | MRR@10 | R@1 | gold score median | gold >= {DEFAULT_MIN_SCORE} |")
    print("| --- | --- | --- | --- | --- | --- |")
    result: dict[str, object] = {"split": args.split, "modes": {}}
    for mode, outs in outcomes.items():
        if not outs:
            continue
        s = summarize(outs)
        print(f"| {mode} | {s['n']} | {s['mrr10']:.3f} | {s['r1']:.3f} |"
              f" {s['gold_score_median']:.3f} | {s['gold_kept']:.0%} |")  # fmt: skip
    for mode, outs in outcomes.items():
        if not outs:
            continue
        per = {dim: print_groups(mode, dim, outs) for dim in ("form", "kind", "corpus", "lang")}
        modes_out = result["modes"]
        assert isinstance(modes_out, dict)
        modes_out[mode] = {"all": summarize(outs), **per}
        if args.split == "dev":
            print_misses(mode, outs, args.misses)
    if args.out:
        result["queries"] = [
            {"id": o.q["id"], "mode": o.mode, "rank": o.rank, "gold_score": o.gold_score,
             "top": [[h["path"], h["startLine"], h["endLine"], h["score"]] for h in o.hits[:3]]}
            for outs in outcomes.values() for o in outs
        ]  # fmt: skip
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
