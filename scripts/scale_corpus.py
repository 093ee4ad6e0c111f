"""A synthetic monorepo for scale benchmarks: Django's source replicated with renamed paths.

    .venv/bin/python scripts/scale_corpus.py --copies 24 [--dest bench-data/scale]

Copy k of Django's sdist tree (scripts/benchdata.py, PyPI) lands in DEST/django-x<N>/svc<k>/,
with every `django` in file contents and paths renamed `django<k>`: each copy is its own
package (imports and paths differ). Chunk texts that never say `django` (89 % of Django's Python
chunks, measured by bench_vector_scale.py) are identical in every copy, so the embedding cache
embeds them once: an embedding run over this corpus measures a monorepo with 24-fold repeats.
One copy is 6,890 files of which 4,156 are indexed (52.5k chunks); 24 copies make ~165k
files, ~100k indexed, ~1.26M chunks, 1.7 GB.
Idempotent: an existing DEST/django-x<N>/ with its marker is left alone. Prints its path.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from benchdata import django_source  # noqa: E402

MARKER = ".scale-corpus-done"


def replicate(source: Path, dest: Path, copies: int) -> Path:
    target = dest / f"django-x{copies}"
    if (target / MARKER).exists():
        return target
    files = [p for p in source.rglob("*") if p.is_file() and not p.is_symlink()]
    for k in range(copies):
        new, old = f"django{k}".encode(), b"django"
        for path in files:
            rel = path.relative_to(source).as_posix().replace("django", f"django{k}")
            out = target / f"svc{k:02d}" / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(path.read_bytes().replace(old, new))
            st = path.stat()
            os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
    (target / MARKER).write_text(f"{copies} copies of {source.name}\n")
    return target


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--copies", type=int, default=24)
    ap.add_argument("--dest", type=Path, default=ROOT / "bench-data" / "scale")
    args = ap.parse_args()
    print(replicate(django_source(), args.dest, args.copies))


if __name__ == "__main__":
    main()
