"""Reverse-mode automatic differentiation: grad mode, Function, the graph walk, backward, grad.

A tensor made by an operation points to the Function that made it (`tensor._fn`). The Function
holds its inputs strongly and its output weakly, so a graph is a DAG with no reference cycles and
goes away as soon as nobody holds its root. Backward is one iterative walk over that DAG, newest
operation first: an output is always made after its inputs, so reverse creation order is a
topological order. Nothing recurses, so an unrolled GRU thousands of steps deep works.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import itertools
import math
import weakref
from typing import Callable, Iterable

import numpy as _numpy

from .backend import _BY_ARRAY_TYPE, backend_of
from .backend import CPU as _CPU


# ---------------------------------------------------------------------------------------------
# Global state: grad mode, the name-scope stack, anomaly mode. Nothing else is global.

class _State:
    def __init__(self):        # instance attributes: the cheapest to read on the hot paths
        self.grad_enabled = True
        self.scope = ""            # dotted name of the innermost name_scope, "" at top level
        self.detect_anomaly = False
        self.watched = False       # set once any tensor has had a hook or retain_grad()


STATE = _State()


class _GradMode:
    """Context manager and decorator that sets grad mode, restoring the old one on exit."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._saved: list[bool] = []

    def __enter__(self):
        self._saved.append(STATE.grad_enabled)
        STATE.grad_enabled = self.enabled

    def __exit__(self, *exc):
        STATE.grad_enabled = self._saved.pop()

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _GradMode(self.enabled):
                return func(*args, **kwargs)
        return wrapper


def no_grad() -> _GradMode:
    """Operations inside record no graph (context manager or decorator)."""
    return _GradMode(False)


def enable_grad() -> _GradMode:
    """Operations inside record a graph again, e.g. within `no_grad` (context or decorator)."""
    return _GradMode(True)


def is_grad_enabled() -> bool:
    return STATE.grad_enabled


class name_scope:
    """Tag the operations created inside with a dotted scope ("encoder.layer0.self_attn").

    Scopes nest: an inner scope "ffn" inside "encoder" tags operations "encoder.ffn". Graph
    pictures (`minigrad.viz.draw`) group or collapse operations by their scope. (A small class
    rather than a generator-based context manager: every module call enters one. One object
    may be entered again while it is active, as a module calling itself does: each entry's
    outer scope is kept on its own stack.)
    """

    __slots__ = ("name", "_outers")

    def __init__(self, name: str):
        self.name = name
        self._outers: list[str] = []

    def __enter__(self):
        outer = STATE.scope
        self._outers.append(outer)
        name = self.name
        STATE.scope = f"{outer}.{name}" if outer and name else (name or outer)

    def __exit__(self, *exc):
        STATE.scope = self._outers.pop()


@contextlib.contextmanager
def detect_anomaly():
    """Raise at the first operation whose forward result or backward gradient has NaN or inf.

    The error names the operation (and its scope). In forward, an infinity the operation only
    passes on (from an input, or a constant such as the -inf of masked_fill) is not an anomaly,
    so masked attention runs unflagged; NaN always is. Slow: every result is checked.
    """
    outer = STATE.detect_anomaly
    STATE.detect_anomaly = True
    try:
        yield
    finally:
        STATE.detect_anomaly = outer


def _check_finite(fn: "Function", array, where: str) -> None:
    xp = backend_of(array).xp
    if array.dtype.kind in "fc" and not bool(xp.isfinite(array).all()):
        bad = "NaN" if bool(xp.isnan(array).any()) else "inf"
        scope = f" in scope '{fn.scope}'" if fn.scope else ""
        raise FloatingPointError(f"anomaly: {type(fn).__name__}{scope} produced {bad} in its "
                                 f"{where} (shape {tuple(array.shape)})")


def _check_forward(fn: "Function", inputs, array) -> None:
    """Anomaly check of a forward result. NaN is always an anomaly. ±inf is one only when the
    operation made it from finite values: an infinity that arrives through an input or a
    constant option (masked_fill(scores, mask, -inf), the usual attention mask) is intended."""
    xp = backend_of(array).xp
    if array.dtype.kind not in "fc" or bool(xp.isfinite(array).all()):
        return
    if not bool(xp.isnan(array).any()) and _carries_infinity(fn, inputs):
        return
    _check_finite(fn, array, "forward result")


