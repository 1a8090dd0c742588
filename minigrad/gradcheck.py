"""Checking gradients: analytic against central finite differences in float64 (`gradcheck`), and
a Function's hand-written backward against the engine's exact derivative of its forward
(`check_backward`)."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from . import inplace, ops
from .function import Function
from .grad_mode import enable_grad
from .autograd import grad as autograd_grad
from .tensor import Tensor


class GradcheckError(AssertionError):
    """An analytic gradient disagrees with its finite-difference estimate."""


def gradcheck(fn: Callable, inputs: Sequence[Tensor], eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3) -> bool:
    """Compare d(fn(*inputs))/d(input) with central differences for each input requiring grad.

    The inputs must be float64 (finite differences in float32 are too coarse to judge). A
    non-scalar output is reduced with a fixed random projection Σ w ⊙ fn(*inputs), which checks
    the full vector-Jacobian product. Returns True, or raises GradcheckError naming the input,
    the element index and both values.
    """
    inputs = list(inputs)
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError("gradcheck: no input requires grad")
    for i in checked:
        if inputs[i].dtype != np.float64:
            raise TypeError(f"gradcheck: input {i} is {inputs[i].dtype}; use float64 inputs")
    out = fn(*inputs)
    if not isinstance(out, Tensor):
        raise TypeError(f"gradcheck: fn must return a Tensor, got {type(out).__name__}")
    weights = np.random.default_rng(0).standard_normal(out.shape)
    weights_t = Tensor(weights, device=out.device)

    def scalar(*args) -> float:
        return float((fn(*args).astype(np.float64).numpy() * weights).sum())

    projected = (out * weights_t).sum()
    if projected.requires_grad:
        analytic = autograd_grad(projected, [inputs[i] for i in checked], allow_unused=True)
    else:                  # the output is cut off from the inputs: analytic gradients are 0
        analytic = [None] * len(checked)
    for i, g in zip(checked, analytic):
        x = inputs[i]
        host = x.numpy().astype(np.float64)
        g = np.zeros_like(host) if g is None else g.numpy()
        for index in np.ndindex(*host.shape):
            numeric = _central_difference(scalar, inputs, i, host, index, eps)
            if not np.isclose(g[index], numeric, atol=atol, rtol=rtol):
                label = f"input {i} '{x.name}'" if x.name else f"input {i}"
                raise GradcheckError(
                    f"gradcheck: {label} (shape {tuple(host.shape)}), index {index}: analytic "
                    f"gradient {g[index]:.10g}, numeric {numeric:.10g} "
                    f"(difference {abs(g[index] - numeric):.3g})")
    return True


def _central_difference(scalar, inputs, i, host, index, eps) -> float:
    """(f(x + ε e_index) − f(x − ε e_index)) / 2ε with input i perturbed at `index`."""
    values = []
    for sign in (1.0, -1.0):
        moved = host.copy()
        moved[index] += sign * eps
        args = list(inputs)
        # still requiring grad, so fn may differentiate internally (checks of a gradient)
        args[i] = Tensor(moved, device=inputs[i].device, requires_grad=True)
        values.append(scalar(*args))
    return (values[0] - values[1]) / (2 * eps)


# -- a Function's backward against the engine's own derivative of its forward ------------------

def check_backward(function: type, inputs: Sequence[Tensor], *, atol: float = 1e-8,
                   rtol: float = 1e-6, **options) -> bool:
    """Check a hand-written `Function.backward` against minigrad's autodiff of its `forward`.

    `function` is a `minigrad.Function` subclass, `inputs` the Tensors to call
    `function.apply(*inputs, **options)` with (the float64 ones requiring grad are checked;
    masks or indices ride along). The forward is run a second time on the Tensors themselves,
    with `self.xp` replaced by a namespace of minigrad operations under NumPy's names, so the
    engine records it and differentiates it exactly, without finite differences. Both
    gradients are taken for one random upstream gradient ∂L/∂y of y's shape and must agree to
    `atol + rtol·|autodiff|` in every element, for `backward` run plainly and run recorded
    (create_graph=True), the two ways the engine runs it.

    The forward may use these functions of `self.xp`: exp, log, sqrt, tanh, abs, square,
    power, negative, reciprocal, add, subtract, multiply, divide, maximum, minimum, clip, where,
    sum, mean, max, min, var, std, matmul, concatenate, stack, reshape, transpose, swapaxes,
    expand_dims, squeeze, broadcast_to, zeros_like, ones_like, zeros, ones, sign, isfinite,
    isnan (without `out=`); the constants and dtypes (inf, pi, float64, ...); and the operators
    and methods Tensors share with arrays (`+ - * / ** @`, comparisons, indexing, `.sum()`,
    `.max()`, `.reshape()`, `.T`, `.shape`). Anything else (another NumPy function, writing
    into an array) raises TypeError saying what it met.

    Returns True, or raises GradcheckError naming the first (input, element) whose gradients
    differ, with both values.
    """
    if not (isinstance(function, type) and issubclass(function, Function)):
        raise TypeError(f"check_backward: expected a minigrad.Function subclass, got "
                        f"{function!r}")
    name = function.__name__
    inputs = list(inputs)
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor):
            raise TypeError(f"check_backward: input {i} of {name} is a {type(x).__name__}; "
                            f"pass Tensors, as to {name}.apply")
    checked = [i for i, x in enumerate(inputs) if x.requires_grad]
    if not checked:
        raise ValueError(f"check_backward: no input of {name} requires grad")
    for i in checked:
        if inputs[i].dtype != np.float64:
            raise TypeError(f"check_backward: input {i} of {name} is {inputs[i].dtype}; use "
                            f"float64 inputs")
    with enable_grad():
        out = function.apply(*inputs, **options)
        traced = _trace_forward(function, inputs, options)
    if not out.requires_grad:
        raise ValueError(f"check_backward: {name}'s output ({out.dtype}) is not part of a "
                         f"graph, so it has no backward to check")
    if traced.shape != out.shape or not np.allclose(traced.numpy(), out.numpy(), rtol=1e-7,
                                                    atol=1e-12, equal_nan=True):
        raise RuntimeError(f"check_backward: {name}.forward computes other values on Tensors "
                           f"(shape {tuple(traced.shape)}) than on arrays (shape "
                           f"{tuple(out.shape)}); its autodiff would not be a reference")
    upstream = Tensor(np.random.default_rng(0).standard_normal(out.shape), dtype=out.dtype,
                      device=out.device)
    wrt = [inputs[i] for i in checked]
    reference = (autograd_grad(traced, wrt, grad_outputs=upstream, allow_unused=True)
                 if traced.requires_grad else [None] * len(wrt))
    # backward runs twice, as the engine runs it: plainly, and recorded for create_graph
    # (a primitive may compute on arrays in the first case and on Tensors in the second)
    for create_graph in (False, True):
        written = autograd_grad(out, wrt, grad_outputs=upstream, retain_graph=True,
                                create_graph=create_graph, allow_unused=True)
        for i, g_written, g_reference in zip(checked, written, reference):
            _compare_gradients(name, i, inputs[i], g_written, g_reference, atol, rtol,
                               " (in the backward recorded with create_graph=True)"
                               if create_graph else "")
    return True


def _compare_gradients(name, i, x, g_written, g_reference, atol, rtol, where: str) -> None:
    """Raise GradcheckError at the first element where the two gradients of input i differ."""
    zeros = np.zeros(x.shape)
    written = zeros if g_written is None else g_written.numpy()
    reference = zeros if g_reference is None else g_reference.numpy()
    close = np.isclose(written, reference, atol=atol, rtol=rtol, equal_nan=True)
    if close.all():
        return
    index = tuple(int(k) for k in np.argwhere(~close)[0])
    label = f"input {i} '{x.name}'" if x.name else f"input {i}"
    raise GradcheckError(
        f"check_backward: {name}.backward, {label} (shape {tuple(x.shape)}), index {index}: "
        f"backward gives {written[index]:.10g}, autodiff of forward gives "
        f"{reference[index]:.10g} (difference {abs(written[index] - reference[index]):.3g})"
        f"{where}")


def _trace_forward(function, inputs, options) -> Tensor:
    """function's forward run on the input Tensors, with minigrad operations as `self.xp`."""
    fn = function(**options) if options else function()
    fn.xp = AutodiffNamespace(inputs[0].device)
    name = function.__name__
    stamp = inplace.STATE.last
    try:
        out = fn.forward(*inputs)
    except (TypeError, AttributeError, ValueError, IndexError, RuntimeError,
            NotImplementedError) as error:
        raise TypeError(f"check_backward: {name}.forward could not run on Tensors ({error}); "
                        f"it may use the self.xp functions, operators and methods listed in "
                        f"check_backward's docstring") from error
    if inplace.STATE.last != stamp:          # a write into a constant: the trace lost it
        raise TypeError(f"check_backward: {name}.forward writes into an array in place, which "
                        f"a trace of minigrad operations cannot follow")
    if not isinstance(out, Tensor):
        raise TypeError(f"check_backward: {name}.forward returned a {type(out).__name__} on "
                        f"Tensors; it must compute its result from its inputs with self.xp "
                        f"and array operators")
    return out


