"""Graded labels for the hits that are not gold: which of them also answer.

    .venv/bin/python eval/realqa/grade.py dump [--corpora flask,click] [--top 10]
    .venv/bin/python eval/realqa/grade.py dump --split test --top 3     # label completion
    .venv/bin/python eval/realqa/grade.py record [--split test] DUMP POSITIVES
    .venv/bin/python eval/realqa/grade.py check

Gold spans are what the question's author found first; a top hit of the search often answers
too (the doc section that explains the function, the caller that shows the behaviour, the other
definition of an overloaded name). Counting those as irrelevant makes every per-hit probability
fitted on gold alone pessimistic for the hits below the first. `graded.jsonl` records a reader's
verdict on such hits, one line per (question block, chunk range):

    {"block": "flask-a03", "path": "docs/config.rst", "startLine": 10, "endLine": 40,
     "answers": true}

`block` is the question id without its language suffix: the English and Portuguese twins share
their gold, so a verdict holds for both. `answers` is true when the chunk by itself answers the
question or states a necessary part of the answer (what a reviewer would accept as a citation),
false otherwise. `dump` prints, per answerable dev block, the question, its gold and the hybrid
and lexical top hits (`--top`) not gold and not yet graded, each with its first lines, for a
reader to judge; `record` turns a dump and the list of the hits the reader found to answer
(`block path:a-b` lines) into verdicts (the others false); `check` validates the files (dev
blocks only in graded.jsonl, test blocks only in graded_test.jsonl, ranges inside the files).

Test labels are completed, never tuned on: `dump --split test` prints the hybrid top hits of
every answerable test question exactly as `code-compass search` returns them, *without their
scores* (the reader judges the chunk against the question, nothing else), and `record --split
test` writes the verdicts to graded_test.jsonl, which only scripts/eval_realqa.py reads (for
its graded-label figures); scripts/fit_calibration.py refuses to run on a test verdict.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from fetch_corpora import corpus_dir, load_corpora  # noqa: E402

GRADED = HERE / "graded.jsonl"
GRADED_TEST = HERE / "graded_test.jsonl"  # label completion of the test split: never fitted on
QUESTIONS = HERE / "questions.jsonl"
SPLIT_FILE = {"dev": GRADED, "test": GRADED_TEST}


def graded_file(split: str) -> Path:
    return SPLIT_FILE[split]


def block_of(qid: str) -> str:
    return qid.rsplit("-", 1)[0]


def load_graded(path: Path = GRADED) -> dict[str, list[dict[str, object]]]:
    """Verdicts per question block."""
    out: dict[str, list[dict[str, object]]] = {}
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out.setdefault(str(row["block"]), []).append(row)
    return out


def _overlaps(hit: Mapping[str, object], span: Mapping[str, object]) -> bool:
    return (
        hit["path"] == span["path"]
        and int(str(hit["startLine"])) <= int(str(span["endLine"]))
        and int(str(hit["endLine"])) >= int(str(span["startLine"]))
    )


def graded_answers(hit: Mapping[str, object], verdicts: Iterable[Mapping[str, object]]) -> bool:
    """A hit answers when it is the very chunk judged (same path, same range) to answer."""
    return any(
        v["answers"]
        and v["path"] == hit["path"]
        and v["startLine"] == hit["startLine"]
        and v["endLine"] == hit["endLine"]
        for v in verdicts
    )


def _judged(hit: Mapping[str, object], verdicts: Iterable[Mapping[str, object]]) -> bool:
    return any(
        v["path"] == hit["path"]
        and v["startLine"] == hit["startLine"]
        and v["endLine"] == hit["endLine"]
        for v in verdicts
    )


def _excerpt(root: Path, hit: Mapping[str, object], lines: int) -> str:
    path = root / str(hit["path"])
    try:
        text = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return "    (unreadable)"
    a, b = int(str(hit["startLine"])), int(str(hit["endLine"]))
    body = [t.rstrip() for t in text[a - 1 : b] if t.strip()][:lines]
    return "\n".join("    | " + t[:150] for t in body)


def dump_test(corpora: set[str] | None, top: int, lines: int) -> None:
    """The hybrid top `top` of every answerable test block (both languages), as the command
    line search returns them, not gold and not judged yet, without scores."""
    from eval_realqa import search

    questions = [q for q in map(json.loads, QUESTIONS.read_text().splitlines())
                 if q["split"] == "test" and q["kind"] == "answerable"]  # fmt: skip
    graded = load_graded(GRADED_TEST)
    for c in load_corpora():
        if corpora is not None and c.name not in corpora:
            continue
        qs = [q for q in questions if q["corpus"] == c.name]
        if not qs:
            continue
        hits = search(c, False, qs)
        blocks: dict[str, list[dict[str, object]]] = {}
        for q in qs:
            blocks.setdefault(block_of(q["id"]), []).append(q)
        for block, rows in blocks.items():
            verdicts = graded.get(block, [])
            seen: dict[tuple[str, int, int], None] = {}
            for q in rows:
                for h in hits.get(q["id"], [])[:top]:
                    if not _gold(h, rows[0]["gold"]) and not _judged(h, verdicts):
                        seen[(h["path"], h["startLine"], h["endLine"])] = None
            if not seen:
                continue
            _print_block(block, rows, seen, corpus_dir(c), lines)


def _gold(hit: Mapping[str, object], gold: Iterable[Mapping[str, object]]) -> bool:
    return any(_overlaps(hit, g) for g in gold)


def _print_block(
    block: str,
    rows: list[dict[str, object]],
    seen: Iterable[tuple[str, int, int]],
    root: Path,
    lines: int,
) -> None:
    print(f"=== {block}")
    for q in rows:
        print(f"Q[{q['lang']}] {q['question']}")
    gold = rows[0]["gold"]
    assert isinstance(gold, list)
    for g in gold:
        print(f"  GOLD {g['path']}:{g['startLine']}-{g['endLine']}")
    for path, a, b in seen:
        hit = {"path": path, "startLine": a, "endLine": b}
        print(f"  HIT {path}:{a}-{b}")
        print(_excerpt(root, hit, lines))


def dump(corpora: set[str] | None, top: int, lines: int) -> None:
    from fit_calibration import collect

    questions = {q["id"]: q for q in map(json.loads, QUESTIONS.read_text().splitlines())}
    graded = load_graded()
    roots = {c.name: corpus_dir(c) for c in load_corpora()}
    pools = collect("dev", corpora)
    blocks: dict[str, list[dict[str, object]]] = {}
    for p in pools:
        if p["kind"] == "answerable":
            blocks.setdefault(block_of(p["id"]), []).append(p)
    for block, rows in blocks.items():
        q0 = questions[rows[0]["id"]]
        verdicts = graded.get(block, [])
        seen: dict[tuple[str, int, int], None] = {}
        for p in rows:
            for model in ("hybrid", "lexical"):
                for h in p[model]["hits"][:top]:
                    if not h["relevant"] and not _judged(h, verdicts):
                        seen[(h["path"], h["startLine"], h["endLine"])] = None
        if not seen:
            continue
        print(f"=== {block}")
        for p in rows:
            print(f"Q[{p['lang']}] {questions[p['id']]['question']}")
        for g in q0["gold"]:
            print(f"  GOLD {g['path']}:{g['startLine']}-{g['endLine']}")
        for path, a, b in seen:
            hit = {"path": path, "startLine": a, "endLine": b}
            print(f"  HIT {path}:{a}-{b}")
            print(_excerpt(roots[str(q0["corpus"])], hit, lines))


def record(dump_file: Path, positives_file: Path, split: str = "dev") -> int:
    """Append a verdict for every hit of a `dump` output: true for the `block path:a-b` lines
    of `positives_file` (the hits a reader found to answer), false for the rest."""
    positives = set()
    for line in positives_file.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            block, loc = line.split()
            positives.add((block, loc))
    rows: list[dict[str, object]] = []
    block = ""
    for line in dump_file.read_text(encoding="utf-8").splitlines():
        if line.startswith("=== "):
            block = line[4:].strip()
        elif line.startswith("  HIT "):
            loc = line[6:].strip()
            path, lines = loc.rsplit(":", 1)
            a, b = lines.split("-")
            rows.append({"block": block, "path": path, "startLine": int(a), "endLine": int(b),
                         "answers": (block, loc) in positives})  # fmt: skip
    unknown = positives - {(str(r["block"]), f"{r['path']}:{r['startLine']}-{r['endLine']}")
                           for r in rows}  # fmt: skip
    if unknown:
        raise SystemExit(f"positives not in the dump: {sorted(unknown)}")
    with graded_file(split).open("a", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return len(rows)


def check() -> list[str]:
    questions = {q["id"]: q for q in map(json.loads, QUESTIONS.read_text().splitlines())}
    blocks = {block_of(qid): q for qid, q in questions.items()}
    roots = {c.name: corpus_dir(c) for c in load_corpora()}
    errors: list[str] = []
    for split, file in SPLIT_FILE.items():
        errors += _check_file(file, split, blocks, roots)
    return errors


def _check_file(
    file: Path, split: str, blocks: Mapping[str, dict[str, object]], roots: Mapping[str, Path]
) -> list[str]:
    errors: list[str] = []
    for block, verdicts in load_graded(file).items():
        q = blocks.get(block)
        if q is None:
            errors.append(f"{file.name} {block}: no such question block")
            continue
        if q["split"] != split or q["kind"] != "answerable":
            errors.append(
                f"{file.name} {block}: {q['split']}/{q['kind']} ({split} answerable only)"
            )
        for v in verdicts:
            if not isinstance(v.get("answers"), bool):
                errors.append(f"{block}: {v} has no boolean `answers`")
            path = roots[str(q["corpus"])] / str(v["path"])
            if not path.is_file():
                errors.append(f"{block}: {v['path']} does not exist")
            elif int(str(v["endLine"])) > len(path.read_text(encoding="utf-8").splitlines()):
                errors.append(f"{block}: {v['path']}:{v['endLine']} past the end")
    return errors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--corpora", default="")
    d.add_argument("--top", type=int, default=10)
    d.add_argument("--lines", type=int, default=6)
    d.add_argument("--split", choices=("dev", "test"), default="dev")
    r = sub.add_parser("record")
    r.add_argument("--split", choices=("dev", "test"), default="dev")
    r.add_argument("dump", type=Path)
    r.add_argument("positives", type=Path)
    sub.add_parser("check")
    args = ap.parse_args(argv)
    if args.cmd == "record":
        n = record(args.dump, args.positives, args.split)
        print(f"{n} verdicts recorded in {graded_file(args.split).name}")
        return 0
    if args.cmd == "dump":
        wanted = {n for n in args.corpora.split(",") if n} or None
        (dump_test if args.split == "test" else dump)(wanted, args.top, args.lines)
        return 0
    errors = check()
    for e in errors:
        print(e)
    for split, file in SPLIT_FILE.items():
        got = load_graded(file)
        print(f"{split}: {sum(len(v) for v in got.values())} verdicts, {len(got)} blocks")
    print(f"{len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
