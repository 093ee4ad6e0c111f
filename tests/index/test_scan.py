"""Workspace scan: gitignore, default excludes, secrets, symlinks, sizes, decoding."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from code_compass_server.constants import DEFAULT_MAX_FILE_BYTES
from code_compass_server.index.chunk import SkipFile, parse_file
from code_compass_server.index.languages import language_for
from code_compass_server.index.scan import ScanSettings, classify_path, scan_workspace
from code_compass_server.index.secret_files import is_secret
from code_compass_server.index.textio import decode_text, split_lines

FIVE_MB = 5 * 1024 * 1024


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace with one example of every rule; `outside/` is not part of it."""
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    write(outside, "secret_notes.py", "TOKEN = 'outside the root'\n")
    write(outside, "lib/mod.py", "x = 1\n")

    write(root, "src/app.py", "def main():\n    return 1\n")
    write(root, "src/util.ts", "export const f = () => 1;\n")
    write(root, "README.md", "# Title\n\nHello.\n")
    write(root, "notes.txt", "para one\n\npara two\n")
    write(root, "Makefile", "all:\n\techo hi\n")
    write(root, "LICENSE", "MIT\n")
    # gitignore: root ignores *.sql and tmp/, a nested file re-includes keep.sql
    write(root, ".gitignore", "*.sql\ntmp/\n/generated_docs.md\n")
    write(root, "debug.sql", "select 1;\n")
    write(root, "tmp/scratch.py", "x = 1\n")
    write(root, "generated_docs.md", "# gen\n")
    write(root, "queries/.gitignore", "!keep.sql\n")
    write(root, "queries/keep.sql", "select 2;\n")
    write(root, "queries/sub/keep.sql", "select 3;\n")  # the negation reaches below too
    write(root, "queries/drop.sql", "select 4;\n")
    write(root, "pkg/.gitignore", "local_only.py\n")
    write(root, "pkg/local_only.py", "x = 1\n")
    write(root, "pkg/shared.py", "x = 2\n")
    write(root, "local_only.py", "x = 3\n")  # the nested rule must not reach the root
    write(root, ".git/info/exclude", "private.py\n")
    write(root, ".git/config", "[core]\n")
    write(root, "private.py", "x = 4\n")
    # secrets
    write(root, ".env", "API_TOKEN=sk-live-1234567890abcdef\n")
    write(root, "config/.env.production", "DB_PASSWORD=hunter2\n")
    write(root, "keys/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n")
    write(root, "certs/server.pem", "-----BEGIN CERTIFICATE-----\n")
    write(root, ".npmrc", "//registry.npmjs.org/:_authToken=abc\n")
    write(root, "home/.aws/credentials", "[default]\naws_secret_access_key=x\n")
    # default excludes
    write(root, "node_modules/left-pad/index.js", "module.exports = 1;\n")
    write(root, "dist/bundle.js", "var a=1;\n")
    write(root, "static/app.min.js", "var a=1;\n")
    write(root, "package-lock.json", "{}\n")
    write(root, "api/service_pb2.py", "x = 1\n")
    write(root, "myvenv/pyvenv.cfg", "home = /usr\n")
    write(root, "myvenv/lib/site.py", "x = 1\n")
    write(root, "src/__pycache__/app.cpython-311.pyc", b"\x00\x01")
    # binary, unsupported, encodings, sizes
    write(root, "img/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    write(root, "data/blob.dat", b"\x00\x01\x02")
    write(root, "src/legacy.py", "# caf\xe9\nname = 'Jos\xe9'\n".encode("latin-1"))
    write(root, "src/bom.py", b"\xef\xbb\xbfx = 1\ny = 2\n")
    write(root, "big/huge.txt", b"a" * FIVE_MB)
    # symlinks: one escaping the root (file and dir), one inside
    (root / "escape.py").symlink_to(outside / "secret_notes.py")
    (root / "escape_dir").symlink_to(outside / "lib", target_is_directory=True)
    (root / "src/alias.py").symlink_to(root / "src/app.py")
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "env_link").symlink_to(root / ".env")
    return root


