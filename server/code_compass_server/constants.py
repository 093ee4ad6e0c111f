"""Limits, thresholds and defaults shared across modules, and every number a rule fixes.

A number that comes from a rule names it: docs/rules.md maps each rule to its origin.
"""

from __future__ import annotations

# --- Input validation (docs/rules.md: query-limits, top-k-clamp, path-prefix-safe) ---
MAX_QUERY_CHARS = 500
DEFAULT_TOP_K = 5  # (docs/rules.md: top-k-clamp)
MIN_TOP_K = 1
MAX_TOP_K = 20  # (docs/rules.md: top-k-clamp)
MAX_PATH_PREFIX_CHARS = 200
MAX_LANGUAGE_CHARS = 32
DEFAULT_MIN_SCORE = 0.6  # (docs/rules.md: min-score-gate)

# --- Scope limits (docs/rules.md: per-project-cap, ask-per-project-cap) ---
MAX_PER_PROJECT_ALL_SCOPE = 3  # search over all projects (docs/rules.md: per-project-cap)
MAX_CONTEXTS_PER_PROJECT_WIDE = 2  # ask over several (docs/rules.md: ask-per-project-cap)

# --- Scanning ---
BYTES_PER_KB = 1000  # `maxFileSizeKb` / `--max-file-kb` count SI kilobytes (settings.kb_to_bytes)
DEFAULT_MAX_FILE_KB = 1000  # larger files are skipped as "too_large"
DEFAULT_MAX_FILE_BYTES = DEFAULT_MAX_FILE_KB * BYTES_PER_KB
BINARY_SNIFF_BYTES = 8192

# --- Chunking ---
DOC_CHUNK_CHARS = 1000  # (docs/rules.md: chunk-size-overlap)
DOC_CHUNK_OVERLAP = 200  # (docs/rules.md: chunk-size-overlap)
CODE_WINDOW_LINES = 40  # non-symbol code and plain text files
CODE_WINDOW_OVERLAP = 5
MAX_SYMBOL_CHUNK_LINES = 80  # longer symbol bodies are split with overlap
SYMBOL_SPLIT_OVERLAP = 10

# --- Index ---
# bump => clean rebuild on open (4: values are symbols; 5: TS fields; 6: chunk context)
INDEX_FORMAT_VERSION = 6
TANTIVY_WRITER_HEAP = 64_000_000
TANTIVY_WRITER_THREADS = 1  # leave a core to the editor

# --- Embeddings (the int8 ONNX all-MiniLM-L6-v2 built by scripts/setup; docs/search.md) ---
EMBED_MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained at 256
EMBED_DIMS = 384
# what the model reads for a piece (embed/split.py); bump => re-embed (3: chunk context)
EMBED_TEXT_FORMAT = 3
EMBED_CONTEXT_MAX_CHARS = 240  # of Chunk.context in the header: the rest of 256 tokens is code

# --- Answers (docs/answers.md) ---
LLM_MAX_TOKENS = 1000  # (docs/rules.md: llm-limits)
LLM_MAX_TOKENS_MIN = 64  # the `llm.maxTokens` setting's bounds (a shorter answer cannot cite)
LLM_MAX_TOKENS_MAX = 8192
LLM_TEMPERATURE = 0.3  # (docs/rules.md: llm-limits); not sent by default, see answer/llm.py
# The anthropic SDK (2.10) lists claude-sonnet-4-5 as retired on 2026-11-30; 5-5 replaces it.
DEFAULT_MODEL = "claude-sonnet-5-5"
COVERAGE_HIGH_MIN_DOCS = 3  # high = 3+ docs, mean >= 0.7 (docs/rules.md: coverage-levels)
COVERAGE_HIGH_MEAN = 0.7
COVERAGE_MEDIUM_MIN_DOCS = 2  # medium = 2+ docs, mean >= 0.5
COVERAGE_MEDIUM_MEAN = 0.5
SUGGESTION_COUNT = 3  # (docs/rules.md: low-coverage-suggestions)
# The query builder's model call (answer/query_rewrite.py): a line of terms, quickly, or the
# offline rendering is used instead.
QUERY_REWRITE_MAX_TOKENS = 120
QUERY_REWRITE_TIMEOUT_S = 5.0
QUERY_REWRITE_MAX_CHARS = 400

