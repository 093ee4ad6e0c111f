"""Validate eval/realqa/questions.jsonl against the unpacked corpora and print its counts.

    .venv/bin/python eval/realqa/check.py [--absence]

Checks: ids unique; fields and values well-formed; answerable questions have 1-3 gold spans whose
path exists in the corpus (scripts/fetch_corpora.py) and whose lines are inside the file;
unanswerable ones have no gold and a note; EN/PT twins point at each other and agree on corpus,
kind, style, split and gold. --absence re-runs every unanswerable question's recorded grep over
its corpus. Exit code 1 when anything fails.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "scripts"))

from fetch_corpora import corpus_dir, load_corpora  # noqa: E402

QUESTIONS = HERE / "questions.jsonl"
FIELDS = ("id", "corpus", "lang", "kind", "style", "question", "gold", "split", "pair", "note")
VALUES = {
    "lang": ("en", "pt"),
    "kind": ("answerable", "unanswerable"),
    "style": ("navigation", "how", "why", "what-happens", "conceptual"),
    "split": ("dev", "test"),
}
_GREP = re.compile(r"grep -riE '((?:[^']|'(?!;| over))+)'")


def load(path: Path = QUESTIONS) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def check(rows: list[dict[str, object]], absence: bool) -> list[str]:
    errors: list[str] = []
    roots = {c.name: corpus_dir(c) for c in load_corpora()}
    for name, root in roots.items():
        if not root.is_dir():
            errors.append(f"{name}: {root} missing (run scripts/fetch_corpora.py)")
    by_id: dict[str, dict[str, object]] = {}
    line_counts: dict[Path, int] = {}
    for r in rows:
        qid = str(r.get("id"))
        if qid in by_id:
            errors.append(f"{qid}: duplicate id")
        by_id[qid] = r
        missing = [f for f in FIELDS if f not in r]
        if missing:
            errors.append(f"{qid}: missing {missing}")
            continue
        for key, allowed in VALUES.items():
            if r[key] not in allowed:
                errors.append(f"{qid}: {key}={r[key]!r} not in {allowed}")
        if r["corpus"] not in roots:
            errors.append(f"{qid}: unknown corpus {r['corpus']!r}")
            continue
        if not str(r["question"]).strip():
            errors.append(f"{qid}: empty question")
        gold = r["gold"]
        assert isinstance(gold, list)
        if r["kind"] == "answerable":
            if not 1 <= len(gold) <= 3:
                errors.append(f"{qid}: {len(gold)} gold spans (want 1-3)")
        else:
            if gold:
                errors.append(f"{qid}: unanswerable with gold")
            if not str(r["note"]).strip():
                errors.append(f"{qid}: unanswerable without a note")
        root = roots[str(r["corpus"])]
        for g in gold:
            path = root / g["path"]
            if not path.is_file():
                errors.append(f"{qid}: {g['path']} does not exist")
                continue
            if path not in line_counts:
                line_counts[path] = len(path.read_text(encoding="utf-8").splitlines())
            a, b = g["startLine"], g["endLine"]
            if not (isinstance(a, int) and isinstance(b, int) and 1 <= a <= b <= line_counts[path]):
                errors.append(f"{qid}: {g['path']}:{a}-{b} outside 1-{line_counts[path]}")
    for qid, r in by_id.items():
        twin_id = r.get("pair")
        if twin_id is None:
            continue
        twin = by_id.get(str(twin_id))
        if twin is None:
            errors.append(f"{qid}: twin {twin_id} missing")
            continue
        if twin.get("pair") != qid:
            errors.append(f"{qid}: twin {twin_id} does not point back")
        if twin.get("lang") == r.get("lang"):
            errors.append(f"{qid}: twin {twin_id} in the same language")
        for key in ("corpus", "kind", "style", "split", "gold"):
            if twin.get(key) != r.get(key):
                errors.append(f"{qid}: twin {twin_id} differs in {key}")
    if absence:
        errors.extend(recheck_absence(rows, roots))
    return errors


def recheck_absence(rows: list[dict[str, object]], roots: dict[str, Path]) -> list[str]:
    errors: list[str] = []
    texts: dict[str, list[tuple[Path, str]]] = {}
    for r in rows:
        if r["kind"] != "unanswerable" or (r["lang"] != "en" and r.get("pair")):
            continue
        corpus = str(r["corpus"])
        if corpus not in texts:
            texts[corpus] = []
            for p in sorted(roots[corpus].rglob("*")):
                if p.is_file() and p.stat().st_size < 2_000_000:
                    with contextlib.suppress(UnicodeDecodeError, OSError):
                        texts[corpus].append((p, p.read_text(encoding="utf-8")))
        patterns = _GREP.findall(str(r["note"]))
        if not patterns:
            errors.append(f"{r['id']}: no grep recorded in the note")
        for pat in patterns:
            rx = re.compile(pat, re.I)
            hit = next((p for p, text in texts[corpus] if rx.search(text)), None)
            if hit is not None:
                errors.append(f"{r['id']}: {pat!r} matches {hit.relative_to(roots[corpus])}")
    return errors


def counts(rows: list[dict[str, object]]) -> None:
    def table(title: str, keys: tuple[str, ...]) -> None:
        c = Counter(tuple(str(r[k]) for k in keys) for r in rows)
        print(f"\n{title}")
        for key in sorted(c):
            print(f"  {' / '.join(key):40s} {c[key]:4d}")

    table("corpus x lang x kind x split", ("corpus", "lang", "kind", "split"))
    table("corpus", ("corpus",))
    table("kind x lang", ("kind", "lang"))
    table("split x kind", ("split", "kind"))
    table("style", ("style",))
    n = len(rows)
    kinds = Counter(str(r["kind"]) for r in rows)
    print(f"\n{n} questions; unanswerable {kinds['unanswerable'] / n:.1%}")
    for kind in ("answerable", "unanswerable"):
        of_kind = [r for r in rows if r["kind"] == kind]
        pt = sum(1 for r in of_kind if r["lang"] == "pt")
        print(f"  {kind}: {len(of_kind)}, Portuguese {pt / max(1, len(of_kind)):.1%}")
    twins = sum(1 for r in rows if r["lang"] == "pt" and r.get("pair"))
    print(f"  Portuguese questions with an English twin: {twins}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--absence", action="store_true", help="re-run the recorded absence greps")
    ap.add_argument("--file", type=Path, default=QUESTIONS)
    args = ap.parse_args(argv)
    rows = load(args.file)
    errors = check(rows, args.absence)
    counts(rows)
    for e in errors:
        print(f"ERROR {e}", file=sys.stderr)
    print(f"\n{'FAILED' if errors else 'OK'}: {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
