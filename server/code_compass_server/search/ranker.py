"""The learned ranker: a gradient-boosted tree ensemble that corrects the relevance z of hybrid
candidates from the signals already computed for them.

The hand-fitted linear z (constants.SEARCH_WEIGHTS) sees each signal on its own; the trees see
them together (a doc paragraph with a high cosine but no name match, a method whose file holds
three other candidates, a window of a file that also has the definition) and what the linear
model cannot read: the hit's cosine and BM25 against the list's best, chunk kind and size,
neighbours in the same file, the question's length and intent. Trained with LightGBM's
LambdaMART by `scripts/fit_ranker.py` on dev questions of several corpora and languages, boosted
from the linear z itself (z = linear z + trees), so the result stays on z's scale and the gate
and calibration signals built on z keep their meaning (docs/search.md, "Learned ranker").

The model ships as a JSON dump of its trees (ranker_model.json, package data) and is evaluated
here with numpy, every tree at once, level by level: no LightGBM at run time (~0.2 ms for 60
candidates). Only the hybrid model has one: lexical search must stay free of numpy (cold start).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from code_compass_server.constants import STUB_SUFFIXES
from code_compass_server.search.candidates import Candidate
from code_compass_server.search.signals import FEATURES, QueryInfo

if TYPE_CHECKING:
    import numpy as np

RANKER_FILE = "ranker_model.json"  # package data beside this module
# The per-candidate signals of signals.compute the trees read, then the ranker's own.
BASE_INPUTS = FEATURES
EXTRA_INPUTS = (
    "z_lin",  # the linear relevance the trees correct
    "z_rel",  # z_lin minus the list's best (a translated question's z runs lower)
    "cos_rel",  # cosine minus the list's best
    "lex_rel",  # BM25 strength minus the list's best
    "in_lex",  # returned by the lexical channel
    "in_sem",  # returned by the semantic channel
    "lines",  # chunk length, log-scaled
    "code_kind",  # function / method / constructor
    "class_kind",
    "decl_kind",  # interface / type / enum / struct / trait
    "stub",  # .pyi / .d.ts
    "section",  # a doc section or paragraph
    "same_file",  # other candidates from the same file (capped)
    "file_cos",  # best cosine among the other candidates of the same file
    "nwords",  # question length
    "behaviour",  # "why/how does it …"
    "wants_tests",
)
INPUTS = BASE_INPUTS + EXTRA_INPUTS
_CODE_KINDS = frozenset({"function", "method", "constructor"})
_DECL_KINDS = frozenset({"interface", "type", "enum", "struct", "trait"})
_DOC_KINDS = frozenset({"paragraph", "section"})


def inputs(cands: Sequence[Candidate], q: QueryInfo, zs: Sequence[float]) -> list[list[float]]:
    """One row of INPUTS per candidate (its `features` already computed), in their order."""
    cos_best = max((c.features.get("cos", 0.0) for c in cands), default=0.0)
    lex_best = max((c.features.get("lex", 0.0) for c in cands), default=0.0)
    z_best = max(zs, default=0.0)
    by_file: dict[tuple[str, str], list[int]] = {}
    for i, c in enumerate(cands):
        by_file.setdefault((c.project, c.row.path), []).append(i)
    rows: list[list[float]] = []
    for i, (c, z) in enumerate(zip(cands, zs, strict=True)):
        f, row = c.features, c.row
        mates = [j for j in by_file[(c.project, row.path)] if j != i]
        extra = (
            z,
            z - z_best,
            f.get("cos", 0.0) - cos_best,
            f.get("lex", 0.0) - lex_best,
            1.0 if c.lexical_rank is not None else 0.0,
            1.0 if c.semantic_rank is not None else 0.0,
            math.log1p(row.end_line - row.start_line + 1) / 6.0,
            1.0 if row.kind in _CODE_KINDS else 0.0,
            1.0 if row.kind == "class" else 0.0,
            1.0 if row.kind in _DECL_KINDS else 0.0,
            1.0 if row.path.endswith(STUB_SUFFIXES) else 0.0,
            1.0 if row.kind in _DOC_KINDS else 0.0,
            min(len(mates), 5) / 5.0,
            max((cands[j].features.get("cos", 0.0) for j in mates), default=0.0),
            min(len(q.words), 12) / 12.0,
            1.0 if q.behaviour else 0.0,
            1.0 if q.wants_tests else 0.0,
        )
        rows.append([f.get(k, 0.0) for k in BASE_INPUTS] + list(extra))
    return rows


@dataclass(frozen=True, slots=True)
class TreeEnsemble:
    """Every tree as rows of flat node arrays; a leaf points to itself with an infinite
    threshold, so walking `depth` steps from the roots ends on every tree's leaf."""

    feature: np.ndarray  # (trees, nodes) int
    threshold: np.ndarray  # (trees, nodes) float; go left when x <= threshold
    left: np.ndarray  # (trees, nodes) int
    right: np.ndarray  # (trees, nodes) int
    value: np.ndarray  # (trees, nodes) float, the leaf outputs
    depth: int

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Sum of the trees' outputs for each row of x (n, len(INPUTS))."""
        import numpy as np

        trees = np.arange(self.feature.shape[0])[:, None]
        rows = np.arange(x.shape[0])[None, :]
        node = np.zeros((self.feature.shape[0], x.shape[0]), dtype=np.int32)
        for _ in range(self.depth):
            go_left = x[rows, self.feature[trees, node]] <= self.threshold[trees, node]
            node = np.where(go_left, self.left[trees, node], self.right[trees, node])
        out: np.ndarray = self.value[trees, node].sum(axis=0)
        return out


