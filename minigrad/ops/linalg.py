"""Matrix products: matmul with NumPy's rules (1-D operands, broadcast batch dimensions)."""

from __future__ import annotations

import math

import numpy as np

from ..autograd import STATE, Function, ProductGradient, _result
from ..tensor import Tensor
from .common import pair
from .shape import reshape, sum_to, swapaxes


class MatMul(Function):
    """C = A @ B, over the last two axes, with batch axes broadcast."""

    needs_output = False
    float_output = True

    def forward(self, a, b):
        if a.ndim > 2 and b.ndim == 2:
            # (..., K) @ (K, N) as one (rows, K) @ (K, N) product: NumPy's matmul would
            # otherwise run one per leading index, packing B again for each
            out = a.reshape(_rows(a.shape), a.shape[-1]) @ b
            return out.reshape(a.shape[:-1] + (b.shape[1],))
        return a @ b

    def backward(self, grad):
        a, b = self.inputs
        # 1-D operands act as a row (a) or a column (b) vector; promote, then drop again
        a2 = reshape(a, (1,) + a.shape) if a.ndim == 1 else a
        b2 = reshape(b, b.shape + (1,)) if b.ndim == 1 else b
        out_shape = _batch_shape(a2.shape, b2.shape) + (a2.shape[-2], b2.shape[-1])
        g = reshape(grad, out_shape)
        # ∂L/∂A = G Bᵀ, ∂L/∂B = Aᵀ G (summed over broadcast batch axes)
        grad_a = grad_b = None
        if a._requires_grad:
            grad_a = reshape(sum_to(g @ swapaxes(b2, -1, -2), a2.shape), a.shape)
        if b._requires_grad:
            grad_b = reshape(sum_to(swapaxes(a2, -1, -2) @ g, b2.shape), b.shape)
        return grad_a, grad_b

    def vjp(self, grad):
        a, b = self.inputs
        da, db = a.data, b.data
        if da.ndim < 2 or db.ndim < 2:                 # vectors: the general path above
            return self.backward(Tensor._from_array(grad))
        a_shape = None
        if da.ndim > 2 and db.ndim == 2:
            # a stack of rows times one matrix: flattened into (rows, K) @ (K, N), so that ∂B
            # is one product (or factors) instead of one per leading index summed afterwards
            rows = _rows(da.shape)
            a_shape, da, grad = da.shape, da.reshape(rows, da.shape[-1]), \
                grad.reshape(rows, grad.shape[-1])
        grad_a = grad @ db.swapaxes(-1, -2) if a._requires_grad else None
        if grad_a is not None and a_shape is not None:
            grad_a = grad_a.reshape(a_shape)
        grad_b = None
        if b._requires_grad:
            if da.ndim == 2 and db.ndim == 2 and da.dtype == grad.dtype:
                # Aᵀ G left as factors: a weight read at many steps sums them in one product
                grad_b = ProductGradient([da], [grad], False, self.xp)
            else:
                grad_b = da.swapaxes(-1, -2) @ grad
        return grad_a, grad_b


def _rows(shape) -> int:
    """The number of rows (..., K) holds: spelled out, since reshape(-1, K) is ambiguous when
    K = 0."""
    return math.prod(shape[:-1])


def _batch_shape(shape_a, shape_b):
    batch_a, batch_b = shape_a[:-2], shape_b[:-2]
    n = max(len(batch_a), len(batch_b))
    batch_a = (1,) * (n - len(batch_a)) + batch_a
    batch_b = (1,) * (n - len(batch_b)) + batch_b
    out = []
    for x, y in zip(batch_a, batch_b):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(out)


def matmul(a, b) -> Tensor:
    """a @ b: 1-D, 2-D and batched N-D operands, as numpy.matmul."""
    if type(a) is Tensor and type(b) is Tensor:
        da, db = a.data, b.data
        if da.ndim == 2 and db.ndim == 2 and da.shape[1] == db.shape[0]:   # the common case
            if type(da) is np.ndarray and type(db) is np.ndarray and not STATE.detect_anomaly:
                return _result(MatMul, (), (a, b), da @ db)     # MatMul.forward, inlined
            return MatMul.apply(a, b)
    a, b = pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands must have at least one dimension, got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    shape_a = (1,) + a.shape if a.ndim == 1 else a.shape
    shape_b = b.shape + (1,) if b.ndim == 1 else b.shape
    if k_a != k_b or _batch_shape(shape_a, shape_b) is None:
        what = (f"inner dimensions {k_a} and {k_b} differ" if k_a != k_b
                else "batch dimensions do not broadcast")
        raise ValueError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} are "
                         f"incompatible ({what})")
    return MatMul.apply(a, b)
