"""Engine set-up for the search evaluation: index the corpora and embed them through the
engine's own path (EmbeddingWorker.process, the persistent embedding cache), so the eval
measures exactly what users get.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from code_compass_server.engine import Engine


def open_engine(
    storage: Path,
    corpora: dict[str, Path],
    *,
    embed: bool = True,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
) -> Engine:
    """An engine with one project per corpus (name = corpus), indexed and (optionally) embedded.

    Raises when embeddings are asked for and the model is not built (scripts/setup builds it).
    """
    engine = Engine.open(storage)
    for name, tree in corpora.items():
        engine.add_project(tree, name=name)
        t0 = time.perf_counter()
        engine.index(name, embed=False)
        log(f"{name}: lexical index ready in {time.perf_counter() - t0:.1f}s")
    if not embed:
        return engine
    for name in corpora:
        t0 = time.perf_counter()
        engine.index(name, embed=True)
        if engine.embeddings.semantic_channel() is None:
            raise RuntimeError(f"embeddings unavailable: {engine.embeddings.error}")
        log(f"{name}: vectors ready in {time.perf_counter() - t0:.1f}s")
    return engine
