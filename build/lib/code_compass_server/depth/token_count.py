"""Token counting for context budgets.

The LLM's own tokenizer (Anthropic's) is not available offline. The stand-in is the
WordPiece tokenizer of the embedding model, shipped as package data
(code_compass_server/embedding_model/tokenizer.json): a real subword tokenizer, so counts track
code and accents far better than len(text)/4, but it is an approximation; plans keep
DEPTH_TOKEN_SAFETY headroom for the difference.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from importlib import resources

from tokenizers import Tokenizer

from code_compass_server.constants import EMBED_PACKAGE_DATA_DIR, EMBED_TOKENIZER_FILE

_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _tokenizer() -> Tokenizer:
    with _LOCK:
        data = resources.files("code_compass_server").joinpath(EMBED_PACKAGE_DATA_DIR)
        data = data.joinpath(EMBED_TOKENIZER_FILE)
        tok = Tokenizer.from_str(data.read_text("utf-8"))
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
