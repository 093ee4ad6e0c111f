// The user's path in a real VS Code: the extension creates its own server venv from the wheel
// bundled in the VSIX (built from this checkout by `npm run package`) — no CODE_COMPASS_SERVER_CMD,
// no repository venv on PATH — then answers a search. Screenshots go to artifacts/e2e/installed-*.
// Called by scripts/e2e_vscode.sh after run.mjs (same code-server, Chromium and VSIX); kept in its
// own file so the main run's checks and this one evolve separately. Last line: "N passed, N failed".
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { writeFixture } from "./fixture.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const CACHE = process.env.E2E_CACHE || path.join(ROOT, ".cache", "e2e");
const NODE_BIN = process.env.E2E_NODE_BIN || path.join(CACHE, "node-bin");
const ARTIFACTS = path.join(ROOT, "artifacts", "e2e");
const CODE_SERVER = path.join(CACHE, "node_modules", ".bin", "code-server");
const VSIX = path.join(ROOT, "client-vscode", "code-compass.vsix");
const CHROMIUM = "/usr/lib/chromium/chromium";
// pip installs the server's dependencies into a fresh venv: minutes on a loaded machine.
const INSTALL_TIMEOUT_MS = Number(process.env.E2E_INSTALL_TIMEOUT_MS || 600_000);
const { chromium } = createRequire(path.join(CACHE, "package.json"))("playwright-core");

const results = [];
const groups = [];
const log = (msg) => process.stderr.write(`[e2e installed] ${msg}\n`);

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function stopGroups() {
  for (const child of groups) {
    for (const sig of ["SIGTERM", "SIGKILL"]) {
      try {
        process.kill(-child.pid, sig);
      } catch {
        /* gone */
      }
      if (sig === "SIGTERM") spawnSync("sleep", ["1"]);
    }
  }
}

async function waitFor(fn, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

async function shot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `installed-${name}.png`) }).catch(() => undefined);
}

async function check(page, name, fn) {
  const started = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    log(`PASS ${name} (${Date.now() - started} ms)`);
  } catch (err) {
    results.push({ name, ok: false, err });
    log(`FAIL ${name}: ${err?.message ?? err}`);
  }
  await shot(page, name.replace(/[^a-z0-9]+/gi, "-").toLowerCase());
}

/** The folder of the real python3 (not a venv's, not a pyenv shim, which needs the real HOME). */
function systemPythonDir() {
  const probe = spawnSync("python3", ["-c", "import sys; print(getattr(sys, '_base_executable', sys.executable))"], { encoding: "utf8" });
  if (probe.status !== 0) throw new Error("python3 not found: the extension needs a Python >= 3.11 on PATH");
  return path.dirname(probe.stdout.trim());
}

