import { describe, expect, it } from "vitest";
import { folderFor, resolveCitation, toEditorLocation, toWireFile } from "../src/locations";

const folders = [
  { name: "api", fsPath: "/work/api" },
  { name: "web", fsPath: "/work/web/" },
];

describe("toEditorLocation", () => {
  it("resolves the path against the folder named by the project and converts lines to 0-based", () => {
    expect(toEditorLocation({ path: "src/app.ts", startLine: 10, endLine: 12, project: "web" }, folders)).toEqual({
      fsPath: "/work/web/src/app.ts",
      startLine: 9,
      endLine: 11,
    });
  });

  it("uses the only folder when the project is missing or unknown in a single-root workspace", () => {
    expect(toEditorLocation({ path: "a.py", startLine: 1, endLine: 1 }, [folders[0]])?.fsPath).toBe("/work/api/a.py");
    expect(toEditorLocation({ path: "a.py", startLine: 1, endLine: 1, project: "other" }, [folders[0]])?.fsPath).toBe("/work/api/a.py");
  });

  it("refuses an ambiguous project in multi-root and paths escaping the folder", () => {
    expect(toEditorLocation({ path: "a.py", startLine: 1, endLine: 1, project: "nope" }, folders)).toBeUndefined();
    expect(toEditorLocation({ path: "../etc/passwd", startLine: 1, endLine: 1, project: "api" }, folders)).toBeUndefined();
  });

  it("clamps bad line numbers and keeps end >= start", () => {
    expect(toEditorLocation({ path: "a.py", startLine: 0, endLine: 0, project: "api" }, folders)).toMatchObject({ startLine: 0, endLine: 0 });
    expect(toEditorLocation({ path: "a.py", startLine: 5, endLine: 2, project: "api" }, folders)).toMatchObject({ startLine: 4, endLine: 4 });
  });

  it("joins with backslashes under a Windows root", () => {
    expect(toEditorLocation({ path: "src/x.py", startLine: 3, endLine: 3, project: "w" }, [{ name: "w", fsPath: "C:\\code\\w" }])?.fsPath).toBe(
      "C:\\code\\w\\src\\x.py",
    );
  });
});

describe("folderFor / toWireFile", () => {
  it("picks folders by name", () => {
    expect(folderFor("web", folders)?.fsPath).toBe("/work/web/");
    expect(folderFor(undefined, folders)).toBeUndefined();
  });

  it("maps an absolute file to its folder-relative '/' path, preferring the deepest folder", () => {
    const nested = [...folders, { name: "inner", fsPath: "/work/api/inner" }];
    expect(toWireFile("/work/api/inner/m.py", nested)).toEqual({ path: "m.py", project: "inner" });
    expect(toWireFile("/work/api/pkg/m.py", nested)).toEqual({ path: "pkg/m.py", project: "api" });
    expect(toWireFile("/elsewhere/m.py", nested)).toBeUndefined();
    expect(toWireFile("/work/apiX/m.py", nested)).toBeUndefined();
  });
});

describe("resolveCitation", () => {
  const evidences = [{ id: "E1", path: "a.py", startLine: 1, endLine: 20, project: "api" }];
  it("prefers the citation's lines and borrows the project from the matching evidence", () => {
    expect(resolveCitation("E1", [{ id: "E1", path: "a.py", startLine: 5, endLine: 6 }], evidences)).toEqual({
      path: "a.py",
      startLine: 5,
      endLine: 6,
      project: "api",
    });
  });
  it("falls back to the evidence and returns undefined for unknown ids", () => {
    expect(resolveCitation("E1", [], evidences)).toEqual(evidences[0]);
    expect(resolveCitation("E7", [], evidences)).toBeUndefined();
  });
});
