"""Benchmark: editor buffers during a full index run, through the engine's one scheduler.

Generates a workspace (default 3,000 Python files, 90,000 chunks), starts a full run, and every
`--every` seconds sets an editor buffer with a new identifier; prints, per update, how long until
the catalog had it (wait for a checkpoint + the update's own Tantivy commit), then p50/p90/max
and the full run's time with and without the updates. Target: p50 <= 300 ms (a test checks it
on a smaller tree).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from code_compass_server.engine import Engine
from code_compass_server.index.job_records import BufferUpdate, IndexEvent
from code_compass_server.settings import EngineSettings


def workspace(root: Path, n_files: int) -> Path:
    for i in range(n_files):
        path = root / f"pkg{i // 100}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "\n".join(
                f"def func_{i}_{j}(value):\n    '''Step {j}.'''\n    return value + {j}\n"
                for j in range(30)
            )
        )
    return root


def marker(i: int) -> str:
    return "zq" + "".join(chr(ord("a") + int(d)) for d in f"{i:04d}") + "marker"


def full_run(ws: Path, store: Path, every: float | None) -> tuple[float, list[float]]:
    engine = Engine.open(store, EngineSettings(embeddings=False))
    name = engine.add_project(ws)
    began: dict[int, float] = {}

    def listen(event: IndexEvent) -> None:
        if isinstance(event.job, BufferUpdate) and event.stage == "begin":
            began[event.job.id] = time.perf_counter()

    engine.scheduler.subscribe(listen)
    latencies: list[float] = []
    t0 = time.perf_counter()
    job = engine.scheduler.submit_full(name)
    i = 0
    while every is not None and not job.done.wait(every):
        word = marker(i)
        path = ws / f"pkg{i % 30}" / f"mod{i}.py"
        ts = time.perf_counter()
        engine.set_buffer(path, f"def {word}():\n    pass\n")
        while not engine.symbols_named(word):
            time.sleep(0.002)
        latencies.append(time.perf_counter() - ts)
        print(f"  t={ts - t0:5.2f}s  update applied in {latencies[-1] * 1000:4.0f} ms")
        i += 1
    job.done.wait()
    seconds = time.perf_counter() - t0
    engine.close()
    return seconds, latencies


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--every", type=float, default=0.3, help="seconds between buffer updates")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = workspace(Path(tmp) / "ws", args.files)
        alone, _ = full_run(ws, Path(tmp) / "store-a", None)
        print(f"full run alone: {alone:.1f}s")
        busy, lat = full_run(ws, Path(tmp) / "store-b", args.every)
        lat_ms = sorted(s * 1000 for s in lat)
        if not lat_ms:
            print("the full run ended before the first update")
            return
        p90 = lat_ms[min(len(lat_ms) - 1, round(0.9 * (len(lat_ms) - 1)))]
        print(
            f"full run with {len(lat_ms)} buffer updates: {busy:.1f}s; update latency "
            f"p50 {statistics.median(lat_ms):.0f} ms, p90 {p90:.0f} ms, max {lat_ms[-1]:.0f} ms"
        )


if __name__ == "__main__":
    main()
