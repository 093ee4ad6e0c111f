import { readFileSync } from "node:fs";
import { join } from "node:path";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { answerParts, codeSpan, escapeMarkdown, inertLinks, statusLine, textWithAnchors, type ChatPart } from "../src/chatAnswer";
import { conversationFor, followupPrompts, MAX_HISTORY_MESSAGES, type ChatTurn } from "../src/chatHistory";
import { hasChatParticipants, hasMcpProviders } from "../src/features";
import { CHAT_PARTICIPANT_ID, CHAT_PARTICIPANT_NAME, MCP_PROVIDER_ID, MCP_SERVER_LABEL } from "../src/ids";
import { mcpCommandFor } from "../src/mcpCommand";
import type { Answer, Evidence } from "../src/protocol";
import { serverCommandFor } from "../src/pythonEnv";
import { conf, meta } from "./samples";

const pkg = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8"));

function evidence(id: string, path: string, startLine: number, endLine: number, extra: Partial<Evidence> = {}): Evidence {
  return { id, path, startLine, endLine, score: 0.91, relevance: 0.8, status: "current", symbol: null, kind: null, language: "python", project: "app", snippet: "", ...extra };
}

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
    confidence: conf({ score: 82.4, caveats: [] }),
    coverage: "high",
    depth: "D2",
    answer: "The parser lives in `parse_config` [E1], tested in [E2, E9].",
    citations: [{ id: "E1", path: "pkg/config.py", startLine: 10, endLine: 24 }],
    evidences: [evidence("E1", "pkg/config.py", 10, 24, { symbol: "parse_config" }), evidence("E2", "tests/test_config.py", 3, 3)],
    suggestions: ["Where is parse_config called?"],
    meta: meta({ llmCalled: true, model: "claude", tookMs: 120, contextsUsed: 2 }),
    ...overrides,
  };
}

const markdownOf = (parts: ChatPart[]): string => parts.map((p) => (p.kind === "markdown" ? p.value : p.kind === "anchor" ? `<${p.title}>` : "")).join("");

