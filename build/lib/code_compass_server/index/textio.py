"""Bytes to text for indexing and for re-reading evidence.

Line numbers are the contract with the editor: decoding never changes how many
lines a file has as VS Code counts them (\\r\\n, \\r and \\n are all one line break),
so both the chunker and the evidence re-reader must go through `decode_text` and
`split_lines`.
"""

from __future__ import annotations

import codecs

from code_compass_server.constants import BINARY_SNIFF_BYTES, TEXT_MAX_CONTROL_RATIO

# C0 control bytes other than tab, LF, VT, FF, CR, ESC (ANSI colours in logs), plus DEL.
_CONTROL_BYTES = bytes(
    b for b in [*range(0x00, 0x20), 0x7F] if b not in (0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1B)
)
_DELETE_CONTROLS = bytes.maketrans(b"", b"")


def _control_ratio(sample: bytes) -> float:
    if not sample:
        return 0.0
    kept = sample.translate(_DELETE_CONTROLS, _CONTROL_BYTES)
    return (len(sample) - len(kept)) / len(sample)


def _normalise_newlines(text: str) -> str:
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_text(data: bytes) -> str | None:
    """Decode file bytes; None when they are binary.

    Order: UTF-16/UTF-8 byte-order marks, strict UTF-8, then (only when the bytes
    look like text) Windows-1252 and finally latin-1, which never fails.
    """
    if data.startswith(codecs.BOM_UTF8):
        return _normalise_newlines(data[3:].decode("utf-8", errors="replace"))
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            return None
        return _normalise_newlines(text.replace("\x00", ""))
    sample = data[:BINARY_SNIFF_BYTES]
    if b"\x00" in sample:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        if _control_ratio(sample) > TEXT_MAX_CONTROL_RATIO:
            return None
        try:
            text = data.decode("cp1252")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
    else:
        if _control_ratio(sample) > TEXT_MAX_CONTROL_RATIO:
            return None
    return _normalise_newlines(text)


def split_lines(text: str) -> list[str]:
    """Lines as the editor numbers them (index 0 is line 1), without line breaks.

    Not `str.splitlines`, which also breaks on \\x0c, \\x1c-\\x1e, \\x85 and
    U+2028/2029 and would shift line numbers against the editor and tree-sitter.
    A final newline does not start an extra line.
    """
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines
