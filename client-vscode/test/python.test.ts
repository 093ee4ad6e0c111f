import { describe, expect, it } from "vitest";
import { hitItemText, snippetLine } from "../src/format/hits";
import { isSupportedPython, parsePythonVersion, serverCommandFor, splitCommand, venvPython } from "../src/pythonEnv";

describe("python checks", () => {
  it("parses versions and accepts 3.11+", () => {
    expect(parsePythonVersion("3.11.4\n")).toEqual([3, 11, 4]);
    expect(parsePythonVersion("Python 3.12")).toEqual([3, 12, 0]);
    expect(parsePythonVersion("nope")).toBeUndefined();
    expect(isSupportedPython([3, 11, 0])).toBe(true);
    expect(isSupportedPython([3, 10, 12])).toBe(false);
    expect(isSupportedPython([4, 0, 0])).toBe(true);
  });

  it("splits override commands with quotes", () => {
    expect(splitCommand("/work/main/.venv/bin/code-compass serve")).toEqual(["/work/main/.venv/bin/code-compass", "serve"]);
    expect(splitCommand(`"/opt/my python/bin/python" -m code_compass  serve`)).toEqual(["/opt/my python/bin/python", "-m", "code_compass", "serve"]);
  });

  it("knows the venv interpreter layout per platform and the serve command", () => {
    expect(venvPython("/g/venv", "linux")).toBe("/g/venv/bin/python");
    expect(venvPython("C:\\g\\venv", "win32")).toBe("C:\\g\\venv\\Scripts\\python.exe");
    expect(serverCommandFor("/p")).toEqual({ command: "/p", args: ["-m", "code_compass", "serve"] });
  });
});

describe("search hit items", () => {
  const hit = { path: "pkg/m.py", startLine: 7, endLine: 9, score: 0.8765, symbol: "load", kind: "function", language: "python", project: "app", snippet: "def load():\n    return   1" };
  it("formats symbol — path:line with score and a one-line snippet", () => {
    expect(hitItemText(hit, false)).toEqual({ label: "load — pkg/m.py:7", description: "function · score 0.88", detail: "def load(): return 1" });
    expect(hitItemText({ ...hit, symbol: null, kind: null }, true)).toMatchObject({ label: "pkg/m.py:7", description: "score 0.88 · app" });
  });
  it("truncates long snippets", () => {
    expect(snippetLine("x".repeat(500))).toHaveLength(160);
  });
});
