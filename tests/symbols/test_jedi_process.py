"""What runs in jedi's process: answers survive parso pruning its cache in the middle of a call."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

# Run as jedi's process is: a process of its own (jedi starts a helper that ends with it).
SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import parso.cache
    from code_compass_server.symbols.resolve import _resolve_python
    # Every entry looks old and the pruning runs at every parse.
    parso.cache._CACHED_SIZE_TRIGGER = 0
    parso.cache._CACHED_FILE_MINIMUM_SURVIVAL = -5
    root = Path(sys.argv[1])
    res = _resolve_python(root, "b.py", (root / "b.py").read_text(), 3, 13)  # `m` in x.m()
    print([(t.path, t.line) for t in res.targets] if res else None)
    """
)


def test_a_parse_pruned_during_a_call_does_not_lose_the_answer(tmp_path: Path) -> None:
    """parso prunes its cache while it parses once it holds 600 files, dropping what looks
    unused for 10 minutes, and a parse restored from its disk cache keeps the age it was saved
    with: the module jedi parsed first (b.py) was gone when it read it back (KeyError)."""
    (tmp_path / "a.py").write_text("class A:\n    def m(self):\n        return 1\n")
    (tmp_path / "b.py").write_text("from a import A\n\ndef f(x: A):\n    return x.m()\n")
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[('a.py', 2)]"
