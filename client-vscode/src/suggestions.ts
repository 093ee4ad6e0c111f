/**
 * An answer's suggestions → what the views can do with them (pure). Today the server sends
 * sentences (asked as questions when clicked); a newer one may send actions
 * ({kind: "open" | "scope" | "rephrase", ...}). A kind this client does not know is shown
 * as plain text, never guessed into an action.
 */
import type { Suggestion } from "./protocol";
import type { WireLocation } from "./locations";

export interface ScopeFilter {
  pathPrefix?: string;
  language?: string;
  project?: string;
}

export type SuggestionView =
  | { label: string; action: "ask"; query: string }
  | { label: string; action: "open"; location: WireLocation }
  | { label: string; action: "scope"; scope: ScopeFilter }
  | { label: string; action: "none" };

const str = (v: unknown): string | undefined => (typeof v === "string" && v.trim() ? v.trim() : undefined);
const line = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) && v >= 1 ? Math.floor(v) : undefined);

export function suggestionView(s: Suggestion | unknown): SuggestionView | undefined {
  if (typeof s === "string") return s.trim() ? { label: s.trim(), action: "ask", query: s.trim() } : undefined;
  if (!s || typeof s !== "object") return undefined;
  const o = s as Record<string, unknown>;
  const kind = str(o.kind) ?? "";
  const text = str(o.label) ?? str(o.text) ?? str(o.query);
  if (kind === "open") {
    const path = str(o.path);
    const start = line(o.startLine);
    if (path && start) {
      const end = line(o.endLine) ?? start;
      const location: WireLocation = { path, startLine: start, endLine: Math.max(start, end), project: str(o.project) };
      return { label: text ?? `Open ${path}:${start}`, action: "open", location };
    }
  } else if (kind === "scope") {
    // A key present with null (or "") removes that filter: "ask again without the language".
    const keys = (["pathPrefix", "language", "project"] as const).filter((k) => k in o);
    if (keys.length) {
      const scope: ScopeFilter = {};
      for (const k of keys) scope[k] = str(o[k]);
      const where = keys.map((k) => scope[k]).filter(Boolean).join(", ");
      return { label: text ?? (where ? `Ask again within ${where}` : "Ask again without the filter"), action: "scope", scope };
    }
  } else if (kind === "rephrase" || kind === "ask") {
    const query = str(o.question) ?? str(o.query) ?? str(o.text);
    if (query) return { label: str(o.label) ?? query, action: "ask", query };
  }
  return text ? { label: text, action: "none" } : undefined;
}

export function suggestionViews(list: readonly unknown[] | undefined): SuggestionView[] {
  return (Array.isArray(list) ? list : []).map(suggestionView).filter((v): v is SuggestionView => v !== undefined);
}

/** What an answer offers to do: its `actions` when the server sends them, else its suggestions. */
export function answerActions(answer: { actions?: readonly unknown[]; suggestions?: readonly unknown[] } | undefined): SuggestionView[] {
  const actions = answer?.actions;
  return suggestionViews(Array.isArray(actions) && actions.length ? actions : answer?.suggestions);
}

/** The suggestions that can be asked as a follow-up question (for the chat view's follow-ups). */
export function askableSuggestions(list: readonly unknown[] | undefined): string[] {
  return suggestionViews(list).flatMap((v) => (v.action === "ask" ? [v.query] : []));
}
