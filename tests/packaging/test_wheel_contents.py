"""The built wheel carries every file the package reads at run time.

Two ways of finding those files: (1) statically, every non-Python file in the source package
(it is there to be read) and every `__file__`-relative read, which must not exist outside the
allow-list below (data is found with importlib.resources, so it works from any install);
(2) at run time, an audit hook records every file opened under the package folder while the CLI
indexes, searches, asks and plans a depth in a fresh process. Each must be in the wheel."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "server" / "code_compass_server"
# `__file__` uses that are not data reads, and why.
FILE_USES_ALLOWED = {
    "embed/paths.py": "detects a source checkout (its models/build)",
    "index/parse_pool.py": "puts the package's folder on a parse worker's PYTHONPATH",
}
SOURCE_PARTS = ("pyproject.toml", "README.md", "MANIFEST.in", "requirements.lock", "server")


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """Build the wheel with `pip wheel --no-deps` from a copy of the sources (an in-tree build
    would write build/ and egg-info into the checkout)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    for part in SOURCE_PARTS:
        if (ROOT / part).is_dir():
            shutil.copytree(
                ROOT / part, src / part, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
            )
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(ROOT / part, src / part)
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    done = subprocess.run(
        [*cmd, "-w", str(tmp / "dist"), str(src)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = (tmp / "dist").glob("code_compass_server-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


def _in_wheel(path: Path) -> str:
    return "code_compass_server/" + path.relative_to(PACKAGE).as_posix()


def test_every_data_file_of_the_source_package_is_in_the_wheel(wheel_names: set[str]) -> None:
    data = [
        p
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    ]
    assert data, "no data files found: the scan is broken"
    missing = sorted(_in_wheel(p) for p in data if _in_wheel(p) not in wheel_names)
    assert not missing, f"not in the wheel (add them to [tool.setuptools.package-data]): {missing}"
    modules = [p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts]
    assert all(_in_wheel(p) in wheel_names for p in modules)


def test_no_data_is_read_relative_to_file() -> None:
    """`Path(__file__)` reads break in zip imports and tools that relocate packages."""
    users = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text("utf-8"))
        if any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(tree)):
            users.add(path.relative_to(PACKAGE).as_posix())
    unexpected = users - set(FILE_USES_ALLOWED)
    assert not unexpected, f"read package data with importlib.resources instead: {unexpected}"


AUDIT = textwrap.dedent(
    """
    import json, os, sys
    package, out = sys.argv[1], sys.argv[2]
    seen = set()
    def hook(event, args):
        if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            p = os.path.realpath(os.fsdecode(args[0]))
            if p.startswith(package + os.sep) and "__pycache__" not in p and not p.endswith(".py"):
                seen.add(os.path.relpath(p, package))
    sys.addaudithook(hook)
    from code_compass_server.cli import main
    ws = sys.argv[3]
    codes = [
        main(["index", "--workspace", ws, "--no-embed"]),
        main(["search", "reset a user's password", "--workspace", ws, "--json"]),
        main(["ask", "how is a user's password reset?", "--workspace", ws, "--json"]),
        main(["depth", "how is a user's password reset?", "--json"]),
    ]
    json.dump({"codes": codes, "opened": sorted(seen)}, open(out, "w"))
    print("opened:", sorted(seen), file=sys.stderr)
    """
)


def test_every_file_opened_at_run_time_is_in_the_wheel(
    wheel_names: set[str], tmp_path: Path
) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    (ws / "auth.py").write_text(
        'def reset_password(user, new_password):\n    """Reset a user\'s password."""\n'
        "    user.password_hash = hash(new_password)\n    return user\n"
    )
    (ws / "README.md").write_text("# Accounts\n\nPasswords are reset by `reset_password`.\n")
    out = tmp_path / "opened.json"
    env = {"CODE_COMPASS_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", AUDIT, str(PACKAGE.resolve()), str(out), str(ws)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["codes"] == [0, 0, 0, 0], done.stderr[-2000:]
    opened = result["opened"]
    assert opened, "the audit hook saw no package data opened: the check is broken"
    missing = [p for p in opened if f"code_compass_server/{p}" not in wheel_names]
    assert not missing, f"opened at run time but not in the wheel: {missing}"
