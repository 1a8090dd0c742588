"""Grad mode and name scopes: the engine's per-thread state.

As in PyTorch, each thread has its own: `no_grad` in one thread, or a backward running in
another, never changes what this one records.
"""

from __future__ import annotations

import functools
import inspect
import threading
from typing import Callable

class _Mode:
    """Grad mode and the current scope of one thread, read together: every operation reads
    both, and reading this thread's object is the costly part (a thread-local lookup)."""

    __slots__ = ("grad_enabled", "scope")

    def __init__(self):
        self.grad_enabled = True
        self.scope = ""            # dotted name of the innermost name_scope, "" at top level


class _State(threading.local):
    """This thread's `mode`. `grad_enabled` and `scope` read and write it one field at a
    time; the engine's hot paths read `STATE.mode` once and take both fields from it."""

    def __init__(self):
        self.mode = _Mode()

    @property
    def grad_enabled(self) -> bool:
        return self.mode.grad_enabled

    @grad_enabled.setter
    def grad_enabled(self, enabled: bool) -> None:
        self.mode.grad_enabled = enabled

    @property
    def scope(self) -> str:
        return self.mode.scope

    @scope.setter
    def scope(self, scope: str) -> None:
        self.mode.scope = scope


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
