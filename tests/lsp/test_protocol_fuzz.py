"""The protocol fuzz (scripts/attack_protocol.py), fast variant: 1k hostile messages against
the real server over stdio. Every request answered exactly once, no pop-up, no -32603, valid
hovers unharmed, the server still serving."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from tests.lsp.conftest import server_env

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "attack_protocol.py"


def attack_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("attack_protocol", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


async def test_1k_fuzzed_messages_every_request_answered_once(tmp_path: Path) -> None:
    attack = attack_module()
    ws = attack.make_workspace(tmp_path, files=10)
    report = await attack.run_fuzz(
        ws, tmp_path / "storage", 1000, seed=11, env=server_env(tmp_path / "home")
    )
    summary = "\n".join(report.lines())
    assert report.requests > 600, summary
    assert report.unanswered == 0, summary
    assert report.duplicates == 0, summary
    assert report.show_message == 0, summary
    assert report.internal_errors == 0, summary
    assert report.valid_hovers > 50 and report.valid_hover_errors == 0, summary
    assert not report.examples.get("final hover"), summary
    assert report.codes[-32601] > 0 and report.codes[-32602] > 0, summary
