"""In-place changes, and the check that keeps them from silently corrupting a backward.

A Function's backward reads its inputs and output. If one of them is changed in place between
forward and backward (an optimizer step, `t.add_(...)`, `t[i] = v`), the gradient would be
computed from the new values: wrong, with no sign of it. So, as PyTorch's version counters do,
every in-place change made through minigrad's in-place methods is stamped with a number that
only grows, on the array that owns the memory (views share it), and each recorded Function
notes the newest stamp when it is made. Backward through a Function whose inputs or output
carry a later stamp raises an error naming the tensor, the operation and the version.

Writes straight into a raw array (`t.data[...] = v`, or a NumPy view of it) and rebinding
`t.data` are not seen, as in PyTorch: use the in-place methods.
"""

from __future__ import annotations

import itertools
import weakref


class _Stamps:
    def __init__(self):
        # an instance attribute: read by every operation and every backward node, where an
        # attribute of the instance is a cheaper read than a default on its class
        self.last = 0      # the newest stamp handed out (0: nothing has changed in place yet)


STATE = _Stamps()
_stamps = itertools.count(1)
_CHANGED: dict[int, tuple] = {}    # id(owner array) -> (reference to it, newest stamp, changes)


def _owner(array):
    """The array that owns the memory `array` uses (itself, or the base of a view)."""
    base = getattr(array, "base", None)
    return array if base is None else base


def _reference(owner, key: int):
    try:
        return weakref.ref(owner, lambda _, key=key: _CHANGED.pop(key, None))
    except TypeError:                          # arrays that cannot be weakly referenced
        return lambda: owner


def mark_changed(tensor) -> None:
    """Record that `tensor`'s array has just been changed in place."""
    tensor._version += 1
    stamp = next(_stamps)
    owner = _owner(tensor.data)
    key = id(owner)
    entry = _CHANGED.get(key)
    if entry is not None and entry[0]() is owner:
        _CHANGED[key] = (entry[0], stamp, entry[2] + 1)
    else:
        _CHANGED[key] = (_reference(owner, key), stamp, 1)
    STATE.last = stamp


def changes_after(array, stamp: int) -> int:
    """How many in-place changes `array`'s memory has had in all, if the newest came after
    `stamp` was handed out; else 0."""
    owner = _owner(array)
    entry = _CHANGED.get(id(owner))
    if entry is None or entry[0]() is not owner or entry[1] <= stamp:
        return 0
    return entry[2]


def check_unchanged(fn) -> None:
    """Raise if an input or the output of `fn` was changed in place after fn was recorded."""
    ref = fn._output_ref
    output = ref() if ref is not None else None
    named = [(f"its input {i}", t) for i, t in enumerate(fn.inputs)]
    named += [("its output", output)] if output is not None else []
    for what, t in named:
        data = getattr(t, "data", None)
        version = 0 if data is None else changes_after(data, fn.stamp)
        if version:
            label = f", named '{t.name}'" if t.name else ""
            raise RuntimeError(
                f"backward: {type(fn).__name__} saved {what} (shape {tuple(t.shape)}, "
                f"{t.dtype}{label}) for backward, and it was changed in place afterwards: its "
                f"memory is at version {version} now, and was at version {version - 1} or "
                f"earlier when saved. Its gradient would be computed from the new values; make "
                f"the change after backward, or out of place (x = x + 1, not x.add_(1))")