EXPECTED_FILES = [
    ".gitignore",
    "LICENSE",
    "Makefile",
    "README.md",
    "queries/.gitignore",
    "queries/keep.sql",
    "queries/sub/keep.sql",
    "notes.txt",
    "pkg/.gitignore",
    "pkg/shared.py",
    "local_only.py",
    "src/alias.py",
    "src/app.py",
    "src/bom.py",
    "src/legacy.py",
    "src/util.ts",
]


def test_scan_indexes_exactly_the_expected_files(workspace: Path) -> None:
    result = scan_workspace(workspace)
    rels = [f.rel for f in result.files]
    assert rels == sorted(EXPECTED_FILES)


def test_scan_counts_every_skip_by_reason(workspace: Path) -> None:
    result = scan_workspace(workspace)
    assert result.skipped == {
        # debug.sql, tmp/, generated_docs.md, queries/drop.sql, pkg/local_only.py, private.py
        "gitignored": 6,
        # .env, .env.production, id_rsa, server.pem, .npmrc, .aws/credentials, env_link -> .env
        "secret": 7,
        # .git, node_modules, dist, app.min.js, package-lock.json, service_pb2.py,
        # myvenv (pyvenv.cfg), __pycache__
        "default_excluded": 8,
        "symlink_outside": 2,  # escape.py, escape_dir
        "symlink_dir": 1,  # loop -> root: not followed, no cycle
        "unsupported_type": 2,  # logo.png, blob.dat
        "too_large": 1,  # big/huge.txt
    }


def test_file_entries_carry_stat_and_language(workspace: Path) -> None:
    entries = {f.rel: f for f in scan_workspace(workspace).files}
    app = entries["src/app.py"]
    st = (workspace / "src/app.py").stat()
    assert (app.size, app.mtime_ns, app.language) == (st.st_size, st.st_mtime_ns, "python")
    assert app.abs == workspace.resolve() / "src/app.py"
    assert entries["src/util.ts"].language == "typescript"
    assert entries["README.md"].language == "markdown"
    assert entries["Makefile"].language == "make"
    assert entries["LICENSE"].language == "text"


def test_max_file_bytes_is_configurable(workspace: Path) -> None:
    assert DEFAULT_MAX_FILE_BYTES < FIVE_MB
    result = scan_workspace(workspace, ScanSettings(max_file_bytes=6 * 1024 * 1024))
    assert "big/huge.txt" in [f.rel for f in result.files]
    assert "too_large" not in result.skipped
    small = scan_workspace(workspace, ScanSettings(max_file_bytes=5))
    assert [f.rel for f in small.files] == ["LICENSE"]  # "MIT\n" is 4 bytes


def test_user_exclude_and_include(workspace: Path) -> None:
    excluded = scan_workspace(workspace, ScanSettings(exclude=("src/", "*.md")))
    rels = [f.rel for f in excluded.files]
    assert not any(r.startswith("src/") or r.endswith(".md") for r in rels)
    assert excluded.skipped["excluded"] == 2  # the src dir (once) and README.md

    included = scan_workspace(workspace, ScanSettings(include=("*.py",)))
    assert [f.rel for f in included.files] == [
        "local_only.py",
        "pkg/shared.py",
        "src/alias.py",
        "src/app.py",
        "src/bom.py",
        "src/legacy.py",
    ]
    assert included.skipped["secret"] == 7  # secrets stay secrets whatever the include


def test_classify_path_agrees_with_scan(workspace: Path) -> None:
    for rel in EXPECTED_FILES:
        assert classify_path(workspace, rel) is None, rel
    expected = {
        "debug.sql": "gitignored",
        "tmp/scratch.py": "gitignored",
        "queries/drop.sql": "gitignored",
        "pkg/local_only.py": "gitignored",
        "private.py": "gitignored",
        ".env": "secret",
        "config/.env.production": "secret",
        "keys/id_rsa": "secret",
        ".npmrc": "secret",
        "env_link": "secret",
        "node_modules/left-pad/index.js": "default_excluded",
        "static/app.min.js": "default_excluded",
        "myvenv/lib/site.py": "default_excluded",
        "escape.py": "symlink_outside",
        "escape_dir/mod.py": "symlink_outside",
        "loop/src/app.py": "symlink_dir",
        "img/logo.png": "unsupported_type",
        "big/huge.txt": "too_large",
        "src/gone.py": "missing",
        "../outside/secret_notes.py": "missing",
    }
    for rel, reason in expected.items():
        assert classify_path(workspace, rel) == reason, rel


