"""What every check shares: the `exercise` decorator, the failure it raises, and comparisons
that say which element or property is wrong.

A check function takes the learner's code as its arguments, tests properties with stated
tolerances and returns a one-line summary of what it verified. The decorator turns anything that
goes wrong into a `CheckFailed` naming the exercise, so a stub, a crash and a wrong number all
end in one clear message.
"""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np

import minigrad as mg

PASSED: list[str] = []          # exercise numbers whose checks passed in this process, in order


class CheckFailed(AssertionError):
    """An exercise's check failed. `exercise` is its number ("3.2"), `not_written` is True when
    the learner's code still raises NotImplementedError."""

    def __init__(self, exercise: str, names: tuple[str, ...], message: str,
                 not_written: bool = False):
        self.exercise, self.names, self.not_written = exercise, names, not_written
        super().__init__(f"exercise {exercise} ({', '.join(names)}): {message}")


class Wrong(Exception):
    """Raised inside a check body: what is wrong, in words."""


def exercise(number: str, *names: str, file: str) -> Callable:
    """Mark a check function as the check of exercise `number`, which asks for `names` in
    learn/exercises/`file`."""

    def decorate(check: Callable) -> Callable:
        @functools.wraps(check)
        def run(*args, **kwargs):
            try:
                summary = check(*args, **kwargs)
            except Wrong as error:
                raise CheckFailed(number, names, str(error)) from None
            except NotImplementedError:
                raise CheckFailed(number, names, f"not written yet (it raises "
                                  f"NotImplementedError): write it in learn/exercises/{file}",
                                  not_written=True) from None
            except Exception as error:                      # the learner's code crashed
                raise CheckFailed(number, names, f"your code raised {type(error).__name__}: "
                                  f"{error}") from error
            PASSED.append(number)
            print(f"✓ exercise {number} ({', '.join(names)}) passed: {summary}")
            return summary

        run.exercise = number
        return run

    return decorate


def numpy_of(value) -> np.ndarray:
    """A Tensor, array or number as a float64 NumPy array."""
    if isinstance(value, mg.Tensor):
        value = value.numpy()
    return np.asarray(value, dtype=np.float64)


def expect_close(what: str, got, want, atol: float = 1e-8, rtol: float = 1e-6) -> None:
    """Raise `Wrong` naming the first element of `got` that differs from `want` beyond
    |got − want| ≤ atol + rtol·|want|, or a shape mismatch."""
    got_array, want_array = numpy_of(got), numpy_of(want)
    if got_array.shape != want_array.shape:
        raise Wrong(f"{what} has shape {got_array.shape}, expected {want_array.shape}")
    bad = ~np.isclose(got_array, want_array, atol=atol, rtol=rtol, equal_nan=False)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise Wrong(f"{what}{list(index) if index else ''} is {got_array[index].item()!r}, "
                    f"expected {want_array[index].item()!r} (tolerance {atol:g} + {rtol:g}·|expected|; "
                    f"{int(bad.sum())} of {bad.size} elements differ)")


def expect_shape(what: str, got, shape: tuple) -> None:
    """Raise `Wrong` unless `got` has exactly `shape`."""
    if tuple(got.shape) != tuple(shape):
        raise Wrong(f"{what} has shape {tuple(got.shape)}, expected {tuple(shape)}")


def expect_tensor(what: str, got) -> mg.Tensor:
    """Raise `Wrong` unless `got` is a minigrad Tensor (so gradients can flow through it)."""
    if not isinstance(got, mg.Tensor):
        raise Wrong(f"{what} should be a minigrad Tensor (built with minigrad operations so "
                    f"gradients flow), got {type(got).__name__}")
    return got


def expect_gradcheck(what: str, fn: Callable, inputs) -> None:
    """Raise `Wrong` naming `what` unless mg.gradcheck(fn, inputs) passes (float64 inputs)."""
    try:
        mg.gradcheck(fn, inputs)
    except mg.GradcheckError as error:
        raise Wrong(f"{what}: gradients disagree with finite differences: {error}") from None


def expect_gradients_reach_all(module, output: mg.Tensor) -> None:
    """Backpropagate output.sum() and raise `Wrong` naming the parameters of `module` that got
    no gradient."""
    module.zero_grad()
    output.sum().backward()
    missing = [name for name, p in module.named_parameters() if p.grad is None]
    if missing:
        raise Wrong(f"no gradient reached {', '.join(missing)}: use every part")
