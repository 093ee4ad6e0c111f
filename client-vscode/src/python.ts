/**
 * Finds the Python that runs the server and makes sure the server package is importable:
 * CODE_COMPASS_SERVER_CMD (development/e2e) > codeCompass.server.pythonPath (trusted
 * workspaces only) > the Python extension's active interpreter > python3 on PATH.
 * The server must be exactly the version this extension was built with: if the chosen Python lacks
 * it, a private venv in globalStorage gets it via pip, from the wheel bundled in the VSIX (its
 * sha256 checked first) or, without one, `code-compass-server==<extension version>` from the index.
 */
import { execFile, spawn } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  type BundledWheel,
  classifyPipFailure,
  type InstallTarget,
  installTarget,
  isSupportedPython,
  isWantedVersion,
  MIN_PYTHON,
  parsePythonVersion,
  pipFailureAdvice,
  pipProgressMessage,
  proxyEnv,
  SERVER_VERSION_SNIPPET,
  type ServerCommand,
  serverCommandFor,
  splitCommand,
  VERSION_SNIPPET,
  venvPython,
} from "./pythonEnv";
import { SECTION } from "./settings";

export const SERVER_CMD_ENV = "CODE_COMPASS_SERVER_CMD";

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: timeoutMs, maxBuffer: 8 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr || (error && code === -1 ? error.message : "")) });
    });
  });
}

/** The interpreter the Python extension has selected, if it is installed (optional API). */
async function pythonExtensionInterpreter(log: vscode.LogOutputChannel): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension("ms-python.python");
  if (!ext) return undefined;
  try {
    // The shape of the Python extension's public API (environments.*), typed loosely on purpose.
    const api = (await ext.activate()) as {
      environments?: {
        getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
        resolveEnvironment(env: { path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
      };
    };
    const envs = api?.environments;
    if (!envs) return undefined;
    const active = envs.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri);
    if (!active) return undefined;
    const resolved = await envs.resolveEnvironment(active);
    return resolved?.executable?.uri?.fsPath ?? active.path;
  } catch (err) {
    log.warn(`Python extension API unavailable: ${String(err)}`);
    return undefined;
  }
}

async function explainBadPython(python: string, found: string | undefined): Promise<void> {
  const need = `${MIN_PYTHON[0]}.${MIN_PYTHON[1]}`;
  const problem = found
    ? `Code Compass needs Python ${need} or newer, but "${python}" is Python ${found}.`
    : `Code Compass needs Python ${need} or newer, and could not run "${python}".`;
  const choice = await vscode.window.showErrorMessage(
    `${problem} Install Python ${need}+ and set "codeCompass.server.pythonPath" to it (or select it in the Python extension), then restart the server.`,
    "Open Setting",
    "Get Python",
  );
  if (choice === "Open Setting") {
    await vscode.commands.executeCommand("workbench.action.openSettings", `${SECTION}.server.pythonPath`);
  } else if (choice === "Get Python") {
    await vscode.env.openExternal(vscode.Uri.parse("https://www.python.org/downloads/"));
  }
}

/** The installed server's version in `python`, or "" when it has none. */
async function installedServerVersion(python: string): Promise<string> {
  const probe = await run(python, ["-c", SERVER_VERSION_SNIPPET], 30_000);
  return probe.code === 0 ? probe.stdout.trim() : "";
}

/** Runs a command, handing each output line (stdout and stderr) to `onLine` as it comes. */
function runStreaming(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  onLine: (line: string) => void,
): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    const out: string[] = [];
    const err: string[] = [];
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    const feed = (sink: string[]) => (chunk: Buffer) => {
      const text = chunk.toString();
      sink.push(text);
      for (const line of text.split(/\r?\n/)) if (line.trim()) onLine(line);
    };
    child.stdout.on("data", feed(out));
    child.stderr.on("data", feed(err));
    child.on("error", (e) => err.push(String(e)));
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout: out.join(""), stderr: err.join("") });
    });
  });
}

/** `server/wheel.json` of the VSIX, after checking the wheel's sha256; undefined when absent. */
function bundledWheel(extensionPath: string, log: vscode.LogOutputChannel): BundledWheel | undefined {
  const meta = path.join(extensionPath, "server", "wheel.json");
  if (!fs.existsSync(meta)) return undefined;
  const wheel = JSON.parse(fs.readFileSync(meta, "utf8")) as BundledWheel;
  const file = path.join(extensionPath, "server", wheel.file);
  const sha = fs.existsSync(file) ? crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex") : "missing";
  if (sha !== wheel.sha256) {
    log.error(`Bundled server wheel ${file}: sha256 ${sha} != ${wheel.sha256}`);
    throw new Error(`the server wheel inside the extension is damaged (sha256 mismatch): reinstall the Code Compass extension.`);
  }
  return wheel;
}