def test_classify_path_sees_gitignore_changes(workspace: Path) -> None:
    assert classify_path(workspace, "pkg/shared.py") is None
    gitignore = workspace / "pkg/.gitignore"
    gitignore.write_text("local_only.py\nshared.py\n")
    os.utime(gitignore, ns=(1, 1))  # a new mtime even on coarse clocks
    assert classify_path(workspace, "pkg/shared.py") == "gitignored"


def test_scan_is_fast_on_many_files(tmp_path: Path) -> None:
    for d in range(40):
        for f in range(50):
            write(tmp_path, f"pkg{d}/mod{f}.py", "x = 1\n")
    write(tmp_path, ".gitignore", "*.tmp\n")
    import time

    start = time.perf_counter()
    result = scan_workspace(tmp_path)
    elapsed = time.perf_counter() - start
    assert len(result.files) == 2001
    assert elapsed < 2.0, elapsed  # ~0.1 s here; generous for a busy CI machine


def test_secret_patterns() -> None:
    for rel in [
        ".env",
        "a/.env.local",
        ".env.example",
        "x/id_ed25519.pub",
        "k/site.key",
        ".pypirc",
        "a/.netrc",
        "terraform.tfstate",
        "s/service-account-prod.json",
        "a/.docker/config.json",
        "x/.azure/",
    ]:
        assert is_secret(rel), rel
    for rel in ["environment.py", "src/keys.py", "docs/credentials.md", "env.example.md"]:
        assert not is_secret(rel), rel


def test_language_for() -> None:
    assert language_for("a/b.py") == "python"
    assert language_for("x.tsx") == "tsx"
    assert language_for("Dockerfile") == "dockerfile"
    assert language_for("docs/README") == "text"
    assert language_for("guide.rst") == "rst"
    assert language_for("paper.pdf") == "pdf"
    assert language_for("photo.jpg") is None
    assert language_for("locale/django.po") is None


# --- decoding ---------------------------------------------------------------------


def test_decode_latin1_and_bom_and_utf16() -> None:
    assert decode_text("café\n".encode("latin-1")) == "café\n"
    assert decode_text(b"\xef\xbb\xbfx = 1\n") == "x = 1\n"
    assert decode_text("olá\nmundo\n".encode("utf-16")) == "olá\nmundo\n"
    assert decode_text("smart \u201cquotes\u201d".encode("cp1252")) == "smart \u201cquotes\u201d"


def test_decode_rejects_binary() -> None:
    assert decode_text(b"abc\x00def") is None
    assert decode_text(bytes(range(1, 9)) * 100) is None  # control characters, no NUL
    assert decode_text(b"\x1b[31mred\x1b[0m\n") == "\x1b[31mred\x1b[0m\n"  # ANSI is text


def test_decode_keeps_line_numbers() -> None:
    text = decode_text(b"a\r\nb\rc\nd\x0ce\n")
    assert text is not None
    assert split_lines(text) == ["a", "b", "c", "d\x0ce"]  # form feed is not a line break
    assert split_lines("x\n\n") == ["x", ""]


def test_parse_file_reports_binary_and_decodes_fixture_files(workspace: Path) -> None:
    with pytest.raises(SkipFile) as err:
        parse_file("img/logo.png", (workspace / "img/logo.png").read_bytes(), "text")
    assert err.value.reason == "binary"
    legacy = parse_file("src/legacy.py", (workspace / "src/legacy.py").read_bytes(), "python")
    assert "José" in legacy.chunks[0].text
    bom = parse_file("src/bom.py", (workspace / "src/bom.py").read_bytes(), "python")
    assert bom.chunks[0].text == "x = 1\ny = 2"
    assert (bom.chunks[0].start_line, bom.chunks[0].end_line) == (1, 2)
