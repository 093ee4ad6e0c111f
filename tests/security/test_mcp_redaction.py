"""No secret leaves through the MCP front door (#32): search_code, ask_code (evidence) and
open_file results are redacted like the LLM prompt, since a tool result goes straight into an
agent's model. Both corpora: the planted one (67 values of 48 kinds) and the prose one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK (`mcp` in requirements.lock) is not installed")

from mcp import types

from tests.mcp_server.harness import mcp_client, wait_indexed
from tests.security.prose_secrets import build_cases
from tests.security.secrets_corpus import build_corpus, fragments


def _write_prose(root: Path) -> dict[str, list[str]]:
    """The prose cases as files, one per case; file -> the values planted in it."""
    planted: dict[str, list[str]] = {}
    for i, case in enumerate(build_cases()):
        rel = (
            f"prose/{i:03d}/Dockerfile"
            if case.suffix == "Dockerfile"
            else f"prose/{i:03d}{case.suffix}"
        )
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{case.name}\n\n{case.text}\n", encoding="utf-8")
        planted.setdefault(rel, []).append(case.value)
    return planted


def _all_text(result: types.CallToolResult) -> str:
    parts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    parts.append(json.dumps(result.structured_content or {}, ensure_ascii=False))
    return "\n".join(parts)


async def test_no_secret_in_any_mcp_result(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    corpus = build_corpus()
    corpus.write(ws)
    planted = {rel: [] for rel in corpus.files}
    for p in corpus.planted:
        planted[p.file].append(p.value)
    planted.update(_write_prose(ws))
    topics = dict(corpus.topics)
    results: list[tuple[str, str]] = []
    async with mcp_client(ws, storage=tmp_path / "st") as client:
        await wait_indexed(client)

        async def run(tool: str, **arguments: Any) -> str:
            result = await client.call_tool(tool, arguments)
            text = _all_text(result)
            results.append((f"{tool} {arguments}", text))
            return text

        for rel in sorted(planted):
            opened = await run("open_file", path=rel)
            assert "[REDACTED]" in opened, rel  # the file was read and masked, not refused
        for rel, topic in topics.items():
            await run("search_code", query=topic, pathPrefix=rel, minScore=0.0)
            await run("ask_code", question=topic, pathPrefix=rel, minScore=0.0)
        for query in ("twilio auth token", "password admin", "stripe secret key", "api key"):
            await run("search_code", query=query, minScore=0.0, topK=20)
    leaked = [
        (where, value[:12])
        for rel, values in planted.items()
        for value in values
        for frag in fragments(value)
        for where, text in results
        if frag and frag in text
    ]
    assert leaked == [], leaked[:10]
    assert len(results) >= len(planted) + 2 * len(topics)
