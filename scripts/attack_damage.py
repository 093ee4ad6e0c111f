"""Attack: damage every file of a project's storage folder, four ways, and see it repaired.

For each file of an indexed project's folder (catalog, its WAL, Tantivy's meta and segment
files, the vector store's pointer, matrix and rows) and the shared embedding cache: truncate it
to half, overwrite 2 KB with random bytes, delete it, empty it. Each case starts from a copy of
the same healthy storage, runs `code-compass index` as a user would, then checks the stores
directly against a fresh index: same chunks in the catalog and in Tantivy, every chunk embedded
and its vector stored, a known symbol found by `search`. Prints a table promise x (tries, held,
broken, reported); `reported` counts cases whose `index` said `rebuilt` (or the status said
the embedding cache was recreated).

    python scripts/attack_damage.py --files 60            # with embeddings (needs the model)
    python scripts/attack_damage.py --files 200 --no-embed
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.reliability.attacks import (
    DAMAGE_MODES,
    Tally,
    fresh_state,
    index_cmd,
    run_damage_case,
    storage_files,
    write_workspace,
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=60, help="modules in the workspace (6 defs each)")
    ap.add_argument("--no-embed", action="store_true", help="lexical stores only")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    embed = not args.no_embed
    import subprocess

    with tempfile.TemporaryDirectory(prefix="cc-damage-") as tmp_name:
        tmp = Path(tmp_name)
        ws = write_workspace(tmp / "ws", args.files, 0)
        want = fresh_state(tmp, ws)
        base = tmp / "base"
        subprocess.run(index_cmd(base, ws, embed=embed), capture_output=True, check=True)
        files = storage_files(base, ws)
        tally = Tally()
        n = 0
        for rel in files:
            for mode in DAMAGE_MODES:
                n += 1
                out = run_damage_case(
                    base, tmp / f"case-{n}", ws, rel, mode, want, embed=embed, seed=args.seed + n
                )
                tally.add(out)
                mark = "held" if out.held else "BROKEN"
                print(
                    f"{mark:6} {'reported' if out.reported else '        '} {out.case} {out.detail}"
                )
        print()
        print(tally.table())
        return 1 if tally.broken() else 0


if __name__ == "__main__":
    sys.exit(main())
