"""Reverse-mode automatic differentiation: the graph walk, `Tensor.backward` and `grad`.

Backward is one iterative walk over the graph of Functions (see function.py), newest operation
first: an output is always made after its inputs, so reverse creation order is a topological
order. Nothing recurses, so an unrolled GRU thousands of steps deep works.

Every gradient takes one path: a Function's `backward`, then `_conform`, which sums it back to
its input's shape and casts it to the input's dtype (a gradient that already fits passes as it
is), then the input receives it: the walk keeps a first gradient as it is and `_accumulate`
adds a later one to it. The roots receive theirs the same way before the first node runs.
`backward` computes on arrays, or on Tensors when `create_graph=True` records the backward itself (see
`Function.values`): one formula per derivative serves both.
"""

from __future__ import annotations

import heapq
import sys

import numpy as np

from . import anomaly, inplace, recording
from .backend import backend_of
from .function import Function, FusedFunction  # noqa: F401  (their home before function.py)
from .gradients import _RELEASED, IndexedGradient, held_alone, release
from .grad_mode import STATE, _GradMode  # noqa: F401  (STATE: read here by older code)
from .ops.shape import sum_to as _sum_to_tensor
from .ops.shape import sum_to_array as _sum_to_array
from .tensor import Tensor

_new_tensor = object.__new__
_heappop, _heappush = heapq.heappop, heapq.heappush


# ---------------------------------------------------------------------------------------------
# The graph walk.

def compute_gradients(roots, root_grads, retain_graph: bool, create_graph: bool,
                      capture=()) -> dict[int, tuple]:
    """Propagate `root_grads` back through the graph of `roots`.

    Returns {id(tensor): (tensor, gradient, is_owned)} for the leaves that require grad, for
    tensors that called `retain_grad()`, and for every tensor in `capture`. Gradients are
    Tensors when `create_graph` (recorded, so they can be differentiated again), else arrays;
    `is_owned` says that nothing else holds the array.
    """
    # key -> [tensor, the gradient received so far, whether the walk made that buffer itself]
    entries: dict[int, list] = {}
    waiting: list[int] = []           # keys of tensors made by operations, newest first off
    recorder = recording.recorder()   # minigrad.compile capturing a step records the walk
    if recorder is not None:
        recorder.walk_begin(roots)
    results: dict[int, tuple] = {}
    capture_ids = {id(t) for t in capture}
    done: list = []
    checked = anomaly.STATE.enabled
    hooked = Tensor._hooks_used           # False: no tensor has a hook or retain_grad to test
    fn, inputs, input_grads = None, roots, root_grads    # first the roots receive theirs
    with _GradMode(create_graph):
        while True:
            i = 0                   # an index kept by hand: zip or enumerate of two short
            for x in inputs:        # tuples costs more than the rest of this loop
                gx = input_grads[i]                    # fn's gradient gx for its input x
                i += 1
                if gx is None or not x._requires_grad:
                    continue
                if fn is not None:
                    data = x.data     # fast path: an array of x's type, shape and dtype fits
                    if create_graph or type(gx) is not type(data) or \
                            gx.shape != data.shape or \
                            (gx.dtype is not data.dtype and gx.dtype != data.dtype):
                        gx = _conform(gx, x, fn, create_graph)
                    if checked:
                        anomaly.check_gradient(fn, gx)
                # x receives gx. The first time, x joins the walk under its key (a tensor made
                # by an operation waits on the heap) and gx is kept as it is (it may be shared:
                # Add returns one array for both inputs); later ones are added to it by
                # `_accumulate`. The key: ~(creation number) of x's Function, a negative int,
                # so the newest comes off the min-heap first; id() for a leaf, never on the heap
                x_fn = x._fn
                key = id(x) if x_fn is None else ~x_fn.sequence
                entry = entries.get(key)
                if entry is None:
                    entries[key] = [x, gx, False]
                    if x_fn is not None:
                        _heappush(waiting, key)
                    kind = "set"
                else:
                    kind = _accumulate(entry, gx, create_graph)
                if recorder is not None and fn is not None:
                    recorder.edge(x, kind)
            if not waiting:
                break
            key = _heappop(waiting)    # each key comes off once its gradient is complete
            tensor, g, is_owned = entries.pop(key)
            if hooked and (tensor._hooks or tensor._retains_grad) or capture_ids or \
                    type(g) is IndexedGradient:
                g, is_owned = _report(results, capture_ids, tensor, g, is_owned, create_graph)
            fn = tensor._fn
            done.append(fn)
            # fn's backward, after the node's checks: a node whose saved values a backward has
            # freed, or which saved a tensor changed in place after it was recorded (see
            # inplace.py), is refused; one test for both, as release sets a freed stamp to -1
            if fn.stamp < inplace.STATE.last:
                if fn.saved_tensors is _RELEASED:
                    raise _freed_error(fn)
                inplace.check_unchanged(fn)
            if not (create_graph or fn.array_grad):   # g an array, and backward wants a Tensor
                grad = _new_tensor(Tensor)              # Tensor._from_array(g)
                grad.data, grad._requires_grad, grad._fn = g, False, None
                g = grad
            if checked:
                with anomaly.paused():    # the ops inside are checked as fn's gradient
                    input_grads = fn.backward(g)
            else:
                input_grads = fn.backward(g)
            if type(input_grads) is not tuple:
                input_grads = (input_grads,)
            inputs = fn.inputs
            if len(input_grads) != len(inputs):
                raise _count_error(fn, input_grads)
            if recorder is not None:
                recorder.visit(fn, input_grads)
        for leaf, g, is_owned in entries.values():    # only leaves are left now
            _report(results, None, leaf, g, is_owned, create_graph)
    if not retain_graph:
        release(done)
    return results