def _carries_infinity(fn: "Function", inputs) -> bool:
    for t in inputs:
        data = t.data
        if data.dtype.kind in "fc" and not bool(t.xp.isfinite(data).all()):
            return True
    return any(isinstance(v, float) and math.isinf(v) for v in vars(fn).values())


# ---------------------------------------------------------------------------------------------
# Function: one node of the graph.

class Function:
    """A differentiable primitive. Subclass it to add your own:

        class Cube(minigrad.Function):
            '''y = x³'''
            def forward(self, x):            # backend arrays in, a backend array out
                return x ** 3
            def backward(self, grad):        # grad = ∂L/∂y, a Tensor
                (x,) = self.inputs
                return grad * 3 * x * x      # ∂y/∂x = 3x²

        y = Cube.apply(x)

    `apply(*tensors, **options)` builds `Cls(**options)`, runs `forward` on the tensors' arrays
    and, when grad mode is on and an input requires grad, links the result into the graph.
    `backward` returns one gradient per input (a tuple when there are several; None for an input
    that gets none), as Tensors or arrays; the engine sums each back to its input's shape when
    broadcasting made it larger. Write `backward` with minigrad operations on Tensors so that
    `create_graph=True` can differentiate it again.

    Available inside: `self.inputs` (input Tensors), `self.output` (the output Tensor, held
    weakly; a class whose backward never reads it may set `needs_output = False`), `self.xp`
    (the array module of the inputs' device), `self.save_for_backward(*a)` and
    `self.saved_tensors` for anything else backward needs (freed after backward).
    """

    # class-level defaults; apply() sets the instance's own values when it records a node
    inputs: tuple = ()
    _output_ref = None
    saved_tensors: tuple = ()
    scope = ""
    sequence = -1              # creation order, set when recorded: a node comes after its inputs
    xp = _numpy                # the array module of the inputs, set by apply() when not NumPy

    # set on each subclass: does its output depend differentiably on its inputs?
    differentiable = True
    # False in a subclass whose backward never reads `self.output`: no weak reference to the
    # output is made per call (the cheapest primitives are dominated by such costs)
    needs_output = True
    # True in a subclass whose vjp accepts a ProductGradient (Transpose); others get arrays
    takes_products = False
    # True in a subclass whose vjp, given ∂L/∂out in the output's shape and dtype, returns each
    # input's gradient in that input's shape and dtype: the walk then skips summing broadcast
    # axes away and casting (reading an array's shape and dtype costs more than the
    # bookkeeping around it). None for an elementwise operation of two inputs, whose gradients
    # are exact when neither input was broadcast or promoted: the walk compares the two once.
    exact_gradients = False
    # True in a subclass whose output is floating whenever an input requires grad (which only
    # floating tensors can): arithmetic, not casts or indices. apply() then skips the check
    # that keeps integer and bool results out of the graph.
    float_output = False

    def forward(self, *arrays):
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def backward(self, grad):
        raise NotImplementedError(f"{type(self).__name__}.backward")

    # Optional: `vjp(self, grad)`, the same derivative as `backward` written on bare arrays
    # (grad an array; read inputs as `self.inputs[i].data`). When defined, the engine uses it
    # for the common create_graph=False case, which skips building a Tensor per operation.
    vjp = None

    def save_for_backward(self, *arrays) -> None:
        self.saved_tensors = arrays

    @property
    def _freed(self) -> bool:
        """Has a backward without retain_graph released this node's saved values?"""
        return self.saved_tensors is _RELEASED

    @property
    def output(self):
        if not self.needs_output:
            raise RuntimeError(f"{type(self).__name__}.output: not kept, since the class sets "
                               f"needs_output = False")
        return self._output_ref() if self._output_ref is not None else None

    @classmethod
    def apply(cls, *inputs, **options):
        fn = cls(**options) if options else cls()
        # the arrays, and their backend from the first one's type (spelled out for one and two
        # inputs, the common cases: map or a comprehension costs more than the rest of the line)
        try:
            if len(inputs) == 2:
                first, second = inputs[0].data, inputs[1].data
                arrays = None                       # forward(first, second), no unpacking
                kind = type(first)
                backend = _BY_ARRAY_TYPE[kind]
                if type(second) is not kind or backend.multi_device:
                    _check_same_device(cls, inputs)
            elif len(inputs) == 1:
                arrays = (inputs[0].data,)
                kind = type(arrays[0])
                backend = _BY_ARRAY_TYPE[kind]
            else:
                arrays = tuple([t.data for t in inputs])
                kind = type(arrays[0])
                backend = _BY_ARRAY_TYPE[kind]
                for a in arrays:
                    if type(a) is not kind or backend.multi_device:
                        _check_same_device(cls, inputs)
                        break
        except (AttributeError, IndexError, KeyError):
            backend = _check_inputs(cls, inputs)
            arrays = tuple([t.data for t in inputs])
            kind = type(arrays[0])
            _check_same_device(cls, inputs)
        if backend is not _CPU:                     # NumPy is the class default: no store
            fn.xp = backend.xp
        try:
            out = fn.forward(first, second) if arrays is None else fn.forward(*arrays)
        except (ValueError, TypeError, IndexError) as error:
            if str(error).startswith(cls.__name__):
                raise
            shapes = ", ".join(f"{tuple(t.shape)} {t.dtype}" for t in inputs)
            raise type(error)(f"{cls.__name__}: {error} (inputs: {shapes})") from error
        if type(out) is not kind and type(out) not in _BY_ARRAY_TYPE:
            out = backend.xp.asarray(out)           # NumPy scalars from full reductions
        result = _new_tensor(_Tensor)               # Tensor._from_array(out), inlined: hot
        result.data = out
        if STATE.detect_anomaly:
            fn.scope = STATE.scope
            _check_forward(fn, inputs, out)
        if STATE.grad_enabled and cls.differentiable and (
                cls.float_output or out.dtype.kind in "fc"):
            for t in inputs:
                if t._requires_grad:
                    return _link(fn, inputs, result)
        result._requires_grad = False
        result._fn = None
        return result


