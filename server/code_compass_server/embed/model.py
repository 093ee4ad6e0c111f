"""The embedder: tokenizer + int8 ONNX session -> L2-normalised 384-dim float32 vectors."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from code_compass_server.constants import (
    EMBED_BATCH_PAD_WASTE,
    EMBED_BATCH_SIZE,
    EMBED_DIMS,
    EMBED_MAX_TOKENS,
    EMBED_THREADS_ENV,
)
from code_compass_server.embed.model_id import model_id_for, model_sha256
from code_compass_server.embed.paths import require_model_files
from code_compass_server.embed.provision import ensure_model
from code_compass_server.embed.query_tokens import QueryTokens

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)


def default_threads() -> int:
    """`$CODE_COMPASS_EMBED_THREADS`, else all cores but one (the editor keeps one)."""
    env = os.environ.get(EMBED_THREADS_ENV, "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ValueError(f"{EMBED_THREADS_ENV}={env!r} is not an integer") from None
    return max(1, (os.cpu_count() or 2) - 1)


def execution_providers(available: Sequence[str]) -> list[str]:
    """CUDA first when `onnxruntime-gpu` is installed and sees a GPU (the optional `gpu` extra,
    never required), the CPU always as the fallback."""
    gpu = ["CUDAExecutionProvider"] if "CUDAExecutionProvider" in available else []
    return [*gpu, "CPUExecutionProvider"]


def length_buckets(
    lengths: Sequence[int],
    max_batch: int = EMBED_BATCH_SIZE,
    max_waste: float = EMBED_BATCH_PAD_WASTE,
) -> list[list[int]]:
    """Group indices into batches of similar length so padding wastes at most `max_waste` of tokens.

    Indices are visited longest first; a batch closes when it is full or when adding the next
    (shorter) item would make padding exceed the budget.
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    real = 0
    for i in order:
        if current:
            width = lengths[current[0]]  # longest in the batch
            padded = width * (len(current) + 1)
            if len(current) >= max_batch or 1 - (real + lengths[i]) / padded > max_waste:
                batches.append(current)
                current, real = [], 0
        current.append(i)
        real += lengths[i]
    if current:
        batches.append(current)
    return batches


def _token_id(tokenizer: Tokenizer, token: str) -> int:
    found = tokenizer.token_to_id(token)
    if found is None:
        raise ValueError(f"the tokenizer has no {token} token")
    return int(found)


