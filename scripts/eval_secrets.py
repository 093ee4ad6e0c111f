#!/usr/bin/env python3
"""Secret detection: recall on planted secrets, false positives on real code (#32).

Recall: tests/security/prose_secrets.py's corpus (secrets in code, comments, Markdown, YAML,
.ini, JSON, notebooks, Dockerfiles, prose) through `redact` (what leaves for a model): a case
is caught when no fragment of its value survives.
False positives: every text file of the given corpora (default Django and flask from
`scripts/fetch_corpora.py --only django,flask`) through `redact`; each masked span counts
(these sources hold no live secrets: their test keys and fixtures count against us too).
Prints recall, masks per 10k lines (per detector kind), and the masked lines with --show.

Targets: recall >= 99 %; <= 1 false positive per 10k lines.

    nice python scripts/eval_secrets.py [--corpora bench-data/corpora] [--only django,flask]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from code_compass_server.answer.redact import MASK, Redactor

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.security.prose_secrets import build_cases, survives  # noqa: E402

TEXT_SUFFIXES = {".py", ".txt", ".rst", ".md", ".cfg", ".ini", ".toml", ".yaml", ".yml", ".json",
                 ".html", ".js", ".css", ".sh", ".po"}  # fmt: skip


def recall() -> tuple[int, int, list[str]]:
    cases = build_cases()
    missed = [c.name for c in cases if survives(c)]
    return len(cases) - len(missed), len(cases), missed


def false_positives(folder: Path, show: bool) -> tuple[int, Counter[str]]:
    lines = 0
    kinds: Counter[str] = Counter()
    for path in sorted(folder.rglob("*")):
        if path.suffix not in TEXT_SUFFIXES or not path.is_file():
            continue
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lines += text.count("\n") + 1
        redactor = Redactor()
        out = redactor.redact(text)
        kinds.update(redactor.counts)
        if show and redactor.total:
            for before, after in zip(text.splitlines(), out.splitlines(), strict=False):
                if MASK in after and MASK not in before:
                    print(f"  {path.relative_to(folder)}: {before.strip()[:140]}")
    return lines, kinds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=ROOT / "bench-data" / "corpora")
    parser.add_argument("--only", default="django,flask")
    parser.add_argument("--show", action="store_true", help="print every masked line")
    args = parser.parse_args()
    caught, total, missed = recall()
    print(f"recall: {caught}/{total} = {100 * caught / total:.1f} % (target >= 99 %)")
    for name in missed:
        print(f"  missed: {name}")
    for name in args.only.split(","):
        folders = sorted(args.corpora.glob(f"{name}-*[!k]"))
        if not folders:
            print(f"{name}: not found under {args.corpora} (run scripts/fetch_corpora.py)")
            continue
        lines, kinds = false_positives(folders[0], args.show)
        masked = sum(kinds.values())
        rate = 10_000 * masked / max(lines, 1)
        detail = ", ".join(f"{k} {n}" for k, n in kinds.most_common())
        print(f"{folders[0].name}: {lines} lines, {masked} masked = {rate:.2f} per 10k ({detail})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