def _link(fn, inputs: tuple, result):
    """Record `fn` as the operation that made `result` from `inputs`, one of which requires grad:
    the one place where a node joins the graph."""
    fn.inputs = inputs
    fn.sequence = next(_sequence)
    if fn.needs_output:
        fn._output_ref = weakref.ref(result)
    if STATE.scope:
        fn.scope = STATE.scope
    result._requires_grad = True
    result._fn = fn
    return result


def _apply_operator(cls, a, b):
    """`cls.apply(a, b)` for Add, Sub, Mul and Div, whose forward is an `operator` builtin, on
    two tensors: the same node, for half of apply's work when both hold NumPy arrays (no
    backend lookup, no Function made unless the result is recorded). Other arrays, anomaly
    mode and errors go through apply itself, which also words the error."""
    da = a.data
    db = b.data
    if type(da) is not _ndarray or type(db) is not _ndarray or STATE.detect_anomaly:
        return cls.apply(a, b)
    try:
        out = cls.forward(da, db)              # the builtin itself: a class attribute, unbound
    except (ValueError, TypeError, IndexError):
        return cls.apply(a, b)                 # fails again, and says which op and shapes
    return _result(cls, (), (a, b), out)


def _result(cls, args: tuple, inputs: tuple, out):
    """The Tensor that `cls.apply(*inputs, ...)` returns, when the caller has already run
    cls(*args).forward on the inputs' NumPy arrays and got `out`; the node is recorded as apply
    records it. For the hottest operations (arithmetic, slicing, .T, 2-D matmul, exp, tanh,
    sigmoid, relu), whose forward is one NumPy call or a few, apply's general dispatch costs
    more than the calls; no Function is made unless the result is recorded. Callers send other
    arrays, anomaly mode and errors to apply."""
    if type(out) is not _ndarray:
        out = _numpy.asarray(out)             # a NumPy scalar from 0-d operands or a full index
    result = _new_tensor(_Tensor)
    result.data = out
    if STATE.grad_enabled:
        for t in inputs:
            if t._requires_grad:
                return _link(cls(*args), inputs, result)
    result._requires_grad = False
    result._fn = None
    return result


class _Released(tuple):
    """The type of `saved_tensors` once a backward has freed them: empty, and recognisable."""


_RELEASED = _Released()


def _check_inputs(cls, inputs):
    """The backend of the inputs, or a clear error when they are not Tensors (slow path)."""
    if not inputs:
        raise TypeError(f"{cls.__name__}.apply: needs at least one input Tensor")
    for t in inputs:
        if not isinstance(t, _Tensor):
            raise TypeError(f"{cls.__name__}.apply: inputs must be Tensors, got "
                            f"{type(t).__name__}; wrap arrays with minigrad.tensor()")
    return backend_of(inputs[0].data)