function extensionLog(ud) {
  const logs = path.join(ud, "logs");
  if (!fs.existsSync(logs)) return "";
  const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
  return walk(logs)
    .filter((f) => /Code Compass\.log$/.test(f))
    .map((f) => fs.readFileSync(f, "utf8"))
    .join("\n");
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cc-e2e-installed-"));
  const ws = writeFixture(path.join(dir, "shapes-demo"));
  const ud = path.join(dir, "ud");
  const ext = path.join(dir, "ext");
  const env = {
    // Only the system Python and Node on PATH: nothing from the checkout's .venv.
    PATH: [NODE_BIN, systemPythonDir(), "/usr/local/bin", "/usr/bin", "/bin"].join(path.delimiter),
    HOME: path.join(dir, "home"),
    XDG_CONFIG_HOME: path.join(dir, "xdg-config"),
    XDG_DATA_HOME: path.join(dir, "xdg-data"),
    XDG_CACHE_HOME: path.join(dir, "xdg-cache"),
    // Downloads may come from the machine's pip cache (the install itself is fresh).
    PIP_CACHE_DIR: process.env.PIP_CACHE_DIR || path.join(os.homedir(), ".cache", "pip"),
    LANG: "C.UTF-8",
  };
  for (const k of ["PIP_CONFIG_FILE", "PIP_FIND_LINKS", "PIP_CERT", "PIP_DEFAULT_TIMEOUT", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"]) {
    if (process.env[k]) env[k] = process.env[k];
  }
  let browser;
  try {
    fs.mkdirSync(path.join(ud, "User"), { recursive: true });
    fs.writeFileSync(
      path.join(ud, "User", "settings.json"),
      JSON.stringify({
        "workbench.startupEditor": "none",
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoCheckUpdates": false,
        "extensions.autoUpdate": false,
        "security.workspace.trust.enabled": false,
        "chat.commandCenter.enabled": false,
      }),
    );
    const install = spawnSync(CODE_SERVER, ["--extensions-dir", ext, "--user-data-dir", ud, "--install-extension", VSIX], { env, encoding: "utf8" });
    if (install.status !== 0) throw new Error(`installing the VSIX failed: ${install.stderr || install.stdout}`);
    const port = await freePort();
    const out = fs.openSync(path.join(dir, "code-server.log"), "a");
    const args = ["--bind-addr", `127.0.0.1:${port}`, "--auth", "none", "--user-data-dir", ud, "--extensions-dir", ext];
    args.push("--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override");
    groups.push(spawn(CODE_SERVER, args, { env, stdio: ["ignore", out, out], detached: true }));
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 30_000, "code-server /healthz");

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-sync", "--disable-dev-shm-usage"],
      headless: true,
    });
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
    const status = page.locator(".statusbar-item", { hasText: "Compass" }).first();
    const started = Date.now();

    await check(page, "the extension installs its server and shows progress", async () => {
      await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
      const note = page.locator(".notification-toast", { hasText: "installing the server" }).first();
      await note.waitFor({ timeout: 60_000 });
      await page.waitForTimeout(3000); // let pip report a line into the notification
      await shot(page, "progress");
    });

    await check(page, "status reaches ready on the extension-installed server", async () => {
      await waitFor(async () => /Compass ready/.test(await status.innerText()), INSTALL_TIMEOUT_MS, "status 'Compass ready'");
      const text = extensionLog(ud);
      const wheel = /Installing (\S+code_compass_server-[^\s]+\.whl) into (\S+server-venv)/.exec(text);
      if (!wheel) throw new Error(`the log shows no install of the bundled wheel: ${text.slice(0, 600)}`);
      if (!wheel[1].startsWith(ext)) throw new Error(`installed ${wheel[1]}, not the wheel inside the VSIX (${ext})`);
      const py = path.join(wheel[2], "bin", "python");
      const version = spawnSync(py, ["-c", "import importlib.metadata as m; print(m.version('code-compass-server'))"], { encoding: "utf8" });
      const want = JSON.parse(fs.readFileSync(path.join(ROOT, "client-vscode", "package.json"), "utf8")).version;
      if (version.stdout.trim() !== want) throw new Error(`server venv has ${version.stdout.trim() || version.stderr}, want ${want}`);
      log(`server ${want} installed by the extension into ${wheel[2]} in ${Math.round((Date.now() - started) / 1000)} s`);
    });

    await check(page, "Search Code answers from the extension-installed server", async () => {
      await page.keyboard.press("Escape");
      await page.keyboard.press("F1");
      await page.locator(".quick-input-widget input.input").waitFor({ state: "visible", timeout: 10_000 });
      await page.keyboard.type("Code Compass: Search Code", { delay: 10 });
      await page.locator(".quick-input-list .monaco-list-row", { hasText: "Code Compass: Search Code" }).first().waitFor({ timeout: 10_000 });
      await page.keyboard.press("Enter");
      const input = page.locator(".quick-input-widget input.input");
      await waitFor(async () => (await input.isVisible()) && !(await input.inputValue()).startsWith(">"), 10_000, "the search input");
      await page.keyboard.type("circle area radius", { delay: 10 });
      const row = page.locator(".quick-input-list .monaco-list-row", { hasText: /shapes\.py:\d+/ }).first();
      await row.waitFor({ timeout: 60_000 });
      log(`search hit: ${(await row.innerText()).split("\n")[0]}`);
    });
  } catch (err) {
    results.push({ name: "setup", ok: false, err });
    log(`FAIL setup: ${err?.stack ?? err}`);
  } finally {
    await browser?.close().catch(() => undefined);
    stopGroups();
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const extLog = extensionLog(ud);
    if (extLog) fs.writeFileSync(path.join(ARTIFACTS, "installed-Code-Compass.log"), extLog);
    const csLog = path.join(dir, "code-server.log");
    if (fs.existsSync(csLog)) fs.copyFileSync(csLog, path.join(ARTIFACTS, "installed-code-server.log"));
    if (!process.env.E2E_KEEP) fs.rmSync(dir, { recursive: true, force: true });
  }
  const passed = results.filter((r) => r.ok).length;
  console.log(`${passed} passed, ${results.length - passed} failed`);
  process.exit(results.length - passed ? 1 : 0);
}

process.on("SIGINT", () => {
  stopGroups();
  process.exit(130);
});
await main();
