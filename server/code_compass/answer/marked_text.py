"""The answer as plain text with its ungrounded sentences marked (the CLI shows it).

Each unsupported or uncited sentence, and each whose citation was removed, gets a trailing
marker; a legend says what the markers mean. Reads the answer JSON (docs/protocol.md), so
any front door printing text can use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MARKERS = {
    "unsupported": "[!unsupported]",
    "uncited": "[!uncited]",
}
REMOVED_MARKER = "[!citation removed: {ids}]"
LEGEND = {
    "unsupported": "[!unsupported] the passages this sentence cites do not back it",
    "uncited": "[!uncited] this sentence cites no evidence",
    "removed": "[!citation removed] it cited evidence that was never sent (invented)",
}


def marks(sentence: Mapping[str, Any]) -> list[str]:
    out = []
    if sentence.get("verdict") in MARKERS:
        out.append(MARKERS[str(sentence["verdict"])])
    removed = sentence.get("removedCitations") or []
    if removed:
        out.append(REMOVED_MARKER.format(ids=", ".join(map(str, removed))))
    return out


def marked_answer(answer: Mapping[str, Any]) -> tuple[str, list[str]]:
    """(answer text with markers after the flagged sentences, legend lines for the markers
    used). Offsets are the answer's own, so markers go in from the end backwards."""
    text = str(answer.get("answer", ""))
    used: set[str] = set()
    flagged = []
    for s in answer.get("sentences") or []:
        m = marks(s)
        if m and isinstance(s.get("end"), int) and 0 <= s["end"] <= len(text):
            flagged.append((int(s["end"]), " " + " ".join(m)))
            used.add(str(s.get("verdict")))
            if s.get("removedCitations"):
                used.add("removed")
    for end, marker in sorted(flagged, reverse=True):
        text = text[:end] + marker + text[end:]
    legend = [LEGEND[k] for k in ("unsupported", "uncited", "removed") if k in used]
    return text, legend


def flagged_sentences(answer: Mapping[str, Any]) -> list[str]:
    """One line per flagged sentence, for output that was streamed before it was judged."""
    out = []
    for s in answer.get("sentences") or []:
        m = marks(s)
        if m:
            out.append(f"{' '.join(m)} {s.get('text', '')}")
    return out