def from_dump(dump: dict[str, Any]) -> TreeEnsemble:
    """Flatten LightGBM's `Booster.dump_model()` (numerical splits only)."""
    import numpy as np

    flat: list[list[tuple[int, float, int, int, float]]] = []
    depth = 0

    def walk(node: dict[str, Any], out: list[tuple[int, float, int, int, float]], d: int) -> int:
        nonlocal depth
        depth = max(depth, d)
        me = len(out)
        if "leaf_value" in node:
            out.append((0, math.inf, me, me, float(node["leaf_value"])))
            return me
        if node.get("decision_type", "<=") != "<=":
            raise ValueError(f"unsupported split {node.get('decision_type')!r}")
        out.append((int(node["split_feature"]), float(node["threshold"]), -1, -1, 0.0))
        left = walk(node["left_child"], out, d + 1)
        right = walk(node["right_child"], out, d + 1)
        f, t, _, _, v = out[me]
        out[me] = (f, t, left, right, v)
        return me

    for tree in dump["tree_info"]:
        nodes: list[tuple[int, float, int, int, float]] = []
        walk(tree["tree_structure"], nodes, 0)
        flat.append(nodes)
    width = max(len(n) for n in flat)
    arr = np.zeros((len(flat), width, 5))
    for t, nodes in enumerate(flat):
        arr[t, : len(nodes)] = nodes
        arr[t, len(nodes) :] = (0, math.inf, 0, 0, 0.0)  # padding, never reached
    return TreeEnsemble(
        feature=arr[:, :, 0].astype(np.int32),
        threshold=arr[:, :, 1],
        left=arr[:, :, 2].astype(np.int32),
        right=arr[:, :, 3].astype(np.int32),
        value=arr[:, :, 4],
        depth=depth,
    )


@lru_cache(maxsize=1)
def shipped() -> dict[str, Any]:
    """{mode: LightGBM tree dump} from the package's model file, read once; {} without one."""
    path = resources.files("code_compass_server.search").joinpath(RANKER_FILE)
    if not path.is_file():
        return {}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if tuple(data.get("inputs", ())) != INPUTS:
        raise ValueError(f"{RANKER_FILE} was trained on other inputs: refit it")
    models: dict[str, Any] = data["models"]
    return models


@lru_cache(maxsize=4)
def ensemble(mode: str) -> TreeEnsemble | None:
    """The mode's trees, flattened on first use (numpy is loaded only then)."""
    dump = shipped().get(mode)
    return None if dump is None else from_dump(dump)


def corrected(
    cands: Sequence[Candidate], q: QueryInfo, zs: Sequence[float], mode: str
) -> list[float] | None:
    """The ranker's z for each candidate (linear z + trees), or None when `mode` has no model."""
    if not cands or mode not in shipped():
        return None
    model = ensemble(mode)
    assert model is not None
    import numpy as np

    x = np.asarray(inputs(cands, q, zs), dtype=float)
    return [float(v) for v in model.predict(x) + np.asarray(zs, dtype=float)]
