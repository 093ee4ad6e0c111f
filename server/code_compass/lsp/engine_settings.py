"""Client settings (lsp/settings.py) -> the engine's EngineSettings."""

from __future__ import annotations

from typing import Any

from code_compass.lsp.settings import Settings


def to_engine_settings(s: Settings) -> Any:
    from code_compass.settings import EngineSettings

    values: dict[str, Any] = {
        "include": list(s.include),
        "exclude": list(s.exclude),
        "maxFileSizeKb": s.max_file_size_kb,
        "embeddings.enabled": s.embeddings_enabled,
        "search.minScore": s.search_min_score,
        "search.topK": s.search_top_k,
        "llm.model": s.llm_model,
        "llm.maxTokens": s.llm_max_tokens,
        "llm.temperature": s.llm_temperature,
    }
    if s.document_globs:
        values["documentGlobs"] = list(s.document_globs)
    return EngineSettings().merged(values)
