"""The MCP tools as a model sees them: names, descriptions, JSON input schemas, hints.

The schemas describe the arguments; they do not enforce the limits. Limits are enforced by
the validation every front door shares (`validation.py`), so an agent gets the same message
the CLI prints, whichever client it runs in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from code_compass_server.constants import (
    DEFAULT_MIN_SCORE,
    DEFAULT_TOP_K,
    MAX_LANGUAGE_CHARS,
    MAX_PATH_PREFIX_CHARS,
    MAX_PER_PROJECT_ALL_SCOPE,
    MAX_QUERY_CHARS,
    MAX_TOP_K,
    MCP_FIND_SYMBOL_LIMIT,
    MCP_OPEN_FILE_MAX_LINES,
    MIN_TOP_K,
    SYMBOL_REFERENCES_LIMIT,
)
from code_compass_server.validation import SEARCH_MODES


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: what `tools/list` shows and which argument names `tools/call` accepts."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = True
    idempotent: bool = True
    open_world: bool = False  # True: may reach a service outside this machine

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(self.input_schema["properties"])

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(self.input_schema.get("required", ()))


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


_TOP_K = {
    "type": "integer",
    "default": DEFAULT_TOP_K,
    "description": f"How many results (default {DEFAULT_TOP_K}); clamped to "
    f"{MIN_TOP_K}-{MAX_TOP_K}.",
}
_PATH_PREFIX = {
    "type": "string",
    "description": "Only files under this workspace-relative folder, e.g. 'src/api'. "
    f"No '..'; at most {MAX_PATH_PREFIX_CHARS} characters.",
}
_LANGUAGE = {
    "type": "string",
    "description": "Only files of this language, e.g. 'python', 'typescript', 'go', "
    f"'markdown' (case-insensitive; at most {MAX_LANGUAGE_CHARS} characters).",
}
_PROJECT = {
    "type": "string",
    "description": "Workspace folder name (the `project` field of a result), or '*' for every "
    "workspace (the default).",
}

SEARCH_CODE = ToolSpec(
    name="search_code",
    title="Search the codebase",
    description=(
        "Find where something is implemented, defined, configured or documented in the "
        "indexed workspace: identifiers (`parse_config`), phrases, or a plain description of "
        "behaviour ('retry with exponential back-off'). Returns ranked passages with path, "
        "startLine-endLine (1-based, inclusive), a calibrated score in [0, 1], the enclosing "
        "symbol and a snippet from the index.\n"
        "Use it first to locate code, then `open_file` to read the current lines around a hit "
        "(snippets can be a few seconds behind unsaved edits). Use `find_symbol` instead when "
        "you know an exact name and want its definition; `ask_code` when you want an "
        "explanation with citations.\n"
        f"Scores: >= {DEFAULT_MIN_SCORE} is a likely match; lower scores are weak guesses "
        "(the result then carries a note). An empty list, or only weak hits, is a real answer: "
        "the thing is not in this codebase (or is named differently) - say so rather than "
        "guess a path. "
        "mode: 'hybrid' (default), 'lexical' (exact words and identifiers) or 'semantic' "
        "(meaning). With several workspaces every one is searched, at most "
        f"{MAX_PER_PROJECT_ALL_SCOPE} hits from each, unless `project` names one. If the "
        "result says partialIndex, indexing is still running: repeat the call in a few seconds "
        "before concluding that something is absent."
    ),
    input_schema=_object(
        {
            "query": {
                "type": "string",
                "description": "What to look for (1-"
                f"{MAX_QUERY_CHARS} characters): an identifier, a phrase or a description.",
            },
            "topK": _TOP_K,
            "pathPrefix": _PATH_PREFIX,
            "language": _LANGUAGE,
            "minScore": {
                "type": "number",
                "description": "Drop hits scoring below this (0-1). Default: no filter; "
                f"{DEFAULT_MIN_SCORE} keeps only likely matches.",
            },
            "mode": {
                "type": "string",
                "enum": list(SEARCH_MODES),
                "default": "hybrid",
                "description": "hybrid (default): words and meaning; lexical: exact words and "
                "identifiers; semantic: meaning only.",
            },
            "project": _PROJECT,
        },
        ["query"],
    ),
)

ASK_CODE = ToolSpec(
    name="ask_code",
    title="Answer a question from the code",
    description=(
        "Answer a question about this codebase ('how does X work', 'where is Y handled', 'why "
        "does Z happen') from evidence only. Returns `answer` whose claims cite evidence as "
        "[E1], [E2]..., the `evidences` (path, startLine-endLine, score, the lines re-read "
        "from disk), `state` (OK, PARTIAL, AMBIGUOUS or FAIL), `confidence` (0-100, with "
        "caveats), `coverage` (high, medium, low, none) and `suggestions`.\n"
        f"Only passages scoring >= minScore (default {DEFAULT_MIN_SCORE}) are used. When none "
        "qualifies the answer is the fixed 'Not enough evidence...' text and no language model "
        "is called: that is a real answer (the codebase does not show it), not a failure - "
        "report it instead of filling the gap from general knowledge. Lower minScore or "
        "rephrase only if you have reason to think the code is there. Without an Anthropic "
        "API key on the server the answer is extractive: a list of the relevant passages, "
        "still with path:line evidence you can read with `open_file`.\n"
        "For a follow-up question, pass back the `conversationId` of the previous result. "
        "To just locate code, `search_code` and `find_symbol` are faster."
    ),
    input_schema=_object(
        {
            "question": {
                "type": "string",
                "description": f"The question (1-{MAX_QUERY_CHARS} characters), in any language.",
            },
            "conversationId": {
                "type": "string",
                "description": "The conversationId of an earlier ask_code result, to ask a "
                "follow-up with that conversation as context. Omit to start a new one.",
            },
            "topK": {
                "type": "integer",
                "description": "Evidence passages to use at most (default: "
                f"{DEFAULT_TOP_K}, more for broad questions); clamped to {MIN_TOP_K}-{MAX_TOP_K}.",
            },
            "pathPrefix": _PATH_PREFIX,
            "language": _LANGUAGE,
            "minScore": {
                "type": "number",
                "default": DEFAULT_MIN_SCORE,
                "description": "Evidence must score at least this (0-1; default "
                f"{DEFAULT_MIN_SCORE}). Lower values admit weaker, riskier evidence.",
            },
            "project": _PROJECT,
        },
        ["question"],
    ),
    idempotent=False,
    open_world=True,
)

OPEN_FILE = ToolSpec(
    name="open_file",
    title="Read lines of a workspace file",
    description=(
        "Read the current text of a file in the workspace, by line range: to verify a search "
        "hit or a cited [E#] before relying on it, or to read around it. `path` is "
        "workspace-relative, exactly as results give it ('src/app/main.py'); absolute paths, "
        "'..' and links that lead outside the workspace are refused. Lines are 1-based and "
        f"inclusive; at most {MCP_OPEN_FILE_MAX_LINES} lines per call (the result's "
        "nextStartLine says where to continue). The text shown has line numbers for citing "
        "path:line. When the file is open in the editor with unsaved changes, the text is the "
        "editor's (result source 'buffer'), else the file on disk (source 'disk'). "
        "A 'no such file' error is a real answer: that file does not exist here."
    ),
    input_schema=_object(
        {
            "path": {
                "type": "string",
                "description": "Workspace-relative file path, '/' separated.",
            },
            "startLine": {
                "type": "integer",
                "default": 1,
                "description": "First line to return (1-based; default 1).",
            },
            "endLine": {
                "type": "integer",
                "description": "Last line to return (inclusive; default: startLine + "
                f"{MCP_OPEN_FILE_MAX_LINES - 1}, or the end of the file).",
            },
            "project": {
                "type": "string",
                "description": "Workspace folder name (the `project` field of a search hit). "
                "Needed only when several workspaces hold the same path.",
            },
        },
        ["path"],
    ),
)

FIND_SYMBOL = ToolSpec(
    name="find_symbol",
    title="Find where a name is defined",
    description=(
        "Look up the definitions of a function, method, class, interface, type or other "
        "symbol by exact name ('parse_config', or qualified 'HTTPServerSettings.retry_backoff') "
        "in the symbol table of the indexed code. Returns each definition's path, "
        "startLine-endLine, kind, container and signature. Faster and more precise than "
        "search_code when you know the name. Real declarations come first: a row that the "
        "language resolves to another definition (an import alias, a re-export, a wrapper "
        "bound to another function) comes after them, with declaration=false. "
        "An empty list is a real answer: nothing of that "
        "name is defined in this codebase (it may come from a dependency, or be spelled "
        f"differently - then try search_code). At most {MCP_FIND_SYMBOL_LIMIT} definitions."
    ),
    input_schema=_object(
        {
            "name": {
                "type": "string",
                "description": "Exact symbol name, optionally qualified with its container "
                "(Class.method).",
            },
            "project": _PROJECT,
        },
        ["name"],
    ),
)

_POSITION = {
    "path": {
        "type": "string",
        "description": "Workspace-relative file path, '/' separated, as results give it.",
    },
    "line": {"type": "integer", "minimum": 1, "description": "1-based line."},
    "column": {
        "type": "integer",
        "minimum": 1,
        "description": "1-based column (characters) of any character of the identifier.",
    },
    "project": {
        "type": "string",
        "description": "Workspace folder name (the `project` field of a result). "
        "Needed only when several workspaces hold the same path.",
    },
}

DEFINITION = ToolSpec(
    name="definition",
    title="Go to the definition of the symbol at a position",
    description=(
        "Resolve the identifier at path:line:column (1-based, as compilers print positions) "
        "the way its language does - scopes, imports and re-exports, the receiver's type for "
        "a method call - and return where it is defined: path, startLine-endLine, the "
        "qualified symbol name, kind and the definition's first lines re-read from disk. "
        "Use it instead of find_symbol when a name is defined in several places (methods of "
        "different classes): it follows the code, not the name. `outside` names a symbol "
        "defined outside the workspace (builtins, standard library, dependencies): there is "
        "no workspace location for it. resolved=false marks definitions found only by name "
        "because resolution failed."
    ),
    input_schema=_object(_POSITION, ["path", "line", "column"]),
)

REFERENCES = ToolSpec(
    name="references",
    title="Find the code that uses the symbol at a position",
    description=(
        "Every place in the workspace's code where the symbol at path:line:column (1-based) "
        "is used, resolved as its language does: tokens of the same name that belong to "
        "another definition are not listed. The definition itself comes first (kind "
        "'definition'), as compilers list it. Each reference has path, line, column and the "
        "line's text. `byName` lists tokens of the name whose resolution failed (maybe "
        f"uses, unverified). At most {SYMBOL_REFERENCES_LIMIT} of each; `total` counts them all."
    ),
    input_schema=_object(_POSITION, ["path", "line", "column"]),
)

TOOL_SPECS: tuple[ToolSpec, ...] = (
    SEARCH_CODE,
    ASK_CODE,
    OPEN_FILE,
    FIND_SYMBOL,
    DEFINITION,
    REFERENCES,
)
TOOLS_BY_NAME: dict[str, ToolSpec] = {t.name: t for t in TOOL_SPECS}

SERVER_INSTRUCTIONS = (
    "Code Compass answers questions about the open workspace from evidence: every result "
    "carries workspace-relative paths and 1-based line ranges you can cite as path:line. "
    "Locate with find_symbol (exact names) or search_code (words or descriptions), follow "
    "code with definition and references (a position, resolved as the language does), read the "
    "current lines with open_file, and use ask_code for explanations with citations. "
    "'Not found' and 'Not enough evidence' are real answers about this codebase: report them "
    "rather than guessing."
)
