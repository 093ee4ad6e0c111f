"""An independent fp32 numpy forward pass of BERT + mean pooling + L2 (the accuracy reference)."""

from __future__ import annotations

import math

import numpy as np


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def reference_embeddings(
    weights: dict[str, np.ndarray], ids_list: list[list[int]], heads: int = 12, layers: int = 6
) -> np.ndarray:
    """Sentence vectors for token sequences (no padding), computed in float64."""
    big = ("embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight")
    wt = {k: v.astype(np.float64) for k, v in weights.items() if k not in big}
    return np.stack([_one(weights, wt, ids, heads, layers) for ids in ids_list])


def _one(
    weights: dict[str, np.ndarray],
    wt: dict[str, np.ndarray],
    ids: list[int],
    heads: int,
    layers: int,
) -> np.ndarray:
    n = len(ids)
    big = ("embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight")
    x = (
        weights[big[0]][ids].astype(np.float64)
        + weights[big[1]][:n].astype(np.float64)
        + wt["embeddings.token_type_embeddings.weight"][0]
    )
    eps = 1e-12
    x = _layer_norm(x, wt["embeddings.LayerNorm.weight"], wt["embeddings.LayerNorm.bias"], eps)
    hidden = x.shape[1]
    hs = hidden // heads

    def lin(v: np.ndarray, name: str) -> np.ndarray:
        return v @ wt[name + ".weight"].T + wt[name + ".bias"]

    for i in range(layers):
        p = f"encoder.layer.{i}."
        q = lin(x, p + "attention.self.query").reshape(n, heads, hs).transpose(1, 0, 2)
        k = lin(x, p + "attention.self.key").reshape(n, heads, hs).transpose(1, 0, 2)
        v = lin(x, p + "attention.self.value").reshape(n, heads, hs).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(hs)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(n, hidden)
        a = lin(ctx, p + "attention.output.dense")
        x = _layer_norm(
            a + x,
            wt[p + "attention.output.LayerNorm.weight"],
            wt[p + "attention.output.LayerNorm.bias"],
            eps,
        )
        h = lin(x, p + "intermediate.dense")
        h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))
        o = lin(h, p + "output.dense")
        x = _layer_norm(
            o + x, wt[p + "output.LayerNorm.weight"], wt[p + "output.LayerNorm.bias"], eps
        )
    mean = x.mean(0)
    return (mean / np.linalg.norm(mean)).astype(np.float32)
