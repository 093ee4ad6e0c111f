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

/** The server's distribution on the package index (the import package is `code_compass_server`). */
export const SERVER_DISTRIBUTION = "code-compass-server";

/** Prints the installed server's version, or nothing when it is not installed. */
export const SERVER_VERSION_SNIPPET =
  "import importlib.metadata as m\ntry: print(m.version('code-compass-server'))\nexcept m.PackageNotFoundError: pass";

/** `server/wheel.json` inside the VSIX: the server wheel built with this extension. */
export interface BundledWheel {
  file: string;
  sha256: string;
  version: string;
}

export interface InstallTarget {
  /** What `pip install` gets. */
  spec: string;
  /** The version that must end up installed; undefined for a user's own spec. */
  version: string | undefined;
  /** A local wheel whose sha256 was checked before pip sees it. */
  wheelPath?: string;
}

/**
 * What to install: the user's `codeCompass.server.packageSpec` when set; else the wheel bundled in
 * the VSIX; else exactly the extension's own version from the index.
 */
export function installTarget(
  userSpec: string,
  bundled: BundledWheel | undefined,
  bundleDir: string,
  extensionVersion: string,
): InstallTarget {
  const spec = userSpec.trim();
  if (spec) return { spec, version: undefined };
  if (bundled) {
    const wheelPath = `${bundleDir}/${bundled.file}`;
    return { spec: wheelPath, version: bundled.version, wheelPath };
  }
  return { spec: `${SERVER_DISTRIBUTION}==${extensionVersion}`, version: extensionVersion };
}

/** True when the installed version (SERVER_VERSION_SNIPPET's output) is the one wanted. */
export function isWantedVersion(installed: string, target: InstallTarget): boolean {
  const got = installed.trim();
  return got !== "" && (target.version === undefined || got === target.version);
}

export type PipFailure = "proxy" | "offline" | "other";

/** Why pip failed, from its output: the user's fix differs for each. */
export function classifyPipFailure(output: string): PipFailure {
  if (/ProxyError|Tunnel connection failed|407 Proxy|proxy/i.test(output)) return "proxy";
  if (
    /NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|Name or service not known|Network is unreachable|Max retries exceeded|timed out|No matching distribution found|Could not find a version that satisfies/i.test(
      output,
    )
  ) {
    return "offline";
  }
  return "other";
}

/** One sentence telling the user what to do when the server cannot be installed. */
export function pipFailureAdvice(kind: PipFailure, spec: string): string {
  const retry = 'then run "Code Compass: Restart Server".';
  switch (kind) {
    case "proxy":
      return (
        `Code Compass could not install its server through your proxy (pip install ${spec}). ` +
        `Set VS Code's "http.proxy" (passed to pip as HTTPS_PROXY) or pip's own proxy in pip.conf, ${retry}`
      );
    case "offline":
      return (
        `Code Compass could not reach the Python package index to install its server's dependencies (pip install ${spec}; about 200 MB, once). ` +
        `Connect to the internet (or set pip's index-url to a mirror), ${retry} ` +
        `Or install it yourself and set "codeCompass.server.pythonPath" to that Python.`
      );
    default:
      return (
        `Code Compass could not install its server (pip install ${spec}). See the Code Compass output for pip's message; ` +
        `set "codeCompass.server.packageSpec" to a local wheel, or "codeCompass.server.pythonPath" to a Python that has ${SERVER_DISTRIBUTION} installed.`
      );
  }
}

/** Extra environment for pip: VS Code's `http.proxy` as HTTPS_PROXY/HTTP_PROXY unless already set. */
export function proxyEnv(httpProxy: string, env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const proxy = httpProxy.trim();
  if (!proxy || env.HTTPS_PROXY || env.https_proxy) return {};
  return { HTTPS_PROXY: proxy, HTTP_PROXY: proxy };
}

/** A short progress message from one line of pip's output, or undefined to keep the last one. */
export function pipProgressMessage(line: string): string | undefined {
  const m = /^\s*(Collecting|Downloading|Processing|Installing collected packages|Successfully installed)\b\s*(.*)$/.exec(line);
  if (!m) return undefined;
  const rest = m[2].replace(/https?:\/\/\S+\/([^/\s]+)/, "$1").trim();
  const text = rest ? `${m[1]} ${rest}` : m[1];
  return text.length > 90 ? `${text.slice(0, 87)}…` : text;
}
