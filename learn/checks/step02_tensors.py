"""Checks of step 2: your sum-to-shape against minigrad's broadcasting gradients, and your
Softmax primitive with gradcheck, check_backward and its defining properties."""

from __future__ import annotations

import numpy as np

import minigrad as mg

from learn.checks._core import Wrong, exercise, expect_close, expect_shape

FILE = "step02_tensors.py"
EXERCISES = {"2.1": ("sum_to_shape",), "2.2": ("Softmax",)}

# (input shape, broadcast result shape): 0-d, size-1 axes, prepended axes, both at once
SHAPE_PAIRS = [((), (3, 4)), ((1,), (5,)), ((4,), (3, 4)), ((3, 1), (3, 4)), ((1, 4), (2, 3, 4)),
               ((2, 1, 4), (2, 3, 4)), ((3, 4), (3, 4)), ((1, 1), (2, 3))]


@exercise("2.1", "sum_to_shape", file=FILE)
def sum_to_shape(sum_to_shape) -> str:
    rng = np.random.default_rng(3)
    for shape, big in SHAPE_PAIRS:
        grad = rng.standard_normal(big)
        x = mg.tensor(rng.standard_normal(shape), requires_grad=True)
        (x.broadcast_to(big) * mg.tensor(grad)).sum().backward()     # x.grad = sum-to of grad
        got = sum_to_shape(grad, shape)
        expect_shape(f"sum_to_shape(grad of shape {big}, {shape})", np.asarray(got), shape)
        expect_close(f"sum_to_shape(grad of shape {big}, {shape})", got, x.grad, atol=1e-12)
    return f"{len(SHAPE_PAIRS)} shape pairs (0-d, size-1 and prepended axes) match minigrad"


@exercise("2.2", "Softmax", file=FILE)
def softmax_function(Softmax) -> str:
    rng = np.random.default_rng(4)
    shapes = [(1,), (5,), (3, 4), (2, 3, 6)]
    for shape in shapes:
        x = rng.standard_normal(shape) * 2
        y = Softmax.apply(mg.tensor(x)).numpy()
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        expect_close(f"softmax of a {shape} input", y, e / e.sum(axis=-1, keepdims=True),
                     atol=1e-12, rtol=1e-9)
    big = np.array([[1000.0, 999.0, -1000.0], [-800.0, -800.0, -800.0]])
    y = Softmax.apply(mg.tensor(big)).numpy()
    if not np.all(np.isfinite(y)):
        raise Wrong(f"softmax of {big.tolist()} gives {y.tolist()}: subtract each row's max "
                    f"before exp, so large inputs do not overflow")
    expect_close("rows of softmax(large inputs) sum", y.sum(axis=-1), np.ones(2), atol=1e-12)
    for shape in shapes:
        x = mg.tensor(rng.standard_normal(shape), requires_grad=True)
        try:
            mg.gradcheck(lambda t: Softmax.apply(t), (x,))
        except mg.GradcheckError as error:
            raise Wrong(f"backward disagrees with finite differences for a {shape} input: "
                        f"{error}") from None
        try:
            mg.check_backward(Softmax, (x,))
        except mg.GradcheckError as error:
            raise Wrong(f"backward disagrees with autodiff of your forward for a {shape} "
                        f"input: {error}") from None
    return ("forward matches a NumPy reference (1e-9), stays finite at ±1000, and backward "
            "passes gradcheck and check_backward on 4 shapes")
