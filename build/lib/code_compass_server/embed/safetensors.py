"""Read a .safetensors file with numpy alone (no torch, no extra dependency).

Format: 8-byte little-endian header length, a JSON header mapping tensor names to
{dtype, shape, data_offsets}, then the raw little-endian tensor bytes.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np

_DTYPES: dict[str, np.dtype[Any]] = {
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "F64": np.dtype("<f8"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I8": np.dtype("i1"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor in the file, as native-endian numpy arrays (copies, safe to keep)."""
    data = path.read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len])
    base = 8 + header_len
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise ValueError(f"{path}: tensor {name} has unsupported dtype {info['dtype']}")
        start, end = info["data_offsets"]
        raw = np.frombuffer(
            data, dtype=dtype, count=(end - start) // dtype.itemsize, offset=base + start
        )
        tensors[name] = raw.reshape(info["shape"]).astype(dtype.newbyteorder("="), copy=True)
    return tensors
