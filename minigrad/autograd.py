"""Reverse-mode automatic differentiation: grad mode, Function, the graph walk, backward, grad.

A tensor made by an operation points to the Function that made it (`tensor._fn`). The Function
holds its inputs strongly and its output weakly, so a graph is a DAG with no reference cycles and
goes away as soon as nobody holds its root. Backward is one iterative walk over that DAG, newest
operation first: an output is always made after its inputs, so reverse creation order is a
topological order. Nothing recurses, so an unrolled GRU thousands of steps deep works.

Every gradient takes one path: a Function's `backward`, then `_conform`, which sums it back to
its input's shape and casts it to the input's dtype (a gradient that already fits passes as it
is), then `_accumulate`, which adds it to what the input already received. `backward` computes
on arrays, or on Tensors when `create_graph=True` records the backward itself (see
`Function.values`): one formula per derivative serves both.
"""

from __future__ import annotations

import heapq
import itertools
import operator
import weakref

import numpy as _numpy

from . import anomaly, inplace
from .backend import _BY_ARRAY_TYPE, backend_of, backend_of_inputs
from .backend import CPU as _CPU
from .gradients import _RELEASED, IndexedGradient, release
from .grad_mode import STATE, _GradMode


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
    `self.saved_tensors` for anything else backward needs (freed after backward), and
    `self.values(grad, *self.inputs)` / `self.ops` to write one backward that computes on bare
    arrays unless create_graph records it (the built-in primitives do; see `values`).
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
        """The output array from the inputs' backend arrays (use `self.xp` for functions)."""
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def backward(self, grad):
        """∂L/∂input for each input, given grad = ∂L/∂output (a Tensor): a tuple when there are
        several inputs, None for an input that gets no gradient."""
        raise NotImplementedError(f"{type(self).__name__}.backward")

    def save_for_backward(self, *arrays) -> None:
        """Keep arrays (a mask, a max's positions) for backward as `self.saved_tensors`; a
        backward without retain_graph frees them."""
        self.saved_tensors = arrays

    def values(self, *tensors) -> tuple:
        """The tensors as `backward` computes with them: their arrays when no graph of the
        backward is recorded (create_graph=False, the common case: no Tensor is made per
        operation), the Tensors themselves when it is (create_graph=True). One formula then
        serves both, e.g. `g, a, b = self.values(grad, *self.inputs); return g * b, g * a`.
        Functions such as exp come from `self.ops`."""
        if STATE.grad_enabled:                   # the walk records exactly under create_graph
            return tensors
        return tuple(map(_data_of, tensors))

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
        """The output Tensor (held weakly: None once nothing else holds it)."""
        if not self.needs_output:
            raise RuntimeError(f"{type(self).__name__}.output: not kept, since the class sets "
                               f"needs_output = False")
        return self._output_ref() if self._output_ref is not None else None

    @classmethod
    def apply(cls, *inputs, **options):
        """`cls(**options).forward` on the inputs' arrays, as a Tensor linked into the graph
        when grad mode is on and an input requires grad."""
        if _recorder is not None:                  # minigrad.compile is capturing a step
            return _recorder.apply(cls, inputs, options)
        backend = backend_of_inputs(cls.__name__, inputs)
        fn = cls(**options)
        if backend is not _CPU:
            fn.xp = backend.xp                       # NumPy is the class default
        try:
            out = fn.forward(*[t.data for t in inputs])
        except (ValueError, TypeError, IndexError) as error:
            if str(error).startswith(cls.__name__):
                raise
            shapes = ", ".join(f"{tuple(t.shape)} {t.dtype}" for t in inputs)
            raise type(error)(f"{cls.__name__}: {error} (inputs: {shapes})") from error
        if type(out) not in _BY_ARRAY_TYPE:
            out = backend.xp.asarray(out)           # NumPy returns scalars from 0-d operands
        result = _new_tensor(_Tensor)                # Tensor._from_array(out), checked above
        result.data, result._requires_grad, result._fn = out, False, None
        if anomaly.STATE.enabled:
            anomaly.check_forward(fn, inputs, out)
        if STATE.grad_enabled and cls.differentiable and out.dtype.kind in "fc":
            for t in inputs:
                if t._requires_grad:
                    _link(fn, inputs, result)
                    break
        return result


def _link(fn, inputs: tuple, result) -> None:
    """Record fn as the operation that made `result` from `inputs`."""
    fn.inputs = inputs
    fn.sequence = next(_sequence)
    fn.stamp = inplace.STATE.last
    scope = STATE.scope
    if scope:
        fn.scope = scope
    if fn.needs_output:
        fn._output_ref = weakref.ref(result)
    result._requires_grad = True
    result._fn = fn


_new_tensor = object.__new__
_data_of = operator.attrgetter("data")
_sequence = itertools.count()      # creation order of recorded Functions
_Tensor = None                     # set by tensor.py (the engine and Tensor refer to each other)
_recorder = None                   # what minigrad.compile records a step with, while it does


