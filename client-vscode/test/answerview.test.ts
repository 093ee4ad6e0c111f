import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  askParams,
  contextLabel,
  type Conversation,
  forkAt,
  fromStored,
  historyOf,
  keyProblem,
  MAX_PAST_CONVERSATIONS,
  newConversation,
  toStored,
  type Turn,
} from "../src/conversation";
import type { Answer, SentenceVerdict } from "../src/protocol";
import { pendingLabel, renderAnswerText, renderTurn } from "../src/render/answer";
import { applyMarks, verdictSummary, withSentinels } from "../src/render/verdicts";
import { answerActions, askableSuggestions, suggestionView, suggestionViews } from "../src/suggestions";
import { meta, recorded } from "./samples";

const recordedAnswer = (): Answer => recorded<Answer>("ask");

function verdict(text: string, sentence: string, v: string, cites: string[] = []): SentenceVerdict {
  const start = Array.from(text.slice(0, text.indexOf(sentence))).length;
  return { text: sentence, start, end: start + Array.from(sentence).length, verdict: v, citations: cites, support: 0 };
}

function done(question: string, answer: Answer): Turn {
  return { question, phase: "done", streamed: "", answer };
}

describe("sentence verdict marks", () => {
  it("marks nothing in the recorded answer whose only sentence is supported", () => {
    const a = recordedAnswer();
    assert.ok(a.sentences.length > 0 && a.sentences.every((s) => s.verdict === "supported"));
    const html = renderAnswerText(a, 0);
    assert.ok(!html.includes('class="claim '), html);
    assert.ok(html.includes('data-cite="E1"'));
  });

  it("marks unsupported and uncited sentences inline, with a text flag and a summary", () => {
    const text = "Gold gets 20% off `compute_discount` [E1]. The rate is stored in Redis [E1]. Taxes come later.";
    const a: Answer = {
      ...recordedAnswer(),
      answer: text,
      sentences: [
        verdict(text, "Gold gets 20% off `compute_discount` [E1].", "supported", ["E1"]),
        verdict(text, "The rate is stored in Redis [E1].", "unsupported", ["E1"]),
        verdict(text, "Taxes come later.", "uncited"),
      ],
    };
    const html = renderAnswerText(a, 0);
    assert.match(html, /<span class="claim claim-unsupported" data-verdict="unsupported" title="[^"]+">The rate is stored in Redis <a class="cite"[^>]*>\[E1\]<\/a>\.<\/span><span class="claim-flag"[^>]*>unsupported<\/span>/);
    assert.match(html, /<span class="claim claim-uncited"[^>]*>Taxes come later\.<\/span><span class="claim-flag"[^>]*>uncited<\/span>/);
    assert.ok(html.includes("<code>compute_discount</code>"));
    assert.equal(html.match(/class="claim /g)?.length, 2);
    assert.equal(verdictSummary(a.sentences), "1 sentence not supported by its citations · 1 without a citation");
    assert.ok(html.includes("(marked in the text)"));
    const pt = renderAnswerText({ ...a, meta: { ...a.meta, questionLanguage: "pt" } }, 0);
    assert.match(pt, /<span class="claim-flag"[^>]*>sem suporte<\/span>/);
    assert.ok(pt.includes("1 frase sem suporte nas citações · 1 sem citação (marcadas no texto)"));
  });

  it("counts offsets in code points, as the server does (text before a non-BMP character)", () => {
    const text = "Ship it 🚀 now. Nobody checked this.";
    const s = verdict(text, "Nobody checked this.", "uncited");
    const html = applyMarks(withSentinels(text, [s]), [s]);
    assert.ok(html.includes('<span class="claim claim-uncited"'));
    assert.ok(html.includes(">Nobody checked this.</span>"), html);
  });

  it("shows a verdict it does not know neutrally, and ignores bad offsets", () => {
    const text = "One. Two.";
    const odd = { ...verdict(text, "Two.", "contradicted") };
    const html = applyMarks(withSentinels(text, [odd, { ...odd, start: 9, end: 3 }]), [odd]);
    assert.ok(html.includes('class="claim claim-other" data-verdict="contradicted"'));
    assert.ok(!html.includes("claim-flag"));
  });

  it("never lets sentinel characters from the server through", () => {
    assert.equal(withSentinels("a\uE0001\uE001b", []), "a1b");
  });
});

describe("suggestions", () => {
  it("asks a sentence, as the server sends today (the recorded refusal)", () => {
    const refusal = recorded<Answer>("ask-refusal");
    const views = suggestionViews(refusal.suggestions);
    assert.equal(views.length, refusal.suggestions.length);
    assert.ok(views.every((v) => v.action === "ask"));
    assert.deepEqual(askableSuggestions(refusal.suggestions), refusal.suggestions);
  });

  it("turns open, scope and rephrase actions into actions, and unknown kinds into text", () => {
    assert.deepEqual(suggestionView({ kind: "open", path: "pricing.py", startLine: 4, endLine: 8, label: "Open the closest match" }), {
      label: "Open the closest match",
      action: "open",
      location: { path: "pricing.py", startLine: 4, endLine: 8, project: undefined },
    });
    assert.deepEqual(suggestionView({ kind: "scope", pathPrefix: "docs/" }), { label: "Ask again within docs/", action: "scope", scope: { pathPrefix: "docs/" } });
    assert.deepEqual(suggestionView({ kind: "rephrase", query: "Where is compute_discount defined?" }), {
      label: "Where is compute_discount defined?",
      action: "ask",
      query: "Where is compute_discount defined?",
    });
    assert.deepEqual(suggestionView({ kind: "teleport", label: "Try the other repo" }), { label: "Try the other repo", action: "none" });
    assert.equal(suggestionView({ kind: "open" }), undefined);
    assert.equal(suggestionView(42), undefined);
    assert.deepEqual(askableSuggestions([{ kind: "scope", language: "python" }, "Ask this"]), ["Ask this"]);
  });

  it("renders action suggestions as buttons routed by index and unknown ones as plain text", () => {
    const a: Answer = { ...recordedAnswer(), actions: [], suggestions: ["Plain <q>", { kind: "scope", pathPrefix: "docs/" }, { kind: "mystery", text: "Read <this>" }] };
    const html = renderTurn(done("q", a), 4);
    assert.ok(html.includes('data-ask="Plain &lt;q&gt;"'));
    assert.ok(html.includes('data-turn="4" data-suggestion="1">Ask again within docs/</button>'));
    assert.ok(html.includes('<div class="suggestion-text">Read &lt;this&gt;</div>'));
  });
});

describe("answer turn states", () => {
  it("says what it waits for: the search, the model, or that the model is writing", () => {
    const t: Turn = { question: "q", phase: "searching", streamed: "" };
    assert.equal(pendingLabel(t, { llmConfigured: false }), "Searching the evidence…");
    assert.equal(pendingLabel(t, { llmConfigured: true }), "Searching the evidence, then waiting for the model…");
    assert.equal(pendingLabel({ ...t, phase: "streaming", streamed: "x" }, {}), "The model is writing…");
  });

  it("offers Set API Key instead of FAIL and coverage when the key was rejected", () => {
    const a: Answer = {
      ...recordedAnswer(),
      state: "FAIL",
      answer: "No answer: HTTP 401: invalid x-api-key.",
      meta: meta({ llmCalled: true, error: "HTTP 401: invalid x-api-key" }),
    };
    assert.equal(keyProblem(a), "rejected");
    const html = renderTurn(done("q", a), 0);
    assert.ok(html.includes('data-action="setApiKey"'));
    assert.ok(!html.includes("coverage:"), "no coverage badge next to a failed key");
    assert.ok(!html.includes("· FAIL"));
    assert.ok(html.includes("Evidence ("), "the evidence found is still listed");
    assert.equal(keyProblem(recordedAnswer()), undefined);
    assert.equal(keyProblem({ ...recordedAnswer(), meta: meta({ error: "HTTP 529: overloaded" }) }), undefined);
  });

  it("offers Set API Key next to an extractive answer", () => {
    const a: Answer = { ...recordedAnswer(), state: "PARTIAL", meta: meta({ llmCalled: false, model: null }) };
    const html = renderTurn(done("q", a), 0);
    assert.ok(html.includes("extractive") && html.includes('data-action="setApiKey"'));
  });

  it("has copy and retry on the last finished turn, edit on every turn, nothing while running", () => {
    const html = renderTurn(done("q", recordedAnswer()), 2, {}, true);
    assert.ok(html.includes('data-action="copyAnswer" data-turn="2"'));
    assert.ok(html.includes('data-action="retry" data-turn="2"'));
    assert.ok(html.includes('data-action="edit" data-turn="2"'));
    assert.ok(!renderTurn(done("q", recordedAnswer()), 1, {}, false).includes('data-action="retry"'));
    const running = renderTurn({ question: "q", phase: "streaming", streamed: "Par" }, 0);
    assert.ok(!running.includes("copyAnswer") && !running.includes('data-action="retry"'));
    const stopped = renderTurn({ question: "q", phase: "stopped", streamed: "Partial" }, 0);
    assert.ok(stopped.includes("Stopped.") && stopped.includes("Partial") && stopped.includes('data-action="retry"'));
  });

  it("shows which lines a selection question was about", () => {
    assert.equal(contextLabel({ activeFile: "geometry/report.py", selection: { startLine: 7, endLine: 9 } }), "geometry/report.py:7-9");
    assert.equal(contextLabel({ pathPrefix: "docs/", language: "markdown" }), "within docs/, markdown");
    const html = renderTurn({ question: "What does this do?", phase: "searching", streamed: "", context: { activeFile: "a.py", selection: { startLine: 3, endLine: 3 } } }, 0);
    assert.ok(html.includes("about a.py:3"));
  });
});

describe("conversations across a reload", () => {
  let n = 0;
  const id = (): string => `c${++n}`;

  it("stores the answered turns and restores them; a running turn comes back stopped", () => {
    const c: Conversation = newConversation("c-1");
    c.turns.push(done("first?", recordedAnswer()), { question: "second?", phase: "streaming", streamed: "half" });
    const stored = JSON.parse(JSON.stringify(toStored(c, [])));
    const back = fromStored(stored, id);
    assert.equal(back.current.id, "c-1");
    assert.equal(back.current.turns.length, 2);
    assert.equal(back.current.turns[0].answer?.answer, recordedAnswer().answer);
    assert.equal(back.current.turns[1].phase, "stopped");
    assert.equal(back.current.turns[1].streamed, "half");
    assert.equal(back.current.serverKnows, false, "a restarted server does not know the conversation");
  });

  it("sends the earlier turns as history when the server does not know them, and not otherwise", () => {
    const c: Conversation = { ...newConversation("c-2"), serverKnows: false };
    c.turns.push(done("Where is compute_discount?", recordedAnswer()), { question: "and its tests?", phase: "searching", streamed: "" });
    const p = askParams(c, "r-9");
    assert.equal(p.question, "and its tests?");
    assert.equal(p.conversationId, "c-2");
    assert.equal(p.requestId, "r-9");
    assert.deepEqual(p.history, [
      { role: "user", content: "Where is compute_discount?" },
      { role: "assistant", content: recordedAnswer().answer },
    ]);
    assert.equal(askParams({ ...c, serverKnows: true }, "r").history, undefined);
  });

  it("forks at an edited or retried turn under a new id", () => {
    const c: Conversation = newConversation("c-3");
    c.turns.push(done("a", recordedAnswer()), done("b", recordedAnswer()), done("c", recordedAnswer()));
    const f = forkAt(c, 1, "c-4");
    assert.equal(f.id, "c-4");
    assert.deepEqual(f.turns.map((t) => t.question), ["a"]);
    assert.equal(f.serverKnows, false);
    assert.equal(historyOf(f.turns).length, 2);
  });

  it("reads garbage as a fresh conversation and keeps at most the latest past ones", () => {
    assert.equal(fromStored("nonsense", () => "fresh").current.id, "fresh");
    assert.equal(fromStored({ version: 2 }, () => "fresh2").current.id, "fresh2");
    const past = Array.from({ length: 15 }, (_, i) => ({ ...newConversation(`p${i}`), turns: [done("q", recordedAnswer())] }));
    assert.equal(toStored(newConversation("now"), past).past.length, MAX_PAST_CONVERSATIONS);
  });
});

describe("answer actions", () => {
  it("prefer the answer's actions over its suggestion labels, and a null filter removes it", () => {
    const a = recorded<Answer>("ask-spelling"); // a misspelled name: a spelling fix, then the definition
    const views = answerActions(a);
    assert.equal(views.length, a.actions.length);
    assert.deepEqual(views.slice(0, 2).map((v) => v.action), ["ask", "open"]);
    assert.deepEqual(views.map((v) => v.label), a.actions.map((x) => x.label));
    const none = answerActions({ actions: [{ kind: "scope", label: "Ask again without the language filter", language: null }], suggestions: ["x"] });
    assert.deepEqual(none, [{ label: "Ask again without the language filter", action: "scope", scope: { language: undefined } }]);
    assert.deepEqual(answerActions({ actions: [], suggestions: ["why?"] }), [{ label: "why?", action: "ask", query: "why?" }]);
    assert.deepEqual(suggestionView({ kind: "ask", label: "Ask about `Flask.run`", question: "what does Flask.run do?" }), { label: "Ask about `Flask.run`", action: "ask", query: "what does Flask.run do?" });
  });
});
