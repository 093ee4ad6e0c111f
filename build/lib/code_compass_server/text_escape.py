"""Text from the workspace made safe for a terminal (#32).

File names, symbols, snippets and answers come from files anyone may have written. Raw, a
newline in a file name prints a fake hit line, and an escape sequence can rewrite the screen.
The CLI's text mode passes every such field through here, and answers quote file names
through `inline` (so a newline in a name cannot split a sentence); `--json` output is
JSON-escaped already. Control characters become visible escapes (`\\n`, `\\x1b`, `\\u202e`).
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, line/paragraph separators, bidi embeddings/overrides/isolates,
# and the zero-width characters that can hide text.
_OTHERS = r"\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff"
_INLINE = re.compile(r"[\x00-\x1f" + _OTHERS + "]")
_BLOCK = re.compile(r"[\x00-\x08\x0b-\x1f" + _OTHERS + "]")  # keeps \t and \n
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(m: re.Match[str]) -> str:
    ch = m.group(0)
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inline(text: object) -> str:
    """One line: every control character, newlines and tabs included, made visible."""
    return _INLINE.sub(_visible, str(text))


def block(text: object) -> str:
    """Several lines (snippets, answers): newlines and tabs kept, every other control shown."""
    return _BLOCK.sub(_visible, str(text))
