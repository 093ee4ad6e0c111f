"""The realistic question set's corpora opened in process, for the scripts that search them
through `Engine` directly (eval_query_builder.py, eval_multilingual.py, bench_query_builder.py):
one place for the storage, the project and the questions of a split."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from code_compass_server.engine import Engine  # noqa: E402
from code_compass_server.settings import EngineSettings  # noqa: E402
from eval_realqa import QUESTIONS, storage_for  # noqa: E402
from fetch_corpora import Corpus, corpus_dir, fetch  # noqa: E402


def load_questions(split: str, corpora: Iterable[str] | None = None) -> list[dict[str, object]]:
    """The questions of `split` ("dev", "test" or "both"), of the named corpora when given."""
    splits = {"dev", "test"} if split == "both" else {split}
    wanted = set(corpora) if corpora is not None else None
    return [
        q
        for q in map(json.loads, QUESTIONS.read_text(encoding="utf-8").splitlines())
        if q["split"] in splits and (wanted is None or q["corpus"] in wanted)
    ]


@contextmanager
def open_corpus(corpus: Corpus, *, lexical: bool = False) -> Iterator[tuple[Engine, str]]:
    """The engine over eval_realqa's storage of `corpus` (fetched and indexed when missing or
    stale: a re-run only stats the files; with vectors unless `lexical`) and its project name."""
    fetch(corpus)
    engine = Engine.open(storage_for(corpus, lexical), EngineSettings(embeddings=not lexical))
    try:
        name = engine.add_project(corpus_dir(corpus))
        t0 = time.perf_counter()
        engine.index(embed=not lexical, background_embed=False)
        print(f"{corpus.name}: indexed in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        yield engine, name
    finally:
        engine.close()
