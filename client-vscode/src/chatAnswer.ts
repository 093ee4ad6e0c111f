/**
 * A grounded answer → the parts of a chat response (pure; the vscode side turns each
 * WireLocation into a Location). Layout: the answer text (citation markers become
 * anchors that open the cited lines), a status line with state, confidence and coverage,
 * the confidence caveats, and the evidence list; every evidence is also a reference.
 * Only ids among the answer's citations/evidences become anchors: a made-up id stays text.
 */
import type { WireLocation } from "./locations";
import type { Answer, Evidence } from "./protocol";
import { confidenceScore, locationLabel } from "./render/answer";
import { type AnswerLabels, coverageName, labelsFor, stateName } from "./render/labels";
import { answerActions } from "./suggestions";

export type ChatPart =
  | { kind: "markdown"; value: string }
  | { kind: "anchor"; location: WireLocation; title: string }
  | { kind: "reference"; location: WireLocation };

const CITE_GROUP = /\[((?:E\d+)(?:\s*,\s*E\d+)*)\]/g;

/** Backslash-escape Markdown's punctuation in plain text (paths, symbols, caveats). */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, (c) => `\\${c}`);
}

/** A code span that survives backticks inside the text. */
export function codeSpan(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((r) => r.length));
  const fence = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** "**OK · 82** · coverage high · depth D2" (+ " · extractive" when no model wrote the text). */
export function statusLine(answer: Pick<Answer, "state" | "confidence" | "coverage" | "depth" | "meta">): string {
  const labels = labelsFor(answer);
  const state = stateName(labels, String(answer.state));
  const parts = [
    `**${escapeMarkdown(state)} · ${confidenceScore(answer)}**`,
    `${labels.coverage} ${escapeMarkdown(coverageName(labels, String(answer.coverage)))}`,
  ];
  if (answer.depth) parts.push(`${labels.depth} ${escapeMarkdown(String(answer.depth))}`);
  if (answer.meta && !answer.meta.llmCalled) parts.push(labels.extractiveStatus);
  return parts.join(" · ");
}

/** Where each id points: citations (with the evidence's project) over evidences. */
function locationsById(answer: Pick<Answer, "citations" | "evidences">): Map<string, WireLocation> {
  const out = new Map<string, WireLocation>();
  const projects = new Map((answer.evidences ?? []).map((e) => [e.id, e.project]));
  for (const ev of answer.evidences ?? []) out.set(ev.id, { path: ev.path, startLine: ev.startLine, endLine: ev.endLine, project: ev.project });
  for (const c of answer.citations ?? []) {
    out.set(c.id, { path: c.path, startLine: c.startLine, endLine: c.endLine, project: projects.get(c.id) });
  }
  return out;
}

// Bare URLs, `www.` names and e-mail-like tokens (`user:pass@host`): chat Markdown would link them.
const LINKISH = /(?:\b[a-z][a-z0-9+.-]*:(?:\/\/|[^\s@]*@)|\bwww\.)[^\s`]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+/gi;

/** A link-like token as a code span; closing punctuation stays outside (", see", "x.)"). */
function spanned(token: string): string {
  const tail = /[.,;:!?)\]]+$/.exec(token)?.[0] ?? "";
  return codeSpan(token.slice(0, token.length - tail.length)) + tail;
}

/** Markdown with every link-like token outside code spans put in a code span: shown, never
 * clickable (an answer may quote a URL from an indexed file, an attacker's or a secret webhook). */
export function inertLinks(markdown: string): string {
  return markdown
    .split(/(`+[^`]*`+)/g)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(LINKISH, spanned)))
    .join("");
}

