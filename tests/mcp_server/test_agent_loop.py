"""A scripted agent: each tool call is chosen from what the previous one returned.

The loop mimics how a coding agent uses the server: locate (search_code), read the current
lines (open_file), follow a name it read to its definition (find_symbol), ask about that
definition by its qualified name (ask_code), and check every cited passage by reading it
back (open_file).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK (`mcp` in requirements.lock) is not installed")

from tests.mcp_server.harness import mcp_client, ok, wait_indexed


async def test_search_open_find_ask_compose(sample_ws: Path, tmp_path: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []
    pending: list[tuple[str, dict[str, Any]]] = [
        ("search_code", {"query": "wait between retries back-off"})
    ]
    facts: dict[str, Any] = {}
    async with mcp_client(sample_ws, storage=tmp_path / "st") as client:
        await wait_indexed(client)
        while pending and len(calls) < 12:
            tool, arguments = pending.pop(0)
            calls.append((tool, arguments))
            result = await ok(client, tool, **arguments)
            if tool == "search_code":
                hit = result["hits"][0]
                facts["hit"] = hit
                pending.append(("open_file", {
                    "path": hit["path"], "startLine": hit["startLine"],
                    "endLine": hit["endLine"], "project": hit["project"],
                }))  # fmt: skip
            elif tool == "open_file" and "read" not in facts:
                facts["read"] = result
                name = re.search(r"def (\w+)", result["text"])
                assert name, result["text"]
                pending.append(("find_symbol", {"name": name.group(1)}))
            elif tool == "find_symbol":
                facts["definitions"] = result["definitions"]
                qualified = result["definitions"][0]["qualifiedName"]
                question = f"How does {qualified} compute the wait between retries?"
                pending.append(("ask_code", {"question": question}))
            elif tool == "ask_code":
                facts["answer"] = result
                for ev in result["evidences"]:  # verify before repeating any claim
                    pending.append(("open_file", {
                        "path": ev["path"], "startLine": ev["startLine"],
                        "endLine": ev["endLine"], "project": ev["project"],
                    }))  # fmt: skip
            else:
                facts.setdefault("checked", []).append(result)

    hit, read = facts["hit"], facts["read"]
    assert (hit["path"], hit["symbol"]) == (
        "src/config_loader.py",
        "HTTPServerSettings.retry_backoff",
    )
    assert read["text"] == hit["snippet"]  # the index and the disk agree on these lines
    assert [(d["path"], d["startLine"]) for d in facts["definitions"]] == [
        (hit["path"], hit["startLine"])
    ]
    answer = facts["answer"]
    assert answer["evidences"], answer
    assert any("2**attempt" in e["snippet"] for e in answer["evidences"])
    # Every evidence read back from disk is exactly the text the answer was grounded on.
    assert [c["text"] for c in facts["checked"]] == [e["snippet"] for e in answer["evidences"]]
    assert [t for t, _ in calls][:4] == ["search_code", "open_file", "find_symbol", "ask_code"]
