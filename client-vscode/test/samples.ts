/** Test data built on what the real server sent (test/fixtures/protocol, recorded by the contract test). */
import * as fs from "node:fs";
import * as path from "node:path";
import type { AnswerMeta, Confidence, Evidence, SearchHit } from "../src/protocol";

export function recorded<T>(name: string): T {
  return JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "test", "fixtures", "protocol", `${name}.json`), "utf8")) as T;
}

export function conf(overrides: Partial<Confidence> = {}): Confidence {
  return { score: 80, components: {}, caveats: [], rules: [], ...overrides };
}

export function meta(overrides: Partial<AnswerMeta> = {}): AnswerMeta {
  const base = recorded<{ meta: AnswerMeta }>("ask").meta;
  return { ...base, ...overrides };
}

export function hit(overrides: Partial<SearchHit> = {}): SearchHit {
  return { path: "a.py", startLine: 1, endLine: 2, score: 0.9, relevance: 0.8, symbol: null, kind: null, language: "python", project: "app", snippet: "", ...overrides };
}

export function evidence(overrides: Partial<Evidence> = {}): Evidence {
  return { ...hit(), id: "E1", status: "current", ...overrides };
}
