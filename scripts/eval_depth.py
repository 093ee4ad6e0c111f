#!/usr/bin/env python3
"""Depth classifier accuracy on eval/depth/dataset.jsonl, per split.

Splits: dev (tuning), test (held out), fresh (written after the rules, tuned once),
fresh2 (written last, never tuned on); "all" is every item.

Usage: .venv/bin/python scripts/eval_depth.py [--split all|dev|test|fresh] [--errors] [--json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from code_compass_server.depth.evaluation import evaluate, format_report, load_dataset

DATASET = Path(__file__).resolve().parent.parent / "eval" / "depth" / "dataset.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", type=Path, default=DATASET)
    ap.add_argument(
        "--split", choices=["all", "dev", "test", "fresh", "fresh2", "each"], default="each"
    )
    ap.add_argument("--errors", action="store_true", help="list misclassified items")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    items = load_dataset(args.dataset)
    splits = ["all", "dev", "test", "fresh", "fresh2"] if args.split == "each" else [args.split]
    reports = [evaluate((i for i in items if s == "all" or i.split == s), s) for s in splits]
    if args.json:
        print(json.dumps([r.to_json() for r in reports], indent=2))
        return
    for rep in reports:
        print(format_report(rep, show_errors=args.errors))
        print()


if __name__ == "__main__":
    main()
