"""A simulated accelerator for tests: device "sim", whose arrays are NOT NumPy arrays.

`SimArray` wraps a NumPy array and, like a CuPy array, refuses every implicit conversion to
NumPy: `numpy.asarray(a)`, NumPy functions and ufuncs on it, and arithmetic mixing it with a
NumPy array all raise TypeError. Data crosses between host and device only through the
backend's `from_numpy` / `to_numpy` (and `xp.asarray`, which like `cupy.asarray` copies host
data in). Running the primitive tests on "sim" therefore checks that the engine reaches the
array module only through `xp` and the backend, exactly as it must for CuPy.

    register_backend(SimBackend())
    x = minigrad.tensor(numpy.ones(3), device="sim")
"""

from __future__ import annotations

import types

import numpy as np

import minigrad
from minigrad._erf import fast_erf, fast_erfc


def _unwrap(x):
    """NumPy's view of an argument; host NumPy arrays are refused, as CuPy refuses them."""
    if isinstance(x, SimArray):
        return x._array
    if isinstance(x, np.ndarray):
        raise TypeError(f"sim: got a host NumPy array of shape {x.shape} where a sim array is "
                        f"needed; move it with from_numpy")
    if isinstance(x, (tuple, list)):
        return type(x)(_unwrap(v) for v in x)
    return x                       # Python and NumPy scalars, slices, None, Ellipsis, dtypes


def _wrap(x):
    """Results back on the device: arrays and NumPy scalars become SimArrays (0-d for scalars,
    as CuPy's reductions return 0-d arrays)."""
    if isinstance(x, (np.ndarray, np.generic)):
        return SimArray(np.asarray(x))
    if isinstance(x, (tuple, list)):
        return type(x)(_wrap(v) for v in x)
    return x


def _on_device(func):
    """func (a NumPy function or ndarray method) taking and returning sim arrays."""
    def run(*args, **kwargs):
        kwargs = {k: _unwrap(v) for k, v in kwargs.items()}
        return _wrap(func(*_unwrap(args), **kwargs))
    run.__name__ = getattr(func, "__name__", "sim_function")
    return run


def _method(name):
    """ndarray's method `name` on the wrapped array, with sim arrays in and out."""
    def call(self, *args, **kwargs):
        return _on_device(getattr(self._array, name))(*args, **kwargs)
    call.__name__ = name
    return call


class SimArray:
    """A device array: a NumPy array inside, but not one to NumPy."""

    __slots__ = ("_array",)
    __array_ufunc__ = None         # numpy.exp(a), ndarray + a: TypeError, never a silent copy

    def __init__(self, array: np.ndarray):
        assert type(array) is np.ndarray, type(array)
        self._array = array

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion of a sim array to a NumPy array is not allowed; "
                        "use the backend's to_numpy")

    def __array_function__(self, func, types, args, kwargs):
        return NotImplemented      # numpy.sum(a), numpy.concatenate([a]): TypeError

    def __repr__(self) -> str:
        return f"SimArray({self._array!r})"

    # attributes
    shape = property(lambda self: self._array.shape)
    ndim = property(lambda self: self._array.ndim)
    size = property(lambda self: self._array.size)
    dtype = property(lambda self: self._array.dtype)
    T = property(lambda self: SimArray(self._array.T))

    def __len__(self) -> int:
        return len(self._array)

    # single-element arrays convert to Python numbers, as CuPy allows (a device sync)
    __bool__ = _method("__bool__")
    __int__ = _method("__int__")
    __float__ = _method("__float__")
    item = _method("item")
    tolist = _method("tolist")

    def __getitem__(self, index):
        return _wrap(self._array[_unwrap(index)])

    def __setitem__(self, index, value):
        self._array[_unwrap(index)] = _unwrap(value)

    # arithmetic, comparisons and logic
    __add__, __radd__ = _method("__add__"), _method("__radd__")
    __sub__, __rsub__ = _method("__sub__"), _method("__rsub__")
    __mul__, __rmul__ = _method("__mul__"), _method("__rmul__")
    __truediv__, __rtruediv__ = _method("__truediv__"), _method("__rtruediv__")
    __pow__, __rpow__ = _method("__pow__"), _method("__rpow__")
    __matmul__, __rmatmul__ = _method("__matmul__"), _method("__rmatmul__")
    __neg__, __abs__, __invert__ = _method("__neg__"), _method("__abs__"), _method("__invert__")
    __lt__, __le__ = _method("__lt__"), _method("__le__")
    __gt__, __ge__ = _method("__gt__"), _method("__ge__")
    __eq__, __ne__ = _method("__eq__"), _method("__ne__")
    __and__, __or__, __xor__ = _method("__and__"), _method("__or__"), _method("__xor__")
    __hash__ = None

    # in place, as CuPy's arrays do
    def _in_place(name):
        def call(self, other):
            getattr(self._array, name)(_unwrap(other))
            return self
        call.__name__ = name
        return call

    __iadd__, __isub__ = _in_place("__iadd__"), _in_place("__isub__")
    __imul__, __itruediv__ = _in_place("__imul__"), _in_place("__itruediv__")
    __iand__, __ior__ = _in_place("__iand__"), _in_place("__ior__")
    del _in_place

    # shape, dtype and reductions
    reshape, transpose, swapaxes = _method("reshape"), _method("transpose"), _method("swapaxes")
    squeeze, ravel, flatten = _method("squeeze"), _method("ravel"), _method("flatten")
    astype, copy, view = _method("astype"), _method("copy"), _method("view")
    sum, mean, var, std = _method("sum"), _method("mean"), _method("var"), _method("std")
    max, min, prod = _method("max"), _method("min"), _method("prod")
    argmax, argmin = _method("argmax"), _method("argmin")
    any, all = _method("any"), _method("all")


