"""Matrix products: matmul with NumPy's rules (1-D operands, broadcast batch dimensions)."""

from __future__ import annotations

import math


from ..function import Function
from ..tensor import Tensor
from .common import pair


class MatMul(Function):
    """C = A @ B, over the last two axes, with batch axes broadcast."""

    needs_output = False

    def forward(self, a, b):
        if a.ndim > 2 and b.ndim == 2:
            # (..., K) @ (K, N) as one (rows, K) @ (K, N) product: NumPy's matmul would
            # otherwise run one per leading index, packing B again for each
            out = a.reshape(_rows(a.shape), a.shape[-1]) @ b
            return out.reshape(a.shape[:-1] + (b.shape[1],))
        return a @ b

    def backward(self, grad):
        g, a, b = self.values(grad, *self.inputs)
        needs_a, needs_b = self.inputs[0]._requires_grad, self.inputs[1]._requires_grad
        # ∂L/∂A = G Bᵀ, ∂L/∂B = Aᵀ G (the engine sums both over broadcast batch axes)
        if a.ndim > 2 and b.ndim == 2:
            # a stack of rows times one matrix, as in forward: (rows, K) @ (K, N), so that ∂B
            # is one product over all rows instead of one per leading index summed afterwards
            rows = _rows(a.shape)
            a2, g2 = a.reshape((rows, a.shape[-1])), g.reshape((rows, b.shape[1]))
            grad_a = (g2 @ b.T).reshape(a.shape) if needs_a else None
            return grad_a, (a2.T @ g2 if needs_b else None)
        # 1-D operands act as a row (a) or a column (b) vector; promote, then drop again
        a2 = a.reshape((1,) + a.shape) if a.ndim == 1 else a
        b2 = b.reshape(b.shape + (1,)) if b.ndim == 1 else b
        g2 = g.reshape(_batch_shape(a2.shape, b2.shape) + (a2.shape[-2], b2.shape[-1]))
        grad_a = grad_b = None
        if needs_a:
            grad_a = g2 @ b2.swapaxes(-1, -2)            # (..., M, K)
            grad_a = grad_a[..., 0, :] if a.ndim == 1 else grad_a
        if needs_b:
            grad_b = a2.swapaxes(-1, -2) @ g2            # (..., K, N)
            grad_b = grad_b[..., 0] if b.ndim == 1 else grad_b
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
