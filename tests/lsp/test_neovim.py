"""End to end in neovim: hover, code lens and the lens command from a client that is not VS Code.

Debian's neovim 0.7 runs headless with a Lua script (`vim.lsp.start_client` +
`buf_attach_client`) against the real server on a small flask-like workspace: a module-level
proxy, a local binding, an aliased import, a stdlib and a builtin name. The script writes what
neovim received as JSON; the assertions are here. neovim 0.7 renders Markdown hovers without
links and does not know the lens command, so the test checks that links read `path:line` and
that neovim's own code-lens runner reaches the server through `workspace/executeCommand`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.conftest import NO_EMBED, server_env, write

REPO = Path(__file__).resolve().parents[2]
NVIM = shutil.which("nvim")
NVIM_TIMEOUT_S = 120

pytestmark = pytest.mark.skipif(NVIM is None, reason="neovim not installed")

GLOBALS = '''"""Context globals: proxies to the current app and request."""
from .local import LocalProxy

current_app = LocalProxy("app")
request = LocalProxy("request")
'''

LOCAL = '''class LocalProxy:
    """Forwards to a context-local object."""

    def __init__(self, name):
        self.name = name
'''

BLUEPRINTS = '''class Blueprint:
    """Records operations to run on an application."""

    def register(self, app, options):
        """Called by the application to register this blueprint."""
        return options
'''

APP = '''import json

from .globals import request
from .sansio.blueprints import Blueprint as SansioBlueprint


class Flask:
    """The application object."""

    def make_response(self, rv):
        return rv

    def full_dispatch_request(self, rv):
        response = self.make_response(rv)
        return response

    def to_json(self):
        return json.dumps({"path": request, "size": len(self.name)})

    def register_blueprint(self, blueprint: SansioBlueprint, options):
        blueprint.register(self, options)
'''

VIEWS = """from .app import Flask


def index(app: Flask):
    return app.make_response("index")


def about(app: Flask):
    return app.make_response("about")
"""

DOC = """# API

`Flask.make_response` turns a view's return value into a response.
Read the incoming data from `request`.
"""

LUA = r"""
local args = vim.fn.json_decode(table.concat(vim.fn.readfile(ARGS_PATH), "\n"))
local out = { notifications = {}, hovers = {} }

local function finish()
  vim.fn.writefile({ vim.fn.json_encode(out) }, args.out)
  vim.cmd("qa!")
end

-- Warnings neovim shows the user ("Language server does not support command ...").
vim.notify = function(msg, level)
  table.insert(out.notifications, { msg = tostring(msg), level = level or 0 })
end

