"""Realistic developer questions (eval/realqa) through the command line: ranking, calibration, gate.

    .venv/bin/python scripts/eval_realqa.py [--split dev|test|both] [--corpora flask,django]
        [--lexical django | --lexical all [--partial]] [--out results.json] [--reindex]
    .venv/bin/python scripts/eval_realqa.py --questions SET.jsonl --corpus NAME=DIR [...]
        # a question set of its own on corpora given by path (held-out sets; every split)

With --questions, the set is read from that file (same line format as eval/realqa/questions.jsonl)
and each `--corpus NAME=DIR` names the folder a corpus's gold paths are relative to; nothing is
fetched, and each folder is indexed into its own storage under bench-data/realqa/storage/.

Each corpus (scripts/fetch_corpora.py) is indexed with `code-compass index --json` into its own
storage under bench-data/realqa/storage/ (reused: a re-run only stats the files), then every
question of the chosen split goes through one batch `code-compass search --queries FILE --json
--top-k 10` per corpus. Corpora listed in --lexical are indexed without embeddings (a separate
`-lexical` storage) and searched in lexical mode (with --partial: in hybrid mode, the engine's
path while a new workspace is being embedded); the others in hybrid mode with every vector.

A hit is relevant when it is in a gold span's file and its lines overlap that span. Unanswerable
questions have no relevant hit. Printed per corpus x language (and pooled): MRR@10 and R@5 (share
of answerable questions with a relevant hit in the top 10 / top 5), the top-1 score's quartiles
for answerable (A) and unanswerable (U) questions, ECE of the top-1 score and of every returned hit
(10 equal-width bins; hits other than gold count as not relevant, so this is pessimistic where an
unlabelled hit also answers), AUROC of the top-1 score separating answerable from unanswerable
questions (no hit = score 0), and at minScore 0.6 the share of answerable questions kept (top-1 >=
0.6), of those kept with a relevant hit >= 0.6, and of unanswerable questions passing.

The ECE of `relevance` (the calibrated probability that a hit is relevant) is printed twice:
against gold only, and against graded labels, where a hit a reader judged to answer counts as
relevant too (eval/realqa/graded.jsonl on dev, graded_test.jsonl on test: the completed labels
of the hybrid top 3, judged without their scores; eval/realqa/grade.py). Hits nobody judged
stay gold-only, so the graded figure is still a bound from the pessimistic side below the top 3.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "eval" / "realqa"))

from grade import GRADED, GRADED_TEST, block_of, graded_answers, load_graded  # noqa: E402

from code_compass_server.constants import DEFAULT_MIN_SCORE  # noqa: E402
from fetch_corpora import Corpus, corpus_dir, fetch, load_corpora  # noqa: E402

QUESTIONS = ROOT / "eval" / "realqa" / "questions.jsonl"
STORAGE = ROOT / "bench-data" / "realqa" / "storage"
TOP_K = 10
MIN_SCORE = DEFAULT_MIN_SCORE
BINS = 10
CLI = [sys.executable, "-m", "code_compass_server"]
# --database URL: every corpus is pushed to (and searched in) a team index, one project each.
TEAM: list[str] = []


def team_args(c: Corpus) -> list[str]:
    return ["--database", TEAM[0], "--project", c.name] if TEAM else []


# --- data --------------------------------------------------------------------------------------


@dataclass
class Hit:
    path: str
    start: int
    end: int
    score: float
    relevant: bool
    relevance: float | None = None  # calibrated P(relevant), when the engine reports it
    answers: bool = False  # relevant, or judged to answer by a reader (graded labels)


@dataclass
class Result:
    qid: str
    corpus: str
    lang: str
    kind: str
    style: str
    split: str
    hits: list[Hit] = field(default_factory=list)

    @property
    def answerable(self) -> bool:
        return self.kind == "answerable"

    @property
    def rank(self) -> int | None:
        """0-based rank of the first relevant hit in the top 10."""
        return next((i for i, h in enumerate(self.hits[:TOP_K]) if h.relevant), None)

    @property
    def top1(self) -> float:
        return self.hits[0].score if self.hits else 0.0


def hit_json(h: Hit) -> dict[str, object]:
    return {"path": h.path, "startLine": h.start, "endLine": h.end, "score": h.score,
            "relevance": h.relevance, "relevant": h.relevant, "answers": h.answers}  # fmt: skip


def relevant(hit: dict[str, object], gold: Iterable[dict[str, object]]) -> bool:
    return any(
        hit["path"] == g["path"]
        and int(str(hit["startLine"])) <= int(str(g["endLine"]))
        and int(str(hit["endLine"])) >= int(str(g["startLine"]))
        for g in gold
    )


# --- engine through the CLI ----------------------------------------------------------------------


# --corpus NAME=DIR: corpora given by path (a held-out set's), used as they are (not fetched).
LOCAL: dict[str, Path] = {}


def local_corpus(spec: str) -> Corpus:
    """`NAME=DIR` -> a corpus read from DIR; its storage is named after DIR's own name."""
    name, sep, where = spec.partition("=")
    tree = Path(where).expanduser().resolve()
    if not sep or not name or not tree.is_dir():
        raise SystemExit(f"--corpus wants NAME=DIR with an existing folder, got {spec!r}")
    LOCAL[name] = tree
    return Corpus(name, "local", name, f"at-{tree.name}", "", "")


