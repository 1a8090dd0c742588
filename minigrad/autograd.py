"""Reverse-mode automatic differentiation: grad mode, Function, the graph walk, backward, grad.

A tensor made by an operation points to the Function that made it (`tensor._fn`). The Function
holds its inputs strongly and its output weakly, so a graph is a DAG with no reference cycles and
goes away as soon as nobody holds its root. Backward is one iterative walk over that DAG, newest
operation first: an output is always made after its inputs, so reverse creation order is a
topological order. Nothing recurses, so an unrolled GRU thousands of steps deep works.

Every gradient takes one path: a Function's `backward` (written with minigrad operations, which
record a graph only under `create_graph=True`), then `_accumulate`, which sums it back to its
input's shape, casts it to the input's dtype and adds it to what the input already received.
"""

from __future__ import annotations

import functools
import heapq
import inspect
import itertools
import threading
import weakref
from typing import Callable

import numpy as _numpy

from . import anomaly, inplace
from .backend import _BY_ARRAY_TYPE, backend_of


# ---------------------------------------------------------------------------------------------
# Per-thread state: grad mode and the name-scope stack (anomaly mode lives in anomaly.py).

class _State(threading.local):
    """Grad mode and the current scope of this thread, as in PyTorch: `no_grad` in one thread,
    or a backward running in another, never changes what this one records."""

    def __init__(self):
        self.grad_enabled = True
        self.scope = ""            # dotted name of the innermost name_scope, "" at top level


STATE = _State()


