"""Every seed-000 input rule over JSON-RPC: bad params -> -32602 naming the field and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

INVALID_SEARCH: list[tuple[dict[str, Any], str]] = [
    ({}, "query"),
    ({"query": ""}, "query"),
    ({"query": "   "}, "query"),
    ({"query": 42}, "query"),
    ({"query": "x" * 501}, "query"),
    ({"query": "discount", "topK": "ten"}, "topK"),
    ({"query": "discount", "topK": float("nan")}, "topK"),
    ({"query": "discount", "topK": True}, "topK"),
    ({"query": "discount", "pathPrefix": "../etc"}, "pathPrefix"),
    ({"query": "discount", "pathPrefix": "src/../../etc"}, "pathPrefix"),
    ({"query": "discount", "pathPrefix": "src\u0000x"}, "pathPrefix"),
    ({"query": "discount", "pathPrefix": "a" * 201}, "pathPrefix"),
    ({"query": "discount", "pathPrefix": 7}, "pathPrefix"),
    ({"query": "discount", "language": "x" * 33}, "language"),
    ({"query": "discount", "language": 3}, "language"),
    ({"query": "discount", "minScore": "high"}, "minScore"),
    ({"query": "discount", "minScore": float("inf")}, "minScore"),
    ({"query": "discount", "minScore": float("nan")}, "minScore"),
    ({"query": "discount", "mode": "fuzzy"}, "mode"),
    ({"query": "discount", "project": "nope"}, "project"),
]


async def expect_invalid(session: Any, method: str, params: Any, field: str) -> str:
    with pytest.raises(JsonRpcException) as info:
        await session.request(method, params)
    err = info.value
    assert err.code == -32602, (method, params, err.code, err.message)
    assert f"'{field}'" in err.message, (field, err.message)
    return err.message


async def test_bad_params_are_32602_with_actionable_messages(start: Any, alpha: Path) -> None:
    s = await start([alpha])
    await s.wait_indexed()
    messages = []
    for params, field in INVALID_SEARCH:
        messages.append(await expect_invalid(s, "codeCompass/search", params, field))
    # The messages say what to do, not just "invalid".
    assert any("limit is 500" in m for m in messages)
    assert any("must not contain '..'" in m for m in messages)
    assert any("known: alpha" in m for m in messages)

    await expect_invalid(s, "codeCompass/search", ["discount"], "params")
    for params, field in [
        ({}, "question"),
        ({"question": ""}, "question"),
        ({"question": "y" * 501}, "question"),
        ({"question": "why?", "topK": "5"}, "topK"),
        ({"question": "why?", "pathPrefix": "../x"}, "pathPrefix"),
        ({"question": "why?", "minScore": float("inf")}, "minScore"),
        ({"question": "why?", "project": "gamma"}, "project"),
    ]:
        await expect_invalid(s, "codeCompass/ask", params, field)
    await expect_invalid(s, "codeCompass/reindex", {"project": "gamma"}, "project")
    await expect_invalid(s, "codeCompass/reindex", {"project": 5}, "project")

    # The server is still healthy after all that.
    ok = await s.request("codeCompass/search", {"query": "compute_discount"})
    assert ok["hits"]


async def test_top_k_is_clamped_not_rejected(start: Any, alpha: Path) -> None:
    s = await start([alpha])
    await s.wait_indexed()
    low = await s.request("codeCompass/search", {"query": "order total discount", "topK": 0})
    assert len(low["hits"]) == 1
    high = await s.request("codeCompass/search", {"query": "order total discount", "topK": 10**6})
    assert 1 < len(high["hits"]) <= 20
    frac = await s.request("codeCompass/search", {"query": "order total discount", "topK": 2.7})
    assert len(frac["hits"]) == 2
