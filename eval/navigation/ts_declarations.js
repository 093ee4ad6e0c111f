// Declarations a developer can name in a TypeScript tree, read by the TypeScript compiler's own
// parser (not our tree-sitter symbol table): the gold source of eval/navigation for rxjs.
//
//   NODE_PATH=client-vscode/node_modules node eval/navigation/ts_declarations.js ROOT > out.jsonl
//
// Every .ts file under ROOT/src (node_modules left out). One JSON object per declaration:
// path (relative to ROOT), line (1-based line of the declared name), name, kind (function |
// class | interface | type_alias | enum | const | variable | namespace | method | class_attr),
// container (the class or namespace, "" at top level), exported (has an `export` modifier or
// sits in an exported namespace), overload (a function/method signature without a body).
"use strict";
const fs = require("fs");
const path = require("path");
const ts = require("typescript");

const { listTs } = require("../symbols/ts_service");

const root = path.resolve(process.argv[2]);

function exported(node) {
  const mods = ts.canHaveModifiers(node) ? ts.getModifiers(node) || [] : [];
  return mods.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
}

function emit(src, rel, nameNode, name, kind, container, isExported, overload) {
  const lc = src.getLineAndCharacterOfPosition(nameNode.getStart(src));
  const row = { path: rel, line: lc.line + 1, name, kind, container, exported: isExported, overload };
  process.stdout.write(JSON.stringify(row) + "\n");
}

function members(src, rel, cls, container, isExported) {
  for (const m of cls.members) {
    if (!m.name || !ts.isIdentifier(m.name)) continue; // computed and private (#x) names
    const name = m.name.text;
    if (ts.isMethodDeclaration(m)) {
      emit(src, rel, m.name, name, "method", container, isExported, m.body === undefined);
    } else if (ts.isGetAccessorDeclaration(m) || ts.isSetAccessorDeclaration(m)) {
      emit(src, rel, m.name, name, "method", container, isExported, false);
    } else if (ts.isPropertyDeclaration(m)) {
      const init = m.initializer;
      const fn = init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init));
      emit(src, rel, m.name, name, fn ? "method" : "class_attr", container, isExported, false);
    }
  }
}

function statements(src, rel, list, container, inExported) {
  for (const st of list) {
    const isExported = inExported || exported(st);
    if (ts.isFunctionDeclaration(st) && st.name) {
      emit(src, rel, st.name, st.name.text, "function", container, isExported, st.body === undefined);
    } else if (ts.isClassDeclaration(st) && st.name) {
      emit(src, rel, st.name, st.name.text, "class", container, isExported, false);
      const qualified = container ? `${container}.${st.name.text}` : st.name.text;
      members(src, rel, st, qualified, isExported);
    } else if (ts.isInterfaceDeclaration(st)) {
      emit(src, rel, st.name, st.name.text, "interface", container, isExported, false);
    } else if (ts.isTypeAliasDeclaration(st)) {
      emit(src, rel, st.name, st.name.text, "type_alias", container, isExported, false);
    } else if (ts.isEnumDeclaration(st)) {
      emit(src, rel, st.name, st.name.text, "enum", container, isExported, false);
    } else if (ts.isModuleDeclaration(st) && st.name && ts.isIdentifier(st.name)) {
      emit(src, rel, st.name, st.name.text, "namespace", container, isExported, false);
      const qualified = container ? `${container}.${st.name.text}` : st.name.text;
      if (st.body && ts.isModuleBlock(st.body)) {
        statements(src, rel, st.body.statements, qualified, isExported);
      }
    } else if (ts.isVariableStatement(st)) {
      const isConst = (st.declarationList.flags & ts.NodeFlags.Const) !== 0;
      for (const d of st.declarationList.declarations) {
        if (!ts.isIdentifier(d.name)) continue; // destructuring
        const init = d.initializer;
        let kind = isConst ? "const" : "variable";
        if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) kind = "function";
        if (init && ts.isClassExpression(init)) kind = "class";
        emit(src, rel, d.name, d.name.text, kind, container, isExported, false);
      }
    }
  }
}

for (const file of listTs(path.join(root, "src"), []).sort()) {
  const text = fs.readFileSync(file, "utf8");
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const rel = path.relative(root, file).split(path.sep).join("/");
  statements(src, rel, src.statements, "", false);
}
