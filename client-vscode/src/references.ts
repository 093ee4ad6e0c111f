/**
 * Code lenses from the server carry JSON arguments; VS Code's editor.action.showReferences
 * needs real Uri/Position/Location objects. codeCompass.showReferences converts them.
 */
import * as vscode from "vscode";

export const SHOW_REFERENCES = "codeCompass.showReferences";

interface JsonPosition {
  line: number;
  character: number;
}
interface JsonRange {
  start: JsonPosition;
  end: JsonPosition;
}
interface JsonLocation {
  uri: string;
  range: JsonRange;
}

function toUri(u: string | vscode.Uri): vscode.Uri {
  return typeof u === "string" ? vscode.Uri.parse(u) : u;
}
function toPosition(p: JsonPosition | vscode.Position): vscode.Position {
  return p instanceof vscode.Position ? p : new vscode.Position(p.line, p.character);
}
function toRange(r: JsonRange | vscode.Range): vscode.Range {
  return r instanceof vscode.Range ? r : new vscode.Range(toPosition(r.start), toPosition(r.end));
}
function toLocation(l: JsonLocation | vscode.Location): vscode.Location {
  return l instanceof vscode.Location ? l : new vscode.Location(toUri(l.uri), toRange(l.range));
}

export async function showReferences(
  uri: string | vscode.Uri,
  position: JsonPosition | vscode.Position,
  locations: (JsonLocation | vscode.Location)[] = [],
): Promise<void> {
  await vscode.commands.executeCommand("editor.action.showReferences", toUri(uri), toPosition(position), locations.map(toLocation));
}

/** Redirect a server lens that names editor.action.showReferences with JSON args to our converter. */
export function fixLens(lens: vscode.CodeLens): vscode.CodeLens {
  if (lens.command?.command === "editor.action.showReferences" && typeof lens.command.arguments?.[0] === "string") {
    lens.command = { ...lens.command, command: SHOW_REFERENCES };
  }
  return lens;
}
