"""Coverage levels (docs/rules.md: coverage-levels)."""

from __future__ import annotations

from code_compass_server.constants import (
    COVERAGE_HIGH_MEAN,
    COVERAGE_HIGH_MIN_DOCS,
    COVERAGE_MEDIUM_MEAN,
    COVERAGE_MEDIUM_MIN_DOCS,
)

HIGH, MEDIUM, LOW, NONE = "high", "medium", "low", "none"


def coverage_level(scores: list[float]) -> str:
    """high: 3+ evidences, mean >= 0.7; medium: 2+, mean >= 0.5; low: at least 1; none: 0.

    The seed leaves "2+ evidences with mean < 0.5" open: it is `low` (as weak as a single
    hit; it also gets the three suggestions). 3+ with a mean in [0.5, 0.7) is `medium`.
    """
    n = len(scores)
    if n == 0:
        return NONE
    mean = sum(scores) / n
    if n >= COVERAGE_HIGH_MIN_DOCS and mean >= COVERAGE_HIGH_MEAN:
        return HIGH
    if n >= COVERAGE_MEDIUM_MIN_DOCS and mean >= COVERAGE_MEDIUM_MEAN:
        return MEDIUM
    return LOW


def needs_suggestions(level: str) -> bool:
    """Three suggestions when coverage is low or none (docs/rules.md: low-coverage-suggestions)."""
    return level in (LOW, NONE)
