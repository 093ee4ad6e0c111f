"""The answer without an LLM: what was found where, cited (DESIGN: no key, still useful)."""

from __future__ import annotations

import re

from code_compass.answer.reread import Evidence
from code_compass.constants import EXTRACTIVE_LABEL

_DEF = re.compile(
    r"^\s*(?:export\s+)?(?:async\s+)?(?:def|class|function|func|fn|interface|struct|"
    r"type|pub\s+fn|public|private|protected)\b"
)


def _gist(ev: Evidence) -> str:
    """The most telling line: a signature if there is one, else the first non-blank line."""
    lines = [ln.strip() for ln in ev.text.splitlines() if ln.strip()]
    if not lines:
        return ""
    line = next((ln for ln in lines if _DEF.match(ln)), lines[0])
    return line if len(line) <= 120 else line[:117] + "..."


EXTRACTIVE_FOOTER = "Set ANTHROPIC_API_KEY for a written answer from these passages."


def extractive_frame(text: str) -> tuple[str, str, str]:
    """(label line, cited body, footer): only the body makes claims to verify."""
    lines = text.split("\n")
    if len(lines) >= 2 and lines[0].startswith(EXTRACTIVE_LABEL) and lines[-1] == EXTRACTIVE_FOOTER:
        return lines[0], "\n".join(lines[1:-1]), lines[-1]
    return "", text, ""


def extractive_answer(evidences: list[Evidence]) -> str:
    out = [f"{EXTRACTIVE_LABEL}. Found in the index:"]
    for ev in evidences:
        name = f"`{ev.hit.symbol}` " if ev.hit.symbol else ""
        kind = f"{ev.hit.kind} " if ev.hit.kind and ev.hit.symbol else ""
        gist = _gist(ev)
        gist_txt = f": `{gist.replace('`', chr(39))}`" if gist else ""
        out.append(f"- {kind}{name}in {ev.path}:{ev.start_line}-{ev.end_line}{gist_txt} [{ev.id}]")
    out.append(EXTRACTIVE_FOOTER)
    return "\n".join(out)
