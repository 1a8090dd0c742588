"""Checks of layer constructor arguments and functional options, so that a wrong type fails
at the call.

`nn.GRU(3, 5, batch_first="False")` would otherwise read the string as True; `"10"` or 0 as a
size would fail later, or never. PyTorch refuses these too (TypeError for a wrong type,
ValueError for a size that is not positive). An option that is a constant of the graph (a
loss's δ, a norm's eps) given as a Tensor that requires grad would lose its gradient without a
word: it is refused.
"""

from __future__ import annotations

import numbers

import numpy as np

from minigrad import Tensor


def check_size(layer: str, name: str, value, minimum: int = 1) -> int:
    """`value` as an int >= minimum (a bool is not a size)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{layer}: {name} must be an int, got {type(value).__name__} "
                        f"{value!r}")
    if value < minimum:
        raise ValueError(f"{layer}: {name} must be >= {minimum}, got {value}")
    return int(value)


def check_flag(layer: str, name: str, value) -> bool:
    """`value` as a bool; strings such as "False" are refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{layer}: {name} must be a bool, got {type(value).__name__} "
                        f"{value!r}")
    return bool(value)


def check_probability(layer: str, name: str, value) -> float:
    """`value` as a float in [0, 1]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{layer}: {name} must be a number in [0, 1], got "
                        f"{type(value).__name__} {value!r}")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{layer}: {name} must be in [0, 1], got {value}")
    return float(value)


def check_constant(op: str, name: str, value) -> float:
    """An option that is a constant of the graph as a float. A 0-d Tensor converts, as in
    PyTorch; one that requires grad is refused, since its gradient would be lost."""
    if isinstance(value, Tensor) and value.requires_grad:
        raise TypeError(f"{op}: {name} is a constant of the graph, but got a Tensor that "
                        f"requires grad (shape {tuple(value.shape)}), whose gradient would be "
                        f"lost; pass a float or {name}.detach()")
    return float(value)


def check_ignore_index(op: str, value) -> int | None:
    """A loss's `ignore_index` as an int or None. PyTorch's third positional argument of
    cross_entropy / nll_loss (and the first of CrossEntropyLoss) is `weight`, so class weights
    given there would otherwise be read as the index to ignore."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        shape = getattr(value, "shape", None)
        what = type(value).__name__ + ("" if shape is None else f" of shape {tuple(shape)}")
        raise TypeError(f"{op}: ignore_index must be an int or None, got {what}; class weights "
                        f"go in weight= (keyword): PyTorch's positional weight is minigrad's "
                        f"ignore_index")
    return int(value)


def check_not_inplace(op: str, inplace, hint: str = "") -> None:
    """PyTorch's `inplace` flag (of dropout and of activations such as ReLU; the dropout
    functions' 4th positional argument, nn.Dropout's 2nd): False is accepted; True, which would
    change the input tensor itself, raises, and so does any other value (`hint` says what it
    may have been meant as)."""
    if inplace is False:
        return
    if inplace is True:
        raise ValueError(f"{op}: inplace=True (PyTorch's change of the input itself) is not "
                         f"supported: minigrad's {op} never changes its input but returns a new "
                         f"tensor; leave inplace out and use the result")
    raise TypeError(f"{op}: inplace (PyTorch's flag) must be False, got "
                    f"{type(inplace).__name__} {inplace!r}{hint}")
