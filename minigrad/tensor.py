"""Tensor: an array on a device, and where it came from.

Each operator and method is a one-line call into `ops/`. A tensor made by an operation keeps the
Function that made it in `_fn`; a leaf (made by the user) has `_fn = None`.
"""

from __future__ import annotations

import numbers

import numpy as np

import weakref

from . import inplace
from ._errors import restated
from .backend import _BY_ARRAY_TYPE as _ARRAY_TYPES
from .backend import CPU, backend_of, is_array, parse_device
from ._axes import FIRST_AXIS, LAST_AXIS, DefaultAxis  # noqa: F401  (re-exported)
from .grad_mode import STATE as _grad_state
from .recording import made_from_data
from .recording import recorder as _recorder


class _Defaults:
    """The float dtype of Python floats made into tensors, of float-valued functions of
    integers (`arange(4) / 4`, `exp`, `mean`) and of the creation functions given no dtype:
    float32 unless `set_default_dtype` chose another, for the whole process (as PyTorch's)."""

    def __init__(self):
        self.float = np.dtype(np.float32)


DEFAULTS = _Defaults()


def set_default_dtype(dtype) -> None:
    """torch.set_default_dtype: the float dtype that Python floats, the creation functions
    (`zeros`, `randn`, `arange` of floats, ...) and float-valued functions of integers give
    from now on, in every thread: float16, float32 (the default) or float64. A compiled step
    captures again when it changes."""
    try:
        chosen = None if dtype is None else np.dtype(dtype)    # np.dtype(None) is float64
    except TypeError:
        chosen = None
    if chosen is None or chosen.kind != "f" or chosen.itemsize not in (2, 4, 8):
        raise TypeError(f"set_default_dtype: only float16, float32 and float64 can be the "
                        f"default, got {dtype!r}")
    DEFAULTS.float = chosen


def get_default_dtype() -> np.dtype:
    """torch.get_default_dtype: the float dtype minigrad uses where none is given (float32
    unless `set_default_dtype` changed it)."""
    return DEFAULTS.float


def _is_dtype(value) -> bool:
    """Whether `value` names a dtype ("float64", np.int64), not a device ("cpu", "cuda:1")."""
    try:
        np.dtype(value)
    except TypeError:
        return False
    return not isinstance(value, str) or value.split(":")[0] not in ("cpu", "cuda")


def _normalise_dtype(dtype):
    return None if dtype is None else np.dtype(dtype)