def _report(results: dict, capture_ids, tensor, g, is_owned: bool, create_graph: bool):
    """A tensor's complete gradient, after its hooks, put in `results` when the caller asked
    for it (a leaf, `retain_grad()`, or `capture`; capture_ids None: report it anyway)."""
    if type(g) is IndexedGradient or tensor._hooks:
        g, is_owned = _complete(g, is_owned, tensor, create_graph)
    if capture_ids is None or tensor._retains_grad or id(tensor) in capture_ids:
        results[id(tensor)] = (tensor, g, is_owned)
    return g, is_owned


def _conform(g, x, fn, create_graph: bool):
    """fn's gradient g for its input x as the walk keeps it: summed back to x's shape (undoing
    broadcasting), cast to x's dtype, and an array of x's backend (a Tensor when recording).
    The walk calls it only for a gradient that does not already fit (see its fast path)."""
    data = x.data
    if type(g) is IndexedGradient:
        if g.values.dtype != data.dtype:
            g.values = g.values.astype(data.dtype)
        return g
    if create_graph:
        g = g if isinstance(g, Tensor) else Tensor._from_array(g)
        if g.shape != data.shape:
            g = _sum_to_tensor(g, data.shape, type(fn).__name__)
        return g.astype(data.dtype)               # differentiable; a no-op when equal
    if isinstance(g, Tensor):
        g = g.data
    if g.shape != data.shape:
        g = _sum_to_array(g, data.shape, type(fn).__name__)
    if g.dtype != data.dtype:
        g = g.astype(data.dtype)                  # a float32 input of a float64 op
    if type(g) is not type(data):                 # NumPy scalars (from 0-d operations)
        g = backend_of(data).xp.asarray(g)
    return g


def _accumulate(entry: list, g, create_graph: bool) -> str:
    """Add g into the gradient an entry of the walk holds, `[tensor, gradient, owned]`. The
    second gradient makes a new buffer, the sum itself (the first may be shared, so nothing is
    added into it), owned by the walk by construction; later ones add into that buffer in
    place. Recording, always `previous + g`. Returns which it did ("copy": a buffer of the
    walk's own, then add; or "add" in place), for a compiled step to replay the same."""
    previous = entry[1]
    if create_graph:
        entry[1] = previous + g
        return "add"
    if entry[2]:
        if type(g) is IndexedGradient:
            g.add_into(previous)
        else:
            previous += g                         # a real array (never a NumPy scalar)
        return "add"
    if type(g) is IndexedGradient:
        total = _dense(previous, copy=True)
        g.add_into(total)
    elif type(previous) is IndexedGradient:
        total = previous.dense()
        total += g
    else:
        total = previous + g                      # laid out as its operands are
        if type(total) is not type(previous):     # a NumPy scalar, from 0-d operands
            total = backend_of(previous).xp.asarray(total)
    entry[1], entry[2] = total, True
    return "copy"


def _dense(g, copy: bool = False):
    """g as an array: an IndexedGradient filled in (a new buffer), or a copy when asked, laid
    out as g is (the gradient of a weight read as W.T arrives transposed at every step, and
    adds fastest into a buffer of the same layout)."""
    if type(g) is IndexedGradient:
        return g.dense()
    return g.copy(order="K") if copy else g