_sequence = itertools.count()      # creation order of recorded Functions
_new_tensor = object.__new__
_ndarray = _numpy.ndarray          # the CPU's array type, tested by the hot operations
_Tensor = None  # set by tensor.py (the engine and Tensor refer to each other)


def _check_same_device(cls, inputs) -> None:
    kind = type(inputs[0].data)
    for t in inputs[1:]:
        if type(t.data) is not kind:
            break
    else:
        if not backend_of(inputs[0].data).multi_device:
            return
        devices = {t.device for t in inputs}
        if len(devices) == 1:
            return
    devices = ", ".join(f"{t.device} {tuple(t.shape)}" for t in inputs)
    raise RuntimeError(f"{cls.__name__}: all inputs must be on one device, got {devices}; "
                       f"move them with .to(device)")


# ---------------------------------------------------------------------------------------------
# A gradient that is zero but at an index.

class IndexedGradient:
    """∂L/∂x when only x[index] was read: zero everywhere except `values` at `index`.

    GetItem's array backward returns one instead of a zero-filled array, so that the slices of
    one tensor (the r, z, n gates cut out of a GRU's pre-activations, or q, k, v out of a packed
    projection) add into a single buffer instead of each filling and adding a full one.
    """

    __slots__ = ("shape", "index", "is_basic", "values", "xp")

    def __init__(self, shape, index, is_basic: bool, values, xp):
        self.shape, self.index, self.is_basic, self.values = shape, index, is_basic, values
        self.xp = xp

    def add_into(self, buffer) -> None:
        """buffer[index] += values (repeated advanced indices accumulate)."""
        if self.is_basic:                         # a basic index names each element once
            view = buffer[self.index]
            if view.ndim:                         # a view: add into it (no copy back, as
                view += self.values               # buffer[index] += values would make)
            else:                                 # one element, which may come as a copy
                buffer[self.index] += self.values
        else:
            backend_of(buffer).scatter_add(buffer, self.index, self.values)

    def dense(self):
        buffer = self.xp.zeros(self.shape, dtype=self.values.dtype)
        if self.is_basic:
            buffer[self.index] = self.values          # into zeros: adding is assigning
        else:
            self.add_into(buffer)
        return buffer


# ---------------------------------------------------------------------------------------------
# A gradient that is a sum of matrix products, not yet multiplied out.

class ProductGradient:
    """∂L/∂B for products C_k = A_k B of one 2-D B, kept as factors: Σ_k A_kᵀ G_k, G_k = ∂L/∂C_k
    (or its transpose, when it reached B through B.T), plus an optional array `base`.

    MatMul's array backward returns one for its right operand. The gradients of a weight used
    at every step of an unrolled loop (an RNN's W_hh, read as h @ W_hh.T) then add up as lists
    of factors, and become one product of the stacked factors, [A_1; …; A_T]ᵀ [G_1; …; G_T],
    instead of T thin products each added into a buffer. When the pending factors would hold
    more numbers than max(gradient size, max_pending), they are multiplied out into `base`.
    """

    __slots__ = ("lefts", "rights", "transposed", "xp", "base", "dtype", "rows")
    max_pending = 2 ** 20        # numbers held in pending factors before multiplying out

    def __init__(self, lefts, rights, transposed: bool, xp, base=None, rows=None):
        self.lefts, self.rights, self.transposed, self.xp = lefts, rights, transposed, xp
        self.base = base         # an array of the walk's own, or None
        self.dtype = rights[0].dtype
        self.rows = lefts[0].shape[0] if rows is None else rows     # of the stacked factors

    def transpose(self) -> "ProductGradient":
        base = None if self.base is None else self.base.T
        return ProductGradient(self.lefts, self.rights, not self.transposed, self.xp, base,
                               self.rows)

    def merge(self, other: "ProductGradient") -> "ProductGradient | None":
        """self + other as one ProductGradient (None when they do not combine)."""
        if other.transposed != self.transposed or other.dtype != self.dtype or \
                other.base is not None:
            return None
        k, n = self.lefts[0].shape[1], self.rights[0].shape[1]
        rows = self.rows + other.rows
        if rows * (k + n) > max(k * n, self.max_pending):
            return ProductGradient(other.lefts, other.rights, self.transposed, self.xp,
                                   self.dense(), other.rows)  # multiply out what was pending
        return ProductGradient(self.lefts + other.lefts, self.rights + other.rights,
                               self.transposed, self.xp, self.base, rows)

    def dense(self):
        """The sum as an array: [A_1; …]ᵀ [G_1; …] (or its transpose) in one product, + base."""
        xp = self.xp
        a = self.lefts[0] if len(self.lefts) == 1 else xp.concatenate(self.lefts, axis=0)
        g = self.rights[0] if len(self.rights) == 1 else xp.concatenate(self.rights, axis=0)
        product = g.T @ a if self.transposed else a.T @ g
        if self.base is None:
            return product
        self.base += product
        return self.base


