"""Fusion: merging channels, de-duplication, per-file caps, category and symbol signals."""

from __future__ import annotations

from code_compass_server.search.fusion import diversify, fuse, merge
from tests.search.helpers import cand, row


def test_overlapping_ranges_in_one_file_keep_the_better_one() -> None:
    ranked = [
        cand(row("a", start=10, end=40), 0.9),
        cand(row("b", start=30, end=50), 0.8),  # 11 of its 21 lines are a's: a near-duplicate
        cand(row("c", start=41, end=60), 0.7),  # touches nothing kept
    ]
    assert [c.row.id for c in diversify(ranked, per_file=5)] == ["a", "c"]


def test_small_overlap_is_not_a_duplicate() -> None:
    ranked = [cand(row("a", start=1, end=40), 0.9), cand(row("b", start=36, end=80), 0.8)]
    assert [c.row.id for c in diversify(ranked, per_file=5)] == ["a", "b"]


def test_same_lines_in_another_file_are_kept() -> None:
    ranked = [cand(row("a", "x.py")), cand(row("b", "y.py"))]
    assert len(diversify(ranked)) == 2


def test_cap_of_hits_per_file() -> None:
    ranked = [cand(row(f"c{i}", "big.py", i * 100, i * 100 + 20), 1 - i / 10) for i in range(5)]
    ranked.append(cand(row("other", "small.py"), 0.1))
    kept = diversify(ranked, per_file=2)
    assert [c.row.id for c in kept] == ["c0", "c1", "other"]


def test_merge_joins_both_channels_of_one_chunk() -> None:
    shared = row("s")
    lex = [cand(shared, bm25=7.0, lexical_rank=0), cand(row("l", "l.py"), bm25=3.0, lexical_rank=1)]
    sem = [cand(shared, cosine=0.7, semantic_rank=2)]
    merged = {c.row.id: c for c in merge(lex, sem)}
    assert set(merged) == {"s", "l"}
    assert merged["s"].bm25 == 7.0 and merged["s"].cosine == 0.7
    assert merged["s"].lexical_rank == 0 and merged["s"].semantic_rank == 2
    assert merged["l"].cosine is None


def _same_chunk_as_code_and_test(query: str) -> dict[str, float]:
    text = "def parse_header(value):\n    return value.split(';')\n"
    impl = row("impl", "http/headers.py", symbol="parse_header", text=text)
    test = row("test", "tests/test_headers.py", symbol="parse_header", category="test", text=text)
    lex = [cand(impl, bm25=5.0, lexical_rank=0), cand(test, bm25=5.0, lexical_rank=1)]
    sem = [cand(test, cosine=0.6, semantic_rank=0), cand(impl, cosine=0.6, semantic_rank=1)]
    return {c.row.id: c.score for c in fuse(query, lex, sem)}


def test_a_question_prefers_the_implementation_over_its_test() -> None:
    scores = _same_chunk_as_code_and_test("how is a header value parsed")
    assert scores["impl"] > scores["test"]


def test_a_question_about_tests_does_not_penalise_tests() -> None:
    plain = _same_chunk_as_code_and_test("how is a header value parsed")
    asked = _same_chunk_as_code_and_test("which tests check that a header value is parsed")
    assert asked["test"] - asked["impl"] > plain["test"] - plain["impl"]


def test_symbol_named_with_the_query_words_ranks_first() -> None:
    body = "    x = compute(a, b)\n    return x\n"
    named = row("named", "a.py", symbol="retry_backoff", text="def retry_backoff(a, b):\n" + body)
    other = row("other", "b.py", symbol="helper", text="def helper(a, b):\n" + body)
    sem = [cand(other, cosine=0.5, semantic_rank=0), cand(named, cosine=0.5, semantic_rank=1)]
    out = fuse("retry backoff", [], sem)
    assert out[0].row.id == "named"
    assert out[0].features["symbol"] == 1.0 and out[1].features["symbol"] == 0.0


def test_fuse_output_is_sorted_and_bounded() -> None:
    lex = [cand(row(f"l{i}", f"f{i}.py"), bm25=10.0 - i, lexical_rank=i) for i in range(8)]
    sem = [cand(row(f"s{i}", f"g{i}.py"), cosine=0.8 - i / 20, semantic_rank=i) for i in range(8)]
    out = fuse("parse the configuration file", lex, sem)
    scores = [c.score for c in out]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert len(out) == 16
