import { describe, expect, it } from "vitest";
import { embeddedPercent, formatCount, statusDetails, statusView } from "../src/format/status";
import type { ProjectState } from "../src/protocol";

function project(overrides: Partial<ProjectState> = {}): ProjectState {
  return { name: "app", root: "/w/app", state: "ready", files: 10, chunks: 40, embedded: 40, embedTotal: 40, errors: 0, skipped: 0, ...overrides };
}

describe("statusView", () => {
  it("shows indexing counts with thousands separators when a total is known", () => {
    const v = statusView([project({ state: "indexing", files: 1234, filesTotal: 5000 })]);
    expect(v.phase).toBe("indexing");
    expect(v.text).toBe("$(sync~spin) Compass: indexing 1,234/5,000");
  });

  it("shows a plain file count while indexing without a total", () => {
    expect(statusView([project({ state: "indexing", files: 12 })]).text).toBe("$(sync~spin) Compass: indexing 12 files");
  });

  it("shows the embeddings percentage across embedding projects", () => {
    const v = statusView([project({ state: "embedding", embedded: 21, embedTotal: 50 }), project({ name: "b" })]);
    expect(v.text).toBe("$(sync~spin) Compass: embeddings 42%");
  });

  it("is ready only when every project is ready", () => {
    expect(statusView([project(), project({ name: "b", files: 1000 })]).text).toBe("$(check) Compass ready");
    expect(statusView([project(), project({ name: "b", state: "embedding", embedded: 0, embedTotal: 9 })]).phase).toBe("embedding");
  });

  it("lets an error win and names the failing project", () => {
    const v = statusView([project({ state: "indexing" }), project({ name: "docs", state: "error", message: "disk full" })]);
    expect(v.text).toBe("$(error) Compass error");
    expect(v.tooltip).toContain("docs: disk full");
  });

  it("reports starting and stopped from the server phase", () => {
    expect(statusView(undefined, "starting").phase).toBe("starting");
    expect(statusView([], undefined).phase).toBe("starting");
    expect(statusView([project()], "stopped").text).toBe("$(error) Compass stopped");
  });
});

describe("helpers", () => {
  it("floors the percentage so 100% means done", () => {
    expect(embeddedPercent(999, 1000)).toBe(99);
    expect(embeddedPercent(0, 0)).toBe(100);
    expect(formatCount(1234567)).toBe("1,234,567");
    expect(formatCount(undefined)).toBe("0");
  });

  it("lists projects, model and whether the LLM is configured", () => {
    const items = statusDetails({
      projects: [project({ state: "embedding", embedded: 1, embedTotal: 4, skipped: 2 })],
      model: "all-MiniLM-L6-v2",
      llmConfigured: false,
      storage: "/s",
    });
    expect(items[0]).toMatchObject({ label: "$(folder) app", description: "embedding" });
    expect(items[0].detail).toBe("10 files · 40 chunks · embedded 25% (1/4) · 2 skipped");
    expect(items.map((i) => i.description)).toContain("all-MiniLM-L6-v2");
    expect(items.some((i) => i.label.includes("LLM not configured"))).toBe(true);
  });
});
