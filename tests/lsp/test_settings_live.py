"""Settings changed while the real language server runs: every field takes effect.

Push (`didChangeConfiguration` with the settings), pull (`settings: null`, then
`workspace/configuration` per folder with scopeUri, as VS Code does) and per-folder values in
`initializationOptions.folderSettings`.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.lsp.conftest import Session, poll_until

QUESTION = {"question": "How is the discount for gold customers computed?"}


eventually = partial(poll_until, timeout=30.0)  # this module's patience


def push(s: Session, settings: dict[str, Any]) -> None:
    s.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"codeCompass": settings})
    )


async def status(s: Session) -> dict[str, Any]:
    result: dict[str, Any] = await s.request("codeCompass/status", {})
    return result


# A word of each fixture file (conftest's alpha and beta, and this module's extra files).
EVERY_FILE = "compute_discount checkout the_big_one planner forecast_rainfall zanzibar"


async def indexed_paths(s: Session, project: str) -> set[str]:
    """The project's files in the live index (those holding a word of EVERY_FILE)."""
    params = {"query": EVERY_FILE, "topK": 20, "mode": "lexical", "project": project}
    return {h["path"] for h in (await s.request("codeCompass/search", params))["hits"]}


async def files_are(s: Session, project: str, expected: set[str]) -> bool:
    st = await status(s)
    entry = next(p for p in st["projects"] if p["name"] == project)
    return entry["state"] == "ready" and await indexed_paths(s, project) == expected


async def test_scan_settings_change_reindexes_with_si_kilobytes(start: Any, alpha: Path) -> None:
    (alpha / "big.py").write_text("def the_big_one():\n    return 1\n" + "#" * 977 + "\n")
    assert (alpha / "big.py").stat().st_size == 1010  # > 1 KB of 1,000 bytes, < 1 KiB
    (alpha / "notes.plan").write_text("the planner ships in May\n")
    s = await start([alpha])
    await s.wait_indexed()
    every = {"pricing.py", "checkout.py", "docs/pricing.md", "big.py"}
    assert await indexed_paths(s, "alpha") == every

    push(s, {"maxFileSizeKb": 1})
    await eventually(lambda: files_are(s, "alpha", every - {"big.py"}))
    st = await status(s)
    assert st["settings"]["maxFileSizeKb"] == 1
    assert st["projects"][0]["skipped"].get("too_large") == 1

    push(s, {"maxFileSizeKb": 1000, "exclude": ["docs/**"]})
    await eventually(lambda: files_are(s, "alpha", every - {"docs/pricing.md"}))
    push(s, {"include": ["pricing.py", "notes.*"], "exclude": []})
    await eventually(lambda: files_are(s, "alpha", {"pricing.py"}))
    push(s, {"documentGlobs": ["*.plan"]})
    await eventually(lambda: files_are(s, "alpha", {"pricing.py", "notes.plan"}))
    messages = [m.message for m in s.client.log_messages]
    assert any("documentGlobs" in m and "re-indexing alpha" in m for m in messages), messages


async def test_search_and_answer_defaults_apply_to_the_next_request(
    start: Any, alpha: Path
) -> None:
    s = await start([alpha])
    await s.wait_indexed()
    answer = await s.request("codeCompass/ask", QUESTION)
    assert answer["evidences"]  # found above the default minScore (0.6)

    push(s, {"search": {"minScore": 1.0, "topK": 1}})

    async def applied() -> bool:
        values = (await status(s))["settings"]
        return bool(values["search.minScore"] == 1.0 and values["search.topK"] == 1)

    await eventually(applied)
    answer = await s.request("codeCompass/ask", QUESTION)
    assert answer["evidences"] == [] and answer["coverage"] == "none"
    hits = (await s.request("codeCompass/search", {"query": "discount"}))["hits"]
    assert len(hits) == 1


