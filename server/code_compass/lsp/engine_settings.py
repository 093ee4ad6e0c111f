"""Client settings (lsp/settings.py) -> the engine's EngineSettings."""

from __future__ import annotations

from code_compass.index.scan import ScanSettings
from code_compass.lsp.settings import Settings
from code_compass.settings import EngineSettings


def to_engine_settings(s: Settings) -> EngineSettings:
    return EngineSettings(
        scan=ScanSettings(
            max_file_bytes=s.max_file_size_kb * 1024,
            include=s.include,
            exclude=s.exclude,
            documents=s.document_globs,
        ),
        embeddings=s.embeddings_enabled,
        min_score=s.search_min_score,
        top_k=s.search_top_k,
        model=s.llm_model,
        max_tokens=s.llm_max_tokens,
        temperature=s.llm_temperature,
    )
