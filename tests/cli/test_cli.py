"""The CLI contract: JSON field names, batch search, exit code 2 on bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_tree
from tests.engine.fixtures import SAMPLE_FILES

HIT_FIELDS = {
    "path",
    "startLine",
    "endLine",
    "score",
    "symbol",
    "kind",
    "language",
    "project",
    "snippet",
    "relevance",
}


def run(*args: str, storage: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "code_compass_server", *args, "--storage", str(storage)],
        capture_output=True, text=True, cwd=cwd, timeout=120,
    )  # fmt: skip


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("cli") / "ws", SAMPLE_FILES)


def test_index_search_status_json(ws: Path, tmp_path: Path) -> None:
    st = tmp_path / "st"
    out = run("index", "--workspace", str(ws), "--no-embed", "--json", storage=st)
    assert out.returncode == 0, out.stderr
    (summary,) = json.loads(out.stdout)["projects"]
    assert summary["files"] == 4 and summary["chunks"] > 0

    out = run(
        "search", "parse config", "--workspace", str(ws), "--mode", "lexical", "--json", storage=st
    )
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)["hits"]
    assert hits and set(hits[0]) == HIT_FIELDS
    assert hits[0]["path"] == "src/config_loader.py" and hits[0]["symbol"] == "parse_config"
    assert 0.0 <= hits[0]["score"] <= 1.0 and hits[0]["startLine"] >= 1

    out = run("status", "--workspace", str(ws), "--json", storage=st)
    (proj,) = json.loads(out.stdout)["projects"]
    assert proj["files"] == 4


def test_nothing_relevant_prints_an_empty_list_with_a_reason(ws: Path, tmp_path: Path) -> None:
    st = tmp_path / "st"
    query = "kubernetes helm chart ingress annotations"
    args = ("search", query, "--workspace", str(ws), "--mode", "lexical")
    out = run(*args, "--json", storage=st)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["hits"] == [] and result["partialIndex"] is False
    assert result["reason"] == f"nothing in this workspace matches \u201c{query}\u201d"
    text = run(*args, storage=st)
    assert text.stdout.strip() == result["reason"]


def test_search_indexes_first_when_needed(ws: Path, tmp_path: Path) -> None:
    out = run("search", "fetchUserProfile", "--workspace", str(ws), "--mode", "lexical", "--json",
              storage=tmp_path / "fresh")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["hits"][0]["path"] == "src/web/client.ts"


def test_batch_queries(ws: Path, tmp_path: Path) -> None:
    qfile = tmp_path / "q.jsonl"
    qfile.write_text('{"id": "a", "query": "parse_config"}\n{"id": 7, "query": "retry backoff"}\n')
    out = run("search", "--queries", str(qfile), "--workspace", str(ws), "--mode", "lexical",
              "--json", storage=tmp_path / "st")  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [x["id"] for x in lines] == ["a", 7]
    assert lines[1]["hits"][0]["symbol"] == "HTTPServerSettings.retry_backoff"


def test_top_k_is_clamped(ws: Path, tmp_path: Path) -> None:
    st = tmp_path / "st"
    out = run("search", "config", "--workspace", str(ws), "--top-k", "0", "--mode", "lexical",
              "--json", storage=st)  # fmt: skip
    assert out.returncode == 0 and len(json.loads(out.stdout)["hits"]) == 1
    assert "--top-k 0 is outside 1..20; using 1" in out.stderr  # said, not silent
    out = run("search", "config", "--workspace", str(ws), "--top-k", "500", "--mode", "lexical",
              "--json", storage=st)  # fmt: skip
    assert out.returncode == 0 and len(json.loads(out.stdout)["hits"]) <= 20
    assert "--top-k 500 is outside 1..20; using 20" in out.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", ""], "query"),
        (["search", "x" * 501], "500"),
        (["search", "q", "--path-prefix", "../etc"], ".."),
        (["search", "q", "--path-prefix", "a\0b"], "NUL"),
        (["search", "q", "--path-prefix", "a" * 201], "200"),
        (["search", "q", "--language", "l" * 33], "32"),
        (["search", "q", "--min-score", "nan"], "finite"),
        (["search", "q", "--min-score", "inf"], "finite"),
        (["search", "q", "--min-score", "2"], "between 0 and 1"),
        (["search", "q", "--min-score", "-0.1"], "is -0.1; it must be between 0 and 1\n"),
        (["ask", "q", "--min-score", "1.5"], "is 1.5; it must be between 0 and 1 (default 0.6)"),
        (["search", "q", "--top-k", "abc"], "top-k"),
    ],
)
def test_bad_input_exits_2_and_touches_nothing(
    ws: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    st = tmp_path / "st"
    if "\0" in "".join(args):  # argv can't carry NUL: check the validator directly
        from code_compass_server.errors import InputError
        from code_compass_server.validation import validate_path_prefix

        with pytest.raises(InputError, match=message):
            validate_path_prefix("a\0b")
        return
    out = run(*args, "--workspace", str(ws), storage=st)
    assert out.returncode == 2, out.stdout + out.stderr
    assert message in out.stderr
    assert not st.exists()  # validation happens before anything is opened


def test_missing_workspace_exits_2(tmp_path: Path) -> None:
    out = run("index", "--workspace", str(tmp_path / "nope"), storage=tmp_path / "st")
    assert out.returncode == 2 and "not a folder" in out.stderr


def _serve(env_level: str | None) -> subprocess.CompletedProcess[str]:
    """The language server as editors start it, with no client: it ends at end of input."""
    env = {k: v for k, v in os.environ.items() if k != "CODE_COMPASS_LOG"}
    if env_level is not None:
        env["CODE_COMPASS_LOG"] = env_level
    return subprocess.run(
        [sys.executable, "-m", "code_compass_server", "serve"],
        input="", capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip


def test_serve_applies_the_log_level_variable() -> None:
    quiet, chatty = _serve(None), _serve("info")
    assert quiet.returncode == chatty.returncode == 0, quiet.stderr + chatty.stderr
    assert " INFO " not in quiet.stderr
    assert " INFO pygls" in chatty.stderr  # the server's start-up, at the level asked for
    bad = _serve("loud")
    assert bad.returncode == 2 and "CODE_COMPASS_LOG: unknown level 'LOUD'" in bad.stderr


def test_an_unknown_language_exits_2_listing_the_indexed_ones(ws: Path, tmp_path: Path) -> None:
    out = run("search", "config", "--workspace", str(ws), "--language", "klingon",
              storage=tmp_path / "st")  # fmt: skip
    assert out.returncode == 2, out.stdout + out.stderr
    assert "'klingon' is not a language of this workspace; indexed: " in out.stderr
    assert "python" in out.stderr and "typescript" in out.stderr
    ok = run("search", "config", "--workspace", str(ws), "--language", "Python", "--json",
             storage=tmp_path / "st")  # fmt: skip
    assert ok.returncode == 0 and {h["language"] for h in json.loads(ok.stdout)["hits"]} == {
        "python"
    }


def test_an_absolute_path_prefix_is_made_relative_or_refused(ws: Path, tmp_path: Path) -> None:
    inside = run("search", "fetch user profile", "--workspace", str(ws), "--json",
                 "--path-prefix", str(ws / "src" / "web"), storage=tmp_path / "st")  # fmt: skip
    assert inside.returncode == 0, inside.stderr
    hits = json.loads(inside.stdout)["hits"]
    assert hits and all(h["path"].startswith("src/web/") for h in hits)
    outside = run("search", "q", "--workspace", str(ws), "--path-prefix", str(tmp_path),
                  storage=tmp_path / "st2")  # fmt: skip
    assert outside.returncode == 2
    assert f"--path-prefix: {tmp_path} is outside the workspace" in outside.stderr
