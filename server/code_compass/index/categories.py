"""What kind of file a chunk comes from: implementation, test, document or config.

Natural-language questions usually want the implementation, not its tests (issue 3), and hover
lists document passages before code usages (issue 4), so the category is indexed as a filter.
"""

from __future__ import annotations

import re

DOC_LANGUAGES = frozenset({"markdown", "pdf", "text", "rst"})
CONFIG_LANGUAGES = frozenset({"yaml", "toml", "json", "ini", "xml"})
_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec|testing)(/|$)"
    r"|(^|/)test_[^/]*$|_tests?\.[a-z]+$|\.(test|spec)\.[a-z]+$|(^|/)conftest\.py$"
)


def category_for(path: str, language: str) -> str:
    if language in DOC_LANGUAGES:
        return "doc"
    if language in CONFIG_LANGUAGES:
        return "config"
    if _TEST_PATH.search(path):
        return "test"
    return "code"
