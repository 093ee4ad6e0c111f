"""`code-compass db …` (an embedded team-index server, its roles) and `index --database`
(push the working tree). The engine does the work (team/); this prints."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from code_compass_server.cli.commands import open_engine, print_json
from code_compass_server.errors import InputError
from code_compass_server.storage import storage_base
from code_compass_server.team.connection import (
    PUSH_STATEMENT_TIMEOUT_MS,
    TeamIndexUnavailable,
    connect,
    safe_url,
)
from code_compass_server.team.embedded import DatabaseServerError, EmbeddedServer
from code_compass_server.team.push import PushProgress, PushSummary

DB_FOLDER = "db"


def _server(args: argparse.Namespace) -> EmbeddedServer:
    return EmbeddedServer(args.dir or storage_base(args.storage) / DB_FOLDER)


def cmd_db(args: argparse.Namespace) -> int:
    try:
        return _db(args)
    except DatabaseServerError as exc:
        sys.stderr.write(f"code-compass: db: {exc}\n")
        return 1
    except TeamIndexUnavailable as exc:
        sys.stderr.write(f"code-compass: db: {exc}\n")
        return 1


def _db(args: argparse.Namespace) -> int:
    server = _server(args)
    if args.db_command == "start":
        info = server.start()
        from code_compass_server.team.push import prepare

        with connect(info.url, statement_timeout_ms=PUSH_STATEMENT_TIMEOUT_MS) as conn:
            prepare(conn)
            conn.commit()
        if args.json:
            print_json({"url": info.url, "dir": str(info.directory), "port": info.port,
                        "version": info.version})  # fmt: skip
        else:
            print(info.url)
        return 0
    if args.db_command == "stop":
        stopped = server.stop()
        if args.json:
            print_json({"stopped": stopped, "dir": str(server.directory)})
        else:
            print("stopped" if stopped else f"no server running in {server.directory}")
        return 0
    if args.db_command == "status":
        info = server.info()
        out = {"running": info.running, "dir": str(info.directory), "port": info.port,
               "version": info.version, "url": safe_url(info.url)}  # fmt: skip
        if args.json:
            print_json(out)
        else:
            state = "running" if info.running else "stopped"
            print(f"{state}: PostgreSQL {info.version} in {info.directory}, {safe_url(info.url)}")
        return 0
    if args.db_command == "user":
        from code_compass_server.team.access import add_user

        admin = getattr(args, "database", None) or server.url()
        with connect(admin, autocommit=True) as conn:
            url = add_user(conn, admin, args.name, args.project or [], write=args.write)
        if args.json:
            print_json({"url": url, "name": args.name, "projects": args.project,
                        "write": args.write})  # fmt: skip
        else:
            print(url)
        return 0
    raise InputError("db", f"unknown db command {args.db_command!r}")


def cmd_push(args: argparse.Namespace) -> int:
    """`index --database`: push each workspace to its project on the team index."""
    from code_compass_server.team.push import prepare, project_id_for

    roots = args.workspace or [Path.cwd()]
    with connect(args.database, statement_timeout_ms=PUSH_STATEMENT_TIMEOUT_MS) as conn:
        prepare(conn)  # the schema up to date before anything reads it
        conn.commit()
        for root in roots:  # a first push creates its project (when this role may)
            if Path(root).is_dir():
                project_id_for(conn, args.project or Path(root).resolve().name)
        conn.commit()
    engine, _names = open_engine(args)
    last = [0.0]

    def show(p: PushProgress) -> None:
        import time

        now = time.monotonic()
        if p.phase in ("done",) or now - last[0] > 2.0:
            last[0] = now
            total = f"/{p.total}" if p.total else ""
            sys.stderr.write(f"{p.project}: {p.phase} {p.done}{total}\n")

    try:
        summaries = engine.push(embed=not args.no_embed, progress=show)
    finally:
        engine.close()
    if args.json:
        print_json({"projects": [_summary_json(s) for s in summaries]})
    else:
        for s in summaries:
            print(
                f"{s.project}: pushed {s.files} files, {s.chunks} chunks ({s.embedded} embedded); "
                f"{s.changed} changed, {s.removed} removed; parsed {s.blobs_parsed} files "
                f"({s.chunks_parsed} chunks), embedded {s.pieces_embedded} pieces "
                f"({s.pieces_reused} reused) in {s.seconds:.1f} s"
            )
    return 0


def _summary_json(s: PushSummary) -> dict[str, object]:
    return {
        "project": s.project, "files": s.files, "chunks": s.chunks, "embedded": s.embedded,
        "changed": s.changed, "removed": s.removed, "parsedFiles": s.blobs_parsed,
        "parsedChunks": s.chunks_parsed, "reusedFiles": s.blobs_reused,
        "embeddedPieces": s.pieces_embedded, "reusedPieces": s.pieces_reused,
        "cachedPieces": s.pieces_cached,
        "treeVersion": s.tree_version, "skipped": s.skipped, "seconds": round(s.seconds, 3),
    }  # fmt: skip