def set_recorder(recorder):
    """Send every operation, backward walk and value read to `recorder` (None: stop); returns
    the one set before. `minigrad.compile` captures a step through it (see compiled.py)."""
    global _recorder
    previous, _recorder = _recorder, recorder
    return previous


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
    data = x.data
    if create_graph:
        g = g if isinstance(g, _Tensor) else _Tensor._from_array(g)
        if g.shape != data.shape:
            g = _sum_to_tensor(g, data.shape, type(fn).__name__)
        return g.astype(data.dtype)               # differentiable; a no-op when equal
    if isinstance(g, _Tensor):
        g = g.data
    if g.shape != data.shape:
        g = _sum_to_array(g, data.shape, type(fn).__name__)
    if g.dtype != data.dtype:
        g = g.astype(data.dtype)                  # a float32 input of a float64 op
    if type(g) is not type(data):                 # NumPy scalars (from 0-d operations)
        g = backend_of(data).xp.asarray(g)
    return g


def _accumulate(grads: dict, owned: set, key: int, g, create_graph: bool) -> None:
    """Add g into grads[key]. The first gradient is stored as it is (it may be shared: Add
    returns one array for both inputs); the second makes a new buffer, owned by the walk by
    construction; later ones add into that buffer in place. Recording, always `previous + g`.
    Returns which of these it did: "set", "copy" (then add) or "add"."""
    previous = grads.get(key)
    if previous is None:
        grads[key] = g
        return "set"
    if create_graph:
        grads[key] = previous + g
        return "add"
    kind = "add"
    if key not in owned:
        previous = grads[key] = _dense(previous, copy=True)
        owned.add(key)
        kind = "copy"
    if type(g) is IndexedGradient:
        g.add_into(previous)
    else:
        previous += g                             # a real array (never a NumPy scalar)
    return kind


def _dense(g, copy: bool = False):
    """g as an array: an IndexedGradient filled in (a new buffer), or a copy when asked, laid
    out as g is (the gradient of a weight read as W.T arrives transposed at every step, and
    adds fastest into a buffer of the same layout)."""
    if type(g) is IndexedGradient:
        return g.dense()
    return g.copy(order="K") if copy else g


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
    checked = anomaly.STATE.enabled
    recorder = _recorder                  # minigrad.compile records the walk when set
    if recorder is not None:
        recorder.walk_begin(roots, root_grads)
    with _GradMode(create_graph):
        while waiting:                    # each key comes off once its gradient is complete
            key = heapq.heappop(waiting)
            tensor = tensors.pop(key)
            fn = tensor._fn
            g, is_owned = grads.pop(key), key in owned
            if type(g) is IndexedGradient or tensor._hooks:
                g, is_owned = _complete(g, is_owned, tensor, create_graph)
            if tensor._retains_grad or id(tensor) in capture_ids:
                results[id(tensor)] = (tensor, g, is_owned)
            if fn.saved_tensors is _RELEASED:
                raise _freed_error(fn)
            if inplace.STATE.last > fn.stamp:
                inplace.check_unchanged(fn)
            done.append(fn)
            input_grads = _call_backward(fn, g, create_graph, checked)
            if recorder is not None:
                recorder.visit(fn, key, input_grads)
            for x, gx in zip(fn.inputs, input_grads):
                if gx is None or not x._requires_grad:
                    continue
                raw = gx
                data = x.data         # an array of x's type, shape and dtype passes as it is
                if create_graph or type(gx) is not type(data) or gx.shape != data.shape or \
                        (gx.dtype is not data.dtype and gx.dtype != data.dtype):
                    gx = _conform(gx, x, fn, create_graph)
                    assert _conforms(gx, x, create_graph), (type(fn).__name__, data.shape)
                if checked:
                    anomaly.check_gradient(fn, gx)
                x_fn = x._fn
                x_key = id(x) if x_fn is None else ~x_fn.sequence       # as _key(x)
                if x_key not in tensors:
                    tensors[x_key] = x
                    if x_fn is not None:
                        heapq.heappush(waiting, x_key)
                kind = _accumulate(grads, owned, x_key, gx, create_graph)
                if recorder is not None:
                    recorder.edge(x, x_key, raw, gx, kind)
        for key, leaf in tensors.items():          # only leaves are left now
            g, is_owned = _complete(grads[key], key in owned, leaf, create_graph)
            results[id(leaf)] = (leaf, g, is_owned)
    if not retain_graph:
        release(done)
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
    data = x.data
    if type(g) is IndexedGradient:
        return g.shape == data.shape and g.values.dtype == data.dtype
    kind_ok = isinstance(g, _Tensor) if create_graph else type(g) is type(data)
    return kind_ok and g.shape == data.shape and g.dtype == data.dtype


def _call_backward(fn, g, create_graph: bool, checked: bool) -> tuple:
    """fn.backward on the gradient as a Tensor, its result as one entry per input."""
    if create_graph:
        grad = g
    else:
        grad = _new_tensor(_Tensor)              # Tensor._from_array(g): g is an array
        grad.data, grad._requires_grad, grad._fn = g, False, None
    if checked:
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
    if _recorder is not None:
        _recorder.backward_root(tensor, grad, root_grad, create_graph)
    results = compute_gradients([tensor], [root_grad], retain_graph or create_graph,
                                create_graph)
    for t, g, is_owned in results.values():
        if _recorder is not None:
            _recorder.land(t, g, is_owned)
        if not create_graph:
            g = _Tensor._from_array(g if is_owned else g.copy())   # never shared with anyone
        t.grad = g if t.grad is None else t.grad + g
    if _recorder is not None:
        _recorder.walk_end()


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
