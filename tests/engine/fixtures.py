"""A small realistic workspace used by engine and CLI tests."""

from __future__ import annotations

SAMPLE_FILES: dict[str, str | bytes] = {
    "src/config_loader.py": (
        '"""Configuration loading."""\n'
        "import json\n\n\n"
        "def parse_config(path: str) -> dict:\n"
        '    """Parse the JSON configuration file at path."""\n'
        "    with open(path) as fh:\n"
        "        return json.load(fh)\n\n\n"
        "class HTTPServerSettings:\n"
        '    """Settings for the embedded HTTP server."""\n\n'
        "    def retry_backoff(self, attempt: int) -> float:\n"
        '        """Exponential back-off between retries."""\n'
        "        return min(30.0, 0.5 * 2**attempt)\n"
    ),
    "src/web/client.ts": (
        "/** Fetches a user profile from the API. */\n"
        "export async function fetchUserProfile(id: string): Promise<Profile> {\n"
        "  const res = await fetch(`/api/users/${id}`);\n"
        "  return res.json();\n"
        "}\n"
    ),
    "docs/guide.md": (
        "# Guide\n\nIntro text.\n\n## Configuration\n\n"
        "Call `parse_config` with the path of your settings file.\n"
    ),
    "tests/test_config.py": (
        "from src.config_loader import parse_config\n\n\n"
        "def test_parse_config(tmp_path):\n"
        "    assert parse_config\n"
    ),
}
