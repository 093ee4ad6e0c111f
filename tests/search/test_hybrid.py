"""Semantic channel filters and end-to-end hybrid search on a real index with the real model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from code_compass_server.constants import DEFAULT_MIN_SCORE
from code_compass_server.embed.model import Embedder
from code_compass_server.embed.vectors import VectorStore
from code_compass_server.engine import Engine
from code_compass_server.records import SearchParams
from code_compass_server.search.semantic import score_semantic, semantic_candidates
from code_compass_server.settings import EngineSettings
from tests.search.conftest import embed_project

FILES: dict[str, str] = {
    "net/retry.py": (
        "import random\n\n\n"
        "def retry_delay(attempt: int, cap: float = 30.0) -> float:\n"
        "    base = min(cap, 0.5 * 2**attempt)\n"
        "    return base * random.uniform(0.5, 1.0)\n"
    ),
    "net/locks.py": (
        "import time\n\n\n"
        "def acquire(lock, timeout: float) -> bool:\n"
        "    deadline = time.monotonic() + timeout\n"
        "    while time.monotonic() < deadline:\n"
        "        if lock.try_acquire():\n"
        "            return True\n"
        "        time.sleep(0.01)\n"
        "    return False\n"
    ),
    "text/slug.py": (
        "import re\n\n\n"
        "def slugify(title: str) -> str:\n"
        "    return re.sub(r'[^a-z0-9]+', '-', title.lower()).strip('-')\n"
    ),
    "web/format.ts": (
        "export function formatPrice(cents: number, currency: string): string {\n"
        "  const fmt = new Intl.NumberFormat('en', { style: 'currency', currency });\n"
        "  return fmt.format(cents / 100);\n"
        "}\n"
    ),
    "tests/test_retry.py": (
        "from net.retry import retry_delay\n\n\n"
        "def test_retry_delay_is_capped():\n"
        "    assert retry_delay(100) <= 30.0\n"
    ),
}
QUESTION = "turn an article heading into a URL-friendly identifier"  # no word of slug.py
RETRY_QUESTION = "delay before the next retry attempt"  # the test file is closer by cosine


def _params(query: str, mode: str, **kw: str | None) -> SearchParams:
    return SearchParams(query, 5, kw.get("path_prefix"), kw.get("language"), None, mode=mode)


def test_hybrid_finds_a_paraphrased_function_lexical_search_misses(
    tmp_path: Path,
    tree: Callable[[Path, dict[str, str | bytes]], Path],
    make_engine: Callable[..., Engine],
    embedder: Embedder,
) -> None:
    engine = make_engine(tree(tmp_path / "ws", dict(FILES)), settings=EngineSettings())
    engine.index(embed=True)  # the engine wires its vector store and hybrid fusion itself
    lexical = engine.search(_params(QUESTION, "lexical"))
    # Lexical search only matches stray tokens ("a" of `[^a-z0-9]`): never a usable hit.
    assert not any(h.path == "text/slug.py" and h.score >= DEFAULT_MIN_SCORE for h in lexical)
    hits = engine.search(_params(QUESTION, "hybrid"))
    assert hits and hits[0].path == "text/slug.py" and hits[0].symbol == "slugify"
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    assert hits[0].signals["cos"] > 0.2  # found by meaning, not by words
    # The implementation outranks its test.
    retry = {h.symbol: h for h in engine.search(_params(RETRY_QUESTION, "hybrid"))}
    impl, test = retry["retry_delay"], retry["test_retry_delay_is_capped"]
    # By meaning alone the two are a near tie; the category signal must decide it.
    assert abs(test.signals["cos"] - impl.signals["cos"]) < 0.05
    assert impl.score > test.score


def test_semantic_filters_and_project_isolation(
    tmp_path: Path,
    tree: Callable[[Path, dict[str, str | bytes]], Path],
    make_engine: Callable[..., Engine],
    embedder: Embedder,
) -> None:
    other: dict[str, str | bytes] = {
        "net/retry.py": FILES["net/retry.py"].replace("retry_delay", "other_delay")
    }
    engine = make_engine(tree(tmp_path / "a", dict(FILES)), tree(tmp_path / "b", other))
    engine.index()
    a, b = (engine.project(n) for n in engine.projects())
    shared = VectorStore(tmp_path / "vectors", embedder.model_id)  # both projects in one store
    assert embed_project(a, shared, embedder) > 0
    assert embed_project(b, shared, embedder) > 0

    found = semantic_candidates(
        a, _params(QUESTION, "semantic"), 20, embedder=embedder, store=shared
    )
    assert found and {c.project for c in found} == {a.name}
    assert {c.row.id for c in found} <= shared.chunk_ids(a.name)
    assert [c.semantic_rank for c in sorted(found, key=lambda c: c.semantic_rank or 0)] == list(
        range(len(found))
    )

    in_net = semantic_candidates(
        a, _params(QUESTION, "semantic", path_prefix="net/"), 20, embedder=embedder, store=shared
    )
    assert in_net and all(c.row.path.startswith("net/") for c in in_net)
    ts = semantic_candidates(
        a, _params("format money", "semantic", language="typescript"), 20, embedder=embedder,
        store=shared,
    )  # fmt: skip
    assert [c.row.path for c in ts] == ["web/format.ts"]
    scored = score_semantic(found, QUESTION)
    assert scored and all(0.0 <= c.score <= 1.0 for c in scored)
    assert [c.score for c in scored] == sorted((c.score for c in scored), reverse=True)
