"""The query commands (`search`, `status`, `ask`) and what every command opens: the engine."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from code_compass_server.cli.search_args import relative_prefix, search_params
from code_compass_server.constants import MAX_TOP_K, MIN_TOP_K
from code_compass_server.engine import Engine
from code_compass_server.engine_status import status_to_json
from code_compass_server.errors import InputError
from code_compass_server.records import SearchHit, search_meta, search_reason
from code_compass_server.settings import EngineSettings, parse_settings
from code_compass_server.text_escape import block, inline
from code_compass_server.validation import ALL_PROJECTS, clamp_top_k

if TYPE_CHECKING:
    from code_compass_server.answer.messages import Messages
    from code_compass_server.embed.forked_model import ForkedModel


def engine_settings(args: argparse.Namespace) -> EngineSettings:
    settings = EngineSettings()
    if getattr(args, "max_file_kb", None) is not None:
        # The same key and conversion as the editor's `maxFileSizeKb` setting.
        settings, bad = parse_settings({"maxFileSizeKb": args.max_file_kb})
        if bad:
            raise InputError("--max-file-kb", "must be a positive number of kilobytes")
    return settings


def open_engine(
    args: argparse.Namespace, *, queries_only: bool = False
) -> tuple[Engine, list[str]]:
    """`queries_only`: search and ask read the committed vectors and never embed."""
    roots = args.workspace or [Path.cwd()]
    team = None
    if getattr(args, "database", None):
        from code_compass_server.team.engine_glue import TeamOptions

        named = args.project and args.project != "*"
        team = TeamOptions(args.database, {Path(r): args.project for r in roots} if named else {})
    engine = Engine.open(args.storage, engine_settings(args), queries_only=queries_only, team=team)
    names = [engine.add_project(root) for root in roots]
    return engine, names


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


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
    path, kind, symbol = inline(h.path), inline(h.kind), inline(h.symbol)
    head = f"{path}:{h.start_line}-{h.end_line}  {h.score:.3f}  {kind} {symbol}".rstrip()
    body = "\n".join("    " + inline(line) for line in h.snippet.split("\n")[:6])
    return f"{head}\n{body}"


def cmd_search(args: argparse.Namespace, forked: ForkedModel | None = None) -> int:
    """`forked`: the query model being loaded by a forked child (cli._run)."""
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
                batch.append((item["id"], search_params(args, item["query"])))
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(
                    "--queries", f'line {n} is not {{"id", "query"}} JSON: {exc}'
                ) from exc
    else:
        batch.append((None, search_params(args, args.query)))
    engine, names = open_engine(args, queries_only=True)
    try:
        if forked is not None:
            engine.embeddings.adopt(forked)  # owned (and reaped) by the engine from here
        elif any(p.mode != "lexical" for _qid, p in batch):
            engine.embeddings.preload()  # overlaps the index check below
        engine.refresh()  # indexes only when a stat says the files changed
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
                print_json(out)
            else:
                if qid is not None:
                    print(f"# {inline(qid)}")
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
    engine, _ = open_engine(args, queries_only=True)  # counts and the writer's live file
    try:
        status = status_to_json(engine.status())
    finally:
        engine.close()
    if args.json:
        print_json(status)
    else:
        for p in status["projects"]:
            where = (
                f"team index {inline(str(p.get('server', '')))}, {p.get('behind', 0)} paths behind"
                if p.get("backend") == "team"
                else f"index at {inline(p['storage'])}"
            )
            print(
                f"{inline(p['name'])} ({inline(p['root'])}): {p['state']} ({p['phase']}), "
                f"{p['files']} files, {p['chunks']} chunks, "
                f"{p['embedded']}/{p['embedTotal']} embedded, {where}"
            )
            if p.get("lastError"):
                print(f"  last error: {inline(p['lastError'])}")
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"query": args.question, "conversationId": args.conversation}
    for key, value in (
        ("topK", args.top_k),
        ("pathPrefix", relative_prefix(args.path_prefix, args.workspace or [Path.cwd()])),
        ("language", args.language),
        ("minScore", args.min_score),
    ):
        if value is not None:
            params[key] = value
    from code_compass_server.answer.request import AskRequest

    request = AskRequest.from_json(params)
    checked = request.validated()  # bad input: exit 2 before opening
    engine, names = open_engine(args, queries_only=True)
    try:
        engine.embeddings.preload()  # overlaps the index check below
        engine.refresh()
        _note_top_k(args)
        if len(names) > 1:
            request.project = ALL_PROJECTS
        _check_language(engine, checked)
        stream = not args.json and sys.stdout.isatty()
        answer = engine.ask(
            request, on_text=(lambda t: print(block(t), end="", flush=True)) if stream else None
        )
    finally:
        engine.close()
    if args.json:
        print_json(answer)
        return 0
    from code_compass_server.answer.messages import coverage_name, messages_for, state_name

    # Labels in the question's language, as the answer detected it.
    msg = messages_for(answer.get("meta", {}).get("questionLanguage"))
    _print_answer_text(answer, msg, streamed=stream)
    conf = answer["confidence"]
    print(
        f"\n\n[{state_name(msg, answer['state'])} · {msg.label_confidence} {conf['score']}"
        f" · {msg.label_coverage} {coverage_name(msg, answer['coverage'])}"
        f" · {msg.label_depth} {answer['depth']}]"
    )
    for e in answer["evidences"]:
        print(
            f"  [{e['id']}] {inline(e['path'])}:{e['startLine']}-{e['endLine']}"
            f"  {msg.label_score} {e['score']:.2f}"
        )
    for c in conf.get("caveats", []):
        print(f"  {msg.label_caveat}: {inline(c)}")
    for s in answer.get("suggestions", []):
        print(f"  {msg.label_suggestion}: {inline(s)}")
    return 0


def _print_answer_text(answer: dict[str, Any], msg: Messages, *, streamed: bool) -> None:
    """The answer with its unsupported and uncited sentences marked, and a legend; when the
    text was streamed, the flagged sentences are listed after it instead. A refusal says
    what was searched."""
    from code_compass_server.answer.marked_text import flagged_sentences, marked_answer

    text, legend = marked_answer(answer, msg)
    if streamed:
        flagged = flagged_sentences(answer, msg)
        if flagged:
            print("\n")
            for line in flagged:
                print(f"  {inline(line)}")
    else:
        print(block(text))
    if answer.get("searched"):
        print(f"\n{block(answer['searched'])}")
    if legend:
        print()
        for line in legend:
            print(f"  {inline(line)}")
