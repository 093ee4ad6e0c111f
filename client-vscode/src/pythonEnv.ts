/** Pure helpers for finding and checking the Python that runs the server. */

export const MIN_PYTHON: readonly [number, number] = [3, 11];

/** The snippet run with the candidate interpreter; prints "3.11.4". */
export const VERSION_SNIPPET = "import sys; print('%d.%d.%d' % sys.version_info[:3])";

export function parsePythonVersion(output: string): [number, number, number] | undefined {
  const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(output.trim());
  if (!m) return undefined;
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

export function isSupportedPython(version: readonly number[]): boolean {
  const [major, minor] = version;
  return major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1]);
}

/** Split a command line such as `/x/.venv/bin/code-compass serve` (quotes group words). */
export function splitCommand(line: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line)) !== null) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

/** The interpreter inside a venv folder. */
export function venvPython(venvDir: string, platform: string): string {
  return platform === "win32" ? `${venvDir}\\Scripts\\python.exe` : `${venvDir}/bin/python`;
}

export interface ServerCommand {
  command: string;
  args: string[];
}

/** `-P` (Python >= 3.11, which the server requires): the folder the editor starts it in is not put
 * on `sys.path`, so a workspace's own `mcp/` or `pygls/` package cannot shadow a dependency. */
export function serverCommandFor(python: string): ServerCommand {
  return { command: python, args: ["-P", "-m", "code_compass_server", "serve"] };
}