_LAZY = (IndexedGradient, ProductGradient)


# ---------------------------------------------------------------------------------------------
# The graph walk.

def _freed_error(fn) -> RuntimeError:
    return RuntimeError(
        f"backward through the graph a second time: {type(fn).__name__} has already freed its "
        f"saved values; pass retain_graph=True to the first backward (or to minigrad.grad) to "
        f"keep them")


def _sum_to(grad, shape, fn, create_graph):
    """Undo broadcasting: sum `grad` down to `shape`, or say which op produced a wrong shape."""
    if create_graph:
        return _sum_to_tensor(grad, shape, owner=type(fn).__name__)   # differentiable
    return _sum_to_array(grad, shape, owner=type(fn).__name__)


_sum_to_tensor = _sum_to_array = None     # set by ops/shape.py (the ops import this module)


def compute_gradients(roots, root_grads, retain_graph: bool, create_graph: bool,
                      capture: Iterable | None = None) -> dict[int, object]:
    """Propagate `root_grads` back through the graph of `roots`.

    Returns {id(tensor): (tensor, gradient)} for the leaves that require grad, for tensors that
    called `retain_grad()`, and for every tensor in `capture`. Gradients are Tensors when
    `create_graph` (recorded, so they can be differentiated again) and arrays otherwise.
    """
    capture_ids = {id(t) for t in capture} if capture is not None else None
    # A tensor made by an operation is keyed by ~(its Function's creation number), a negative
    # int, and its key waits in a min-heap: the newest comes off first. An operation's output
    # is made after its inputs, so when a key comes off, every tensor that reads the tensor has
    # already sent its gradient back: the gradient is complete. Leaves, keyed by id() (never
    # negative), need no order: they are handed over once the heap is empty. (Plain ints in
    # the heap: tuples would be compared item by item at every step of a push or a pop.)
    grads: dict[int, object] = {}
    tensors: dict[int, object] = {}    # key -> the tensor made by an operation, while it waits
    leaves: dict[int, object] = {}     # key -> the leaf
    waiting: list[int] = []
    for root, g in zip(roots, root_grads):
        root_fn = root._fn
        key = id(root) if root_fn is None else ~root_fn.sequence
        if key in grads:
            grads[key] = grads[key] + g
            continue
        grads[key] = g
        if root_fn is None:
            leaves[key] = root
        else:
            tensors[key] = root
            heapq.heappush(waiting, key)
    results: dict[int, object] = {}
    owned: set[int] = set()      # keys whose gradient buffer the walk allocated: add in place
    done: list = []              # Functions whose saved values are freed once the walk ends
    anomaly = STATE.detect_anomaly
    fast = not (create_graph or anomaly)
    # per-tensor hooks, retain_grad and capture are looked at only when some tensor has them
    watched = STATE.watched or capture_ids is not None
    push, pop, pushpop = heapq.heappush, heapq.heappop, heapq.heappushpop
    # the input that last joined waits in `held`, outside the heap: in a chain it is the next
    # tensor to come off, and heappushpop hands it straight back without a push and a pop
    held = None
    sum_to_array = _sum_to_array
    finished = done.append
    ndarray = _ndarray
    grad_mode = STATE.grad_enabled            # as `with _GradMode(create_graph)`, spelled out
    STATE.grad_enabled = create_graph
    try:
        while held is not None or waiting:
            if held is not None:
                key = pushpop(waiting, held)
                held = None
            else:
                key = pop(waiting)
            tensor = tensors.pop(key)
            g = grads.pop(key)
            fn = tensor._fn
            kind = type(g)                         # (`is` tests: `in` a tuple costs more)
            if kind is not ndarray and (kind is IndexedGradient or kind is ProductGradient) \
                    and not (kind is ProductGradient and fn.takes_products and fast and not (
                        watched and (tensor._hooks or tensor._retains_grad or
                                     capture_ids is not None))):
                g = g.dense()                      # passed on as factors only through .T
            if watched:
                if tensor._hooks:
                    g = _run_hooks(tensor, g, create_graph)
                if capture_ids is None:
                    if tensor._retains_grad:
                        results[id(tensor)] = (tensor, g)
                elif id(tensor) in capture_ids:
                    results[id(tensor)] = (tensor, g)
            if fn.saved_tensors is _RELEASED:
                raise _freed_error(fn)
            finished(fn)
            inputs = fn.inputs
            vjp = fn.vjp if fast else None
            if vjp is not None:
                exact = fn.exact_gradients
                if exact is None:                  # two inputs alike: no broadcast, no cast
                    a, b = inputs[0].data, inputs[1].data
                    exact = a.shape == b.shape and a.dtype is b.dtype
                input_grads = vjp(g)               # the same derivative, on bare arrays
                if type(input_grads) is not tuple:
                    input_grads = (input_grads,) if len(inputs) == 1 else \
                        _checked_gradients(fn, input_grads)
                elif not exact and len(input_grads) != len(inputs):   # exact ones are tested
                    raise _count_error(fn, input_grads)
            else:
                input_grads = _input_gradients(fn, g, create_graph)
                exact = False
            for x, gx in zip(inputs, input_grads):
                if gx is None or not x._requires_grad:
                    continue
                x_fn = x._fn
                key = id(x) if x_fn is None else ~x_fn.sequence
                previous = grads.get(key)
                if previous is None:               # x's first gradient: x waits its turn
                    if x_fn is None:
                        leaves[key] = x
                    else:
                        tensors[key] = x
                        if held is not None:
                            push(waiting, held)
                        held = key
                # the common cases inline: an array of the input's type (summed down when
                # broadcasting made it larger), or a gradient that is zero but at an index
                data = x.data
                kind = type(gx)
                if kind is type(data) and fast:
                    if not exact:
                        if gx.shape != data.shape:
                            gx = sum_to_array(gx, data.shape, type(fn).__name__)
                        if gx.dtype is not data.dtype and gx.dtype != data.dtype:
                            gx = gx.astype(data.dtype)    # a float32 input of a float64 op
                    if previous is None:
                        grads[key] = gx
                        continue
                    if key in owned:
                        previous += gx             # a buffer of the walk's own: in place
                        continue
                    if type(previous) is kind:
                        grads[key] = previous + gx    # a new buffer, owned from now on
                        owned.add(key)
                        continue
                elif kind is IndexedGradient and fast and gx.values.dtype is data.dtype:
                    if previous is None:
                        grads[key] = gx            # stays unmaterialised until needed
                        continue
                    if key in owned:
                        gx.add_into(previous)
                        continue
                _add_gradient(fn, x, key, gx, grads, owned, create_graph, anomaly)
        for key, tensor in leaves.items():         # every gradient is complete now
            g = grads[key]
            kind = type(g)
            if kind is IndexedGradient or kind is ProductGradient:
                g = g.dense()
            if watched:
                if tensor._hooks:
                    g = _run_hooks(tensor, g, create_graph)
                if capture_ids is not None and key not in capture_ids:
                    continue
            results[key] = (tensor, g)
    finally:
        STATE.grad_enabled = grad_mode
    if not retain_graph:
        for fn in done:
            fn.saved_tensors = _RELEASED          # one store frees them and marks fn
    return results


