"""The command-line flags code declares, for a flag a question names (`dotenv run --dry-run`):
its neighbour is the command that declares the real ones (click's `run` with
`--override/--no-override`), not a README section about the command line.

Declarations read: a quoted `--name` / `-n` in code (click, argparse, commander, yargs, oclif)
and Go's `flag.String("name", …)`, cobra's `Flags().StringVar(&v, "name", …)`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from code_compass_server.answer.near_names import is_code_definition, question_words
from code_compass_server.records import SearchHit

_QUOTED_FLAG = re.compile(r"""["'](--?[A-Za-z][\w-]*(?:/--?[A-Za-z][\w-]*)?)[ ,="']""")
_GO_FLAG = re.compile(
    r"\b(?:flag|[Ff]lags\(\))\.(?:Bool|String|Int|Int64|Uint|Float64|Duration|Var)"
    r"(?:Var|VarP|P)?\((?:&?[\w.]+,\s*)?\"([A-Za-z][\w-]*)\""
)


def declared_flags(text: str) -> list[str]:
    """The flags a code passage declares, as a user types them (`--override/--no-override`)."""
    flags = [m.group(1) for m in _QUOTED_FLAG.finditer(text)]
    flags += [f"--{m.group(1)}" for m in _GO_FLAG.finditer(text)]
    return list(dict.fromkeys(flags))


def command_passage(passages: Sequence[tuple[SearchHit, str]], question: str) -> int:
    """Index of the code definition declaring flags, the one whose name the question writes
    first (`run` of `dotenv run --dry-run`), else the first; -1 when no passage declares any."""
    said = question_words(question)
    best: tuple[tuple[int, int], int] | None = None
    for i, (hit, text) in enumerate(passages):
        if not is_code_definition(hit) or not declared_flags(text):
            continue
        key = (0 if hit.symbol.rsplit(".", 1)[-1] in said else 1, i)
        if best is None or key < best[0]:
            best = (key, i)
    return best[1] if best else -1
