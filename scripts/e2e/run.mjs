// Drives the Code Compass extension inside code-server with Debian's Chromium.
// Called by scripts/e2e_vscode.sh after it installed code-server/playwright-core and built the VSIX.
// Each check is independent where it can be; the last line is "N passed, N failed".
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
// code-server needs its own Node (24); e2e_vscode.sh passes a folder holding just that `node`.
const NODE_BIN = process.env.E2E_NODE_BIN || path.join(CACHE, "node-bin");
const ARTIFACTS = path.join(ROOT, "artifacts", "e2e");
const CODE_SERVER = path.join(CACHE, "node_modules", ".bin", "code-server");
const VSIX = path.join(ROOT, "client-vscode", "code-compass.vsix");
const PYTHON = path.join(ROOT, ".venv", "bin", "python");
const SERVER_CMD = process.env.CODE_COMPASS_SERVER_CMD || `${path.join(ROOT, ".venv", "bin", "code-compass")} serve`;
const CHROMIUM = "/usr/lib/chromium/chromium";
const VSCE = path.join(ROOT, "client-vscode", "node_modules", ".bin", "vsce");
const FAKE_MODEL_DIR = path.join(ROOT, "scripts", "e2e", "fake-model");
const READY_TIMEOUT_MS = Number(process.env.E2E_READY_TIMEOUT_MS || 180_000);
const { chromium } = createRequire(path.join(CACHE, "package.json"))("playwright-core");

const results = [];
const groups = []; // process groups to kill at the end
const log = (msg) => process.stderr.write(`[e2e] ${msg}\n`);

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

/** Start a process in its own group (setsid-like) so the whole tree can be stopped with kill -- -PGID. */
function startGroup(cmd, args, opts) {
  const child = spawn(cmd, args, { ...opts, detached: true });
  groups.push(child);
  return child;
}

function stopGroups() {
  for (const child of groups.reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      /* already gone */
    }
  }
  const deadline = Date.now() + 3000;
  for (const child of groups) {
    while (Date.now() < deadline) {
      try {
        process.kill(-child.pid, 0);
      } catch {
        break;
      }
      spawnSync("sleep", ["0.1"]);
    }
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      /* gone */
    }
  }
}

async function waitFor(fn, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      if (await fn()) return;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (${last.message})` : ""}`);
}

async function startFakeAnthropic(dir) {
  const replies = path.join(dir, "replies.json");
  // Replies are templates the fake fills from the evidence it received ({cite:E1} → a real id).
  fs.writeFileSync(
    replies,
    JSON.stringify({
      // Streamed slowly (about 3 s) so "stop" can be pressed mid-answer; a code span and a
      // code block give the theme check code to measure.
      default: {
        text:
          "`circle_area` returns the area of a circle: pi times the radius squared {cite:E1}. The README documents it too.\n\n" +
          "```python\nreturn math.pi * radius**2\n```",
        chunk_size: 12,
        chunk_delay: 0.2,
      },
    }),
  );
  const child = startGroup(PYTHON, [path.join(ROOT, "tests", "fakes", "fake_anthropic.py"), "--port", "0", "--reply-file", replies], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stderr.on("data", (d) => fs.appendFileSync(path.join(dir, "fake-anthropic.log"), d));
  const port = await new Promise((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error("fake Anthropic server printed no port")), 15_000);
    child.stdout.on("data", (d) => {
      buf += d;
      const line = buf.split("\n")[0];
      if (buf.includes("\n") && /^\d+$/.test(line.trim())) {
        clearTimeout(timer);
        resolve(Number(line.trim()));
      }
    });
    child.once("exit", (code) => reject(new Error(`fake Anthropic server exited (${code})`)));
  });
  return port;
}

function writeUserSettings(userDataDir) {
  const user = path.join(userDataDir, "User");
  fs.mkdirSync(user, { recursive: true });
  fs.writeFileSync(
    path.join(user, "settings.json"),
    JSON.stringify(
      {
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "workbench.enableExperiments": false,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoCheckUpdates": false,
        "extensions.autoUpdate": false,
        "extensions.ignoreRecommendations": true,
        "security.workspace.trust.enabled": false,
        "editor.codeLens": true,
        "editor.hover.delay": 300,
        "editor.minimap.enabled": false,
        "window.commandCenter": false,
        "chat.commandCenter.enabled": false,
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        "codeCompass.trace.server": "messages",
        // The chat check sends requests in agent mode; the MCP check starts nothing by itself.
        "chat.mcp.autostart": "never",
      },
      null,
      2,
    ),
  );
}

/**
 * The editor invokes a chat participant only with some language model in the request, and an
 * offline editor has none (Copilot needs a sign-in): a fixture extension registers a fake one.
 * @compass never calls it. Packed with the client's vsce into the scratch folder.
 */
function packFakeModel(dir) {
  const out = path.join(dir, "e2e-fake-model.vsix");
  const pack = spawnSync(VSCE, ["package", "--no-dependencies", "--allow-missing-repository", "--skip-license", "-o", out], {
    cwd: FAKE_MODEL_DIR,
    encoding: "utf8",
  });
  if (pack.status !== 0) throw new Error(`packing the fake model extension failed: ${pack.stderr || pack.stdout}`);
  return out;
}

