/**
 * The answer view's conversations (pure): turns, their lifecycle, what is kept across a
 * window reload (workspace state) and what is sent as history when the server no longer
 * knows a conversation (a reload restarts the server; an edit or retry forks the turns).
 */
import type { Answer, AskParams, HistoryMessage, Selection } from "./protocol";

/** Where a turn is: what the view says while waiting, and which buttons it offers. */
export type TurnPhase = "searching" | "streaming" | "done" | "stopped" | "error";

export interface TurnContext {
  activeFile?: string;
  selection?: Selection;
  pathPrefix?: string;
  language?: string;
  project?: string;
}

export interface Turn {
  question: string;
  /** What the question was asked about (file and lines, filters), shown with it. */
  context?: TurnContext;
  phase: TurnPhase;
  /** Text streamed so far (answerDelta), shown until the final answer arrives. */
  streamed: string;
  answer?: Answer;
  error?: string;
  requestId?: string;
}

export interface Conversation {
  id: string;
  turns: Turn[];
  /** False when the server cannot know the turns (restored after a reload, or forked). */
  serverKnows: boolean;
  updated: number;
}

export interface StoredConversations {
  version: 1;
  current: Conversation;
  past: Conversation[];
}

export const MAX_STORED_TURNS = 30;
export const MAX_PAST_CONVERSATIONS = 10;
export const MAX_HISTORY_MESSAGES = 8;
export const MAX_HISTORY_CHARS = 2000;

export function newConversation(id: string, now = Date.now()): Conversation {
  return { id, turns: [], serverKnows: true, updated: now };
}

/** A turn as stored: a turn still running when the window closed is kept as stopped. */
function storedTurn(t: Turn): Turn {
  const phase: TurnPhase = t.phase === "searching" || t.phase === "streaming" ? "stopped" : t.phase;
  const out: Turn = { question: t.question, phase, streamed: t.answer ? "" : t.streamed };
  if (t.context) out.context = t.context;
  if (t.answer) out.answer = t.answer;
  if (t.error !== undefined) out.error = t.error;
  return out;
}

function storedConversation(c: Conversation): Conversation {
  return { id: c.id, turns: c.turns.slice(-MAX_STORED_TURNS).map(storedTurn), serverKnows: false, updated: c.updated };
}

export function toStored(current: Conversation, past: readonly Conversation[]): StoredConversations {
  return {
    version: 1,
    current: storedConversation(current),
    past: past.filter((c) => c.turns.length).slice(0, MAX_PAST_CONVERSATIONS).map(storedConversation),
  };
}

function isTurn(t: unknown): t is Turn {
  const o = t as Turn;
  return !!o && typeof o === "object" && typeof o.question === "string" && typeof o.phase === "string";
}

function readConversation(raw: unknown): Conversation | undefined {
  const o = raw as Conversation;
  if (!o || typeof o !== "object" || typeof o.id !== "string" || !Array.isArray(o.turns)) return undefined;
  const turns = o.turns.filter(isTurn).map((t) => storedTurn({ ...t, streamed: typeof t.streamed === "string" ? t.streamed : "" }));
  return { id: o.id, turns, serverKnows: false, updated: typeof o.updated === "number" ? o.updated : 0 };
}

/** What was stored, checked; anything unreadable gives a fresh conversation. */
export function fromStored(raw: unknown, newId: () => string): { current: Conversation; past: Conversation[] } {
  const o = raw as StoredConversations | undefined;
  const current = (o && o.version === 1 && readConversation(o.current)) || newConversation(newId());
  const past = o && o.version === 1 && Array.isArray(o.past) ? o.past.map(readConversation).filter((c): c is Conversation => !!c) : [];
  return { current, past: past.slice(0, MAX_PAST_CONVERSATIONS) };
}

/** The turns before `index` as history messages (answered turns only), the latest ones. */
export function historyOf(turns: readonly Turn[], index = turns.length): HistoryMessage[] {
  const out: HistoryMessage[] = [];
  for (const t of turns.slice(0, index)) {
    const text = t.answer?.answer ?? "";
    if (!text.trim()) continue;
    out.push({ role: "user", content: t.question });
    out.push({ role: "assistant", content: text.slice(0, MAX_HISTORY_CHARS) });
  }
  return out.slice(-MAX_HISTORY_MESSAGES);
}

/** The params of the ask for the conversation's last turn. */
export function askParams(conversation: Conversation, requestId: string): AskParams {
  const index = conversation.turns.length - 1;
  const turn = conversation.turns[index];
  const params: AskParams = { question: turn.question, conversationId: conversation.id, requestId };
  const ctx = turn.context ?? {};
  if (ctx.activeFile) params.activeFile = ctx.activeFile;
  if (ctx.selection) params.selection = ctx.selection;
  if (ctx.pathPrefix) params.pathPrefix = ctx.pathPrefix;
  if (ctx.language) params.language = ctx.language;
  if (ctx.project) params.project = ctx.project;
  if (!conversation.serverKnows) {
    const history = historyOf(conversation.turns, index);
    if (history.length) params.history = history;
  }
  return params;
}

/**
 * Edit or retry turn `index`: the turns from it on are dropped and the rest continue under
 * a new id, since the server's record of the old one holds the dropped turns.
 */
export function forkAt(conversation: Conversation, index: number, newId: string, now = Date.now()): Conversation {
  return { id: newId, turns: conversation.turns.slice(0, Math.max(0, index)), serverKnows: false, updated: now };
}

/** "pricing.py:4-8" / "in docs/, python" for a turn's context line. */
export function contextLabel(ctx: TurnContext | undefined): string {
  if (!ctx) return "";
  const parts: string[] = [];
  if (ctx.activeFile && ctx.selection) {
    const { startLine, endLine } = ctx.selection;
    parts.push(`${ctx.activeFile}:${endLine > startLine ? `${startLine}-${endLine}` : startLine}`);
  }
  const scope = [ctx.pathPrefix, ctx.language, ctx.project].filter(Boolean);
  if (scope.length) parts.push(`within ${scope.join(", ")}`);
  return parts.join(" · ");
}

/** The first question of a conversation, for its label in the history list. */
export function conversationTitle(c: Conversation): string {
  const q = c.turns[0]?.question ?? "New conversation";
  return q.length > 60 ? `${q.slice(0, 57)}…` : q;
}

/** Whether an answer failed because the API key is missing or was rejected. */
export function keyProblem(answer: Answer | undefined, error?: string): "rejected" | undefined {
  const text = `${answer?.meta?.error ?? ""} ${error ?? ""}`;
  return /\bHTTP (401|403)\b|authentication_error|invalid x-api-key|api[ _-]?key/i.test(text) ? "rejected" : undefined;
}
