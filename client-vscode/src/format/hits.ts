/** Search hit → QuickPick item text (pure). */
import type { SearchHit } from "../protocol";

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
