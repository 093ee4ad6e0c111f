/**
 * Pure HTML rendering of the answer view (no vscode import, unit-tested).
 * Every string that came from the server goes through escapeHtml or renderMarkdown.
 */
import { contextLabel, keyProblem, type Turn } from "../conversation";
import type { Answer, AnswerState, Citation, Coverage, Evidence } from "../protocol";
import { type SuggestionView, answerActions } from "../suggestions";
import { escapeHtml } from "./escape";
import { coverageName, labelsFor, stateName } from "./labels";
import { type CitationLookup, renderMarkdown } from "./markdown";
import { applyMarks, verdictSummary, withSentinels } from "./verdicts";

export type { Turn } from "../conversation";

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

export function confidenceLabel(answer: Pick<Answer, "state" | "confidence"> & Partial<Pick<Answer, "meta">>): string {
  return `${confidenceScore(answer)} · ${stateName(labelsFor(answer), answer.state)}`;
}

const SET_KEY_BUTTON = `<button class="secondary set-key" type="button" data-action="setApiKey">Set API Key</button>`;

export function renderBadges(answer: Answer): string {
  const labels = labelsFor(answer);
  const parts = [
    `<span class="badge confidence ${stateClass(answer.state)}" title="confidence score and state">` +
      `${escapeHtml(confidenceLabel(answer))}</span>`,
    `<span class="badge ${coverageClass(answer.coverage)}" title="how much evidence supports the answer">` +
      `${escapeHtml(labels.coverage)}: ${escapeHtml(coverageName(labels, String(answer.coverage)))}</span>`,
    `<span class="badge depth" title="context depth used">${escapeHtml(String(answer.depth))}</span>`,
  ];
  if (answer.meta && !answer.meta.llmCalled && answer.state !== "FAIL") {
    parts.push(
      `<span class="badge extractive" title="${escapeHtml(labels.extractiveTitle)}">${escapeHtml(labels.extractive)}</span>`,
      SET_KEY_BUTTON,
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

function renderEvidence(evidences: Evidence[], turn: number, title: string): string {
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
  return `<details class="evidences" open><summary>${escapeHtml(title)} (${evidences.length})</summary><ol>${items}</ol></details>`;
}

function renderSuggestion(s: SuggestionView, turn: number, index: number): string {
  const label = escapeHtml(s.label);
  switch (s.action) {
    case "ask":
      return `<button class="suggestion" type="button" data-ask="${escapeHtml(s.query)}">${label}</button>`;
    case "open":
    case "scope":
      return `<button class="suggestion" type="button" data-turn="${turn}" data-suggestion="${index}">${label}</button>`;
    case "none":
      return `<div class="suggestion-text">${label}</div>`;
  }
}

function renderSuggestions(a: { actions?: unknown[]; suggestions?: unknown[]; searched?: string | null }, turn: number, title: string): string {
  const views = answerActions(a);
  const searched = a.searched ? `<div class="searched">${escapeHtml(a.searched)}</div>` : "";
  if (!views.length) return searched;
  return `${searched}<div class="suggestions"><div class="label">${escapeHtml(title)}</div>${views.map((s, i) => renderSuggestion(s, turn, i)).join("")}</div>`;
}

function renderCaveats(caveats: string[] | undefined): string {
  if (!caveats?.length) return "";
  return `<ul class="caveats">${caveats.map((c) => `<li>${escapeHtml(c)}</li>`).join("")}</ul>`;
}

/** The answer's text, with unsupported and uncited sentences marked inline. */
export function renderAnswerText(answer: Answer, index: number): string {
  const marked = withSentinels(answer.answer ?? "", answer.sentences);
  const labels = labelsFor(answer);
  const html = applyMarks(renderMarkdown(marked, citationLookup(answer), index), answer.sentences, labels);
  const summary = verdictSummary(answer.sentences, labels);
  const legend = summary ? `<div class="verdicts" role="note">${escapeHtml(summary)} (${escapeHtml(labels.markedInText)})</div>` : "";
  return `<div class="answer-text">${html}</div>${legend}`;
}

function keyNotice(detail: string): string {
  return (
    `<div class="notice key-problem" role="alert"><span>The Anthropic API key is missing or was rejected` +
    `${detail ? ` (${escapeHtml(detail)})` : ""}: no answer was written. The evidence found is listed below.</span>` +
    `${SET_KEY_BUTTON}</div>`
  );
}

function actions(index: number, turn: Turn, isLast: boolean): string {
  const buttons: string[] = [];
  if (turn.answer?.answer) buttons.push(`<button class="link" type="button" data-action="copyAnswer" data-turn="${index}">Copy answer</button>`);
  if (isLast) buttons.push(`<button class="link" type="button" data-action="retry" data-turn="${index}">Retry</button>`);
  return buttons.length ? `<div class="turn-actions">${buttons.join("")}</div>` : "";
}

export interface RenderOptions {
  /** Whether answers are written by a model (an API key is set): the waiting label says so. */
  llmConfigured?: boolean;
}

/** What the view says while a turn waits: accurate to what the server is doing. */
export function pendingLabel(turn: Turn, options: RenderOptions): string {
  if (turn.phase === "streaming") return "The model is writing…";
  return options.llmConfigured === false ? "Searching the evidence…" : "Searching the evidence, then waiting for the model…";
}

export function renderTurn(turn: Turn, index: number, options: RenderOptions = {}, isLast = true): string {
  const ctx = contextLabel(turn.context);
  const question =
    `<div class="question"><span class="q-mark" aria-hidden="true">Q</span> <span class="q-text">${escapeHtml(turn.question)}</span>` +
    `<button class="link edit" type="button" data-action="edit" data-turn="${index}" title="Edit this question and ask it again">Edit</button></div>` +
    (ctx ? `<div class="q-context">about ${escapeHtml(ctx)}</div>` : "");
  let body: string;
  const streamed = (cls: string): string =>
    turn.streamed ? `<div class="answer-text ${cls}">${renderMarkdown(turn.streamed, () => undefined, index)}</div>` : "";
  if (turn.error !== undefined) {
    body = keyProblem(undefined, turn.error) ? keyNotice("") : `<div class="error" role="alert">${escapeHtml(turn.error)}</div>`;
  } else if (turn.answer) {
    const a = turn.answer;
    const rejected = keyProblem(a);
    body =
      (rejected ? keyNotice(a.meta?.error ?? "") : renderBadges(a) + renderCaveats(a.confidence?.caveats) + renderAnswerText(a, index)) +
      renderSuggestions(a, index, labelsFor(a).suggestions) +
      renderEvidence(a.evidences ?? [], index, labelsFor(a).evidence);
  } else if (turn.phase === "stopped") {
    body = `${streamed("stopped")}<div class="pending">Stopped.</div>`;
  } else {
    body = `<div class="pending" aria-busy="true"><span class="spinner" aria-hidden="true"></span>${escapeHtml(pendingLabel(turn, options))}</div>${streamed("streaming")}`;
  }
  const done = turn.phase !== "searching" && turn.phase !== "streaming";
  return `<section class="turn" data-turn="${index}" data-phase="${turn.phase}">${question}${body}${done ? actions(index, turn, isLast) : ""}</section>`;
}

export function renderConversation(turns: Turn[], options: RenderOptions = {}): string {
  if (!turns.length) {
    return `<div class="empty">Ask a question about this workspace. Every answer cites the files and lines it is based on.</div>`;
  }
  return turns.map((t, i) => renderTurn(t, i, options, i === turns.length - 1)).join("\n");
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
<header id="toolbar" hidden><label for="history">Conversation</label> <select id="history"></select></header>
<main id="conversation" aria-live="polite">${initialBody}</main>
<form id="ask-form" autocomplete="off">
<div id="editing" hidden><span id="editing-label"></span> <button class="link" type="button" id="cancel-edit">Cancel</button></div>
<div class="ask-row">
<textarea id="ask-input" rows="1" maxlength="500" placeholder="Ask a question about this workspace…" aria-label="Question"></textarea>
<button id="ask-button" type="submit">Ask</button>
<button id="stop-button" type="button" class="secondary" hidden title="Stop this answer">Stop</button>
</div>
</form>
<script nonce="${assets.nonce}" src="${escapeHtml(assets.scriptUri)}"></script>
</body>
</html>`;
}