def _complete(g, is_owned: bool, tensor, create_graph: bool) -> tuple:
    """A tensor's complete gradient as an array (or a Tensor when recording) after its hooks,
    and whether the walk alone holds it. An IndexedGradient is filled in here."""
    if type(g) is IndexedGradient:
        g, is_owned = g.dense(), True
    if tensor._hooks:
        hooked = _run_hooks(tensor, g, create_graph)
        g, is_owned = hooked, is_owned and hooked is g
    return g, is_owned


def _run_hooks(tensor, g, create_graph: bool):
    """The tensor's hooks called in turn on its complete gradient; a Tensor one returns
    replaces the gradient for the hooks after it and for the rest of the walk."""
    for hook in list(tensor._hooks):
        replaced = hook(g if create_graph else Tensor._from_array(g))
        if replaced is None:
            continue
        if not isinstance(replaced, Tensor):
            raise TypeError(f"hook on a tensor of shape {tuple(tensor.shape)} returned a "
                            f"{type(replaced).__name__}; a hook returns a Tensor or None")
        if replaced.shape != tensor.shape:
            raise RuntimeError(f"hook on a tensor of shape {tuple(tensor.shape)} returned a "
                               f"gradient of shape {tuple(replaced.shape)}; a hook may change "
                               f"a gradient's values, not its shape")
        replaced = replaced.astype(tensor.dtype)
        g = replaced if create_graph else replaced.data
    return g


def _count_error(fn, input_grads: tuple) -> RuntimeError:
    return RuntimeError(f"{type(fn).__name__}.backward returned {len(input_grads)} gradient(s) "
                        f"for {len(fn.inputs)} input(s); return one per input (None where an "
                        f"input gets none)")


def _freed_error(fn) -> RuntimeError:
    return RuntimeError(
        f"backward through the graph a second time: {type(fn).__name__} has already freed its "
        f"saved values; pass retain_graph=True to the first backward (or to minigrad.grad) to "
        f"keep them")


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
    recorder = recording.recorder()   # minigrad.compile capturing a step records where it lands
    if recorder is not None:
        recorder.backward_root(tensor, grad, root_grad, create_graph)
    results = compute_gradients([tensor], [root_grad], retain_graph or create_graph,
                                create_graph)
    if recorder is not None:
        recorder.landings(results)
    for t, g, is_owned in results.values():
        if t.grad is not None:
            t.grad = _grad_plus(t.grad, g, create_graph)
        elif create_graph:
            t.grad = g
        else:
            t.grad = _handed_out(g, is_owned)
    if recorder is not None:
        recorder.walk_end()


def _grad_plus(grad, g, create_graph: bool):
    """A leaf's `.grad` plus the walk's gradient g, as a new Tensor: the sum only reads g, so
    g is not copied first, and the caller's `.grad` is left as it was."""
    return grad + (g if create_graph else Tensor._from_array(g))


def _root_grad(tensor, grad, op, create_graph):
    """The gradient the walk starts from at `tensor`, checked, in the walk's form."""
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
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, Tensor):
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
            g = _handed_out(g, is_owned)
        answer.append(g)
    return tuple(answer)


def _handed_out(g, is_owned: bool):
    """A walk's gradient g (an array) as the Tensor handed to the caller, shared with no one:
    g itself when the walk made it (`is_owned`) or nothing but the caller's entry of the
    walk's results and its name for g hold it (`held_alone`), else a copy (one array that Add
    gave to two inputs, a gradient the caller passed in, a view)."""
    return Tensor._from_array(g if is_owned or held_alone(g, _HELD_BY_A_RESULT) else g.copy())


def _held_by_a_result_alone() -> int:
    """What `held_alone` reads in `_handed_out` for an array that only its entry of the
    results and the loop's name for it hold, as `backward` and `grad` read them (the entry,
    the name, three arguments: 5 on CPython 3.11). Measured as they call it, not assumed, so
    that a Python that counts fewer references on its stack does not take an array someone
    else holds for one nobody does."""
    def handed_out(g):
        return count(g)

    def count(g):
        return sys.getrefcount(g)

    for _, g, _ in {0: (None, np.empty(1), False)}.values():
        return handed_out(g)


_HELD_BY_A_RESULT = _held_by_a_result_alone()
