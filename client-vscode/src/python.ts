/**
 * Finds the Python that runs the server and makes sure the server package is importable:
 * CODE_COMPASS_SERVER_CMD (development/e2e) > codeCompass.server.pythonPath (trusted
 * workspaces only) > the Python extension's active interpreter > python3 on PATH.
 * If the chosen Python lacks `code_compass_server`, a private venv in globalStorage gets it via pip.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  isSupportedPython,
  MIN_PYTHON,
  parsePythonVersion,
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

async function importsServer(python: string): Promise<boolean> {
  return (await run(python, ["-c", "import code_compass_server"])).code === 0;
}

/** Create (or reuse) the private venv and pip-install the server into it, with a progress notification. */
async function installIntoPrivateVenv(
  basePython: string,
  storageDir: string,
  packageSpec: string,
  log: vscode.LogOutputChannel,
): Promise<string | undefined> {
  const venvDir = path.join(storageDir, "server-venv");
  const python = venvPython(venvDir, process.platform);
  if (fs.existsSync(python) && (await importsServer(python))) return python;
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
              `On Debian/Ubuntu install python3-venv, or point "codeCompass.server.pythonPath" at a Python that has code-compass installed.`,
          );
          return undefined;
        }
      }
      progress.report({ message: `pip install ${packageSpec} (first run only)…` });
      log.info(`Installing ${packageSpec} into ${venvDir}`);
      const pip = await run(python, ["-m", "pip", "install", "--disable-pip-version-check", packageSpec], 900_000);
      log.info(pip.stdout);
      if (pip.code !== 0 || !(await importsServer(python))) {
        log.error(`pip install failed: ${pip.stderr}`);
        void vscode.window.showErrorMessage(
          `Code Compass could not install its server ("pip install ${packageSpec}"). See the Code Compass output for pip's message; ` +
            `check your network or set "codeCompass.server.packageSpec" to a local wheel or folder.`,
        );
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
  if (await importsServer(python)) return serverCommandFor(python);
  const packageSpec = config.get<string>("server.packageSpec", "code-compass").trim() || "code-compass";
  const venvPy = await installIntoPrivateVenv(python, context.globalStorageUri.fsPath, packageSpec, log);
  return venvPy ? serverCommandFor(venvPy) : undefined;
}
