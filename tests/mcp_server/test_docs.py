"""docs/mcp.md shows each tool's input schema exactly as tools/list serves it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from code_compass_server.mcp.tools import TOOL_SPECS

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
BLOCK = re.compile(r"<!-- schema: (\w+) -->\n```json\n(.*?)\n```", re.S)


def test_documented_schemas_match_the_served_ones() -> None:
    documented = {name: json.loads(body) for name, body in BLOCK.findall(DOC.read_text())}
    assert documented == {spec.name: spec.input_schema for spec in TOOL_SPECS}
