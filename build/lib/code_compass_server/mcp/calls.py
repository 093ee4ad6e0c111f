"""What each MCP tool does, over the Engine's public methods. No MCP SDK in here.

Arguments arrive as the JSON object the client sent; bad input raises `InputError` with the
same field and message the CLI prints. Results are JSON-ready dicts plus the text a model
reads (`ToolOutput`).
"""

from __future__ import annotations

import json
import math
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from code_compass_server.answer.request import AskRequest
from code_compass_server.constants import (
    DEFAULT_MIN_SCORE,
    MCP_FIND_SYMBOL_LIMIT,
    MCP_MAX_PATH_CHARS,
    MCP_MAX_SYMBOL_NAME_CHARS,
    MCP_OPEN_FILE_MAX_CHARS,
    MCP_OPEN_FILE_MAX_LINES,
)
from code_compass_server.engine import Engine
from code_compass_server.engine_status import status_to_json
from code_compass_server.errors import InputError
from code_compass_server.index.registry import is_secret_path
from code_compass_server.index.textio import split_lines
from code_compass_server.mcp.tools import TOOLS_BY_NAME, ToolSpec
from code_compass_server.settings import bytes_to_kb
from code_compass_server.validation import (
    ALL_PROJECTS,
    validate_project,
    validate_query,
    validate_search,
)


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A tool's result: `data` is the structured content, `text` what the model reads."""

    data: dict[str, Any]
    text: str


def _as_json_text(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False)


