/**
 * Citation/hit → editor location (pure). Paths in hits are workspace-relative with '/',
 * resolved against the workspace folder whose name equals the hit's project (multi-root);
 * lines are 1-based inclusive on the wire and 0-based in the editor.
 */

export interface FolderRef {
  name: string;
  /** Absolute filesystem path of the folder, with the platform's separators. */
  fsPath: string;
}

export interface WireLocation {
  path: string;
  startLine: number;
  endLine: number;
  project?: string | null;
}

export interface EditorLocation {
  /** Absolute path of the file. */
  fsPath: string;
  /** 0-based inclusive line range. */
  startLine: number;
  endLine: number;
}

function joinPath(root: string, rel: string): string {
  const sep = root.includes("\\") && !root.includes("/") ? "\\" : "/";
  const trimmedRoot = root.replace(/[\\/]+$/, "");
  const parts = rel.split("/").filter((p) => p !== "" && p !== ".");
  return [trimmedRoot, ...parts].join(sep);
}

/** Pick the folder for a project: by name, else the only folder; undefined if ambiguous. */
export function folderFor(project: string | null | undefined, folders: readonly FolderRef[]): FolderRef | undefined {
  if (project) {
    const named = folders.find((f) => f.name === project);
    if (named) return named;
  }
  return folders.length === 1 ? folders[0] : undefined;
}

export function toEditorLocation(loc: WireLocation, folders: readonly FolderRef[]): EditorLocation | undefined {
  if (!loc.path || loc.path.split("/").includes("..")) return undefined;
  const folder = folderFor(loc.project, folders);
  if (!folder) return undefined;
  const start = Math.max(0, Math.floor(loc.startLine) - 1);
  const end = Math.max(start, Math.floor(loc.endLine || loc.startLine) - 1);
  return { fsPath: joinPath(folder.fsPath, loc.path), startLine: start, endLine: end };
}

/** The workspace-relative '/' path of a file, and the project (folder name) it belongs to. */
export function toWireFile(fsPath: string, folders: readonly FolderRef[]): { path: string; project: string } | undefined {
  const norm = (p: string): string => p.replace(/\\/g, "/").replace(/\/+$/, "");
  const file = norm(fsPath);
  let best: FolderRef | undefined;
  for (const f of folders) {
    const root = norm(f.fsPath);
    if ((file === root || file.startsWith(`${root}/`)) && (!best || root.length > norm(best.fsPath).length)) best = f;
  }
  if (!best) return undefined;
  return { path: file.slice(norm(best.fsPath).length + 1), project: best.name };
}

/** Find where an answer's [id] points: a citation (with project from the matching evidence) or an evidence. */
export function resolveCitation(
  id: string,
  citations: readonly (WireLocation & { id: string })[],
  evidences: readonly (WireLocation & { id: string })[],
): WireLocation | undefined {
  const ev = evidences.find((e) => e.id === id);
  const cite = citations.find((c) => c.id === id);
  if (cite) return { path: cite.path, startLine: cite.startLine, endLine: cite.endLine, project: cite.project ?? ev?.project };
  return ev;
}
