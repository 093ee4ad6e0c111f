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

/**
 * The cited lines are highlighted with a decoration, never selected: a selection would be
 * replaced by the next key typed. The highlight stays until the user moves the cursor in
 * that editor or opens another location.
 */
class LineHighlight implements vscode.Disposable {
  private readonly type = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor("editor.rangeHighlightBackground"),
    // High Contrast themes have no highlight background: an outline carries it there.
    outlineColor: new vscode.ThemeColor("contrastActiveBorder"),
    outlineStyle: "dashed",
    outlineWidth: "1px",
    overviewRulerColor: new vscode.ThemeColor("editor.rangeHighlightBackground"),
    overviewRulerLane: vscode.OverviewRulerLane.Full,
  });
  private editor: vscode.TextEditor | undefined;
  private armed = false;
  private readonly listener = vscode.window.onDidChangeTextEditorSelection((e) => {
    // The first selection change is our own cursor placement; a later one is the user's.
    if (e.textEditor !== this.editor) return;
    if (this.armed && e.kind !== undefined && e.kind !== vscode.TextEditorSelectionChangeKind.Command) this.clear();
  });

  show(editor: vscode.TextEditor, range: vscode.Range): void {
    this.clear();
    this.editor = editor;
    editor.setDecorations(this.type, [range]);
    setTimeout(() => (this.armed = true), 300);
  }

  clear(): void {
    this.editor?.setDecorations(this.type, []);
    this.editor = undefined;
    this.armed = false;
  }

  dispose(): void {
    this.listener.dispose();
    this.type.dispose();
  }
}

let highlight: LineHighlight | undefined;

/** Create the shared highlight (once, at activation); disposed with the extension. */
export function registerLineHighlight(): vscode.Disposable {
  highlight ??= new LineHighlight();
  return highlight;
}

/** Open a wire location with its lines highlighted and the cursor at its start; undefined (and a message) if it cannot be resolved. */
export async function openWireLocation(loc: WireLocation, options: OpenOptions = {}): Promise<vscode.TextEditor | undefined> {
  const target = toEditorLocation(loc, folderRefs());
  if (!target) {
    void vscode.window.showWarningMessage(`Code Compass: cannot find ${loc.path} in this workspace${loc.project ? ` (project ${loc.project})` : ""}.`);
    return undefined;
  }
  try {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(target.fsPath));
    const range = doc.validateRange(new vscode.Range(target.startLine, 0, target.endLine, Number.MAX_SAFE_INTEGER));
    const cursor = new vscode.Selection(range.start, range.start);
    const editor = await vscode.window.showTextDocument(doc, {
      selection: cursor,
      preview: options.preview ?? true,
      preserveFocus: options.preserveFocus ?? false,
      // From a webview (the answer view) or a QuickPick, open in the text editors' group, not over the panel.
      viewColumn: options.viewColumn ?? vscode.window.activeTextEditor?.viewColumn ?? vscode.window.visibleTextEditors[0]?.viewColumn ?? vscode.ViewColumn.One,
    });
    editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    highlight?.show(editor, range);
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
