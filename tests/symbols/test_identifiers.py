"""The identifier under the cursor: word boundaries, strings, keywords, prose."""

from __future__ import annotations

import pytest

from code_compass_server.symbols.code_names import code_columns_in
from code_compass_server.symbols.identifiers import identifier_at, word_at


@pytest.mark.parametrize(
    ("line", "col", "language", "expected"),
    [
        ("    return compute_discount(x)", 14, "python", "compute_discount"),
        ("    return compute_discount(x)", 27, "python", "compute_discount"),  # just after
        ("const $el = $(sel);", 7, "javascript", "$el"),
        ("let r#type = 1;", 6, "rust", "type"),
        ("x = 'compute_discount'", 8, "python", None),  # inside a string
        ("x = 1  # compute_discount here", 12, "python", "compute_discount"),  # comment
        ('y := fmt.Sprintf("%d", n)', 10, "go", "Sprintf"),
        ("if x:", 0, "python", None),  # keyword
        ("return None", 8, "python", None),  # literal
        ("x = 10_000", 6, "python", None),  # number
        ("func main() {", 1, "go", None),  # keyword
        ("See the cache docs.", 9, "markdown", None),  # plain prose word
        ("See `cache_get` docs.", 7, "markdown", "cache_get"),
        ("Call getUser first", 7, "text", "getUser"),
        ("   ", 1, "python", None),
        ("  return concatAll()(from(args));", 22, "typescript", "from"),  # rxjs's from()
        ("const v = cache.get(key);", 17, "typescript", "get"),
        ("import { a } from './a';", 15, "typescript", None),  # the keyword
        ("type Id = string;", 1, "typescript", None),
        # A private name is one name with its '#', wherever the cursor is on it.
        ("    return this.#count + 1", 16, "typescript", "#count"),
        ("    return this.#count + 1", 18, "typescript", "#count"),
        ("    return this.#count + 1", 16, "python", None),
        # The code inside an f-string's braces and a template literal's ${…} names things.
        ('    return f"<Request [{self.method}]>"', 33, "python", "method"),
        ('    return f"{{self.method}}"', 21, "python", None),  # escaped braces: text
        ('    return "<Request [{self.method}]>"', 32, "python", None),  # not an f-string
        ("  const u = `${base}/x`", 16, "typescript", "base"),
        ("  const u = `{base}/x`", 15, "typescript", None),
    ],
)
def test_identifier_at(line: str, col: int, language: str, expected: str | None) -> None:
    word = identifier_at(line, col, language)
    assert (word.text if word else None) == expected


def test_word_at_reports_the_span() -> None:
    w = word_at("a = foo_bar(1)", 6, "python")
    assert w is not None and (w.start, w.end, w.text) == (4, 11, "foo_bar")


def test_interpolations_hold_code_tokens() -> None:
    """References and lens counts: a name inside a template literal's `${…}` or an f-string's
    `{…}` is a code token; the literal's text, `{{escaped}}` braces and comments are not."""
    ts = "const u = `http://${mergePath('/', x)}/mergePath`\nmergePath()\n"
    assert code_columns_in(ts, "typescript", "mergePath") == {1: [20], 2: [0]}
    py = '# f {name}\ny = f"{name} {{name}} name"\nz = "{name}"\n'
    assert code_columns_in(py, "python", "name") == {2: [7]}