# --- Confidence (docs/rules.md: confidence-components, confidence-bands) ---
CONF_PIPELINE_MAX = 40
CONF_AMBIGUITY_MAX = 30
CONF_RULES_MAX = 20
# Under this share of supported sentences an answer is at most PARTIAL (docs/rules.md:
# grounding-share).
GROUNDED_MIN_SHARE = 0.5
CONF_MAPPING_MAX = 10
CONF_OK_MIN = 90  # 90–100 answer normally
CONF_WARN_MIN = 70  # 70–89 answer with a caveat (still OK)
CONF_PARTIAL_MIN = 50  # 50–69 PARTIAL
CONF_AMBIGUOUS_MIN = 30  # 30–49 AMBIGUOUS; < 30 FAIL

# --- Depth controller ---
DEPTH_CLASSIFY_BUDGET_MS = 100  # (docs/rules.md: classify-fast)

# --- Ask pipeline (answer/) ---
LLM_TIMEOUT_S = 60.0  # per request; the SDK default (10 min) is far too long for an editor
LLM_MAX_RETRIES = 3  # retries on 429 / 5xx / connection errors
LLM_BACKOFF_BASE_S = 0.5  # back-off: base * 2**attempt, capped
LLM_BACKOFF_MAX_S = 8.0
EVIDENCE_MAX_CHARS = 4000  # per evidence block sent to the model (chunks are <= 80 lines)
EVIDENCE_RELOCATE_MIN_MATCH = 0.8  # share of snippet lines that must match at the new place
EVIDENCE_EDITED_MIN_RATIO = 0.5  # same place, text changed this little -> kept as "edited"
COVERAGE_LOW_MEAN_NOTE = 0.5  # 2+ docs with mean < 0.5 count as "low" (coverage-levels)
AMBIGUITY_NEAR_EQUAL = 0.02  # top hits closer than this are "near-equal" (ambiguity)
AMBIGUITY_CLEAR_MARGIN = 0.05  # a named symbol's best definition wins by this much -> resolved
CLAIM_MIN_WORDS = 4  # shorter sentences are not treated as factual claims needing [E#]
HISTORY_MAX_TURNS = 3  # (docs/rules.md: history-window)
NEARBY_TERMS_LIMIT = 8

# --- Depth controller: classification (docs/rules.md: depth-signals, depth-precedence) ---
# The cascade: D3 > D4 > D2 > D1 > D0.
DEPTH_PRECEDENCE = ("D3", "D4", "D2", "D1", "D0")
DEPTH_DIRECT_SCORE = 0.5  # every question is at least a direct question (D0)
DEPTH_MIN_SIGNAL = 0.35  # a level needs this much evidence to be chosen at all
DEPTH_TIE_MARGIN = 0.15  # levels within this of the best score tie; ties go up (err-upward)
DEPTH_RECENT_TURNS_FOR_TOPIC = 2  # topic continuity is judged against D0's window (last 2 messages)
DEPTH_EMBED_CONTINUITY_COS = 0.5  # optional embedder: cosine at/above = same topic (uncalibrated)

# --- Depth controller: retrieval plans (docs/rules.md: retrieval-plan, token-budgets) ---
DEPTH_TOKEN_BUDGET = {"D0": 500, "D1": 1500, "D2": 3000, "D3": 4000, "D4": 2500}  # per level
# Messages kept in the working set; None = full session (D3), 0 = reset (D4).
DEPTH_RECENT_MESSAGES: dict[str, int | None] = {"D0": 2, "D1": 5, "D2": 3, "D3": None, "D4": 0}
DEPTH_TOP_K = {"D0": 3, "D1": 5, "D2": 8, "D3": 8, "D4": 6}  # evidence hits asked of the index
DEPTH_TOKEN_SAFETY = 0.10  # our tokenizer only approximates the LLM's: keep 10 % headroom
DEPTH_MAX_ITEM_SHARE = 0.4  # one message or the selection may use at most 40 % of a budget
DEPTH_MAX_HIT_SHARE = 0.2  # one evidence snippet at most 20 %: several hits must fit
DEPTH_MIN_EVIDENCE_KEPT = 2  # trimming drops messages and summaries before the top 2 hits
DEPTH_EPISODIC_MAX_EXCHANGES = 10  # extractive summary: last 10 question/answer pairs
DEPTH_EPISODIC_ITEM_CHARS = 200  # per question and per answer sentence in the summary
DEPTH_MAX_CLAIMS = 3  # D3: earlier claims brought back, most related to the correction first
DEPTH_CLAIM_SEARCH_K = 3  # D3: hits for each claim's text and for the correction