class Embedder:
    """Sentence vectors from all-MiniLM-L6-v2 (int8). Thread-safe: runs may overlap."""

    def __init__(
        self,
        model_dir: Path | None = None,
        threads: int | None = None,
        *,
        sha_stamp: Path | None = None,
        optimized_dir: Path | None = None,
    ) -> None:
        """`sha_stamp`: where to remember the model's hash between processes (model_sha256).
        `optimized_dir` (one-shot query processes): keep the graph ONNX Runtime optimized
        there and load it with the optimizer off next time, weights not prepacked — a
        session for one query costs about 0.037 s of CPU instead of 0.050 (same vectors)."""
        # No folder given: the default one, built on first use outside a checkout.
        self.model_dir = model_dir if model_dir is not None else ensure_model()
        model_path, tokenizer_path = require_model_files(self.model_dir)
        self.model_sha256 = model_sha256(model_path, sha_stamp)
        self.threads = threads if threads is not None else default_threads()
        self.dims = EMBED_DIMS
        self.max_tokens = EMBED_MAX_TOKENS

        self._tokenizer_path = tokenizer_path
        # Loaded at first use: a one-shot search tokenizes its query with `_query_tokens`.
        self._batch_tok: Tokenizer | None = None
        self._cls_sep = (0, 0)  # their ids, read with the tokenizer
        self._counter_tok: Tokenizer | None = None  # made at first use: a query never counts
        self._tok_lock = threading.Lock()
        self._query_tokens = (
            QueryTokens.load(tokenizer_path, optimized_dir, EMBED_MAX_TOKENS)
            if optimized_dir is not None
            else None
        )

        import onnxruntime as ort  # ~0.1 s: paid by the processes that embed, not `status`

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle pool threads must not spin: that core belongs to the editor between runs.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.log_severity_level = 3
        providers = execution_providers(ort.get_available_providers())
        session = None
        if optimized_dir is not None and providers == ["CPUExecutionProvider"]:
            opts.add_session_config_entry("session.disable_prepacking", "1")
            # The file is ONNX Runtime's own output: tied to its version and this model.
            saved = optimized_dir / f"{self.model_id}-ort{ort.__version__}.onnx"
            session = _optimized_session(ort, model_path, saved, opts, providers)
        if session is None:
            session = ort.InferenceSession(str(model_path), opts, providers=providers)
        self.session = session
        self.device = "cuda" if "CUDA" in self.session.get_providers()[0] else "cpu"

    @property
    def _tok(self) -> Tokenizer:
        """The tokenizer that encodes texts for the model: [CLS]/[SEP], truncated."""
        with self._tok_lock:
            if self._batch_tok is None:
                from tokenizers import Tokenizer

                tok = Tokenizer.from_file(str(self._tokenizer_path))
                tok.no_padding()  # the shipped tokenizer.json pads to 128: we pad per batch
                tok.enable_truncation(EMBED_MAX_TOKENS)
                self._cls_sep = (_token_id(tok, "[CLS]"), _token_id(tok, "[SEP]"))
                self._batch_tok = tok
            return self._batch_tok

    def _counter(self) -> Tokenizer:
        """The untruncated tokenizer that counts tokens (splitting chunks into pieces)."""
        with self._tok_lock:
            if self._counter_tok is None:
                from tokenizers import Tokenizer

                counter = Tokenizer.from_file(str(self._tokenizer_path))
                counter.no_padding()
                counter.no_truncation()
                self._counter_tok = counter
            return self._counter_tok

    @property
    def model_id(self) -> str:
        """Identifies the vectors' space; changes whenever the model file changes."""
        return model_id_for(self.model_sha256)

    # --- tokens ---------------------------------------------------------------------------

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids with [CLS]/[SEP], truncated at max_tokens."""
        return [enc.ids for enc in self._tok.encode_batch(list(texts))]

    def count_tokens(self, text: str) -> int:
        """Tokens the model would see without truncation, [CLS] and [SEP] included."""
        return len(self._counter().encode(text).ids)

    def line_token_counts(self, text: str) -> list[int]:
        """Content tokens (no special tokens) on each line of `text` (split on '\\n')."""
        lines = text.split("\n")
        starts = np.cumsum([0] + [len(line) + 1 for line in lines[:-1]])
        enc = self._counter().encode(text, add_special_tokens=False)
        if not enc.offsets:
            return [0] * len(lines)
        token_starts = np.fromiter(
            (o[0] for o in enc.offsets), dtype=np.int64, count=len(enc.offsets)
        )
        line_of = np.searchsorted(starts, token_starts, side="right") - 1
        return np.bincount(line_of, minlength=len(lines)).tolist()

    def line_token_ids(self, text: str) -> list[list[int]]:
        """Content token ids (no special tokens) on each line of `text` (split on '\\n')."""
        lines = text.split("\n")
        out: list[list[int]] = [[] for _ in lines]
        enc = self._counter().encode(text, add_special_tokens=False)
        if not enc.ids:
            return out
        starts = np.cumsum([0] + [len(line) + 1 for line in lines[:-1]])
        token_starts = np.fromiter(
            (o[0] for o in enc.offsets), dtype=np.int64, count=len(enc.offsets)
        )
        line_of = np.searchsorted(starts, token_starts, side="right") - 1
        for token, line in zip(enc.ids, line_of.tolist(), strict=True):
            out[line].append(token)
        return out

    def wrap(self, content: Sequence[int]) -> list[int]:
        """[CLS] content [SEP], truncated at max_tokens as `encode` truncates."""
        if self._batch_tok is None:
            _ = self._tok  # loads the tokenizer and its special ids
        cls, sep = self._cls_sep
        return [cls, *content[: self.max_tokens - 2], sep]

    # --- vectors --------------------------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 [n, dims], L2-normalised, in the order of `texts`."""
        return self.embed_token_ids(self.encode(texts))

    def embed_query(self, text: str) -> np.ndarray:
        """float32 [dims] for one query."""
        ids = self._query_tokens.encode(text) if self._query_tokens is not None else None
        vec: np.ndarray = self.embed_token_ids([ids] if ids is not None else self.encode([text]))[0]
        return vec

    def embed_token_ids(self, ids: Sequence[Sequence[int]]) -> np.ndarray:
        out = np.zeros((len(ids), self.dims), dtype=np.float32)
        for batch in length_buckets([len(x) for x in ids]):
            width = len(ids[batch[0]])
            input_ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                input_ids[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            out[batch] = self.run(input_ids, mask)
        return out

    def run(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """One session run on padded int64 inputs -> [batch, dims] sentence vectors."""
        result = self.session.run(
            ["sentence_embedding"],
            {
                "input_ids": input_ids,
                "attention_mask": attention_mask,
                "token_type_ids": np.zeros_like(input_ids),
            },
        )
        vecs: np.ndarray = result[0]
        return vecs


def _optimized_session(
    ort: Any, model_path: Path, saved: Path, opts: Any, providers: list[str]
) -> Any | None:
    """A session on the graph optimized once and saved at `saved` (written now if missing);
    None if that fails (the caller loads the model as usual)."""
    level = opts.graph_optimization_level
    try:
        if not saved.exists():
            saved.parent.mkdir(parents=True, exist_ok=True)
            tmp = saved.with_name(f"{saved.name}.{os.getpid()}.tmp")
            # Extended, not all: layout rewrites are specific to the CPU that made them.
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
            opts.optimized_model_filepath = str(tmp)
            try:
                session = ort.InferenceSession(str(model_path), opts, providers=providers)
                os.replace(tmp, saved)
            finally:
                with contextlib.suppress(OSError):
                    tmp.unlink()
            return session
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        return ort.InferenceSession(str(saved), opts, providers=providers)
    except Exception as exc:  # damaged or foreign file: drop it, load the model itself
        log.warning("optimized model %s unusable (%s): loading the model", saved, exc)
        with contextlib.suppress(OSError):
            saved.unlink()
        opts.graph_optimization_level = level
        opts.optimized_model_filepath = ""
        return None
