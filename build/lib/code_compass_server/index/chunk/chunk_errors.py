"""Why a file yields no chunks at all."""

from __future__ import annotations


class SkipFile(Exception):
    """Raised by `parse_file`; `reason` is counted like the scanner's skip reasons.

    Reasons: binary, generated, minified, long_line, pdf_error, pdf_limits.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