# --- Conversation memory and decision log (docs/rules.md: conversation-memory, decision-log) ---
CONV_MAX_CONVERSATIONS = 200  # LRU beyond this
CONV_MAX_TURNS = 40  # per conversation (user + assistant turns); oldest dropped
CONV_MAX_MESSAGE_CHARS = 20_000  # longer messages are cut
DECISION_LOG_MAX_BYTES = 5_000_000  # rotate the JSON-lines log at this size
DECISION_LOG_BACKUPS = 3  # decisions.jsonl.1 .. .3 kept

# --- Language server (server/code_compass_server/lsp) ---
HOVER_EVIDENCE_PER_KIND = 3  # <= 3 doc passages and <= 3 code mentions per hover
HOVER_MENTIONS_LIMIT = 12  # candidates fetched per category before stale/definition filtering
HOVER_MAX_DEFINITIONS = 3  # more are summarised as "and N more"
HOVER_SNIPPET_CHARS = 120
LENS_MAX_LOCATIONS = 50  # locations per lens peek, docs and code together (the protocol's cap)
LENS_SCAN_CHUNKS = 400  # passages read per kind to count a lens; beyond it the count says "≥"
# One codeLens/resolve: finding the name's passages, then resolving its candidate tokens (parse
# trees of the files that hold them) with what is left of this; the rest are resolved in the
# background for the next request (codeLens/refresh).
LENS_RESOLVE_BUDGET_S = 0.05
# Parse caches of the resolvers, bounded by the source bytes parsed (issue #31: memory). A
# Python parse (ast, scopes, occurrences) costs ~75x its source on the heap (256 Django
# modules, 3.3 MB of source: 247 MB, bench_memory.py --parses-only), a tree-sitter
# parse ~33x (256 date-fns files, 1.0 MB of source: 33 MB): about 150 and 33 MB at most.
# 2 MB, not 4: a 10-minute Django replay ended at 408 MB instead of 441 with the same hover p95
# (21.0 / 20.8 ms), re-parses being cheap next to the memory they keep. Not 1.5: the replay
# ended 31 MB lower, but a session over 25 files (and their imports) no longer fit: its hover
# p95 rose from 18-24 to 27-38 ms (docs/performance.md, round 5).
PYTHON_PARSE_CACHE_BYTES = 2_000_000
# A large Python module is parsed this many bytes at a time (symbols/parse_in_pieces.py): the
# GIL is let go between pieces, so a parse never stalls the requests for long.
PARSE_PIECE_BYTES = 6_000
TREE_PARSE_CACHE_BYTES = 1_000_000
# malloc arenas of the language server's process (glibc's M_ARENA_MAX; its default is 8 per
# core). Each of its two dozen threads could get one, each keeping its own free chunks: with
# 2, a 4-minute Django replay ended 34 MB lower with the same hover p95 (docs/performance.md).
SERVER_MALLOC_ARENAS = 2
RESOLVE_BUDGET_S = 0.005  # jedi on a hover, after the parse-tree fast path; then it finishes aside
RESOLVER_WARMED_VERSIONS = 1024  # file versions remembered as warmed (symbols/resolve.py)
LSP_INDEX_STATE_INTERVAL_S = 0.5  # codeCompass/indexState at most every ~500 ms
# Request lanes (lsp/lanes.py): hovers and lenses never queue behind searches and asks.
LSP_INTERACTIVE_WORKERS = 2
LSP_BULK_WORKERS = 2  # searches and asks in parallel; the machine's cores, not more
LSP_BULK_QUEUE_MAX = 1000  # searches/asks waiting; past it refused at once (-32803)
# A thread that waits for the GIL gets it after at most this long (CPython's default: 5 ms). A
# hover releases it at every SQLite and Tantivy call; beside running searches each release cost
# up to 5 ms to win back.
LSP_GIL_SWITCH_INTERVAL_S = 0.001
LSP_BULK_YIELD_MAX_S = 0.1  # a search waits at most this long for hovers (their target)
LSP_RECENT_IDS = 10_000  # request ids remembered to refuse a reused one (answered once)
LSP_POPUP_INTERVAL_S = 60.0  # the same window/showMessage at most once a minute
LSP_POPUPS_PER_HOUR = 10  # all pop-ups together; the rest go to the log (window/logMessage)
LSP_LOG_MESSAGES_PER_S = 20  # window/logMessage about rejected input, per second

