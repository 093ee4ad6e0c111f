#!/usr/bin/env python3
"""Secret detection: recall on planted secrets, false positives on real code (#32).

Recall: tests/security/prose_secrets.py's corpus (secrets in code, comments, Markdown, YAML,
.ini, JSON, notebooks, Dockerfiles, prose) through `redact` (what leaves for a model): a case
is caught when no fragment of its value survives.
False positives: every text file of the given corpora (default Django and flask from
`scripts/fetch_corpora.py --only django,flask`) through `redact`; each masked span counts
(these sources hold no live secrets: their test keys and fixtures count against us too).
Prints recall, masks per 10k lines (per detector kind), and the masked lines with --show.

Targets: recall >= 99 %; <= 1 false positive per 10k lines. A mask on a literal given to a
credential-named key, variable, argument or URL user is reported apart (see CREDENTIAL_SLOT):
masking it is the point, whether the literal is a live key or a fixture.

    nice python scripts/eval_secrets.py [--corpora bench-data/corpora] [--only django,flask]
"""

from __future__ import annotations

import argparse
import re
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


# A mask right after a credential-named key, variable, argument or URL user (`"PASSWORD":
# "…"`, `password="…"`, `check_password("…")`, `export FLASK_SECRET_KEY="…"`, `user:…@`):
# a literal credential. In these corpora it is a fixture or a documentation example, in a
# user's repository it looks exactly the same, so it is masked on purpose. Every other mask
# is a false positive.
CREDENTIAL_SLOT = re.compile(
    r"(?i)(?:pass(?:word|wd|phrase)?\w*|pwd|secret\w*|\w*token\w*|\w*api_?key\w*|\w*_key"
    r"|credentials?|csrf\w*)[\"'\]]*\s*(?::=|=>|=|:|\(|\s)\s*[(\[]?\s*[\"'`]?$"
    r"|://[^\s/@]*:?$"
)


def is_false_positive(redacted_line: str, at: int) -> bool:
    """Whether the mask at `at` of a redacted line is not a credential literal."""
    return not CREDENTIAL_SLOT.search(redacted_line[max(0, at - 60) : at])


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
        if not redactor.total:
            continue
        for before, after in zip(text.splitlines(), out.splitlines(), strict=False):
            if MASK not in after or MASK in before:
                continue
            wrong = [m.start() for m in re.finditer(re.escape(MASK), after)]
            wrong = [at for at in wrong if is_false_positive(after, at)]
            kinds["(false positive)"] += len(wrong)
            if show:
                label = "FP " if wrong else "lit"
                print(f"  {label} {path.relative_to(folder)}: {before.strip()[:140]}")
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
        wrong = kinds.pop("(false positive)", 0)
        masked = sum(kinds.values())
        rate = 10_000 * masked / max(lines, 1)
        detail = ", ".join(f"{k} {n}" for k, n in kinds.most_common() if n)
        print(
            f"{folders[0].name}: {lines} lines, {masked} masked = {rate:.2f} per 10k ({detail}); "
            f"false positives (not a credential literal) {wrong} = "
            f"{10_000 * wrong / max(lines, 1):.2f} per 10k (target <= 1)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
