/**
 * The Code Compass JSON-RPC protocol, as the client sees it. It mirrors the server's
 * declaration, server/code_compass_server/lsp/protocol_types.py, interface for interface and field
 * for field (tests/lsp/test_protocol_contract.py checks the names; test/contract.test.ts
 * checks responses recorded from the real server against these types). See docs/protocol.md.
 * No vscode import: this file is shared by pure modules and tests.
 */

export const Methods = {
  search: "codeCompass/search",
  ask: "codeCompass/ask",
  status: "codeCompass/status",
  reindex: "codeCompass/reindex",
  indexState: "codeCompass/indexState",
  answerDelta: "codeCompass/answerDelta",
} as const;

export type SearchMode = "hybrid" | "lexical" | "semantic";

export interface SearchParams {
  query: string;
  topK?: number;
  pathPrefix?: string;
  language?: string;
  minScore?: number;
  mode?: SearchMode;
  project?: string;
}

/** One search hit: `path` is workspace-relative with '/', lines are 1-based inclusive. */
export interface SearchHit {
  path: string;
  startLine: number;
  endLine: number;
  score: number;
  relevance: number;
  symbol: string | null;
  kind: string | null;
  language: string | null;
  project: string;
  snippet: string;
}

export interface SearchResult {
  hits: SearchHit[];
  /** One line, present when `hits` is empty: why nothing is shown. */
  reason?: string;
  /** Some project searched is still being embedded: lexical evidence plus the embedded part. */
  partialIndex: boolean;
  tookMs: number;
}

export interface Selection {
  startLine: number;
  endLine: number;
  text?: string;
}

/** An earlier message sent with a question when the server has no record of the conversation. */
export interface HistoryMessage {
  role: "user" | "assistant";
  content: string;
}

export interface AskParams {
  question?: string;
  /** Synonym of `question`. */
  query?: string;
  conversationId?: string;
  /** Earlier turns, oldest first; only needed when conversationId is new to the server. */
  history?: HistoryMessage[];
  /** Echoed in codeCompass/answerDelta so streamed text reaches the right view. */
  requestId?: string | number;
  topK?: number;
  pathPrefix?: string;
  language?: string;
  minScore?: number;
  mode?: SearchMode;
  project?: string;
  /** Workspace-relative path ('/') of the active editor's file. */
  activeFile?: string;
  selection?: Selection;
}

export type AnswerState = "OK" | "PARTIAL" | "AMBIGUOUS" | "FAIL";
export type Coverage = "high" | "medium" | "low" | "none";

export interface Confidence {
  score: number;
  components: Record<string, number>;
  caveats: string[];
  rules: string[];
}

export interface Citation {
  id: string;
  path: string;
  startLine: number;
  endLine: number;
}

export interface Evidence extends SearchHit {
  id: string;
  /** current | moved | edited: re-read from the editor buffer or disk. */
  status: string;
  /** [start, end] as indexed, when the passage moved or was edited. */
  indexedLines?: number[];
}

export type Verdict = "supported" | "weak" | "unsupported" | "uncited";

/** A claim-making sentence of the answer with its support verdict; offsets index `answer`. */
export interface SentenceVerdict {
  text: string;
  start: number;
  end: number;
  /** One of Verdict today; a newer server may send others (shown neutrally). */
  verdict: Verdict | string;
  citations: string[];
  support: number;
  /** Cosine with the closest cited passage (when the server's embedding model is loaded). */
  similarity?: number;
  /** Numbers or paths the sentence states that its cited lines lack. */
  mismatches?: string[];
  /** Ids of evidence never sent that the sentence cited (removed from the answer). */
  removedCitations?: string[];
}

export interface DroppedEvidence {
  path: string;
  startLine: number;
  endLine: number;
  reason: string;
}

export interface QueryRendering {
  language: string;
  rewritten: string;
  source: string;
  added: string[];
  llmCalled?: boolean;
  tookMs?: number;
  error?: string;
}

export interface AnswerMeta {
  llmCalled: boolean;
  model: string | null;
  depth: string;
  retries?: number;
  /** The model call failed, e.g. "HTTP 401: invalid x-api-key". */
  error?: string;
  tookMs: number;
  contextsUsed: number;
  dropped: DroppedEvidence[];
  redactions: number;
  citationsRemoved: string[];
  flags: string[];
  questionLanguage: string;
  tokensIn: number;
  tokensOut: number;
  query?: QueryRendering;
  partialIndex: boolean;
  embedEtaS?: number;
  depthQuery?: DepthQuery;
}

/** What the ask searched: the question plus the conversation's subject or claim. */
export interface DepthQuery {
  text: string;
  subject?: string[];
  claim?: string;
}

