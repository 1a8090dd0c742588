"""Elementwise tests that give bool tensors (no gradient): isclose, allclose, isinf, isposinf,
isneginf. isfinite and isnan live beside the comparisons in elementwise.py."""

from __future__ import annotations

from ..tensor import Tensor
from .common import constant, pair


def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """|a − b| ≤ atol + rtol·|b| elementwise, broadcasting, as numpy.isclose and torch.isclose
    (the same defaults); infinities are close only to themselves, NaN only with `equal_nan`.
    A bool tensor, no gradient."""
    like = a if isinstance(a, Tensor) else b
    a, b = (Tensor(v, device=like.device) if isinstance(v, (list, tuple)) else v for v in (a, b))
    a, b = pair(a, b, promote_ints=False)
    if a.device != b.device:
        raise RuntimeError(f"isclose: operands on different devices, {a.device} and {b.device}")
    try:
        close = a.xp.isclose(a.data, b.data, rtol=rtol, atol=atol, equal_nan=equal_nan)
    except ValueError as error:
        raise ValueError(f"isclose: shapes {tuple(a.shape)} and {tuple(b.shape)} do not "
                         f"broadcast ({error})") from error
    return constant(close)


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether `isclose(a, b, ...)` holds everywhere: a Python bool."""
    return bool(isclose(a, b, rtol, atol, equal_nan).data.all())


def isinf(x: Tensor) -> Tensor:
    """True where x is +inf or −inf: a bool tensor of x's shape, no gradient."""
    return constant(x.xp.isinf(x.data))


def isposinf(x: Tensor) -> Tensor:
    """True where x is +inf: a bool tensor of x's shape, no gradient."""
    return constant(x.data == x.xp.inf)


def isneginf(x: Tensor) -> Tensor:
    """True where x is −inf: a bool tensor of x's shape, no gradient."""
    return constant(x.data == -x.xp.inf)