class CodeTools:
    """The four tools over one Engine. Thread-safe: calls run in worker threads."""

    def __init__(self, engine: Engine, max_file_bytes: int) -> None:
        self._engine = engine
        self._max_file_bytes = max_file_bytes
        self._roots: dict[str, Path] = {}  # project name -> resolved workspace folder
        self._lock = threading.Lock()

    # --- workspaces ---
    def add_workspaces(self, roots: Sequence[Path]) -> list[str]:
        """Add folders as projects; new ones start indexing and watching in the background."""
        names = []
        for root in roots:
            name = self._engine.add_project(root)
            with self._lock:
                is_new = name not in self._roots
                self._roots[name] = Path(root).expanduser().resolve()
            if is_new:
                self._engine.schedule_index(name)
                self._engine.start_watching(name)
            names.append(name)
        return names

    @property
    def projects(self) -> list[str]:
        with self._lock:
            return list(self._roots)

    # --- dispatch ---
    def call(self, tool: str, arguments: Mapping[str, Any] | None) -> ToolOutput:
        spec = TOOLS_BY_NAME[tool]
        args = _checked_arguments(spec, arguments)
        if not self.projects:  # an empty answer here would read as "not in the codebase"
            raise InputError(
                "workspace",
                "no workspace folder could be opened; start the server with --workspace DIR",
            )
        handler = {
            "search_code": self.search_code,
            "ask_code": self.ask_code,
            "open_file": self.open_file,
            "find_symbol": self.find_symbol,
            "definition": self.definition,
            "references": self.references,
        }[tool]
        return handler(args)

    # --- tools ---
    def search_code(self, args: Mapping[str, Any]) -> ToolOutput:
        t0 = time.perf_counter()
        params = validate_search(
            args.get("query"),
            args.get("topK"),
            args.get("pathPrefix"),
            args.get("language"),
            args.get("minScore"),
            mode=args.get("mode"),
        )
        project = validate_project(args.get("project"), self.projects)
        params = replace(params, project=project)
        hits = self._engine.search(params)
        data: dict[str, Any] = {
            "hits": [h.to_json() for h in hits],
            "tookMs": round((time.perf_counter() - t0) * 1000, 2),
        }
        data.update(self._index_state(project))
        if not hits:
            data["note"] = _join(
                "Nothing in the index matches this query with these filters: treat it as not "
                "found in this codebase rather than guessing a location.",
                data.get("note"),
            )
        elif max(h.score for h in hits) < DEFAULT_MIN_SCORE:
            data["note"] = _join(
                f"No hit scores {DEFAULT_MIN_SCORE} or more: these are weak guesses, so treat "
                "the answer as not found in this codebase unless a snippet plainly shows it.",
                data.get("note"),
            )
        return ToolOutput(data, _as_json_text(data))

    def ask_code(self, args: Mapping[str, Any]) -> ToolOutput:
        try:
            validate_query(args.get("question"))
        except InputError as err:
            raise InputError("question", err.message) from None
        project = validate_project(args.get("project"), self.projects)
        scope = project or (ALL_PROJECTS if len(self.projects) > 1 else None)
        params: dict[str, Any] = {
            "query": args["question"],
            "project": scope,
            "conversationId": args.get("conversationId") or uuid.uuid4().hex[:16],
        }
        for key in ("topK", "pathPrefix", "language", "minScore"):
            if args.get(key) is not None:
                params[key] = args[key]
        request = AskRequest.from_json(params)
        request.validated()  # bad input: refused before any work
        answer = self._engine.ask(request)
        answer.update(self._index_state(project))
        return ToolOutput(answer, _as_json_text(answer))

    def open_file(self, args: Mapping[str, Any]) -> ToolOutput:
        rel = _relative_path(args.get("path"))
        start = _line_number(args.get("startLine"), "startLine", 1)
        end_raw = args.get("endLine")
        end = None if end_raw is None else _line_number(end_raw, "endLine", start)
        if end is not None and end < start:
            raise InputError("endLine", f"must be at least startLine ({start})")
        project = validate_project(args.get("project"), self.projects)
        name, target = self._readable(rel, project)
        size = target.stat().st_size
        if size > self._max_file_bytes:
            raise InputError(
                "path",
                f"'{rel}' is {bytes_to_kb(size)} KB; open_file reads files up to "
                f"{bytes_to_kb(self._max_file_bytes)} KB (the index's size limit)",
            )
        # The editor's unsaved text when the language server on this storage publishes it.
        current = self._engine.read_current(name, rel)
        if current is None:
            raise InputError("path", f"'{rel}' is not a text file")
        lines = split_lines(current.text)
        total = len(lines)
        if total and start > total:
            raise InputError("startLine", f"is past the end of '{rel}', which has {total} lines")
        last = min(total, end if end is not None else start + MCP_OPEN_FILE_MAX_LINES - 1)
        last = min(last, start + MCP_OPEN_FILE_MAX_LINES - 1)
        shown: list[str] = []
        chars = 0
        for n in range(start, last + 1):
            line = lines[n - 1]
            if shown and chars + len(line) + 1 > MCP_OPEN_FILE_MAX_CHARS:
                break
            shown.append(line[:MCP_OPEN_FILE_MAX_CHARS])
            chars += len(line) + 1
        last = start + len(shown) - 1 if shown else start - 1
        wanted_last = min(total, end) if end is not None else total
        data: dict[str, Any] = {
            "project": name,
            "path": rel,
            "startLine": start,
            "endLine": max(last, start - 1),
            "totalLines": total,
            "text": "\n".join(shown),
            "truncated": last < wanted_last,
            "source": current.source,
        }
        if last < wanted_last:
            data["nextStartLine"] = last + 1
        width = len(str(max(last, 1)))
        head = f"{rel}:{start}-{last} of {total} lines (project {name})"
        if current.source == "buffer":
            head += "; unsaved editor text"
        if last < wanted_last:
            head += f"; more from line {last + 1}"
        numbered = [f"{n:>{width}}| {line}" for n, line in enumerate(shown, start)]
        return ToolOutput(data, "\n".join([head, *numbered]))

    def find_symbol(self, args: Mapping[str, Any]) -> ToolOutput:
        name = _symbol_name(args.get("name"))
        project = validate_project(args.get("project"), self.projects)
        bare = name.rsplit(".", 1)[-1]
        found: list[dict[str, Any]] = []
        for proj in [project] if project else self.projects:
            rows = [
                d
                for d in self._engine.symbols_named(bare, proj)
                if name == bare or ("." + d.qualified_name).endswith("." + name)
            ]
            # Real declarations first: a row the language resolves elsewhere (an alias, a
            # re-export, a wrapper bound to another definition) after them (a stable sort).
            real = self._engine.real_declarations(proj, rows[:MCP_FIND_SYMBOL_LIMIT])
            real += [True] * (len(rows) - len(real))
            for d, declaration in sorted(zip(rows, real, strict=True), key=lambda r: not r[1]):
                found.append(
                    {
                        "name": d.name,
                        "qualifiedName": d.qualified_name,
                        "kind": d.kind,
                        "container": d.container,
                        "path": d.path,
                        "startLine": d.start_line,
                        "endLine": d.end_line,
                        "nameLine": d.name_line,
                        "signature": d.signature,
                        "language": d.language,
                        "project": proj,
                        "declaration": declaration,
                    }
                )
        data: dict[str, Any] = {
            "name": name,
            "definitions": found[:MCP_FIND_SYMBOL_LIMIT],
            "total": len(found),
        }
        data.update(self._index_state(project))
        if not found:
            data["note"] = _join(
                f"No definition named '{name}' in the indexed code: it is not defined in this "
                "codebase (it may come from a dependency, or be spelled differently - try "
                "search_code).",
                data.get("note"),
            )
        return ToolOutput(data, _as_json_text(data))

    def definition(self, args: Mapping[str, Any]) -> ToolOutput:
        return self._navigate(args, "definitions")

    def references(self, args: Mapping[str, Any]) -> ToolOutput:
        return self._navigate(args, "references")

    def _navigate(self, args: Mapping[str, Any], key: str) -> ToolOutput:
        """`definition` and `references`: the same confinement and checks as open_file."""
        rel = _relative_path(args.get("path"))
        line = _line_number(args.get("line"), "line", 1)
        column = _column_number(args.get("column"))
        project = validate_project(args.get("project"), self.projects)
        name, _target = self._readable(rel, project)
        if key == "definitions":
            found = self._engine.definitions(name, rel, line, column)
        else:
            found = self._engine.references(name, rel, line, column)
        data: dict[str, Any] = {
            "name": found.name,
            "project": name,
            key: [loc.to_json() for loc in found.locations],
            "total": found.total,
        }
        if key == "references":
            data["byName"] = [loc.to_json() for loc in found.by_name]
        if found.outside:
            data["outside"] = found.outside
        data.update(self._index_state(project))
        if not found.name:
            note = (
                f"No identifier at {rel}:{line}:{column}: give the position of a name "
                "(open_file shows the lines with their numbers)."
            )
        elif found.outside:
            note = (
                f"'{found.name}' is defined outside this workspace ({found.outside}): a "
                "builtin, the standard library or a dependency, not in this codebase."
            )
        elif not found.locations and not data.get("byName"):
            note = f"No {key} of '{found.name}' in the indexed code."
        else:
            note = ""
        if note:
            data["note"] = _join(note, data.get("note"))
        return ToolOutput(data, _as_json_text(data))

    # --- helpers ---
    def _readable(self, rel: str, project: str | None) -> tuple[str, Path]:
        """`_locate`, refusing secret files (never read nor served)."""
        name, target = self._locate(rel, project)
        with self._lock:
            root = self._roots[name]
        if is_secret_path(root, rel, target):
            raise InputError(
                "path",
                f"'{rel}' is a secret file (keys, credentials, .env); Code Compass never reads "
                "or serves secret files",
            )
        return name, target

    def _locate(self, rel: str, project: str | None) -> tuple[str, Path]:
        """The project and resolved file for a relative path; refuses links out of the root."""
        with self._lock:
            roots = [(project, self._roots[project])] if project else list(self._roots.items())
        outside = False
        for name, root in roots:
            target = (root / rel).resolve()
            try:
                target.relative_to(root)
            except ValueError:
                outside = True  # a symbolic link (or one on the way) leads out of the workspace
                continue
            if target.is_file():
                return name, target
            if target.is_dir():
                raise InputError("path", f"'{rel}' is a folder; give the path of a file in it")
        if outside:
            raise InputError(
                "path",
                f"'{rel}' leads outside the workspace (a symbolic link); open_file reads only "
                "files inside the workspace folders",
            )
        where = f"project '{project}'" if project else ", ".join(name for name, _ in roots)
        raise InputError("path", f"no file '{rel}' in {where or 'any workspace'}")

    def _index_state(self, project: str | None) -> dict[str, Any]:
        """partialIndex and a note while files are still being indexed or embedded."""
        status = status_to_json(self._engine.status())
        scope = [p for p in status["projects"] if project is None or p["name"] == project]
        indexing = [p for p in scope if p["state"] in ("indexing", "error")]
        embedding = [p for p in scope if p["state"] == "embedding"]
        out: dict[str, Any] = {"partialIndex": bool(indexing)}
        notes = []
        if indexing:
            out["indexState"] = {
                p["name"]: {"state": p["state"], "files": p["files"]} for p in indexing
            }
            notes.append(
                "Indexing is still running, so results may be incomplete and 'not found' is "
                "not yet conclusive; repeat the call in a few seconds."
            )
        if embedding:
            out["semanticPending"] = {
                p["name"]: {"embedded": p["embedded"], "total": p["embedTotal"]} for p in embedding
            }
            notes.append(
                "Every file is indexed; the semantic part of the index is still being built, so "
                "ranking by meaning may improve shortly."
            )
        if notes:
            out["note"] = " ".join(notes)
        return out


