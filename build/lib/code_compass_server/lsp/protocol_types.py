"""The custom part of the language-server protocol, declared once: every `codeCompass/*`
method's params and result, and the notifications' payloads.

The handlers build plain JSON; these TypedDicts say what that JSON is. The VS Code client's
`client-vscode/src/protocol.ts` declares the same names with the same fields (a type whose name
the engine also uses for its own class is `WireX` here and `X` there: `client_name`), and
`tests/lsp/test_protocol_contract.py` holds all three together: it calls each method on the
real server, checks every response against these declarations (no undeclared key, no
missing required one) and records it as a fixture that the client's unit tests check
against `protocol.ts`; it also checks that docs/protocol.md mentions every field.
"""

from dataclasses import dataclass
from typing import Literal, NotRequired, TypedDict

# -- shared pieces ---------------------------------------------------------------------

SearchMode = Literal["hybrid", "lexical", "semantic"]
AnswerState = Literal["OK", "PARTIAL", "AMBIGUOUS", "FAIL"]
Coverage = Literal["high", "medium", "low", "none"]
Verdict = Literal["supported", "weak", "unsupported", "uncited"]
ClientState = Literal["indexing", "embedding", "ready", "error"]


class WireSearchHit(TypedDict):
    """One hit: `path` workspace-relative with '/', lines 1-based inclusive."""

    path: str
    startLine: int
    endLine: int
    score: float
    relevance: float
    symbol: str | None
    kind: str | None
    language: str | None
    project: str
    snippet: str


class WireSelection(TypedDict):
    startLine: int
    endLine: int
    text: NotRequired[str]


class HistoryMessage(TypedDict):
    role: Literal["user", "assistant"]
    content: str


# -- codeCompass/search ----------------------------------------------------------------


class WireSearchParams(TypedDict):
    query: str
    topK: NotRequired[int]
    pathPrefix: NotRequired[str]
    language: NotRequired[str]
    minScore: NotRequired[float]
    mode: NotRequired[SearchMode]
    project: NotRequired[str]


class WireSearchResult(TypedDict):
    hits: list[WireSearchHit]
    reason: NotRequired[str]  # present when `hits` is empty
    partialIndex: bool
    tookMs: float


# -- codeCompass/ask -------------------------------------------------------------------


class WireAskParams(TypedDict):
    question: NotRequired[str]
    query: NotRequired[str]  # synonym of `question`
    conversationId: NotRequired[str]
    history: NotRequired[list[HistoryMessage]]
    requestId: NotRequired[str | int]  # echoed in codeCompass/answerDelta
    topK: NotRequired[int]
    pathPrefix: NotRequired[str]
    language: NotRequired[str]
    minScore: NotRequired[float]
    mode: NotRequired[SearchMode]
    project: NotRequired[str]
    activeFile: NotRequired[str]
    selection: NotRequired[WireSelection]


class WireConfidence(TypedDict):
    score: int
    components: dict[str, int]
    caveats: list[str]
    rules: list[str]


class WireCitation(TypedDict):
    id: str
    path: str
    startLine: int
    endLine: int


class WireEvidence(WireSearchHit):
    id: str
    status: str  # current | moved | edited (re-read from the buffer or disk)
    indexedLines: NotRequired[list[int]]  # [start, end] when moved or edited


class WireSentenceVerdict(TypedDict):
    text: str
    start: int  # offsets into `answer`, end exclusive
    end: int
    verdict: Verdict
    citations: list[str]
    support: float
    similarity: NotRequired[float]  # cosine with the closest cited passage (model loaded)
    mismatches: NotRequired[list[str]]  # numbers or paths the cited lines lack
    removedCitations: NotRequired[list[str]]  # ids of evidence never sent, removed


class AnswerAction(TypedDict):
    """A suggestion as something a client can do: `open` a location, re-ask with a `scope`
    (a key present with null removes that filter), `ask` another question, or `info`."""

    kind: str  # open | scope | ask | info (others: shown as text)
    label: str
    path: NotRequired[str]
    startLine: NotRequired[int]
    endLine: NotRequired[int]
    project: NotRequired[str]
    pathPrefix: NotRequired[str | None]
    language: NotRequired[str | None]
    question: NotRequired[str]


class AskedSelection(TypedDict):
    """The lines an ask was about, as the answer names them."""

    path: str
    startLine: int
    endLine: int
    symbol: str | None
    terms: list[str]


class WireDepthQuery(TypedDict):
    """What the ask searched: the question plus the conversation's subject or claim."""

    text: str
    subject: NotRequired[list[str]]
    claim: NotRequired[str]


class DroppedEvidence(TypedDict):
    path: str
    startLine: int
    endLine: int
    reason: str


class QueryRendering(TypedDict):
    language: str
    rewritten: str
    source: str  # none | lexicon | llm | error
    added: list[str]
    llmCalled: NotRequired[bool]
    tookMs: NotRequired[float]
    error: NotRequired[str]


class AnswerMeta(TypedDict):
    llmCalled: bool
    model: str | None
    depth: str
    retries: NotRequired[int]
    error: NotRequired[str]  # the model call failed: "HTTP 401: ..." etc.
    tookMs: int
    contextsUsed: int
    dropped: list[DroppedEvidence]
    redactions: int
    citationsRemoved: list[str]
    flags: list[str]
    questionLanguage: str
    tokensIn: int
    tokensOut: int
    query: NotRequired[QueryRendering]
    partialIndex: bool
    embedEtaS: NotRequired[float]
    depthQuery: NotRequired[WireDepthQuery]


class AbsentNearest(TypedDict):
    path: str
    startLine: int
    endLine: int
    symbol: str


class Absent(TypedDict):
    """What the question names that the workspace does not have, with the closest real thing."""

    name: str
    nearest: AbsentNearest | None