# --- MCP server (server/code_compass_server/mcp) ---
MCP_OPEN_FILE_MAX_LINES = 400  # lines per open_file call; the result says where to continue
MCP_OPEN_FILE_MAX_CHARS = 40_000  # ~10k tokens: one call must not flood an agent's context
MCP_MAX_PATH_CHARS = 1000  # open_file's path (deeper than any real checkout)
MCP_MAX_SYMBOL_NAME_CHARS = 200  # find_symbol's name, possibly qualified (Class.method)
MCP_FIND_SYMBOL_LIMIT = 50  # definitions returned; the result counts the rest
# `definition` / `references` (CLI and MCP): the resolver without a hover's deadline, but bounded.
SYMBOL_RESOLVE_BUDGET_S = 10.0  # jedi's time on one position (a first call parses the imports)
SYMBOL_REFERENCES_BUDGET_S = 30.0  # resolving every candidate token of a name (jedi included)
SYMBOL_REFERENCES_LIMIT = 200  # references returned; the result counts the rest
# Passages read to find the files that may hold references (a lens reads LENS_SCAN_CHUNKS:
# a name used in more passages than that lost its least-ranked files, often its own).
SYMBOL_REFERENCES_SCAN_CHUNKS = 20_000
SYMBOL_SNIPPET_MAX_LINES = 20  # a definition's snippet: its first lines, re-read from disk
MCP_ROOTS_WAIT_S = 10.0  # a tool call waits this long for the client's roots before using cwd

# --- Editor buffers shared with other processes on the same storage (index/shared_buffers.py) ---
# Each buffer is also capped by the index's file size limit (maxFileSizeKb).
SHARED_BUFFERS_MAX_TOTAL_BYTES = 32 * DEFAULT_MAX_FILE_BYTES  # all open buffers of one process
SHARED_BUFFER_HEARTBEAT_S = 2.0  # the publisher touches its heartbeat file this often
SHARED_BUFFER_STALE_S = 10.0  # a heartbeat older than this: the publisher is gone (or hung)
# Unsaved buffers held in memory (index/buffers.py, lsp/open_documents.py); past a cap the
# disk text is the truth for that document.
EDITOR_BUFFER_MAX_CHARS = 2 * DEFAULT_MAX_FILE_BYTES  # one open document
EDITOR_BUFFERS_MAX_TOTAL_CHARS = 32 * DEFAULT_MAX_FILE_BYTES  # all open documents together

