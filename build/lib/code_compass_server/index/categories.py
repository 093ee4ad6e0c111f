"""What kind of file a chunk comes from: implementation, test, document or config.

Natural-language questions usually want the implementation, not its tests, and hover lists
document passages before code usages, so the category is indexed as a filter. Which languages
are documents or config is defined in `index/languages.py`, and only there.
"""

from __future__ import annotations

import re

from code_compass_server.index.languages import CONFIG_LANGUAGES, DOC_LANGUAGES

DOC = "doc"
CODE = "code"
TEST = "test"
CONFIG = "config"
DOC_CATEGORIES = (DOC,)  # "doc references" (hover, lens)
CODE_CATEGORIES = (CODE, TEST, CONFIG)  # "usages"

_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec|testing)(/|$)"
    r"|(^|/)test_[^/]*$|_tests?\.[a-z]+$|\.(test|spec)\.[a-z]+$|(^|/)conftest\.py$"
)


def category_for(path: str, language: str) -> str:
    if language in DOC_LANGUAGES:
        return DOC
    if language in CONFIG_LANGUAGES:
        return CONFIG
    if _TEST_PATH.search(path):
        return TEST
    return CODE
