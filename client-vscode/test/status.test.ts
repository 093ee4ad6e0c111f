import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertPartial } from "./partial";
import { embeddedPercent, formatCount, statusDetails, statusView } from "../src/format/status";
import type { ProjectState } from "../src/protocol";

function project(overrides: Partial<ProjectState> = {}): ProjectState {
  return { name: "app", root: "/w/app", state: "ready", files: 10, chunks: 40, embedded: 40, embedTotal: 40, errors: 0, skipped: 0, ...overrides };
}

describe("statusView", () => {
  it("shows indexing counts with thousands separators when a total is known", () => {
    const v = statusView([project({ state: "indexing", files: 1234, filesTotal: 5000 })]);
    assert.equal(v.phase, "indexing");
    assert.equal(v.text, "$(sync~spin) Compass: indexing 1,234/5,000");
  });

  it("shows a plain file count while indexing without a total", () => {
    assert.equal(statusView([project({ state: "indexing", files: 12 })]).text, "$(sync~spin) Compass: indexing 12 files");
  });

  it("shows the embeddings percentage across embedding projects", () => {
    const v = statusView([project({ state: "embedding", embedded: 21, embedTotal: 50 }), project({ name: "b" })]);
    assert.equal(v.text, "$(sync~spin) Compass: embeddings 42%");
  });

  it("is ready only when every project is ready", () => {
    assert.equal(statusView([project(), project({ name: "b", files: 1000 })]).text, "$(check) Compass ready");
    assert.equal(statusView([project(), project({ name: "b", state: "embedding", embedded: 0, embedTotal: 9 })]).phase, "embedding");
  });

  it("lets an error win and names the failing project", () => {
    const v = statusView([project({ state: "indexing" }), project({ name: "docs", state: "error", message: "disk full" })]);
    assert.equal(v.text, "$(error) Compass error");
    assert.ok(v.tooltip.includes("docs: disk full"));
  });

  it("reports starting and stopped from the server phase", () => {
    assert.equal(statusView(undefined, "starting").phase, "starting");
    assert.equal(statusView([], undefined).phase, "starting");
    assert.equal(statusView([project()], "stopped").text, "$(error) Compass stopped");
  });
});

describe("helpers", () => {
  it("floors the percentage so 100% means done", () => {
    assert.equal(embeddedPercent(999, 1000), 99);
    assert.equal(embeddedPercent(0, 0), 100);
    assert.equal(formatCount(1234567), "1,234,567");
    assert.equal(formatCount(undefined), "0");
  });

  it("lists projects, model and whether the LLM is configured", () => {
    const items = statusDetails({
      projects: [project({ state: "embedding", embedded: 1, embedTotal: 4, skipped: 2 })],
      model: "all-MiniLM-L6-v2",
      llmConfigured: false,
      storage: "/s",
    });
    assertPartial(items[0], { label: "$(folder) app", description: "embedding" });
    assert.equal(items[0].detail, "10 files · 40 chunks · embedded 25% (1/4) · 2 skipped");
    assert.ok(items.map((i) => i.description).includes("all-MiniLM-L6-v2"));
    assert.equal(items.some((i) => i.label.includes("LLM not configured")), true);
  });
});
