"""Anomaly mode: raise at the first operation whose result or gradient holds NaN or inf."""

from __future__ import annotations

import contextlib
import math

from .backend import backend_of
from .grad_mode import STATE as grad_state


class _State:
    def __init__(self):
        self.enabled = False    # one switch for the process, as PyTorch's anomaly mode


STATE = _State()


@contextlib.contextmanager
def detect_anomaly():
    """Raise at the first operation whose forward result or backward gradient has NaN or inf.

    The error names the operation (and its scope). In forward, an infinity the operation only
    passes on (from an input, or a constant such as the -inf of masked_fill) is not an anomaly,
    so masked attention runs unflagged; NaN always is. Slow: every result is checked.
    """
    outer = STATE.enabled
    STATE.enabled = True
    try:
        yield
    finally:
        STATE.enabled = outer


@contextlib.contextmanager
def paused():
    """Anomaly mode off inside: the operations of a Function's backward are checked together,
    as that Function's gradient, so the error names it rather than a helper operation."""
    outer = STATE.enabled
    STATE.enabled = False
    try:
        yield
    finally:
        STATE.enabled = outer


def _check_finite(fn, array, where: str) -> None:
    xp = backend_of(array).xp
    if array.dtype.kind in "fc" and not bool(xp.isfinite(array).all()):
        bad = "NaN" if bool(xp.isnan(array).any()) else "inf"
        scope = fn.scope or grad_state.scope
        where_scope = f" in scope '{scope}'" if scope else ""
        raise FloatingPointError(f"anomaly: {type(fn).__name__}{where_scope} produced {bad} "
                                 f"in its {where} (shape {tuple(array.shape)})")


def check_forward(fn, inputs, array) -> None:
    """Anomaly check of a forward result. NaN is always an anomaly. ±inf is one only when the
    operation made it from finite values: an infinity that arrives through an input or a
    constant option (masked_fill(scores, mask, -inf), the usual attention mask) is intended."""
    xp = backend_of(array).xp
    if array.dtype.kind not in "fc" or bool(xp.isfinite(array).all()):
        return
    if not bool(xp.isnan(array).any()) and _carries_infinity(fn, inputs):
        return
    _check_finite(fn, array, "forward result")


def check_gradient(fn, g) -> None:
    """Anomaly check of one of fn's input gradients (an array, a Tensor, or an
    IndexedGradient's values)."""
    array = getattr(g, "values", None)
    if array is None:
        array = g.data if hasattr(g, "_fn") else g       # a Tensor when recording
    _check_finite(fn, array, "gradient")


def _carries_infinity(fn, inputs) -> bool:
    for t in inputs:
        data = t.data
        if data.dtype.kind in "fc" and not bool(backend_of(data).xp.isfinite(data).all()):
            return True
    return any(isinstance(v, float) and math.isinf(v) for v in vars(fn).values())
