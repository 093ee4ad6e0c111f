import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertPartial } from "./partial";
import { embeddedPercent, formatCount, formatEta, skippedDetail, skippedTotal, statusDetails, statusView } from "../src/format/status";
import type { IndexStateParams, ProjectState } from "../src/protocol";
import { recorded } from "./samples";

const recordedIndexState = recorded<IndexStateParams>("indexState");

function project(overrides: Partial<ProjectState> = {}): ProjectState {
  return { name: "app", root: "/w/app", state: "ready", files: 10, chunks: 40, embedded: 40, embedTotal: 40, errors: 0, skipped: {}, phase: "ready", symbols: 0, embedRate: 0, embedEtaS: null, readOnly: false, rebuilt: "", storage: "/s/app", indexing: false, queued: false, writerPid: null, ...overrides };
}

describe("statusView", () => {
  it("shows indexing counts with thousands separators", () => {
    const v = statusView([project({ state: "indexing", files: 1234 })]);
    assert.equal(v.phase, "indexing");
    assert.equal(v.text, "$(sync~spin) Compass: indexing 1,234 files");
  });

  it("shows a plain file count while indexing without a total", () => {
    assert.equal(statusView([project({ state: "indexing", files: 12 })]).text, "$(sync~spin) Compass: indexing 12 files");
  });

  it("shows the embeddings percentage across embedding projects, with the slowest ETA", () => {
    const v = statusView([project({ state: "embedding", embedded: 21, embedTotal: 50 }), project({ name: "b" })]);
    assert.equal(v.text, "$(sync~spin) Compass: embeddings 42%");
    const eta = statusView([project({ state: "embedding", embedded: 1, embedTotal: 50, embedEtaS: 40 }), project({ name: "b", state: "embedding", embedded: 0, embedTotal: 9, embedEtaS: 185 })]);
    assert.equal(eta.text, "$(sync~spin) Compass: embeddings 1% · ~3 min");
    assert.match(eta.tooltip, /~3 min left/);
  });

  it("formats ETAs in seconds, minutes and hours", () => {
    assert.equal(formatEta(null), "");
    assert.equal(formatEta(0.2), "~1 s");
    assert.equal(formatEta(59), "~59 s");
    assert.equal(formatEta(90), "~2 min");
    assert.equal(formatEta(3 * 3600 + 5 * 60), "~3 h 5 min");
  });

  it("counts skipped files from the server's per-reason object", () => {
    assert.equal(skippedTotal({ too_large: 2, binary: 14 }), 16);
    assert.equal(skippedTotal({}), 0);
    assert.equal(skippedDetail({ too_large: 2, binary: 14 }), "2 too large, 14 binary");
    const recorded = recordedIndexState.projects[0];
    assert.equal(skippedTotal(recorded.skipped), Object.values(recorded.skipped).reduce((a, b) => a + b, 0));
    assert.match(statusView([project({ skipped: { binary: 3 } })]).tooltip, /3 skipped/);
  });

  it("shows the last error of a project whose index is still usable", () => {
    const v = statusView([project({ lastError: "OSError: disk full" })]);
    assert.equal(v.text, "$(warning) Compass ready");
    assert.match(v.tooltip, /last pass failed: OSError: disk full/);
  });

  it("is ready only when every project is ready", () => {
    assert.equal(statusView([project(), project({ name: "b", files: 1000 })]).text, "$(check) Compass ready");
    assert.equal(statusView([project(), project({ name: "b", state: "embedding", embedded: 0, embedTotal: 9 })]).phase, "embedding");
  });

  it("lets an error win and names the failing project", () => {
    const v = statusView([project({ state: "indexing" }), project({ name: "docs", state: "error", lastError: "disk full" })]);
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
      projects: [project({ state: "embedding", embedded: 1, embedTotal: 4, skipped: { too_large: 2 }, embedEtaS: 30 })],
      model: "all-MiniLM-L6-v2",
      llmConfigured: false,
      storage: "/s",
    });
    assertPartial(items[0], { label: "$(folder) app", description: "embedding" });
    assert.equal(items[0].detail, "10 files · 40 chunks · embedded 25% (1/4) · ~30 s left · 2 skipped (2 too large)");
    assert.ok(items.map((i) => i.description).includes("all-MiniLM-L6-v2"));
    assert.equal(items.some((i) => i.label.includes("LLM not configured")), true);
  });
});
