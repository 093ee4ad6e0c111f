"""No dead code: vulture finds nothing in server/ and scripts/ beyond its whitelist.

Unused functions, constants and fields mislead readers into thinking some behaviour exists.
Names read only by a library, by name or through asdict() are listed, with their reader, in
scripts/vulture_whitelist.py.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_vulture_finds_no_dead_code() -> None:
    if importlib.util.find_spec("vulture") is None:
        pytest.skip("vulture not installed (requirements.lock pins it)")
    out = subprocess.run(
        [sys.executable, "-m", "vulture", "server", "scripts", "--min-confidence", "60"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.stdout == "" and out.returncode == 0, out.stdout + out.stderr
