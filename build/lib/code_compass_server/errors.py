"""Errors that cross the engine's boundary to a front door."""

from __future__ import annotations

import errno


class InputError(ValueError):
    """Bad input from a user or client: the CLI exits 2, JSON-RPC answers -32602."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class WorkspaceError(InputError):
    """The workspace folder is missing or unusable."""

    def __init__(self, message: str) -> None:
        super().__init__("workspace", message)


# errno values that mean "the machine ran out of something", not "the code is wrong".
_EXHAUSTED_ERRNO = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large for this file system or limit",
    errno.ENOMEM: "out of memory",
    errno.EMFILE: "too many open files",
    errno.ENFILE: "too many open files (system-wide)",
}
_EXHAUSTED_TEXT = (
    ("database or disk is full", "disk full"),
    ("requested and", "disk full"),  # numpy's short write: "118272 requested and 992 written"
    ("no space left on device", "disk full"),
    ("too many open files", "too many open files"),
    ("cannot allocate memory", "out of memory"),
    ("out of memory", "out of memory"),
)


def resource_exhaustion(exc: BaseException | None) -> str | None:
    """ "disk full" / "out of memory" / "too many open files" when `exc` (or what caused it)
    is the machine running out of something; None for any other error."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, MemoryError):
            return "out of memory"
        if isinstance(exc, OSError) and exc.errno in _EXHAUSTED_ERRNO:
            return _EXHAUSTED_ERRNO[exc.errno]
        text = str(exc).lower()
        for needle, cause in _EXHAUSTED_TEXT:
            if needle in text and (needle != "requested and" or "written" in text):
                return cause
        exc = exc.__cause__ or exc.__context__
    return None
