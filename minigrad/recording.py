"""The one slot through which `minigrad.compile` hears what the engine does while it captures a
step (see compiled.py).

While a step is captured, `SLOT.recorder` is its recorder, else None. The engine reads the slot
at the few places a capture must know about: `Function.apply` (every operation), the backward
walk (its visits, edges and landings), `Tensor.numpy`/`__array__` (values read), `mg.rand` and
`mg.randn` (random tensors), `constant` (tensors computed outside a Function) and
`made_from_data` (tensors made from data: Tensor(), mg.tensor, a lifted number, mg.full, ...).

One thread at a time captures: `claim` takes the slot for a recorder, `release` frees it, and
only the claiming thread writes the slot in between (`pause`/`resume` around what it runs
unrecorded). Another thread that uses the engine meanwhile is not recorded: `recorder()`
answers None to it and marks the capture disturbed, to be discarded and made again on a later
call, since what that thread did (an in-place update, a random draw) could look like the
step's own doing (best effort: the program never holds that thread's operations).
"""

from __future__ import annotations

import threading


class _Slot:
    """Holds the active recorder (None when no step is being captured)."""

    __slots__ = ("recorder",)

    def __init__(self):
        self.recorder = None


SLOT = _Slot()
_CLAIM = threading.Lock()        # held by the thread whose step is being captured


def recorder():
    """The recorder capturing a step in this thread now, or None (also in every other thread
    while one captures: their use of the engine disturbs that capture)."""
    active = SLOT.recorder
    if active is not None and active.thread != threading.get_ident():
        active.disturbed = True
        return None
    return active


def claim(new) -> bool:
    """Record this thread's operations, backward walks and value reads into `new`. False, and
    nothing changed, while another thread's step is being captured."""
    if not _CLAIM.acquire(blocking=False):
        return False
    SLOT.recorder = new
    return True


def release() -> None:
    """End the capture `claim` started (in the thread that claimed)."""
    SLOT.recorder = None
    _CLAIM.release()


def pause() -> None:
    """Stop recording in the capturing thread (an operation runs its nested operations
    unrecorded) until `resume`."""
    SLOT.recorder = None


def resume(active) -> None:
    SLOT.recorder = active


def made_from_data(t):
    """Tell the step being captured in this thread, if any, that `t` was made from data
    (mg.tensor, a number lifted next to a tensor, mg.full, ...): a constant of the capture,
    which compiled.py compares with the previous call's. Returns t."""
    active = recorder()
    if active is not None:
        active.made_from_data(t)
    return t
