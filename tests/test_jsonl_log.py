"""Rotating JSON-lines logs: rotation at the size limit, the number of old files kept, whole
lines under concurrent appends, and the answers log going through it."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from code_compass_server.answer.service import AskService
from code_compass_server.jsonl_log import RotatingJsonl


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_rotates_at_the_size_limit_and_keeps_the_newest_files(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "x.jsonl"
    log = RotatingJsonl(path, max_bytes=200, backups=2)
    for n in range(30):  # ~40 bytes a line: about five lines a file
        log.append({"n": n, "pad": "é" * 10})
    files = [path, path.with_name("x.jsonl.1"), path.with_name("x.jsonl.2")]
    assert all(f.stat().st_size <= 200 for f in files)
    assert not path.with_name("x.jsonl.3").exists()  # keep count honoured
    numbers = [r["n"] for f in reversed(files) for r in _lines(f)]
    assert numbers == list(range(30 - len(numbers), 30))  # the newest, in order, none lost
    assert len(numbers) < 30  # the oldest file was dropped


def test_a_line_larger_than_the_limit_gets_a_file_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    log = RotatingJsonl(path, max_bytes=50, backups=1)
    log.append({"a": 1})
    log.append({"big": "y" * 100})
    assert _lines(path) == [{"big": "y" * 100}]
    assert _lines(path.with_name("x.jsonl.1")) == [{"a": 1}]


def test_concurrent_appends_never_split_a_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    threads, per_thread = 8, 150
    # Two writers of the same path, as two services in one process would be.
    logs = [RotatingJsonl(path, max_bytes=20_000, backups=50) for _ in range(2)]

    def writer(t: int) -> None:
        for i in range(per_thread):
            logs[t % 2].append({"t": t, "i": i, "text": f"{t}-{i}-" + "z" * (50 + 37 * (i % 9))})

    workers = [threading.Thread(target=writer, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    files = sorted(tmp_path.glob("x.jsonl*"))
    assert len(files) > 2  # it did rotate while threads were appending
    records = [r for f in files for r in _lines(f)]  # json.loads fails on a split line
    assert len(records) == threads * per_thread
    assert {(r["t"], r["i"]) for r in records} == {
        (t, i) for t in range(threads) for i in range(per_thread)
    }
    assert all(f.stat().st_size <= 20_000 for f in files)


def test_the_answers_log_rotates(tmp_path: Path) -> None:
    service = AskService(tmp_path / "logs")
    blob = "q" * 3_000_000  # two of these pass the 5 MB limit
    service.answer_log.write({"blob": blob})
    service.answer_log.write({"blob": blob, "second": True})
    answers = tmp_path / "logs" / "answers.jsonl"
    assert [r.get("second") for r in _lines(answers)] == [True]
    assert len(_lines(answers.with_name("answers.jsonl.1"))) == 1
