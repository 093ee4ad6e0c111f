"""Which model the vectors come from, without loading it: a `status` or a lexical search must
not pay for numpy, the tokenizer or ONNX Runtime (embed/model.py loads those)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Protocol

from code_compass_server.constants import EMBED_TEXT_FORMAT
from code_compass_server.embed.paths import default_model_dir, require_model_files

MODEL_NAME = "all-MiniLM-L6-v2-int8"


class _Identified(Protocol):
    @property
    def model_id(self) -> str: ...


def model_sha256(path: Path, stamp: Path | None = None) -> str:
    """The model file's sha256. With `stamp` (a file in our own storage, never the model's
    folder), remembered there keyed by the model's path, size, mtime and inode: hashing 23 MB
    costs every cold process (a CLI search) about 0.1 s."""
    if stamp is not None:
        st = path.stat()
        key = f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
        with contextlib.suppress(OSError, ValueError):
            known, digest = stamp.read_text("utf-8").rsplit(" ", 1)
            if known == key and len(digest.strip()) == 64:
                return digest.strip()
    # Only on a miss: build.py loads importlib.metadata (0.05-0.15 s of a cold process).
    from code_compass_server.embed.build import sha256_file

    digest = sha256_file(path)
    if stamp is None:
        return digest
    tmp = stamp.with_name(f"{stamp.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        stamp.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(f"{key} {digest}\n", encoding="utf-8")
        os.replace(tmp, stamp)
    return digest


def model_id_for(sha256: str) -> str:
    """Identifies the vectors' space; changes whenever the model file changes."""
    return f"{MODEL_NAME}-{sha256[:12]}"


def model_id_at(model_dir: Path | None = None, sha_stamp: Path | None = None) -> str:
    """The id `Embedder(model_dir).model_id` would have, without loading the model."""
    model_path, _tokenizer = require_model_files(model_dir or default_model_dir())
    return model_id_for(model_sha256(model_path, sha_stamp))


def store_id(embedder: _Identified) -> str:
    """Vectors of another model or text format are not comparable: a store whose id differs
    starts empty (and is re-filled from the cache or the model)."""
    return f"{embedder.model_id}/text{EMBED_TEXT_FORMAT}"
