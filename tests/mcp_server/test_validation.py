"""Every input rule of the validation table, as an MCP tool error with the CLI's message.

Each case names the tool arguments, the exact error text, and where the CLI can express the
same input, the CLI arguments: the CLI must print the same "<field>: <message>" (after its
"code-compass: " prefix). Non-finite numbers cannot be sent by a JSON client library, so a raw
JSON-RPC exchange sends them as written JSON (1e999, NaN).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK (`mcp` in requirements.lock) is not installed")

from tests.mcp_server.harness import mcp_client, refused, server_command, server_env

LONG = "x" * 501
TOO_DEEP = "a" * 201
LANG_33 = "l" * 33

# (arguments, error text, CLI arguments with the same input or None)
SEARCH_CASES: list[tuple[dict[str, Any], str, list[str] | None]] = [
    ({"query": "   "}, "query: must not be empty; type what you are looking for",
     ["search", "   "]),
    ({"query": LONG}, "query: is 501 characters long; the limit is 500, shorten it",
     ["search", LONG]),
    ({"query": 42}, "query: must be a string", None),
    ({}, "query: is required by search_code", None),
    ({"query": "q", "topK": "five"}, "topK: must be a number between 1 and 20", None),
    ({"query": "q", "topK": True}, "topK: must be a number between 1 and 20", None),
    ({"query": "q", "pathPrefix": "../etc"},
     "pathPrefix: must not contain '..'; give a path inside the workspace",
     ["search", "q", "--path-prefix", "../etc"]),
    ({"query": "q", "pathPrefix": "src/../../etc"},
     "pathPrefix: must not contain '..'; give a path inside the workspace",
     ["search", "q", "--path-prefix", "src/../../etc"]),
    ({"query": "q", "pathPrefix": "src\0"}, "pathPrefix: must not contain a NUL character",
     None),  # argv cannot carry NUL
    ({"query": "q", "pathPrefix": TOO_DEEP}, "pathPrefix: is 201 characters; the limit is 200",
     ["search", "q", "--path-prefix", TOO_DEEP]),
    ({"query": "q", "pathPrefix": 7}, "pathPrefix: must be a string such as 'src/app'", None),
    ({"query": "q", "language": LANG_33}, "language: is 33 characters; the limit is 32",
     ["search", "q", "--language", LANG_33]),
    ({"query": "q", "language": 5}, "language: must be a string such as 'python'", None),
    ({"query": "q", "minScore": "high"}, "minScore: must be a number between 0 and 1", None),
    ({"query": "q", "mode": "fuzzy"}, "mode: must be one of hybrid, lexical, semantic", None),
    ({"query": "q", "project": 5},
     "project: must be a project name; known projects: sample", None),
    ({"query": "q", "project": "nope"},
     "project: 'nope' is not an open workspace folder; known: sample", None),
    ({"query": "q", "qeury": "q"},
     "qeury: is not a parameter of search_code; its parameters are query, topK, pathPrefix, "
     "language, minScore, mode, project", None),
]  # fmt: skip

ASK_CASES: list[tuple[dict[str, Any], str, list[str] | None]] = [
    # The CLI calls the question "query"; the message is the same.
    ({"question": ""}, "question: must not be empty; type what you are looking for",
     ["ask", ""]),
    ({"question": LONG}, "question: is 501 characters long; the limit is 500, shorten it",
     ["ask", LONG]),
    ({}, "question: is required by ask_code", None),
    ({"question": "q", "topK": "x"}, "topK: must be a number between 1 and 20", None),
    ({"question": "q", "pathPrefix": "../x"},
     "pathPrefix: must not contain '..'; give a path inside the workspace",
     ["ask", "q", "--path-prefix", "../x"]),
    ({"question": "q", "language": LANG_33}, "language: is 33 characters; the limit is 32",
     ["ask", "q", "--language", LANG_33]),
    ({"question": "q", "minScore": "x"}, "minScore: must be a number between 0 and 1", None),
    ({"question": "q", "conversationId": "c" * 129},
     "conversationId: must be a string of at most 128 characters",
     ["ask", "q", "--conversation", "c" * 129]),
    ({"question": "q", "conversationId": 12},
     "conversationId: must be a string of at most 128 characters", None),
]  # fmt: skip

FIND_CASES: list[tuple[dict[str, Any], str, list[str] | None]] = [
    ({"name": "  "}, "name: must not be empty; give the name of a function, class, ...", None),
    ({"name": 3}, "name: must be a string such as 'parse_config' or 'Config.load'", None),
    ({"name": "n" * 201}, "name: is 201 characters long; the limit is 200", None),
]  # fmt: skip

OPEN_CASES: list[tuple[dict[str, Any], str, list[str] | None]] = [
    ({"path": ""}, "path: must be a workspace-relative file path such as 'src/main.py'", None),
    ({"path": "p" * 1001}, "path: is 1001 characters; the limit is 1000", None),
    ({"path": "a.py", "startLine": 1.5},
     "startLine: must be a whole number of at least 1 (lines are 1-based)", None),
    ({"path": "a.py", "endLine": "10"},
     "endLine: must be a whole number of at least 1 (lines are 1-based)", None),
]  # fmt: skip

ALL_CASES = {
    "search_code": SEARCH_CASES,
    "ask_code": ASK_CASES,
    "find_symbol": FIND_CASES,
    "open_file": OPEN_CASES,
}


async def test_every_rule_is_a_tool_error_with_the_message(sample_ws: Path, tmp_path: Path) -> None:
    wrong: list[str] = []
    async with mcp_client(sample_ws, storage=tmp_path / "st") as client:
        for tool, cases in ALL_CASES.items():
            for arguments, expected, _cli in cases:
                got = await refused(client, tool, **arguments)
                if got != expected:
                    wrong.append(f"{tool}({str(arguments)[:60]}): {got!r} != {expected!r}")
        # Out-of-range topK is clamped, not refused (1..20).
        small = await client.call_tool("search_code", {"query": "config", "topK": 0})
        large = await client.call_tool("search_code", {"query": "config", "topK": 1000})
    assert not small.is_error and not large.is_error
    assert len(small.structured_content["hits"]) <= 1  # type: ignore[index]
    assert len(large.structured_content["hits"]) <= 20  # type: ignore[index]
    assert not wrong, "\n".join(wrong)


CLI_CASES = [
    (arguments, expected, cli)
    for cases in (SEARCH_CASES, ASK_CASES)
    for arguments, expected, cli in cases
    if cli is not None
]


@pytest.mark.parametrize(
    ("expected", "cli"), [(e, c) for _a, e, c in CLI_CASES], ids=[c[0] for *_x, c in CLI_CASES]
)
def test_the_cli_prints_the_same_message(
    expected: str, cli: list[str], sample_ws: Path, tmp_path: Path
) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "code_compass_server", *cli, "--workspace", str(sample_ws),
         "--storage", str(tmp_path / "st")],
        capture_output=True, text=True, timeout=120, env=server_env(),
    )  # fmt: skip
    assert out.returncode == 2, out.stdout + out.stderr
    field, message = expected.split(": ", 1)
    cli_field = "query" if field == "question" else field
    assert out.stderr.strip().splitlines()[-1] == f"code-compass: {cli_field}: {message}"


def _raw_exchange(command: list[str], calls: list[str]) -> list[dict[str, Any]]:
    """Initialize, then send each tools/call params object as written JSON; the results."""
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, env=server_env(),
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:

        def send(text: str) -> None:
            assert proc.stdin is not None
            proc.stdin.write(text + "\n")
            proc.stdin.flush()

        def reply(request_id: int) -> dict[str, Any]:
            assert proc.stdout is not None
            while True:
                message = json.loads(proc.stdout.readline())
                if message.get("id") == request_id:
                    return message  # type: ignore[no-any-return]

        send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }}))  # fmt: skip
        assert "result" in reply(0)
        send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        results = []
        for n, params in enumerate(calls, 1):
            send(f'{{"jsonrpc": "2.0", "id": {n}, "method": "tools/call", "params": {params}}}')
            results.append(reply(n)["result"])
        return results
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(
    ("raw_arguments", "expected", "cli"),
    [
        ('{"query": "q", "minScore": NaN}',
         "minScore: must be a finite number (not NaN or infinity)",
         ["search", "q", "--min-score", "nan"]),
        ('{"query": "q", "minScore": 1e999}',
         "minScore: must be a finite number (not NaN or infinity)",
         ["search", "q", "--min-score", "inf"]),
        ('{"query": "q", "topK": 1e999}', "topK: must be a finite number",
         ["search", "q", "--top-k", "inf"]),
    ],
)  # fmt: skip
def test_non_finite_numbers_are_refused_like_the_cli(
    raw_arguments: str, expected: str, cli: list[str], sample_ws: Path, tmp_path: Path
) -> None:
    (result,) = _raw_exchange(
        server_command([sample_ws], tmp_path / "st"),
        [f'{{"name": "search_code", "arguments": {raw_arguments}}}'],
    )
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": expected}]
    out = subprocess.run(
        [sys.executable, "-m", "code_compass_server", *cli, "--workspace", str(sample_ws),
         "--storage", str(tmp_path / "cli")],
        capture_output=True, text=True, timeout=120, env=server_env(),
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1] == f"code-compass: {expected}"
