import { readFileSync } from "node:fs";
import { join } from "node:path";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertPartial } from "./partial";
import { buildInitializationOptions, collectSettings, RESOURCE_KEYS, SECTION, SETTING_DEFAULTS } from "../src/settings";

// Compiled to out/test/: the package root is two levels up.
const pkg = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8"));
const contributed: Record<string, { default: unknown; scope?: string; markdownDescription?: string }> = pkg.contributes.configuration.properties;

describe("initializationOptions", () => {
  it("nests every setting like the codeCompass configuration section, with defaults filled in", () => {
    const opts = buildInitializationOptions("/storage/ws", (k) => (k === "search.topK" ? 8 : undefined));
    assert.equal(opts.storageUri, "/storage/ws");
    assertPartial(opts.settings, {
      search: { topK: 8, minScore: 0.6 },
      llm: { model: "claude-sonnet-5-5", maxTokens: 1000, temperature: 0.3 },
      embeddings: { enabled: true },
      trace: { server: "off" },
      maxFileSizeKb: 1000,
    });
  });

  it("tells the server which commands this client runs itself (the lens peek)", () => {
    const opts = buildInitializationOptions(undefined, () => undefined);
    assert.deepEqual(opts.clientCommands, ["codeCompass.showReferences"]);
  });

  it("sends each folder's own values of the resource-scoped keys, keyed by folder URI", () => {
    const window = (k: string): unknown => (k === "exclude" ? ["dist/**"] : undefined);
    const opts = buildInitializationOptions("/s", window, true, [
      { uri: "file:///ws/a", get: (k) => (k === "exclude" ? ["vendor/**"] : k === "maxFileSizeKb" ? 50 : undefined) },
      { uri: "file:///ws/b", get: window },
    ]);
    assert.deepEqual(opts.folderSettings["file:///ws/a"], { include: [], exclude: ["vendor/**"], maxFileSizeKb: 50, documentGlobs: [] });
    assert.deepEqual(opts.folderSettings["file:///ws/b"], { include: [], exclude: ["dist/**"], maxFileSizeKb: 1000, documentGlobs: [] });
    assert.deepEqual((opts.settings as Record<string, unknown>).exclude, ["dist/**"]);
    assert.deepEqual(buildInitializationOptions("/s", window).folderSettings, {});
  });

  it("never carries an API key, even if a key-like setting exists", () => {
    const get = (k: string): unknown => (k === "llm.apiKey" || k === "authToken" ? "sk-ant-secret" : undefined);
    const settings = collectSettings(get, [...Object.keys(SETTING_DEFAULTS), "llm.apiKey", "authToken"]);
    assert.ok(!JSON.stringify(settings).includes("sk-ant-secret"));
    assert.doesNotMatch(JSON.stringify(buildInitializationOptions(undefined, get)), /apiKey|sk-ant/);
  });

  it("blanks the interpreter path in untrusted workspaces and sends null storage when there is no folder", () => {
    const opts = buildInitializationOptions(undefined, (k) => (k === "server.pythonPath" ? "/evil/python" : undefined), false);
    assert.equal(opts.storageUri, null);
    assert.equal((opts.settings.server as Record<string, unknown>).pythonPath, "");
  });
});

describe("package.json contributions", () => {
  it("contributes exactly the settings the client sends, with the same defaults and a description", () => {
    const keys = Object.keys(contributed).map((k) => k.slice(SECTION.length + 1));
    assert.deepEqual(keys.sort(), Object.keys(SETTING_DEFAULTS).sort());
    for (const [key, value] of Object.entries(SETTING_DEFAULTS)) {
      assert.deepEqual(contributed[`${SECTION}.${key}`].default, value, key);
      assert.ok(contributed[`${SECTION}.${key}`].markdownDescription, key);
    }
  });

  it("scopes globs per resource and restricts the interpreter path in untrusted workspaces", () => {
    const resource = Object.keys(contributed).filter((k) => contributed[k].scope === "resource");
    assert.deepEqual(resource.map((k) => k.slice(SECTION.length + 1)).sort(), [...RESOURCE_KEYS].sort());
    assert.equal(contributed[`${SECTION}.server.pythonPath`].scope, "machine-overridable");
    assertPartial(pkg.capabilities.untrustedWorkspaces, { supported: "limited", restrictedConfigurations: [`${SECTION}.server.pythonPath`] });
  });

  it("puts every palette command under the Code Compass category", () => {
    const titles = pkg.contributes.commands.map((c: { category: string; title: string }) => `${c.category}: ${c.title}`);
    for (const t of [
      "Ask a Question",
      "Ask About Selection",
      "Search Code",
      "Reindex",
      "Set Anthropic API Key",
      "Clear API Key",
      "Show Output",
      "New Conversation",
      "Restart Server",
    ]) {
      assert.ok(titles.includes(`Code Compass: ${t}`));
    }
  });
});
