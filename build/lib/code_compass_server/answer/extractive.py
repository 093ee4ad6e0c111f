"""The answer without an LLM: for each passage, the lines that best match the question, grouped
by file, cited, framed in the question's language.

(docs/rules.md: extractive-answer.) Each item names what was found and where, cited, and
quotes its best lines in a code block: the passage's own words, so the verifier has nothing
to flag (an item line makes no claim the cited lines lack; quoted lines are not claims).
Document markup that says nothing (heading underlines, `.. directive::` lines, fences) is left
out of the quote.
"""

from __future__ import annotations

import re

from code_compass_server.answer.messages import CATALOGUES, EN, Messages, kind_name
from code_compass_server.answer.reread import Evidence
from code_compass_server.depth.terms import content_terms
from code_compass_server.text_escape import inline

EXCERPT_LINES = 4  # consecutive lines quoted per passage
EXCERPT_LINE_CHARS = 160

_DEF = re.compile(
    r"^\s*(?:export\s+)?(?:async\s+)?(?:def|class|function|func|fn|interface|struct|"
    r"type|pub\s+fn|public|private|protected)\b"
)
# Lines that are markup only: reST/Markdown underlines and rules, directives and their
# options, code fences, HTML comments.
_NOISE = re.compile(
    r"^\s*(?:([=\-~^\"'`#*+_])\1{2,}\s*$|\.\.\s+[\w:-]+::.*$|\.\.\s*$|:[\w -]+:\s*\S*\s*$"
    r"|```.*$|<!--.*-->\s*$)"
)
_HEADING = re.compile(r"^\s*#{1,6}\s+")


def clean_lines(text: str) -> list[tuple[int, str]]:
    """(offset in the passage, line) of the lines worth quoting: markup-only lines out,
    Markdown heading marks stripped."""
    out: list[tuple[int, str]] = []
    for n, line in enumerate(text.splitlines()):
        if not line.strip() or _NOISE.match(line):
            continue
        out.append((n, _HEADING.sub("", line).rstrip()))
    return out


def best_lines(ev: Evidence, question: str, limit: int = EXCERPT_LINES) -> list[str]:
    """The window of up to `limit` consecutive kept lines sharing most terms with the
    question; a definition's signature leads when the window starts below it."""
    lines = clean_lines(ev.text)
    if not lines:
        return []
    wanted = content_terms(question)
    gains = [len(wanted & content_terms(line)) for _, line in lines]
    best_at, best_gain = 0, -1
    for start in range(len(lines)):
        gain = sum(gains[start : start + limit])
        if gain > best_gain:
            best_at, best_gain = start, gain
    if best_gain <= 0:  # nothing in common: the signature, else the first lines
        best_at = next((i for i, (_, ln) in enumerate(lines) if _DEF.match(ln)), 0)
    while best_gain > 0 and gains[best_at] == 0:  # start at a line that matches
        best_at += 1
    sig_at = next((i for i in range(best_at - 1, -1, -1) if _DEF.match(lines[i][1])), None)
    if sig_at is not None and best_at - sig_at <= 2:
        best_at = sig_at  # the signature is (nearly) adjacent: start the quote there
        sig_at = None
    window = [ln for _, ln in lines[best_at : best_at + limit]]
    if sig_at is not None:  # name what the quoted lines belong to, and mark the gap
        window = [lines[sig_at][1], "...", *window[: limit - 1]]
    return [_cut(ln) for ln in _dedent(window)]


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(ln) - len(ln.lstrip()) for ln in lines if ln.strip() and ln != "..."]
    cut = min(indents) if indents else 0
    return [ln if ln == "..." else ln[cut:] for ln in lines]


def _cut(line: str) -> str:
    return line if len(line) <= EXCERPT_LINE_CHARS else line[: EXCERPT_LINE_CHARS - 3] + "..."


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


def extractive_answer(evidences: list[Evidence], msg: Messages = EN, question: str = "") -> str:
    out = [f"{msg.extractive_label}. {msg.extractive_intro}"]
    by_file: dict[str, list[Evidence]] = {}
    for ev in evidences:
        by_file.setdefault(ev.path, []).append(ev)
    for path, group in by_file.items():
        out.append(f"**{inline(path)}**")
        for ev in group:
            name = f"`{ev.hit.symbol}` " if ev.hit.symbol else ""
            kind = f"{kind_name(msg, ev.hit.kind)} " if ev.hit.kind and ev.hit.symbol else ""
            where = f"{inline(ev.path)}:{ev.start_line}-{ev.end_line}"
            out.append(
                msg.extractive_item.format(
                    kind=kind, name=name, where=where, gist="", id=f"[{ev.id}]"
                )
            )
            quote = best_lines(ev, question)
            if quote:
                fence = "````" if any("```" in ln for ln in quote) else "```"
                out.append(f"  {fence}{ev.hit.language or ''}")
                out.extend(f"  {ln}" for ln in quote)
                out.append(f"  {fence}")
    out.append(msg.extractive_footer)
    return "\n".join(out)