def _join(first: str, second: Any) -> str:
    return f"{first} {second}" if second else first


def _checked_arguments(spec: ToolSpec, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    args = dict(arguments or {})
    for key in args:
        if key not in spec.parameters:
            raise InputError(
                key,
                f"is not a parameter of {spec.name}; its parameters are "
                + ", ".join(spec.parameters),
            )
    for key in spec.required:
        if args.get(key) is None:
            raise InputError(key, f"is required by {spec.name}")
    return args


def _relative_path(raw: Any) -> str:
    """A workspace-relative '/' path; '..', absolute paths and NUL are refused outright."""
    if not isinstance(raw, str) or not raw.strip():
        raise InputError("path", "must be a workspace-relative file path such as 'src/main.py'")
    if "\0" in raw:
        raise InputError("path", "must not contain a NUL character")
    if len(raw) > MCP_MAX_PATH_CHARS:
        raise InputError("path", f"is {len(raw)} characters; the limit is {MCP_MAX_PATH_CHARS}")
    norm = raw.strip().replace("\\", "/")
    if PurePosixPath(norm).is_absolute() or PureWindowsPath(raw.strip()).is_absolute():
        raise InputError(
            "path",
            "must be relative to the workspace folder, as search results give it "
            "('src/main.py'), not absolute",
        )
    if PureWindowsPath(raw.strip()).drive:
        raise InputError("path", "must be relative to the workspace folder, without a drive")
    parts = [p for p in norm.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise InputError("path", "must not contain '..'; give a path inside the workspace")
    if not parts:
        raise InputError("path", "must name a file, not the workspace folder itself")
    return "/".join(parts)


def _line_number(raw: Any, field: str, default: int) -> int:
    if raw is None:
        return default
    ok = (
        isinstance(raw, int | float)
        and not isinstance(raw, bool)
        and math.isfinite(raw)
        and float(raw).is_integer()
        and raw >= 1
    )
    if not ok:
        raise InputError(field, "must be a whole number of at least 1 (lines are 1-based)")
    return int(raw)


def _column_number(raw: Any) -> int:
    if raw is None:
        raise InputError("column", "is required: the 1-based column of the identifier")
    try:
        return _line_number(raw, "column", 1)
    except InputError:
        raise InputError(
            "column", "must be a whole number of at least 1 (columns are 1-based)"
        ) from None


def _symbol_name(raw: Any) -> str:
    if not isinstance(raw, str):
        raise InputError("name", "must be a string such as 'parse_config' or 'Config.load'")
    name = raw.strip()
    if not name:
        raise InputError("name", "must not be empty; give the name of a function, class, ...")
    if len(name) > MCP_MAX_SYMBOL_NAME_CHARS:
        raise InputError(
            "name", f"is {len(name)} characters long; the limit is {MCP_MAX_SYMBOL_NAME_CHARS}"
        )
    return name
