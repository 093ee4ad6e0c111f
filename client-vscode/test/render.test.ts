import { describe, expect, it } from "vitest";
import type { Answer, AnswerState } from "../src/protocol";
import {
  citationLookup,
  confidenceLabel,
  coverageClass,
  renderBadges,
  renderConversation,
  renderPage,
  renderTurn,
  stateClass,
} from "../src/render/answer";
import { escapeHtml } from "../src/render/escape";
import { renderMarkdown } from "../src/render/markdown";

function answer(overrides: Partial<Answer> = {}): Answer {
  return {
    state: "OK",
    confidence: { score: 82, components: {}, caveats: [] },
    coverage: "high",
    depth: "D2",
    answer: "The parser lives in `parse_config` [E1].",
    citations: [{ id: "E1", path: "pkg/config.py", startLine: 10, endLine: 24 }],
    evidences: [
      {
        id: "E1",
        path: "pkg/config.py",
        startLine: 10,
        endLine: 24,
        score: 0.91,
        symbol: "parse_config",
        kind: "function",
        language: "python",
        project: "app",
        snippet: "def parse_config(path):",
      },
    ],
    suggestions: [],
    meta: { llmCalled: true, model: "claude", tookMs: 120, contextsUsed: 1 },
    ...overrides,
  };
}

const none = (): undefined => undefined;

describe("escapeHtml", () => {
  it("escapes the five HTML-significant characters", () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe("&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  });
});

describe("renderMarkdown", () => {
  it("never lets server HTML through", () => {
    const html = renderMarkdown('<script>alert(1)</script> <img src=x onerror="alert(2)">', none);
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });

  it("escapes HTML inside code spans and fenced code", () => {
    const html = renderMarkdown("use `<b>` here\n\n```html\n<div onclick=x>[E1]</div>\n```", () => ({ label: "a.py:1" }));
    expect(html).toContain("<code>&lt;b&gt;</code>");
    expect(html).toContain('<pre><code data-lang="html">&lt;div onclick=x&gt;[E1]&lt;/div&gt;</code></pre>');
    // Citation markers inside code are code, not links.
    expect(html).not.toContain("data-cite");
  });

  it("renders bold, italics, lists, headings and paragraphs", () => {
    const html = renderMarkdown("# Title\n\n**bold** and *it*\nnext\n\n- one\n- two\n\n1. first\n2. second", none);
    expect(html).toContain("<h3>Title</h3>");
    expect(html).toContain("<p><strong>bold</strong> and <em>it</em><br>next</p>");
    expect(html).toContain("<ul><li>one</li><li>two</li></ul>");
    expect(html).toContain("<ol><li>first</li><li>second</li></ol>");
  });

  it("links known citation ids and leaves unknown ids inert", () => {
    const lookup = citationLookup(answer());
    const html = renderMarkdown("Known [E1], unknown [E9], grouped [E1, E9].", lookup, 3);
    expect(html).toContain('<a class="cite" href="#" data-turn="3" data-cite="E1" title="pkg/config.py:10-24">[E1]</a>');
    expect(html).toContain('<span class="cite cite-unknown" title="not a cited source">[E9]</span>');
    expect(html.match(/data-cite="E1"/g)).toHaveLength(2);
    expect(html).not.toContain('data-cite="E9"');
  });

  it("keeps an unterminated fence (mid-stream) as code", () => {
    expect(renderMarkdown("```\nx < y", none)).toBe("<pre><code>x &lt; y</code></pre>");
  });
});

describe("badges", () => {
  const cases: [AnswerState, string][] = [
    ["OK", "state-ok"],
    ["PARTIAL", "state-partial"],
    ["AMBIGUOUS", "state-ambiguous"],
    ["FAIL", "state-fail"],
  ];
  it.each(cases)("state %s gets class %s and the score · state label", (state, cls) => {
    const html = renderBadges(answer({ state, confidence: { score: 41.6 } }));
    expect(html).toContain(`badge confidence ${cls}`);
    expect(html).toContain(`42 · ${state}`);
  });

  it("gives unknown states and coverages a neutral class", () => {
    expect(stateClass("<x>")).toBe("state-unknown");
    expect(coverageClass("huge")).toBe("coverage-unknown");
    expect(coverageClass("low")).toBe("coverage-low");
  });

  it("clamps the score into 0..100", () => {
    expect(confidenceLabel({ state: "OK", confidence: { score: 140 } })).toBe("100 · OK");
    expect(confidenceLabel({ state: "FAIL", confidence: { score: Number.NaN } })).toBe("0 · FAIL");
  });

  it("shows coverage, depth and an extractive tag when no model was called", () => {
    const html = renderBadges(answer({ coverage: "low", depth: "D1", meta: { llmCalled: false, model: null, tookMs: 1, contextsUsed: 1 } }));
    expect(html).toContain("coverage: low");
    expect(html).toContain(">D1<");
    expect(html).toContain("extractive");
    expect(renderBadges(answer())).not.toContain("extractive");
  });
});

describe("renderTurn", () => {
  it("escapes the question, evidence fields and suggestions", () => {
    const a = answer({
      suggestions: ['Ask about <script>"x"</script>'],
      evidences: [{ ...answer().evidences[0], path: "a/<b>.py", symbol: "<i>sym</i>" }],
    });
    const html = renderTurn({ question: "why <b>?</b>", streamed: "", answer: a }, 0);
    expect(html).toContain("why &lt;b&gt;?&lt;/b&gt;");
    expect(html).toContain("a/&lt;b&gt;.py:10-24");
    expect(html).toContain("&lt;i&gt;sym&lt;/i&gt;");
    expect(html).toContain('data-ask="Ask about &lt;script&gt;&quot;x&quot;&lt;/script&gt;"');
    expect(html).not.toMatch(/<(script|b|i)>/);
  });

  it("lists evidences with scores as clickable links", () => {
    const html = renderTurn({ question: "q", streamed: "", answer: answer() }, 2);
    expect(html).toContain('data-turn="2" data-evidence="E1"');
    expect(html).toContain(">0.91<");
    expect(html).toContain("Evidence (1)");
  });

  it("shows streamed text while pending, without links", () => {
    const html = renderTurn({ question: "q", streamed: "Partial **text** [E1]" }, 0);
    expect(html).toContain("Searching the evidence");
    expect(html).toContain("<strong>text</strong>");
    expect(html).not.toContain("data-cite");
  });

  it("shows errors escaped", () => {
    const html = renderTurn({ question: "q", streamed: "", error: "bad <input>" }, 0);
    expect(html).toContain('<div class="error" role="alert">bad &lt;input&gt;</div>');
  });

  it("renders an empty conversation hint and one section per turn", () => {
    expect(renderConversation([])).toContain("Ask a question");
    const html = renderConversation([
      { question: "a", streamed: "", answer: answer() },
      { question: "b", streamed: "" },
    ]);
    expect(html.match(/<section class="turn"/g)).toHaveLength(2);
  });
});

describe("renderPage", () => {
  it("declares a strict CSP with the nonce on the only script", () => {
    const html = renderPage({ cspSource: "vscode-webview://abc", nonce: "N0nce", scriptUri: "s.js", styleUri: "s.css" }, "");
    expect(html).toContain("default-src 'none'; script-src 'nonce-N0nce'; style-src vscode-webview://abc 'nonce-N0nce'");
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).toContain('<script nonce="N0nce" src="s.js"></script>');
    expect(html).not.toContain("unsafe-inline");
  });
});
