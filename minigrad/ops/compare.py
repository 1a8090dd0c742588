"""Comparisons and elementwise tests: bool tensors, never any gradient. The operators
(<, <=, >, >=, ==, !=, &, |, ~), isfinite, isnan, isinf, isposinf, isneginf, isclose, allclose."""

from __future__ import annotations

import numpy as np

from ..backend import backend_of
from ..tensor import Tensor
from .common import constant, pair


def _compare(name, a, b):
    a, b = pair(a, b, promote_ints=False)
    if a.device != b.device:
        raise RuntimeError(f"{name}: operands on different devices, {a.device} and {b.device}")
    try:
        out = getattr(a.data, f"__{name}__")(b.data)
    except ValueError as error:
        raise ValueError(f"{name}: shapes {tuple(a.shape)} and {tuple(b.shape)} do not "
                         f"broadcast ({error})") from error
    return constant(out, (a, b), (_compare_arrays, name))


def _compare_arrays(name, x, y):
    """The comparison `name` on two arrays (a compiled step computes it again at replay)."""
    return getattr(x, f"__{name}__")(y)


def _invert(x):
    return ~x


def _test(name, x):
    """The elementwise test `name` on an array (a compiled step computes it again at replay)."""
    xp = backend_of(x).xp
    if name == "isposinf":
        return x == xp.inf
    if name == "isneginf":
        return x == -xp.inf
    return getattr(xp, name)(x)


def less(a, b) -> Tensor:
    """a < b elementwise, broadcasting: a bool tensor (`a < b`; PyTorch's lt)."""
    return _compare("lt", a, b)


def less_equal(a, b) -> Tensor:
    """a ≤ b elementwise, broadcasting: a bool tensor (`a <= b`; PyTorch's le)."""
    return _compare("le", a, b)


def greater(a, b) -> Tensor:
    """a > b elementwise, broadcasting: a bool tensor (`a > b`; PyTorch's gt)."""
    return _compare("gt", a, b)


def greater_equal(a, b) -> Tensor:
    """a ≥ b elementwise, broadcasting: a bool tensor (`a >= b`; PyTorch's ge)."""
    return _compare("ge", a, b)


def equal(a, b) -> Tensor:
    """a = b elementwise, broadcasting: a bool tensor (`a == b`; PyTorch's eq)."""
    return _compare("eq", a, b)


def not_equal(a, b) -> Tensor:
    """a ≠ b elementwise, broadcasting: a bool tensor (`a != b`; PyTorch's ne)."""
    return _compare("ne", a, b)


# PyTorch's short names (its `equal` is another thing: one bool, are the tensors the same)
lt, le, gt, ge, eq, ne = less, less_equal, greater, greater_equal, equal, not_equal


# the operators &, |, ^ and ~ (NumPy's and PyTorch's: logical on bool, bitwise on integers;
# ~ takes bool only here)
def bitwise_and(a, b) -> Tensor: return _compare("and", a, b)
def bitwise_or(a, b) -> Tensor: return _compare("or", a, b)
def bitwise_xor(a, b) -> Tensor: return _compare("xor", a, b)


def bitwise_not(x: Tensor) -> Tensor:
    if x.data.dtype.kind != "b":
        raise TypeError(f"~: needs a bool tensor, got dtype {x.data.dtype}; "
                        f"mg.logical_not(x) is True where x is 0")
    return constant(~x.data, (x,), (_invert,))


def _truth(x):
    """x read as truth values: a bool tensor, True where x is nonzero."""
    if isinstance(x, Tensor):
        return x if x.data.dtype.kind == "b" else not_equal(x, 0)
    return Tensor(np.asarray(x) != 0)          # made from data, as mg.tensor(...)


def logical_and(a, b) -> Tensor:
    """True where both a and b are nonzero (True), as numpy.logical_and and
    torch.logical_and: a bool tensor, broadcasting; numbers of any dtype are read as truth
    values."""
    return _compare("and", _truth(a), _truth(b))


def logical_or(a, b) -> Tensor:
    """True where a or b is nonzero, as numpy.logical_or and torch.logical_or."""
    return _compare("or", _truth(a), _truth(b))


def logical_xor(a, b) -> Tensor:
    """True where exactly one of a and b is nonzero, as numpy.logical_xor and
    torch.logical_xor."""
    return _compare("xor", _truth(a), _truth(b))


def logical_not(x) -> Tensor:
    """True where x is zero (False), as numpy.logical_not and torch.logical_not."""
    return bitwise_not(_truth(x))


def isfinite(x: Tensor) -> Tensor:
    """True where x is neither inf nor NaN: a bool tensor of x's shape, no gradient."""
    return constant(x.xp.isfinite(x.data), (x,), (_test, "isfinite"))


def isnan(x: Tensor) -> Tensor:
    """True where x is NaN: a bool tensor of x's shape, no gradient."""
    return constant(x.xp.isnan(x.data), (x,), (_test, "isnan"))


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
        close = _isclose(rtol, atol, equal_nan, a.data, b.data)
    except ValueError as error:
        raise ValueError(f"isclose: shapes {tuple(a.shape)} and {tuple(b.shape)} do not "
                         f"broadcast ({error})") from error
    return constant(close, (a, b), (_isclose, rtol, atol, equal_nan))


def _isclose(rtol, atol, equal_nan, a, b):
    """isclose on two arrays (a compiled step computes it again at replay)."""
    return backend_of(a).xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether `isclose(a, b, ...)` holds everywhere: a Python bool (a read of the values, so
    a compiled step that calls it stays eager)."""
    return bool(isclose(a, b, rtol, atol, equal_nan).all())


def isinf(x: Tensor) -> Tensor:
    """True where x is +inf or −inf: a bool tensor of x's shape, no gradient."""
    return constant(x.xp.isinf(x.data), (x,), (_test, "isinf"))


def isposinf(x: Tensor) -> Tensor:
    """True where x is +inf: a bool tensor of x's shape, no gradient."""
    return constant(x.data == x.xp.inf, (x,), (_test, "isposinf"))


def isneginf(x: Tensor) -> Tensor:
    """True where x is −inf: a bool tensor of x's shape, no gradient."""
    return constant(x.data == -x.xp.inf, (x,), (_test, "isneginf"))
