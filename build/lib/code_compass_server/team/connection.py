"""Connections to a team index: one place that opens them, names failures and hides passwords."""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psycopg

CONNECT_TIMEOUT_S = 5
# A statement that runs longer than this is cancelled by the server: a request never hangs.
STATEMENT_TIMEOUT_MS = 30_000
# A push's statements (statistics of a batch, garbage of a large tree) may take longer.
PUSH_STATEMENT_TIMEOUT_MS = 600_000
_PASSWORD = re.compile(r"(?<=://)([^:/@]*):([^@]*)@")


class TeamIndexUnavailable(RuntimeError):
    """The team index cannot be reached (down, refused, timed out): said in one line."""


def safe_url(url: str) -> str:
    """The URL without its password, for messages and logs (connection strings are never logged)."""
    return _PASSWORD.sub(lambda m: f"{m.group(1)}:***@", url)


def connect(
    url: str, *, autocommit: bool = False, statement_timeout_ms: int = STATEMENT_TIMEOUT_MS
) -> psycopg.Connection:
    """A connection with pgvector's types registered and a statement time-out; TLS is whatever
    the URL asks (`sslmode=require` etc. are honoured by libpq)."""
    import psycopg
    from pgvector.psycopg import register_vector

    try:
        conn = psycopg.connect(
            url,
            autocommit=autocommit,
            connect_timeout=CONNECT_TIMEOUT_S,
            options=f"-c statement_timeout={statement_timeout_ms}",
        )
    except psycopg.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TeamIndexUnavailable(
            f"the team index at {safe_url(url)} is not reachable: {safe_url(first)}"
        ) from exc
    with contextlib.suppress(psycopg.ProgrammingError):  # no extension before the 1st migration
        register_vector(conn)
    return conn