def _run_hooks(tensor, g, create_graph):
    """The tensor's hooks called in turn on its complete gradient; a Tensor one returns
    replaces the gradient for the hooks after it and for the rest of the walk."""
    for hook in tensor._hooks:
        replaced = hook(g if create_graph else _Tensor._from_array(g))
        if replaced is not None:
            g = _hooked_gradient(tensor, replaced, create_graph)
    return g


def _input_gradients(fn, g, create_graph) -> tuple:
    """fn's gradients for its inputs, one per input: from `vjp` on arrays when it has one and
    nothing is recorded, else from `backward` on Tensors."""
    if create_graph or fn.vjp is None:
        input_grads = _run_backward(fn, g if create_graph else _Tensor._from_array(g))
    else:
        input_grads = fn.vjp(g)               # the same derivative, on bare arrays
    return _checked_gradients(fn, input_grads)


def _checked_gradients(fn, input_grads) -> tuple:
    """A backward's result as a tuple with one entry per input, or a clear error."""
    if type(input_grads) is not tuple:
        input_grads = (input_grads,)
    if len(input_grads) != len(fn.inputs):
        raise _count_error(fn, input_grads)
    return input_grads


def _count_error(fn, input_grads) -> RuntimeError:
    return RuntimeError(f"{type(fn).__name__}.backward returned {len(input_grads)} "
                        f"gradient(s) for {len(fn.inputs)} input(s); return one per "
                        f"input (None where an input gets none)")