def _asarray(data, dtype=None):
    """Like cupy.asarray: device arrays pass through, host data (lists, scalars, NumPy arrays)
    is copied in explicitly."""
    if isinstance(data, SimArray):
        return data if dtype is None else data.astype(dtype, copy=False)
    return SimArray(np.array(data, dtype=dtype))


_FUNCTIONS = (
    "exp", "log", "log1p", "tanh", "sqrt", "abs", "sign", "maximum", "minimum", "where", "clip",
    "isfinite", "isnan", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
    "full_like", "arange", "broadcast_to", "concatenate", "stack", "matmul", "logical_not",
    "einsum", "empty_like", "negative", "reciprocal", "result_type", "roll",
    "floor", "ceil", "trunc", "round", "copysign", "fmod", "remainder", "floor_divide",
    "cumsum", "cumprod", "logaddexp", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
    "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "log2", "log10", "expm1", "exp2",
    "arctan2", "hypot", "argsort", "isclose", "isinf", "pad",
)

# the device's array module: just the functions above, plus constants and dtypes
sim_numpy = types.SimpleNamespace(
    **{name: _on_device(getattr(np, name)) for name in _FUNCTIONS},
    asarray=_asarray, ndarray=SimArray, inf=np.inf, nan=np.nan, pi=np.pi, newaxis=None,
    float16=np.float16, float32=np.float32, float64=np.float64, int32=np.int32,
    int64=np.int64, bool_=np.bool_, dtype=np.dtype,
)


class SimBackend(minigrad.Backend):
    """Device type "sim" ("sim" or "sim:0"), holding SimArrays."""

    device_type = "sim"

    def __init__(self):
        super().__init__()
        self.xp = sim_numpy
        self.array_types = (SimArray,)

    def check_available(self, index):
        if index not in (None, 0):
            raise RuntimeError(f"device 'sim:{index}' does not exist: 1 sim device present")

    def device_of(self, array) -> str:
        return "sim"

    def from_numpy(self, array, index=None):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"sim from_numpy: expected a NumPy array, got {type(array).__name__}")
        return SimArray(array.copy())

    def to_numpy(self, array):
        return array._array.copy()

    def asarray(self, data, dtype=None, index=None):
        return _asarray(data, dtype)

    def scatter_add(self, target, index, values):
        np.add.at(target._array, _unwrap(index), _unwrap(values))

    def erf(self, array):
        return fast_erf(self.xp, array)

    def erfc(self, array):
        return fast_erfc(self.xp, array)
