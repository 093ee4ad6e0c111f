#!/usr/bin/env bash
# The user's path, as CI: build the wheel and the sdist (the wheel from the sdist, so a file
# missing from the sdist fails here), install the wheel into a fresh venv in a temp folder,
# and from outside the checkout (no PYTHONPATH, `python -P`) run index, search, ask (offline),
# mcp (official SDK client: tools/list + search_code) and serve (initialize + hover), checking
# real answers. Everything it starts is ended; the temp folder is removed.
#
# The embedding model is built on first use into $XDG_CACHE_HOME/code-compass/models; that cache
# is kept between runs in ~/.cache/code-compass/smoke-xdg (CODE_COMPASS_SMOKE_FRESH_MODEL=1 starts
# it empty, i.e. download + build as a new user's first run does).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV_BIN=${VENV_BIN:-$ROOT/.venv/bin}
UV=$VENV_BIN/uv
PY=${PYTHON:-python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cc-smoke.XXXXXX")
MODEL_XDG=${CODE_COMPASS_SMOKE_MODEL_CACHE:-$HOME/.cache/code-compass/smoke-xdg}
cleanup() { rm -rf "$TMP"; }
trap cleanup EXIT
log() { printf '\033[1m[smoke]\033[0m %s\n' "$*"; }
t0=$(date +%s)

[ -x "$UV" ] || { echo "smoke: $UV missing (scripts/setup installs the dev tools)" >&2; exit 1; }
[ "${CODE_COMPASS_SMOKE_FRESH_MODEL:-0}" = "1" ] && rm -rf "$MODEL_XDG"
mkdir -p "$MODEL_XDG"

log "building sdist + wheel (the wheel from the sdist)"
"$UV" build -q --project "$ROOT" --out-dir "$TMP/dist" 2>&1 | grep -v '^$' || true
WHEEL=$(ls "$TMP"/dist/code_compass_server-*.whl)
ls "$TMP"/dist/code_compass_server-*.tar.gz >/dev/null

log "installing $(basename "$WHEEL") into a fresh venv"
"$UV" venv -q --python "$PY" "$TMP/venv"
"$UV" pip install -q --python "$TMP/venv/bin/python" "$WHEEL"

# A project outside the checkout, and an environment that cannot see the checkout.
mkdir -p "$TMP/work/proj" "$TMP/home"
cat > "$TMP/work/proj/auth.py" <<'PY'
def reset_password(user, new_password):
    """Reset a user's password and invalidate their sessions."""
    user.password_hash = hash_password(new_password)
    user.sessions.clear()
    return user


def hash_password(raw):
    import hashlib
    return hashlib.sha256(raw.encode()).hexdigest()
PY
cp "$ROOT/scripts/smoke_install_clients.py" "$TMP/clients.py"
cd "$TMP/work"
run() {
  env -u PYTHONPATH -u VIRTUAL_ENV -u ANTHROPIC_API_KEY -u CODE_COMPASS_MODEL_DIR \
    CODE_COMPASS_HOME="$TMP/home" XDG_CACHE_HOME="$MODEL_XDG" \
    timeout -k 5 150 "$@"
}
cc="$TMP/venv/bin/code-compass"
check() {  # check NAME JSON-FILE PYTHON-EXPR (over `d`, the parsed output)
  "$TMP/venv/bin/python" -P -c "
import json, sys
d = json.load(open(sys.argv[1]))
ok = $3
print('smoke: $1', 'ok' if ok else 'FAIL', '' if ok else json.dumps(d)[:600])
sys.exit(0 if ok else 1)" "$2"
}

log "index (builds the embedding model on first use)"
run "$cc" index --workspace proj --json > "$TMP/index.json"
# Every chunk embedded: the model was found (or built on first use) and loaded.
check index "$TMP/index.json" \
  "(p := d['projects'][0])['project'] == 'proj' and p['chunks'] == 2 and p['embedded'] == p['chunks']"

log "search"
run "$cc" search "reset a user's password" --workspace proj --json > "$TMP/search.json"
check search "$TMP/search.json" \
  "d['hits'][0]['path'] == 'auth.py' and d['hits'][0]['symbol'] == 'reset_password' and d['hits'][0]['score'] >= 0.6"

log "ask (offline: no API key)"
run "$cc" ask "how is a user's password reset?" --workspace proj --json > "$TMP/ask.json"
check ask "$TMP/ask.json" \
  "any(c['path'] == 'auth.py' and c['startLine'] == 1 for c in d['citations']) and d['meta']['llmCalled'] is False"

log "mcp (tools/list + search_code, official SDK client)"
run "$TMP/venv/bin/python" -P "$TMP/clients.py" mcp proj

log "serve (initialize + hover)"
run "$TMP/venv/bin/python" -P "$TMP/clients.py" serve proj "$TMP/lsp-storage"

log "all front doors answered from the installed wheel in $(( $(date +%s) - t0 )) s"
