"""The team index through the other front doors and under contention: an agent's MCP session
(the official SDK client) searching a shared project, two developers pushing the same project at
once, and hybrid search (embeddings in pgvector) ranking as the local index does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lsp.conftest import poll_until
from tests.team.conftest import cli, copy_tree, push

psycopg = pytest.importorskip("psycopg", reason="psycopg (requirements.lock) is not installed")
pytest.importorskip("mcp", reason="the MCP SDK (`mcp` in requirements.lock) is not installed")
if shutil.which("useradd") is None and os.geteuid() == 0:
    pytest.skip("running as root needs useradd for the server's own user", allow_module_level=True)


async def test_an_agent_searches_the_team_index_over_mcp(url: str, tmp_path: Path) -> None:
    from tests.mcp_server.harness import mcp_client, ok, server_env

    ws = copy_tree(tmp_path / "ws")
    push(ws, url, tmp_path / "h", "agents")
    env = server_env(CODE_COMPASS_HOME=str(tmp_path / "agent-home"))
    env.pop("CODE_COMPASS_DATABASE_URL", None)
    async with mcp_client(
        ws,
        storage=tmp_path / "agent-storage",
        env=env,
        extra_args=("--database", url, "--project", "agents"),
    ) as client:
        found = await ok(client, "search_code", query="writer lock held by another process")
        hits = found["hits"]
        assert hits and hits[0]["project"] == "agents"
        assert hits[0]["path"] == "writer_lock.py"
        opened = await ok(client, "open_file", path=hits[0]["path"], project="agents")
        assert "class WriterLock" in json.dumps(opened)
    # Nothing was indexed locally: the agent's storage holds no index of its own.
    assert not list((tmp_path / "agent-storage").rglob("catalog.sqlite"))


def _counts(url: str, project: str) -> tuple[int, ...]:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM cc_tree t WHERE t.project_id = p.id), "
            "(SELECT count(*) FROM cc_chunks c WHERE c.project_id = p.id), "
            "(SELECT count(*) FROM cc_blobs b WHERE b.project_id = p.id), "
            "(SELECT count(*) FROM cc_postings o WHERE o.project_id = p.id), "
            "(SELECT coalesce(sum(df), 0) FROM cc_term_df d WHERE d.project_id = p.id), "
            "(SELECT n_docs FROM cc_field_stats f WHERE f.project_id = p.id AND f.field = 0) "
            "FROM cc_projects p WHERE p.name = %s",
            (project,),
        ).fetchone()
    assert row is not None
    return tuple(int(x or 0) for x in row)


def test_two_developers_pushing_at_once_neither_duplicate_nor_lose(
    url: str, tmp_path: Path
) -> None:
    a = copy_tree(tmp_path / "a" / "repo")
    b = copy_tree(tmp_path / "b" / "repo")
    (b / "only_in_b.py").write_text("def only_in_b():\n    return 'b'\n")
    procs = []
    for ws, home in ((a, "ha"), (b, "hb")):
        env = {**os.environ, "CODE_COMPASS_HOME": str(tmp_path / home)}
        env.pop("CODE_COMPASS_DATABASE_URL", None)
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "code_compass_server",
                    "index",
                    "--workspace",
                    str(ws),
                    "--database",
                    url,
                    "--project",
                    "race",
                    "--no-embed",
                    "--json",
                ],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    for p in procs:
        _out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-2000:]
    # Whoever pushed last decides the tree; either way it is whole and counted once.
    raced = _counts(url, "race")
    push(b, url, tmp_path / "hb", "race")  # b's tree, pushed alone
    push(b, url, tmp_path / "hb2", "race_alone")
    assert _counts(url, "race")[:2] == _counts(url, "race_alone")[:2]
    assert _counts(url, "race")[3:] == _counts(url, "race_alone")[3:]
    assert raced[0] in (_counts(url, "race_alone")[0], _counts(url, "race_alone")[0] - 1)


def test_hybrid_search_ranks_as_the_local_index(url: str, tmp_path: Path) -> None:
    from code_compass_server.embed.paths import ModelNotBuiltError, default_model_dir

    try:
        default_model_dir()
    except ModelNotBuiltError as exc:
        pytest.skip(f"the embedding model is not built: {exc}")
    src = Path(__file__).resolve().parents[2] / "server" / "code_compass_server" / "search"
    ws = tmp_path / "search"
    shutil.copytree(src, ws, ignore=shutil.ignore_patterns("__pycache__", "*.json"))
    out = cli("index", "--workspace", str(ws), "--database", url, "--project", "hybrid",
              "--json", home=tmp_path / "h")  # fmt: skip
    summary = json.loads(out.stdout)["projects"][0]
    assert summary["embedded"] == summary["chunks"] > 50 and summary["embeddedPieces"] > 0
    cli("index", "--workspace", str(ws), home=tmp_path / "local")  # embeds locally too
    # A developer who indexed locally pushes a new project without embedding again.
    again = json.loads(
        cli("index", "--workspace", str(ws), "--database", url, "--project", "hybrid_copy",
            "--json", home=tmp_path / "local").stdout
    )["projects"][0]  # fmt: skip
    assert again["embeddedPieces"] == 0 and again["cachedPieces"] == summary["embeddedPieces"]
    for q in ("how is the first hit's relevance calibrated", "names guessed from the question"):
        team = json.loads(
            cli(
                "search",
                q,
                "--workspace",
                str(ws),
                "--database",
                url,
                "--project",
                "hybrid",
                "--json",
                "--top-k",
                "5",
                home=tmp_path / "h",
            ).stdout
        )["hits"]
        local = json.loads(
            cli(
                "search",
                q,
                "--workspace",
                str(ws),
                "--json",
                "--top-k",
                "5",
                home=tmp_path / "local",
            ).stdout
        )["hits"]
        assert team and local
        assert team[0]["path"] == local[0]["path"] and team[0]["startLine"] == local[0]["startLine"]
        assert abs(team[0]["score"] - local[0]["score"]) < 0.03, q
        top_team = {(h["path"], h["startLine"]) for h in team}
        top_local = {(h["path"], h["startLine"]) for h in local}
        assert len(top_team & top_local) >= 4, q


async def test_the_language_server_serves_the_team_index(
    url: str, tmp_path: Path, start: object
) -> None:
    ws = copy_tree(tmp_path / "editor-ws")
    push(ws, url, tmp_path / "h", "editor")
    session = await start(  # type: ignore[operator]
        [ws], env={"CODE_COMPASS_DATABASE_URL": url, "CODE_COMPASS_PROJECT": "editor"}
    )
    status = await session.request("codeCompass/status", {})
    project = status["projects"][0]
    assert project["backend"] == "team" and project["name"] == "editor"
    assert project["chunks"] > 100
    found = await session.request(
        "codeCompass/search", {"query": "writer lock held by another process", "mode": "lexical"}
    )
    assert found["hits"] and found["hits"][0]["path"] == "writer_lock.py"
    # An unsaved editor buffer overlays the shared tree for this editor alone.
    text = (ws / "tokens.py").read_text() + "\n\ndef quokka_zebra_marker():\n    return 1\n"
    session.open(ws / "tokens.py", text)

    async def sees_buffer() -> bool:
        got = await session.request(
            "codeCompass/search", {"query": "quokka zebra marker", "mode": "lexical"}
        )
        return bool(got["hits"]) and got["hits"][0]["symbol"] == "quokka_zebra_marker"

    await poll_until(sees_buffer, 30)
    assert "quokka" not in (ws / "tokens.py").read_text()  # nothing was saved