describe("answer → chat parts", () => {
  it("turns known citation ids into anchors at the cited lines and leaves made-up ids as text", () => {
    const parts = answerParts(answer());
    const text = markdownOf(parts);
    assert.match(text, /^The parser lives in `parse_config` <E1>, tested in <E2> \\\[E9\\\]\./);
    const e1 = parts.find((p) => p.kind === "anchor" && p.title === "E1");
    assert.deepEqual(e1, { kind: "anchor", title: "E1", location: { path: "pkg/config.py", startLine: 10, endLine: 24, project: "app" } });
    assert.ok(!parts.some((p) => p.kind === "anchor" && p.title === "E9"));
  });

  it("shows state, confidence and coverage, and says when no model was called", () => {
    assert.equal(statusLine(answer()), "**OK · 82** · coverage high · depth D2");
    const extractive = statusLine(answer({ state: "PARTIAL", confidence: conf({ score: 140 }), coverage: "low", meta: meta({ llmCalled: false, model: null, tookMs: 1, contextsUsed: 1 }) }));
    assert.equal(extractive, "**PARTIAL · 100** · coverage low · depth D2 · extractive (no model was called)");
    assert.match(markdownOf(answerParts(answer())), /\*\*OK · 82\*\* · coverage high/);
  });

  it("writes the status line in the question's language", () => {
    const pt = answer({ state: "FAIL", coverage: "none", meta: meta({ llmCalled: false, model: null, tookMs: 1, contextsUsed: 0, questionLanguage: "pt" }) });
    assert.equal(statusLine(pt), "**FALHA · 82** · cobertura nenhuma · profundidade D2 · extrativa (nenhum modelo foi chamado)");
  });

  it("frames the whole answer in the question's language: sections, scores, the re-checked text", () => {
    const pt = answer({
      actions: [{ kind: "info", label: "Cite uma função, classe ou arquivo" }],
      meta: meta({ llmCalled: true, model: "claude", tookMs: 1, contextsUsed: 2, questionLanguage: "pt" }),
    });
    const text = markdownOf(answerParts(pt, "um texto transmitido antes da verificação"));
    assert.match(text, /\*Depois de conferir as citações com as evidências:\*/);
    assert.match(text, /\*\*Tente\*\*/);
    assert.match(text, /\*\*Evidências \(2\)\*\*/);
    assert.match(text, /· pontuação 0\.91/);
    assert.doesNotMatch(text, /\bEvidence\b|\bTry\b|\bscore\b|After checking/);
  });

  it("shows what was searched and the actions: the closest match as an anchor, the rest as text", () => {
    const refusal = answer({
      state: "FAIL",
      searched: "Searched for sphere volume; the closest match scored 0.12.",
      actions: [
        { kind: "open", label: "Open `circle_area`, the closest match", path: "geometry/shapes.py", startLine: 6, endLine: 13 },
        { kind: "scope", label: "Ask again only in docs/", pathPrefix: "docs/" },
      ],
    });
    const parts = answerParts(refusal);
    const text = markdownOf(parts);
    assert.match(text, /Searched for sphere volume; the closest match scored 0\\\.12\\\./);
    assert.match(text, /\*\*Try\*\*\n\n- Open \\`circle\\_area\\`, the closest match <geometry\/shapes\.py:6-13>\n- Ask again only in docs\/\n/);
    assert.ok(parts.some((p) => p.kind === "anchor" && p.location.path === "geometry/shapes.py" && p.location.startLine === 6));
    assert.ok(!markdownOf(answerParts(answer({ suggestions: [] }))).includes("**Try**"));
  });

  it("lists every evidence with an anchor to its lines and adds one reference per evidence", () => {
    const parts = answerParts(answer());
    const text = markdownOf(parts);
    assert.match(text, /\*\*Evidence \(2\)\*\*/);
    assert.match(text, /- \*\*E1\*\* <pkg\/config\.py:10-24> `parse_config` · score 0\.91/);
    assert.match(text, /- E2 <tests\/test_config\.py:3> · score 0\.91/);
    const refs = parts.filter((p) => p.kind === "reference").map((p) => (p.kind === "reference" ? p.location : undefined));
    assert.deepEqual(refs, [
      { path: "pkg/config.py", startLine: 10, endLine: 24, project: "app" },
      { path: "tests/test_config.py", startLine: 3, endLine: 3, project: "app" },
    ]);
  });

  it("does not repeat streamed text, but adds the checked text when the check changed it", () => {
    const a = answer();
    const same = markdownOf(answerParts(a, "The parser lives in `parse_config` [E1], tested in [E2, E9]."));
    assert.ok(!same.includes("parser lives"));
    const changed = markdownOf(answerParts(a, "The parser lives in `parse_config` [E1] [E7]."));
    assert.match(changed, /After checking the citations[\s\S]*The parser lives in `parse_config` <E1>/);
  });

  it("shows caveats and handles an answer with no evidence (the refusal)", () => {
    const refusal = answer({
      state: "FAIL",
      confidence: conf({ score: 0, caveats: ["no evidence above minScore 0.6"] }),
      coverage: "none",
      answer: "Not found in the indexed code.",
      citations: [],
      evidences: [],
    });
    const parts = answerParts(refusal);
    assert.ok(!parts.some((p) => p.kind !== "markdown"));
    assert.match(markdownOf(parts), /Not found in the indexed code\.[\s\S]*\*\*FAIL · 0\*\*[\s\S]*- \*no evidence above minScore 0\\\.6\*/);
  });

  it("escapes markdown in plain text and builds code spans around backticks", () => {
    assert.equal(escapeMarkdown("a_b*c [x](y)"), "a\\_b\\*c \\[x\\]\\(y\\)");
    assert.equal(codeSpan("parse"), "`parse`");
    assert.equal(codeSpan("a`b"), "``a`b``");
    assert.equal(codeSpan("`x"), "`` `x ``");
  });

  it("keeps text without citations as one markdown part", () => {
    assert.deepEqual(textWithAnchors("no markers [E1] here", new Map()), [{ kind: "markdown", value: "no markers [E1] here" }]);
  });

  it("shows URLs and credentials from the answer as code, never as links", () => {
    const text = "Posts to https://hooks.slack.com/services/T0/B1/xyz, see www.evil.example and [here](http://a.example/x); db admin:Hunter2x@db.internal; `https://kept.example`";
    const [part] = textWithAnchors(text, new Map());
    assert.equal(part.kind, "markdown");
    const value = (part as { value: string }).value;
    const outside = value.replace(/`[^`]*`/g, "");
    assert.doesNotMatch(outside, /https?:\/\/|www\.|@db\.internal/);
    assert.match(value, /`https:\/\/hooks\.slack\.com\/services\/T0\/B1\/xyz`,/);
    assert.match(value, /`https:\/\/kept\.example`/);
    assert.equal(inertLinks("plain text"), "plain text");
  });
});

describe("chat history → conversation", () => {
  const ids = (): (() => string) => {
    let n = 0;
    return () => `new-${++n}`;
  };

  it("starts a new conversation on the first question, with no history", () => {
    assert.deepEqual(conversationFor([], ids()), { conversationId: "new-1" });
  });

  it("continues the conversation named in the latest answer's metadata", () => {
    const turns: ChatTurn[] = [
      { kind: "request", prompt: "q1" },
      { kind: "response", text: "a1", metadata: { conversationId: "conv-a", suggestions: [] } },
      { kind: "request", prompt: "q2" },
      { kind: "response", text: "a2", metadata: { conversationId: "conv-b", suggestions: [] } },
    ];
    assert.deepEqual(conversationFor(turns, ids()), { conversationId: "conv-b" });
  });

  it("sends earlier turns as history when no answer carries a conversation id", () => {
    const turns: ChatTurn[] = [
      { kind: "request", prompt: "How is X loaded?" },
      { kind: "response", text: "From config.py [E1].", metadata: {} },
      { kind: "request", prompt: "" },
      { kind: "response", text: "x".repeat(5000) },
    ];
    const choice = conversationFor(turns, ids());
    assert.equal(choice.conversationId, "new-1");
    assert.deepEqual(choice.history?.slice(0, 2), [
      { role: "user", content: "How is X loaded?" },
      { role: "assistant", content: "From config.py [E1]." },
    ]);
    assert.equal(choice.history?.length, 3);
    assert.equal(choice.history?.[2].content.length, 2000);
    const many: ChatTurn[] = Array.from({ length: 20 }, (_, i) => ({ kind: "request", prompt: `q${i}` }));
    const last = conversationFor(many, ids()).history ?? [];
    assert.equal(last.length, MAX_HISTORY_MESSAGES);
    assert.equal(last[last.length - 1].content, "q19");
  });

  it("offers at most three follow-ups, only non-empty strings", () => {
    assert.deepEqual(followupPrompts({ suggestions: ["a", "", 3, "b", "c", "d"] }), ["a", "b", "c"]);
    assert.deepEqual(followupPrompts(undefined), []);
    assert.deepEqual(followupPrompts({ suggestions: "a" }), []);
  });
});

describe("feature detection", () => {
  const fn = (): void => undefined;

  it("finds the chat and MCP APIs only when their functions exist", () => {
    assert.equal(hasChatParticipants({ chat: { createChatParticipant: fn } }), true);
    assert.equal(hasMcpProviders({ lm: { registerMcpServerDefinitionProvider: fn }, McpStdioServerDefinition: class {} }), true);
  });

  it("reports absent APIs on an older or reduced editor", () => {
    assert.equal(hasChatParticipants(undefined), false);
    assert.equal(hasChatParticipants({}), false);
    assert.equal(hasChatParticipants({ chat: {} }), false);
    assert.equal(hasMcpProviders({}), false);
    // VS Code 1.100 had `lm` (language models) but not the MCP provider API.
    assert.equal(hasMcpProviders({ lm: {} }), false);
    assert.equal(hasMcpProviders({ lm: { registerMcpServerDefinitionProvider: fn } }), false);
  });
});

describe("MCP server command", () => {
  it("swaps serve for mcp and passes every workspace folder and the index storage", () => {
    assert.deepEqual(mcpCommandFor(serverCommandFor("/py"), ["/ws/a", "/ws/b"], "/storage/x"), {
      command: "/py",
      args: ["-P", "-m", "code_compass_server", "mcp", "--workspace", "/ws/a", "--workspace", "/ws/b", "--storage", "/storage/x"],
    });
  });

  it("drops the language server's own options and leaves storage out when there is none", () => {
    assert.deepEqual(mcpCommandFor({ command: "/v/bin/code-compass", args: ["serve", "--stdio"] }, ["/ws"]), {
      command: "/v/bin/code-compass",
      args: ["mcp", "--workspace", "/ws"],
    });
  });

  it("gives up on a command it cannot rewrite, or without a folder", () => {
    assert.equal(mcpCommandFor({ command: "/custom-wrapper", args: [] }, ["/ws"]), undefined);
    assert.equal(mcpCommandFor(serverCommandFor("/py"), []), undefined);
  });
});

describe("package.json: chat participant and MCP provider", () => {
  it("contributes the ids the code registers", () => {
    const participants = pkg.contributes.chatParticipants as { id: string; name: string }[];
    assert.deepEqual(participants.map((p) => [p.id, p.name]), [[CHAT_PARTICIPANT_ID, CHAT_PARTICIPANT_NAME]]);
    const providers = pkg.contributes.mcpServerDefinitionProviders as { id: string; label: string }[];
    assert.deepEqual(providers, [{ id: MCP_PROVIDER_ID, label: MCP_SERVER_LABEL }]);
  });

  it("asks for the VS Code that has the MCP provider API, and types no newer than that", () => {
    const engine = /^\^1\.(\d+)\./.exec(pkg.engines.vscode);
    const types = /^1\.(\d+)\./.exec(pkg.devDependencies["@types/vscode"]);
    assert.ok(engine && types, `${pkg.engines.vscode} / ${pkg.devDependencies["@types/vscode"]}`);
    assert.ok(Number(engine[1]) >= 101, "the MCP provider API needs VS Code 1.101");
    assert.ok(Number(types[1]) <= Number(engine[1]), "vsce refuses @types/vscode newer than engines.vscode");
  });
});
