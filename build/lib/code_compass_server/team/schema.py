"""Schema migrations of the team index: versioned SQL files in `team/migrations/`, applied in
order on start, forward only, each in its own transaction under an advisory lock (two processes
starting at once apply each file once)."""

from __future__ import annotations

import re
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psycopg

# Arbitrary but fixed: the advisory lock every migrating process takes.
MIGRATION_LOCK = 0x43434D47
_FILE = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


class SchemaError(RuntimeError):
    """The database's schema is newer than this program, or cannot be brought up to date."""


def migrations() -> list[tuple[int, str, str]]:
    """(version, file name, SQL) of every migration shipped with the package, in order."""
    folder = resources.files("code_compass_server.team").joinpath("migrations")
    found = []
    for entry in folder.iterdir():
        m = _FILE.match(entry.name)
        if m:
            found.append((int(m.group(1)), entry.name, entry.read_text("utf-8")))
    return sorted(found)


def latest_version() -> int:
    return migrations()[-1][0]


def current_version(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT to_regclass('cc_schema') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    got = conn.execute("SELECT coalesce(max(version), 0) FROM cc_schema").fetchone()
    return int(got[0]) if got else 0


def migrate(conn: psycopg.Connection, upto: int | None = None) -> list[int]:
    """Apply the migrations this database lacks (up to `upto`); returns the versions applied."""
    target = latest_version() if upto is None else upto
    applied: list[int] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS cc_schema (version int PRIMARY KEY, name text NOT NULL, "
            "applied_at timestamptz NOT NULL DEFAULT now())"
        )
        conn.execute("GRANT SELECT ON cc_schema TO PUBLIC")
        have = current_version(conn)
        if have > latest_version():
            raise SchemaError(
                f"the team index has schema version {have}, newer than this Code Compass "
                f"({latest_version()}): upgrade code-compass-server"
            )
        for version, name, sql in migrations():
            if have < version <= target:
                with conn.transaction():
                    conn.execute(sql.encode())  # our own files, not user input
                    conn.execute(
                        "INSERT INTO cc_schema(version, name) VALUES (%s, %s)", (version, name)
                    )
                applied.append(version)
    return applied


def require_current(conn: psycopg.Connection) -> None:
    """A reader (no right to migrate) checks the schema is the one it speaks."""
    have = current_version(conn)
    if have != latest_version():
        raise SchemaError(
            f"the team index has schema version {have}, this Code Compass speaks "
            f"{latest_version()}: "
            + (
                "push once with a writing role to migrate it"
                if have < latest_version()
                else "upgrade code-compass-server"
            )
        )
