"""Step 2 exercises: broadcasting's backward rule, and a primitive of your own."""

from __future__ import annotations

import numpy as np

import minigrad as mg


# -- exercise 2.1 -------------------------------------------------------------------------------

def sum_to_shape(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a gradient `grad` (the shape of a broadcast result) back to an input's `shape`.

    Broadcasting (NumPy's rules) first prepends size-1 axes to `shape` until it has as many
    axes as `grad`, then stretches every size-1 axis. Undo both: sum `grad` over the prepended
    axes, then over every axis where `shape` has size 1 (keeping that axis), and return an
    array of exactly `shape` (which may be ()). Plain NumPy; no minigrad.
    """
    raise NotImplementedError


# -- exercise 2.2 -------------------------------------------------------------------------------

class Softmax(mg.Function):
    """y = softmax(x) over the last axis: y_i = exp(x_i) / Σ_j exp(x_j).

    forward(self, x): x is a backend array; use self.xp (NumPy here) for exp, max, sum.
    Subtract each row's max before exp: the same softmax, and no overflow for large x.

    backward(self, grad): grad = ∂L/∂y, a Tensor of y's shape. Return ∂L/∂x written with
    minigrad operations (Tensor arithmetic and .sum(axis=-1, keepdims=True)) from
    y = self.output: derive it from ∂y_i/∂x_k = y_i (δ_ik − y_k).
    """

    def forward(self, x):
        raise NotImplementedError

    def backward(self, grad):
        raise NotImplementedError


def softmax(x: mg.Tensor) -> mg.Tensor:
    """Your Softmax as a function (given)."""
    return Softmax.apply(x)
