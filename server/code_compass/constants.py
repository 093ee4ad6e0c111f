"""Every limit, threshold and default in one place, with the seed it comes from.

Seeds live in ../shared/seeds (000 ask, 001 composer, 002 confidence, 003 ingestion, 004 depth).
"""

from __future__ import annotations

# --- Input validation (seed 000, table "Validação rigorosa de input") ---
MAX_QUERY_CHARS = 500
DEFAULT_TOP_K = 5  # seed 000 DEFAULT_TOP_K
MIN_TOP_K = 1
MAX_TOP_K = 20  # seed 000 MAX_TOP_K
MAX_PATH_PREFIX_CHARS = 200
MAX_LANGUAGE_CHARS = 32
DEFAULT_MIN_SCORE = 0.6  # seed 000 minScore default

# --- Scope limits (seed 000, "Limites de contexto por escopo") ---
MAX_PER_PROJECT_ALL_SCOPE = 3  # seed 000 MAX_PER_REPO_ON_ALL_SCOPE (search over all projects)
MAX_CONTEXTS_PER_PROJECT_WIDE = 2  # seed 000 MAX_CONTEXTS_PER_REPO_WIDE_SCOPE (ask over several)

# --- Scanning (issue 2) ---
DEFAULT_MAX_FILE_BYTES = 1_000_000  # larger files are skipped as "too_large"
BINARY_SNIFF_BYTES = 8192

# --- Chunking ---
DOC_CHUNK_CHARS = 1000  # seed 003 chunk_size
DOC_CHUNK_OVERLAP = 200  # seed 003 chunk_overlap
CODE_WINDOW_LINES = 40  # non-symbol code and plain text files
CODE_WINDOW_OVERLAP = 5
MAX_SYMBOL_CHUNK_LINES = 80  # longer symbol bodies are split with overlap
SYMBOL_SPLIT_OVERLAP = 10

# --- Index ---
INDEX_FORMAT_VERSION = 1  # bump => clean rebuild on open
TANTIVY_WRITER_HEAP = 64_000_000
TANTIVY_WRITER_THREADS = 1  # leave a core to the editor

# --- Embeddings (issue 3; ../shared/notes/offline-dependencies.md) ---
EMBED_MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained at 256
EMBED_DIMS = 384

# --- Answers (seed 001) ---
LLM_MAX_TOKENS = 1000  # seed 001 "Max Tokens: 1000"
LLM_TEMPERATURE = 0.3  # seed 001 "Temperature: 0.3"
DEFAULT_MODEL = "claude-sonnet-4-5"
COVERAGE_HIGH_MIN_DOCS = 3  # seed 001: high = 3+ docs, mean >= 0.7
COVERAGE_HIGH_MEAN = 0.7
COVERAGE_MEDIUM_MIN_DOCS = 2  # seed 001: medium = 2+ docs, mean >= 0.5
COVERAGE_MEDIUM_MEAN = 0.5
SUGGESTION_COUNT = 3  # seed 001: 3 suggestions when coverage is low/none
NO_EVIDENCE_ANSWER = (
    "Not enough evidence in the indexed code to answer. "
    "Try refining the question or adjusting the filters."
)  # seed 000 fixed answer ("Sem evidencia suficiente…")

# --- Confidence (seed 002) ---
CONF_PIPELINE_MAX = 40
CONF_AMBIGUITY_MAX = 30
CONF_RULES_MAX = 20
CONF_MAPPING_MAX = 10
CONF_OK_MIN = 90  # 90–100 answer normally
CONF_WARN_MIN = 70  # 70–89 answer with a caveat (still OK)
CONF_PARTIAL_MIN = 50  # 50–69 PARTIAL
CONF_AMBIGUOUS_MIN = 30  # 30–49 AMBIGUOUS; < 30 FAIL

# --- Depth controller (seed 004) ---
DEPTH_CLASSIFY_BUDGET_MS = 100  # REQ-CDC-005