# --- Embedding engine (server/code_compass_server/embed/) ---
EMBED_MODEL_FILE = "minilm-l6-int8.onnx"  # built: checkout models/build, else the user cache
# Package data beside the code: the model's manifest (pinned sources, sha256) and its tokenizer.
EMBED_PACKAGE_DATA_DIR = "embedding_model"
EMBED_MANIFEST_FILE = "manifest.json"
EMBED_TOKENIZER_FILE = "tokenizer.json"
EMBED_BUILD_INFO_FILE = "model.json"  # written beside the model by the build
EMBED_THREADS_ENV = (
    "CODE_COMPASS_EMBED_THREADS"  # default: cpu_count - 1 (leave a core to the editor)
)
EMBED_MODEL_DIR_ENV = "CODE_COMPASS_MODEL_DIR"
EMBED_BATCH_SIZE = 1  # per session.run; CPU ms/chunk measured: 39 (b1), 42 (b4), 48 (b8)
EMBED_BATCH_PAD_WASTE = 0.25  # start a new batch rather than pad more than this share of tokens
EMBED_MAX_PIECES_PER_CHUNK = 8  # a chunk is split into <=256-token pieces; extra pieces are dropped
EMBED_CACHE_KEEP_DAYS = 30  # cached vectors unused for this long are garbage-collected
EMBED_CACHE_MAX_ENTRIES = 400_000  # ~600 MB of fp32 vectors at most; least recently used go first
EMBED_WORKER_BATCH = 8  # chunks per round: small, so a save never waits long behind a backlog
EMBED_WORKER_FLUSH_S = 15.0  # the worker saves the vector store at most this often while busy
# ...and less often as saves grow with the store (each rewrites the whole matrix: ~25 s at
# 1.5M vectors): saving stays at most this share of a busy worker's time.
EMBED_WORKER_SAVE_SHARE = 0.1
# The backlog's count (a COUNT over the catalog's pending index: ~0.1 s at 1.2M chunks) is
# taken at most every EMBED_WORKER_FLUSH_S / 3 and at most this share of the time; in
# between, what was done is subtracted from it.
EMBED_WORKER_COUNT_SHARE = 0.02
VECTOR_COMPACT_DEAD_SHARE = 0.25  # rewrite the matrix without deleted rows past this share
# Approximate vector index (embed/ivf.py): k-means lists probed, then reranked exactly.
IVF_MIN_ROWS = 50_000  # below this many vectors the exact scan is fast enough: no index
# lists = IVF_LISTS_PER_SQRT * sqrt(rows), clamped to [IVF_MIN_LISTS, IVF_MAX_LISTS]: on 30k
# real MiniLM vectors, 4 sqrt(N) lists probed 4 % gave recall@10 0.91, sqrt(N) lists 0.77.
IVF_LISTS_PER_SQRT = 4
IVF_MIN_LISTS = 64
IVF_MAX_LISTS = 4096
IVF_TRAIN_PER_LIST = 16  # k-means trains on this many sampled rows per list
IVF_TRAIN_ITERATIONS = 8
IVF_PROBE_SHARE = 0.06  # lists probed per query: this share of them (recall vs time)
IVF_MIN_PROBES = 8
IVF_DRIFT_GROWTH = 2.0  # retrain when rows grew or shrank by this factor since training
IVF_DRIFT_LIST_SHARE = 0.05  # ... or when one list holds more than this share of the rows

# --- Scan and chunk details (index/textio.py, index/chunk/) ---
TEXT_MAX_CONTROL_RATIO = 0.10  # more control chars than this in the sniffed prefix = binary
GENERATED_HEAD_LINES = 5  # "@generated" / "Code generated ... DO NOT EDIT" looked for here
MINIFIED_MIN_CHARS = 4096  # code files at least this long ...
MINIFIED_MEAN_LINE_CHARS = 500  # ... with lines this long on average are minified: skipped
# One line longer than this (any language, prose too) makes a file data, not text: skipped as
# "long_line" (a 50 MB single line would otherwise be one chunk to tokenize and embed).
MAX_LINE_CHARS = 100_000
SIGNATURE_MAX_CHARS = 300  # Chunk.signature / SymbolDef.signature, whitespace collapsed
SYMBOL_DOC_MAX_CHARS = 1000  # Chunk.doc (docstring or leading comment)
CHUNK_CONTEXT_MAX_CHARS = 600  # Chunk.context (index/chunk/context.py): read before each piece
CHUNK_MEMBER_LIST_MAX = 40  # members listed in a container header's context
CHUNK_MODULE_CONTEXT = True  # a Python module's docstring summary as its top-level defs' context
CODE_MAX_NESTING = 8  # containers in containers visited for member definitions

