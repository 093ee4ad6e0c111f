/**
 * The team index's connection for the server's environment (pure: no `vscode`). The URL lives in
 * settings without its password; the password lives in SecretStorage; the two meet only here,
 * in the environment of the server process (`CODE_COMPASS_DATABASE_URL`), never in settings,
 * initializationOptions or logs.
 */

export const ENV_URL = "CODE_COMPASS_DATABASE_URL";
export const ENV_PROJECT = "CODE_COMPASS_PROJECT";

export interface TeamIndexEnv {
  env: Record<string, string>;
  /** Something the user should fix (shown once), or undefined. */
  problem?: string;
}

/** `url`: `postgresql://user@host:port/db[?sslmode=…]` from settings; `password` from SecretStorage. */
export function teamIndexEnv(url: string, project: string, password: string | undefined): TeamIndexEnv {
  const raw = url.trim();
  if (!raw) return { env: {} };
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return { env: {}, problem: `codeCompass.teamIndex.url is not a URL: "${raw}". Expected postgresql://user@host:port/database.` };
  }
  if (parsed.protocol !== "postgresql:" && parsed.protocol !== "postgres:") {
    return { env: {}, problem: `codeCompass.teamIndex.url must start with postgresql:// (got ${parsed.protocol}//).` };
  }
  let problem: string | undefined;
  if (parsed.password) {
    problem = "codeCompass.teamIndex.url holds a password: settings are not secret. Remove it and run \"Code Compass: Set Team Index Password\"; the one in the URL is ignored.";
    parsed.password = "";
  }
  if (password) parsed.password = encodeURIComponent(password);
  const env: Record<string, string> = { [ENV_URL]: parsed.toString() };
  if (project.trim()) env[ENV_PROJECT] = project.trim();
  return { env, problem };
}

/** The URL as it may be shown or logged: never a password. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url.trim());
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(not a URL)";
  }
}