/** Whether the server command has the `mcp` subcommand (the MCP front door may not be in this checkout). */
function serverHasMcp(env) {
  const [command, ...args] = SERVER_CMD.split(/\s+/);
  const at = args.lastIndexOf("serve");
  if (at < 0) return false;
  return spawnSync(command, [...args.slice(0, at), "mcp", "--help"], { env, encoding: "utf8", timeout: 30_000 }).status === 0;
}

/** The extension's output channel as written to disk (the log file of "Code Compass"). */
function extensionLog(userDataDir) {
  const logs = path.join(userDataDir, "logs");
  if (!fs.existsSync(logs)) return "";
  const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
  return walk(logs)
    .filter((f) => /Code Compass\.log$/.test(f))
    .map((f) => fs.readFileSync(f, "utf8"))
    .join("\n");
}

async function startCodeServer(dir, baseEnv) {
  const env = { ...baseEnv, PATH: `${NODE_BIN}${path.delimiter}${baseEnv.PATH ?? ""}` };
  const port = await freePort();
  const ud = path.join(dir, "ud");
  const ext = path.join(dir, "ext");
  writeUserSettings(ud);
  const fakeModel = packFakeModel(dir);
  const install = spawnSync(
    CODE_SERVER,
    ["--extensions-dir", ext, "--user-data-dir", ud, "--install-extension", VSIX, "--install-extension", fakeModel],
    { env, encoding: "utf8" },
  );
  if (install.status !== 0) throw new Error(`installing the VSIX failed: ${install.stderr || install.stdout}`);
  const out = fs.openSync(path.join(dir, "code-server.log"), "a");
  startGroup(
    CODE_SERVER,
    [
      "--bind-addr",
      `127.0.0.1:${port}`,
      "--auth",
      "none",
      "--user-data-dir",
      ud,
      "--extensions-dir",
      ext,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      "--disable-proxy",
    ],
    { env, stdio: ["ignore", out, out] },
  );
  await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 30_000, "code-server /healthz");
  return { port, ud, ext };
}

// ---------------------------------------------------------------------------------------------
// Browser helpers

async function shot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) }).catch(() => undefined);
}

let serverReady = true;

async function check(page, name, fn, { needsServer = true } = {}) {
  const started = Date.now();
  if (needsServer && !serverReady) {
    results.push({ name, ok: false, err: new Error("skipped: the server never became ready") });
    log(`FAIL ${name}: the server never became ready`);
    return;
  }
  try {
    await fn();
    results.push({ name, ok: true });
    log(`PASS ${name} (${Date.now() - started} ms)`);
  } catch (err) {
    results.push({ name, ok: false, err });
    log(`FAIL ${name}: ${err?.message ?? err}`);
  }
  await shot(page, `${String(results.length).padStart(2, "0")}-${name.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}`);
}

async function runPaletteCommand(page, title, { escapeFirst = true } = {}) {
  // Escape closes leftovers, but in an editor it also drops the selection.
  if (escapeFirst) await page.keyboard.press("Escape");
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible", timeout: 10_000 });
  await page.keyboard.type(title, { delay: 10 });
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
  await row.waitFor({ state: "visible", timeout: 10_000 });
  await page.keyboard.press("Enter");
}

/** After a palette command: wait until its own input (QuickPick or InputBox) replaced the palette's ">…" input. */
async function waitForCommandInput(page) {
  const input = page.locator(".quick-input-widget input.input");
  await waitFor(async () => (await input.isVisible()) && !(await input.inputValue()).startsWith(">"), 10_000, "the command's input box");
}

async function openFile(page, rel) {
  // Escape closes a hover or peek left by the previous check. On a loaded machine a key of
  // the quick-open sequence was lost while it closed (seen twice in CI): the sequence runs
  // up to three times before the check fails.
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press("Escape");
      await page.keyboard.press("Control+P");
      await page.locator(".quick-input-widget input.input").waitFor({ state: "visible", timeout: 10_000 });
      await page.keyboard.type(rel, { delay: 10 });
      // The focused row, not just any row: while the filter catches up with the typing, a
      // recently opened file is still focused and Enter would open it (seen in CI).
      await page.locator(".quick-input-list .monaco-list-row.focused", { hasText: path.basename(rel) }).first().waitFor({ timeout: 10_000 });
      await page.keyboard.press("Enter");
      await activeTab(page, path.basename(rel)).waitFor({ timeout: 10_000 });
      return;
    } catch (err) {
      if (attempt >= 3) throw err;
      log(`opening ${rel} failed (${err.message.split("\n")[0]}); trying once more`);
    }
  }
}

/** Screen box of `word` inside the rendered editor line containing `lineText` (spans re-render: re-query each try). */
async function wordBox(page, lineText, word) {
  return page.evaluate(
    ([lineText, word]) => {
      for (const line of document.querySelectorAll(".view-lines .view-line")) {
        const text = line.textContent.replace(/\u00a0/g, " ");
        if (!text.includes(lineText)) continue;
        const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const i = node.textContent.indexOf(word);
          if (i < 0) continue;
          const range = document.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + word.length);
          const r = range.getBoundingClientRect();
          return { x: r.x, y: r.y, width: r.width, height: r.height };
        }
      }
      return null;
    },
    [lineText, word],
  );
}

/** The active tab of the active editor group. */
function activeTab(page, name) {
  return page.locator(".editor-group-container.active .tab.active", { hasText: name });
}