# --- Hybrid search: fusion, diversity and the calibrated score (search/) ---
# Type stubs: the declarations of code that lives elsewhere (ranked, and cited, after it).
STUB_SUFFIXES = (".pyi", ".d.ts")
# Index size (chunks) the calibration's BM25 signals correspond to: the dev corpora have
# 1,100-3,600 chunks (eval/search/corpora.json); other sizes are rescaled (search/searcher.py).
BM25_REFERENCE_DOCS = 2500
# Search shows nothing (an empty list and a reason) when its best hit scores below this and
# its top hits hold less than this share of the question's words (IDF-weighted): a list whose
# best is ~0 and that does not even contain the query is noise, not weak evidence. A listing
# query whose words are all there is shown, however low. A shown list keeps its lower rows.
SEARCH_NOTHING_BELOW = 0.02
SEARCH_NOTHING_COVERAGE = 0.25
SEARCH_CANDIDATE_POOL = 30  # per channel, into fusion; 50 ranked and calibrated the same on dev
SEARCH_MAX_HITS_PER_FILE = 3  # one file cannot fill the list; 2 cost 2-4 % MRR
SEARCH_DEDUP_OVERLAP = 0.5  # same file, ranges sharing >= this share of the shorter one: keep one
SEARCH_RANK_K = 10.0  # rank signals are K / (K + rank): 1 for the first, 0.5 at rank 10
# Name channel (search/names.py): a query naming a defined symbol gets its definitions.
NAME_MAX_DEFINITIONS = 5  # per name: past this, a name means little on its own (`update`)
NAME_EXACT_SCORE = 0.95  # floor of a navigation query's exact definition, times match strength
# The relevance of a hit in every mode, which ranks the list (search/signals.py):
#   z = sum(SEARCH_WEIGHTS[mode][signal] * signal)
# The calibrated score built on z is search/calibration.py's (fitted by
# scripts/fit_calibration.py). SEARCH_ANSWER_WEIGHTS, SEARCH_THRESHOLD and SEARCH_RANK_SLOPE are
# the older score the docstring-sentence harness still fits and replays (scripts/eval_search.py:
# score = sigmoid(logit(0.6) + slope * (z - z_top) + A - threshold), A = answer_weight ·
# list signals); the product does not read them. All four were fitted by
# `scripts/eval_search.py --fit` on the dev half of the search dev set (eval/search/
# corpora.json: Django 5.2.8 subset, CPython 3.11 stdlib subset, rxjs 7.8.2 TypeScript sources,
# Go 1.19 stdlib subset; queries = first sentence of blanked docstrings; unanswerable = queries
# run against a corpus of another domain): weights by a listwise (softmax) ranking fit; answer
# weights by logistic regression (answered in the top 10 vs unanswerable); slope and threshold
# so the most answerable queries keep their correct hit >= 0.6 and the fewest unanswerable
# ones keep any hit >= 0.6, worst corpus first.
SEARCH_WEIGHTS: dict[str, dict[str, float]] = {
    "hybrid": {
        "cos": 19.463, "lex": 1.235, "coverage": 7.554, "rank_lex": 0.533, "rank_sem": 1.58,
        "symbol": 3.342, "name": 6.395, "path": 10.053, "test": -4.866, "test_wanted": -1.032,
        "window": -4.123,
    },
    "lexical": {
        "lex": 27.434, "coverage": 11.163, "rank_lex": 5.029, "symbol": 5.62, "name": 6.973,
        "path": 11.444, "test": -5.238, "test_wanted": -1.811, "window": -1.898,
        "impl": 3.0, "decl": -3.0,
    },
    "semantic": {
        "cos": 18.157, "rank_sem": 3.593, "test": -3.962, "test_wanted": -0.224, "window": -4.055,
    },
}  # fmt: skip
SEARCH_ANSWER_WEIGHTS: dict[str, dict[str, float]] = {
    "hybrid": {
        "z_top": 0.273, "cos_top": 21.318, "lex_top": 44.052, "nwords": 1.862,
    },
    "lexical": {
        "z_top": 0.516, "lex_top": 7.365, "bm25_per_word": 4.831, "nwords": 7.195,
    },
    "semantic": {
        "z_top": 0.13, "cos_top": 28.027, "nwords": -0.741,
    },
}  # fmt: skip
SEARCH_THRESHOLD: dict[str, float] = {"hybrid": 60.078, "lexical": 36.205, "semantic": 14.646}
SEARCH_RANK_SLOPE: dict[str, float] = {"hybrid": 0.1, "lexical": 0.1, "semantic": 0.1}

# The team index (team/): its URL and the shared project's name, for every front door.
ENV_DATABASE_URL = "CODE_COMPASS_DATABASE_URL"
ENV_PROJECT = "CODE_COMPASS_PROJECT"
# Ignore matching (#32): one path against every ignore rule of its folder stack may use
# at most this long; past it the path is skipped with reason "ignore_budget" instead of
# stalling the scan. The matcher is linear, so only absurd rule files come near it.
IGNORE_PATH_BUDGET_S = 0.1
# Below this much free space on the index's file system, status reports "disk full" (#32).
STORAGE_MIN_FREE_BYTES = 1 << 20