async def test_llm_settings_reach_the_next_ask(start: Any, alpha: Path) -> None:
    with FakeAnthropic() as fake:
        fake.forever("Gold customers get 20% off {cite:E1}.")
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test-key-not-secret"}
        s = await start([alpha], env=env)
        await s.wait_indexed()
        answer = await s.request("codeCompass/ask", QUESTION, timeout=60)
        assert answer["meta"]["llmCalled"] is True

        push(s, {"llm": {"model": "claude-test-2", "maxTokens": 321, "temperature": 0.5}})

        async def applied() -> bool:
            return bool((await status(s))["settings"]["llm.model"] == "claude-test-2")

        await eventually(applied)
        await s.request("codeCompass/ask", QUESTION, timeout=60)
        sent = [r.json for r in fake.message_requests]
        assert sent[0]["model"] == "claude-sonnet-5-5" and "temperature" not in sent[0]
        assert (sent[-1]["model"], sent[-1]["max_tokens"], sent[-1]["temperature"]) == (
            "claude-test-2",
            321,
            0.5,
        )


async def test_per_folder_settings_apply_to_that_folder_only(
    start: Any, alpha: Path, beta: Path
) -> None:
    # initializationOptions: alpha leaves out its docs; beta has the window's values.
    options = {
        "storageUri": (alpha.parent / "storage").as_uri(),
        "settings": {"embeddings": {"enabled": False}, "exclude": []},
        "folderSettings": {alpha.as_uri(): {"exclude": ["docs/**"]}, beta.as_uri(): {}},
    }
    s = await start([alpha, beta], init_options=options)
    await s.wait_indexed()
    assert await indexed_paths(s, "alpha") == {"pricing.py", "checkout.py"}
    assert await indexed_paths(s, "beta") == {"weather.py", "README.md"}
    st = await status(s)
    by_name = {p["name"]: p["settings"] for p in st["projects"]}
    assert by_name["alpha"]["exclude"] == ["docs/**"] and by_name["beta"]["exclude"] == []
    assert st["settings"]["exclude"] == []

    # Pull (VS Code): the window's values, and beta's own through its scopeUri.
    s.client.set_configuration({"embeddings": {"enabled": False}}, section="codeCompass")
    s.client.set_configuration(
        {"exclude": ["README.md"]}, section="codeCompass", scope_uri=beta.as_uri()
    )
    s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await eventually(lambda: files_are(s, "beta", {"weather.py"}))
    # alpha got the window's values back (no exclude): its docs are indexed again.
    await eventually(
        lambda: files_are(s, "alpha", {"pricing.py", "checkout.py", "docs/pricing.md"})
    )


@pytest.fixture
def embed_ready() -> None:
    from code_compass_server.embed.model import Embedder

    try:
        Embedder()
    except Exception as exc:  # the model is built by scripts/setup
        pytest.skip(f"embedding model not built (scripts/build_model.py): {exc}")


async def test_embeddings_off_and_on_live(start: Any, alpha: Path, embed_ready: None) -> None:
    s = await start([alpha])  # embeddings off
    await s.wait_indexed()
    semantic = {"query": "price reduction for premium buyers", "mode": "semantic"}
    assert (await s.request("codeCompass/search", semantic))["hits"] == []
    assert (await status(s))["embeddings"] == "off"

    push(s, {"embeddings": {"enabled": True}})

    async def all_embedded() -> bool:
        st = await status(s)
        p = st["projects"][0]
        return bool(st["embeddings"] == "on" and p["embedded"] == p["embedTotal"] == p["chunks"])

    await eventually(all_embedded, timeout=60)
    hits = (await s.request("codeCompass/search", semantic))["hits"]
    assert {"docs/pricing.md", "pricing.py"} <= {h["path"] for h in hits}

    push(s, {"embeddings": {"enabled": False}})

    async def off() -> bool:
        return bool((await status(s))["embeddings"] == "off")

    await eventually(off)
    assert (await s.request("codeCompass/search", semantic))["hits"] == []
    assert (await status(s))["projects"][0]["embedTotal"] == 0  # the worker is gone


async def test_embeddings_that_cannot_start_are_reported(start: Any, alpha: Path) -> None:
    s = await start([alpha], env={"CODE_COMPASS_MODEL_DIR": str(alpha.parent / "no-model")})
    await s.wait_indexed()
    push(s, {"embeddings": {"enabled": True}})

    async def told() -> bool:
        return any("embeddings could not start" in m.message for m in s.client.messages)

    await eventually(told)
    st = await status(s)
    assert st["embeddings"] not in ("on", "off")  # the reason the model did not load
    hits = (await s.request("codeCompass/search", {"query": "compute_discount"}))["hits"]
    assert hits  # lexical search goes on