class _GradMode:
    """Sets grad mode on entry and restores the old one on exit; also a decorator, of plain
    functions and of generator functions (each resumption runs in the mode)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._saved: list[bool] = []

    def __enter__(self):
        self._saved.append(STATE.grad_enabled)
        STATE.grad_enabled = self.enabled

    def __exit__(self, *exc):
        STATE.grad_enabled = self._saved.pop()

    def __call__(self, func: Callable) -> Callable:
        enabled = self.enabled
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def generator(*args, **kwargs):
                inner = func(*args, **kwargs)
                sent = None
                while True:                  # each step runs in the mode, the caller's code
                    with _GradMode(enabled):     # between steps in its own
                        try:
                            value = inner.send(sent)
                        except StopIteration as stop:
                            return stop.value
                    sent = yield value
            return generator

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _GradMode(enabled):
                return func(*args, **kwargs)
        return wrapper


def _mode(enabled: bool, func):
    return _GradMode(enabled) if func is None else _GradMode(enabled)(func)


def no_grad(func: Callable | None = None):
    """Record no graph inside: `with no_grad():`, `@no_grad()` or `@no_grad`."""
    return _mode(False, func)


def enable_grad(func: Callable | None = None):
    """Record a graph again inside, e.g. within `no_grad`: a context manager or decorator."""
    return _mode(True, func)


def inference_mode(mode=True):
    """`no_grad` under PyTorch's other name (minigrad keeps no extra per-tensor state that
    inference could skip): `with inference_mode():`, `@inference_mode()` or `@inference_mode`."""
    return _mode(False, mode) if callable(mode) else _GradMode(not mode)


class set_grad_enabled(_GradMode):
    """Turn recording on or off: at once as a call (`set_grad_enabled(False)`), or for a block
    as a context manager, restoring the previous mode on exit."""

    def __init__(self, mode: bool):
        super().__init__(bool(mode))
        self._before = STATE.grad_enabled
        STATE.grad_enabled = self.enabled

    def __enter__(self):
        self._saved.append(self._before)

    def __exit__(self, *exc):
        STATE.grad_enabled = self._saved.pop()


def is_grad_enabled() -> bool:
    """Whether operations in this thread record a graph now."""
    return STATE.grad_enabled


class name_scope:
    """Tag the operations created inside with a dotted scope ("encoder.layer0.self_attn").

    Scopes nest: an inner scope "ffn" inside "encoder" tags operations "encoder.ffn". Graph
    pictures (`minigrad.viz.draw`) group or collapse operations by their scope. One object may
    be entered again while it is active (a module calling itself): each entry's outer scope is
    kept on its own stack.
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
    broadcasting made it larger. Written with minigrad operations, `backward` records its own
    graph under `create_graph=True`, so it can be differentiated again.

    Available inside: `self.inputs` (input Tensors), `self.output` (the output Tensor, held
    weakly; a class whose backward never reads it may set `needs_output = False`), `self.xp`
    (the array module of the inputs' device), `self.save_for_backward(*a)` and
    `self.saved_tensors` for anything else backward needs (freed after backward).
    """

    inputs: tuple = ()
    saved_tensors: tuple = ()
    scope = ""
    sequence = -1              # creation order, set when recorded: a node comes after its inputs
    stamp = 0                  # the in-place change count when recorded (see inplace.py)
    _output_ref = None
    xp = _numpy                # the array module of the inputs, set by apply()
    differentiable = True      # False in a subclass whose output never carries a gradient
    needs_output = True        # False: backward never reads self.output, so no weakref is made

    def forward(self, *arrays):
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def backward(self, grad):
        raise NotImplementedError(f"{type(self).__name__}.backward")

    def save_for_backward(self, *arrays) -> None:
        self.saved_tensors = arrays

    def values(self, *tensors) -> tuple:
        """The tensors as `backward` computes with them: their arrays when no graph of the
        backward is recorded (create_graph=False, the common case: no Tensor is made per
        operation), the Tensors themselves when it is (create_graph=True). One formula then
        serves both, e.g. `g, a, b = self.values(grad, *self.inputs); return g * b, g * a`.
        Functions such as exp come from `self.ops`; None stays None."""
        if STATE.grad_enabled:                   # the walk records exactly under create_graph
            return tensors
        return tuple(None if t is None else t.data for t in tensors)

    @property
    def ops(self):
        """The module of functions for `backward` to match `values`: minigrad's operations
        when the backward is recorded, else the array module (`self.xp`)."""
        return _OPS if STATE.grad_enabled else self.xp

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
        backend = _backend_of(cls, inputs)
        fn = cls(**options)
        fn.xp = backend.xp
        try:
            out = fn.forward(*[t.data for t in inputs])
        except (ValueError, TypeError, IndexError) as error:
            if str(error).startswith(cls.__name__):
                raise
            shapes = ", ".join(f"{tuple(t.shape)} {t.dtype}" for t in inputs)
            raise type(error)(f"{cls.__name__}: {error} (inputs: {shapes})") from error
        if type(out) not in _BY_ARRAY_TYPE:
            out = backend.xp.asarray(out)           # NumPy returns scalars from 0-d operands
        result = _Tensor._from_array(out)
        if anomaly.STATE.enabled:
            anomaly.check_forward(fn, inputs, out)
        if STATE.grad_enabled and cls.differentiable and out.dtype.kind in "fc" and \
                any(t._requires_grad for t in inputs):
            fn.inputs = inputs
            fn.sequence = next(_sequence)
            fn.stamp = inplace.STATE.last
            fn.scope = STATE.scope
            if fn.needs_output:
                fn._output_ref = weakref.ref(result)
            result._requires_grad = True
            result._fn = fn
        return result


def _backend_of(cls, inputs):
    """The backend all inputs live on, or a clear error naming the op and the devices."""
    try:
        kind = type(inputs[0].data)
        backend = _BY_ARRAY_TYPE[kind]
    except (AttributeError, IndexError, KeyError):
        if not inputs:
            raise TypeError(f"{cls.__name__}.apply: needs at least one input Tensor") from None
        for t in inputs:
            if not isinstance(t, _Tensor):
                raise TypeError(f"{cls.__name__}.apply: inputs must be Tensors, got "
                                f"{type(t).__name__}; wrap arrays with minigrad.tensor()") \
                    from None
        backend = backend_of(inputs[0].data)
        kind = type(inputs[0].data)
    if backend.multi_device or any(type(t.data) is not kind for t in inputs):
        if len({t.device for t in inputs}) > 1:
            devices = ", ".join(f"{t.device} {tuple(t.shape)}" for t in inputs)
            raise RuntimeError(f"{cls.__name__}: all inputs must be on one device, got "
                               f"{devices}; move them with .to(device)")
    return backend


class _Released(tuple):
    """The type of `saved_tensors` once a backward has freed them: empty, and recognisable."""


_RELEASED = _Released()
_sequence = itertools.count()      # creation order of recorded Functions
_Tensor = None                     # set by tensor.py (the engine and Tensor refer to each other)


class SpentTensor:
    """What a freed graph keeps of an input it no longer needs: its producer (`_fn`), shape,
    dtype and name, no values. A backward without `retain_graph` puts these in place of every
    input that is not a leaf requiring grad, so that a kept `loss` keeps no activations alive
    while the graph's structure can still be drawn."""

    __slots__ = ("_fn", "shape", "dtype", "device", "name", "_requires_grad", "_tensor")
    _retains_grad = False
    _hooks = None
    grad = None

    def __init__(self, t):
        self._fn, self.shape, self.dtype, self.device = t._fn, t.shape, t.dtype, t.device
        self.name, self._requires_grad, self._tensor = t.name, t._requires_grad, weakref.ref(t)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def tensor(self):
        """The tensor itself while something else keeps it alive, else None."""
        return self._tensor()


def _release(functions) -> None:
    """Free what recorded nodes hold for backward: saved arrays, and inputs other than leaves
    that require grad (a kept root must not keep a step's activations alive). A tensor read by
    several of them is replaced by one SpentTensor."""
    spent: dict[int, SpentTensor] = {}
    for fn in functions:
        fn.saved_tensors = _RELEASED
        inputs = []
        for x in fn.inputs:
            if x._fn is None and x._requires_grad or type(x) is SpentTensor:
                inputs.append(x)
            else:
                stub = spent.get(id(x))
                if stub is None:
                    stub = spent[id(x)] = SpentTensor(x)
                inputs.append(stub)
        fn.inputs = tuple(inputs)


# ---------------------------------------------------------------------------------------------
# A gradient that is zero but at an index.

class IndexedGradient:
    """∂L/∂x when only x[index] was read: zero everywhere except `values` at `index`.

    GetItem's backward returns one when no graph is recorded, so that the slices of one tensor
    (the r, z, n gates cut out of a GRU's pre-activations, or q, k, v out of a packed
    projection) add into one buffer instead of each filling and adding a full one.
    """

    __slots__ = ("shape", "index", "is_basic", "values", "xp")

    def __init__(self, shape, index, is_basic: bool, values, xp):
        self.shape, self.index, self.is_basic, self.values = shape, index, is_basic, values
        self.xp = xp

    def add_into(self, buffer) -> None:
        """buffer[index] += values (repeated advanced indices accumulate)."""
        if self.is_basic:                         # a basic index names each element once
            view = buffer[self.index]
            if view.ndim:                         # a view: add into it in place
                view += self.values
            else:                                 # one element, which comes as a copy
                buffer[self.index] += self.values
        else:
            backend_of(buffer).scatter_add(buffer, self.index, self.values)

    def dense(self):
        """A new array of the full shape."""
        buffer = self.xp.zeros(self.shape, dtype=self.values.dtype)
        self.add_into(buffer)
        return buffer


# ---------------------------------------------------------------------------------------------
# The graph walk.

def _key(t) -> int:
    """A tensor's place in the walk: ~(creation number) of its Function, a negative int, so the
    newest comes off a min-heap first; id() for a leaf, which waits until the heap is empty."""
    return id(t) if t._fn is None else ~t._fn.sequence


def _conform(g, x, fn, create_graph: bool):
    """fn's gradient g for its input x as the walk keeps it: summed back to x's shape (undoing
    broadcasting), cast to x's dtype, and an array of x's backend (a Tensor when recording)."""
    if type(g) is IndexedGradient:
        if g.values.dtype != x.dtype:
            g.values = g.values.astype(x.dtype)
        return g
    if create_graph:
        g = g if isinstance(g, _Tensor) else _Tensor._from_array(g)
        if g.shape != x.shape:
            g = _sum_to_tensor(g, x.shape, type(fn).__name__)
        return g.astype(x.dtype)                  # differentiable; a no-op when equal
    g = g.data if isinstance(g, _Tensor) else g
    if g.shape != x.shape:
        g = _sum_to_array(g, x.shape, type(fn).__name__)
    if g.dtype != x.dtype:
        g = g.astype(x.dtype)                     # a float32 input of a float64 op
    return backend_of(x.data).xp.asarray(g)       # NumPy scalars (from 0-d sums) as arrays


def _accumulate(grads: dict, owned: set, key: int, g, create_graph: bool) -> None:
    """Add g into grads[key]. The first gradient is stored as it is (it may be shared: Add
    returns one array for both inputs); the second makes a new buffer, owned by the walk by
    construction; later ones add into that buffer in place. Recording, always `previous + g`."""
    previous = grads.get(key)
    if previous is None:
        grads[key] = g
    elif create_graph:
        grads[key] = previous + g
    else:
        if key not in owned:
            previous = grads[key] = _dense(previous, copy=True)
            owned.add(key)
        if type(g) is IndexedGradient:
            g.add_into(previous)
        else:
            previous += g                         # a real array (never a NumPy scalar)


def _dense(g, copy: bool = False):
    """g as an array: an IndexedGradient filled in (a new buffer), or a copy when asked."""
    if type(g) is IndexedGradient:
        return g.dense()
    return g.copy() if copy else g


def compute_gradients(roots, root_grads, retain_graph: bool, create_graph: bool,
                      capture=()) -> dict[int, tuple]:
    """Propagate `root_grads` back through the graph of `roots`.

    Returns {id(tensor): (tensor, gradient, is_owned)} for the leaves that require grad, for
    tensors that called `retain_grad()`, and for every tensor in `capture`. Gradients are
    Tensors when `create_graph` (recorded, so they can be differentiated again), else arrays;
    `is_owned` says that nothing else holds the array.
    """
    capture_ids = {id(t) for t in capture}
    grads: dict[int, object] = {}
    owned: set[int] = set()
    tensors: dict[int, object] = {}   # key -> tensor, for every tensor that has a gradient
    waiting: list[int] = []           # keys of tensors made by operations, newest first off
    for root, g in zip(roots, root_grads):
        key = _key(root)
        if key not in tensors:
            tensors[key] = root
            if root._fn is not None:
                heapq.heappush(waiting, key)
        _accumulate(grads, owned, key, g, create_graph)
    results: dict[int, tuple] = {}
    done: list = []
    with _GradMode(create_graph):
        while waiting:                    # each key comes off once its gradient is complete
            key = heapq.heappop(waiting)
            tensor = tensors.pop(key)
            fn = tensor._fn
            g, is_owned = _complete(grads.pop(key), key in owned, tensor, create_graph)
            if tensor._retains_grad or id(tensor) in capture_ids:
                results[id(tensor)] = (tensor, g, is_owned)
            if fn.saved_tensors is _RELEASED:
                raise _freed_error(fn)
            if inplace.STATE.last > fn.stamp:
                inplace.check_unchanged(fn)
            done.append(fn)
            input_grads = _call_backward(fn, g, create_graph)
            for x, gx in zip(fn.inputs, input_grads):
                if gx is None or not x._requires_grad:
                    continue
                gx = _conform(gx, x, fn, create_graph)
                assert _conforms(gx, x, create_graph), (type(fn).__name__, x.shape, x.dtype)
                if anomaly.STATE.enabled:
                    anomaly.check_gradient(fn, gx.values if type(gx) is IndexedGradient else
                                           gx.data if create_graph else gx)
                x_key = _key(x)
                if x_key not in tensors:
                    tensors[x_key] = x
                    if x._fn is not None:
                        heapq.heappush(waiting, x_key)
                _accumulate(grads, owned, x_key, gx, create_graph)
        for key, leaf in tensors.items():          # only leaves are left now
            g, is_owned = _complete(grads[key], key in owned, leaf, create_graph)
            results[id(leaf)] = (leaf, g, is_owned)
    if not retain_graph:
        _release(done)
    return results


def _complete(g, is_owned: bool, tensor, create_graph: bool) -> tuple:
    """A tensor's complete gradient as an array (or a Tensor when recording) after its hooks,
    and whether the walk alone holds it."""
    if type(g) is IndexedGradient:
        g, is_owned = g.dense(), True
    if tensor._hooks:
        hooked = _run_hooks(tensor, g, create_graph)
        g, is_owned = hooked, is_owned and hooked is g
    return g, is_owned


def _conforms(g, x, create_graph: bool) -> bool:
    """The walk's invariant: a gradient has its input's shape and dtype, and is an array of its
    backend (a Tensor when recording, an IndexedGradient of the right shape)."""
    if type(g) is IndexedGradient:
        return g.shape == x.shape and g.values.dtype == x.dtype
    kind_ok = isinstance(g, _Tensor) if create_graph else type(g) is type(x.data)
    return kind_ok and g.shape == x.shape and g.dtype == x.dtype


def _call_backward(fn, g, create_graph: bool) -> tuple:
    """fn.backward on the gradient as a Tensor, its result as one entry per input."""
    grad = g if create_graph else _Tensor._from_array(g)
    if anomaly.STATE.enabled:
        with anomaly.paused():    # the ops inside are checked as fn's gradient, not one by one
            input_grads = fn.backward(grad)
    else:
        input_grads = fn.backward(grad)
    if type(input_grads) is not tuple:
        input_grads = (input_grads,)
    if len(input_grads) != len(fn.inputs):
        raise RuntimeError(f"{type(fn).__name__}.backward returned {len(input_grads)} "
                           f"gradient(s) for {len(fn.inputs)} input(s); return one per "
                           f"input (None where an input gets none)")
    return input_grads


def _run_hooks(tensor, g, create_graph: bool):
    """The tensor's hooks called in turn on its complete gradient; a Tensor one returns
    replaces the gradient for the hooks after it and for the rest of the walk."""
    for hook in list(tensor._hooks):
        replaced = hook(g if create_graph else _Tensor._from_array(g))
        if replaced is None:
            continue
        if not isinstance(replaced, _Tensor):
            raise TypeError(f"hook on a tensor of shape {tuple(tensor.shape)} returned a "
                            f"{type(replaced).__name__}; a hook returns a Tensor or None")
        if replaced.shape != tensor.shape:
            raise RuntimeError(f"hook on a tensor of shape {tuple(tensor.shape)} returned a "
                               f"gradient of shape {tuple(replaced.shape)}; a hook may change "
                               f"a gradient's values, not its shape")
        replaced = replaced.astype(tensor.dtype)
        g = replaced if create_graph else replaced.data
    return g


def _freed_error(fn) -> RuntimeError:
    return RuntimeError(
        f"backward through the graph a second time: {type(fn).__name__} has already freed its "
        f"saved values; pass retain_graph=True to the first backward (or to minigrad.grad) to "
        f"keep them")


_sum_to_tensor = _sum_to_array = None     # set by ops/shape.py (the ops import this module)
_OPS = None                               # minigrad.ops, set by ops/__init__.py


# ---------------------------------------------------------------------------------------------
# The two ways in: Tensor.backward and grad.

def backward(tensor, grad=None, retain_graph=False, create_graph=False) -> None:
    """Tensor.backward: add d(tensor)/d(leaf) into each leaf's `.grad`."""
    if not tensor.requires_grad:
        raise RuntimeError(f"backward: this tensor ({tuple(tensor.shape)} {tensor.dtype}) does not "
                           f"require grad (no input of its graph has requires_grad=True, it was "
                           f"computed under no_grad, or it is an integer or bool tensor, which "
                           f"never carries a gradient)")
    root_grad = _root_grad(tensor, grad, "backward", create_graph)
    results = compute_gradients([tensor], [root_grad], retain_graph or create_graph,
                                create_graph)
    for t, g, is_owned in results.values():
        if not create_graph:
            g = _Tensor._from_array(g if is_owned else g.copy())   # never shared with anyone
        t.grad = g if t.grad is None else t.grad + g


def _root_grad(tensor, grad, op, create_graph):
    """The gradient the walk starts from at `tensor`, checked, in the walk's form."""
    if grad is None:
        data = tensor.data
        if data.size != 1:
            raise RuntimeError(f"{op}: grad can be implicit only for a single-element output, "
                               f"got shape {tuple(tensor.shape)}; pass a gradient of that shape")
        ones = backend_of(data).xp.ones(data.shape, dtype=data.dtype)      # d out / d out
        return _Tensor._from_array(ones) if create_graph else ones
    if not isinstance(grad, _Tensor):
        grad = _Tensor._from_array(backend_of(tensor.data).asarray(grad, dtype=tensor.dtype))
    if grad.shape != tensor.shape:
        raise ValueError(f"{op}: gradient shape {tuple(grad.shape)} does not match the output "
                         f"shape {tuple(tensor.shape)}")
    if grad.device != tensor.device:
        raise RuntimeError(f"{op}: gradient is on {grad.device}, output on {tensor.device}")
    grad = grad.astype(tensor.dtype)          # as the output's own gradient would be
    return grad if create_graph else grad.data


_INTEGER_HINT = {kind: " (integer and bool tensors never carry a gradient)" for kind in "iub"}


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False) -> tuple:
    """Gradients of `outputs` with respect to `inputs`, returned rather than stored in `.grad`.

    Like `torch.autograd.grad`: `outputs`/`inputs` are a Tensor or a sequence of Tensors;
    `grad_outputs` may be omitted for single-element outputs; an input that the outputs do not
    depend on raises unless `allow_unused`, when its entry is None.
    """
    outputs = [outputs] if isinstance(outputs, _Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, _Tensor) else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, _Tensor):
        grad_outputs = [grad_outputs] * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"grad: {len(grad_outputs)} grad_outputs for {len(outputs)} outputs")
    for what, tensors in (("input", inputs), ("output", outputs)):
        for i, t in enumerate(tensors):
            if not t.requires_grad:
                raise RuntimeError(f"grad: {what} {i} (shape {tuple(t.shape)}, {t.dtype}) does "
                                   f"not require grad" + _INTEGER_HINT.get(t.dtype.kind, ""))
    if retain_graph is None:
        retain_graph = create_graph
    root_grads = [_root_grad(out, g, "grad", create_graph)
                  for out, g in zip(outputs, grad_outputs)]
    results = compute_gradients(outputs, root_grads, retain_graph, create_graph, capture=inputs)
    answer = []
    for i, t in enumerate(inputs):
        found = results.get(id(t))
        if found is None:
            if not allow_unused:
                raise RuntimeError(f"grad: input {i} (shape {tuple(t.shape)}) was not used to "
                                   f"compute the outputs; pass allow_unused=True to get None")
            answer.append(None)
            continue
        _, g, is_owned = found
        if not create_graph:
            g = _Tensor._from_array(g if is_owned else g.copy())
        answer.append(g)
    return tuple(answer)
