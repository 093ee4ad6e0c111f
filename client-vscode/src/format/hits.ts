/** Search hit → QuickPick item text (pure). */
import type { SearchHit, SearchResult } from "../protocol";

export interface HitItemText {
  label: string;
  description: string;
  detail: string;
}

const MAX_DETAIL = 160;

export function snippetLine(snippet: string): string {
  const text = (snippet ?? "").replace(/\s+/g, " ").trim();
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL - 1)}…` : text;
}

/** "symbol — path:line" with the score; multi-root hits name their project. */
export function hitItemText(hit: SearchHit, multiRoot: boolean): HitItemText {
  const where = `${hit.path}:${hit.startLine}`;
  const label = hit.symbol ? `${hit.symbol} — ${where}` : where;
  const kind = hit.kind ? `${hit.kind} · ` : "";
  const project = multiRoot && hit.project ? ` · ${hit.project}` : "";
  const score = Number.isFinite(hit.score) ? hit.score.toFixed(2) : "?";
  return { label, description: `${kind}score ${score}${project}`, detail: snippetLine(hit.snippet) };
}

const NO_HITS = "No evidence above the minimum score — try other words";
const PARTIAL = " (embeddings still running: lexical results meanwhile)";

/** The picker's placeholder for a result: the server's reason when nothing is shown. */
export function searchPlaceholder(result: Pick<SearchResult, "hits" | "reason" | "partialIndex">, normal: string): string {
  const partial = result.partialIndex ? PARTIAL : "";
  if (result.hits.length) return `${normal}${partial}`;
  const reason = result.reason?.trim() || NO_HITS;
  return `${reason}${partial}`;
}
