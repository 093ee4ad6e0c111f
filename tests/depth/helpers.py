"""A tiny in-memory corpus and a term-overlap search over it, standing in for the index."""

from __future__ import annotations

from code_compass_server.depth.terms import content_terms
from code_compass_server.records import SearchHit

CORPUS = {
    "api/session.py": (
        1,
        4,
        "DEFAULT_TIMEOUT = 30\n\ndef request(url, timeout=DEFAULT_TIMEOUT): ...",
    ),
    "settings.py": (10, 12, "REQUEST_TIMEOUT = 60  # seconds; overrides the session default"),
    "http/client.py": (5, 20, "def retry_with_backoff(send, attempts=MAX_RETRIES): ..."),
    "index/writer.py": (
        30,
        60,
        "def commit(self):\n    with self._lock:\n        self._swap_reader()",
    ),
    "docs/chunking.md": (1, 8, "PDF pages are split into chunks of 1000 characters, overlap 200."),
}


def search(query: str, k: int) -> list[SearchHit]:
    q = content_terms(query)
    hits = []
    for path, (start, end, text) in CORPUS.items():
        overlap = len(q & content_terms(path + " " + text))
        if overlap:
            score = min(1.0, 0.4 + 0.15 * overlap)
            hits.append(SearchHit(path, start, end, score, "", "module", "python", "p", text))
    hits.sort(key=lambda h: h.score, reverse=True)
    return hits[:k]


def many_hits(query: str, k: int) -> list[SearchHit]:
    """k long hits with decreasing scores: forces trimming."""
    body = "\n".join(
        f"value_{i} = compute_{i}(x) + other_{i}  # long line of code" for i in range(60)
    )
    return [
        SearchHit(
            f"pkg/mod{i}.py", 1, 60, 0.99 - i * 0.01, f"f{i}", "function", "python", "p", body
        )
        for i in range(k)
    ]
