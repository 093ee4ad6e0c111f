"""The `code-compass` command line: a thin front door over the engine.

Exit codes: 0 ok, 2 bad input (nothing touched), 1 unexpected failure.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from code_compass import __version__
from code_compass.constants import (
    DEFAULT_MAX_FILE_KB,
    MAX_PATH_PREFIX_CHARS,
    MAX_QUERY_CHARS,
    MAX_TOP_K,
    MIN_TOP_K,
)
from code_compass.engine import Engine
from code_compass.engine_status import status_to_json
from code_compass.errors import InputError
from code_compass.records import SearchHit, search_meta, search_reason
from code_compass.settings import EngineSettings, parse_settings
from code_compass.validation import SEARCH_MODES, clamp_top_k, validate_search

EXIT_BAD_INPUT = 2
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
    p.add_argument("-v", "--verbose", action="store_true")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="code-compass", description=__doc__)
    parser.add_argument("--version", action="version", version=f"code-compass {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("index", help="build or update the index")
    _common(p)
    p.add_argument("--no-embed", action="store_true", help="lexical index only")

    p = sub.add_parser("search", help="search the index (indexes first if needed)")
    _common(p)
    p.add_argument("query", nargs="?", help=f"what to look for (at most {MAX_QUERY_CHARS} chars)")
    p.add_argument("--queries", type=Path, help="JSONL file of {id, query} for batch search")
    _filters(p)
    p.add_argument("--mode", choices=SEARCH_MODES, default="hybrid")
    p.add_argument("--project", help="project name to search, or '*' for all projects")

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

    sub.add_parser("serve", help="run the language server over stdio")

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
    return parser


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
    p.add_argument("--min-score", type=float, default=None, help="between 0 and 1 (default 0.6)")


def _settings(args: argparse.Namespace) -> EngineSettings:
    settings = EngineSettings()
    if getattr(args, "max_file_kb", None) is not None:
        # The same key and conversion as the editor's `maxFileSizeKb` setting.
        settings, bad = parse_settings({"maxFileSizeKb": args.max_file_kb})
        if bad:
            raise InputError("--max-file-kb", "must be a positive number of kilobytes")
    return settings


def _open_engine(args: argparse.Namespace) -> tuple[Engine, list[str]]:
    engine = Engine.open(args.storage, _settings(args))
    roots = args.workspace or [Path.cwd()]
    names = [engine.add_project(root) for root in roots]
    return engine, names


def _print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


def cmd_index(args: argparse.Namespace) -> int:
    engine, _names = _open_engine(args)
    if os.environ.get("CODE_COMPASS_ANNOUNCE_START"):  # crash tests time their kills from here
        print("indexing", flush=True)
    try:
        summaries = engine.index(embed=not args.no_embed, background_embed=False)
    finally:
        engine.close()
    if args.json:
        _print_json({"projects": [s.to_json() for s in summaries]})
    else:
        for s in summaries:
            rate = s.scanned / s.seconds if s.seconds else 0.0
            print(
                f"{s.project}: {s.files} files, {s.chunks} chunks, {s.symbols} symbols, "
                f"{s.embedded} embedded; {s.changed} changed, {s.deleted} deleted, "
                f"{s.unchanged} unchanged in {s.seconds:.2f}s ({rate:.0f} files/s)"
            )
            if s.skipped:
                print("  skipped: " + ", ".join(f"{k} {v}" for k, v in s.skipped.items()))
            if s.rebuilt:
                print(f"  rebuilt from scratch: {s.rebuilt}")
    return 0


def _search_params(args: argparse.Namespace, query: Any) -> Any:
    return validate_search(
        query,
        args.top_k,
        _relative_prefix(args.path_prefix, args.workspace or [Path.cwd()]),
        args.language,
        args.min_score,
        mode=args.mode,
        project=args.project,
    )


def _relative_prefix(prefix: str | None, roots: list[Path]) -> str | None:
    """An absolute --path-prefix inside a workspace becomes relative to it; outside: bad input."""
    if not prefix or not Path(prefix).is_absolute():
        return prefix
    target = Path(prefix).expanduser().resolve()
    for root in roots:
        try:
            rel = target.relative_to(Path(root).expanduser().resolve())
        except ValueError:
            continue
        return rel.as_posix() if rel.parts else None
    listed = ", ".join(str(r) for r in roots)
    raise InputError("--path-prefix", f"{prefix} is outside the workspace ({listed})")


def _note_top_k(args: argparse.Namespace) -> None:
    """Say so when --top-k was clamped into its limits (docs/rules.md: top-k-clamp)."""
    asked = args.top_k
    if asked is not None and not MIN_TOP_K <= asked <= MAX_TOP_K:
        kept = clamp_top_k(asked)
        print(
            f"code-compass: --top-k {asked:g} is outside {MIN_TOP_K}..{MAX_TOP_K}; using {kept}",
            file=sys.stderr,
        )


def _check_language(engine: Engine, params: Any) -> None:
    """A --language the workspace has no file of is a typo, not an empty answer."""
    if params.language is None:
        return
    indexed = engine.languages(params.project)
    if params.language not in indexed:
        raise InputError(
            "--language",
            f"'{params.language}' is not a language of this workspace; "
            f"indexed: {', '.join(indexed) or 'none'}",
        )


def _format_hit(h: SearchHit) -> str:
    head = f"{h.path}:{h.start_line}-{h.end_line}  {h.score:.3f}  {h.kind} {h.symbol}".rstrip()
    body = "\n".join("    " + line for line in h.snippet.split("\n")[:6])
    return f"{head}\n{body}"


def cmd_search(args: argparse.Namespace) -> int:
    if args.queries is None and args.query is None:
        raise InputError("query", "give a query, or --queries FILE.jsonl")
    batch: list[tuple[Any, Any]] = []
    if args.queries is not None:
        try:
            lines = args.queries.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise InputError("--queries", f"cannot read {args.queries}: {exc.strerror}") from exc
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                batch.append((item["id"], _search_params(args, item["query"])))
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(
                    "--queries", f'line {n} is not {{"id", "query"}} JSON: {exc}'
                ) from exc
    else:
        batch.append((None, _search_params(args, args.query)))
    engine, names = _open_engine(args)
    try:
        engine.index(embed=False, background_embed=False)  # stat-only diff when unchanged
        _note_top_k(args)
        for qid, params in batch:
            if params.project is None:
                params = _with_project(params, names[0] if len(names) == 1 else None)
            _check_language(engine, params)
            t0 = time.perf_counter()
            hits = engine.search(params)
            took = (time.perf_counter() - t0) * 1000
            if args.json:
                out: dict[str, Any] = {
                    "hits": [h.to_json() for h in hits],
                    **search_meta(hits),
                    "tookMs": round(took, 2),
                }
                if qid is not None:
                    out = {"id": qid, **out}
                _print_json(out)
            else:
                if qid is not None:
                    print(f"# {qid}")
                if not hits:
                    print(search_reason(hits) or "no hits")
                for h in hits:
                    print(_format_hit(h))
    finally:
        engine.close()
    return 0


def _with_project(params: Any, project: str | None) -> Any:
    from dataclasses import replace

    return replace(params, project=project)


def cmd_status(args: argparse.Namespace) -> int:
    engine, _ = _open_engine(args)
    try:
        status = status_to_json(engine.status())
    finally:
        engine.close()
    if args.json:
        _print_json(status)
    else:
        for p in status["projects"]:
            print(
                f"{p['name']} ({p['root']}): {p['files']} files, {p['chunks']} chunks, "
                f"{p['embedded']}/{p['embedTotal']} embedded, index at {p['storage']}"
            )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handlers = {"index": cmd_index, "search": cmd_search, "status": cmd_status}
    try:
        logging.basicConfig(
            level=_log_level(getattr(args, "verbose", False)),
            stream=sys.stderr,
            format=_SERVE_LOG_FORMAT if args.command == "serve" else _LOG_FORMAT,
        )
        if args.command == "serve":
            from code_compass.lsp.server import run_stdio

            run_stdio()
            return 0
        if args.command == "mcp":
            from code_compass.mcp.mcp_server import run_stdio as run_mcp

            run_mcp(args.workspace or [], args.storage, _settings(args))
            return 0
        if args.command == "depth":
            from code_compass.depth.depth_command import run_depth

            result = run_depth(args.question, args.history)
            _print_json(result) if args.json else print(json.dumps(result, indent=2))
            return 0
        if args.command == "ask":
            return _cmd_ask(args)
        return handlers[args.command](args)
    except InputError as exc:
        sys.stderr.write(f"code-compass: {exc.field}: {exc.message}\n")
        return EXIT_BAD_INPUT


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


def _cmd_ask(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"query": args.question, "conversationId": args.conversation}
    for key, value in (
        ("topK", args.top_k),
        ("pathPrefix", _relative_prefix(args.path_prefix, args.workspace or [Path.cwd()])),
        ("language", args.language),
        ("minScore", args.min_score),
    ):
        if value is not None:
            params[key] = value
    from code_compass.answer.request import AskRequest

    checked = AskRequest.from_json(params).validated()  # bad input: exit 2 before opening
    engine, names = _open_engine(args)
    try:
        engine.index(embed=False, background_embed=False)
        _note_top_k(args)
        if len(names) > 1:
            params["project"] = "*"
        _check_language(engine, checked)
        stream = not args.json and sys.stdout.isatty()
        answer = engine.ask(
            params, on_text=(lambda t: print(t, end="", flush=True)) if stream else None
        )
    finally:
        engine.close()
    if args.json:
        _print_json(answer)
        return 0
    if not stream:
        print(answer["answer"])
    from code_compass.answer.messages import coverage_name, messages_for, state_name

    # Labels in the question's language, as the answer detected it.
    msg = messages_for(answer.get("meta", {}).get("questionLanguage"))
    conf = answer["confidence"]
    print(
        f"\n\n[{state_name(msg, answer['state'])} · {msg.label_confidence} {conf['score']}"
        f" · {msg.label_coverage} {coverage_name(msg, answer['coverage'])}"
        f" · {msg.label_depth} {answer['depth']}]"
    )
    for e in answer["evidences"]:
        print(
            f"  [{e['id']}] {e['path']}:{e['startLine']}-{e['endLine']}"
            f"  {msg.label_score} {e['score']:.2f}"
        )
    for c in conf.get("caveats", []):
        print(f"  {msg.label_caveat}: {c}")
    for s in answer.get("suggestions", []):
        print(f"  {msg.label_suggestion}: {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