def _add_gradient(fn, x, key, gx, grads, owned, create_graph, anomaly) -> None:
    """Add gx, one of fn's input gradients, into grads[key] for input x: sum it down to x's
    shape (undoing broadcasting), cast it to x's dtype, and accumulate."""
    if type(gx) is IndexedGradient:
        if anomaly:
            _check_finite(fn, gx.values, "gradient")
        _accumulate_indexed(key, gx, x.data.dtype, grads, owned)
        return
    if type(gx) is ProductGradient:
        if not anomaly and gx.dtype == x.data.dtype:
            _accumulate_product(key, gx, grads, owned)
            return
        gx = gx.dense()
    if create_graph or type(gx) is _Tensor:
        gx = _as_grad(gx, create_graph)
    data = x.data
    if gx.shape != data.shape:
        gx = _sum_to(gx, data.shape, fn, create_graph)
    if gx.dtype is not data.dtype and gx.dtype != data.dtype:
        gx = gx.astype(data.dtype)            # a float32 input of a float64 op: float32 grad
    if anomaly:
        _check_finite(fn, gx.data if create_graph else gx, "gradient")
    previous = grads.get(key)
    if previous is None:
        grads[key] = gx
    elif create_graph:
        grads[key] = previous + gx            # recorded, so never in place
    elif key in owned:
        previous += gx                        # a buffer of the walk's own: add in place
    elif type(previous) in _LAZY:
        previous = previous.dense()           # a new buffer, owned from now on
        previous += gx
        grads[key] = previous
        owned.add(key)
    else:
        grads[key] = previous + gx            # a new buffer, owned from now on
        owned.add(key)


def _accumulate_indexed(key, gx: IndexedGradient, dtype, grads, owned) -> None:
    """Add a gradient that is zero but at an index into grads[key], in one owned buffer."""
    if gx.values.dtype != dtype:
        gx.values = gx.values.astype(dtype)
    previous = grads.get(key)
    if previous is None:
        grads[key] = gx                           # stays unmaterialised until needed
        return
    if key not in owned:
        previous = previous.dense() if type(previous) in _LAZY else previous.copy()
        grads[key] = previous
        owned.add(key)
    gx.add_into(previous)


def _accumulate_product(key, gx: ProductGradient, grads, owned) -> None:
    """Add a gradient kept as matrix factors into grads[key]: factors join factors (multiplied
    out together later); anything else turns them into an array and adds."""
    previous = grads.get(key)
    if previous is None:
        grads[key] = gx
        return
    if type(previous) is ProductGradient:
        merged = previous.merge(gx)
        if merged is not None:
            grads[key] = merged
            return
        previous = previous.dense()
    elif type(previous) is IndexedGradient:
        previous = previous.dense()
    elif key not in owned:
        grads[key] = previous + gx.dense()        # a new buffer, owned from now on
        owned.add(key)
        return
    previous += gx.dense()                        # a buffer of the walk's own: in place
    grads[key] = previous
    owned.add(key)


def _run_backward(fn, grad):
    """fn.backward(grad). In anomaly mode the operations inside are not checked one by one:
    their result is checked as fn's gradient, so the error names fn, not a helper op."""
    if not STATE.detect_anomaly:
        return fn.backward(grad)
    STATE.detect_anomaly = False
    try:
        return fn.backward(grad)
    finally:
        STATE.detect_anomaly = True


def _hooked_gradient(tensor, replaced, create_graph):
    """A hook's replacement gradient, checked: the tensor's shape, cast to its dtype."""
    if not isinstance(replaced, _Tensor):
        raise TypeError(f"hook on a tensor of shape {tuple(tensor.data.shape)} returned a "
                        f"{type(replaced).__name__}; a hook returns a Tensor or None")
    g = _as_grad(replaced, create_graph)
    if tuple(g.shape) != tensor.data.shape:
        raise RuntimeError(f"hook on a tensor of shape {tuple(tensor.data.shape)} returned a "
                           f"gradient of shape {tuple(g.shape)}; a hook may change a gradient's "
                           f"values, not its shape")
    if g.dtype != tensor.data.dtype:
        g = g.astype(tensor.data.dtype)
    return g


