"""The engine's settings as one typed object.

Front doors build it: the CLI from its flags, the language server from its typed client
settings (`lsp/settings.py` is the one parser of the VS Code-style `codeCompass.*` keys).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from code_compass.constants import (
    DEFAULT_MIN_SCORE,
    DEFAULT_MODEL,
    DEFAULT_TOP_K,
    LLM_MAX_TOKENS,
    LLM_TEMPERATURE,
)
from code_compass.index.scan import ScanSettings


@dataclass(frozen=True, slots=True)
class EngineSettings:
    scan: ScanSettings = field(default_factory=ScanSettings)
    embeddings: bool = True
    min_score: float = DEFAULT_MIN_SCORE
    top_k: int = DEFAULT_TOP_K
    model: str = DEFAULT_MODEL
    max_tokens: int = LLM_MAX_TOKENS
    temperature: float = LLM_TEMPERATURE
