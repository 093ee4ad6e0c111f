"""Attack: kill -9 `index` at every phase, and a server during a watcher storm.

`index` phases: scanning, parsing, the lexical commit, embedding; the kill moments are drawn
inside each phase's window as measured on a reference run of the same size. Before every kill
all modules change (new content, so embedding has real work: nothing is in the cache). After
each kill `code-compass index` runs again and the stores are read directly: the promise holds
when the catalog and Tantivy hold exactly a fresh index's chunks and, with embeddings, every
chunk is flagged embedded and has its vector. The server case runs an engine with its file
watcher (what `serve` runs) while modules are rewritten, created and deleted, and kills it.
Prints a table promise x (tries, held, broken).

    python scripts/attack_kill.py --files 300 --kills 10          # needs the model for embed
    python scripts/attack_kill.py --files 300 --kills 10 --no-embed
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.reliability.attacks import (
    KILL_PHASES,
    Tally,
    delays,
    fresh_state,
    phase_windows,
    run_kill_case,
    run_server_storm_case,
    write_workspace,
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=300, help="modules in the workspace (6 defs each)")
    ap.add_argument("--kills", type=int, default=10, help="kills per phase")
    ap.add_argument("--storm-s", type=float, default=4.0, help="longest storm before a kill")
    ap.add_argument("--no-embed", action="store_true")
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    embed = not args.no_embed
    rng = random.Random(args.seed)
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="cc-kill-") as tmp_name:
        tmp = Path(tmp_name)
        ws = write_workspace(tmp / "ws", args.files, 0)
        windows = phase_windows(tmp, ws, embed=embed)
        print(
            "phase windows (s after start):",
            {k: (round(a, 2), round(b, 2)) for k, (a, b) in windows.items()},
        )
        storage = tmp / "store"
        salt = 1
        for phase in KILL_PHASES:
            if phase not in windows:
                continue
            for delay in delays(windows[phase], args.kills, rng):
                salt += 1
                write_workspace(ws, args.files, salt)  # every run has all of it to do again
                want = fresh_state(tmp, ws)
                out = run_kill_case(storage, ws, phase, delay, want, embed=embed)
                tally.add(out)
                print(
                    f"{'held' if out.held else 'BROKEN':6} {out.promise}: {out.case} {out.detail}"
                )
        server_store = tmp / "server-store"
        for _ in range(args.kills):
            out = run_server_storm_case(
                tmp, server_store, ws, args.files, rng.uniform(0.5, args.storm_s), rng, embed=embed
            )
            tally.add(out)
            print(f"{'held' if out.held else 'BROKEN':6} {out.promise}: {out.case} {out.detail}")
    print()
    print(tally.table())
    return 1 if tally.broken() else 0


if __name__ == "__main__":
    sys.exit(main())