/** Text with `[E1]` / `[E1, E2]` markers → markdown and anchor parts (unknown ids stay text). */
export function textWithAnchors(text: string, known: ReadonlyMap<string, WireLocation>): ChatPart[] {
  const parts: ChatPart[] = [];
  let last = 0;
  const pushText = (value: string): void => {
    if (value) parts.push({ kind: "markdown", value: inertLinks(value) });
  };
  for (const m of text.matchAll(CITE_GROUP)) {
    const ids = m[1].split(",").map((s) => s.trim());
    if (!ids.some((id) => known.has(id))) continue;
    pushText(text.slice(last, m.index));
    ids.forEach((id, i) => {
      const loc = known.get(id);
      if (i > 0) pushText(" ");
      if (loc) parts.push({ kind: "anchor", location: loc, title: id });
      else pushText(`\\[${id}\\]`);
    });
    last = (m.index ?? 0) + m[0].length;
  }
  pushText(text.slice(last));
  return parts;
}

function normalise(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function evidenceLine(ev: Evidence, cited: boolean, labels: AnswerLabels): ChatPart[] {
  const score = Number.isFinite(ev.score) ? ev.score.toFixed(2) : "?";
  const symbol = ev.symbol ? ` ${codeSpan(ev.symbol)}` : "";
  return [
    { kind: "markdown", value: `- ${cited ? "**" : ""}${ev.id}${cited ? "**" : ""} ` },
    { kind: "anchor", location: { path: ev.path, startLine: ev.startLine, endLine: ev.endLine, project: ev.project }, title: locationLabel(ev) },
    { kind: "markdown", value: `${symbol} · ${labels.score} ${score}\n` },
  ];
}

/**
 * The chat parts for a finished answer. `streamed` is the text already shown from the
 * server's deltas: it is not repeated; if the citation check changed it, the checked text follows.
 */
export function answerParts(answer: Answer, streamed = ""): ChatPart[] {
  const known = locationsById(answer);
  const labels = labelsFor(answer);
  const text = answer.answer ?? "";
  const parts: ChatPart[] = [];
  if (!streamed.trim()) {
    parts.push(...textWithAnchors(text, known));
  } else if (normalise(streamed) !== normalise(text)) {
    parts.push({ kind: "markdown", value: `\n\n---\n\n*${labels.checkedAgain}*\n\n` });
    parts.push(...textWithAnchors(text, known));
  }
  parts.push({ kind: "markdown", value: `\n\n${statusLine(answer)}\n` });
  const caveats = answer.confidence?.caveats ?? [];
  if (caveats.length) parts.push({ kind: "markdown", value: `\n${caveats.map((c) => `- *${escapeMarkdown(c)}*`).join("\n")}\n` });
  if (answer.searched) parts.push({ kind: "markdown", value: `\n${escapeMarkdown(answer.searched)}\n` });
  parts.push(...actionParts(answer, labels));
  const evidences = answer.evidences ?? [];
  if (evidences.length) {
    const cited = new Set((answer.citations ?? []).map((c) => c.id));
    parts.push({ kind: "markdown", value: `\n**${labels.evidence} (${evidences.length})**\n\n` });
    for (const ev of evidences) parts.push(...evidenceLine(ev, cited.has(ev.id), labels));
    for (const ev of evidences) {
      parts.push({ kind: "reference", location: { path: ev.path, startLine: ev.startLine, endLine: ev.endLine, project: ev.project } });
    }
  }
  return parts;
}

/**
 * What the answer offers to do, as chat parts: a location to open is an anchor; a question
 * to ask is also a follow-up button; a scope is listed (the answer view has its button).
 */
function actionParts(answer: Answer, labels: AnswerLabels): ChatPart[] {
  const views = answerActions(answer);
  if (!views.length) return [];
  const parts: ChatPart[] = [{ kind: "markdown", value: `\n**${labels.actionsTitle}**\n\n` }];
  for (const v of views) {
    if (v.action === "open") {
      parts.push({ kind: "markdown", value: `- ${escapeMarkdown(v.label)} ` });
      parts.push({ kind: "anchor", location: v.location, title: locationLabel(v.location) });
      parts.push({ kind: "markdown", value: "\n" });
    } else {
      parts.push({ kind: "markdown", value: `- ${escapeMarkdown(v.label)}\n` });
    }
  }
  return parts;
}
