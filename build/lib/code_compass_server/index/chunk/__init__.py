"""File bytes to chunks and symbols: `parse_file` picks the chunker by language."""

from __future__ import annotations

from code_compass_server.index.chunk.chunk_errors import SkipFile
from code_compass_server.index.chunk.parse import parse_file

__all__ = ["SkipFile", "parse_file"]
