"""The answer as plain text with its ungrounded sentences marked (the CLI shows it).

Each unsupported or uncited sentence, and each whose citation was removed, gets a trailing
marker; a legend says what the markers mean, both in the question's language (the catalogue
of answer/messages.py). Reads the answer JSON (docs/protocol.md), so any front door printing
text can use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from code_compass_server.answer.messages import EN, Messages

_VERDICTS = ("unsupported", "uncited")


def marks(sentence: Mapping[str, Any], msg: Messages = EN) -> list[str]:
    out = []
    verdict = sentence.get("verdict")
    if verdict in _VERDICTS:
        out.append(msg.marker_unsupported if verdict == "unsupported" else msg.marker_uncited)
    removed = sentence.get("removedCitations") or []
    if removed:
        out.append(msg.marker_removed.format(ids=", ".join(map(str, removed))))
    return out


def marked_answer(answer: Mapping[str, Any], msg: Messages = EN) -> tuple[str, list[str]]:
    """(answer text with markers after the flagged sentences, legend lines for the markers
    used). Offsets are the answer's own, so markers go in from the end backwards."""
    text = str(answer.get("answer", ""))
    used: set[str] = set()
    flagged = []
    for s in answer.get("sentences") or []:
        m = marks(s, msg)
        if m and isinstance(s.get("end"), int) and 0 <= s["end"] <= len(text):
            flagged.append((int(s["end"]), " " + " ".join(m)))
            used.add(str(s.get("verdict")))
            if s.get("removedCitations"):
                used.add("removed")
    for end, marker in sorted(flagged, reverse=True):
        text = text[:end] + marker + text[end:]
    legend = {
        "unsupported": msg.legend_unsupported,
        "uncited": msg.legend_uncited,
        "removed": msg.legend_removed,
    }
    lines = [line for k, line in legend.items() if k in used]
    return text, lines


def flagged_sentences(answer: Mapping[str, Any], msg: Messages = EN) -> list[str]:
    """One line per flagged sentence, for output that was streamed before it was judged."""
    out = []
    for s in answer.get("sentences") or []:
        m = marks(s, msg)
        if m:
            out.append(f"{' '.join(m)} {s.get('text', '')}")
    return out
