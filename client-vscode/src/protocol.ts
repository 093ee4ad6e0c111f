/**
 * The Code Compass JSON-RPC protocol, as the client sees it (one typed file, so the
 * contract with the Python server is read in one place). See docs/client.md and
 * docs/protocol.md. No vscode import: this file is shared by pure modules and tests.
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
  partialIndex?: boolean;
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
  query: string;
  conversationId?: string;
  /** Earlier turns, oldest first; only needed when conversationId is new to the server. */
  history?: HistoryMessage[];
  /** Echoed in codeCompass/answerDelta so streamed text reaches the right view. */
  requestId?: string;
  topK?: number;
  pathPrefix?: string;
  language?: string;
  minScore?: number;
  /** Workspace-relative path ('/') of the active editor's file. */
  activeFile?: string;
  selection?: Selection;
}

export type AnswerState = "OK" | "PARTIAL" | "AMBIGUOUS" | "FAIL";
export type Coverage = "high" | "medium" | "low" | "none";

export interface Confidence {
  score: number;
  components?: Record<string, number>;
  caveats?: string[];
  rules?: string[];
}

export interface Citation {
  id: string;
  path: string;
  startLine: number;
  endLine: number;
  /** Not in the contract's citation shape, but hits carry it; used for multi-root. */
  project?: string;
}

export interface Evidence extends SearchHit {
  id: string;
}

export interface AnswerMeta {
  llmCalled: boolean;
  model: string | null;
  tookMs: number;
  contextsUsed: number;
}

export interface Answer {
  state: AnswerState;
  confidence: Confidence;
  coverage: Coverage;
  depth: string;
  answer: string;
  citations: Citation[];
  evidences: Evidence[];
  suggestions: string[];
  /** Each claim-making sentence with its support verdict; offsets index `answer`. */
  sentences?: SentenceVerdict[];
  meta: AnswerMeta;
  /** Echo of the request's conversationId (null when none was sent). */
  conversationId?: string | null;
}

export interface SentenceVerdict {
  text: string;
  start: number;
  end: number;
  verdict: "supported" | "weak" | "unsupported" | "uncited";
  citations: string[];
  support: number;
}

/** Streamed text while an ask runs; routed by conversationId (or requestId). */
export interface AnswerDelta {
  requestId?: string | number;
  conversationId?: string;
  text: string;
}

export type ProjectStateName = "indexing" | "embedding" | "ready" | "error";

export interface ProjectState {
  name: string;
  root: string;
  state: ProjectStateName;
  files: number;
  chunks: number;
  embedded: number;
  embedTotal: number;
  errors: number;
  skipped: number;
  /** Optional: files expected in total while indexing (shown as files/filesTotal). */
  filesTotal?: number;
  /** Optional: a human-readable reason when state is "error". */
  message?: string;
}

export interface StatusResult {
  projects: ProjectState[];
  model: string | null;
  llmConfigured: boolean;
  storage: string | null;
}

export interface IndexStateParams {
  projects: ProjectState[];
}

export interface ReindexParams {
  project?: string;
}

export interface ReindexResult {
  started: boolean;
}