local function main()
  local client_id = vim.lsp.start_client({
    name = "code-compass",
    cmd = args.cmd,
    cmd_cwd = args.root,
    cmd_env = args.env,
    root_dir = args.root,
    init_options = args.init_options,
    handlers = { ["codeCompass/indexState"] = function() end },
  })
  assert(client_id, "start_client failed")
  vim.cmd("edit " .. vim.fn.fnameescape(args.file))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(bufnr, client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  assert(vim.wait(60000, function() return client.initialized end, 20), "not initialized")
  local commands = client.server_capabilities.executeCommandProvider
  out.execute_commands = commands and commands.commands or {}

  local function request(method, params, timeout)
    local res, err = client.request_sync(method, params, timeout or 20000, bufnr)
    assert(res, method .. ": " .. tostring(err))
    assert(not res.err, method .. ": " .. vim.inspect(res.err))
    return res.result
  end

  local ready = vim.wait(90000, function()
    local st = request("codeCompass/status", {})
    if st.indexing then return false end
    for _, p in ipairs(st.projects) do
      if p.state ~= "ready" then return false end
    end
    return #st.projects > 0
  end, 100)
  assert(ready, "index not ready")

  local uri = vim.uri_from_bufnr(bufnr)
  for _, h in ipairs(args.hovers) do
    -- jedi may run over the hover budget while it warms up: the name lookup answers,
    -- marked "by name"; a later hover is resolved.
    local result
    vim.wait(30000, function()
      result = request("textDocument/hover", {
        textDocument = { uri = uri }, position = { line = h.line, character = h.character },
      })
      return result == vim.NIL or result == nil
        or not string.find(result.contents.value, "by name", 1, true)
    end, 200)
    local entry = { name = h.name, result = result }
    if result ~= nil and result ~= vim.NIL then
      entry.shown = vim.lsp.util.convert_input_to_markdown_lines(result.contents)
    end
    table.insert(out.hovers, entry)
  end

  local lenses = request("textDocument/codeLens", { textDocument = { uri = uri } })
  out.lenses = {}
  for _, lens in ipairs(lenses) do
    local resolved = request("codeLens/resolve", lens)
    local cmd = resolved.command
    local locations = request("workspace/executeCommand", {
      command = cmd.command, arguments = cmd.arguments,
    })
    table.insert(out.lenses, {
      name = resolved.data.name, title = cmd.title, command = cmd.command,
      line = resolved.range.start.line, locations = locations,
    })
  end

  -- neovim's own lens runner, as `:lua vim.lsp.codelens.run()` on the lens's line.
  local original = vim.lsp.handlers["workspace/executeCommand"]
  vim.lsp.handlers["workspace/executeCommand"] = function(err, result, ctx, config)
    out.native_run = { err = err, result = result }
    return original(err, result, ctx, config)
  end
  vim.lsp.codelens.refresh()
  assert(vim.wait(20000, function()
    local got = vim.lsp.codelens.get(bufnr)
    if #got == 0 then return false end
    for _, l in ipairs(got) do
      if not l.command then return false end
    end
    return true
  end, 50), "codelens.refresh did not resolve")
  vim.api.nvim_win_set_cursor(0, { args.run_lens_line + 1, 0 })
  vim.lsp.codelens.run()
  vim.wait(20000, function() return out.native_run ~= nil end, 50)

  vim.lsp.stop_client(client_id)
  vim.wait(10000, function() return client.is_stopped() end, 50)
end

local ok, err = pcall(main)
if not ok then out.error = tostring(err) end
finish()
"""


@pytest.fixture
def minflask(tmp_path: Path) -> Path:
    return write(
        tmp_path / "minflask-repo",
        {
            "minflask/__init__.py": "from .app import Flask\n",
            "minflask/globals.py": GLOBALS,
            "minflask/local.py": LOCAL,
            "minflask/sansio/__init__.py": "",
            "minflask/sansio/blueprints.py": BLUEPRINTS,
            "minflask/app.py": APP,
            "minflask/views.py": VIEWS,
            "docs/api.md": DOC,
        },
    )


def position(text: str, line_has: str, word: str, nth: int = 0) -> dict[str, int]:
    """0-based (line, character) of `word` on the first line containing `line_has`."""
    lines = text.split("\n")
    n = next(i for i, x in enumerate(lines) if line_has in x)
    starts = [m.start() for m in re.finditer(rf"\b{re.escape(word)}\b", lines[n])]
    return {"line": n, "character": starts[nth] + 1}


def line_of(text: str, line_has: str) -> int:
    """1-based line of the first line containing `line_has`."""
    return next(i for i, x in enumerate(text.split("\n"), start=1) if line_has in x)


def run_nvim(tmp_path: Path, args: dict[str, Any]) -> dict[str, Any]:
    args_path = tmp_path / "nvim-args.json"
    args_path.write_text(json.dumps(args))
    script = tmp_path / "e2e.lua"
    script.write_text(f"local ARGS_PATH = {json.dumps(str(args_path))}\n{LUA}")
    assert NVIM is not None
    proc = subprocess.Popen(
        [NVIM, "--headless", "--clean", "-u", "NONE", "-c", f"luafile {script}"],
        cwd=tmp_path,
        env={**server_env(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "state")},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: nvim and the server die together
    )
    try:
        output, _ = proc.communicate(timeout=NVIM_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        log = output.decode(errors="replace")
        raise AssertionError(f"nvim ran over {NVIM_TIMEOUT_S}s:\n{log}") from None
    finally:
        with contextlib.suppress(ProcessLookupError):  # a server left behind by a failed script
            os.killpg(proc.pid, signal.SIGKILL)
    out_path = Path(args["out"])
    assert out_path.exists(), f"nvim wrote no result:\n{output.decode(errors='replace')}"
    result: dict[str, Any] = json.loads(out_path.read_text())
    assert "error" not in result, result["error"]
    return result


def counts(title: str) -> tuple[int, int, int]:
    """(doc references, usages, by name) from a lens title."""
    m = re.match(r"(\d+) doc references? · (\d+) usages?(?: · (\d+) by name)?", title)
    assert m is not None, title
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def test_hover_and_code_lens_in_neovim(tmp_path: Path, minflask: Path) -> None:
    app = minflask / "minflask" / "app.py"
    hovers = [
        {"name": "global", **position(APP, '"path": request', "request")},
        {"name": "local", **position(APP, "return response", "response")},
        {"name": "alias", **position(APP, "blueprint: SansioBlueprint", "SansioBlueprint")},
        {"name": "method", **position(APP, "blueprint.register(", "register")},
        {"name": "stdlib", **position(APP, "json.dumps", "dumps")},
        {"name": "builtin", **position(APP, "len(self.name)", "len")},
    ]
    # The server runs this checkout's code, whatever the venv has installed.
    inherited = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    paths = [str(REPO / "server"), *filter(None, inherited)]
    env = {"PYTHONPATH": os.pathsep.join(paths)}
    out = run_nvim(
        tmp_path,
        {
            "out": str(tmp_path / "nvim-out.json"),
            "root": str(minflask),
            "file": str(app),
            "cmd": [sys.executable, "-P", "-m", "code_compass_server", "serve"],
            "env": env,
            "init_options": {"storageUri": (tmp_path / "storage").as_uri(), "settings": NO_EMBED},
            "hovers": hovers,
            "run_lens_line": line_of(APP, "def make_response") - 1,
        },
    )

    by_name = {h["name"]: h for h in out["hovers"]}
    expected = {
        "global": f"minflask/globals.py:{line_of(GLOBALS, 'request = ')}",
        "local": f"minflask/app.py:{line_of(APP, 'response = ')}",
        "alias": f"minflask/sansio/blueprints.py:{line_of(BLUEPRINTS, 'class Blueprint')}",
        "method": f"minflask/sansio/blueprints.py:{line_of(BLUEPRINTS, 'def register')}",
    }
    for name, where in expected.items():
        result = by_name[name]["result"]
        assert isinstance(result, dict), f"{name}: no hover"
        value = result["contents"]["value"]
        first = next(x for x in value.split("\n") if x.startswith("Defined at "))
        # The link's text is the location itself, so it reads right where links are not
        # rendered (neovim shows the Markdown source); the URL waits in a footer.
        assert first.startswith(f"Defined at [`{where}`]["), (name, value)
        assert "](file:" not in value, (name, value)
        assert any(where in line for line in by_name[name]["shown"]), name
    assert "Used in the code" not in by_name["local"]["result"]["contents"]["value"]
    for name, full in (("stdlib", "json.dumps"), ("builtin", "len")):
        value = by_name[name]["result"]["contents"]["value"]
        assert "Defined at" not in value and "outside the workspace" in value, (name, value)
        assert full in value

    assert "codeCompass.showReferences" in out["execute_commands"]
    lenses = {lens["name"]: lens for lens in out["lenses"]}
    assert "make_response" in lenses, out["lenses"]
    for lens in out["lenses"]:
        assert lens["command"] == "codeCompass.showReferences"
        # the title's numbers are the locations the command returns (no lens here is capped)
        assert sum(counts(lens["title"])) == len(lens["locations"]), lens
    make_response = lenses["make_response"]
    # the doc line; self.make_response, app.make_response in index and about (app: Flask)
    assert counts(make_response["title"]) == (1, 3, 0)
    listed = {(loc["uri"].rsplit("/", 2)[-1], loc["range"]["start"]["line"] + 1)
              for loc in make_response["locations"]}  # fmt: skip
    assert ("api.md", line_of(DOC, "Flask.make_response")) in listed
    assert ("views.py", line_of(VIEWS, 'make_response("index")')) in listed

    # neovim's own runner sent the command to the server and got the locations back.
    assert not [n for n in out["notifications"] if "does not support" in n["msg"]]
    native = out.get("native_run")
    assert native is not None and native.get("err") is None, out
    assert len(native["result"]) == len(make_response["locations"])