/** Create (or reuse) the private venv and pip-install the server into it, with a progress notification. */
async function installIntoPrivateVenv(
  basePython: string,
  storageDir: string,
  target: InstallTarget,
  log: vscode.LogOutputChannel,
): Promise<string | undefined> {
  const venvDir = path.join(storageDir, "server-venv");
  const python = venvPython(venvDir, process.platform);
  if (fs.existsSync(python) && isWantedVersion(await installedServerVersion(python), target)) return python;
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Code Compass: installing the server", cancellable: false },
    async (progress) => {
      fs.mkdirSync(storageDir, { recursive: true });
      if (!fs.existsSync(python)) {
        progress.report({ message: "creating a private Python environment…" });
        const venv = await run(basePython, ["-m", "venv", venvDir], 180_000);
        if (venv.code !== 0) {
          log.error(`venv creation failed: ${venv.stderr}`);
          void vscode.window.showErrorMessage(
            `Code Compass could not create a Python environment with "${basePython}" (${venv.stderr.trim().split("\n").pop() ?? "unknown error"}). ` +
              `On Debian/Ubuntu install python3-venv, or point "codeCompass.server.pythonPath" at a Python that has code-compass-server installed.`,
          );
          return undefined;
        }
      }
      const label = target.version ? `code-compass-server ${target.version}` : target.spec;
      progress.report({ message: `pip install ${label} (first run only, a few minutes)…` });
      log.info(`Installing ${target.spec} into ${venvDir}`);
      const httpProxy = vscode.workspace.getConfiguration("http").get<string>("proxy", "");
      const env = { ...process.env, ...proxyEnv(httpProxy, process.env), PIP_DISABLE_PIP_VERSION_CHECK: "1" };
      const pip = await runStreaming(
        python,
        ["-m", "pip", "install", "--progress-bar", "off", target.spec],
        env,
        1_800_000,
        (line) => {
          log.info(`pip: ${line}`);
          const message = pipProgressMessage(line);
          if (message) progress.report({ message });
        },
      );
      if (pip.code !== 0 || !isWantedVersion(await installedServerVersion(python), target)) {
        log.error(`pip install failed (exit ${pip.code}): ${pip.stderr}`);
        void vscode.window.showErrorMessage(pipFailureAdvice(classifyPipFailure(pip.stderr + pip.stdout), target.spec));
        return undefined;
      }
      return python;
    },
  );
}

/** The command that starts the language server, or undefined after telling the user what to fix. */
export async function resolveServerCommand(
  context: vscode.ExtensionContext,
  log: vscode.LogOutputChannel,
): Promise<ServerCommand | undefined> {
  const override = process.env[SERVER_CMD_ENV]?.trim();
  if (override) {
    const [command, ...args] = splitCommand(override);
    log.info(`Server command from ${SERVER_CMD_ENV}: ${override}`);
    return { command, args };
  }
  const config = vscode.workspace.getConfiguration(SECTION);
  // In an untrusted workspace a workspace-level pythonPath could run anything: ignore it.
  const configured = vscode.workspace.isTrusted ? config.get<string>("server.pythonPath", "").trim() : "";
  const python = configured || (await pythonExtensionInterpreter(log)) || "python3";
  log.info(`Using Python: ${python}${configured ? " (codeCompass.server.pythonPath)" : ""}`);

  const probe = await run(python, ["-c", VERSION_SNIPPET], 20_000);
  const version = probe.code === 0 ? parsePythonVersion(probe.stdout) : undefined;
  if (!version || !isSupportedPython(version)) {
    log.error(`Python check failed for ${python}: ${probe.stderr || probe.stdout}`);
    await explainBadPython(python, version?.join("."));
    return undefined;
  }
  let bundled: BundledWheel | undefined;
  try {
    bundled = bundledWheel(context.extensionPath, log);
  } catch (err) {
    void vscode.window.showErrorMessage(`Code Compass: ${(err as Error).message}`);
    return undefined;
  }
  const extensionVersion = String((context.extension.packageJSON as { version?: string }).version ?? "");
  const target = installTarget(
    config.get<string>("server.packageSpec", ""),
    bundled,
    path.join(context.extensionPath, "server"),
    extensionVersion,
  );
  // The chosen Python already has this exact server (a developer's venv): use it as it is.
  if (isWantedVersion(await installedServerVersion(python), target)) return serverCommandFor(python);
  const venvPy = await installIntoPrivateVenv(python, context.globalStorageUri.fsPath, target, log);
  return venvPy ? serverCommandFor(venvPy) : undefined;
}
