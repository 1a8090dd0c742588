"""Registry entries for minigrad/ops/linalg.py: matmul and einsum, and the compositions outer
(through elementwise Mul) and addmm (through MatMul)."""

from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad.ops import elementwise as E
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

OUTER_SAMPLES = tuple(Sample(p) for p in [((1,), (1,)), ((2,), (3,)), ((3,), (1,)),
                                          ((1,), (2,))])
# input broadcasting to (n, p), mat1 (n, m), mat2 (m, p); beta = 0 leaves input out
ADDMM_SAMPLES = tuple(Sample(shapes, {"beta": beta, "alpha": alpha}) for shapes, beta, alpha in [
    (((), (2, 3), (3, 2)), 1, 1), (((1,), (1, 1), (1, 1)), 0.5, 2.0),
    (((2, 3), (2, 2), (2, 3)), -1.0, 0.5), (((3,), (2, 1), (1, 3)), 1, 1),
    (((2, 1), (2, 3), (3, 2)), 2.0, 1), (((1, 1), (1, 2), (2, 1)), 1, -1.5)])


def entries() -> list[OpInfo]:
    ops: list[OpInfo] = []
    add = ops.append
    add(OpInfo("matmul", linalg.MatMul, lambda a, b: a @ b, np.matmul, _matmul_samples(),
               spell="{0} @ {1}"))

    add(OpInfo("einsum", linalg.Einsum, lambda *xs, subscripts: mg.einsum(subscripts, *xs),
               lambda *arrays, subscripts: np.asarray(np.einsum(subscripts, *arrays)),
               EINSUM_SAMPLES,
               spell=lambda names, o: f"mg.einsum({o['subscripts']!r}, {', '.join(names)})"))
    # -- PyTorch's names --------------------------------------------------------------------
    add(OpInfo("outer", E.Mul, mg.outer, np.outer, OUTER_SAMPLES, OUTER_SAMPLES[:2],
               spell="mg.outer({0}, {1})"))
    add(OpInfo("addmm", linalg.MatMul,
               lambda c, a, b, beta, alpha: mg.addmm(c, a, b, beta=beta, alpha=alpha),
               lambda c, a, b, beta, alpha: alpha * (a @ b) + (beta * c if beta else 0),
               ADDMM_SAMPLES, ADDMM_SAMPLES[:3],
               spell="mg.addmm({0}, {1}, {2}, beta={beta}, alpha={alpha})"))
    return ops
