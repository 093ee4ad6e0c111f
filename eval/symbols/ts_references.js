// Reference lists for TypeScript definitions: the TypeScript language service's findReferences.
//
//   NODE_PATH=client-vscode/node_modules node eval/symbols/ts_references.js ROOT < in > out
//
// stdin: one JSON object per line with path (relative to ROOT), line (1-based), col (0-based)
// of a definition's name. stdout: the same objects with refs, every reference inside ROOT
// (outside node_modules) as "path:line:col" (1-based line, 0-based column), definitions
// included.
"use strict";
const fs = require("fs");
const path = require("path");
const { languageService, offsetOf } = require("./ts_service");

const root = path.resolve(process.argv[2]);
const rows = fs.readFileSync(0, "utf8").split("\n").filter((l) => l.trim()).map(JSON.parse);
const service = languageService(root);

for (const row of rows) {
  const file = path.join(root, row.path);
  const found = service.findReferences(file, offsetOf(file, row.line, row.col)) || [];
  const refs = new Set();
  for (const symbol of found) {
    for (const ref of symbol.references) {
      if (!ref.fileName.startsWith(root + path.sep)) continue;
      if (ref.fileName.includes(`${path.sep}node_modules${path.sep}`)) continue;
      const src = service.getProgram().getSourceFile(ref.fileName);
      const lc = src.getLineAndCharacterOfPosition(ref.textSpan.start);
      const rel = path.relative(root, ref.fileName).split(path.sep).join("/");
      refs.add(`${rel}:${lc.line + 1}:${lc.character}`);
    }
  }
  process.stdout.write(JSON.stringify({ ...row, refs: [...refs] }) + "\n");
}
