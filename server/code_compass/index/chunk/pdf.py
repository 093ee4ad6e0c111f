"""PDF to one chunk per page (start_line = end_line = page number)."""

from __future__ import annotations

import io
import logging

from code_compass.index.chunk.chunk_errors import SkipFile
from code_compass.records import Chunk, ParsedFile

logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed PDFs are common; we skip them


def parse_pdf(rel: str, data: bytes) -> ParsedFile:
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise SkipFile("pdf_error")
        chunks: list[Chunk] = []
        for number, page in enumerate(reader.pages, start=1):
            text = "\n".join(line.rstrip() for line in (page.extract_text() or "").splitlines())
            text = text.strip()
            if not text:
                continue
            chunks.append(
                Chunk(
                    path=rel,
                    start_line=number,
                    end_line=number,
                    language="pdf",
                    kind="page",
                    symbol=f"page {number}",
                    text=text,
                )
            )
    except SkipFile:
        raise
    except Exception as exc:  # pypdf raises many types on broken files
        raise SkipFile("pdf_error") from exc
    return ParsedFile(chunks=chunks, symbols=[])
