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

const { languageService, offsetOf } = require("./ts_service");

const root = path.resolve(process.argv[2]);
const rows = fs.readFileSync(0, "utf8").split("\n").filter((l) => l.trim()).map(JSON.parse);
const service = languageService(root);

for (const row of rows) {
  const file = path.join(root, row.path);
  const offset = offsetOf(file, row.line, row.col);
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
