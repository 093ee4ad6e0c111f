/* global console, URL */
// Puts the server wheel this extension is built with into server/ (shipped inside the VSIX) with
// server/wheel.json {file, sha256, version}; the extension installs exactly that wheel into its
// private venv after checking the sha256. The wheel: $CODE_COMPASS_SERVER_WHEEL, else built from
// the repository with uv (../.venv/bin/uv, as scripts/setup installs it), via the sdist: an
// in-tree wheel build would leave build/ in the checkout.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const here = path.dirname(new URL(import.meta.url).pathname);
const repo = path.resolve(here, "..");
const outDir = path.join(here, "server");
const version = JSON.parse(fs.readFileSync(path.join(here, "package.json"), "utf8")).version;

let wheel = process.env.CODE_COMPASS_SERVER_WHEEL;
let tmp;
if (!wheel) {
  const uv = path.join(repo, ".venv", "bin", "uv");
  if (!fs.existsSync(uv)) {
    console.error(`bundle-server: ${uv} missing; run scripts/setup, or set CODE_COMPASS_SERVER_WHEEL`);
    process.exit(1);
  }
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cc-wheel-"));
  execFileSync(uv, ["build", "-q", "--out-dir", tmp, repo], { stdio: "inherit" });
  wheel = path.join(tmp, fs.readdirSync(tmp).find((f) => f.endsWith(".whl")));
}
const file = path.basename(wheel);
const wheelVersion = /^code_compass_server-([^-]+)-/.exec(file)?.[1];
if (wheelVersion !== version) {
  console.error(`bundle-server: ${file} is version ${wheelVersion}, the extension is ${version}: they ship together, bump both`);
  process.exit(1);
}
fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir);
fs.copyFileSync(wheel, path.join(outDir, file));
const sha256 = createHash("sha256").update(fs.readFileSync(wheel)).digest("hex");
fs.writeFileSync(path.join(outDir, "wheel.json"), JSON.stringify({ file, sha256, version }, null, 2) + "\n");
if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
console.log(`bundle-server: ${file} (sha256 ${sha256.slice(0, 16)}…)`);
