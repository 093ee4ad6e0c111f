"""Each tool over stdio on a fixture workspace: tools/list, search_code, open_file, find_symbol."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP SDK (`mcp` in requirements.lock) is not installed")

from code_compass_server.constants import MCP_OPEN_FILE_MAX_LINES
from tests.conftest import write_tree
from tests.mcp_server.harness import (
    HIT_FIELDS,
    mcp_client,
    ok,
    refused,
    server_command,
    server_env,
    wait_indexed,
)

EXPECTED_PARAMETERS = {
    "search_code": ({"query"}, {"query", "topK", "pathPrefix", "language", "minScore", "mode",
                                "project"}),
    "ask_code": ({"question"}, {"question", "conversationId", "topK", "pathPrefix", "language",
                                "minScore", "project"}),
    "open_file": ({"path"}, {"path", "startLine", "endLine", "project"}),
    "find_symbol": ({"name"}, {"name", "project"}),
    "definition": ({"path", "line", "column"}, {"path", "line", "column", "project"}),
    "references": ({"path", "line", "column"}, {"path", "line", "column", "project"}),
}  # fmt: skip


async def test_lists_tools_with_schemas_and_guidance(sample_ws: Path, tmp_path: Path) -> None:
    async with mcp_client(sample_ws, storage=tmp_path / "st") as client:
        assert client.server_info is not None and client.server_info.name == "code-compass"
        assert client.instructions and "open_file" in client.instructions
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == set(EXPECTED_PARAMETERS)
    for name, (required, params) in EXPECTED_PARAMETERS.items():
        schema = tools[name].input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) == required
        assert set(schema["properties"]) == params
        assert all("description" in p for p in schema["properties"].values()), name
        assert tools[name].annotations is not None
        assert tools[name].annotations.read_only_hint is True
    assert tools["search_code"].input_schema["properties"]["mode"]["enum"] == [
        "hybrid", "lexical", "semantic",
    ]  # fmt: skip
    # Written for a model: when to use which tool, what a low score means, absence is an answer.
    search = tools["search_code"].description or ""
    assert "open_file" in search and "find_symbol" in search and "0.6" in search
    assert "real answer" in search
    assert "Not enough evidence" in (tools["ask_code"].description or "")
    assert "real answer" in (tools["find_symbol"].description or "")


async def test_search_code_hits_and_filters(sample_ws: Path, tmp_path: Path) -> None:
    async with mcp_client(sample_ws, storage=tmp_path / "st") as client:
        await wait_indexed(client, embedded=True)  # the ranking below assumes every vector
        data = await ok(client, "search_code", query="parse config")
        top = data["hits"][0]
        assert set(top) == HIT_FIELDS
        assert (top["path"], top["symbol"], top["startLine"]) == (
            "src/config_loader.py", "parse_config", 5,
        )  # fmt: skip
        assert top["project"] == "sample" and 0.0 <= top["score"] <= 1.0
        assert data["partialIndex"] is False and data["tookMs"] >= 0

        one = await ok(client, "search_code", query="parse config", topK=1)
        assert len(one["hits"]) == 1
        web = await ok(client, "search_code", query="fetch user profile", pathPrefix="src/web")
        assert web["hits"] and all(h["path"].startswith("src/web/") for h in web["hits"])
        ts = await ok(client, "search_code", query="profile", language="TypeScript")
        assert ts["hits"] and {h["language"] for h in ts["hits"]} == {"typescript"}
        lex = await ok(client, "search_code", query="fetchUserProfile", mode="lexical")
        assert lex["hits"][0]["path"] == "src/web/client.ts"
        strict = await ok(client, "search_code", query="parse config", minScore=0.9)
        assert all(h["score"] >= 0.9 for h in strict["hits"])

        weak = await ok(client, "search_code", query="zebra herd migration telemetry")
        assert all(h["score"] < 0.6 for h in weak["hits"]) and "weak guesses" in weak["note"]
        nothing = await ok(
            client, "search_code", query="zebra herd migration telemetry", minScore=0.6
        )
        assert nothing["hits"] == [] and "not found in this codebase" in nothing["note"]


async def test_open_file_reads_current_lines_with_a_cap(sample_ws: Path, tmp_path: Path) -> None:
    long_file = "\n".join(f"line {n}" for n in range(1, 1001)) + "\n"
    write_tree(sample_ws, {"data/long.txt": long_file, "data/empty.txt": ""})
    async with mcp_client(sample_ws, storage=tmp_path / "st") as client:
        result = await client.call_tool(
            "open_file", {"path": "src/config_loader.py", "startLine": 5, "endLine": 8}
        )
        assert not result.is_error
        data = result.structured_content
        assert isinstance(data, dict)
        source = (sample_ws / "src/config_loader.py").read_text().split("\n")
        assert data["text"] == "\n".join(source[4:8])
        assert (data["startLine"], data["endLine"], data["truncated"]) == (5, 8, False)
        assert data["totalLines"] == 16 and data["project"] == "sample"
        text = result.content[0].text  # type: ignore[union-attr]
        assert "5| def parse_config(path: str) -> dict:" in text  # numbered for citing

        # The file as it is now on disk, not as indexed.
        (sample_ws / "src/config_loader.py").write_text("def renamed():\n    pass\n")
        now = await ok(client, "open_file", path="src/config_loader.py")
        assert now["text"] == "def renamed():\n    pass" and now["totalLines"] == 2

        capped = await ok(client, "open_file", path="data/long.txt")
        assert capped["endLine"] == MCP_OPEN_FILE_MAX_LINES and capped["truncated"] is True
        assert capped["nextStartLine"] == MCP_OPEN_FILE_MAX_LINES + 1
        tail = await ok(client, "open_file", path="data/long.txt", startLine=990, endLine=5000)
        assert tail["text"].split("\n") == [f"line {n}" for n in range(990, 1001)]
        assert tail["truncated"] is False and "nextStartLine" not in tail
        empty = await ok(client, "open_file", path="./data//empty.txt")
        assert (empty["path"], empty["text"], empty["totalLines"]) == ("data/empty.txt", "", 1)

        past = await refused(client, "open_file", path="data/long.txt", startLine=1001)
        assert past == "startLine: is past the end of 'data/long.txt', which has 1000 lines"
        backwards = await refused(client, "open_file", path="data/long.txt", startLine=9, endLine=3)
        assert backwards == "endLine: must be at least startLine (9)"
        zero = await refused(client, "open_file", path="data/long.txt", startLine=0)
        assert zero == "startLine: must be a whole number of at least 1 (lines are 1-based)"
        missing = await refused(client, "open_file", path="src/nope.py")
        assert missing == "path: no file 'src/nope.py' in sample"
        folder = await refused(client, "open_file", path="src")
        assert folder == "path: 'src' is a folder; give the path of a file in it"


async def test_open_file_refuses_paths_out_of_the_workspace(
    sample_ws: Path, tmp_path: Path
) -> None:
    outside = write_tree(tmp_path / "outside", {"secret.txt": "api_key = 'hunter2'\n"})
    (sample_ws / "link_dir").symlink_to(outside, target_is_directory=True)
    (sample_ws / "link_file.txt").symlink_to(outside / "secret.txt")
    (sample_ws / "inner_link.py").symlink_to(sample_ws / "src/config_loader.py")
    big = sample_ws / "data/big.log"
    big.parent.mkdir()
    big.write_text("x" * 2047 + "\n")
    async with mcp_client(
        sample_ws, storage=tmp_path / "st", extra_args=["--max-file-kb", "1"]
    ) as client:
        dotdot = "path: must not contain '..'; give a path inside the workspace"
        for path in ("../outside/secret.txt", "src/../../outside/secret.txt", "..\\outside"):
            assert await refused(client, "open_file", path=path) == dotdot
        absolute = (
            "path: must be relative to the workspace folder, as search results give it "
            "('src/main.py'), not absolute"
        )
        for path in (str(outside / "secret.txt"), str(sample_ws / "src/config_loader.py"),
                     "/etc/passwd", "C:\\Windows\\win.ini"):  # fmt: skip
            assert await refused(client, "open_file", path=path) == absolute
        link_out = (
            "path: '{}' leads outside the workspace (a symbolic link); open_file reads only "
            "files inside the workspace folders"
        )
        for path in ("link_dir/secret.txt", "link_file.txt"):
            assert await refused(client, "open_file", path=path) == link_out.format(path)
        assert await refused(client, "open_file", path="src/\0x.py") == (
            "path: must not contain a NUL character"
        )
        too_big = await refused(client, "open_file", path="data/big.log")
        assert too_big == "path: 'data/big.log' is 2 KB; open_file reads files up to 1 KB " + (
            "(the index's size limit)"
        )
        # A link that stays inside the workspace is just another name for the file.
        inner = await ok(client, "open_file", path="inner_link.py", endLine=5)
        assert inner["text"].endswith("def parse_config(path: str) -> dict:")


async def test_find_symbol_definitions_and_absence(sample_ws: Path, tmp_path: Path) -> None:
    async with mcp_client(sample_ws, storage=tmp_path / "st") as client:
        await wait_indexed(client)
        data = await ok(client, "find_symbol", name="parse_config")
        (d,) = data["definitions"]
        assert (d["path"], d["startLine"], d["endLine"], d["kind"]) == (
            "src/config_loader.py", 5, 8, "function",
        )  # fmt: skip
        assert d["signature"].startswith("def parse_config(path: str)") and d["project"] == "sample"
        assert data["total"] == 1 and data["partialIndex"] is False

        method = await ok(client, "find_symbol", name="HTTPServerSettings.retry_backoff")
        assert [m["qualifiedName"] for m in method["definitions"]] == [
            "HTTPServerSettings.retry_backoff"
        ]
        assert (await ok(client, "find_symbol", name="Other.retry_backoff"))["definitions"] == []
        absent = await ok(client, "find_symbol", name="does_not_exist_anywhere")
        assert absent["definitions"] == [] and absent["total"] == 0
        assert "not defined in this codebase" in absent["note"]


async def test_two_workspaces_are_isolated_by_project(tmp_path: Path) -> None:
    def shop_fn(n: int) -> str:
        return f"def charge_token_{n}(order):\n    return sign_payment_token(order, {n})\n\n\n"

    def weather_fn(n: int) -> str:
        return f"def forecast_token_{n}(city):\n    return read_weather_token(city, {n})\n\n\n"

    shop = write_tree(tmp_path / "shop", {
        "src/util.py": "SHOP_ONLY = True\n",
        **{f"src/pay_{n}.py": shop_fn(n) for n in range(6)},
    })  # fmt: skip
    weather = write_tree(tmp_path / "weather", {
        "src/util.py": "WEATHER_ONLY = True\n",
        **{f"src/sky_{n}.py": weather_fn(n) for n in range(6)},
    })  # fmt: skip
    async with mcp_client(shop, weather, storage=tmp_path / "st") as client:
        await wait_indexed(client)
        only_shop = await ok(client, "search_code", query="token", project="shop", topK=20)
        assert only_shop["hits"] and {h["project"] for h in only_shop["hits"]} == {"shop"}
        assert len(only_shop["hits"]) > 3

        both = await ok(client, "search_code", query="token", topK=20)
        per_project = {p: sum(h["project"] == p for h in both["hits"]) for p in ("shop", "weather")}
        assert per_project == {"shop": 3, "weather": 3}  # at most 3 per project over all

        shop_util = await ok(client, "open_file", path="src/util.py", project="shop")
        weather_util = await ok(client, "open_file", path="src/util.py", project="weather")
        assert shop_util["text"] == "SHOP_ONLY = True"
        assert weather_util["text"] == "WEATHER_ONLY = True"
        assert await refused(client, "open_file", path="src/sky_1.py", project="shop") == (
            "path: no file 'src/sky_1.py' in project 'shop'"
        )
        unknown = await refused(client, "search_code", query="token", project="nope")
        assert unknown == "project: 'nope' is not an open workspace folder; known: shop, weather"

        assert (await ok(client, "find_symbol", name="forecast_token_1", project="shop"))[
            "definitions"
        ] == []
        found = await ok(client, "find_symbol", name="forecast_token_1")
        assert [d["project"] for d in found["definitions"]] == ["weather"]

        answer = await ok(client, "ask_code", question="what does forecast_token_2 return?",
                          project="weather")  # fmt: skip
        assert answer["evidences"] and {e["project"] for e in answer["evidences"]} == {"weather"}
        elsewhere = await ok(client, "ask_code", question="what does forecast_token_2 return?",
                             project="shop")  # fmt: skip
        assert {e["project"] for e in elsewhere["evidences"]} <= {"shop"}
        assert "forecast_token_2" not in str(elsewhere["evidences"])


async def test_workspace_from_the_clients_roots(sample_ws: Path, tmp_path: Path) -> None:
    """Without --workspace the server asks the client for its roots (2025 handshake)."""
    async with mcp_client(storage=tmp_path / "st", roots=[sample_ws], cwd=tmp_path) as client:
        await wait_indexed(client)
        data = await ok(client, "find_symbol", name="parse_config")
        assert [d["project"] for d in data["definitions"]] == ["sample"]


async def test_workspace_from_roots_in_the_2026_protocol(sample_ws: Path, tmp_path: Path) -> None:
    """The 2026 protocol has no server requests: roots come back inside the repeated call."""
    async with mcp_client(
        storage=tmp_path / "st", roots=[sample_ws], cwd=tmp_path, mode="auto"
    ) as client:
        assert client.protocol_version >= "2026"
        await wait_indexed(client)
        data = await ok(client, "find_symbol", name="parse_config")
        assert [d["project"] for d in data["definitions"]] == ["sample"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_workspace_defaults_to_the_current_directory(
    mode: str, sample_ws: Path, tmp_path: Path
) -> None:
    async with mcp_client(storage=tmp_path / "st", cwd=sample_ws, mode=mode) as client:
        await wait_indexed(client)
        hit = (await ok(client, "search_code", query="fetchUserProfile"))["hits"][0]
        assert (hit["project"], hit["path"]) == ("sample", "src/web/client.ts")


def test_bad_workspace_is_refused_before_serving(tmp_path: Path) -> None:
    out = subprocess.run(
        server_command([tmp_path / "missing"], tmp_path / "st"),
        capture_output=True, text=True, timeout=60, env=server_env(), stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.returncode == 2
    assert "is not a folder" in out.stderr and out.stdout == ""


async def test_open_file_never_serves_secret_files(sample_ws: Path, tmp_path: Path) -> None:
    write_tree(sample_ws, {".env": "API_TOKEN=hunter2\n", "config/id_rsa": "PRIVATE\n"})
    (sample_ws / "env_link.txt").symlink_to(sample_ws / ".env")  # a plain name for a secret
    async with mcp_client(sample_ws, storage=tmp_path / "st") as client:
        for path in (".env", "config/id_rsa", "env_link.txt"):
            message = await refused(client, "open_file", path=path)
            assert message.startswith(f"path: '{path}' is a secret file"), message
