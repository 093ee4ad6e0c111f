"""The VS Code client declares exactly the settings the server parses, with its defaults.

`client-vscode/package.json` (`contributes.configuration`) is what the user sees and what VS
Code sends; `code_compass_server.settings` is the one parser and `constants.py` holds the defaults.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from code_compass_server.settings import (
    KEYS,
    SECTION,
    EngineSettings,
    client_values,
    parse_settings,
)

PACKAGE = Path(__file__).resolve().parents[2] / "client-vscode" / "package.json"
# The client's own settings: how it starts the server, and LSP tracing in its output channel.
CLIENT_ONLY = {
    "trace.server", "server.pythonPath", "server.packageSpec", "teamIndex.url", "teamIndex.project",
}  # fmt: skip


def contributed() -> dict[str, dict[str, Any]]:
    props = json.loads(PACKAGE.read_text(encoding="utf-8"))["contributes"]["configuration"][
        "properties"
    ]
    return {name.removeprefix(f"{SECTION}."): spec for name, spec in props.items()}


def test_every_contributed_setting_is_parsed_by_the_server_or_known_to_be_the_clients() -> None:
    declared = set(contributed())
    parsed = {k.name for k in KEYS}
    assert declared - CLIENT_ONLY == parsed, "declared but not parsed / parsed but not declared"
    assert declared >= CLIENT_ONLY


def test_client_defaults_equal_the_servers() -> None:
    props = contributed()
    server = client_values(EngineSettings())
    for name, value in server.items():
        assert props[name]["default"] == value, name
    # ...and the client's defaults, parsed, are exactly the server's default settings.
    defaults = {name: props[name]["default"] for name in server}
    assert parse_settings(defaults) == (EngineSettings(), [])


def test_client_types_bounds_and_scopes_equal_the_servers() -> None:
    props = contributed()
    for key in KEYS:
        spec = props[key.name]
        assert spec["type"] == key.type, key.name
        if key.type == "array":
            assert spec["items"] == {"type": "string"}, key.name
        assert spec.get("minimum") == key.minimum, key.name
        assert spec.get("maximum") == key.maximum, key.name
        assert (spec.get("scope") == "resource") == key.resource, key.name
