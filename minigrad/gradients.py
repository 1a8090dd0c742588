"""What the graph walk keeps besides arrays: a gradient that is zero but at an index, and
what a freed graph keeps of the tensors it no longer needs."""

from __future__ import annotations

import sys
import weakref

import numpy as np

from .backend import backend_of


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


class _Released(tuple):
    """The type of `saved_tensors` once a backward has freed them: empty, and recognisable."""


_RELEASED = _Released()
FREED_STAMP = -1      # a freed node's stamp: older than every in-place change count (0 and up)


class SpentTensor:
    """What a freed graph keeps of an input it no longer needs: its producer (`_fn`), shape,
    dtype and name, no values. A backward without `retain_graph` puts these in place of every
    input that is not a leaf requiring grad, so that a kept `loss` keeps no activations alive
    while the graph's structure can still be drawn.

    `release` fills the slots itself (no `__init__` call per stub); what follows from them is
    computed when read: a stub stands for a tensor made by an operation (which requires grad)
    or for a constant (which does not), `_device` is set only for an array that is not NumPy's,
    and `_tensor` is a weak reference only when something else still held the tensor as the
    graph let it go (None otherwise: it went with the graph)."""

    __slots__ = ("_fn", "shape", "dtype", "name", "_device", "_tensor")
    _retains_grad = False
    _hooks = None
    grad = None

    @property
    def _requires_grad(self) -> bool:
        return self._fn is not None

    @property
    def device(self) -> str:
        return getattr(self, "_device", "cpu")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def tensor(self):
        """The tensor itself while something else keeps it alive, else None."""
        return None if self._tensor is None else self._tensor()


def release(functions) -> None:
    """Free what recorded nodes hold for backward: saved arrays, and inputs other than leaves
    that require grad (a kept root must not keep a step's activations alive). A tensor read by
    several of them is replaced by one SpentTensor.

    The nodes are the ones a backward has just run (it refuses a freed one), so each input is
    a tensor, not a stub. Most tensors of a step are read by one node and held by nothing else:
    the reference count says so (it can only overstate other holders), and such a tensor gets
    its own stub with no weak reference (which costs more than the rest of a stub) and goes as
    the node lets go of it. Any other tensor is kept in `shared` until every node has let go,
    so that all of them get its one stub, which refers to it weakly if something still holds
    it then."""
    shared: dict[int, tuple] = {}                 # id(x) -> (x's stub, x)
    for fn in functions:
        fn.saved_tensors = _RELEASED
        fn.stamp = FREED_STAMP                    # before any stamp: the walk's test catches it
        inputs = []
        for x in fn.inputs:
            if x._fn is None and x._requires_grad:
                inputs.append(x)
                continue
            alone = _refcount(x) <= _HELD_HERE    # held by fn.inputs once, x, the argument
            if not alone:
                entry = shared.get(id(x))
                if entry is not None:
                    inputs.append(entry[0])
                    continue
            stub = _new_stub(SpentTensor)         # SpentTensor(x), no `__init__` call
            data = x.data
            stub._fn, stub.shape, stub.dtype, stub.name, stub._tensor = x._fn, data.shape, \
                data.dtype, x.name, None
            if type(data) is not _ndarray:
                stub._device = x.device
            if not alone:
                shared[id(x)] = (stub, x)
            inputs.append(stub)
        fn.inputs = tuple(inputs)
    for stub, x in shared.values():               # x by the entry, x, and the argument alone:
        if _refcount(x) > _HELD_HERE:             # it goes with `shared`
            stub._tensor = _weak(x)


_new_stub = object.__new__
_weak = weakref.ref
_refcount = sys.getrefcount


def _held_by_a_loop_alone() -> int:
    """What `_refcount` reads for an object held only by the tuple a loop walks, as in
    release's loops (its slot, the loop variable, the argument: 3 on CPython 3.10-3.13).
    Measured, not assumed, so that a Python that counts fewer references on its stack does not
    take an object someone else holds for one nobody does."""
    for x in (object(),):
        return _refcount(x)


_HELD_HERE = _held_by_a_loop_alone()
_ndarray = np.ndarray


def held_alone(g, references: int) -> bool:
    """May a walk's gradient g become a `.grad` as it is, with nothing else able to see or
    change it: is it a NumPy array that owns its memory (no view of another's; a view of g
    would hold g), laid out as its copy would be (C order, aligned, writeable), and held by no
    more than `references` (the caller's own, calibrated at import in the calling pattern: the
    count can only overstate, so erring means copying)? A backward's fresh result (a weight
    gradient's product) then is not copied again, while one array given to two inputs (Add's
    gradient), one anybody else keeps, or a view is."""
    if type(g) is not _ndarray or _refcount(g) > references:
        return False
    flags = g.flags                    # (holds g: read after the count)
    return flags.owndata and flags.c_contiguous and flags.aligned and flags.writeable
