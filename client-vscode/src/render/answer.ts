/**
 * Pure HTML rendering of the answer view (no vscode import, unit-tested).
 * Every string that came from the server goes through escapeHtml or renderMarkdown.
 */
import type { Answer, AnswerState, Citation, Coverage, Evidence } from "../protocol";
import { escapeHtml } from "./escape";
import { type CitationLookup, renderMarkdown } from "./markdown";

export interface Turn {
  question: string;
  /** Text streamed so far (answerDelta), shown until the final answer arrives. */
  streamed: string;
  answer?: Answer;
  error?: string;
}

const STATES: readonly AnswerState[] = ["OK", "PARTIAL", "AMBIGUOUS", "FAIL"];
const COVERAGES: readonly Coverage[] = ["high", "medium", "low", "none"];

/** CSS class of a state; unknown states get a neutral class rather than a wrong colour. */
export function stateClass(state: string): string {
  return (STATES as readonly string[]).includes(state) ? `state-${state.toLowerCase()}` : "state-unknown";
}

export function coverageClass(coverage: string): string {
  return (COVERAGES as readonly string[]).includes(coverage) ? `coverage-${coverage}` : "coverage-unknown";
}

/** The confidence score as a whole number in 0–100 (0 when missing). */
export function confidenceScore(answer: Pick<Answer, "confidence">): number {
  const raw = Number(answer.confidence?.score);
  return Number.isFinite(raw) ? Math.round(Math.max(0, Math.min(100, raw))) : 0;
}

export function confidenceLabel(answer: Pick<Answer, "state" | "confidence">): string {
  return `${confidenceScore(answer)} · ${answer.state}`;
}

export function renderBadges(answer: Answer): string {
  const parts = [
    `<span class="badge confidence ${stateClass(answer.state)}" title="confidence score and state">` +
      `${escapeHtml(confidenceLabel(answer))}</span>`,
    `<span class="badge ${coverageClass(answer.coverage)}" title="how much evidence supports the answer">` +
      `coverage: ${escapeHtml(String(answer.coverage))}</span>`,
    `<span class="badge depth" title="context depth used">${escapeHtml(String(answer.depth))}</span>`,
  ];
  if (answer.meta && !answer.meta.llmCalled) {
    parts.push(
      `<span class="badge extractive" title="no language model was called: the text is taken from the evidence">extractive</span>`,
    );
  }
  return `<div class="badges">${parts.join("")}</div>`;
}

export function locationLabel(loc: Pick<Citation, "path" | "startLine" | "endLine">): string {
  return loc.endLine > loc.startLine ? `${loc.path}:${loc.startLine}-${loc.endLine}` : `${loc.path}:${loc.startLine}`;
}

/** Ids the answer may link: citations first, then evidences (both were given to the model). */
export function citationLookup(answer: Pick<Answer, "citations" | "evidences"> | undefined): CitationLookup {
  const known = new Map<string, string>();
  for (const ev of answer?.evidences ?? []) known.set(ev.id, locationLabel(ev));
  for (const c of answer?.citations ?? []) known.set(c.id, locationLabel(c));
  return (id) => {
    const label = known.get(id);
    return label === undefined ? undefined : { label };
  };
}

function renderEvidence(evidences: Evidence[], turn: number): string {
  if (!evidences.length) return "";
  const items = evidences
    .map((ev) => {
      const symbol = ev.symbol ? ` <span class="symbol">${escapeHtml(ev.symbol)}</span>` : "";
      const score = Number.isFinite(ev.score) ? ev.score.toFixed(2) : "?";
      return (
        `<li><a class="evidence" href="#" data-turn="${turn}" data-evidence="${escapeHtml(ev.id)}">` +
        `<span class="ev-id">${escapeHtml(ev.id)}</span> ${escapeHtml(locationLabel(ev))}</a>${symbol}` +
        ` <span class="score" title="relevance score">${score}</span></li>`
      );
    })
    .join("");
  return `<details class="evidences" open><summary>Evidence (${evidences.length})</summary><ol>${items}</ol></details>`;
}

function renderSuggestions(suggestions: string[]): string {
  if (!suggestions.length) return "";
  const buttons = suggestions
    .map((s) => `<button class="suggestion" type="button" data-ask="${escapeHtml(s)}">${escapeHtml(s)}</button>`)
    .join("");
  return `<div class="suggestions"><div class="label">Try asking</div>${buttons}</div>`;
}

function renderCaveats(caveats: string[] | undefined): string {
  if (!caveats?.length) return "";
  return `<ul class="caveats">${caveats.map((c) => `<li>${escapeHtml(c)}</li>`).join("")}</ul>`;
}

export function renderTurn(turn: Turn, index: number): string {
  const question = `<div class="question"><span class="q-mark">Q</span> ${escapeHtml(turn.question)}</div>`;
  let body: string;
  if (turn.error !== undefined) {
    body = `<div class="error" role="alert">${escapeHtml(turn.error)}</div>`;
  } else if (turn.answer) {
    const a = turn.answer;
    body =
      renderBadges(a) +
      renderCaveats(a.confidence?.caveats) +
      `<div class="answer-text">${renderMarkdown(a.answer ?? "", citationLookup(a), index)}</div>` +
      renderSuggestions(a.suggestions ?? []) +
      renderEvidence(a.evidences ?? [], index);
  } else {
    const streamed = turn.streamed
      ? `<div class="answer-text streaming">${renderMarkdown(turn.streamed, () => undefined, index)}</div>`
      : "";
    body = `<div class="pending" aria-busy="true">Searching the evidence…</div>${streamed}`;
  }
  return `<section class="turn" data-turn="${index}">${question}${body}</section>`;
}

export function renderConversation(turns: Turn[]): string {
  if (!turns.length) {
    return `<div class="empty">Ask a question about this workspace. Every answer cites the files and lines it is based on.</div>`;
  }
  return turns.map((t, i) => renderTurn(t, i)).join("\n");
}

export interface PageAssets {
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
}

/** The webview shell. Strict CSP: nothing runs or loads but our nonce'd script and stylesheet. */
export function renderPage(assets: PageAssets, initialBody: string): string {
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${assets.nonce}'`,
    `style-src ${assets.cspSource} 'nonce-${assets.nonce}'`,
    `img-src ${assets.cspSource} data:`,
    `font-src ${assets.cspSource}`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(assets.styleUri)}">
<title>Code Compass</title>
</head>
<body>
<main id="conversation" aria-live="polite">${initialBody}</main>
<form id="ask-form" autocomplete="off">
<input id="ask-input" type="text" maxlength="500" placeholder="Ask a follow-up question…" aria-label="Follow-up question">
<button id="ask-button" type="submit">Ask</button>
</form>
<script nonce="${assets.nonce}" src="${escapeHtml(assets.scriptUri)}"></script>
</body>
</html>`;
}
