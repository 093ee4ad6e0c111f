/**
 * Sentence verdicts → inline marks in the rendered answer (pure). The server gives each
 * claim-making sentence a verdict with offsets into the answer (code points, as Python
 * counts); unsupported and uncited sentences are marked visibly, weak ones lightly, and a
 * verdict this client does not know neutrally. Marks are placed as private-use sentinels
 * before the markdown is rendered (escaping leaves them alone), then become elements.
 */
import type { SentenceVerdict } from "../protocol";
import { escapeHtml } from "./escape";
import { type AnswerLabels, EN_LABELS } from "./labels";

const OPEN = "\uE000";
const MID = "\uE001";
const CLOSE = "\uE002";
const SENTINELS = /[\uE000-\uE002]/g;

interface MarkStyle {
  cls: string;
  flag: string;
  title: string;
}

const STYLES: Record<string, MarkStyle | undefined> = {
  supported: undefined,
  weak: { cls: "claim-weak", flag: "", title: "Weakly supported: few of its terms are in the cited lines" },
  unsupported: { cls: "claim-unsupported", flag: "unsupported", title: "Not supported by the lines it cites" },
  uncited: { cls: "claim-uncited", flag: "uncited", title: "Makes a claim without citing any evidence" },
};

export function markStyle(verdict: string): MarkStyle | undefined {
  if (verdict in STYLES) return STYLES[verdict];
  return { cls: "claim-other", flag: "", title: `Verdict: ${verdict}` };
}

/** Code-point offset → UTF-16 index into `text`. */
function utf16Index(text: string, codePoints: number): number {
  let i = 0;
  for (let n = 0; n < codePoints && i < text.length; n++) {
    const c = text.codePointAt(i) ?? 0;
    i += c > 0xffff ? 2 : 1;
  }
  return i;
}

/** The sentences to mark, in text order, non-overlapping, with UTF-16 offsets. */
function marks(text: string, sentences: readonly SentenceVerdict[]): { start: number; end: number; index: number }[] {
  const out: { start: number; end: number; index: number }[] = [];
  sentences.forEach((s, index) => {
    if (!s || typeof s.start !== "number" || typeof s.end !== "number" || !markStyle(String(s.verdict))) return;
    const start = utf16Index(text, s.start);
    const end = utf16Index(text, s.end);
    if (end > start) out.push({ start, end, index });
  });
  out.sort((a, b) => a.start - b.start);
  return out.filter((m, i) => i === 0 || m.start >= out[i - 1].end);
}

/** The answer text with sentinels around each sentence to mark (strip any the text had). */
export function withSentinels(text: string, sentences: readonly SentenceVerdict[] | undefined): string {
  const clean = text.replace(SENTINELS, "");
  if (clean !== text || !sentences?.length) return clean;
  let out = "";
  let at = 0;
  for (const m of marks(clean, sentences)) {
    out += clean.slice(at, m.start) + OPEN + String(m.index) + MID + clean.slice(m.start, m.end) + CLOSE + String(m.index) + MID;
    at = m.end;
  }
  return out + clean.slice(at);
}

/** Rendered HTML with the sentinels turned into mark elements. */
export function applyMarks(html: string, sentences: readonly SentenceVerdict[] | undefined, labels: AnswerLabels = EN_LABELS): string {
  return html
    .replace(/\uE000(\d+)\uE001/g, (_m, i: string) => {
      const s = sentences?.[Number(i)];
      const style = s ? markStyle(String(s.verdict)) : undefined;
      if (!s || !style) return "<span>";
      return `<span class="claim ${style.cls}" data-verdict="${escapeHtml(String(s.verdict))}" title="${escapeHtml(style.title)}">`;
    })
    .replace(/\uE002(\d+)\uE001/g, (_m, i: string) => {
      const verdict = String(sentences?.[Number(i)]?.verdict ?? "");
      const flag = flagFor(verdict) ? (labels.flags[verdict] ?? flagFor(verdict)) : "";
      return flag ? `</span><span class="claim-flag" aria-label="${escapeHtml(flag)}">${escapeHtml(flag)}</span>` : "</span>";
    });
}

/** Flags after the marked sentences: shown as text too, so the mark never relies on colour alone. */
export function flagFor(verdict: string): string {
  return markStyle(verdict)?.flag ?? "";
}

/** "1 sentence unsupported by its citations · 1 uncited" or "" when every sentence holds. */
export function verdictSummary(sentences: readonly SentenceVerdict[] | undefined, labels: AnswerLabels = EN_LABELS): string {
  const count = (v: string): number => (sentences ?? []).filter((s) => s?.verdict === v).length;
  const unsupported = count("unsupported");
  const uncited = count("uncited");
  const parts: string[] = [];
  if (unsupported) parts.push(labels.unsupported(unsupported));
  if (uncited) parts.push(labels.uncited(uncited));
  return parts.join(" · ");
}
