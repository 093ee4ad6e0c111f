import assert from "node:assert/strict";
import { describe, it } from "node:test";
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
import { conf, meta } from "./samples";

function answer(overrides: Partial<Answer> = {}): Answer {
  return {
    actions: [],
    searched: null,
    absent: [],
    citationsUsed: ["E1"],
    sentences: [],
    depthSignals: [],
    conversationId: null,
    state: "OK",
    confidence: conf({ score: 82 }),
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
        relevance: 0.8,
        status: "current",
      },
    ],
    suggestions: [],
    meta: meta({ llmCalled: true, model: "claude", tookMs: 120, contextsUsed: 1 }),
    ...overrides,
  };
}

const none = (): undefined => undefined;

describe("escapeHtml", () => {
  it("escapes the five HTML-significant characters", () => {
    assert.equal(escapeHtml(`<a href="x" onclick='y'>&</a>`), "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  });
});

describe("renderMarkdown", () => {
  it("never lets server HTML through", () => {
    const html = renderMarkdown('<script>alert(1)</script> <img src=x onerror="alert(2)">', none);
    assert.ok(!html.includes("<script"));
    assert.ok(!html.includes("<img"));
    assert.ok(html.includes("&lt;script&gt;alert(1)&lt;/script&gt;"));
  });

  it("escapes HTML inside code spans and fenced code", () => {
    const html = renderMarkdown("use `<b>` here\n\n```html\n<div onclick=x>[E1]</div>\n```", () => ({ label: "a.py:1" }));
    assert.ok(html.includes("<code>&lt;b&gt;</code>"));
    assert.ok(html.includes('<pre><code data-lang="html">&lt;div onclick=x&gt;[E1]&lt;/div&gt;</code></pre>'));
    // Citation markers inside code are code, not links.
    assert.ok(!html.includes("data-cite"));
  });

  it("renders bold, italics, lists, headings and paragraphs", () => {
    const html = renderMarkdown("# Title\n\n**bold** and *it*\nnext\n\n- one\n- two\n\n1. first\n2. second", none);
    assert.ok(html.includes("<h3>Title</h3>"));
    assert.ok(html.includes("<p><strong>bold</strong> and <em>it</em><br>next</p>"));
    assert.ok(html.includes("<ul><li>one</li><li>two</li></ul>"));
    assert.ok(html.includes("<ol><li>first</li><li>second</li></ol>"));
  });

  it("links known citation ids and leaves unknown ids inert", () => {
    const lookup = citationLookup(answer());
    const html = renderMarkdown("Known [E1], unknown [E9], grouped [E1, E9].", lookup, 3);
    assert.ok(html.includes('<a class="cite" href="#" data-turn="3" data-cite="E1" title="pkg/config.py:10-24">[E1]</a>'));
    assert.ok(html.includes('<span class="cite cite-unknown" title="not a cited source">[E9]</span>'));
    assert.equal(html.match(/data-cite="E1"/g)?.length, 2);
    assert.ok(!html.includes('data-cite="E9"'));
  });

  it("keeps an unterminated fence (mid-stream) as code", () => {
    const html = renderMarkdown("```\nx < y", none);
    assert.ok(html.includes("<pre><code>x &lt; y</code></pre>"), html);
    assert.ok(html.includes('class="copy-code"'), "code blocks get a copy button");
  });
});

describe("badges", () => {
  const cases: [AnswerState, string][] = [
    ["OK", "state-ok"],
    ["PARTIAL", "state-partial"],
    ["AMBIGUOUS", "state-ambiguous"],
    ["FAIL", "state-fail"],
  ];
  for (const [state, cls] of cases) {
    it(`state ${state} gets class ${cls} and the score · state label`, () => {
      const html = renderBadges(answer({ state, confidence: conf({ score: 41.6 }) }));
      assert.ok(html.includes(`badge confidence ${cls}`));
      assert.ok(html.includes(`42 · ${state}`));
    });
  }

  it("gives unknown states and coverages a neutral class", () => {
    assert.equal(stateClass("<x>"), "state-unknown");
    assert.equal(coverageClass("huge"), "coverage-unknown");
    assert.equal(coverageClass("low"), "coverage-low");
  });

  it("clamps the score into 0..100", () => {
    assert.equal(confidenceLabel({ state: "OK", confidence: conf({ score: 140 }) }), "100 · OK");
    assert.equal(confidenceLabel({ state: "FAIL", confidence: conf({ score: Number.NaN }) }), "0 · FAIL");
  });

  it("shows coverage, depth and an extractive tag when no model was called", () => {
    const html = renderBadges(answer({ coverage: "low", depth: "D1", meta: meta({ llmCalled: false, model: null, tookMs: 1, contextsUsed: 1 }) }));
    assert.ok(html.includes("coverage: low"));
    assert.ok(html.includes(">D1<"));
    assert.ok(html.includes("extractive"));
    assert.ok(!renderBadges(answer()).includes("extractive"));
  });
});

describe("the question's language", () => {
  it("frames a Portuguese question's answer in Portuguese: state, coverage, badges, sections", () => {
    const pt = answer({
      state: "PARTIAL",
      coverage: "low",
      suggestions: ["Abra `parse_config`"],
      meta: meta({ llmCalled: false, model: null, tookMs: 1, contextsUsed: 1, questionLanguage: "pt" }),
    });
    const badges = renderBadges(pt);
    assert.ok(badges.includes("cobertura: baixa"));
    assert.ok(badges.includes("82 · PARCIAL"));
    assert.ok(badges.includes(">extrativa<"));
    assert.ok(!/coverage:|PARTIAL|>extractive</.test(badges));
    const html = renderTurn({ question: "onde fica o parser?", phase: "done", streamed: "", answer: pt }, 0);
    assert.ok(html.includes("Evidências (1)"));
    assert.ok(html.includes(">Sugestões<"));
  });

  it("keeps English for English and for a language it has no labels for", () => {
    for (const questionLanguage of ["en", "de"]) {
      const html = renderBadges(answer({ meta: meta({ questionLanguage }) }));
      assert.ok(html.includes("coverage: high") && html.includes("82 · OK"), questionLanguage);
    }
  });
});

describe("renderTurn", () => {
  it("escapes the question, evidence fields and suggestions", () => {
    const a = answer({
      suggestions: ['Ask about <script>"x"</script>'],
      evidences: [{ ...answer().evidences[0], path: "a/<b>.py", symbol: "<i>sym</i>" }],
    });
    const html = renderTurn({ question: "why <b>?</b>", phase: "done", streamed: "", answer: a }, 0);
    assert.ok(html.includes("why &lt;b&gt;?&lt;/b&gt;"));
    assert.ok(html.includes("a/&lt;b&gt;.py:10-24"));
    assert.ok(html.includes("&lt;i&gt;sym&lt;/i&gt;"));
    assert.ok(html.includes('data-ask="Ask about &lt;script&gt;&quot;x&quot;&lt;/script&gt;"'));
    assert.doesNotMatch(html, /<(script|b|i)>/);
  });

  it("lists evidences with scores as clickable links", () => {
    const html = renderTurn({ question: "q", phase: "done", streamed: "", answer: answer() }, 2);
    assert.ok(html.includes('data-turn="2" data-evidence="E1"'));
    assert.ok(html.includes(">0.91<"));
    assert.ok(html.includes("Evidence (1)"));
  });

  it("shows streamed text while pending, without links", () => {
    const html = renderTurn({ question: "q", phase: "streaming", streamed: "Partial **text** [E1]" }, 0);
    assert.ok(html.includes("The model is writing"));
    assert.ok(html.includes("<strong>text</strong>"));
    assert.ok(!html.includes("data-cite"));
  });

  it("shows errors escaped", () => {
    const html = renderTurn({ question: "q", phase: "error", streamed: "", error: "bad <input>" }, 0);
    assert.ok(html.includes('<div class="error" role="alert">bad &lt;input&gt;</div>'));
  });

  it("renders an empty conversation hint and one section per turn", () => {
    assert.ok(renderConversation([]).includes("Ask a question"));
    const html = renderConversation([
      { question: "a", phase: "done", streamed: "", answer: answer() },
      { question: "b", phase: "searching", streamed: "" },
    ]);
    assert.equal(html.match(/<section class="turn"/g)?.length, 2);
  });
});

describe("renderPage", () => {
  it("declares a strict CSP with the nonce on the only script", () => {
    const html = renderPage({ cspSource: "vscode-webview://abc", nonce: "N0nce", scriptUri: "s.js", styleUri: "s.css" }, "");
    assert.ok(html.includes("default-src 'none'; script-src 'nonce-N0nce'; style-src vscode-webview://abc 'nonce-N0nce'"));
    assert.equal(html.match(/<script/g)?.length, 1);
    assert.ok(html.includes('<script nonce="N0nce" src="s.js"></script>'));
    assert.ok(!html.includes("unsafe-inline"));
  });
});
