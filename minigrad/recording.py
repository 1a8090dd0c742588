"""The one slot through which `minigrad.compile` hears what the engine does while it captures a
step (see compiled.py).

While a step is captured, `SLOT.recorder` is its recorder, else None. The engine reads the slot
at the few places a capture must know about: `Function.apply` (every operation), the backward
walk (its visits, edges and landings), `Tensor.numpy`/`__array__` (values read), `mg.rand` and
`mg.randn` (random tensors) and `constant` (tensors computed outside a Function). Only
`set_recorder` below writes it.
"""

from __future__ import annotations


class _Slot:
    """Holds the active recorder (None when no step is being captured)."""

    __slots__ = ("recorder",)

    def __init__(self):
        self.recorder = None


SLOT = _Slot()


def recorder():
    """The recorder capturing a step now, or None."""
    return SLOT.recorder


def set_recorder(new):
    """Send every operation, backward walk and value read to `new` (None: stop); returns the
    recorder set before."""
    previous, SLOT.recorder = SLOT.recorder, new
    return previous
