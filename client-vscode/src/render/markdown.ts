/**
 * Minimal, safe markdown for answers: the text is HTML-escaped first, then a small
 * set of constructs is recognised (fenced code, code spans, bold, italics, headings,
 * lists, paragraphs) and citation markers `[E1]` become links — only for ids the
 * answer really cites; unknown ids stay inert text so a made-up id never looks clickable.
 */
import { escapeHtml } from "./escape";

export interface CitationTarget {
  /** Shown as the link's tooltip, e.g. "pkg/mod.py:10-20". */
  label: string;
}

export type CitationLookup = (id: string) => CitationTarget | undefined;

const CITE_GROUP = /\[((?:E\d+)(?:\s*,\s*E\d+)*)\]/g;

/** Replace `[E1]` / `[E1, E2]` in already-escaped text. */
export function linkCitations(escaped: string, lookup: CitationLookup, turn: number): string {
  return escaped.replace(CITE_GROUP, (_whole, group: string) =>
    group
      .split(",")
      .map((raw) => {
        const id = raw.trim();
        const target = lookup(id);
        if (!target) {
          return `<span class="cite cite-unknown" title="not a cited source">[${id}]</span>`;
        }
        return (
          `<a class="cite" href="#" data-turn="${turn}" data-cite="${id}" ` +
          `title="${escapeHtml(target.label)}">[${id}]</a>`
        );
      })
      .join(""),
  );
}

/** Inline constructs on one escaped line: code spans are protected from the rest. */
function renderInline(line: string, lookup: CitationLookup, turn: number): string {
  const parts = line.split(/(`[^`]+`)/g);
  return parts
    .map((part) => {
      if (part.length > 2 && part.startsWith("`") && part.endsWith("`")) {
        return `<code>${part.slice(1, -1)}</code>`;
      }
      let out = part.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
      out = out.replace(/(^|[^*\w])\*([^*\s][^*]*)\*(?!\w)/g, "$1<em>$2</em>");
      return linkCitations(out, lookup, turn);
    })
    .join("");
}

type Block =
  | { kind: "code"; lang: string; lines: string[] }
  | { kind: "para"; lines: string[] }
  | { kind: "list"; ordered: boolean; items: string[] }
  | { kind: "heading"; level: number; text: string };

function splitBlocks(source: string): Block[] {
  const blocks: Block[] = [];
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  let para: string[] = [];
  const flushPara = (): void => {
    if (para.length) blocks.push({ kind: "para", lines: para });
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = /^\s*```\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      flushPara();
      const code: string[] = [];
      i++;
      // An unterminated fence (mid-stream) runs to the end: still shown as code.
      while (i < lines.length && !/^\s*```\s*$/.test(lines[i])) code.push(lines[i++]);
      i++;
      blocks.push({ kind: "code", lang: fence[1] ?? "", lines: code });
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flushPara();
      blocks.push({ kind: "heading", level: heading[1].length, text: heading[2] });
      i++;
      continue;
    }
    const bullet = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (bullet) {
      flushPara();
      const ordered = /\d/.test(bullet[1]);
      const items: string[] = [];
      while (i < lines.length) {
        const m = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]);
        if (!m || /\d/.test(m[1]) !== ordered) break;
        items.push(m[2]);
        i++;
      }
      blocks.push({ kind: "list", ordered, items });
      continue;
    }
    if (line.trim() === "") flushPara();
    else para.push(line);
    i++;
  }
  flushPara();
  return blocks;
}

/** Render answer markdown to HTML. Every character of `source` is escaped before markup is added. */
export function renderMarkdown(source: string, lookup: CitationLookup, turn = 0): string {
  return splitBlocks(source)
    .map((block) => {
      switch (block.kind) {
        case "code": {
          const lang = block.lang ? ` data-lang="${escapeHtml(block.lang)}"` : "";
          // The copy button is handled by the webview script (it copies the code element's text).
          return (
            `<div class="code-block"><button class="copy-code" type="button" title="Copy code" aria-label="Copy code">Copy</button>` +
            `<pre><code${lang}>${escapeHtml(block.lines.join("\n"))}</code></pre></div>`
          );
        }
        case "heading": {
          // Answers live under the question's own heading: demote to h3..h6.
          const level = Math.min(6, block.level + 2);
          return `<h${level}>${renderInline(escapeHtml(block.text), lookup, turn)}</h${level}>`;
        }
        case "list": {
          const tag = block.ordered ? "ol" : "ul";
          const items = block.items
            .map((item) => `<li>${renderInline(escapeHtml(item), lookup, turn)}</li>`)
            .join("");
          return `<${tag}>${items}</${tag}>`;
        }
        case "para":
          return `<p>${block.lines.map((l) => renderInline(escapeHtml(l), lookup, turn)).join("<br>")}</p>`;
      }
    })
    .join("\n");
}
