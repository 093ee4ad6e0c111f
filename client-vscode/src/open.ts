/** Opening wire locations (hits, citations) in editors. */
import * as vscode from "vscode";
import { type FolderRef, toEditorLocation, toWireFile, type WireLocation } from "./locations";

export function folderRefs(): FolderRef[] {
  return (vscode.workspace.workspaceFolders ?? []).map((f) => ({ name: f.name, fsPath: f.uri.fsPath }));
}

export interface OpenOptions {
  preview?: boolean;
  preserveFocus?: boolean;
  viewColumn?: vscode.ViewColumn;
}

/** Open a wire location with its lines selected; false (and a message) if it cannot be resolved. */
export async function openWireLocation(loc: WireLocation, options: OpenOptions = {}): Promise<vscode.TextEditor | undefined> {
  const target = toEditorLocation(loc, folderRefs());
  if (!target) {
    void vscode.window.showWarningMessage(`Code Compass: cannot find ${loc.path} in this workspace${loc.project ? ` (project ${loc.project})` : ""}.`);
    return undefined;
  }
  try {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(target.fsPath));
    const range = doc.validateRange(new vscode.Range(target.startLine, 0, target.endLine, Number.MAX_SAFE_INTEGER));
    const editor = await vscode.window.showTextDocument(doc, {
      selection: range,
      preview: options.preview ?? true,
      preserveFocus: options.preserveFocus ?? false,
      // From a webview (the answer panel) or a QuickPick, open in the text editors' group, not over the panel.
      viewColumn: options.viewColumn ?? vscode.window.activeTextEditor?.viewColumn ?? vscode.window.visibleTextEditors[0]?.viewColumn ?? vscode.ViewColumn.One,
    });
    editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    return editor;
  } catch (err) {
    void vscode.window.showWarningMessage(`Code Compass: could not open ${loc.path}: ${String(err)}`);
    return undefined;
  }
}

/** Workspace-relative path of an editor's document, for activeFile. */
export function wireFileOf(doc: vscode.TextDocument): { path: string; project: string } | undefined {
  return doc.uri.scheme === "file" ? toWireFile(doc.uri.fsPath, folderRefs()) : undefined;
}
