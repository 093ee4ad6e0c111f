/**
 * The contract test's client half: responses recorded from the real server
 * (tests/lsp/test_protocol_contract.py writes test/fixtures/protocol/*.json) are checked
 * against the interfaces of src/protocol.ts, read with the TypeScript compiler itself. A key
 * the client does not declare, a required field the server no longer sends, or a value of
 * the wrong JSON kind fails here.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import ts from "typescript";

const CLIENT = path.resolve(__dirname, "..", "..");
const PROTOCOL = path.join(CLIENT, "src", "protocol.ts");
const FIXTURES = path.join(CLIENT, "test", "fixtures", "protocol");

/** Which interface each recorded response is. */
const RECORDED: Record<string, string> = {
  search: "SearchResult",
  "search-empty": "SearchResult",
  ask: "Answer",
  "ask-refusal": "Answer",
  "ask-spelling": "Answer",
  status: "StatusResult",
  reindex: "ReindexResult",
  indexState: "IndexStateParams",
  answerDelta: "AnswerDelta",
};

const program = ts.createProgram([PROTOCOL], { strict: true, noEmit: true, skipLibCheck: true, types: [] });
const checker = program.getTypeChecker();
const source = program.getSourceFile(PROTOCOL);
assert.ok(source, "src/protocol.ts not found");

function declared(name: string): ts.Type {
  let found: ts.Type | undefined;
  ts.forEachChild(source as ts.SourceFile, (node) => {
    if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && node.name.text === name) {
      found = checker.getTypeAtLocation(node.name);
    }
  });
  assert.ok(found, `protocol.ts declares no ${name}`);
  return found;
}

/** Why `value` is not of `type` (empty when it is). */
export function shapeErrors(value: unknown, type: ts.Type, where: string): string[] {
  if (type.isUnion()) {
    const options = type.types.map((t) => shapeErrors(value, t, where));
    return options.some((o) => !o.length) ? [] : options.reduce((a, b) => (b.length < a.length ? b : a));
  }
  const f = type.flags;
  if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return [];
  if (f & ts.TypeFlags.Null) return value === null ? [] : [`${where}: expected null, got ${JSON.stringify(value)}`];
  if (f & ts.TypeFlags.StringLiteral) {
    const want = (type as ts.StringLiteralType).value;
    return value === want ? [] : [`${where}: expected "${want}", got ${JSON.stringify(value)}`];
  }
  if (f & ts.TypeFlags.String) return typeof value === "string" ? [] : [`${where}: expected a string, got ${JSON.stringify(value)}`];
  if (f & (ts.TypeFlags.Number | ts.TypeFlags.NumberLiteral)) return typeof value === "number" ? [] : [`${where}: expected a number, got ${JSON.stringify(value)}`];
  if (f & (ts.TypeFlags.Boolean | ts.TypeFlags.BooleanLiteral)) return typeof value === "boolean" ? [] : [`${where}: expected a boolean, got ${JSON.stringify(value)}`];
  if (checker.isArrayType(type)) {
    if (!Array.isArray(value)) return [`${where}: expected a list, got ${JSON.stringify(value)}`];
    const [element] = checker.getTypeArguments(type as ts.TypeReference);
    return value.flatMap((v, i) => shapeErrors(v, element, `${where}[${i}]`));
  }
  if (f & ts.TypeFlags.Object) {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return [`${where}: expected an object, got ${JSON.stringify(value)}`];
    const record = value as Record<string, unknown>;
    const index = checker.getIndexTypeOfType(type, ts.IndexKind.String);
    if (index) return Object.entries(record).flatMap(([k, v]) => shapeErrors(v, index, `${where}.${k}`));
    const name = checker.typeToString(type);
    const errors: string[] = [];
    const props = new Map(checker.getPropertiesOfType(type).map((p) => [p.name, p]));
    for (const key of Object.keys(record)) {
      if (!props.has(key)) errors.push(`${where}: key "${key}" is not declared in ${name} (src/protocol.ts)`);
    }
    for (const [key, prop] of props) {
      const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0;
      if (!(key in record)) {
        if (!optional) errors.push(`${where}: required "${key}" of ${name} is missing`);
        continue;
      }
      let propType = checker.getTypeOfSymbol(prop);
      if (optional) propType = checker.getNonNullableType(propType);
      errors.push(...shapeErrors(record[key], propType, `${where}.${key}`));
    }
    return errors;
  }
  return [`${where}: the checker does not know the type ${checker.typeToString(type)}`];
}

function fixture(name: string): unknown {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), "utf8"));
}

describe("protocol contract (responses recorded from the real server)", () => {
  it("has a recording of every custom method", () => {
    const files = fs.readdirSync(FIXTURES).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5)).sort();
    assert.deepEqual(files, Object.keys(RECORDED).sort());
  });

  for (const [name, iface] of Object.entries(RECORDED)) {
    it(`${name}.json is a ${iface} of src/protocol.ts`, () => {
      assert.deepEqual(shapeErrors(fixture(name), declared(iface), name), []);
    });
  }

  it("fails on a renamed field, a missing one and a wrong kind", () => {
    const answer = fixture("ask") as Record<string, unknown>;
    const { sentences, ...rest } = answer;
    const renamed = { ...rest, sentenceVerdicts: sentences };
    const errors = shapeErrors(renamed, declared("Answer"), "ask");
    assert.ok(errors.some((e) => e.includes('"sentenceVerdicts" is not declared')), errors.join("\n"));
    assert.ok(errors.some((e) => e.includes('required "sentences"')), errors.join("\n"));
    const status = fixture("indexState") as { projects: Record<string, unknown>[] };
    const wrong = { projects: [{ ...status.projects[0], skipped: 3 }] };
    assert.notDeepEqual(shapeErrors(wrong, declared("IndexStateParams"), "indexState"), []);
  });
});
