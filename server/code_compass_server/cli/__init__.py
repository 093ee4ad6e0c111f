"""The `code-compass` command line: a thin front door over the engine.

Exit codes: 0 ok, 1 unexpected failure, 2 bad input (nothing touched), 3 the index is being
written by another process and `index --no-wait` was given, 130 interrupted (Ctrl-C),
141 stdout closed early (`| head`).

Only the argument parser and its limits load here; each command imports what it needs, so
`--version` starts no engine and `status` no embedding model (scripts/bench_cli.py).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

from code_compass_server import __version__
from code_compass_server.cli import navigate_command
from code_compass_server.constants import (
    DEFAULT_MAX_FILE_KB,
    ENV_DATABASE_URL,
    ENV_PROJECT,
    MAX_PATH_PREFIX_CHARS,
    MAX_QUERY_CHARS,
    MAX_TOP_K,
    MIN_TOP_K,
)
from code_compass_server.errors import InputError, resource_exhaustion
from code_compass_server.team.connection import TeamIndexUnavailable
from code_compass_server.validation import SEARCH_MODES

if TYPE_CHECKING:
    from code_compass_server.embed.forked_model import ForkedModel

EXIT_BAD_INPUT = 2
EXIT_BUSY = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE
EXIT_RESOURCES = 4  # disk full, out of memory, too many open files (#32)
ENV_LOG_LEVEL = "CODE_COMPASS_LOG"  # DEBUG, INFO, WARNING (default) or ERROR; -v means INFO
_LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"
_SERVE_LOG_FORMAT = "%(asctime)s " + _LOG_FORMAT  # a long-running server: when it happened


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse's own errors are bad input too
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"code-compass: error: {message}\n")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--workspace",
        action="append",
        type=Path,
        help="workspace folder (repeat for several projects; default: current directory)",
    )
    p.add_argument(
        "--storage", type=Path, help="index folder (default: $CODE_COMPASS_HOME or user cache)"
    )
    p.add_argument(
        "--max-file-kb",
        type=int,
        help=f"skip files larger than this many KB of 1,000 bytes (default {DEFAULT_MAX_FILE_KB})",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "-v", "--verbose", action="store_true", help="log more; `index` lists skipped files"
    )
    _team(p)


def _team(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--database",
        metavar="URL",
        default=os.environ.get(ENV_DATABASE_URL) or None,
        help=f"a team index (PostgreSQL) instead of the local index (default: ${ENV_DATABASE_URL})",
    )
    p.add_argument(
        "--project",
        help="project name (team index: the shared project, default the folder's name; "
        "search: '*' for every workspace)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="code-compass", description=__doc__)
    parser.add_argument("--version", action="version", version=f"code-compass {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("index", help="build or update the index")
    _common(p)
    p.add_argument("--no-embed", action="store_true", help="lexical index only")
    p.add_argument(
        "--no-wait",
        action="store_true",
        help=f"when another process is writing the index, exit {EXIT_BUSY} instead of waiting",
    )

    p = sub.add_parser("search", help="search the index (indexes first if needed)")
    _common(p)
    p.add_argument("query", nargs="?", help=f"what to look for (at most {MAX_QUERY_CHARS} chars)")
    p.add_argument("--queries", type=Path, help="JSONL file of {id, query} for batch search")
    _filters(p)
    p.add_argument("--mode", choices=SEARCH_MODES, default="hybrid")

    p = sub.add_parser("status", help="what is indexed")
    _common(p)

    p = sub.add_parser("ask", help="answer a question from the indexed evidence")
    _common(p)
    p.add_argument("question")
    p.add_argument("--conversation", help="conversation id to continue")
    _filters(p)

    p = sub.add_parser("depth", help="the depth controller's decision alone")
    p.add_argument("question")
    p.add_argument("--history", type=Path, help="JSON list of {role, content}")
    p.add_argument("--json", action="store_true")

    navigate_command.add_parsers(sub, _common)  # definition, references

    p = sub.add_parser("serve", help="run the language server over stdio")
    _team(p)

    p = sub.add_parser("mcp", help="run the MCP server (tools for agents) over stdio")
    p.add_argument(
        "--workspace",
        action="append",
        type=Path,
        help="workspace folder (repeat for several; default: the client's roots, else cwd)",
    )
    p.add_argument(
        "--storage", type=Path, help="index folder (default: $CODE_COMPASS_HOME or user cache)"
    )
    p.add_argument("--max-file-kb", type=int, help="skip files larger than this (default 1000)")
    p.add_argument("-v", "--verbose", action="store_true")
    _team(p)

    p = sub.add_parser("db", help="an embedded team-index server (PostgreSQL + pgvector)")
    dbs = p.add_subparsers(dest="db_command", required=True, parser_class=_Parser)
    for name, text in (
        ("start", "start it (created at first start); prints its URL"),
        ("stop", "stop it"),
        ("status", "is it running, where, which version"),
    ):
        q = dbs.add_parser(name, help=text)
        _db_common(q)
    q = dbs.add_parser("user", help="database roles")
    users = q.add_subparsers(dest="user_command", required=True, parser_class=_Parser)
    q = users.add_parser("add", help="a role that can read only these projects; prints its URL")
    q.add_argument("name")
    q.add_argument("--project", action="append", required=True, help="a project it may read")
    q.add_argument("--write", action="store_true", help="it may also push to them")
    q.add_argument("--database", metavar="URL", help="an admin URL (default: the embedded one)")
    _db_common(q)
    return parser


def _db_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dir", type=Path, help="the server's folder (default: <storage>/db)")
    p.add_argument("--storage", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("-v", "--verbose", action="store_true")


def _filters(p: argparse.ArgumentParser) -> None:
    """The search filters `search` and `ask` share, with their limits (docs/rules.md)."""
    p.add_argument(
        "--top-k",
        type=float,
        default=None,
        help=f"hits to return, clamped to {MIN_TOP_K}..{MAX_TOP_K} (said on stderr)",
    )
    p.add_argument(
        "--path-prefix",
        help="only paths under this folder: relative, or absolute inside the workspace; "
        f"no '..', at most {MAX_PATH_PREFIX_CHARS} chars",
    )
    p.add_argument("--language", help="only files of this indexed language (e.g. python)")
    p.add_argument(
        "--min-score",
        type=float,
        default=None,
        help="between 0 and 1; hits below are dropped (ask: default 0.6; search: only if given)",
    )


_interrupted = False


def _on_sigint(_signum: int, _frame: FrameType | None) -> None:
    """The first Ctrl-C unwinds (the engine closes, its parse workers are shut down); a second
    one while that runs ends the process at once."""
    global _interrupted
    if _interrupted:
        os._exit(EXIT_INTERRUPTED)
    _interrupted = True
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command not in ("serve", "mcp"):  # the servers keep their own signal handling
        signal.signal(signal.SIGINT, _on_sigint)
    try:
        code = _run(args)
        if args.command not in ("serve", "mcp") and not sys.stdout.closed:
            sys.stdout.flush()  # a closed pipe shows here, inside the handlers below, not at exit
        return code
    except InputError as exc:
        sys.stderr.write(f"code-compass: {exc.field}: {exc.message}\n")
        return EXIT_BAD_INPUT
    except TeamIndexUnavailable as exc:  # said in one line; the URL's password never shown
        sys.stderr.write(f"code-compass: {exc}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("code-compass: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`| head -1`): nothing more to say to it, and no traceback.
        # stdout is pointed at /dev/null so the interpreter's final flush fails quietly too.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as exc:  # the machine ran out of something: one line, not a traceback
        cause = resource_exhaustion(exc)
        if cause is None:
            raise
        from code_compass_server.storage import storage_base

        where = storage_base(getattr(args, "storage", None))
        sys.stderr.write(
            f"code-compass: {cause} in {where} ({exc}); free some and run again: the next run "
            "repairs what this one left\n"
        )
        return EXIT_RESOURCES


def _run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=_log_level(getattr(args, "verbose", False)),
        stream=sys.stderr,
        format=_SERVE_LOG_FORMAT if args.command == "serve" else _LOG_FORMAT,
    )
    if args.command in ("serve", "mcp") and args.database:
        # The servers open their engines later (initialize, the MCP session): they read the
        # team index from the environment, as every command does without --database.
        os.environ[ENV_DATABASE_URL] = args.database
        if args.project:
            os.environ[ENV_PROJECT] = args.project
    if args.command == "serve":
        from code_compass_server.lsp.server import run_stdio

        run_stdio()
        return 0
    if args.command == "db":
        from code_compass_server.cli.team_commands import cmd_db

        return cmd_db(args)
    if args.command == "mcp":
        from code_compass_server.cli.commands import engine_settings
        from code_compass_server.mcp.mcp_server import run_stdio as run_mcp

        run_mcp(args.workspace or [], args.storage, engine_settings(args))
        return 0
    if args.command == "depth":
        import json

        from code_compass_server.depth.depth_command import run_depth

        result = run_depth(args.question, args.history)
        print(json.dumps(result, ensure_ascii=False) if args.json else json.dumps(result, indent=2))
        return 0
    if args.command == "index" and args.database:
        from code_compass_server.cli.team_commands import cmd_push

        return cmd_push(args)
    if args.command in navigate_command.COMMANDS:
        return navigate_command.cmd_navigate(args)
    if args.command == "index":
        from code_compass_server.cli.index_command import cmd_index

        return cmd_index(args)
    if args.command in ("search", "ask"):
        # One query's products are small: OpenBLAS's thread pool would cost more to start
        # (about 25 ms of CPU at numpy's import) than it saves. Set before numpy loads.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    forked = _forked_model(args)  # forked before the engine's imports, to overlap them
    try:
        from code_compass_server.cli import commands

        if args.command == "search":
            return commands.cmd_search(args, forked)
    finally:
        if forked is not None:
            forked.close()  # reaped on every path (bad input included)

    handlers: dict[str, Any] = {
        "status": commands.cmd_status,
        "ask": commands.cmd_ask,
    }
    return int(handlers[args.command](args))


def _forked_model(args: argparse.Namespace) -> ForkedModel | None:
    """A hybrid or semantic search of the local index: the query model loads in a forked child
    while this process opens, checks and searches the index (embed/forked_model.py)."""
    if (
        args.command != "search"
        or args.mode == "lexical"
        or args.queries is not None  # a batch is read (and checked) later: no child before
        or getattr(args, "database", None)
        or os.environ.get(ENV_DATABASE_URL)
    ):
        return None
    from code_compass_server.cli.search_args import search_params
    from code_compass_server.embed.forked_model import ForkedModel
    from code_compass_server.storage import storage_base

    search_params(args, args.query)  # bad input exits 2 before the child writes anything
    return ForkedModel.start(storage_base(args.storage))


def _log_level(verbose: bool) -> int:
    """-v, else $CODE_COMPASS_LOG, else WARNING: the same for `serve` and every command."""
    if verbose:
        return logging.INFO
    name = os.environ.get(ENV_LOG_LEVEL, "").strip().upper()
    if not name:
        return logging.WARNING
    level = logging.getLevelNamesMapping().get(name)
    if level is None:
        raise InputError(
            ENV_LOG_LEVEL, f"unknown level {name!r}; use DEBUG, INFO, WARNING or ERROR"
        )
    return level


if __name__ == "__main__":
    sys.exit(main())
