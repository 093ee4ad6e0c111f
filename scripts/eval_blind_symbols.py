#!/usr/bin/env python3
"""Definitions and references against a blind labelled set (positions chosen and labelled by
someone who never saw the resolver; gold from jedi, go/types and the TypeScript language
service). The set and its corpora live outside the repository (they are other projects' code):

    .venv/bin/python scripts/eval_blind_symbols.py --set DIR --corpora DIR [--out results.json]

DIR holds positions.jsonl ({id, repo, language, path, line, column, name, kind, gold: [{path,
line}]}) and references.jsonl ({id, repo, language, symbol, definition, references}); each repo
is a folder under --corpora. A position is right when the first definition shown is a gold
location (same file, the gold line inside its lines), or when gold is empty (defined outside the
workspace) and no workspace definition is shown. References: precision and recall of the
(path, line)s the resolver finds against the compiler's, the definition itself counted on both
sides; "references_listed_in_one_answer" scores only the first SYMBOL_REFERENCES_LIMIT, what one
CLI/MCP answer lists (its `total` counts the rest).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "server"))

from code_compass_server.constants import SYMBOL_REFERENCES_LIMIT  # noqa: E402
from code_compass_server.engine import Engine  # noqa: E402
from code_compass_server.settings import EngineSettings  # noqa: E402


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def source_line(path: Path, line: int) -> str:
    try:
        return path.read_text(errors="replace").splitlines()[line - 1].strip()[:120]
    except (OSError, IndexError):
        return "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--set", type=Path, required=True)
    ap.add_argument("--corpora", type=Path, required=True)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--misses", action="store_true", help="list the positions answered wrong")
    ap.add_argument(
        "--ref-misses",
        action="store_true",
        help="per references symbol: the gold lines not found, the lines found not in gold",
    )
    args = ap.parse_args()
    positions = load(args.set / "positions.jsonl")
    refs = load(args.set / "references.jsonl") if (args.set / "references.jsonl").exists() else []
    engine = Engine.open(
        Path(tempfile.mkdtemp(prefix="cc-blind-")), EngineSettings(embeddings=False)
    )
    names: dict[str, str] = {}
    for repo in sorted({p["repo"] for p in positions} | {r["repo"] for r in refs}):
        names[repo] = engine.add_project(args.corpora / repo)
        engine.index(names[repo], embed=False, background_embed=False)
    by_kind: dict[tuple[str, str], list[bool]] = defaultdict(list)
    rows = []
    took = []
    for p in positions:
        t0 = time.perf_counter()
        found = engine.definitions(names[p["repo"]], p["path"], p["line"], p["column"])
        took.append(time.perf_counter() - t0)
        first = found.locations[0] if found.locations else None
        if not p["gold"]:
            ok = first is None
        else:
            ok = first is not None and any(
                g["path"] == first.path and first.start_line <= g["line"] <= first.end_line
                for g in p["gold"]
            )
        by_kind[p["language"], p["kind"]].append(ok)
        shown = None if first is None else f"{first.path}:{first.start_line}-{first.end_line}"
        rows.append({"id": p["id"], "ok": ok, "first": shown, "gold": p["gold"]})
        if args.misses and not ok:
            gold = ", ".join(f"{g['path']}:{g['line']}" for g in p["gold"]) or "outside"
            print(f"miss {p['id']} {p['kind']} {p['path']}:{p['line']}:{p['column']} "
                  f"{p['name']}: shown {shown}, gold {gold}", file=sys.stderr)  # fmt: skip
    total = [r["ok"] for r in rows]
    langs: dict[str, list[bool]] = defaultdict(list)
    kinds: dict[str, list[bool]] = defaultdict(list)
    for (lang, kind), oks in by_kind.items():
        langs[lang] += oks
        kinds[kind] += oks
    share = lambda xs: round(sum(xs) / len(xs), 3) if xs else None  # noqa: E731
    report: dict[str, object] = {
        "positions": len(total),
        "first_definition_right": share(total),
        "by_language": {k: (share(v), len(v)) for k, v in sorted(langs.items())},
        "by_kind": {k: (share(v), len(v)) for k, v in sorted(kinds.items())},
        "by_language_and_kind": {
            f"{lang}/{kind}": (share(v), len(v)) for (lang, kind), v in sorted(by_kind.items())
        },
        "definition_p50_ms": round(sorted(took)[len(took) // 2] * 1000, 1),
    }
    ref_rows = []
    listed_rows: list[tuple[int, int, int]] = []
    for r in refs:
        d = r["definition"]
        # Every reference the resolver finds (limit None); the front doors list at most
        # SYMBOL_REFERENCES_LIMIT in one answer, measured apart ("listed").
        found = engine.references(names[r["repo"]], d["path"], d["line"], d["column"], limit=None)
        got = {(loc.path, loc.line) for loc in found.locations}
        listed = {(loc.path, loc.line) for loc in found.locations[:SYMBOL_REFERENCES_LIMIT]}
        gold = {(x["path"], x["line"]) for x in r["references"]}
        hit = len(got & gold)
        ref_rows.append((r["language"], hit, len(got), len(gold)))
        listed_rows.append((len(listed & gold), len(listed), len(gold)))
        if args.ref_misses and got != gold:
            print(f"refs {r['id']} {r['language']} {r['symbol']} "
                  f"{d['path']}:{d['line']}:{d['column']}: {hit}/{len(gold)} found, "
                  f"{len(got - gold)} extra", file=sys.stderr)  # fmt: skip
            for what, rows in (("missed", gold - got), ("extra ", got - gold)):
                for path, line in sorted(rows):
                    row = source_line(args.corpora / r["repo"] / path, line)
                    print(f"  {what} {path}:{line}: {row}", file=sys.stderr)
    if ref_rows:
        report["references"] = {
            lang: {
                "precision": round(sum(h for lg, h, _g, _o in ref_rows if lg == lang)
                                   / max(1, sum(g for lg, _h, g, _o in ref_rows if lg == lang)), 3),
                "recall": round(sum(h for lg, h, _g, _o in ref_rows if lg == lang)
                                / max(1, sum(o for lg, _h, _g, o in ref_rows if lg == lang)), 3),
                "symbols": sum(1 for lg, *_ in ref_rows if lg == lang),
            }
            for lang in sorted({lg for lg, *_ in ref_rows})
        }  # fmt: skip
        hits = sum(h for _l, h, _g, _o in ref_rows)
        report["references_all"] = {
            "precision": round(hits / max(1, sum(g for _l, _h, g, _o in ref_rows)), 3),
            "recall": round(hits / max(1, sum(o for _l, _h, _g, o in ref_rows)), 3),
        }
        listed_hits = sum(h for h, _g, _o in listed_rows)
        report["references_listed_in_one_answer"] = {
            "limit": SYMBOL_REFERENCES_LIMIT,
            "precision": round(listed_hits / max(1, sum(g for _h, g, _o in listed_rows)), 3),
            "recall": round(listed_hits / max(1, sum(o for _h, _g, o in listed_rows)), 3),
        }
    engine.close()
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps({"report": report, "positions": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
