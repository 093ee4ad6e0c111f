import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildInitializationOptions, collectSettings, SECTION, SETTING_DEFAULTS } from "../src/settings";

const pkg = JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8"));
const contributed: Record<string, { default: unknown; scope?: string; markdownDescription?: string }> = pkg.contributes.configuration.properties;

describe("initializationOptions", () => {
  it("nests every setting like the codeCompass configuration section, with defaults filled in", () => {
    const opts = buildInitializationOptions("/storage/ws", (k) => (k === "search.topK" ? 8 : undefined));
    expect(opts.storageUri).toBe("/storage/ws");
    expect(opts.settings).toMatchObject({
      search: { topK: 8, minScore: 0.6 },
      llm: { model: "claude-sonnet-4-5", maxTokens: 1000, temperature: 0.3 },
      embeddings: { enabled: true },
      trace: { server: "off" },
      maxFileSizeKb: 1000,
    });
  });

  it("never carries an API key, even if a key-like setting exists", () => {
    const get = (k: string): unknown => (k === "llm.apiKey" || k === "authToken" ? "sk-ant-secret" : undefined);
    const settings = collectSettings(get, [...Object.keys(SETTING_DEFAULTS), "llm.apiKey", "authToken"]);
    expect(JSON.stringify(settings)).not.toContain("sk-ant-secret");
    expect(JSON.stringify(buildInitializationOptions(undefined, get))).not.toMatch(/apiKey|sk-ant/);
  });

  it("blanks the interpreter path in untrusted workspaces and sends null storage when there is no folder", () => {
    const opts = buildInitializationOptions(undefined, (k) => (k === "server.pythonPath" ? "/evil/python" : undefined), false);
    expect(opts.storageUri).toBeNull();
    expect((opts.settings.server as Record<string, unknown>).pythonPath).toBe("");
  });
});

describe("package.json contributions", () => {
  it("contributes exactly the settings the client sends, with the same defaults and a description", () => {
    const keys = Object.keys(contributed).map((k) => k.slice(SECTION.length + 1));
    expect(keys.sort()).toEqual(Object.keys(SETTING_DEFAULTS).sort());
    for (const [key, value] of Object.entries(SETTING_DEFAULTS)) {
      expect(contributed[`${SECTION}.${key}`].default, key).toEqual(value);
      expect(contributed[`${SECTION}.${key}`].markdownDescription, key).toBeTruthy();
    }
  });

  it("scopes globs per resource and restricts the interpreter path in untrusted workspaces", () => {
    for (const k of ["include", "exclude", "documentGlobs", "maxFileSizeKb"]) expect(contributed[`${SECTION}.${k}`].scope).toBe("resource");
    expect(contributed[`${SECTION}.server.pythonPath`].scope).toBe("machine-overridable");
    expect(pkg.capabilities.untrustedWorkspaces).toMatchObject({ supported: "limited", restrictedConfigurations: [`${SECTION}.server.pythonPath`] });
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
      expect(titles).toContain(`Code Compass: ${t}`);
    }
  });
});
