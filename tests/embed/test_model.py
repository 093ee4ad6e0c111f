"""The embedder: shapes, normalisation, semantics, tokens, threads, model id."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from code_compass_server.embed.model import Embedder, default_threads, length_buckets


def test_vectors_are_unit_float32(embedder: Embedder) -> None:
    vecs = embedder.embed(["alpha", "a much longer sentence about parsing files", ""])
    assert vecs.dtype == np.float32 and vecs.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    assert embedder.embed([]).shape == (0, 384)
    q = embedder.embed_query("alpha")
    assert q.shape == (384,)
    assert float(q @ vecs[0]) > 0.999  # same text, same vector whatever the batch


def test_similar_texts_are_closer_than_unrelated(embedder: Embedder) -> None:
    q = embedder.embed_query("open a file and read its lines")
    near, far = embedder.embed(
        [
            "def read_lines(path):\n    with open(path) as f:\n        return f.readlines()",
            "class Color(Enum):\n    RED = 1\n    GREEN = 2",
        ]
    )
    assert float(q @ near) > float(q @ far) + 0.1


def test_batching_does_not_change_vectors(embedder: Embedder) -> None:
    texts = ["short", "a somewhat longer text " * 5, "x " * 200, "medium length text here"]
    together = embedder.embed(texts)
    alone = np.stack([embedder.embed_query(t) for t in texts])
    np.testing.assert_allclose(together, alone, atol=2e-3)


def test_tokens_truncation_and_counting(embedder: Embedder) -> None:
    long = "word " * 1000
    assert embedder.count_tokens(long) == 1002  # not truncated; [CLS] + 1000 + [SEP]
    assert len(embedder.encode([long])[0]) == 256
    assert embedder.count_tokens("hello world") == 4
    assert embedder.line_token_counts("hello world\n\nfoo_bar()") == [2, 0, 5]


def test_model_id_names_the_model_and_sha(embedder: Embedder) -> None:
    assert embedder.model_id.startswith("all-MiniLM-L6-v2-int8-")
    assert embedder.model_id.endswith(embedder.model_sha256[:12])


def test_threads_default_and_env(monkeypatch: pytest.MonkeyPatch, model_dir: Path) -> None:
    monkeypatch.delenv("CODE_COMPASS_EMBED_THREADS", raising=False)
    assert default_threads() >= 1
    monkeypatch.setenv("CODE_COMPASS_EMBED_THREADS", "3")
    assert default_threads() == 3
    monkeypatch.setenv("CODE_COMPASS_MODEL_DIR", str(model_dir))
    assert Embedder().threads == 3
    monkeypatch.setenv("CODE_COMPASS_EMBED_THREADS", "many")
    with pytest.raises(ValueError, match="CODE_COMPASS_EMBED_THREADS"):
        default_threads()


def test_length_buckets_bound_padding() -> None:
    lengths = [256, 250, 10, 12, 240, 11, 255, 9]
    batches = length_buckets(lengths, max_batch=3, max_waste=0.25)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        assert len(b) <= 3
        width = max(lengths[i] for i in b)
        assert sum(lengths[i] for i in b) / (width * len(b)) >= 0.75
    assert length_buckets([5, 6], max_batch=1) == [[1], [0]]


def test_a_query_session_on_the_saved_optimized_graph_gives_the_same_vectors(
    model_dir: Path, embedder: Embedder, tmp_path: Path
) -> None:
    texts = ["how are blueprints registered", "def read_lines(path): return open(path)"]
    want = embedder.embed(texts)
    first = Embedder(model_dir, threads=1, optimized_dir=tmp_path / "opt")
    saved = list((tmp_path / "opt").glob("*.onnx"))  # beside the query tokens' word list
    assert [p.name for p in saved] == [f"{first.model_id}-ort{_ort_version()}.onnx"]
    second = Embedder(model_dir, threads=1, optimized_dir=tmp_path / "opt")  # loads that file
    for e in (first, second):
        np.testing.assert_allclose(e.embed(texts), want, atol=1e-5)
    saved[0].write_bytes(b"not a model")  # damaged: dropped, the model itself loads
    third = Embedder(model_dir, threads=1, optimized_dir=tmp_path / "opt")
    np.testing.assert_allclose(third.embed(texts), want, atol=1e-5)
    assert not saved[0].exists()


def _ort_version() -> str:
    import onnxruntime

    return str(onnxruntime.__version__)
