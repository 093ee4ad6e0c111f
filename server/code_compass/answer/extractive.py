"""The answer without an LLM: what was found where, cited, framed in the question's language."""

from __future__ import annotations

import re

from code_compass.answer.messages import CATALOGUES, EN, Messages, kind_name
from code_compass.answer.reread import Evidence

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


def extractive_frame(text: str) -> tuple[str, str, str]:
    """(label line, cited body, footer), in any catalogue's language: only the body makes
    claims to verify."""
    lines = text.split("\n")
    for msg in CATALOGUES.values():
        if (
            len(lines) >= 2
            and lines[0].startswith(msg.extractive_label)
            and lines[-1] == msg.extractive_footer
        ):
            return lines[0], "\n".join(lines[1:-1]), lines[-1]
    return "", text, ""


def extractive_answer(evidences: list[Evidence], msg: Messages = EN) -> str:
    out = [f"{msg.extractive_label}. {msg.extractive_intro}"]
    for ev in evidences:
        name = f"`{ev.hit.symbol}` " if ev.hit.symbol else ""
        kind = f"{kind_name(msg, ev.hit.kind)} " if ev.hit.kind and ev.hit.symbol else ""
        gist = _gist(ev)
        gist_txt = f": `{gist.replace('`', chr(39))}`" if gist else ""
        where = f"{ev.path}:{ev.start_line}-{ev.end_line}"
        out.append(
            msg.extractive_item.format(
                kind=kind, name=name, where=where, gist=gist_txt, id=f"[{ev.id}]"
            )
        )
    out.append(msg.extractive_footer)
    return "\n".join(out)