class AutodiffNamespace:
    """NumPy's names for minigrad operations: what `self.xp` is while check_backward traces
    a forward. Each function takes and returns Tensors (numbers and arrays are lifted)."""

    _CONSTANTS = ("inf", "nan", "pi", "e", "newaxis", "float16", "float32", "float64",
                  "int32", "int64", "bool_", "dtype", "finfo", "iinfo")

    def __init__(self, device: str):
        self.device = device

    def __getattr__(self, name: str):
        if name in AutodiffNamespace._CONSTANTS:
            return getattr(np, name)
        raise TypeError(f"xp.{name} has no minigrad counterpart in check_backward's namespace")

    def _lift(self, x) -> Tensor:
        return x if isinstance(x, Tensor) else Tensor(np.asarray(x), device=self.device)

    def exp(self, x): return ops.exp(self._lift(x))
    def log(self, x): return ops.log(self._lift(x))
    def sqrt(self, x): return ops.sqrt(self._lift(x))
    def tanh(self, x): return ops.tanh(self._lift(x))
    def abs(self, x): return ops.abs(self._lift(x))
    absolute = abs
    def square(self, x): return self._lift(x) * x
    def negative(self, x): return -self._lift(x)
    def reciprocal(self, x): return 1.0 / self._lift(x)
    def add(self, a, b): return ops.add(a, b)
    def subtract(self, a, b): return ops.sub(a, b)
    def multiply(self, a, b): return ops.mul(a, b)
    def divide(self, a, b): return ops.true_divide(a, b)
    true_divide = divide
    def power(self, x, p): return self._lift(x) ** p
    def maximum(self, a, b): return ops.maximum(a, b)
    def minimum(self, a, b): return ops.minimum(a, b)
    def clip(self, x, lo, hi): return ops.clip(self._lift(x), lo, hi)

    def where(self, cond, a, b):
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            a = self._lift(a)              # two constants: the result is a constant too
        return ops.where(cond, a, b)

    def sum(self, x, axis=None, keepdims=False): return ops.sum(self._lift(x), axis, keepdims)
    def mean(self, x, axis=None, keepdims=False): return ops.mean(self._lift(x), axis, keepdims)
    def max(self, x, axis=None, keepdims=False):
        return ops.max(self._lift(x), axis=axis, keepdims=keepdims)
    def min(self, x, axis=None, keepdims=False):
        return ops.min(self._lift(x), axis=axis, keepdims=keepdims)
    amax, amin = max, min
    def var(self, x, axis=None, keepdims=False, ddof=0):
        return ops.var(self._lift(x), axis, keepdims=keepdims, ddof=ddof)
    def std(self, x, axis=None, keepdims=False, ddof=0):
        return ops.std(self._lift(x), axis, keepdims=keepdims, ddof=ddof)
    def matmul(self, a, b): return ops.matmul(a, b)
    def concatenate(self, xs, axis=0): return ops.concat([self._lift(x) for x in xs], axis)
    def stack(self, xs, axis=0): return ops.stack([self._lift(x) for x in xs], axis)
    def reshape(self, x, shape): return ops.reshape(self._lift(x), shape)
    def transpose(self, x, axes=None): return ops.transpose(self._lift(x), *(axes or ()))
    def swapaxes(self, x, a, b): return ops.swapaxes(self._lift(x), a, b)
    def expand_dims(self, x, axis): return ops.unsqueeze(self._lift(x), axis)
    def squeeze(self, x, axis=None): return ops.squeeze(self._lift(x), axis)
    def broadcast_to(self, x, shape): return ops.broadcast_to(self._lift(x), shape)

    # constant in x (zero derivative almost everywhere): computed on the values, no gradient
    def sign(self, x): return self._constant(np.sign, x)
    def isfinite(self, x): return self._constant(np.isfinite, x)
    def isnan(self, x): return self._constant(np.isnan, x)
    def zeros_like(self, x, dtype=None): return self._constant(np.zeros_like, x, dtype=dtype)
    def ones_like(self, x, dtype=None): return self._constant(np.ones_like, x, dtype=dtype)

    def zeros(self, shape, dtype=np.float64):
        return Tensor(np.zeros(shape, dtype), device=self.device)

    def ones(self, shape, dtype=np.float64):
        return Tensor(np.ones(shape, dtype), device=self.device)

    def _constant(self, numpy_function, x, **kwargs) -> Tensor:
        return Tensor(numpy_function(self._lift(x).numpy(), **kwargs), device=self.device)
