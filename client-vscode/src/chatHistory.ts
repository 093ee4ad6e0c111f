/**
 * Chat history → the server's conversation (pure). The id of a chat session's
 * conversation travels in each answer's ChatResult metadata, so the next question in
 * the same chat finds it in `context.history`; the server keeps the turns under that id.
 * When no earlier answer carries an id (a failed first turn, or turns written before this
 * version), the earlier turns are sent as `history` so the model still sees them.
 */
import type { HistoryMessage } from "./protocol";

/** A chat turn reduced to what matters here (the vscode side maps ChatRequestTurn/ChatResponseTurn). */
export type ChatTurn = { kind: "request"; prompt: string } | { kind: "response"; text: string; metadata?: Readonly<Record<string, unknown>> };

/** What an answer's ChatResult.metadata holds (JSON-serialisable, as the chat API requires). */
export interface ChatAnswerMetadata {
  conversationId: string;
  suggestions: string[];
}

/** At most this many earlier messages (questions and answers) are sent as `history`. */
export const MAX_HISTORY_MESSAGES = 8;
/** Each earlier answer is cut to this many characters when sent as `history`. */
export const MAX_HISTORY_CHARS = 2000;

export interface ConversationChoice {
  conversationId: string;
  /** Earlier turns, oldest first; only when the conversation could not be found in the metadata. */
  history?: HistoryMessage[];
}

function metadataConversationId(metadata: Readonly<Record<string, unknown>> | undefined): string | undefined {
  const id = metadata?.conversationId;
  return typeof id === "string" && id.length > 0 ? id : undefined;
}

/** The conversation to continue: the latest id found in the history, else a new one (with the turns). */
export function conversationFor(turns: readonly ChatTurn[], newId: () => string): ConversationChoice {
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i];
    const id = turn.kind === "response" ? metadataConversationId(turn.metadata) : undefined;
    if (id) return { conversationId: id };
  }
  const conversationId = newId();
  const history: HistoryMessage[] = turns
    .map((t): HistoryMessage =>
      t.kind === "request" ? { role: "user", content: t.prompt } : { role: "assistant", content: t.text.slice(0, MAX_HISTORY_CHARS) },
    )
    .filter((m) => m.content.trim().length > 0)
    .slice(-MAX_HISTORY_MESSAGES);
  return history.length ? { conversationId, history } : { conversationId };
}

/** Follow-up prompts from an answer's metadata (the server's suggestions), at most `limit`. */
export function followupPrompts(metadata: Readonly<Record<string, unknown>> | undefined, limit = 3): string[] {
  const raw = metadata?.suggestions;
  if (!Array.isArray(raw)) return [];
  return raw.filter((s): s is string => typeof s === "string" && s.trim().length > 0).slice(0, limit);
}
