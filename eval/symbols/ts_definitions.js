// Gold labels for TypeScript positions: the TypeScript language service's go-to-definition.
//
//   NODE_PATH=client-vscode/node_modules node eval/symbols/ts_definitions.js ROOT < in > out
//
// stdin: one JSON object per line with path (relative to ROOT), line (1-based), col (0-based).
// stdout: the same objects with gold ("path:line" of the first definition inside ROOT, outside
// node_modules) or outside (the definition's file, when it is elsewhere: lib.*.d.ts, ...).
"use strict";
const fs = require("fs");
const path = require("path");
const ts = require("typescript");

const root = path.resolve(process.argv[2]);
const rows = fs.readFileSync(0, "utf8").split("\n").filter((l) => l.trim()).map(JSON.parse);

function listTs(dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && e.name !== "node_modules") listTs(p, out);
    else if (e.isFile() && p.endsWith(".ts")) out.push(p);
  }
  return out;
}

const files = listTs(path.join(root, "src"), []);
const options = {
  target: ts.ScriptTarget.ESNext,
  lib: ["lib.esnext.d.ts", "lib.dom.d.ts"],
  strict: true,
  moduleResolution: ts.ModuleResolutionKind.Node10 || ts.ModuleResolutionKind.NodeJs,
  baseUrl: root,
  paths: { rxjs: ["./src/index"], "rxjs/*": ["./src/*"] },
};
const host = {
  getScriptFileNames: () => files,
  getScriptVersion: () => "1",
  getScriptSnapshot: (f) =>
    fs.existsSync(f) ? ts.ScriptSnapshot.fromString(fs.readFileSync(f, "utf8")) : undefined,
  getCurrentDirectory: () => root,
  getCompilationSettings: () => options,
  getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
  fileExists: ts.sys.fileExists,
  readFile: ts.sys.readFile,
  readDirectory: ts.sys.readDirectory,
  directoryExists: ts.sys.directoryExists,
  getDirectories: ts.sys.getDirectories,
};
const service = ts.createLanguageService(host, ts.createDocumentRegistry());

for (const row of rows) {
  const file = path.join(root, row.path);
  const text = fs.readFileSync(file, "utf8");
  const lines = text.split("\n");
  let offset = 0;
  for (let i = 0; i < row.line - 1; i++) offset += lines[i].length + 1;
  offset += row.col;
  const defs = service.getDefinitionAtPosition(file, offset) || [];
  const first = defs[0];
  let gold = null;
  let outside = null;
  if (first) {
    const inside = first.fileName.startsWith(root + path.sep) &&
      !first.fileName.includes(`${path.sep}node_modules${path.sep}`);
    if (inside) {
      const src = service.getProgram().getSourceFile(first.fileName);
      const lc = src.getLineAndCharacterOfPosition(first.textSpan.start);
      gold = `${path.relative(root, first.fileName).split(path.sep).join("/")}:${lc.line + 1}`;
    } else {
      outside = `${path.basename(first.fileName)}:${first.containerName ? first.containerName + "." : ""}${first.name}`;
    }
  } else {
    outside = "(no definition)";
  }
  process.stdout.write(JSON.stringify({ ...row, gold, outside }) + "\n");
}
