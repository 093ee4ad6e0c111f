"""A one-shot search's query tokens (embed/query_tokens.py) are the model tokenizer's ids, on
every code point it answers for and on real text; it declines the rest."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from code_compass_server.constants import EMBED_MAX_TOKENS
from code_compass_server.embed.model import Embedder
from code_compass_server.embed.query_tokens import PURE_BELOW, QueryTokens

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pair(
    model_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Tokenizer, QueryTokens]:
    tokenizer_json = model_dir / "tokenizer.json"
    model = Tokenizer.from_file(str(tokenizer_json))
    model.no_padding()
    model.enable_truncation(EMBED_MAX_TOKENS)
    ours = QueryTokens.load(tokenizer_json, tmp_path_factory.mktemp("vocab"), EMBED_MAX_TOKENS)
    assert ours is not None, "the model's tokenizer is the BERT WordPiece this module reproduces"
    return model, ours


def _differences(pair: tuple[Tokenizer, QueryTokens], texts: list[str]) -> list[str]:
    model, ours = pair
    return [t for t in texts if ours.encode(t) not in (None, model.encode(t).ids)]


def test_every_code_point_it_answers_for(pair: tuple[Tokenizer, QueryTokens]) -> None:
    texts = []
    for cp in range(PURE_BELOW):
        c = chr(cp)
        texts += [c, f"a{c}b", f"word{c}", f"{c}{c} x", f"Ab{c}Cd", f"({c})"]
    assert _differences(pair, texts) == []
    assert all(pair[1].encode(t) is not None for t in texts)


def test_random_strings_and_the_repositorys_own_text(pair: tuple[Tokenizer, QueryTokens]) -> None:
    rng = random.Random(5)
    texts = [
        "".join(chr(rng.randrange(PURE_BELOW)) for _ in range(rng.randrange(1, 40)))
        for _ in range(5000)
    ]
    for path in sorted((ROOT / "server").rglob("*.py"))[:150] + sorted(ROOT.glob("docs/*.md")):
        text = path.read_text("utf-8")
        texts += [*text.splitlines(), text[:4000]]  # a long text: truncated alike
    texts += [
        "x " * 400,
        "[CLS] hello [SEP] [MASK]x[PAD]",
        "como a função é chamada? AÇÃO ñ ΣΊΣΥΦΟΣ İstanbul",
        "",
        "   ",
        "a" * 150,
    ]
    assert _differences(pair, texts) == []


def test_other_text_is_left_to_the_tokenizer(pair: tuple[Tokenizer, QueryTokens]) -> None:
    _model, ours = pair
    assert ours.encode("日本語のテキスト") is None
    assert ours.encode("ok 👍") is None


def test_a_one_shot_embedder_gives_the_same_query_vector(model_dir: Path, tmp_path: Path) -> None:
    batch = Embedder(model_dir, threads=1)
    one_shot = Embedder(model_dir, threads=1, optimized_dir=tmp_path / "opt")
    for query in ("where is the config parsed?", "onde a configuração é lida?", "日本語"):
        assert float(one_shot.embed_query(query) @ batch.embed_query(query)) > 0.9999
    assert list((tmp_path / "opt").glob("vocab-*.txt"))  # kept for the next process
