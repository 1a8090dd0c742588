"""Registry entries for minigrad/ops/linalg.py: matmul and einsum."""

from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad.ops import linalg

from .core import OpInfo, Sample


def _matmul_samples():
    pairs = [((3,), (3,)), ((2,), (2,)), ((1, 3), (3,)), ((2, 3), (3,)), ((2,), (2, 3)),
             ((2, 1), (1, 3)), ((1, 1), (1, 1)), ((2, 2), (2, 2)), ((2, 2), (2, 3)),
             ((2, 3), (3, 2)), ((3, 2), (2, 2)), ((1, 2, 2), (2, 2)), ((2, 2), (1, 2, 2)),
             ((1, 2, 3), (3, 2)), ((1,), (1, 3))]
    return tuple(Sample(p) for p in pairs)


EINSUM_SAMPLES = tuple(Sample(shapes, {"subscripts": spec}) for spec, shapes in [
    ("ij,jk->ik", ((2, 3), (3, 2))), ("i,i->", ((3,), (3,))), ("i,j->ij", ((2,), (3,))),
    ("ii->i", ((2, 2),)), ("ij->", ((2, 3),)), ("ij,ij->ij", ((1, 3), (2, 3))),
    ("...i,...i->...", ((2, 3), (3,))), (",i->i", ((), (3,))), ("i->", ((1,),)),
    ("ij,jk,k->i", ((2, 2), (2, 3), (3,))), ("ij->ji", ((1, 1),)), ("bij,bjk->bik",
                                                                      ((1, 2, 3), (1, 3, 2))),
])


def entries() -> list[OpInfo]:
    ops: list[OpInfo] = []
    add = ops.append
    add(OpInfo("matmul", linalg.MatMul, lambda a, b: a @ b, np.matmul, _matmul_samples(),
               spell="{0} @ {1}"))

    add(OpInfo("einsum", linalg.Einsum, lambda *xs, subscripts: mg.einsum(subscripts, *xs),
               lambda *arrays, subscripts: np.asarray(np.einsum(subscripts, *arrays)),
               EINSUM_SAMPLES,
               spell=lambda names, o: f"mg.einsum({o['subscripts']!r}, {', '.join(names)})"))
    return ops
