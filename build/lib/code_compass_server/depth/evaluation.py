"""Accuracy of the classifier on the labelled set (eval/depth/dataset.jsonl)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from code_compass_server.depth.classifier import classify
from code_compass_server.depth.depth_records import DEPTHS


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    lang: str
    history: list[dict[str, str]]
    question: str
    label: str
    note: str
    split: str


@dataclass(slots=True)
class Report:
    name: str
    total: int = 0
    correct: int = 0
    per_level: Counter[str] = field(default_factory=Counter)
    per_level_ok: Counter[str] = field(default_factory=Counter)
    per_lang: Counter[str] = field(default_factory=Counter)
    per_lang_ok: Counter[str] = field(default_factory=Counter)
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)
    errors: list[tuple[Item, str, list[str]]] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    def level_accuracy(self, level: str) -> float:
        n = self.per_level[level]
        return self.per_level_ok[level] / n if n else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "n": self.total,
            "accuracy": round(self.accuracy, 4),
            "perLevel": {d: round(self.level_accuracy(d), 4) for d in DEPTHS},
            "perLang": {
                k: round(self.per_lang_ok[k] / n, 4) for k, n in sorted(self.per_lang.items())
            },
            "confusion": {f"{g}->{p}": n for (g, p), n in sorted(self.confusion.items())},
        }


def load_dataset(path: Path) -> list[Item]:
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            items.append(
                Item(
                    d["id"],
                    d["lang"],
                    d["history"],
                    d["question"],
                    d["label"],
                    d.get("note", ""),
                    d.get("split", "test"),
                )
            )
    return items


def evaluate(items: Iterable[Item], name: str) -> Report:
    rep = Report(name)
    for item in items:
        decision = classify(item.question, item.history)
        ok = decision.depth == item.label
        rep.total += 1
        rep.correct += ok
        rep.per_level[item.label] += 1
        rep.per_level_ok[item.label] += ok
        rep.per_lang[item.lang] += 1
        rep.per_lang_ok[item.lang] += ok
        rep.confusion[(item.label, decision.depth)] += 1
        if not ok:
            rep.errors.append((item, decision.depth, decision.signals))
    return rep


def format_report(rep: Report, *, show_errors: bool = False) -> str:
    lines = [f"== {rep.name}: {rep.correct}/{rep.total} = {rep.accuracy:.1%}"]
    lines.append("level   n   accuracy")
    for d in DEPTHS:
        lines.append(f"{d:<6}{rep.per_level[d]:>4}   {rep.level_accuracy(d):6.1%}")
    langs = ", ".join(
        f"{k}: {rep.per_lang_ok[k]}/{n} = {rep.per_lang_ok[k] / n:.1%}"
        for k, n in sorted(rep.per_lang.items())
    )
    lines.append(f"per language: {langs}")
    lines.append("confusion (rows = label, columns = predicted)")
    lines.append("      " + "".join(f"{d:>5}" for d in DEPTHS))
    for g in DEPTHS:
        lines.append(f"{g:<6}" + "".join(f"{rep.confusion[(g, p)]:>5}" for p in DEPTHS))
    if show_errors:
        for item, got, sigs in rep.errors:
            lines.append(f"  x {item.id} [{item.label}->{got}] {item.question!r} {sigs}")
    return "\n".join(lines)
