"""PDF to one chunk per page (start_line = end_line = page number), within hard limits.

A PDF is a program more than a document: a 100 KB file can inflate to gigabytes of text
operators, list one page fifty thousand times or nest arrays until the parser recurses out.
Limits, checked before and while reading, turn such a file into a counted skip:

- declared objects (`/Size`, read from the raw bytes before pypdf parses anything),
- pages (`MAX_PDF_PAGES`), extracted characters (`MAX_PDF_TEXT_CHARS`),
- pypdf's own budgets, tightened (`PYPDF_LIMITS`: inflated bytes per stream, parsing work,
  page-tree entries),
- wall-clock time between pages (`PDF_TIME_BUDGET_S`).

A single pypdf call that never returns is the parse workers' watchdog's job
(index/parse_pool.py): PDFs are always parsed in a worker process.
"""

from __future__ import annotations

import io
import logging
import re
import time

from code_compass_server.index.chunk.chunk_errors import SkipFile
from code_compass_server.records import Chunk, ParsedFile

logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed PDFs are common; we skip them

SKIP_PDF_ERROR = "pdf_error"
SKIP_PDF_LIMITS = "pdf_limits"

MAX_PDF_PAGES = 2_000
MAX_PDF_OBJECTS = 500_000
MAX_PDF_TEXT_CHARS = 4_000_000
PDF_TIME_BUDGET_S = 8.0
_MB = 1_000_000
# Far below pypdf's defaults (75 MB per stream, 2 M parsing steps), far above a real page.
PYPDF_LIMITS: dict[str, int] = {
    "maximum_declared_stream_length": 32 * _MB,
    "array_based_stream_maximum_output_length": 8 * _MB,
    "zlib_maximum_output_length": 8 * _MB,
    "lzw_maximum_output_length": 8 * _MB,
    "run_length_maximum_output_length": 8 * _MB,
    "brotli_maximum_output_length": 8 * _MB,
    "jbig2_maximum_output_length": 8 * _MB,
    "image_maximum_buffer_size": 8 * _MB,
    "stream_decoding_work_maximum_length": 64 * _MB,
    "stream_parsing_work_maximum_count": 400_000,
    "page_tree_maximum_entries": MAX_PDF_PAGES * 2,
    "page_tree_maximum_page_entries": MAX_PDF_PAGES * 4,
    "xform_maximum_invocations_per_extraction": 500,
}

_SIZE = re.compile(rb"/Size\s+(\d{1,12})")


def declared_objects(data: bytes) -> int:
    """The largest `/Size` any trailer or cross-reference stream declares (0 when none)."""
    return max((int(m.group(1)) for m in _SIZE.finditer(data)), default=0)


def parse_pdf(rel: str, data: bytes) -> ParsedFile:
    from pypdf import PdfReader, apply_configuration
    from pypdf.errors import LimitReachedError

    if declared_objects(data) > MAX_PDF_OBJECTS:
        raise SkipFile(SKIP_PDF_LIMITS)
    deadline = time.monotonic() + PDF_TIME_BUDGET_S
    chunks: list[Chunk] = []
    try:
        with apply_configuration(None, **PYPDF_LIMITS):
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not reader.decrypt(""):
                raise SkipFile(SKIP_PDF_ERROR)
            if len(reader.pages) > MAX_PDF_PAGES:
                raise SkipFile(SKIP_PDF_LIMITS)
            chars = 0
            for number, page in enumerate(reader.pages, start=1):
                if time.monotonic() > deadline:
                    raise SkipFile(SKIP_PDF_LIMITS)
                raw = page.extract_text() or ""
                chars += len(raw)
                if chars > MAX_PDF_TEXT_CHARS:
                    raise SkipFile(SKIP_PDF_LIMITS)
                text = "\n".join(line.rstrip() for line in raw.splitlines()).strip()
                if text:
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
    except LimitReachedError as exc:
        raise SkipFile(SKIP_PDF_LIMITS) from exc
    except Exception as exc:  # pypdf raises many types on broken files; RecursionError too
        raise SkipFile(SKIP_PDF_ERROR) from exc
    return ParsedFile(chunks=chunks, symbols=[])
