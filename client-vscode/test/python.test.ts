import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertPartial } from "./partial";
import { hitItemText, searchPlaceholder, snippetLine } from "../src/format/hits";
import {
  classifyPipFailure,
  installTarget,
  isSupportedPython,
  isWantedVersion,
  parsePythonVersion,
  pipFailureAdvice,
  pipProgressMessage,
  proxyEnv,
  serverCommandFor,
  splitCommand,
  venvPython,
} from "../src/pythonEnv";

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

describe("server install target", () => {
  const wheel = { file: "code_compass_server-0.1.0-py3-none-any.whl", sha256: "ab", version: "0.1.0" };
  it("prefers the user's spec, then the bundled wheel, then the exact extension version", () => {
    assert.deepEqual(installTarget(" ./my.whl ", wheel, "/ext/server", "0.1.0"), { spec: "./my.whl", version: undefined });
    const bundled = installTarget("", wheel, "/ext/server", "0.1.0");
    assert.equal(bundled.spec, "/ext/server/code_compass_server-0.1.0-py3-none-any.whl");
    assert.equal(bundled.version, "0.1.0");
    assert.deepEqual(installTarget("", undefined, "/ext/server", "0.2.0"), { spec: "code-compass-server==0.2.0", version: "0.2.0" });
  });
  it("accepts only the pinned version (any version for a user's spec)", () => {
    const pinned = installTarget("", wheel, "/x", "0.1.0");
    assert.equal(isWantedVersion("0.1.0\n", pinned), true);
    assert.equal(isWantedVersion("0.0.9", pinned), false);
    assert.equal(isWantedVersion("", pinned), false);
    assert.equal(isWantedVersion("7.0", installTarget("code-compass-server", undefined, "/x", "0.1.0")), true);
  });
  it("tells a proxy problem from being offline, with a fix for each", () => {
    assert.equal(classifyPipFailure("ProxyError('Cannot connect to proxy.')"), "proxy");
    assert.equal(classifyPipFailure("Failed to establish a new connection: [Errno -3] Temporary failure in name resolution"), "offline");
    assert.equal(classifyPipFailure("ERROR: No matching distribution found for numpy==2.4.6"), "offline");
    assert.equal(classifyPipFailure("error: subprocess-exited-with-error"), "other");
    assert.match(pipFailureAdvice("proxy", "x"), /http\.proxy/);
    assert.match(pipFailureAdvice("offline", "x"), /Connect to the internet/);
    assert.match(pipFailureAdvice("other", "x"), /codeCompass\.server\.pythonPath/);
  });
  it("passes VS Code's proxy to pip unless the environment has one", () => {
    assert.deepEqual(proxyEnv("http://p:3128", {}), { HTTPS_PROXY: "http://p:3128", HTTP_PROXY: "http://p:3128" });
    assert.deepEqual(proxyEnv("http://p:3128", { HTTPS_PROXY: "http://q" }), {});
    assert.deepEqual(proxyEnv("", {}), {});
  });
  it("turns pip's lines into short progress messages", () => {
    assert.equal(pipProgressMessage("Collecting numpy==2.4.6"), "Collecting numpy==2.4.6");
    assert.equal(
      pipProgressMessage("  Downloading https://files.pythonhosted.org/packages/aa/bb/onnx-1.23.2-cp311.whl (17.4 MB)"),
      "Downloading onnx-1.23.2-cp311.whl (17.4 MB)",
    );
    assert.equal(pipProgressMessage("  Requirement already satisfied: six"), undefined);
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
