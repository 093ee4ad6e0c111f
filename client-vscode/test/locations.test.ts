import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertPartial } from "./partial";
import { folderFor, resolveCitation, toEditorLocation, toWireFile } from "../src/locations";

const folders = [
  { name: "api", fsPath: "/work/api" },
  { name: "web", fsPath: "/work/web/" },
];

describe("toEditorLocation", () => {
  it("resolves the path against the folder named by the project and converts lines to 0-based", () => {
    assert.deepEqual(toEditorLocation({ path: "src/app.ts", startLine: 10, endLine: 12, project: "web" }, folders), {
      fsPath: "/work/web/src/app.ts",
      startLine: 9,
      endLine: 11,
    });
  });

  it("uses the only folder when the project is missing or unknown in a single-root workspace", () => {
    assert.equal(toEditorLocation({ path: "a.py", startLine: 1, endLine: 1 }, [folders[0]])?.fsPath, "/work/api/a.py");
    assert.equal(toEditorLocation({ path: "a.py", startLine: 1, endLine: 1, project: "other" }, [folders[0]])?.fsPath, "/work/api/a.py");
  });

  it("refuses an ambiguous project in multi-root and paths escaping the folder", () => {
    assert.equal(toEditorLocation({ path: "a.py", startLine: 1, endLine: 1, project: "nope" }, folders), undefined);
    assert.equal(toEditorLocation({ path: "../etc/passwd", startLine: 1, endLine: 1, project: "api" }, folders), undefined);
  });

  it("clamps bad line numbers and keeps end >= start", () => {
    assertPartial(toEditorLocation({ path: "a.py", startLine: 0, endLine: 0, project: "api" }, folders), { startLine: 0, endLine: 0 });
    assertPartial(toEditorLocation({ path: "a.py", startLine: 5, endLine: 2, project: "api" }, folders), { startLine: 4, endLine: 4 });
  });

  it("joins with backslashes under a Windows root", () => {
    assert.equal(toEditorLocation({ path: "src/x.py", startLine: 3, endLine: 3, project: "w" }, [{ name: "w", fsPath: "C:\\code\\w" }])?.fsPath, 
      "C:\\code\\w\\src\\x.py",
    );
  });
});

describe("folderFor / toWireFile", () => {
  it("picks folders by name", () => {
    assert.equal(folderFor("web", folders)?.fsPath, "/work/web/");
    assert.equal(folderFor(undefined, folders), undefined);
  });

  it("maps an absolute file to its folder-relative '/' path, preferring the deepest folder", () => {
    const nested = [...folders, { name: "inner", fsPath: "/work/api/inner" }];
    assert.deepEqual(toWireFile("/work/api/inner/m.py", nested), { path: "m.py", project: "inner" });
    assert.deepEqual(toWireFile("/work/api/pkg/m.py", nested), { path: "pkg/m.py", project: "api" });
    assert.equal(toWireFile("/elsewhere/m.py", nested), undefined);
    assert.equal(toWireFile("/work/apiX/m.py", nested), undefined);
  });
});

describe("resolveCitation", () => {
  const evidences = [{ id: "E1", path: "a.py", startLine: 1, endLine: 20, project: "api" }];
  it("prefers the citation's lines and borrows the project from the matching evidence", () => {
    assert.deepEqual(resolveCitation("E1", [{ id: "E1", path: "a.py", startLine: 5, endLine: 6 }], evidences), {
      path: "a.py",
      startLine: 5,
      endLine: 6,
      project: "api",
    });
  });
  it("falls back to the evidence and returns undefined for unknown ids", () => {
    assert.deepEqual(resolveCitation("E1", [], evidences), evidences[0]);
    assert.equal(resolveCitation("E7", [], evidences), undefined);
  });
});