def tree_of(c: Corpus) -> Path:
    """The folder of a corpus: given by path, or fetched into bench-data/corpora/."""
    return LOCAL.get(c.name) or corpus_dir(c)


def storage_for(c: Corpus, lexical: bool) -> Path:
    return STORAGE / (c.folder + ("-lexical" if lexical else ""))


@contextmanager
def embedded_project(
    storage: Path, tree: Path, label: str
) -> Iterator[tuple[Any, str, Any] | None]:
    """(project, its name, the semantic channel) of `tree` on `storage`, opened in this
    process for the fitting scripts; None, said on stderr, when not every chunk has its vector
    (the corpus's hybrid pools would be lexical)."""
    from code_compass_server.engine import Engine
    from code_compass_server.settings import EngineSettings

    engine = Engine.open(storage, EngineSettings())
    try:
        name = engine.add_project(tree)
        project = engine.project(name)
        counts = project.catalog.counts()
        if not counts.get("chunks") or counts.get("embedded", 0) < counts["chunks"]:
            print(f"{label}: not fully embedded, left out", file=sys.stderr)
            yield None
            return
        semantic = engine.embeddings.semantic_channel()  # None until the model loads
        assert semantic is not None, "embeddings are off: build the model first"
        yield project, name, semantic
    finally:
        engine.close()