/** The line of the active editor's cursor, from the status bar ("Ln 4, Col 1 (52 selected)"). */
async function cursorStatus(page) {
  const text = (await page.locator("#status\\.editor\\.selection").innerText({ timeout: 5000 })).trim();
  const m = /Ln (\d+), Col (\d+)/.exec(text);
  return { text, line: m ? Number(m[1]) : -1, selected: /selected/.test(text) };
}

function answerFrame(page) {
  return page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");
}

/**
 * Switch the color theme with the fixture extension's "E2E: Theme <label>" command (a
 * configuration update); if the webview's theme kind has not followed, the theme picker.
 */
async function switchTheme(page, kindNow, label, kind) {
  await runPaletteCommand(page, `E2E: Theme ${label}`);
  if (!kind) return "command";
  try {
    await waitFor(async () => (await kindNow()) === kind, 15_000, `theme kind ${kind}`);
    return "command";
  } catch {
    log(`theme ${label} not applied by the command (kind ${await kindNow().catch(() => "?")}); using the theme picker`);
  }
  await runPaletteCommand(page, "Preferences: Color Theme");
  await waitForCommandInput(page);
  await page.keyboard.type(label, { delay: 10 });
  await page.waitForTimeout(500); // the list filters to the one theme with this label, focused
  await page.keyboard.press("Enter");
  await waitFor(async () => (await kindNow()) === kind, 20_000, `theme kind ${kind} (now ${await kindNow().catch(() => "?")})`);
  return "picker";
}

/**
 * WCAG contrast of every code element of the answers (inline spans and blocks): the text's
 * colour against the background actually behind it (ancestors' backgrounds composited, the
 * view's own background at the root). Runs inside the webview.
 */
