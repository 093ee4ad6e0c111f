"""Errors that cross the engine's boundary to a front door."""

from __future__ import annotations


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