def index_summary(c: Corpus, lexical: bool) -> dict[str, Any]:
    """`code-compass index --json` on one corpus's storage (built, or refreshed): its summary."""
    cmd = [
        *CLI,
        "index",
        "--workspace",
        str(tree_of(c)),
        "--storage",
        str(storage_for(c, lexical)),
    ]
    cmd += ["--json", *(["--no-embed"] if lexical else []), *team_args(c)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    summary: dict[str, Any] = json.loads(out.strip().splitlines()[-1])["projects"][0]
    return summary


def batch_search(
    c: Corpus, lexical: bool, mode: str, queries: Mapping[str, str]
) -> dict[str, list]:
    """Hits per query id, from one batch `code-compass search --queries` call on the storage
    `storage_for(c, lexical)`."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for qid, text in queries.items():
            f.write(json.dumps({"id": qid, "query": text}) + "\n")
        qfile = f.name
    try:
        cmd = [*CLI, "search", "--queries", qfile, "--json", "--top-k", str(TOP_K),
               "--mode", mode, "--workspace", str(tree_of(c)),
               "--storage", str(storage_for(c, lexical)), *team_args(c)]  # fmt: skip
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(qfile)
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    return {str(r["id"]): r["hits"] for r in rows}


def index(c: Corpus, lexical: bool, reindex: bool, log: Callable[[str], None]) -> dict[str, object]:
    """Index (or refresh) one corpus; the first build's wall time is kept next to the storage."""
    storage = storage_for(c, lexical)
    record = storage.with_name(storage.name + ".build.json")
    if reindex and storage.exists():
        shutil.rmtree(storage)
        record.unlink(missing_ok=True)
    t0 = time.perf_counter()
    summary = index_summary(c, lexical)
    wall = time.perf_counter() - t0
    built = summary["changed"] > 0 and summary.get("unchanged", 0) == 0
    if built:
        record.write_text(json.dumps({"wall_seconds": round(wall, 1), "summary": summary}))
    # A storage built outside this script has no record: its build time is unknown.
    first = json.loads(record.read_text()) if record.exists() else {"wall_seconds": None}
    log(
        f"{c.name}: {summary['files']} files, {summary['chunks']} chunks, "
        f"{summary['embedded']} embedded; this run {wall:.1f}s, "
        f"first build {first['wall_seconds']}s{' (now)' if built else ''}"
    )
    return {
        "files": summary["files"],
        "chunks": summary["chunks"],
        "embedded": summary["embedded"],
        "build_seconds": first["wall_seconds"],
        "this_run_seconds": round(wall, 1),
        "lexical_only": lexical,
    }


def search(
    c: Corpus, lexical: bool, questions: Sequence[dict[str, object]], partial: bool = False
) -> dict[str, list]:
    """Hits per question id, from one batch `code-compass search` call. `partial`: the storage
    without vectors searched in hybrid mode, as while a new workspace is being embedded."""
    mode = "lexical" if lexical and not partial else "hybrid"
    return batch_search(c, lexical, mode, {str(q["id"]): str(q["question"]) for q in questions})


# --- metrics -----------------------------------------------------------------------------------


def ece(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """Expected calibration error over 10 equal-width bins of the score."""
    if not scores:
        return float("nan")
    s = np.clip(np.asarray(scores, dtype=float), 0.0, 1.0)
    y = np.asarray(labels, dtype=float)
    bins = np.minimum((s * BINS).astype(int), BINS - 1)
    total = 0.0
    for b in range(BINS):
        m = bins == b
        if m.any():
            total += m.sum() / len(s) * abs(y[m].mean() - s[m].mean())
    return float(total)


def reliability(scores: Sequence[float], labels: Sequence[bool]) -> list[dict[str, object]]:
    s = np.clip(np.asarray(scores, dtype=float), 0.0, 1.0)
    y = np.asarray(labels, dtype=float)
    bins = np.minimum((s * BINS).astype(int), BINS - 1)
    out: list[dict[str, object]] = []
    for b in range(BINS):
        m = bins == b
        if m.any():
            out.append(
                {
                    "bin": f"{b / BINS:.1f}-{(b + 1) / BINS:.1f}",
                    "n": int(m.sum()),
                    "mean_score": round(float(s[m].mean()), 4),
                    "relevant_share": round(float(y[m].mean()), 4),
                }
            )
    return out


def auroc(pos: Sequence[float], neg: Sequence[float]) -> float:
    """Probability that a random positive outscores a random negative (ties count half)."""
    if not pos or not neg:
        return float("nan")
    p = np.asarray(pos, dtype=float)[:, None]
    n = np.asarray(neg, dtype=float)[None, :]
    return float(((p > n).sum() + 0.5 * (p == n).sum()) / (p.size * n.size))


def quartiles(xs: Sequence[float]) -> list[float]:
    if not xs:
        return []
    return [round(float(v), 3) for v in np.quantile(np.asarray(xs), [0.0, 0.25, 0.5, 0.75, 1.0])]


def summarize(results: Sequence[Result]) -> dict[str, object]:
    ans = [r for r in results if r.answerable]
    una = [r for r in results if not r.answerable]
    ranks = [r.rank for r in ans]
    top1_scores = [r.top1 for r in results if r.hits]
    top1_labels = [r.hits[0].relevant for r in results if r.hits]
    all_scores = [h.score for r in results for h in r.hits]
    all_labels = [h.relevant for r in results for h in r.hits]
    # The relevance probability where the engine reports one, else the score itself.
    rel_top = [r.hits[0].relevance if r.hits[0].relevance is not None else r.hits[0].score
               for r in results if r.hits]  # fmt: skip
    rel_all = [h.relevance if h.relevance is not None else h.score for r in results for h in r.hits]
    top1_answers = [r.hits[0].answers for r in results if r.hits]
    all_answers = [h.answers for r in results for h in r.hits]
    return {
        "n_answerable": len(ans),
        "n_unanswerable": len(una),
        "mrr10": float(np.mean([0.0 if k is None else 1 / (k + 1) for k in ranks]))
        if ans
        else None,
        "r1": float(np.mean([k is not None and k < 1 for k in ranks])) if ans else None,
        "r5": float(np.mean([k is not None and k < 5 for k in ranks])) if ans else None,
        "r10": float(np.mean([k is not None for k in ranks])) if ans else None,
        "top1_quartiles_answerable": quartiles([r.top1 for r in ans]),
        "top1_quartiles_unanswerable": quartiles([r.top1 for r in una]),
        "top1_saturated_share": float(np.mean([s >= 0.995 for s in top1_scores]))
        if top1_scores
        else None,
        "top1_relevant_share": float(np.mean(top1_labels)) if top1_labels else None,
        "ece_top1": ece(top1_scores, top1_labels),
        "ece_all_hits": ece(all_scores, all_labels),
        "ece_relevance_top1": ece(rel_top, top1_labels),
        "ece_relevance_all": ece(rel_all, all_labels),
        "top1_answers_share": float(np.mean(top1_answers)) if top1_answers else None,
        "ece_relevance_top1_graded": ece(rel_top, top1_answers),
        "ece_relevance_all_graded": ece(rel_all, all_answers),
        "reliability_relevance_top1_graded": reliability(rel_top, top1_answers),
        "reliability_relevance_all": reliability(rel_all, all_labels),
        "reliability_relevance_top1": reliability(rel_top, top1_labels),
        "auroc_top1": auroc([r.top1 for r in ans], [r.top1 for r in una]),
        "kept": float(np.mean([r.top1 >= MIN_SCORE for r in ans])) if ans else None,
        "kept_relevant": float(
            np.mean([any(h.relevant and h.score >= MIN_SCORE for h in r.hits) for r in ans])
        )
        if ans
        else None,
        "unanswerable_passing": float(np.mean([r.top1 >= MIN_SCORE for r in una])) if una else None,
        "no_hits": sum(1 for r in results if not r.hits),
        "reliability_top1": reliability(top1_scores, top1_labels),
        "reliability_all_hits": reliability(all_scores, all_labels),
    }


def fmt(v: object, pct: bool = False) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.0%}" if pct else f"{v:.3f}"
    return str(v)


def print_table(title: str, groups: dict[str, dict[str, object]]) -> None:
    print(f"\n## {title}\n")
    print(
        "| group | n A/U | MRR@10 | R@5 | top-1 >=0.995 | ECE score top-1 / all"
        " | ECE rel top-1 gold / graded | ECE rel all gold / graded | AUROC | kept >=0.6"
        " | kept relevant | U passing |"
    )
    print("| --- " * 12 + "|")
    for name, s in groups.items():
        print(
            f"| {name} | {s['n_answerable']}/{s['n_unanswerable']} | {fmt(s['mrr10'])} |"
            f" {fmt(s['r5'])} | {fmt(s['top1_saturated_share'], True)} |"
            f" {fmt(s['ece_top1'])} / {fmt(s['ece_all_hits'])} |"
            f" {fmt(s['ece_relevance_top1'])} / {fmt(s['ece_relevance_top1_graded'])} |"
            f" {fmt(s['ece_relevance_all'])} / {fmt(s['ece_relevance_all_graded'])} |"
            f" {fmt(s['auroc_top1'])} | {fmt(s['kept'], True)} |"
            f" {fmt(s['kept_relevant'], True)} | {fmt(s['unanswerable_passing'], True)} |"
        )


def print_styles(results: Sequence[Result]) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    print("\n## by style (answerable; all corpora)\n")
    print("| style | lang | n | MRR@10 | R@5 | kept >=0.6 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for style in sorted({r.style for r in results}):
        for lang in ("en", "pt", "all"):
            rs = [
                r
                for r in results
                if r.answerable and r.style == style and (lang == "all" or r.lang == lang)
            ]
            if not rs:
                continue
            s = summarize(rs)
            out[f"{style}/{lang}"] = {k: s[k] for k in ("n_answerable", "mrr10", "r5", "kept")}
            print(
                f"| {style} | {lang} | {len(rs)} | {fmt(s['mrr10'])} | {fmt(s['r5'])} |"
                f" {fmt(s['kept'], True)} |"
            )
    return out


# --- main --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--split",
        choices=("dev", "test", "both"),
        help="default: dev for eval/realqa, both for a set given with --questions",
    )
    ap.add_argument("--corpora", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--lexical", default="", help="corpora indexed without embeddings, or 'all'")
    ap.add_argument(
        "--partial",
        action="store_true",
        help="search the --lexical storages in hybrid mode: no vector yet, as while embedding",
    )
    ap.add_argument("--reindex", action="store_true", help="delete the storages and rebuild them")
    ap.add_argument("--out", type=Path, help="write the results as JSON here")
    ap.add_argument(
        "--database", metavar="URL", help="push to and search a team index (docs/team-index.md)"
    )
    ap.add_argument(
        "--questions", type=Path, default=QUESTIONS, help="a question set (JSON lines) of its own"
    )
    ap.add_argument(
        "--corpus",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="a corpus given by path (repeat); with --questions, instead of corpora.json",
    )
    args = ap.parse_args(argv)
    if args.split is None:
        args.split = "dev" if args.questions == QUESTIONS else "both"
    if args.database:
        TEAM[:] = [args.database]

    def log(s: str) -> None:
        print(s, file=sys.stderr, flush=True)

    wanted = {n for n in args.corpora.split(",") if n}
    given = [local_corpus(spec) for spec in args.corpus]
    corpora = [c for c in given or load_corpora() if not wanted or c.name in wanted]
    lexical = {c.name for c in corpora} if args.lexical == "all" else set(args.lexical.split(","))
    splits = {"dev", "test"} if args.split == "both" else {args.split}
    questions = [
        q
        for q in map(json.loads, args.questions.read_text(encoding="utf-8").splitlines())
        if q["split"] in splits and q["corpus"] in {c.name for c in corpora}
    ]
    STORAGE.mkdir(parents=True, exist_ok=True)
    verdicts = {**load_graded(GRADED), **load_graded(GRADED_TEST)}  # blocks are split-unique
    results: list[Result] = []
    index_info: dict[str, object] = {}
    search_seconds: dict[str, float] = {}
    for c in corpora:
        if c.name not in LOCAL:
            fetch(c)
        lex = c.name in lexical
        index_info[c.name] = {"version": c.version, **index(c, lex, args.reindex, log)}
        qs = [q for q in questions if q["corpus"] == c.name]
        t0 = time.perf_counter()
        hits = search(c, lex, qs, partial=args.partial)
        search_seconds[c.name] = round(time.perf_counter() - t0, 1)
        log(f"{c.name}: {len(qs)} questions searched in {search_seconds[c.name]}s")
        for q in qs:
            r = Result(
                str(q["id"]),
                c.name,
                str(q["lang"]),
                str(q["kind"]),
                str(q["style"]),
                str(q["split"]),
            )
            for h in hits.get(str(q["id"]), []):
                hit = Hit(h["path"], h["startLine"], h["endLine"], float(h["score"]), False,
                          float(h["relevance"]) if "relevance" in h else None)  # fmt: skip
                hit.relevant = relevant(h, q["gold"])
                hit.answers = hit.relevant or graded_answers(h, verdicts.get(block_of(q["id"]), []))
                r.hits.append(hit)
            results.append(r)

    groups: dict[str, dict[str, object]] = {}
    for c in corpora:
        for lang in ("en", "pt"):
            rs = [r for r in results if r.corpus == c.name and r.lang == lang]
            if rs:
                groups[f"{c.name} {lang}"] = summarize(rs)
    for lang in ("en", "pt"):
        groups[f"ALL {lang}"] = summarize([r for r in results if r.lang == lang])
    groups["ALL"] = summarize(results)
    unembedded = "partial (no vectors yet)" if args.partial else "lexical"
    modes = ", ".join(f"{c.name} {unembedded if c.name in lexical else 'hybrid'}" for c in corpora)
    print_table(f"{args.split} split ({modes})", groups)
    styles = print_styles(results)
    print("\n## index\n")
    print("| corpus | version | files | chunks | embedded | first build (s) | mode |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, info in index_info.items():
        assert isinstance(info, dict)
        print(
            f"| {name} | {info['version']} | {info['files']} | {info['chunks']} |"
            f" {info['embedded']} | {info['build_seconds']} |"
            f" {'lexical' if info['lexical_only'] else 'hybrid'} |"
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "split": args.split,
            "top_k": TOP_K,
            "min_score": MIN_SCORE,
            "index": index_info,
            "search_seconds": search_seconds,
            "groups": groups,
            "styles": styles,
            "questions": [
                {
                    "id": r.qid,
                    "corpus": r.corpus,
                    "lang": r.lang,
                    "kind": r.kind,
                    "style": r.style,
                    "rank": r.rank,
                    "hits": [hit_json(h) for h in r.hits],
                }
                for r in results
            ],
        }
        args.out.write_text(json.dumps(payload, indent=1))
        log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