async function codeContrast(frame) {
  return frame.locator("body").evaluate(() => {
    const probe = document.createElement("span");
    document.body.appendChild(probe);
    const rgba = (css) => {
      probe.style.color = "";
      probe.style.color = css;
      const c = getComputedStyle(probe).color;
      const m = /rgba?\(([^)]+)\)/.exec(c) || /color\(srgb ([^)]+)\)/.exec(c);
      if (!m) return [0, 0, 0, 0];
      const parts = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
      const scale = c.startsWith("color(") ? 255 : 1;
      return [parts[0] * scale, parts[1] * scale, parts[2] * scale, parts.length > 3 ? parts[3] : 1];
    };
    const over = (top, bottom) => {
      const a = top[3] + bottom[3] * (1 - top[3]);
      if (a === 0) return [0, 0, 0, 0];
      return [0, 1, 2].map((i) => (top[i] * top[3] + bottom[i] * bottom[3] * (1 - top[3])) / a).concat([a]);
    };
    const rootVar = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    const viewBg = rgba(rootVar("--vscode-panel-background") || rootVar("--vscode-sideBar-background") || rootVar("--vscode-editor-background"));
    const background = (el) => {
      const layers = [];
      for (let e = el; e; e = e.parentElement) layers.push(rgba(getComputedStyle(e).backgroundColor));
      return layers.reduceRight((acc, layer) => over(layer, acc), [viewBg[0], viewBg[1], viewBg[2], 1]);
    };
    const lum = (c) => {
      const ch = c.slice(0, 3).map((v) => {
        const x = v / 255;
        return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
    };
    const out = [];
    for (const code of document.querySelectorAll(".answer-text code")) {
      const bg = background(code);
      const fg = over(rgba(getComputedStyle(code).color), bg);
      const [l1, l2] = [lum(fg), lum(bg)].sort((a, b) => b - a);
      out.push({ text: code.textContent.slice(0, 30), block: !!code.closest("pre"), ratio: (l1 + 0.05) / (l2 + 0.05) });
    }
    probe.remove();
    return { kind: document.body.dataset.vscodeThemeKind || document.body.className, codes: out };
  });
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cc-e2e-"));
  fs.rmSync(ARTIFACTS, { recursive: true, force: true });
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const ws = writeFixture(path.join(dir, "shapes-demo"));
  log(`workspace ${ws}, scratch ${dir}`);
  let browser;
  let cs;
  try {
    const anthropicPort = await startFakeAnthropic(dir);
    log(`fake Anthropic on ${anthropicPort}`);
    const env = {
      ...process.env,
      HOME: path.join(dir, "home"),
      XDG_CONFIG_HOME: path.join(dir, "xdg-config"),
      XDG_DATA_HOME: path.join(dir, "xdg-data"),
      XDG_CACHE_HOME: path.join(dir, "xdg-cache"),
      CODE_COMPASS_HOME: path.join(dir, "cc-home"),
      CODE_COMPASS_SERVER_CMD: SERVER_CMD,
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${anthropicPort}`,
      ANTHROPIC_API_KEY: "e2e-dummy-key",
    };
    cs = await startCodeServer(dir, env);
    log(`code-server on ${cs.port}`);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
      ],
      headless: true,
    });
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${cs.port}/?folder=${encodeURIComponent(ws)}`);

    const status = page.locator(".statusbar-item", { hasText: "Compass" }).first();

    await check(page, "extension activates and shows its status item", async () => {
      await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
      await page.locator(".explorer-folders-view .monaco-list-row").first().waitFor({ timeout: 60_000 });
      await status.waitFor({ timeout: 60_000 });
    }, { needsServer: false });

    await check(page, "status reaches ready", async () => {
      try {
        await waitFor(async () => /Compass ready/.test(await status.innerText()), READY_TIMEOUT_MS, "status 'Compass ready'");
      } catch (err) {
        serverReady = false;
        throw new Error(`${err.message}; status shows "${await status.innerText().catch(() => "?")}"`);
      }
    }, { needsServer: false });

    await check(page, "palette lists the Code Compass commands", async () => {
      await page.keyboard.press("Escape");
      await page.keyboard.press("F1");
      await page.locator(".quick-input-widget input.input").waitFor({ state: "visible", timeout: 10_000 });
      await page.keyboard.type("Code Compass:", { delay: 10 });
      const expected = ["Ask a Question", "Search Code", "Reindex", "Set Anthropic API Key", "Clear API Key", "Show Output", "New Conversation", "Restart Server"];
      await waitFor(async () => {
        const labels = (await page.locator(".quick-input-list .monaco-list-row").allInnerTexts()).join("\n");
        return expected.every((e) => labels.includes(e));
      }, 10_000, `palette entries ${expected.join(", ")}`);
      await shot(page, "palette");
      await page.keyboard.press("Escape");
    }, { needsServer: false });

    await check(page, "status details list the project", async () => {
      await status.click();
      const row = page.locator(".quick-input-list .monaco-list-row", { hasText: "shapes-demo" }).first();
      await row.waitFor({ timeout: 10_000 });
      const text = (await page.locator(".quick-input-list").innerText()).replace(/\s+/g, " ");
      if (!/files/.test(text) || !/LLM configured/.test(text)) throw new Error(`details were: ${text}`);
      await shot(page, "status-details");
      await page.keyboard.press("Escape");
    });

    await check(page, "hover on a symbol shows its citation", async () => {
      await openFile(page, "geometry/report.py");
      // Spans re-render: re-query on every try.
      await waitFor(async () => {
        const box = await wordBox(page, "circle = circle_area", "circle_area");
        if (!box) return false;
        await page.mouse.move(5, 5);
        await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 4 });
        const hover = page.locator(".monaco-hover:not(.hidden)");
        await hover.waitFor({ state: "visible", timeout: 3000 });
        const text = await hover.innerText();
        return /Defined at/.test(text) && /geometry\/shapes\.py:\d+/.test(text);
      }, 30_000, "a hover with 'Defined at geometry/shapes.py:N'");
      await page.waitForTimeout(500); // let the hover finish fading in
      await shot(page, "hover");
      await page.mouse.move(5, 5);
    });

    await check(page, "code lens is shown and opens the references peek", async () => {
      await openFile(page, "geometry/shapes.py");
      const lens = page.locator(".codelens-decoration a", { hasText: /usage|reference/ }).first();
      await lens.waitFor({ timeout: 30_000 });
      await lens.click();
      await page.locator(".peekview-widget, .zone-widget .peekview-title").first().waitFor({ timeout: 10_000 });
      await shot(page, "code-lens-peek");
      await page.keyboard.press("Escape");
    });

    await check(page, "Ask a Question shows the answer, its badge and evidence", async () => {
      await runPaletteCommand(page, "Code Compass: Ask a Question");
      await waitForCommandInput(page);
      await page.keyboard.type("How is the area of a circle computed?", { delay: 5 });
      await page.keyboard.press("Enter");
      const frame = answerFrame(page);
      const finished = frame.locator('section.turn[data-phase="done"] .answer-text').first();
      await finished.waitFor({ timeout: 60_000 });
      const text = await finished.innerText();
      if (!/circle/i.test(text)) throw new Error(`answer text was: ${text}`);
      const badge = (await frame.locator(".badge.confidence").first().innerText()).trim();
      if (!/^\d{1,3} · (OK|PARTIAL|AMBIGUOUS|FAIL)$/.test(badge)) throw new Error(`badge was: ${badge}`);
      await frame.locator(".evidences li").first().waitFor({ timeout: 5000 });
      // The reply's second sentence cites nothing: the server's verdict is marked in the text.
      const uncited = frame.locator('section.turn[data-phase="done"] .claim-uncited').first();
      await uncited.waitFor({ timeout: 5000 });
      log(`answer badge "${badge}"; marked uncited: "${await uncited.innerText()}"; answer: ${text.slice(0, 160)}`);
    });

    await check(page, "the answer view lives in the Code Compass panel, not in an editor tab", async () => {
      const panel = page.locator(".part.panel");
      await panel.waitFor({ state: "visible", timeout: 10_000 });
      const title = (await panel.locator(".composite.title, .title-label").first().innerText({ timeout: 2000 }).catch(() => "?")).trim();
      const pbox = await panel.boundingBox();
      const fbox = await page.locator("iframe.webview.ready").first().boundingBox();
      const inside = pbox && fbox && fbox.x >= pbox.x - 1 && fbox.y >= pbox.y - 1 && fbox.y + fbox.height <= pbox.y + pbox.height + 1;
      if (!inside) throw new Error(`the answer webview ${JSON.stringify(fbox)} is not inside the panel ${JSON.stringify(pbox)}`);
      const tabs = await page.locator(".editor-group-container .tab", { hasText: "Code Compass" }).count();
      if (tabs) throw new Error(`${tabs} editor tab(s) named Code Compass`);
      await shot(page, "answer-view-in-panel");
      log(`answer view in the panel (title "${title}"), no editor tab`);
    });

    await check(page, "code in answers is readable in all four theme kinds (contrast >= 4.5:1)", async () => {
      const frame = answerFrame(page);
      const kindNow = () => frame.locator("body").getAttribute("data-vscode-theme-kind");
      // VS Code 1.139's built-in themes (their labels) and the kind each gives the webview.
      const themes = [
        ["Dark Modern", "vscode-dark"],
        ["Light Modern", "vscode-light"],
        ["Dark High Contrast", "vscode-high-contrast"],
        ["Light High Contrast", "vscode-high-contrast-light"],
      ];
      const figures = [];
      try {
        for (const [label, kind] of themes) {
          const how = await switchTheme(page, kindNow, label, kind);
          await page.waitForTimeout(500); // the theme's variables reach the webview with the kind
          const { codes } = await codeContrast(frame);
          if (!codes.some((c) => !c.block) || !codes.some((c) => c.block)) throw new Error(`${label}: expected an inline code span and a code block, got ${JSON.stringify(codes)}`);
          const min = Math.min(...codes.map((c) => c.ratio));
          figures.push(`${label} (${how}): min ${min.toFixed(2)} (${codes.map((c) => `${c.block ? "block" : "span"} ${c.ratio.toFixed(2)}`).join(", ")})`);
          await shot(page, `theme-${kind}`);
          if (min < 4.5) throw new Error(`${label}: code contrast ${min.toFixed(2)} < 4.5 (${JSON.stringify(codes)})`);
        }
      } finally {
        log(`code contrast: ${figures.join("; ")}`);
        await page.keyboard.press("Escape");
        await switchTheme(page, kindNow, "Default").catch(() => undefined);
      }
    });

    await check(page, "a citation link opens the cited file at its lines", async () => {
      const frame = answerFrame(page);
      const link = frame.locator("a.cite").first();
      await link.waitFor({ timeout: 10_000 });
      const title = await link.getAttribute("title"); // "geometry/shapes.py:4-7"
      const m = /^(.*):(\d+)(?:-(\d+))?$/.exec(title ?? "");
      if (!m) throw new Error(`citation title was ${title}`);
      const [, rel, start, end] = m;
      await link.click();
      await activeTab(page, path.basename(rel)).waitFor({ timeout: 10_000 });
      await waitFor(async () => {
        const cur = await cursorStatus(page);
        return cur.line >= Number(start) && cur.line <= Number(end ?? start);
      }, 10_000, `cursor within ${rel}:${start}-${end ?? start}`);
      // Highlighted by a whole-line decoration, not selected (typing must not replace code).
      const cur = await cursorStatus(page);
      if (cur.selected) throw new Error(`the citation selected text: ${cur.text}`);
      const lines = Number(end ?? start) - Number(start) + 1;
      const editor = page.locator(".editor-group-container.active .monaco-editor").first();
      const decorated = editor.locator('.view-overlays div[class*="ced-"]');
      await waitFor(async () => (await decorated.count()) >= Math.min(lines, 3), 5000, "the cited lines' highlight decoration");
      await shot(page, "citation-highlight");
      log(`citation ${title} opened; cursor ${cur.text}; ${await decorated.count()} highlighted line overlays, nothing selected`);
    });

    await check(page, "Search Code finds a hit and opens it", async () => {
      await openFile(page, "README.md"); // start elsewhere, so opening the hit is observable
      await runPaletteCommand(page, "Code Compass: Search Code");
      await waitForCommandInput(page);
      await page.keyboard.type("circle area radius", { delay: 10 });
      // A README row's snippet also says "geometry/shapes.py": wait for the code hit itself
      // (path:line), not whatever the half-typed query listed first.
      const row = page.locator(".quick-input-list .monaco-list-row", { hasText: /shapes\.py:\d+/ }).first();
      await row.waitFor({ timeout: 30_000 });
      await shot(page, "search-results");
      const label = await row.innerText();
      const m = /(\S+\.py):(\d+)/.exec(label);
      if (!m) throw new Error(`result label was ${label}`);
      await row.click();
      await activeTab(page, path.basename(m[1])).waitFor({ timeout: 10_000 });
      const cur = await cursorStatus(page);
      if (cur.line < Number(m[2])) throw new Error(`cursor ${cur.text} before the hit's line ${m[2]}`);
      log(`search hit ${m[1]}:${m[2]} opened; cursor ${cur.text}`);
    });

    await check(page, "a follow-up suggestion or input continues the conversation", async () => {
      const frame = answerFrame(page);
      const input = frame.locator("#ask-input");
      await input.click();
      await page.keyboard.type("Where is circle_area documented?", { delay: 5 });
      await page.keyboard.press("Enter");
      await waitFor(async () => (await frame.locator("section.turn").count()) === 2, 30_000, "a second turn");
      await frame.locator("section.turn").nth(1).locator(".badge.confidence").waitFor({ timeout: 60_000 });
    });

    await check(page, "Ask About Selection answers in the same panel", async () => {
      await page.keyboard.press("Escape");
      await page.locator(".explorer-folders-view .monaco-list-row", { hasText: "report.py" }).first().click();
      await page.locator(".tab.active", { hasText: "report.py" }).first().waitFor({ timeout: 10_000 });
      // Double-click selects the word: the editor then has a selection (the command's when-clause).
      await waitFor(async () => {
        const box = await wordBox(page, "circle = circle_area", "circle_area");
        if (!box) return false;
        await page.mouse.dblclick(box.x + box.width / 2, box.y + box.height / 2);
        return (await cursorStatus(page)).selected;
      }, 15_000, "a selection on circle_area in report.py");
      await runPaletteCommand(page, "Code Compass: Ask About Selection", { escapeFirst: false });
      await waitForCommandInput(page);
      await page.keyboard.press("Enter"); // the prefilled "What does this code do?"
      const frame = answerFrame(page);
      await waitFor(async () => (await frame.locator("section.turn").count()) === 3, 30_000, "a third turn");
      await frame.locator("section.turn").nth(2).locator(".badge.confidence").waitFor({ timeout: 60_000 });
      const q = await frame.locator("section.turn").nth(2).locator(".question").innerText();
      if (!/What does this code do\?/.test(q)) throw new Error(`question was ${q}`);
    });

    await check(page, "stop cancels a streaming answer", async () => {
      const frame = answerFrame(page);
      const before = await frame.locator("section.turn").count();
      await frame.locator("#ask-input").click();
      await page.keyboard.type("How does rectangle_area compute its result?", { delay: 5 });
      await page.keyboard.press("Enter");
      const turn = frame.locator("section.turn").nth(before);
      await waitFor(async () => (await turn.getAttribute("data-phase")) === "streaming", 60_000, "the answer streaming");
      await frame.locator("#stop-button").click();
      await waitFor(async () => (await turn.getAttribute("data-phase")) === "stopped", 3000, "the turn marked stopped");
      await frame.locator("#ask-button").waitFor({ state: "visible", timeout: 3000 });
      await page.waitForTimeout(4000); // the full reply would have finished streaming by now
      const phase = await turn.getAttribute("data-phase");
      if (phase !== "stopped") throw new Error(`after stop the turn became ${phase}`);
      // The server answers a $/cancelRequest with RequestCancelled (-32800); the view logs it.
      const cancelled = () => /ask \S+: cancelled by the server \(RequestCancelled\) \d+ ms after stop/.exec(extensionLog(cs.ud));
      await waitFor(async () => cancelled(), 10_000, "the server's RequestCancelled answer in the log");
      await shot(page, "stopped");
      log(`stopped mid-stream: "${(await turn.innerText()).replace(/\s+/g, " ").slice(0, 120)}"; ${cancelled()[0]}`);
    });

    await check(page, "the conversation survives a window reload", async () => {
      const frame = answerFrame(page);
      const turns = await frame.locator("section.turn").count();
      const first = (await frame.locator("section.turn").first().locator(".q-text").innerText()).trim();
      await page.reload();
      await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
      await page.locator(".explorer-folders-view .monaco-list-row").first().waitFor({ timeout: 60_000 });
      await waitFor(async () => /Compass ready/.test(await status.innerText()), READY_TIMEOUT_MS, "status 'Compass ready' after the reload");
      await runPaletteCommand(page, "Code Compass: Show Answers");
      const restored = answerFrame(page);
      await waitFor(async () => (await restored.locator("section.turn").count()) === turns, 30_000, `${turns} turns restored`);
      const again = (await restored.locator("section.turn").first().locator(".q-text").innerText()).trim();
      if (again !== first) throw new Error(`first question was "${first}", restored "${again}"`);
      await restored.locator("section.turn").first().locator(".answer-text").waitFor({ timeout: 5000 });
      await shot(page, "restored-after-reload");
      log(`${turns} turns restored after the reload`);
    });

    await check(page, "MCP: List Servers shows the Code Compass server", async () => {
      await runPaletteCommand(page, "MCP: List Servers");
      const row = page.locator(".quick-input-list .monaco-list-row", { hasText: "Code Compass" }).first();
      await row.waitFor({ timeout: 15_000 });
      const label = (await row.innerText()).replace(/\s+/g, " ");
      await shot(page, "mcp-list-servers");
      await page.keyboard.press("Escape");
      // The definition behind that row: `mcp` with this workspace and the extension's index storage.
      const line = extensionLog(cs.ud).split("\n").find((l) => l.includes("MCP server definition provided: Code Compass:"));
      if (!line) throw new Error("the extension never logged the definition it provided");
      if (!line.includes(` mcp --workspace ${ws} --storage `)) throw new Error(`unexpected definition: ${line}`);
      log(`MCP row "${label}"; ${line.slice(line.indexOf("Code Compass:"))}`);
    });

    if (serverHasMcp(env)) {
      await check(page, "the editor starts the Code Compass MCP server and finds its tools", async () => {
        await runPaletteCommand(page, "MCP: List Servers");
        await page.locator(".quick-input-list .monaco-list-row", { hasText: "Code Compass" }).first().click();
        await page.locator(".quick-input-list .monaco-list-row", { hasText: "Start Server" }).first().click();
        // The editor's "MCP: Code Compass" output channel reports the tools/list it got.
        // (The editor renders spaces as no-break spaces: \s matches both.)
        const output = page.locator(".part.panel .monaco-editor").filter({ hasText: /Discovered\s\d+\stools/ }).first();
        await output.waitFor({ timeout: 60_000 });
        const tools = Number(/Discovered\s(\d+)\stools/.exec(await output.innerText())[1]);
        if (tools < 3) throw new Error(`only ${tools} tools discovered`);
        await shot(page, "mcp-started");
        await runPaletteCommand(page, "MCP: List Servers");
        const row = page.locator(".quick-input-list .monaco-list-row", { hasText: "Code Compass" }).first();
        await waitFor(async () => /Running/.test(await row.innerText()), 10_000, "Code Compass listed as Running");
        await page.keyboard.press("Escape");
        await page.keyboard.press("Control+J"); // close the panel the output opened
        log(`MCP server running with ${tools} tools`);
      });
    } else {
      log("not checked: starting the MCP server (this checkout's code-compass has no `mcp` subcommand)");
    }

    // The chat list is virtualised (rows scrolled away are not in the DOM): read the latest
    // response, and count answers in the extension's log.
    const latestResponse = page.locator(".interactive-list .interactive-item-container.interactive-response.chat-most-recent-response");
    const chatAnswers = () => [...extensionLog(cs.ud).matchAll(/@compass (?:answered in conversation (\S+):|failed: (.*))/g)];
    const STATUS_LINE = /(OK|PARTIAL|AMBIGUOUS|FAIL|PARCIAL|AMBÍGUA|FALHA) · \d{1,3}/; // English or Portuguese
    const waitForChatAnswer = async (count) => {
      await waitFor(async () => chatAnswers().length >= count, 60_000, `@compass answer ${count} in the log`);
      const failure = chatAnswers()[count - 1][2];
      if (failure) throw new Error(`@compass failed: ${failure}`);
      await waitFor(async () => STATUS_LINE.test(await latestResponse.innerText()), 15_000, "the state and confidence line");
      return latestResponse;
    };
    // The chat input's text as the editor shows it (non-breaking spaces as spaces).
    const chatInputText = async () =>
      (await page.locator(".interactive-input-part .view-lines").first().innerText()).replace(/\u00a0/g, " ").trim();
    const suggestOpen = () => page.locator(".interactive-input-part .suggest-widget.visible, .monaco-workbench .suggest-widget.visible").first().isVisible().catch(() => false);
    const askInChat = async (question, count) => {
      await runPaletteCommand(page, "E2E: Use the Fake Model in Chat"); // opens the chat view and focuses its input
      await page.locator(".interactive-input-part").first().waitFor({ timeout: 15_000 });
      // Wait on state, not time: the input's editor has the keyboard focus.
      await waitFor(() => page.evaluate(() => !!document.activeElement?.closest(".interactive-input-part")), 15_000, "the chat input focused");
      await page.keyboard.press("Control+A"); // the sticky "@compass" of the last turn is typed again below
      await page.keyboard.press("Delete");
      await waitFor(async () => (await chatInputText()) === "", 5000, "an empty chat input");
      // Inserted at once, not typed key by key: typed, the participant completion could turn
      // "@compass …" into "@agent" under load (a suggestion accepted by the space or Enter).
      await page.keyboard.insertText(`@compass ${question}`);
      if (await suggestOpen()) await page.keyboard.press("Escape");
      await waitFor(async () => !(await suggestOpen()) && (await chatInputText()).startsWith("@compass "), 5000, "the question addressed to @compass");
      await page.keyboard.press("Enter");
      // The request row names the participant it went to: fail fast if it is not @compass.
      // Matched on its longest plain word, whitespace and Unicode forms aside (an accented
      // question's row did not match its first 20 characters in a CI run). Not seeing the row
      // is not a failure by itself: the answer counted in our log (below) proves the route.
      const word = question.split(/[^A-Za-z]+/).sort((a, b) => b.length - a.length)[0];
      const request = page.locator(".interactive-list .interactive-item-container.interactive-request").last();
      const rowText = async () => (await request.innerText().catch(() => "")).normalize("NFC").replace(/\s+/g, " ");
      const seen = await waitFor(async () => (await rowText()).includes(word), 15_000, "the sent request in the chat list").then(() => true, () => false);
      const sentTo = seen ? /@\w+/.exec(await rowText())?.[0] : undefined;
      if (sentTo && sentTo !== "@compass") throw new Error(`the chat sent the question to ${sentTo}, not @compass`);
      return waitForChatAnswer(count);
    };

    await check(page, "@compass answers in the chat view with state, confidence and evidence", async () => {
      const response = await askInChat("How is the area of a circle computed?", 1);
      // The chat view renders a finished response progressively: wait for its last section.
      let text = "";
      await waitFor(async () => /Evidence \(\d+\)/.test((text = await response.innerText())), 15_000, "the evidence list").catch(() => undefined);
      const listed = /Evidence \((\d+)\)/.exec(text);
      if (!/circle/i.test(text) || !listed) throw new Error(`response was: ${text.slice(0, 400)}`);
      // Every evidence item the answer lists is an anchor (how many there are is retrieval's
      // business, checked by the Python tests; here: that each one renders as a link).
      const evidence = Number(listed[1]);
      let anchors = 0;
      await waitFor(async () => (anchors = await response.locator("a.chat-inline-anchor-widget").count()) >= evidence, 10_000, "the evidence anchors").catch(() => undefined);
      if (evidence < 1 || anchors < evidence) throw new Error(`${anchors} anchors for ${evidence} evidence items`);
      const status = new RegExp(`${STATUS_LINE.source}[^\\n]*`).exec(text)[0];
      log(`@compass: "${status}", ${anchors} anchors; ${text.replace(/\s+/g, " ").slice(0, 160)}`);
    });

    await check(page, "a chat evidence anchor opens the cited lines", async () => {
      const anchor = latestResponse.locator("a.chat-inline-anchor-widget", { hasText: "shapes.py" }).first();
      const aria = (await anchor.getAttribute("aria-label")) ?? ""; // "shapes.py lines 6 to 13"
      const m = /lines (\d+) to (\d+)/.exec(aria);
      if (!m) throw new Error(`anchor label was "${aria}"`);
      await anchor.click();
      await activeTab(page, "shapes.py").waitFor({ timeout: 10_000 });
      await waitFor(async () => {
        const cur = await cursorStatus(page);
        return cur.line >= Number(m[1]) && cur.line <= Number(m[2]);
      }, 10_000, `cursor within shapes.py:${m[1]}-${m[2]}`);
      log(`chat anchor "${aria}" opened; cursor ${(await cursorStatus(page)).text}`);
    });

    await check(page, "@compass refuses with the closest match to open, and a follow-up keeps one conversation", async () => {
      const response = await askInChat("How is the volume of a sphere computed?", 2);
      let text = "";
      await waitFor(async () => /\bTry\b/.test((text = await response.innerText())), 15_000, "the refusal's actions").catch(() => undefined);
      if (!/FAIL · \d+/.test(text)) throw new Error(`expected a refusal, got: ${text.slice(0, 300)}`);
      // The actions: the closest match is an anchor to open (never a sentence asked as a question).
      const closest = await response.locator("a.chat-inline-anchor-widget", { hasText: "shapes.py" }).count();
      if (!/\bTry\b/.test(text) || closest < 1) throw new Error(`no closest match to open in: ${text.slice(0, 400)}`);
      await shot(page, "chat-refusal-actions");
      // A follow-up button when the answer offers a question to ask, else a typed follow-up.
      const followup = page.locator(".interactive-list .chat-followups .monaco-button, .interactive-session-followups .monaco-button").first();
      let label = "And how is the area of a circle computed?";
      if (await followup.isVisible().catch(() => false)) {
        label = (await followup.innerText()).trim();
        await followup.click();
        await waitForChatAnswer(3);
      } else {
        await askInChat(label, 3);
      }
      const ids = chatAnswers().map((x) => x[1]);
      if (ids.length !== 3 || new Set(ids).size !== 1) throw new Error(`conversation ids were ${JSON.stringify(ids)}`);
      log(`refusal offered ${closest} closest-match anchor(s); follow-up "${label.slice(0, 80)}" answered; 3 answers in conversation ${ids[0]}`);
    });

    await check(page, "@compass answers a Portuguese question with Portuguese labels and its evidence", async () => {
      const response = await askInChat("como é calculada a área de um círculo?", 4);
      // Its state line and section titles come from the Portuguese catalogue of the client.
      const PT_STATUS = /(OK|PARCIAL|AMBÍGUA|FALHA) · \d{1,3}[^\n]*cobertura/;
      let text = "";
      await waitFor(async () => PT_STATUS.test((text = await response.innerText())) && /Evidências \(\d+\)/.test(text), 15_000, "the Portuguese status line and evidence list").catch(() => undefined);
      if (!PT_STATUS.test(text) || !/Evidências \(\d+\)/.test(text)) throw new Error(`response was: ${text.slice(0, 400)}`);
      // The evidence (English code and docs) is listed as anchors to open.
      let anchors = 0;
      await waitFor(async () => (anchors = await response.locator("a.chat-inline-anchor-widget").count()) >= 1, 10_000, "an evidence anchor").catch(() => undefined);
      if (anchors < 1) throw new Error(`no evidence anchor in: ${text.slice(0, 400)}`);
      log(`@compass (pt): "${PT_STATUS.exec(text)[0]}", ${anchors} anchor(s)`);
    });
  } catch (err) {
    results.push({ name: "setup", ok: false, err });
    log(`FAIL setup: ${err?.stack ?? err}`);
  } finally {
    await browser?.close().catch(() => undefined);
    stopGroups();
    for (const f of ["code-server.log", "fake-anthropic.log"]) {
      const p = path.join(dir, f);
      if (fs.existsSync(p)) fs.copyFileSync(p, path.join(ARTIFACTS, f));
    }
    copyServerLogs(dir);
    if (!process.env.E2E_KEEP) fs.rmSync(dir, { recursive: true, force: true });
  }
  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed;
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

/** Keep the extension's output channel (server trace) next to the screenshots. */
function copyServerLogs(dir) {
  const logs = path.join(dir, "ud", "logs");
  if (!fs.existsSync(logs)) return;
  const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
  for (const f of walk(logs)) {
    if (/Code Compass\.log$/.test(f) || /exthost\.log$/.test(f)) fs.copyFileSync(f, path.join(ARTIFACTS, path.basename(f).replace(/\s+/g, "-")));
  }
}

process.on("SIGINT", () => {
  stopGroups();
  process.exit(130);
});
await main();
