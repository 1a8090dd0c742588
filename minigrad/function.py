"""Function: one node of the graph, `apply` that records it, and the one way to write a
derivative as a hand-written array kernel (`FusedFunction`).

A tensor made by an operation points to the Function that made it (`tensor._fn`). The Function
holds its inputs strongly and its output weakly, so a graph is a DAG with no reference cycles and
goes away as soon as nobody holds its root. `autograd.py` walks that graph.

Every derivative is a Function's `backward(grad)`, written with minigrad operations (through
`values`/`ops`, the same formula computes on bare arrays in a plain backward and on Tensors when
create_graph records it). A fused primitive whose derivative is faster as a hand-written array
kernel (layer norm, cross-entropy, attention, a whole GRU sequence) subclasses `FusedFunction`
and writes `array_backward`, with `recorded_backward` for create_graph.
"""

from __future__ import annotations

import itertools
import weakref

import numpy as _numpy

from . import anomaly, inplace
from . import tensor as _tensor_module    # its one late binding gives `ops` and `autograd`
from ._errors import restated
from .backend import _BY_ARRAY_TYPE, backend_of_inputs
from .backend import CPU as _CPU
from .gradients import _RELEASED
from .grad_mode import STATE
from .recording import SLOT as _RECORDING
from .recording import recorder as _recorder_here
from .tensor import Tensor


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

    A forward that also changes some inputs' arrays in place (a batch norm's running
    statistics) names their positions in `updates` (a class attribute, or set in `__init__`):
    those inputs must not require grad, are marked changed after forward (a graph that saved
    them refuses backward, as after `add_`), and a compiled step's replay changes them again.

    Available inside: `self.inputs` (input Tensors), `self.output` (the output Tensor, held
    weakly; a class whose backward never reads it may set `needs_output = False`), `self.xp`
    (the array module of the inputs' device), `self.save_for_backward(*a)` and
    `self.saved_tensors` for anything else backward needs (freed after backward), and
    `self.values(grad, *self.inputs)` / `self.ops` to write one backward that computes on bare
    arrays unless create_graph records it (the built-in primitives do; see `values`). Instead of
    `backward`, a class may write `gradients(self, g, *values)`, the same formula on the values
    `values` gives (see `gradients`): `minigrad.compile`'s replay then calls it with its arrays.
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
    needs_inputs = True        # False: the `gradients` formula is given no input values
    updates: tuple = ()        # positions of the inputs forward changes in place (see above)
    # True: `backward` may be given the gradient as a bare array when no graph of it is recorded
    # (it reads grad only through `values`, or as an array would be read), which spares a
    # Tensor per node; minigrad's own backwards (see __init_subclass__) and FusedFunction's
    array_grad = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "gradients" in cls.__dict__ and "backward" not in cls.__dict__:
            # `gradients` on the values it is given, chosen once here rather than per call
            cls.backward = _FORMULA_BACKWARDS[cls.needs_inputs, cls.needs_output]
        if "backward" in cls.__dict__ and "array_grad" not in cls.__dict__:
            cls.array_grad = cls.__module__.startswith("minigrad.")  # a class of your own: False

    def forward(self, *arrays):
        """The output array from the inputs' backend arrays (use `self.xp` for functions)."""
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def backward(self, grad):
        """∂L/∂input for each input, given grad = ∂L/∂output (a Tensor): a tuple when there are
        several inputs, None for an input that gets no gradient. A class that writes
        `gradients` instead gets a backward that calls it (see `_FORMULA_BACKWARDS`)."""
        raise NotImplementedError(f"{type(self).__name__}.backward")

    def gradients(self, g, *values):
        """A backward written as one formula of plain values, for a class that does not write
        `backward` itself: g = ∂L/∂output, then the inputs' values (unless the class sets
        needs_inputs = False) and the output's (unless needs_output = False), arrays or, under
        create_graph, Tensors, as `values` gives them. Returns what `backward` does (for one
        input, its gradient alone). It reads from `self` only its options and which inputs
        require grad (`self.inputs[i]._requires_grad`), so that `minigrad.compile`'s replay can
        call it with the arrays it holds."""
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
        if not tensors:
            return ()
        first = tensors[0]
        if type(first) not in _BY_ARRAY_TYPE:   # else a gradient given as an array (array_grad):
            if STATE.mode.grad_enabled:          # none recorded; the walk records exactly
                return tensors                   # under create_graph
            first = first.data
        arrays = [first]
        for t in tensors[1:]:                    # a loop: cheaper than map or a comprehension
            arrays.append(t.data)
        return tuple(arrays)

    @property
    def ops(self):
        """The module of functions for `backward` to match `values`: minigrad's operations
        when the backward is recorded, else the array module (`self.xp`)."""
        return _tensor_module.ops if STATE.mode.grad_enabled else self.xp

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
        if _RECORDING.recorder is not None:          # minigrad.compile is capturing a step
            recorder = _recorder_here()              # None in another thread
            if recorder is not None:
                return recorder.apply(cls, inputs, options)
        arrays, backend = [], _CPU
        try:
            for t in inputs:
                array = t.data
                if type(array) is not _ndarray:  # all NumPy arrays: the CPU, nothing to check
                    backend = None
                arrays.append(array)
        except AttributeError:                   # not a Tensor
            backend = None
        if backend is None or not arrays:        # the full check, which names what is wrong
            backend = backend_of_inputs(cls.__name__, inputs)
            arrays = [t.data for t in inputs]
        fn = cls(**options) if options else cls()
        if backend is not _CPU:
            fn.xp = backend.xp                       # NumPy is the class default
        updates = fn.updates
        if updates:
            _check_updates(fn, inputs)
        try:
            if len(arrays) == 2:                 # written out: cheaper than a call with *
                out = fn.forward(arrays[0], arrays[1])
            else:
                out = fn.forward(*arrays)
        except (ValueError, TypeError, IndexError) as error:
            if str(error).startswith(cls.__name__):
                raise
            shapes = ", ".join(f"{tuple(t.shape)} {t.dtype}" for t in inputs)
            raise restated(error, f"{cls.__name__}: {error} (inputs: {shapes})") from error
        if type(out) is not _ndarray and type(out) not in _BY_ARRAY_TYPE:
            out = backend.xp.asarray(out)           # NumPy returns scalars from 0-d operands
        if updates:
            for position in updates:
                inplace.mark_changed(inputs[position])
        result = _new_tensor(Tensor)                 # Tensor._from_array(out), checked above
        result.data, result._requires_grad, result._fn = out, False, None
        if anomaly.STATE.enabled:
            anomaly.check_forward(fn, inputs, out)
        for t in inputs:
            if t._requires_grad:
                mode = STATE.mode                # grad mode and scope: one thread-local read
                if mode.grad_enabled and cls.differentiable and out.dtype.kind in "fc":
                    # fn made result from inputs (inside the scope), as the graph records it
                    fn.inputs = inputs
                    fn.sequence = next(_sequence)
                    fn.stamp = inplace.STATE.last
                    if mode.scope:
                        fn.scope = mode.scope
                    if fn.needs_output:
                        fn._output_ref = weakref.ref(result)
                    result._requires_grad = True
                    result._fn = fn
                break
        return result


def _check_updates(fn, inputs) -> None:
    """The inputs a forward changes in place (`updates`) must not require grad: their old
    values would be lost to the backward."""
    for position in fn.updates:
        t = inputs[position]
        if t.requires_grad:
            raise RuntimeError(f"{type(fn).__name__}: input {position} (shape {tuple(t.shape)}) "
                               f"is changed in place by the operation and must not require grad")


# Given the gradient as an array (array_grad: no graph of the backward is recorded), the three
# below read the arrays themselves, as `values` would give them, for one or two inputs: a call
# of `values` with its arguments gathered through * costs more than most formulas.

def _formula_of_inputs_and_output(self, grad):
    values = self.values(grad, *self.inputs, self.output)
    if len(values) == 3:                     # written out: cheaper than a call with *
        return self.gradients(values[0], values[1], values[2])
    return self.gradients(*values)


def _formula_of_inputs(self, grad):
    inputs = self.inputs
    if type(grad) in _BY_ARRAY_TYPE:
        if len(inputs) == 2:
            return self.gradients(grad, inputs[0].data, inputs[1].data)
        if len(inputs) == 1:
            return self.gradients(grad, inputs[0].data)
    values = self.values(grad, *inputs)
    if len(values) == 3:                     # written out: cheaper than a call with *
        return self.gradients(values[0], values[1], values[2])
    return self.gradients(*values)


def _formula_of_output(self, grad):
    if type(grad) in _BY_ARRAY_TYPE:
        return self.gradients(grad, self.output.data)
    g, y = self.values(grad, self.output)
    return self.gradients(g, y)


def _formula_of_gradient(self, grad):
    if type(grad) in _BY_ARRAY_TYPE:
        return self.gradients(grad)
    (g,) = self.values(grad)
    return self.gradients(g)


# The backward of a class that writes `gradients`: the formula on `values` of the gradient, the
# inputs (unless needs_inputs is False) and the output (unless needs_output is False); keyed by
# (needs_inputs, needs_output)
_FORMULA_BACKWARDS = {(True, True): _formula_of_inputs_and_output,
                      (True, False): _formula_of_inputs,
                      (False, True): _formula_of_output, (False, False): _formula_of_gradient}

_new_tensor = object.__new__
_ndarray = _numpy.ndarray
_sequence = itertools.count()      # creation order of recorded Functions


class FusedFunction(Function):
    """A primitive whose derivative is a hand-written kernel on arrays: the one mechanism for
    fused kernels (layer norm, cross-entropy, attention, a whole GRU sequence), where a chain
    of recorded operations would cost a Tensor per step.

    `array_backward(grad)`: grad = ∂L/∂output as a backend array; returns one array (or None)
    per input, as `backward` does. A plain backward calls it.

    `recorded_backward(grad)`: grad a Tensor; returns Tensors built from minigrad operations,
    so that create_graph=True can differentiate the gradient again. Write it with the same
    formula on Tensors, or rebuild the output from differentiable operations and let
    `recorded_gradients` take its vector-Jacobian product (exact higher derivatives either way).
    """

    array_grad = True

    def backward(self, grad):
        if not isinstance(grad, Tensor):         # an array: nothing is recorded (array_grad)
            return self.array_backward(grad)
        if STATE.mode.grad_enabled:              # the walk records exactly under create_graph
            return self.recorded_backward(grad)
        return self.array_backward(grad.data)

    def array_backward(self, grad):
        """∂L/∂input for each input as arrays, given grad = ∂L/∂output as an array."""
        raise NotImplementedError(f"{type(self).__name__}.array_backward")

    def recorded_backward(self, grad):
        """∂L/∂input for each input as recorded Tensors (create_graph=True)."""
        raise NotImplementedError(f"{type(self).__name__}.recorded_backward")

    def recorded_gradients(self, rebuild, grad, candidates=None) -> tuple:
        """The input gradients for create_graph: `rebuild(*inputs)` makes this Function's output
        again from its inputs with differentiable minigrad operations; its vector-Jacobian
        product with `grad` is taken for the inputs among `candidates` (indices; all when None)
        that require grad, None for the rest.

        The output is rebuilt from new nodes equal to the inputs (t + 0), and the product is
        taken with respect to those: taken with respect to the inputs themselves, it would also
        follow an input computed from another one (a target y = g(z) of a loss of z) back to
        that one, and the backward that called this would add that path a second time."""
        if candidates is None:
            candidates = range(len(self.inputs))
        inputs = [t + 0.0 if t.requires_grad else t for t in self.inputs]
        output = rebuild(*inputs)
        wanted = [i for i in candidates if inputs[i].requires_grad]
        found = _tensor_module.autograd.grad(output, [inputs[i] for i in wanted],
                                             grad_outputs=grad, create_graph=True,
                                             allow_unused=True)
        grads = [None] * len(self.inputs)
        for i, g in zip(wanted, found):
            grads[i] = g
        return tuple(grads)