def _as_grad(g, create_graph):
    """A gradient as the walk keeps it: a Tensor when recording, else the bare array."""
    if isinstance(g, _Tensor):
        return g if create_graph else g.data
    return _Tensor._from_array(g) if create_graph else g


def backward(tensor, grad=None, retain_graph=False, create_graph=False) -> None:
    """Tensor.backward: add d(tensor)/d(leaf) into each leaf's `.grad`."""
    if not tensor.requires_grad:
        raise RuntimeError(f"backward: this tensor ({tuple(tensor.shape)} {tensor.dtype}) does not "
                           f"require grad (no input of its graph has requires_grad=True, it was "
                           f"computed under no_grad, or it is an integer or bool tensor, which "
                           f"never carries a gradient)")
    root_grad = _root_grad(tensor, grad, "backward", create_graph)
    retain_graph = retain_graph or create_graph
    results = compute_gradients([tensor], [root_grad], retain_graph, create_graph)
    _deposit(results, create_graph)


def _root_grad(tensor, grad, op, create_graph):
    """The gradient the walk starts from at `tensor`, checked, in the walk's form: a Tensor
    when `create_graph`, else the bare array."""
    Tensor = _Tensor
    if grad is None:
        data = tensor.data
        if data.size != 1:
            raise RuntimeError(f"{op}: grad can be implicit only for a single-element output, "
                               f"got shape {tuple(tensor.shape)}; pass a gradient of that shape")
        ones = backend_of(data).xp.ones(data.shape, dtype=data.dtype)      # d out / d out
        return Tensor._from_array(ones) if create_graph else ones
    if not isinstance(grad, Tensor):
        grad = Tensor._from_array(backend_of(tensor.data).asarray(grad, dtype=tensor.dtype))
    if grad.shape != tensor.shape:
        raise ValueError(f"{op}: gradient shape {tuple(grad.shape)} does not match the output "
                         f"shape {tuple(tensor.shape)}")
    if grad.device != tensor.device:
        raise RuntimeError(f"{op}: gradient is on {grad.device}, output on {tensor.device}")
    if grad.dtype != tensor.dtype:
        grad = grad.astype(tensor.dtype)      # as the output's own gradient would be
    return grad if create_graph else grad.data


def _deposit(results, create_graph):
    """Accumulate the walk's results into `.grad` of leaves and of retain_grad tensors."""
    Tensor = _Tensor
    for tensor, g in results.values():
        if create_graph:
            tensor.grad = g if tensor.grad is None else tensor.grad + g
        elif tensor.grad is None:
            tensor.grad = Tensor._from_array(g)
        else:
            tensor.grad = Tensor._from_array(tensor.grad.data + g)


_INTEGER_HINT = {kind: " (integer and bool tensors never carry a gradient)" for kind in "iub"}


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False) -> tuple:
    """Gradients of `outputs` with respect to `inputs`, returned rather than stored in `.grad`.

    Like `torch.autograd.grad`: `outputs`/`inputs` are a Tensor or a sequence of Tensors;
    `grad_outputs` may be omitted for single-element outputs; an input that the outputs do not
    depend on raises unless `allow_unused`, when its entry is None.
    """
    Tensor = _Tensor
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs] * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"grad: {len(grad_outputs)} grad_outputs for {len(outputs)} outputs")
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"grad: input {i} (shape {tuple(t.shape)}, {t.dtype}) does not "
                               f"require grad" + _INTEGER_HINT.get(t.dtype.kind, ""))
    for i, t in enumerate(outputs):
        if not t.requires_grad:
            raise RuntimeError(f"grad: output {i} (shape {tuple(t.shape)}, {t.dtype}) does not "
                               f"require grad" + _INTEGER_HINT.get(t.dtype.kind, ""))
    if retain_graph is None:
        retain_graph = create_graph
    root_grads = []
    for out, g in zip(outputs, grad_outputs):
        root_grads.append(_root_grad(out, g, "grad", create_graph))
    results = compute_gradients(outputs, root_grads, retain_graph, create_graph, capture=inputs)
    answer = []
    for i, t in enumerate(inputs):
        g = results.get(id(t), (None, None))[1]
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"grad: input {i} (shape {tuple(t.shape)}) was not used to "
                                   f"compute the outputs; pass allow_unused=True to get None")
            answer.append(None)
        else:
            answer.append(g if create_graph else Tensor._from_array(g))
    return tuple(answer)
