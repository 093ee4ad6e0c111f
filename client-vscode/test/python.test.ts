import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertPartial } from "./partial";
import { hitItemText, searchPlaceholder, snippetLine } from "../src/format/hits";
import { isSupportedPython, parsePythonVersion, serverCommandFor, splitCommand, venvPython } from "../src/pythonEnv";

describe("python checks", () => {
  it("parses versions and accepts 3.11+", () => {
    assert.deepEqual(parsePythonVersion("3.11.4\n"), [3, 11, 4]);
    assert.deepEqual(parsePythonVersion("Python 3.12"), [3, 12, 0]);
    assert.equal(parsePythonVersion("nope"), undefined);
    assert.equal(isSupportedPython([3, 11, 0]), true);
    assert.equal(isSupportedPython([3, 10, 12]), false);
    assert.equal(isSupportedPython([4, 0, 0]), true);
  });

  it("splits override commands with quotes", () => {
    assert.deepEqual(splitCommand("/work/main/.venv/bin/code-compass serve"), ["/work/main/.venv/bin/code-compass", "serve"]);
    assert.deepEqual(splitCommand(`"/opt/my python/bin/python" -m code_compass_server  serve`), ["/opt/my python/bin/python", "-m", "code_compass_server", "serve"]);
  });

  it("knows the venv interpreter layout per platform and the serve command", () => {
    assert.equal(venvPython("/g/venv", "linux"), "/g/venv/bin/python");
    assert.equal(venvPython("C:\\g\\venv", "win32"), "C:\\g\\venv\\Scripts\\python.exe");
    assert.deepEqual(serverCommandFor("/p"), { command: "/p", args: ["-P", "-m", "code_compass_server", "serve"] });
  });
});

describe("search hit items", () => {
  const hit = { path: "pkg/m.py", startLine: 7, endLine: 9, score: 0.8765, relevance: 0.7, symbol: "load", kind: "function", language: "python", project: "app", snippet: "def load():\n    return   1" };
  it("formats symbol — path:line with score and a one-line snippet", () => {
    assert.deepEqual(hitItemText(hit, false), { label: "load — pkg/m.py:7", description: "function · score 0.88", detail: "def load(): return 1" });
    assertPartial(hitItemText({ ...hit, symbol: null, kind: null }, true), { label: "pkg/m.py:7", description: "score 0.88 · app" });
  });
  it("shows the server's reason when nothing is found, and says when the index is partial", () => {
    const reason = "nothing in this workspace matches “kafka consumers”";
    assert.equal(searchPlaceholder({ hits: [], reason, partialIndex: false }, "Search"), reason);
    assert.equal(searchPlaceholder({ hits: [], partialIndex: false }, "Search"), "No evidence above the minimum score — try other words");
    assert.equal(searchPlaceholder({ hits: [hit], partialIndex: false }, "Search"), "Search");
    assert.match(searchPlaceholder({ hits: [hit], partialIndex: true }, "Search"), /^Search \(embeddings still running/);
  });
  it("truncates long snippets", () => {
    assert.equal(snippetLine("x".repeat(500))?.length, 160);
  });
});
