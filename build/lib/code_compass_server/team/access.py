"""Roles of the team index: who may read (or write) which projects (`code-compass db user add`).

Isolation is the database's: every table has row-level security (migrations/0001), and a role
sees the rows of the projects `cc_access` grants it, whatever SQL it sends.
"""

from __future__ import annotations

import re
import secrets
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit, urlunsplit

from code_compass_server.errors import InputError

if TYPE_CHECKING:
    import psycopg

_ROLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
TABLES = (
    "cc_projects", "cc_access", "cc_tree", "cc_path_terms", "cc_blobs", "cc_chunks",
    "cc_symbols", "cc_postings", "cc_term_df", "cc_field_stats", "cc_pieces", "cc_vectors",
)  # fmt: skip
WRITE_TABLES = (*TABLES[2:], "cc_projects")


def check_role_name(name: str) -> str:
    if not _ROLE.match(name):
        raise InputError(
            "name", f"{name!r} is not a role name: lower-case letters, digits and _, at most 63"
        )
    return name


def ensure_project(conn: psycopg.Connection, name: str) -> int:
    """The project's id, created when new (needs a role that may create projects)."""
    row = conn.execute("SELECT id FROM cc_projects WHERE name = %s", (name,)).fetchone()
    if row:
        return int(row[0])
    got = conn.execute(
        "INSERT INTO cc_projects(name) VALUES (%s) ON CONFLICT (name) DO UPDATE SET name = "
        "EXCLUDED.name RETURNING id",
        (name,),
    ).fetchone()
    assert got is not None
    return int(got[0])


def add_user(
    conn: psycopg.Connection, admin_url: str, name: str, projects: list[str], *, write: bool
) -> str:
    """Create (or update) role `name` with access to `projects` only; returns its URL."""
    from psycopg import sql

    check_role_name(name)
    if not projects:
        raise InputError("project", "name at least one project the role may read (--project P)")
    password = secrets.token_urlsafe(18)
    role = sql.Identifier(name)
    with conn.transaction():
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
        verb = sql.SQL("ALTER") if exists else sql.SQL("CREATE")
        conn.execute(
            sql.SQL(
                "{} ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD {}"
            ).format(verb, role, sql.Literal(password))
        )
        conn.execute(
            sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                sql.Identifier(conn.info.dbname), role
            )
        )
        conn.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(role))
        tables = sql.SQL(", ").join(sql.Identifier(t) for t in TABLES)
        conn.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(tables, role))
        if write:
            wt = sql.SQL(", ").join(sql.Identifier(t) for t in WRITE_TABLES)
            conn.execute(sql.SQL("GRANT INSERT, UPDATE, DELETE ON {} TO {}").format(wt, role))
        for project in projects:
            pid = ensure_project(conn, project)
            conn.execute(
                "INSERT INTO cc_access(role_name, project_id, can_write) VALUES (%s, %s, %s) "
                "ON CONFLICT (role_name, project_id) DO UPDATE SET can_write = EXCLUDED.can_write",
                (name, pid, write),
            )
    parts = urlsplit(admin_url)
    host = parts.hostname or ""
    netloc = f"{quote(name)}:{quote(password)}@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
