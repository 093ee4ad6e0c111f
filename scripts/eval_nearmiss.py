"""Near misses (eval/nearmiss): questions about an option, parameter, method or setting that does
not exist next to one that does, asked offline through `code-compass ask --json`.

    .venv/bin/python scripts/eval_nearmiss.py [--corpora httpx,rxjs] [--lexical] [--out FILE]
    .venv/bin/python scripts/eval_nearmiss.py --questions SET.jsonl --corpus NAME=DIR ...
    .venv/bin/python scripts/eval_nearmiss.py --answerable [--lexical] [--questions SET --corpus ..]

A held-out set in eval_realqa's JSONL format (`--questions`) contributes its rows marked
`near_miss` (`absent`: the name that does not exist; `neighbour`: the real one's spans), on
corpora given by path (`--corpus`).

Each block of eval/nearmiss/src.tsv names a corpus of eval/realqa (scripts/fetch_corpora.py), the
member the question names and the files of its real neighbour (the owner's definition), asked in
English and in Portuguese. Before anything is asked, the member is looked for as a whole word in
every file of the corpus: a block whose name exists is reported as invalid and not counted.

A question is *answered honestly* when the answer's `absent` lists the name, its `nearest` is in
one of the gold files, the answer text says so (its sentence names the member) and the state is
not OK. The index is eval_realqa's storage of the corpus (hybrid; `--lexical`: the lexical-only
storage), built first if missing. No API key is used (the variable is removed for the child).

`--answerable` measures the other side: the *answerable* questions of the set (eval/realqa's
by default, or `--questions`), asked in process (one engine per corpus, offline), counting the
answers whose `absent` lists anything: an answerable question turned into "does not exist" is
a false absence.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from eval_realqa import (  # noqa: E402
    CLI,
    QUESTIONS,
    index,
    local_corpus,
    storage_for,
    tree_of,
)
from fetch_corpora import fetch, load_corpora  # noqa: E402

SRC = ROOT / "eval" / "nearmiss" / "src.tsv"
TEXT_SUFFIXES = (".py", ".pyi", ".ts", ".js", ".go", ".md", ".rst", ".txt", ".toml", ".cfg")


@dataclass(frozen=True, slots=True)
class Question:
    qid: str
    corpus: str
    lang: str
    name: str
    gold: tuple[str, ...]
    text: str


def load_questions(path: Path = SRC) -> list[Question]:
    out: list[Question] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        block, corpus, name, gold, en, pt = line.split("\t")
        paths = tuple(p.strip() for p in gold.split(","))
        out.append(Question(f"{block}-en", corpus, "en", name, paths, en))
        out.append(Question(f"{block}-pt", corpus, "pt", name, paths, pt))
    return out


def load_held_out(path: Path) -> list[Question]:
    """The `near_miss` rows of a realqa-format JSONL set."""
    out: list[Question] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line) if line.strip() else {}
        if row.get("near_miss"):
            gold = tuple(dict.fromkeys(n["path"] for n in row["neighbour"]))
            name = str(row["absent"])
            out.append(Question(row["id"], row["corpus"], row["lang"], name, gold, row["question"]))
    return out


def name_exists(folder: Path, name: str) -> list[str]:
    """Files of the corpus holding the name as a whole word (the block is then invalid)."""
    word = re.compile(rf"(?<![\w-]){re.escape(name.lstrip('-'))}(?!\w)")
    hits: list[str] = []
    for p in folder.rglob("*"):
        readable = p.suffix in TEXT_SUFFIXES and p.is_file()
        if readable and word.search(p.read_text(encoding="utf-8", errors="replace")):
            hits.append(str(p.relative_to(folder)))
    return hits


def ask(q: Question, workspace: Path, storage: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    cmd = [*CLI, "ask", q.text, "--workspace", str(workspace), "--storage", str(storage), "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        return {"error": out.stderr.strip()[-400:]}
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def judge(q: Question, answer: dict[str, Any]) -> dict[str, Any]:
    absent = answer.get("absent") or []
    entry = next((a for a in absent if a.get("name", "").lstrip("-") == q.name.lstrip("-")), None)
    nearest = (entry or {}).get("nearest") or {}
    # A flag is said as typed: the writer's `dry-run` is the answer's `--dry-run`.
    text = answer.get("answer") or ""
    said = any(f"`{dashes}{q.name.lstrip('-')}`" in text for dashes in ("", "-", "--"))
    cited = nearest.get("path") in q.gold
    ok = bool(entry) and cited and said and answer.get("state") != "OK"
    return {
        "id": q.qid,
        "ok": ok,
        "listed": bool(entry),
        "cited": cited,
        "said": said,
        "state": answer.get("state"),
        "nearest": nearest or None,
        "error": answer.get("error"),
    }


def false_absent(
    rows: list[dict[str, Any]], workspace: Path, storage: Path
) -> list[dict[str, Any]]:
    """Each answerable row asked in process; `absent` names what the answer said is missing."""
    os.environ.pop("ANTHROPIC_API_KEY", None)
    from code_compass_server.answer.request import AskRequest
    from code_compass_server.engine import Engine
    from code_compass_server.settings import EngineSettings

    engine = Engine.open(storage, EngineSettings(), queries_only=True)
    out: list[dict[str, Any]] = []
    try:
        engine.add_project(workspace)
        for row in rows:
            answer = engine.ask(AskRequest.from_json({"query": row["question"]}))
            absent = [a["name"] for a in answer.get("absent") or []]
            out.append({"id": row["id"], "lang": row["lang"], "absent": absent})
    finally:
        engine.close()
    return out


def run_answerable(args: argparse.Namespace) -> int:
    path = args.questions or QUESTIONS
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    rows = [r for r in rows if r.get("kind") == "answerable"]
    known = [local_corpus(spec) for spec in args.corpus] if args.questions else load_corpora()
    wanted = {c for c in args.corpora.split(",") if c}
    verdicts: list[dict[str, Any]] = []
    for c in known:
        mine = [r for r in rows if r["corpus"] == c.name]
        if not mine or (wanted and c.name not in wanted):
            continue
        if not args.questions:
            fetch(c)
        index(c, args.lexical, False, lambda s: print(s, file=sys.stderr))
        got = false_absent(mine, tree_of(c), storage_for(c, args.lexical))
        bad = [v for v in got if v["absent"]]
        for v in bad:
            print(f"FALSE ABSENT {v['id']}: {v['absent']}", file=sys.stderr)
        print(f"{c.name}: {len(bad)}/{len(got)} answerable questions said absent")
        verdicts += got
    n, bad_all = len(verdicts), sum(bool(v["absent"]) for v in verdicts)
    if n:
        print(f"all: {bad_all}/{n} answerable questions said absent ({100 * bad_all / n:.1f} %)")
    if args.out:
        args.out.write_text(json.dumps({"answerable": verdicts}, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--lexical", action="store_true", help="the lexical-only storages")
    ap.add_argument("--out", type=Path, help="write the verdicts as JSON here")
    ap.add_argument("--questions", type=Path, help="a held-out realqa-format set")
    ap.add_argument("--corpus", action="append", default=[], help="NAME=DIR (with --questions)")
    ap.add_argument(
        "--answerable", action="store_true", help="false absences on the answerable questions"
    )
    args = ap.parse_args(argv)
    if args.answerable:
        return run_answerable(args)
    questions = load_held_out(args.questions) if args.questions else load_questions()
    wanted = {c for c in args.corpora.split(",") if c}
    known = [local_corpus(spec) for spec in args.corpus] if args.questions else load_corpora()
    corpora = {c.name: c for c in known if c.name in {q.corpus for q in questions}}
    if wanted:
        corpora = {k: v for k, v in corpora.items() if k in wanted}
    verdicts: list[dict[str, Any]] = []
    invalid: list[str] = []
    for name, c in corpora.items():
        if not args.questions:
            fetch(c)
        index(c, args.lexical, False, lambda s: print(s, file=sys.stderr))
        folder = tree_of(c)
        for q in (q for q in questions if q.corpus == name):
            if q.lang == "en" and (found := name_exists(folder, q.name)):
                invalid.append(f"{q.qid}: `{q.name}` found in {found[:3]}")
            if any(q.qid.rsplit("-", 1)[0] in i for i in invalid):
                continue
            v = judge(q, ask(q, folder, storage_for(c, args.lexical)))
            verdicts.append(v)
            print(f"{'OK ' if v['ok'] else 'MISS'} {q.qid} {v}", file=sys.stderr)
    for lang in ("en", "pt", ""):
        group = [v for v in verdicts if v["id"].endswith(lang)] if lang else verdicts
        if group:
            ok = sum(v["ok"] for v in group)
            print(f"{lang or 'all'}: {ok}/{len(group)} answered 'does not exist' with the "
                  f"neighbour cited ({100 * ok / len(group):.0f} %)")  # fmt: skip
    for i in invalid:
        print(f"invalid block: {i}")
    if args.out:
        args.out.write_text(json.dumps({"verdicts": verdicts, "invalid": invalid}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