class Tensor:
    """An n-dimensional array that records the operations made from it for reverse-mode autodiff.

    Make one with `minigrad.tensor(data, dtype=None, requires_grad=False, device="cpu")`.
    Python floats become float32; NumPy arrays keep their dtype; integer and bool tensors can
    never require grad. Mixed dtypes in one operation follow the rule PyTorch uses: Python
    numbers are weak (`x * 2.0` keeps x's dtype), and a float result of integer inputs is
    float32 (see "Promotion at a glance" below, and the table in docs/operations.md).

    Attributes: `data` (the NumPy/CuPy array), `grad` (a Tensor or None), `requires_grad`,
    `shape`, `ndim`, `size`, `dtype`, `device`, `T`, `is_leaf`, `grad_fn`, `name` (a label for
    graph pictures). NumPy and PyTorch spellings both work where they agree: `ndim` / `dim()`,
    `axis=` / `dim=` on every reduction and join, `concat` / `cat`, `var(ddof=)` /
    `var(correction=)`. Where they disagree NumPy's meaning wins and PyTorch's is callable:
    `t.size` is the number of elements (an int), and `t.size()` is the shape, `t.size(d)` is
    `shape[d]`.

    Operations make new tensors. The in-place methods (`add_`, `mul_`, `zero_`, `t[i] = v`,
    ...) change a tensor that does not require grad, or any tensor under `no_grad`; a graph
    that saved a tensor changed afterwards refuses to run backward instead of computing a wrong
    gradient. Gradients accumulate into `.grad` of leaves: reset one with `t.grad = None` (the
    next backward starts from zero) or `t.grad.zero_()` (in place), all of a model's with
    `module.zero_grad()` / `optimizer.zero_grad()`.

    Promotion at a glance: float32 with float64 gives float64 (and the float32 input's
    gradient is float32 again); a float tensor with a Python number keeps its dtype; an
    integer tensor with a Python float, or with a float tensor of any shape, takes the float's
    dtype (float32 for a Python float; NumPy would give float64); integers whose result is a
    float (`arange(4) / 4`, `exp`, `sqrt`, `mean`, `int32 ** 0.5`) give float32; integers with
    integers stay integers as in NumPy (`//`, `%`, `sum`).
    """

    # `data`, `_requires_grad` and `_fn` are set on every tensor; the rest keep these class-level
    # defaults until set, which makes creating a tensor (once per operation) cheaper
    __slots__ = {
        "data": "The values: a NumPy array on the CPU, a CuPy array on a GPU. Read it freely; "
                "change it only through the in-place methods (add_, copy_, ...), which keep "
                "the graph's checks of in-place changes honest.",
        "_requires_grad": None, "_fn": None, "__dict__": None, "__weakref__": None,
    }
    grad = None                # ∂L/∂self added up by backward() (a leaf's, or retain_grad()'s)
    name = None                # a label for graph pictures (minigrad.viz.draw)
    _retains_grad = False
    _hooks = None
    _hooks_used = False        # True once any tensor had a hook or retain_grad (the walk's test)
    _version = 0               # in-place changes made through this tensor (see inplace.py)
    __array_ufunc__ = None     # ndarray <op> Tensor defers to Tensor's reflected operator

    def __init__(self, data, dtype=None, requires_grad: bool = False, device=None):
        dtype = _normalise_dtype(dtype)
        if isinstance(data, Tensor):
            data = data.data
        if device is None:
            backend, index = (backend_of(data), None) if is_array(data) else (CPU, None)
        else:
            backend, index = parse_device(device)
        array = _to_backend_array(data, dtype, backend, index)
        self.data = array
        self._requires_grad = False
        self._fn = None
        if requires_grad:
            self.requires_grad = True
        made_from_data(self)           # a step being captured: a constant of the capture

    @classmethod
    def _from_array(cls, array, xp=None) -> "Tensor":
        """Wrap a backend array without copying or checking (the engine's fast path)."""
        t = cls.__new__(cls)
        if type(array) not in _ARRAY_TYPES:     # NumPy scalars from full reductions
            array = (xp or np).asarray(array)
        t.data = array
        t._requires_grad = False
        t._fn = None
        return t

    # -- attributes -----------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Does backward compute a gradient for this tensor? Settable on leaves (floating
        dtypes only); a result of an operation requires grad when any input does."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value and self.data.dtype.kind not in "fc":
            raise TypeError(f"requires_grad: only floating-point tensors can require grad, "
                            f"got dtype {self.data.dtype}")
        if not value and self._fn is not None:
            raise RuntimeError("requires_grad: cannot turn off requires_grad of a non-leaf "
                               "tensor; use .detach()")
        self._requires_grad = bool(value)

    def requires_grad_(self, value: bool = True) -> "Tensor":
        """Set `requires_grad` and return this tensor (PyTorch's spelling, for chaining)."""
        self.requires_grad = value
        return self

    @property
    def shape(self) -> tuple[int, ...]:
        """The length of each axis, a tuple: () for a scalar, (B, T, E) for a batch of
        sequences."""
        return self.data.shape

    @property
    def ndim(self) -> int:
        """The number of axes, len(shape) (also `dim()`)."""
        return self.data.ndim

    @property
    def size(self) -> "ElementCount":
        """The number of elements as an int, NumPy's `a.size` (also `numel()`).

        The int is callable, so PyTorch's spelling works too: `t.size()` is the shape tuple and
        `t.size(d)` is `shape[d]` (negative d counts from the end).
        """
        data = self.data
        return ElementCount(data.size, data.shape)

    def numel(self) -> int:
        """The number of elements, a plain int: prod(shape), 1 for a scalar."""
        return int(self.data.size)

    def dim(self) -> int:
        """The number of axes, len(shape) (PyTorch's name for `ndim`)."""
        return self.data.ndim

    def is_floating_point(self) -> bool:
        """Are the elements floats (float16, float32, float64)?"""
        return self.data.dtype.kind == "f"

    def element_size(self) -> int:
        """The bytes of one element (4 for float32)."""
        return int(self.data.dtype.itemsize)

    @property
    def nbytes(self) -> int:
        """The bytes of all elements (NumPy's `nbytes`)."""
        return int(self.data.nbytes)

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of the elements (float32, float64, int64, bool, ...)."""
        return self.data.dtype

    @property
    def device(self) -> str:
        """Where the data lives: "cpu", or "cuda:N" for a CuPy array on GPU N."""
        return backend_of(self.data).device_of(self.data)

    @property
    def xp(self):
        """The array module (NumPy, CuPy, ...) of this tensor's device."""
        return backend_of(self.data).xp

    @property
    def is_leaf(self) -> bool:
        """True for a tensor made by the user (not by an operation): backward stores its
        gradient in `.grad`."""
        return self._fn is None

    @property
    def grad_fn(self):
        """The Function that made this tensor, or None for a leaf."""
        return self._fn

    @property
    def T(self) -> "Tensor":
        """The transpose: all axes reversed."""
        return ops.transpose(self)

    def __len__(self) -> int:
        """The length of the first axis (a 0-d tensor has none: TypeError)."""
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.data.shape[0]

    def __iter__(self):
        """The slices t[0], t[1], ... along the first axis."""
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        if self.data.size != 1:
            raise ValueError(f"the truth value of a tensor of shape {tuple(self.shape)} is "
                             f"ambiguous; use .any() or .all()")
        return bool(self.item())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        body = np.array2string(self.numpy(), separator=", ", prefix="tensor(")
        extras = []
        if self.dtype != DEFAULTS.float and self.dtype.kind == "f":
            extras.append(f"dtype={self.dtype}")
        if self.device != "cpu":
            extras.append(f"device='{self.device}'")
        if self._fn is not None:
            extras.append(f"grad_fn={type(self._fn).__name__}")
        elif self._requires_grad:
            extras.append("requires_grad=True")
        return f"tensor({body}{''.join(', ' + e for e in extras)})"

    # -- autodiff -------------------------------------------------------------------------
    def backward(self, grad=None, retain_graph: bool = False, create_graph: bool = False):
        """Add d(self)/d(leaf) into every leaf's `.grad`; see `minigrad.autograd.backward`."""
        autograd.backward(self, grad, retain_graph, create_graph)

    def detach_(self) -> "Tensor":
        """Cut this tensor off from the graph in place, as torch's detach_: it becomes a leaf
        that does not require grad (what it was computed from no longer gets its gradient)."""
        self._fn = None
        self._requires_grad = False
        return self

    def detach(self) -> "Tensor":
        """The same data (shared, not copied), cut off from the graph."""
        t = Tensor._from_array(self.data)
        recorder = _recorder()
        if recorder is not None:       # a step being captured: taken again at every replay
            recorder.constant(t, [self], (_same_array,))
        return t

    def retain_grad(self) -> None:
        """Keep `.grad` for this non-leaf tensor too after backward."""
        if not self._requires_grad:
            raise RuntimeError("retain_grad: this tensor does not require grad")
        self._retains_grad = True
        Tensor._hooks_used = True

    def register_hook(self, hook):
        """Call `hook(grad)` when this tensor's gradient is computed; a returned Tensor replaces
        the gradient. Returns a handle whose `.remove()` unregisters the hook."""
        if not self._requires_grad:
            raise RuntimeError("register_hook: this tensor does not require grad")
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        Tensor._hooks_used = True
        return _HookHandle(self, hook)

    # -- transfers and conversions --------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A host NumPy copy of this tensor's values (writing to it leaves the tensor alone)."""
        _report_read(self, "numpy()")
        host = backend_of(self.data).to_numpy(self.data)
        if isinstance(self.data, np.ndarray) and np.may_share_memory(host, self.data):
            host = host.copy()
        return host

    def __array__(self, dtype=None, copy=None):
        """`np.asarray(t)`: the tensor's own array when no copy is asked for, read-only when
        the tensor requires grad (the graph may have saved it for backward, and writing
        through it would silently corrupt gradients); `np.array(t)` copies."""
        _report_read(self, "np.asarray()")
        if backend_of(self.data) is not CPU:
            raise TypeError(f"cannot convert a tensor on {self.device} to NumPy implicitly; "
                            f"call .numpy() or .cpu()")
        array = self.data if dtype is None else self.data.astype(dtype)
        if array is not self.data:
            return array                                     # astype made a copy already
        if copy:
            return array.copy()
        if self._requires_grad:
            array = array.view()
            array.flags.writeable = False
        return array

    def item(self):
        """The value of a single-element tensor as a Python number."""
        if self.data.size != 1:
            raise ValueError(f"item: only single-element tensors convert to a Python number, "
                             f"got shape {tuple(self.shape)}")
        return self.numpy().reshape(()).item()

    def tolist(self):
        """The values as nested Python lists (a number for a 0-d tensor)."""
        return self.numpy().tolist()

    # -- the Python number protocol: a single-element tensor stands for its number --------
    def _number(self, op: str):
        if self.data.size != 1:
            raise ValueError(f"{op}: only single-element tensors convert to a Python number, "
                             f"got shape {tuple(self.shape)}")
        return self.item()

    def __float__(self) -> float:
        """float(t), and through it math.exp(t) and friends."""
        return float(self._number("float()"))

    def __int__(self) -> int:
        """int(t), truncating toward zero as int(2.7) does."""
        return int(self._number("int()"))

    def __index__(self) -> int:
        """operator.index(t) for integer (and bool) tensors, so range(t) and lst[t] work;
        floating tensors are refused, as PyTorch does."""
        if self.data.dtype.kind not in "biu":
            raise TypeError(f"only integer tensors of a single element can be used as an "
                            f"index, got dtype {self.dtype} and shape {tuple(self.shape)}")
        return int(self._number("index"))

    def __format__(self, spec: str) -> str:
        """f"{loss:.3f}": a single-element tensor formats as its number; a larger tensor
        formats each element with `spec` inside tensor([...]); an empty spec gives str(t)
        (a 0-d tensor: its number, as PyTorch prints it)."""
        if not spec:
            return format(self.item()) if self.data.ndim == 0 else str(self)
        if self.data.size == 1:
            return format(self.item(), spec)
        body = np.array2string(self.numpy(), separator=", ", prefix="tensor(",
                               formatter={"all": lambda v: format(v.item(), spec)})
        return f"tensor({body})"

    def to(self, *where, device=None, dtype=None) -> "Tensor":
        """This tensor on `device` ("cpu", "cuda", "cuda:1") and/or in `dtype`, given by keyword
        or positionally as PyTorch's `to` takes them (`t.to("cuda")`, `t.to(mg.float64)`,
        `t.to("cpu", "float64")`, `t.to(other)` for other's device and dtype); differentiable."""
        for arg in where:
            if isinstance(arg, Tensor):
                device, dtype = arg.device, arg.dtype
            elif _is_dtype(arg):
                dtype = arg
            else:
                device = arg
        out = self if dtype is None else ops.astype(self, dtype)
        return out if device is None else ops.to_device(out, device)

    def cpu(self) -> "Tensor":
        """This tensor on the host ("cpu"); differentiable."""
        return self.to("cpu")

    def cuda(self, index: int = 0) -> "Tensor":
        """This tensor on GPU `index` ("cuda:index", needs CuPy); differentiable."""
        return self.to(f"cuda:{index}")

    def astype(self, dtype) -> "Tensor":
        """A copy with another dtype; differentiable between floating dtypes."""
        return ops.astype(self, dtype)

    def float(self) -> "Tensor":
        """A float32 copy (this tensor itself when already float32); differentiable."""
        return self.astype(np.float32)

    def double(self) -> "Tensor":
        """A float64 copy (this tensor itself when already float64); differentiable."""
        return self.astype(np.float64)

    def half(self) -> "Tensor":
        """A float16 copy (this tensor itself when already float16); differentiable."""
        return self.astype(np.float16)

    def long(self) -> "Tensor":
        """An int64 copy (PyTorch's `long`); no gradient."""
        return self.astype(np.int64)

    def int(self) -> "Tensor":
        """An int32 copy (PyTorch's `int`); no gradient."""
        return self.astype(np.int32)

    def bool(self) -> "Tensor":
        """A bool copy, True where nonzero; no gradient."""
        return self.astype(np.bool_)

    def clone(self) -> "Tensor":
        """A copy that stays in the graph (gradient 1); see `minigrad.clone`."""
        return ops.clone(self)

    def contiguous(self) -> "Tensor":
        """This tensor (PyTorch's `contiguous`: minigrad's operations accept any layout)."""
        return self

    # PyTorch's new_*: a new leaf with this tensor's dtype and device unless given
    def new_full(self, size, fill_value, *, dtype=None, device=None,
                 requires_grad: bool = False) -> "Tensor":
        """A new tensor of `size` (an int or a tuple) filled with `fill_value`, with this
        tensor's dtype and device unless `dtype`/`device` say otherwise (torch's `new_full`)."""
        shape = _new_size("new_full", (size,))
        dtype = self.dtype if dtype is None else _normalise_dtype(dtype)
        return Tensor(np.full(shape, fill_value, dtype=dtype), requires_grad=requires_grad,
                      device=self.device if device is None else device)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False) -> "Tensor":
        """Zeros of `size` (`new_zeros(2, 3)` or `new_zeros((2, 3))`), this tensor's dtype and
        device unless given (torch's `new_zeros`)."""
        return self.new_full(_new_size("new_zeros", size), 0, dtype=dtype, device=device,
                             requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad: bool = False) -> "Tensor":
        """Ones of `size`, this tensor's dtype and device unless given (torch's `new_ones`)."""
        return self.new_full(_new_size("new_ones", size), 1, dtype=dtype, device=device,
                             requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False) -> "Tensor":
        """As `new_zeros` (minigrad never hands out uninitialised memory)."""
        return self.new_full(_new_size("new_empty", size), 0, dtype=dtype, device=device,
                             requires_grad=requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None,
                   requires_grad: bool = False) -> "Tensor":
        """A copy of `data` (numbers, lists, arrays or a Tensor, never sharing its memory),
        with this tensor's dtype and device unless given (torch's `new_tensor`)."""
        host = data.numpy() if isinstance(data, Tensor) else data
        dtype = self.dtype if dtype is None else _normalise_dtype(dtype)
        return Tensor(np.array(host, dtype=dtype, copy=True), requires_grad=requires_grad,
                      device=self.device if device is None else device)

    # -- operators ------------------------------------------------------------------------

    def __add__(self, other): return ops.add(self, other)
    def __sub__(self, other): return ops.sub(self, other)
    def __mul__(self, other): return ops.mul(self, other)
    def __truediv__(self, other): return ops.true_divide(self, other)
    def __matmul__(self, other): return ops.matmul(self, other)
    def __getitem__(self, index): return ops.getitem(self, index)
    def __radd__(self, other): return ops.add(other, self)
    def __rsub__(self, other): return ops.sub(other, self)
    def __rmul__(self, other): return ops.mul(other, self)
    def __rtruediv__(self, other): return ops.true_divide(other, self)
    def __floordiv__(self, other): return ops.floor_divide(self, other)
    def __rfloordiv__(self, other): return ops.floor_divide(other, self)
    def __mod__(self, other): return ops.remainder(self, other)
    def __rmod__(self, other): return ops.remainder(other, self)
    def __pow__(self, other): return ops.pow(self, other)
    def __rpow__(self, other): return ops.pow(other, self)
    def __rmatmul__(self, other): return ops.matmul(other, self)
    def __neg__(self): return ops.neg(self)
    def __pos__(self): return self
    def __abs__(self): return ops.abs(self)

    # -- in-place changes: never recorded; see inplace.py for the check they feed -----------
    def __setitem__(self, index, value):
        """self[index] = value, in place (only outside the graph: see `add_`)."""
        if isinstance(index, Tensor):
            index = index.data
        elif isinstance(index, tuple):
            index = tuple(i.data if isinstance(i, Tensor) else i for i in index)
        operand = self._operand(value, "__setitem__")
        return self._change("__setitem__", lambda a: a.__setitem__(index, operand))

    def add_(self, other, alpha=1) -> "Tensor":
        """self += alpha · other, in place; returns self. Allowed on tensors that do not require
        grad, and under `no_grad` (as an optimizer step); a graph that saved this tensor then
        refuses to run backward instead of computing a wrong gradient."""
        operand = self._operand(other, "add_")
        return self._change("add_", lambda a: a.__iadd__(operand if alpha == 1
                                                         else alpha * operand))

    def sub_(self, other, alpha=1) -> "Tensor":
        """self −= alpha · other, in place; returns self (see `add_`)."""
        operand = self._operand(other, "sub_")
        return self._change("sub_", lambda a: a.__isub__(operand if alpha == 1
                                                         else alpha * operand))

    def mul_(self, other) -> "Tensor":
        """self *= other, in place; returns self (see `add_`)."""
        operand = self._operand(other, "mul_")
        return self._change("mul_", lambda a: a.__imul__(operand))

    def div_(self, other) -> "Tensor":
        """self /= other, in place; returns self (see `add_`)."""
        operand = self._operand(other, "div_")
        return self._change("div_", lambda a: a.__itruediv__(operand))

    def __iadd__(self, other):
        """self += other, in place as PyTorch's (see `_augmented`)."""
        return self._augmented(other, ops.add, self.add_)

    def __isub__(self, other):
        """self −= other, in place as PyTorch's (`p -= lr * p.grad` under no_grad)."""
        return self._augmented(other, ops.sub, self.sub_)

    def __imul__(self, other):
        """self *= other, in place as PyTorch's (see `_augmented`)."""
        return self._augmented(other, ops.mul, self.mul_)

    def __itruediv__(self, other):
        """self /= other, in place as PyTorch's (see `_augmented`)."""
        return self._augmented(other, ops.true_divide, self.div_)

    def _augmented(self, other, recorded, in_place) -> "Tensor":
        """x += y and the like: in place, as PyTorch's, so that every name bound to x sees the
        change. A tensor made by a recorded operation cannot change in place (minigrad records
        none), so there the name is bound to the out-of-place result instead: the same value,
        which other names bound to the old tensor do not see. A leaf that requires grad, with
        grad on, raises (as in PyTorch)."""
        if self._fn is not None and _grad_state.mode.grad_enabled:
            return recorded(self, other)
        return in_place(other)

    def copy_(self, src) -> "Tensor":
        """Copy src's values into self (broadcast to self's shape), in place; returns self."""
        operand = self._operand(src, "copy_")
        return self._change("copy_", lambda a: a.__setitem__(Ellipsis, operand))

    def masked_fill_(self, mask, value) -> "Tensor":
        """`value` where the bool `mask` (broadcasting to this tensor's shape) is True, in
        place; returns self (see `add_`)."""
        filled = self._same_shape(ops.masked_fill(self.detach(), mask, value), "masked_fill_")
        return self._change("masked_fill_", lambda a: a.__setitem__(Ellipsis, filled))

    def tril_(self, k=0, *, diagonal=None) -> "Tensor":
        """The lower triangle kept, 0 above, in place; returns self (see `tril`, `add_`)."""
        kept = ops.tril(self.detach(), k, diagonal=diagonal).data
        return self._change("tril_", lambda a: a.__setitem__(Ellipsis, kept))

    def triu_(self, k=0, *, diagonal=None) -> "Tensor":
        """The upper triangle kept, 0 below, in place; returns self (see `triu`, `add_`)."""
        kept = ops.triu(self.detach(), k, diagonal=diagonal).data
        return self._change("triu_", lambda a: a.__setitem__(Ellipsis, kept))

    def uniform_(self, a: float = 0.0, b: float = 1.0) -> "Tensor":
        """Fill with U(a, b) samples from minigrad's RNG, in place; returns self (under
        no_grad for a parameter, as PyTorch's; see `add_`)."""
        draw = _draw(self, "uniform", "uniform_")
        return self._change("uniform_", lambda x: x.__setitem__(Ellipsis, a + (b - a) * draw))

    def bernoulli(self, p: float | None = None) -> "Tensor":
        """torch.Tensor.bernoulli: 1 with probability p (this tensor's elements, in [0, 1],
        unless a number is given), else 0, in this tensor's dtype and device; see
        `minigrad.bernoulli`."""
        return creation.bernoulli(self, p)

    def bernoulli_(self, p=0.5) -> "Tensor":
        """torch.Tensor.bernoulli_: each element replaced by 1 with probability p (a number, or
        a tensor of this shape), else 0, in place; returns self (see `add_`)."""
        if isinstance(p, Tensor):
            if tuple(p.shape) != tuple(self.shape):
                raise RuntimeError(f"bernoulli_: probabilities of shape {tuple(p.shape)} for a "
                                   f"tensor of shape {tuple(self.shape)}; give one per element")
            if self.data.dtype.kind != "f":
                raise TypeError(f"bernoulli_: needs a floating tensor, got dtype "
                                f"{self.data.dtype}")
            drawn = creation.bernoulli(p.detach().astype(self.dtype)).data
        else:
            drawn = creation.bernoulli(self.detach(), p).data
        return self._change("bernoulli_", lambda x: x.__setitem__(Ellipsis, drawn))

    def normal_(self, mean: float = 0.0, std: float = 1.0) -> "Tensor":
        """Fill with N(mean, std²) samples from minigrad's RNG, in place; returns self."""
        draw = _draw(self, "normal", "normal_")
        return self._change("normal_", lambda x: x.__setitem__(Ellipsis, mean + std * draw))

    def _same_shape(self, t: "Tensor", op: str):
        if tuple(t.shape) != tuple(self.shape):
            raise RuntimeError(f"{op}: the mask broadcasts the tensor {tuple(self.shape)} to "
                               f"{tuple(t.shape)}; an in-place change keeps the shape")
        return t.data

    def fill_(self, value) -> "Tensor":
        """Set every element to `value`, in place; returns self."""
        return self._change("fill_", lambda a: a.fill(value))

    def zero_(self) -> "Tensor":
        """Set every element to 0, in place; returns self (e.g. `t.grad.zero_()`)."""
        return self.fill_(0)

    def _operand(self, value, op: str):
        """An in-place operand as an array on self's device, or a Python number."""
        if isinstance(value, Tensor):
            if value.device != self.device:
                raise RuntimeError(f"{op}: operand on {value.device}, tensor on {self.device}")
            return value.data
        if is_array(value) and backend_of(value) is not backend_of(self.data):
            raise RuntimeError(f"{op}: operand array is not on {self.device}")
        return value

    def _change(self, op: str, change) -> "Tensor":
        if self._requires_grad and _grad_state.mode.grad_enabled:
            raise RuntimeError(f"{op}: in-place change of a tensor that requires grad (shape "
                               f"{tuple(self.shape)}); minigrad records no in-place operations. "
                               f"Use the out-of-place form, or wrap the change in "
                               f"minigrad.no_grad() (as an optimizer step does)")
        shape = self.data.shape
        try:
            change(self.data)
        except (ValueError, TypeError, IndexError) as error:
            raise restated(error, f"{op}: {error} (tensor shape {tuple(shape)}, "
                                  f"{self.dtype})") from error
        inplace.mark_changed(self)
        return self

    def __lt__(self, other): return ops.less(self, other)
    def __le__(self, other): return ops.less_equal(self, other)
    def __gt__(self, other): return ops.greater(self, other)
    def __ge__(self, other): return ops.greater_equal(self, other)
    def __eq__(self, other): return ops.equal(self, other)
    def __ne__(self, other): return ops.not_equal(self, other)
    def __invert__(self): return ops.bitwise_not(self)
    def __and__(self, other): return ops.bitwise_and(self, other)
    def __or__(self, other): return ops.bitwise_or(self, other)
    def __xor__(self, other): return ops.bitwise_xor(self, other)
    def __rand__(self, other): return ops.bitwise_and(other, self)
    def __ror__(self, other): return ops.bitwise_or(other, self)
    def __rxor__(self, other): return ops.bitwise_xor(other, self)

    # -- methods: each calls the function of the same name in minigrad, which documents it ---
    def sum(self, axis=None, keepdims=False, *, dim=None, dtype=None, keepdim=None):
        """Σ over `axis` (or `dim`; None = all axes), in `dtype` if given; see `minigrad.sum`."""
        return ops.sum(self, axis, keepdims, dim=dim, dtype=dtype, keepdim=keepdim)

    def mean(self, axis=None, keepdims=False, *, dim=None, dtype=None, keepdim=None):
        """The average over `axis` (or `dim`; None = all axes); see `minigrad.mean`."""
        return ops.mean(self, axis, keepdims, dim=dim, dtype=dtype, keepdim=keepdim)

    def max(self, *axis, **spelling):
        """The values over `axis=` (NumPy's), or (values, indices) along `dim=` (PyTorch's);
        `x.max(1)` alone is ambiguous and raises; see `minigrad.max`."""
        return ops.max(self, *axis, **spelling)

    def min(self, *axis, **spelling):
        """The values over `axis=`, or (values, indices) along `dim=`; see `minigrad.min`."""
        return ops.min(self, *axis, **spelling)

    def var(self, axis=None, *positional, **named):
        """Σ (x − x̄)² / (n − ddof) over `axis` (or `dim`); ddof 0 (NumPy's) unless the call
        says `dim=`/`keepdim=` (then 1, PyTorch's); see `minigrad.var`."""
        return ops.var(self, axis, *positional, **named)

    def std(self, axis=None, *positional, **named):
        """√var over `axis` (or `dim`), ddof as in `var`; see `minigrad.std`."""
        return ops.std(self, axis, *positional, **named)

    def logsumexp(self, axis=LAST_AXIS, keepdims=False, *, dim=None, keepdim=None):
        """log Σ exp(x) over `axis` (or `dim`), without overflow; see `minigrad.logsumexp`."""
        return ops.logsumexp(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def any(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Is any element nonzero along `axis` (or `dim`)? A bool tensor, no gradient."""
        return ops.any(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def all(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Are all elements nonzero along `axis` (or `dim`)? A bool tensor, no gradient."""
        return ops.all(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def amax(self, axis=None, keepdims=None, *, dim=None, keepdim=None):
        """The maximum's values over `axis` (or `dim`); see `minigrad.amax`."""
        return ops.amax(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def amin(self, axis=None, keepdims=None, *, dim=None, keepdim=None):
        """The minimum's values over `axis` (or `dim`); see `minigrad.amin`."""
        return ops.amin(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def reshape(self, *shape):
        """The same elements in another shape (row-major; one entry may be -1)."""
        return ops.reshape(self, *shape)

    def reshape_as(self, other: "Tensor") -> "Tensor":
        """This tensor in `other`'s shape (PyTorch's reshape_as and view_as)."""
        return ops.reshape(self, other.shape)

    view_as = reshape_as

    def expand_as(self, other: "Tensor") -> "Tensor":
        """Broadcast to `other`'s shape (PyTorch's expand_as)."""
        return ops.broadcast_to(self, other.shape)

    def type_as(self, other: "Tensor") -> "Tensor":
        """This tensor in `other`'s dtype (PyTorch's type_as)."""
        return ops.astype(self, other.dtype)

    def type(self, dtype=None) -> "Tensor":
        """This tensor in `dtype` (PyTorch's `type(dtype)`, as `astype`). Without a dtype
        PyTorch returns a type name such as 'torch.FloatTensor', which minigrad has not: that
        raises TypeError, pointing to `dtype`."""
        if dtype is None:
            raise TypeError(f"type: minigrad has no tensor type names; the dtype is "
                            f"x.dtype ({self.dtype}); x.type(dtype) converts")
        return ops.astype(self, dtype)

    def t(self) -> "Tensor":
        """PyTorch's t(): a matrix transposed; a 0-d or 1-D tensor as it is."""
        if self.ndim > 2:
            raise ValueError(f"t: takes a tensor of at most 2 axes, got shape "
                             f"{tuple(self.shape)}; use transpose(d0, d1) or mT")
        return self if self.ndim < 2 else ops.swapaxes(self, 0, 1)

    @property
    def mT(self) -> "Tensor":
        """The last two axes swapped (PyTorch's mT, NumPy's matrix_transpose)."""
        if self.ndim < 2:
            raise ValueError(f"mT: needs at least 2 axes, got shape {tuple(self.shape)}")
        return ops.swapaxes(self, -2, -1)

    def mm(self, other):
        """Matrix product of two matrices; see `minigrad.mm`."""
        return ops.mm(self, other)

    def bmm(self, other):
        """Batched matrix product; see `minigrad.bmm`."""
        return ops.bmm(self, other)

    def view(self, *shape):
        """The same as `reshape` (PyTorch's name)."""
        return ops.reshape(self, *shape)

    def flatten(self, start_dim=0, end_dim=-1):
        """The axes start_dim … end_dim merged (all by default: shape (size,)); see
        `minigrad.flatten`."""
        return ops.flatten(self, start_dim, end_dim)

    def transpose(self, *axes):
        """Permute the axes (NumPy's meaning); with none, reverse them as `T` does."""
        return ops.transpose(self, *axes)

    def swapaxes(self, axis1, axis2):
        """Exchange two axes: (A, B, C) with (0, 2) gives (C, B, A)."""
        return ops.swapaxes(self, axis1, axis2)

    def squeeze(self, axis=None, *, dim=None):
        """Drop size-1 axes: `axis` (or `dim`), or all of them when None."""
        return ops.squeeze(self, axis, dim=dim)

    def unsqueeze(self, axis=None, *, dim=None):
        """Insert a size-1 axis at `axis` (or `dim`): (3, 4) with 1 gives (3, 1, 4)."""
        return ops.unsqueeze(self, axis, dim=dim)

    def broadcast_to(self, shape):
        """This tensor repeated to `shape` by NumPy's broadcasting rules."""
        return ops.broadcast_to(self, shape)

    def exp(self):
        """eˣ, elementwise."""
        return ops.exp(self)

    def tanh(self):
        """tanh(x), elementwise."""
        return ops.tanh(self)

    def sigmoid(self):
        """σ(x) = 1 / (1 + e⁻ˣ), elementwise."""
        return ops.sigmoid(self)

    def relu(self):
        """max(x, 0), elementwise (gradient 0 at 0)."""
        return ops.relu(self)

    def log(self):
        """The natural logarithm, elementwise."""
        return ops.log(self)

    def sqrt(self):
        """The square root, elementwise."""
        return ops.sqrt(self)

    def abs(self):
        """|x|, elementwise (gradient 0 at 0)."""
        return ops.abs(self)

    def gelu(self, approximate="none"):
        """GELU, x·Φ(x) (or its tanh approximation); see `minigrad.gelu`."""
        return ops.gelu(self, approximate)

    def softmax(self, axis=LAST_AXIS, *, dim=None):
        """eˣ / Σ eˣ along `axis` (or `dim`), stable; see `minigrad.softmax`."""
        return ops.softmax(self, axis, dim=dim)

    def log_softmax(self, axis=LAST_AXIS, *, dim=None):
        """log softmax along `axis` (or `dim`), stable; see `minigrad.log_softmax`."""
        return ops.log_softmax(self, axis, dim=dim)

    def masked_fill(self, mask, value):
        """`value` where the bool `mask` (broadcastable) is True, this tensor elsewhere."""
        return ops.masked_fill(self, mask, value)

    def matmul(self, other):
        """The matrix product self @ other (1-D, 2-D, or batched with broadcasting)."""
        return ops.matmul(self, other)

    def clip(self, lo=None, hi=None, *, min=None, max=None):
        """This tensor limited to [lo, hi] (or min=/max=); either bound may be None."""
        return ops.clip(self, lo, hi, min=min, max=max)

    def clamp_min(self, min):
        """max(x, min): `clamp` with a lower bound only."""
        return ops.clip(self, min, None)

    def clamp_max(self, max):
        """min(x, max): `clamp` with an upper bound only."""
        return ops.clip(self, None, max)

    def where(self, condition, other):
        """This tensor where `condition`, else `other` (PyTorch's x.where(cond, y))."""
        return ops.where(condition, self, other)

    def neg(self):
        """−x (PyTorch's name for unary minus)."""
        return ops.neg(self)

    negative = neg

    def add(self, other, *, alpha=1):
        """x + alpha·other; see `minigrad.add`."""
        return ops.add(self, other, alpha=alpha)

    def sub(self, other, *, alpha=1):
        """x − alpha·other; see `minigrad.sub`."""
        return ops.sub(self, other, alpha=alpha)

    subtract = sub

    def mul(self, other):
        """x ⊙ other; see `minigrad.mul`."""
        return ops.mul(self, other)

    multiply = mul

    def true_divide(self, other):
        """x / other, always a float; see `minigrad.true_divide`."""
        return ops.true_divide(self, other)

    def dot(self, other):
        """Σ x_i other_i of two 1-D tensors; see `minigrad.dot`."""
        return ops.dot(self, other)

    def trace(self):
        """Σ x[i, i] of a 2-D tensor; see `minigrad.trace`."""
        return ops.trace(self)

    def pow(self, exponent):
        """x ** exponent; see `minigrad.pow`."""
        return ops.pow(self, exponent)

    def eq(self, other):
        """x == other, elementwise: a bool tensor (PyTorch's method name)."""
        return ops.equal(self, other)

    def ne(self, other):
        """x != other, elementwise: a bool tensor."""
        return ops.not_equal(self, other)

    def lt(self, other):
        """x < other, elementwise: a bool tensor."""
        return ops.less(self, other)

    def le(self, other):
        """x <= other, elementwise: a bool tensor."""
        return ops.less_equal(self, other)

    def gt(self, other):
        """x > other, elementwise: a bool tensor."""
        return ops.greater(self, other)

    def ge(self, other):
        """x >= other, elementwise: a bool tensor."""
        return ops.greater_equal(self, other)

    def clamp(self, min=None, max=None):
        """This tensor limited to [min, max] (numbers or Tensors); see `minigrad.clamp`."""
        return ops.clip(self, min, max)

    def split(self, split_size_or_sections, dim=0, *, axis=None):
        """PyTorch's `x.split`: parts of `split_size_or_sections` elements along `dim` (an int:
        that many each, the last the rest; a list: the sizes); with `axis=`, NumPy's split (an
        int: the number of equal parts). See `minigrad.split`."""
        if axis is not None:
            return ops.split(self, split_size_or_sections, axis)
        return ops.split(self, split_size_or_sections, dim=dim)

    def chunk(self, chunks, dim=0):
        """At most `chunks` parts of ⌈n / chunks⌉ along `dim`; see `minigrad.chunk`."""
        return ops.chunk(self, chunks, dim)

    def unbind(self, dim=0):
        """The slices along `dim`, each without that axis; see `minigrad.unbind`."""
        return ops.unbind(self, dim)

    def permute(self, *dims):
        """The axes in the order `dims`; see `minigrad.permute`."""
        return ops.permute(self, *dims)

    def expand(self, *sizes):
        """Broadcast to `sizes` (-1 keeps an axis); see `minigrad.expand`."""
        return ops.expand(self, *sizes)

    def norm(self, p=2, dim=None, keepdim=False):
        """The p-norm over `dim` (all axes when None; p "fro": 2); see `minigrad.norm`."""
        return ops.norm(self, p, dim, keepdim)

    def reciprocal(self):
        """1/x, elementwise."""
        return ops.reciprocal(self)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        """NaN and ±inf replaced by numbers; see `minigrad.nan_to_num`."""
        return ops.nan_to_num(self, nan, posinf, neginf)

    def logit(self, eps=None):
        """log(x / (1 − x)); see `minigrad.logit`."""
        return ops.logit(self, eps)

    def outer(self, other):
        """The outer product with a 1-D `other`; see `minigrad.outer`."""
        return ops.outer(self, other)

    def argmax(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Index of the largest element along `axis` (or `dim`); int64, no gradient."""
        return ops.argmax(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def argmin(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Index of the smallest element along `axis` (or `dim`); int64, no gradient."""
        return ops.argmin(self, axis, keepdims, dim=dim, keepdim=keepdim)

    # -- rearranging ----------------------------------------------------------------------------
    def flip(self, axis=None, *, dims=None):
        """Reverse the order along `axis` (or PyTorch's `dims`); see `minigrad.flip`."""
        return ops.flip(self, axis, dims=dims)

    def roll(self, shift=None, axis=None, *, shifts=None, dims=None):
        """Shift cyclically along `axis`; see `minigrad.roll`."""
        return ops.roll(self, shift, axis, shifts=shifts, dims=dims)

    def index_fill(self, dim, index, value):
        """`value` at the positions `index` along `dim`; see `minigrad.index_fill`."""
        return ops.index_fill(self, dim, index, value)

    def tril(self, k=0, *, diagonal=None):
        """The lower triangle of the last two axes, 0 above; see `minigrad.tril`."""
        return ops.tril(self, k, diagonal=diagonal)

    def triu(self, k=0, *, diagonal=None):
        """The upper triangle of the last two axes, 0 below; see `minigrad.triu`."""
        return ops.triu(self, k, diagonal=diagonal)

    def tile(self, reps):
        """Whole-tensor copies, numpy.tile (PyTorch's `x.repeat(*sizes)`); see `minigrad.tile`."""
        return ops.tile(self, reps)

    def repeat(self, *repeats, axis=None, dim=None):
        """Each element repeated in place along `axis=` (NumPy's `a.repeat`; `dim=` as
        `repeat_interleave`); see `minigrad.repeat`. Without either keyword the call is
        ambiguous (NumPy repeats elements, PyTorch's `x.repeat(*sizes)` is `tile`) and raises."""
        if axis is None and dim is None:
            given = ", ".join(map(repr, repeats))
            raise TypeError(
                f"repeat: x.repeat({given}) means different things in NumPy (each element "
                f"repeated) and PyTorch (whole copies, numpy.tile). Write x.tile({tuple(repeats)!r}) "
                f"for PyTorch's, x.repeat({repeats[0] if repeats else 2!r}, axis=...) or "
                f"x.repeat_interleave(...) for NumPy's (mg.repeat(x, n) repeats the flattened "
                f"tensor)")
        if len(repeats) != 1:
            raise TypeError(f"repeat: with axis= or dim= give one repeat count (an int or a "
                            f"list), got {len(repeats)}")
        return ops.repeat(self, repeats[0], axis, dim=dim)

    def repeat_interleave(self, repeats, dim=None):
        """Each element repeated `repeats` times along `dim`; see `minigrad.repeat`."""
        return ops.repeat(self, repeats, dim)

    def diagonal(self, offset=0, axis1=0, axis2=1, *, dim1=None, dim2=None):
        """The diagonal of two axes, moved to the end; see `minigrad.diagonal`."""
        return ops.diagonal(self, offset, axis1, axis2, dim1=dim1, dim2=dim2)

    def diag(self, k=0):
        """A 1-D tensor as a diagonal matrix, or a matrix's diagonal; see `minigrad.diag`."""
        return ops.diag(self, k)

    def unfold(self, dimension, size, step):
        """Sliding windows along `dimension`; see `minigrad.unfold`."""
        return ops.unfold(self, dimension, size, step)

    def unflatten(self, dim, sizes):
        """Axis `dim` split into `sizes`; see `minigrad.unflatten`."""
        return ops.unflatten(self, dim, sizes)

    # -- rounding, sign and remainders ----------------------------------------------------------
    def floor(self):
        """⌊x⌋ elementwise, gradient 0; see `minigrad.floor`."""
        return ops.floor(self)

    def ceil(self):
        """⌈x⌉ elementwise, gradient 0; see `minigrad.ceil`."""
        return ops.ceil(self)

    def trunc(self):
        """x rounded toward zero, gradient 0; see `minigrad.trunc`."""
        return ops.trunc(self)

    def round(self, decimals=0):
        """x rounded to `decimals` places, halves to even, gradient 0; see `minigrad.round`."""
        return ops.round(self, decimals)

    def sign(self):
        """−1, 0 or 1 by the sign of x, gradient 0; see `minigrad.sign`."""
        return ops.sign(self)

    def copysign(self, other):
        """|x| with the sign of `other`; see `minigrad.copysign`."""
        return ops.copysign(self, other)

    def fmod(self, other):
        """The remainder with the sign of x (C's fmod); see `minigrad.fmod`."""
        return ops.fmod(self, other)

    def remainder(self, other):
        """The remainder with the sign of `other` (x % other); see `minigrad.remainder`."""
        return ops.remainder(self, other)

    def floor_divide(self, other):
        """⌊x / other⌋ (x // other), gradient 0; see `minigrad.floor_divide`."""
        return ops.floor_divide(self, other)

    def div(self, other, rounding_mode=None):
        """x / other, or rounded with rounding_mode "trunc" / "floor"; see `minigrad.div`."""
        return ops.divide(self, other, rounding_mode)

    # -- reductions -----------------------------------------------------------------------------
    def prod(self, axis=None, keepdims=False, *, dim=None, dtype=None, keepdim=None):
        """Π over `axis` (or `dim`; None = all axes); see `minigrad.prod`."""
        return ops.prod(self, axis, keepdims, dim=dim, dtype=dtype, keepdim=keepdim)

    def cumsum(self, axis=None, *, dim=None, dtype=None):
        """Running sums along `axis` (or `dim`); see `minigrad.cumsum`."""
        return ops.cumsum(self, axis, dim=dim, dtype=dtype)

    def cumprod(self, axis=None, *, dim=None, dtype=None):
        """Running products along `axis` (or `dim`); see `minigrad.cumprod`."""
        return ops.cumprod(self, axis, dim=dim, dtype=dtype)

    def cummax(self, axis=None, *, dim=None):
        """(running maxima, their positions) along `axis` (or `dim`); see `minigrad.cummax`."""
        return ops.cummax(self, axis, dim=dim)

    def cummin(self, axis=None, *, dim=None):
        """(running minima, their positions) along `axis` (or `dim`); see `minigrad.cummin`."""
        return ops.cummin(self, axis, dim=dim)

    def logcumsumexp(self, axis=None, *, dim=None):
        """Running log Σ exp along `axis` (or `dim`); see `minigrad.logcumsumexp`."""
        return ops.logcumsumexp(self, axis, dim=dim)

    # -- reading and writing at positions -------------------------------------------------------
    def gather(self, dim, index):
        """Values at `index` along `dim`, torch.gather; see `minigrad.gather`."""
        return ops.gather(self, dim, index)

    def take_along_axis(self, indices, axis=-1):
        """Values at `indices` along `axis`, numpy.take_along_axis; see
        `minigrad.take_along_axis`."""
        return ops.take_along_axis(self, indices, axis)

    def index_select(self, dim, index):
        """The slices at `index` along `dim`; see `minigrad.index_select`."""
        return ops.index_select(self, dim, index)

    def masked_select(self, mask):
        """The elements where `mask` is True, as 1-D; see `minigrad.masked_select`."""
        return ops.masked_select(self, mask)

    def nonzero(self, *, as_tuple=None):
        """Where this tensor is nonzero: NumPy's tuple with as_tuple=True, PyTorch's
        (N, ndim) with as_tuple=False; see `minigrad.nonzero`."""
        return ops.nonzero(self, as_tuple=as_tuple)

    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        """A copy with src (or `value`) written at `index` along `dim` (or, with reduce="add" /
        "multiply", combined with it); see `minigrad.scatter`."""
        return ops.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add(self, dim, index, src):
        """A copy with src added at `index` along `dim`; see `minigrad.scatter_add`."""
        return ops.scatter_add(self, dim, index, src)

    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        """A copy with src reduced into `index` along `dim`; see `minigrad.scatter_reduce`."""
        return ops.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)

    # -- elementary functions -------------------------------------------------------------------
    def sin(self):
        """sin x, elementwise; see `minigrad.sin`."""
        return ops.sin(self)

    def cos(self):
        """cos x, elementwise; see `minigrad.cos`."""
        return ops.cos(self)

    def tan(self):
        """tan x, elementwise; see `minigrad.tan`."""
        return ops.tan(self)

    def arcsin(self):
        """arcsin x, elementwise; see `minigrad.arcsin`."""
        return ops.arcsin(self)

    def arccos(self):
        """arccos x, elementwise; see `minigrad.arccos`."""
        return ops.arccos(self)

    def arctan(self):
        """arctan x, elementwise; see `minigrad.arctan`."""
        return ops.arctan(self)

    def sinh(self):
        """sinh x, elementwise; see `minigrad.sinh`."""
        return ops.sinh(self)

    def cosh(self):
        """cosh x, elementwise; see `minigrad.cosh`."""
        return ops.cosh(self)

    def arcsinh(self):
        """arsinh x, elementwise; see `minigrad.arcsinh`."""
        return ops.arcsinh(self)

    def arccosh(self):
        """arcosh x, elementwise; see `minigrad.arccosh`."""
        return ops.arccosh(self)

    def arctanh(self):
        """artanh x, elementwise; see `minigrad.arctanh`."""
        return ops.arctanh(self)

    def log2(self):
        """log₂ x, elementwise; see `minigrad.log2`."""
        return ops.log2(self)

    def log10(self):
        """log₁₀ x, elementwise; see `minigrad.log10`."""
        return ops.log10(self)

    def log1p(self):
        """log(1 + x), accurate for tiny x, elementwise; see `minigrad.log1p`."""
        return ops.log1p(self)

    def expm1(self):
        """eˣ − 1, accurate for tiny x, elementwise; see `minigrad.expm1`."""
        return ops.expm1(self)

    def exp2(self):
        """2ˣ, elementwise; see `minigrad.exp2`."""
        return ops.exp2(self)

    def rsqrt(self):
        """1/√x, elementwise; see `minigrad.rsqrt`."""
        return ops.rsqrt(self)

    def square(self):
        """x², elementwise; see `minigrad.square`."""
        return ops.square(self)

    def erf(self):
        """the error function, elementwise; see `minigrad.erf`."""
        return ops.erf(self)

    def erfc(self):
        """1 − erf(x), accurate in the tail, elementwise; see `minigrad.erfc`."""
        return ops.erfc(self)

    def asin(self):
        """PyTorch's name for `arcsin`; see `minigrad.arcsin`."""
        return ops.arcsin(self)

    def acos(self):
        """PyTorch's name for `arccos`; see `minigrad.arccos`."""
        return ops.arccos(self)

    def atan(self):
        """PyTorch's name for `arctan`; see `minigrad.arctan`."""
        return ops.arctan(self)

    def asinh(self):
        """PyTorch's name for `arcsinh`; see `minigrad.arcsinh`."""
        return ops.arcsinh(self)

    def acosh(self):
        """PyTorch's name for `arccosh`; see `minigrad.arccosh`."""
        return ops.arccosh(self)

    def atanh(self):
        """PyTorch's name for `arctanh`; see `minigrad.arctanh`."""
        return ops.arctanh(self)

    def arctan2(self, other):
        """atan2(self, other), the angle of (other, self); see `minigrad.arctan2`."""
        return ops.arctan2(self, other)

    def atan2(self, other):
        """PyTorch's name for `arctan2`; see `minigrad.arctan2`."""
        return ops.arctan2(self, other)

    def logaddexp(self, other):
        """log(eˣ + e^other) without overflow; see `minigrad.logaddexp`."""
        return ops.logaddexp(self, other)

    def hypot(self, other):
        """√(x² + other²) without overflow; see `minigrad.hypot`."""
        return ops.hypot(self, other)

    def xlogy(self, other):
        """x·log(other), 0 where x = 0; see `minigrad.xlogy`."""
        return ops.xlogy(self, other)

    def lerp(self, end, weight):
        """x + weight·(end − x); see `minigrad.lerp`."""
        return ops.lerp(self, end, weight)

    # -- sorting --------------------------------------------------------------------------------
    def sort(self, *axis, **spelling):
        """Sorted along one axis: the values with `axis=` (NumPy's), (values, indices) with
        `dim=`, `descending=` or `stable=` (PyTorch's); see `minigrad.sort`."""
        return ops.sort(self, *axis, **spelling)

    def argsort(self, axis=LAST_AXIS, *, dim=None, descending=False, stable=True):
        """The positions that sort along `axis`, stable; see `minigrad.argsort`."""
        return ops.argsort(self, axis, dim=dim, descending=descending, stable=stable)

    def topk(self, k, dim=-1, largest=True, sorted=True):
        """(values, indices) of the k largest along `dim`; see `minigrad.topk`."""
        return ops.topk(self, k, dim, largest, sorted)

    def kthvalue(self, k, dim=-1, keepdim=False):
        """(value, index) of the k-th smallest along `dim`; see `minigrad.kthvalue`."""
        return ops.kthvalue(self, k, dim, keepdim)

    def median(self, dim=None, keepdim=False):
        """The lower median (of all, or (values, indices) along `dim`); see `minigrad.median`."""
        return ops.median(self, dim, keepdim)

    def nansum(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Σ with NaN counted as 0; see `minigrad.nansum`."""
        return ops.nansum(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def nanmean(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """The mean of the elements that are not NaN; see `minigrad.nanmean`."""
        return ops.nanmean(self, axis, keepdims, dim=dim, keepdim=keepdim)

    def count_nonzero(self, axis=None, *, dim=None):
        """How many elements are nonzero (int64); see `minigrad.count_nonzero`."""
        return ops.count_nonzero(self, axis, dim=dim)

    def diff(self, n=1, dim=-1, prepend=None, append=None):
        """The n-th forward difference along `dim`; see `minigrad.diff`."""
        return ops.diff(self, n, dim, prepend, append)

    # -- predicates -----------------------------------------------------------------------------
    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        """|x − other| ≤ atol + rtol·|other|, elementwise; see `minigrad.isclose`."""
        return ops.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        """Whether isclose holds everywhere (a Python bool); see `minigrad.allclose`."""
        return ops.allclose(self, other, rtol, atol, equal_nan)

    def isinf(self):
        """True where ±inf; see `minigrad.isinf`."""
        return ops.isinf(self)

    def isnan(self):
        """True where NaN; see `minigrad.isnan`."""
        return ops.isnan(self)

    def isfinite(self):
        """True where neither inf nor NaN; see `minigrad.isfinite`."""
        return ops.isfinite(self)


def _draw(t: Tensor, kind: str, op: str):
    """Random samples of t's shape, in its float dtype, on its device, from minigrad's RNG."""
    if t.data.dtype.kind != "f":
        raise TypeError(f"{op}: needs a floating tensor, got dtype {t.data.dtype}")
    backend, index = parse_device(t.device)
    return backend.random(kind, t.data.shape, t.data.dtype, index)


class ElementCount(int):
    """The number of elements of a tensor, as an int that is also callable.

    As an int it is NumPy's `a.size`; called, it answers PyTorch's `t.size()`: with no
    argument the shape tuple, with an axis d the length `shape[d]`.
    """

    def __new__(cls, count: int, shape: tuple[int, ...]):
        count_ = super().__new__(cls, count)
        count_._shape = tuple(shape)
        return count_

    def __call__(self, dim: int | None = None):
        """The shape (no argument), or the length of axis `dim`."""
        if dim is None:
            return self._shape
        ndim = len(self._shape)
        if not isinstance(dim, numbers.Integral) or not -ndim <= dim < ndim:
            raise ops.AxisError(f"size: axis {dim!r} is out of range for a {ndim}-d tensor "
                                f"of shape {self._shape}")   # an IndexError and a ValueError
        return self._shape[dim]

    def __reduce__(self):              # copies and pickles are the plain count
        return int, (int(self),)


class _HookHandle:
    """What `register_hook` returns: `.remove()` unregisters the hook. Holds its tensor weakly,
    so a kept handle does not keep the tensor (and its graph) alive."""

    def __init__(self, tensor: Tensor, hook):
        self._tensor, self._hook = weakref.ref(tensor), hook

    def remove(self) -> None:
        tensor = self._tensor()
        hooks = tensor._hooks if tensor is not None else None
        if hooks and self._hook in hooks:
            hooks.remove(self._hook)


def _same_array(array):
    """detach()'s kernel in a compiled step: the array itself, shared as eagerly."""
    return array


def _report_read(tensor, how: str) -> None:
    """Tell a step being captured by minigrad.compile that it reads a tensor's values (it
    refuses: the values would be frozen into the replay)."""
    recorder = _recorder()
    if recorder is not None:
        recorder.read_values(tensor, how)


def _to_backend_array(data, dtype, backend, index):
    """Turn user data into an array of `backend`, following the dtype rules of `tensor()`."""
    if is_array(data):
        source = backend_of(data)
        if source is not backend:
            host = source.to_numpy(data)
            array = backend.from_numpy(host if dtype is None else host.astype(dtype), index)
        elif backend.multi_device and index is not None and \
                backend.device_of(data) != f"{backend.device_type}:{index}":
            array = backend.from_numpy(source.to_numpy(data), index)
        else:
            array = data.astype(dtype) if dtype is not None else data.copy()
        return array
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
        data = _unwrap_nested(data)
    try:
        host = np.asarray(data)
    except ValueError as error:                  # ragged nested lists
        raise ValueError(f"tensor: nested lists must be rectangular ({error})") from error
    if host.dtype.kind not in "biufc":            # objects, strings, dates: not numbers
        raise TypeError(f"tensor: cannot make a tensor from {type(data).__name__} data "
                        f"(NumPy reads it as dtype {host.dtype})")
    if dtype is None:
        if host.dtype.kind == "f" and not isinstance(data, np.generic):
            dtype = DEFAULTS.float               # Python floats: the default float
        elif host.dtype.kind == "f":
            dtype = host.dtype
    if dtype is not None:
        host = host.astype(dtype)
    return backend.from_numpy(host, index) if backend is not CPU else np.array(host)


def _flat(data):
    for x in data:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _unwrap_nested(data):
    if isinstance(data, Tensor):
        return data.numpy()
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(x) for x in data]
    return data


def _new_size(op: str, size: tuple) -> tuple:
    """`size` as given to new_zeros(2, 3) or new_zeros((2, 3)), checked: non-negative ints."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for n in size:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral):
            raise TypeError(f"{op}: sizes must be ints, got {n!r} in size {tuple(size)!r}")
        if n < 0:
            raise ValueError(f"{op}: sizes must be >= 0, got size {tuple(size)!r}")
    return tuple(int(n) for n in size)


def is_scalar(x) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, Tensor)


# The one late binding: every method above calls a function in `ops` (or, for random draws,
# `creation`), and `backward` the walk in `autograd`; all build on Tensor, so they are imported
# once Tensor exists. Nothing else in minigrad imports at the bottom of a file.
from . import ops, autograd, creation  # noqa: E402