/**
 * A suggestion as something to do: `open` a location, re-ask with a `scope` (a key present
 * with null removes that filter), `ask` another question, `info` (advice only). Other kinds
 * are shown as text.
 */
export interface AnswerAction {
  kind: string;
  label: string;
  path?: string;
  startLine?: number;
  endLine?: number;
  project?: string;
  pathPrefix?: string | null;
  language?: string | null;
  question?: string;
}

/** The lines an ask was about, as the answer names them. */
export interface AskedSelection {
  path: string;
  startLine: number;
  endLine: number;
  symbol: string | null;
  terms: string[];
}

/**
 * A suggestion that is an action rather than a question (a newer server may send these in
 * `suggestions`): open the closest match, re-ask within a scope, ask a rephrasing. Kinds the
 * client does not know are shown as text, without an action.
 */
export interface SuggestionAction {
  kind: string;
  label?: string;
  text?: string;
  query?: string;
  path?: string;
  startLine?: number;
  endLine?: number;
  project?: string;
  pathPrefix?: string;
  language?: string;
}

export type Suggestion = string | SuggestionAction;

export interface AbsentNearest {
  path: string;
  startLine: number;
  endLine: number;
  symbol: string;
}

/** What the question names that the workspace does not have, with the closest real thing. */
export interface Absent {
  name: string;
  nearest: AbsentNearest | null;
}

export interface Answer {
  state: AnswerState;
  confidence: Confidence;
  coverage: Coverage;
  depth: string;
  answer: string;
  citations: Citation[];
  citationsUsed: string[];
  evidences: Evidence[];
  /** The actions' labels, in order (older servers: questions to ask). */
  suggestions: Suggestion[];
  actions: AnswerAction[];
  /** What was searched and came closest, when nothing reached minScore. */
  searched: string | null;
  /** Empty when everything the question names exists. */
  absent: Absent[];
  selection?: AskedSelection;
  sentences: SentenceVerdict[];
  meta: AnswerMeta;
  /** Why the depth controller chose `depth`. */
  depthSignals: string[];
  /** Echo of the request's conversationId (null when none was sent). */
  conversationId: string | null;
}

/** Streamed text while an ask runs; routed by requestId (or conversationId). */
export interface AnswerDelta {
  requestId: string | number;
  conversationId?: string;
  text: string;
}

export type ProjectStateName = "indexing" | "embedding" | "ready" | "error";

export interface ProjectState {
  name: string;
  root: string;
  state: ProjectStateName;
  phase: string;
  files: number;
  chunks: number;
  symbols: number;
  embedded: number;
  embedTotal: number;
  /** Chunks embedded per second. */
  embedRate: number;
  /** Seconds until every chunk is embedded, when known. */
  embedEtaS: number | null;
  errors: number;
  /** Files skipped, by reason (too_large, binary, parse_error, ...). */
  skipped: Record<string, number>;
  readOnly: boolean;
  rebuilt: string;
  storage: string;
  indexing: boolean;
  queued: boolean;
  /** The last index pass failed, or the embedding worker fails: why. */
  lastError?: string;
  /** Read-only: the process that writes this index, when known. */
  writerPid: number | null;
  /** "team" when a team index (PostgreSQL) serves the project. */
  backend?: string;
  /** Team index: the server's PostgreSQL version. */
  server?: string;
  /** Team index: paths of this workspace that differ from what was last pushed. */
  behind?: number;
}

export interface FolderSettings {
  include: string[];
  exclude: string[];
  maxFileSizeKb: number;
  documentGlobs: string[];
}

export interface StatusProject extends ProjectState {
  settings: FolderSettings;
}

export interface StatusSettings {
  include: string[];
  exclude: string[];
  maxFileSizeKb: number;
  documentGlobs: string[];
  "embeddings.enabled": boolean;
  "search.minScore": number;
  "search.topK": number;
  "llm.model": string;
  "llm.maxTokens": number;
  "llm.temperature": number;
  "hover.enabled": boolean;
  "codeLens.enabled": boolean;
}

export interface StatusResult {
  projects: StatusProject[];
  model: string | null;
  /** on | off | why the embedding model could not load. */
  embeddings: string;
  llmConfigured: boolean;
  storage: string;
  indexing: boolean;
  settings: StatusSettings;
  /** Why the shared embedding cache was recreated ("" when it was not). */
  embedCacheRebuilt: string;
}

export interface IndexStateParams {
  projects: ProjectState[];
}

export interface ReindexParams {
  project?: string;
}

export interface ReindexResult {
  started: boolean;
  projects: string[];
}