class WireAnswer(TypedDict):
    state: AnswerState
    confidence: WireConfidence
    coverage: Coverage
    depth: str
    answer: str
    citations: list[WireCitation]
    citationsUsed: list[str]
    evidences: list[WireEvidence]
    suggestions: list[str]  # the actions' labels, in order (for older clients)
    actions: list[AnswerAction]
    searched: str | None  # what was searched and came closest, when nothing reached minScore
    absent: list[Absent]  # empty when everything the question names exists
    selection: NotRequired[AskedSelection]
    sentences: list[WireSentenceVerdict]
    meta: AnswerMeta
    depthSignals: list[str]  # why the depth controller chose `depth`
    conversationId: str | None  # echo of the request's (None when it had none)


class AnswerDelta(TypedDict):
    """`codeCompass/answerDelta`: text streamed while the model writes."""

    requestId: str | int
    conversationId: NotRequired[str]
    text: str


# -- codeCompass/status, codeCompass/indexState, codeCompass/reindex ------------------


class WireFolderSettings(TypedDict):
    include: list[str]
    exclude: list[str]
    maxFileSizeKb: int
    documentGlobs: list[str]


class ProjectState(TypedDict):
    """One project, as in `codeCompass/indexState` and `codeCompass/status`."""

    name: str
    root: str
    state: ClientState
    phase: str
    files: int
    chunks: int
    symbols: int
    embedded: int
    embedTotal: int
    embedRate: float
    embedEtaS: float | None
    errors: int
    skipped: dict[str, int]  # reason -> files (too_large, binary, parse_error, ...)
    readOnly: bool
    rebuilt: str
    storage: str
    indexing: bool
    queued: bool
    lastError: NotRequired[str]  # the last pass failed, or the embedding worker fails
    writerPid: int | None  # read-only: the process that writes this index, when known
    backend: NotRequired[str]  # "team" when a team index serves it (docs/team-index.md)
    server: NotRequired[str]  # team index: the PostgreSQL server's version
    behind: NotRequired[int]  # team index: this workspace's paths that differ from the push


class StatusProject(ProjectState):
    """A project in `codeCompass/status`: its indexState entry plus what the folder indexes."""

    settings: WireFolderSettings


class IndexStateParams(TypedDict):
    projects: list[ProjectState]


class StatusParams(TypedDict):
    pass


# Keyed as the client spells them (dotted): hence the functional form.
StatusSettings = TypedDict(
    "StatusSettings",
    {
        "include": list[str],
        "exclude": list[str],
        "maxFileSizeKb": int,
        "documentGlobs": list[str],
        "embeddings.enabled": bool,
        "search.minScore": float,
        "search.topK": int,
        "llm.model": str,
        "llm.maxTokens": int,
        "llm.temperature": float,
        "hover.enabled": bool,
        "codeLens.enabled": bool,
    },
)


class StatusResult(TypedDict):
    projects: list[StatusProject]
    model: str | None
    embeddings: str  # on | off | why the model could not load
    llmConfigured: bool
    storage: str
    indexing: bool
    settings: StatusSettings
    embedCacheRebuilt: str  # why the shared embedding cache was recreated ("" if it was not)


class ReindexParams(TypedDict):
    project: NotRequired[str]


class ReindexResult(TypedDict):
    started: bool
    projects: list[str]


# -- the method table ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    kind: Literal["request", "notification"]  # notifications go server -> client
    params: type
    result: type | None


METHODS: tuple[Method, ...] = (
    Method("codeCompass/search", "request", WireSearchParams, WireSearchResult),
    Method("codeCompass/ask", "request", WireAskParams, WireAnswer),
    Method("codeCompass/status", "request", StatusParams, StatusResult),
    Method("codeCompass/reindex", "request", ReindexParams, ReindexResult),
    Method("codeCompass/indexState", "notification", IndexStateParams, None),
    Method("codeCompass/answerDelta", "notification", AnswerDelta, None),
)

# Every TypedDict the client mirrors in protocol.ts, by name.
WIRE_TYPES: tuple[type, ...] = (
    WireSearchHit,
    WireSelection,
    HistoryMessage,
    WireSearchParams,
    WireSearchResult,
    WireAskParams,
    WireConfidence,
    WireCitation,
    WireEvidence,
    WireSentenceVerdict,
    DroppedEvidence,
    QueryRendering,
    AnswerMeta,
    AbsentNearest,
    Absent,
    WireAnswer,
    AnswerDelta,
    WireFolderSettings,
    ProjectState,
    StatusProject,
    IndexStateParams,
    StatusResult,
    ReindexParams,
    ReindexResult,
    StatusSettings,
)

WIRE_PREFIX = "Wire"  # SearchHit, Answer, ...: the engine's classes; WireSearchHit: the JSON


def client_name(td: type) -> str:
    """The interface's name in protocol.ts (which has no engine classes to tell apart)."""
    return td.__name__.removeprefix(WIRE_PREFIX)


__all__ = [
    "METHODS",
    "WIRE_PREFIX",
    "WIRE_TYPES",
    "Absent",
    "AbsentNearest",
    "AnswerDelta",
    "AnswerMeta",
    "DroppedEvidence",
    "HistoryMessage",
    "IndexStateParams",
    "Method",
    "ProjectState",
    "QueryRendering",
    "ReindexParams",
    "ReindexResult",
    "StatusParams",
    "StatusProject",
    "StatusResult",
    "StatusSettings",
    "WireAnswer",
    "WireAskParams",
    "WireCitation",
    "WireConfidence",
    "WireEvidence",
    "WireFolderSettings",
    "WireSearchHit",
    "WireSearchParams",
    "WireSearchResult",
    "WireSelection",
    "WireSentenceVerdict",
    "client_name",
]
