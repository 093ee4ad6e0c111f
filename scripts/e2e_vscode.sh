#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code (code-server from npm),
# driven by Debian's Chromium through playwright-core. Idempotent; needs root for apt
# on a fresh machine, and only the package registries. Prints "N passed, N failed".
# Recipe and pitfalls: shared/notes/vscode-e2e.md (ripgrep pre-seed, npm_config_yes, kill -- -PGID).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/.cache/e2e"
CODE_SERVER_VERSION="4.100.3"       # last release on Node 20
PLAYWRIGHT_CORE_VERSION="1.65.1"
RIPGREP_PKG_VERSIONS="1.15.11 1.15.14"
export npm_config_yes=true          # node-pty's postinstall runs `npx node-gyp`
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

log() { printf '[e2e] %s\n' "$*" >&2; }

# 1. System packages (only the missing ones).
missing=()
[ -x /usr/lib/chromium/chromium ] || missing+=(chromium)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
[ -f /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)
if [ ${#missing[@]} -gt 0 ]; then
  log "apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# 2. code-server + playwright-core in a git-ignored cache (stamp = versions).
STAMP="$CACHE/.installed-$CODE_SERVER_VERSION-$PLAYWRIGHT_CORE_VERSION"
if [ ! -f "$STAMP" ] || [ ! -x "$CACHE/node_modules/.bin/code-server" ]; then
  log "installing code-server@$CODE_SERVER_VERSION and playwright-core@$PLAYWRIGHT_CORE_VERSION into $CACHE (~1 min)"
  mkdir -p "$CACHE"
  # @vscode/ripgrep downloads rg from GitHub: pre-seed its cache with Debian's rg.
  tmp_root="${TMPDIR:-/tmp}"
  seed_dir="$(mktemp -d)"
  cp "$(command -v rg)" "$seed_dir/rg"
  for v in $RIPGREP_PKG_VERSIONS; do
    mkdir -p "$tmp_root/vscode-ripgrep-cache-$v"
    tar -C "$seed_dir" -czf "$tmp_root/vscode-ripgrep-cache-$v/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" rg
  done
  rm -rf "$seed_dir"
  [ -f "$CACHE/package.json" ] || printf '{"name":"code-compass-e2e-cache","private":true}\n' >"$CACHE/package.json"
  (cd "$CACHE" && npm install --unsafe-perm --no-save --no-package-lock --loglevel=error \
    "code-server@$CODE_SERVER_VERSION" "playwright-core@$PLAYWRIGHT_CORE_VERSION" >"$CACHE/npm-install.log" 2>&1) || {
    tail -40 "$CACHE/npm-install.log" >&2
    echo "0 passed, 1 failed"
    exit 1
  }
  touch "$STAMP"
fi

# 3. Build the VSIX (npm ci only when the lock changed).
CLIENT="$ROOT/client-vscode"
if [ ! -d "$CLIENT/node_modules" ] || [ "$CLIENT/package-lock.json" -nt "$CLIENT/node_modules/.package-lock.json" ]; then
  log "npm ci in client-vscode"
  (cd "$CLIENT" && npm ci --loglevel=error >/dev/null)
fi
log "packaging the extension"
(cd "$CLIENT" && npm run --silent package >"$CACHE/vsce.log" 2>&1) || { tail -30 "$CACHE/vsce.log" >&2; echo "0 passed, 1 failed"; exit 1; }

# 4. Drive it.
if [ "${E2E_INSTALL_ONLY:-0}" = "1" ]; then log "install only: done"; exit 0; fi
exec node "$ROOT/scripts/e2e/run.mjs" "$@"
