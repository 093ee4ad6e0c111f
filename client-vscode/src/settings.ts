/**
 * Settings → initializationOptions (pure). The server gets every codeCompass.* setting
 * in the nested shape of the "codeCompass" configuration section, plus each workspace
 * folder's own values of the resource-scoped keys keyed by folder URI — and never the API
 * key, which travels only in the server's env. Later changes reach the server by its
 * workspace/configuration pull (one item per folder, with scopeUri).
 */

export const SECTION = "codeCompass";

/** Every contributed setting (dotted, without the section) and its default; package.json must match. */
export const SETTING_DEFAULTS: Readonly<Record<string, unknown>> = {
  include: [],
  exclude: [],
  maxFileSizeKb: 1000,
  documentGlobs: [],
  "embeddings.enabled": true,
  "search.minScore": 0.6,
  "search.topK": 5,
  "llm.model": "claude-sonnet-5-5",
  "llm.maxTokens": 1000,
  "llm.temperature": 0.3,
  "hover.enabled": true,
  "codeLens.enabled": true,
  "trace.server": "off",
  "server.pythonPath": "",
  "server.packageSpec": "",
  "teamIndex.url": "",
  "teamIndex.project": "",
};

/** Settings that may differ per workspace folder (scope "resource" in package.json). */
export const RESOURCE_KEYS: readonly string[] = ["include", "exclude", "maxFileSizeKb", "documentGlobs"];

/** Key-looking names are dropped even if someone adds such a setting by hand. */
const SECRET_NAME = /(api[-_.]?key|secret|password|(access|auth|api)[-_.]?token)/i;

export type SettingGetter = (key: string) => unknown;

export interface InitializationOptions {
  storageUri: string | null;
  settings: Record<string, unknown>;
  /** Folder URI → that folder's values of RESOURCE_KEYS (as VS Code resolves them for it). */
  folderSettings: Record<string, Record<string, unknown>>;
  /** Commands this client runs itself; the server leaves them out of executeCommandProvider. */
  clientCommands: string[];
}

/** The code lens command: this client shows a peek view for it (see references.ts). */
export const CLIENT_COMMANDS: readonly string[] = ["codeCompass.showReferences"];

/** A workspace folder and a getter of the settings as they apply to it. */
export interface FolderConfig {
  uri: string;
  get: SettingGetter;
}

function setNested(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split(".");
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== "object" || next === null || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]] = value;
}

/** Nested settings object from a getter (vscode's WorkspaceConfiguration.get in production). */
export function collectSettings(get: SettingGetter, keys: readonly string[] = Object.keys(SETTING_DEFAULTS)): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    if (SECRET_NAME.test(key)) continue;
    const value = get(key);
    setNested(out, key, value === undefined ? SETTING_DEFAULTS[key] : value);
  }
  return out;
}

export function buildInitializationOptions(
  storagePath: string | undefined,
  get: SettingGetter,
  trusted = true,
  folders: readonly FolderConfig[] = [],
): InitializationOptions {
  const settings = collectSettings(get);
  // In an untrusted workspace the workspace may not choose the interpreter; don't echo its value.
  if (!trusted) setNested(settings, "server.pythonPath", "");
  const folderSettings: Record<string, Record<string, unknown>> = {};
  for (const folder of folders) folderSettings[folder.uri] = collectSettings(folder.get, RESOURCE_KEYS);
  return { storageUri: storagePath ?? null, settings, folderSettings, clientCommands: [...CLIENT_COMMANDS] };
}
