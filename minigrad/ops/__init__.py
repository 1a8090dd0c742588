"""The primitives, by kind. `__all__` below is the one list of minigrad's public operations:
`minigrad/__init__.py` takes its names from it, and the Tensor methods call the functions here.

Adding a primitive: its class and function in the module of its kind, its name in `__all__`
here, and one entry in the tests' registry (see tests/README.md).
"""

from .common import AxisError
from .elementwise import (abs, add, clip, equal, exp, gelu, greater, greater_equal, isfinite,
                          isnan, less, less_equal, log, logical_and, logical_not, logical_or,
                          masked_fill, maximum, minimum, mul, neg, not_equal, pow, relu, sigmoid,
                          sqrt, sub, tanh, true_divide, where)
from .transcendental import (acos, acosh, arccos, arccosh, arcsin, arcsinh, arctan, arctanh,
                             asin, asinh, atan, atanh, cos, cosh, exp2, expm1, log1p, log2, log10,
                             rsqrt, sin, sinh, square, tan)
from .binary_functions import arctan2, atan2, hypot, lerp, logaddexp, xlogy
from .rounding import (ceil, copysign, div, divide, floor, floor_divide, fmod, mod, remainder,
                       round, sign, trunc)
from .compare import allclose, isclose, isinf, isneginf, isposinf
from .shape import (astype, broadcast_to, cat, concat, reshape, split, squeeze, stack, sum_to,
                    swapaxes, to_device, transpose, unsqueeze)
from .layout import (diag, diagonal, flatten, flip, meshgrid, pad, repeat, repeat_interleave,
                     roll, tile, tril, triu, unflatten, unfold)
from .indexing import argmax, argmin, getitem, one_hot
from .gather import (argwhere, gather, index_select, masked_select, nonzero, scatter,
                     scatter_add, scatter_reduce, take_along_axis)
from .reduce import (all, any, logsumexp, max, mean, min, prod, std, std_mean, sum, var,
                     var_mean)
from .scan import cummax, cummin, cumprod, cumsum, logcumsumexp
from .linalg import matmul
from .einsum import einsum
from .sorting import argsort, kthvalue, sort, topk
from .nn_ops import dropout, log_softmax, softmax
from .activations import (celu, elu, erf, erfc, hardsigmoid, hardswish, hardtanh, leaky_relu,
                          logsigmoid, mish, relu6, selu, silu, softmin, softplus, softsign)

__all__ = [
    # elementwise arithmetic and elementary functions
    "abs", "clip", "exp", "log", "maximum", "masked_fill", "minimum", "sqrt", "tanh", "where",
    "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
    "asin", "asinh", "atan", "atan2", "atanh", "cos", "cosh", "exp2", "expm1", "hypot", "lerp",
    "log1p", "log2", "log10", "logaddexp", "rsqrt", "sin", "sinh", "square", "tan", "xlogy",
    # activations
    "celu", "elu", "erf", "erfc", "gelu", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu",
    "logsigmoid", "mish", "relu", "relu6", "selu", "sigmoid", "silu", "softmin", "softplus",
    "softsign",
    # comparisons and predicates
    "allclose", "isclose", "isfinite", "isinf", "isnan", "isneginf", "isposinf",
    # rounding, sign and remainders
    "ceil", "copysign", "div", "divide", "floor", "floor_divide", "fmod", "mod", "remainder",
    "round", "sign", "trunc",
    # reductions and scans
    "all", "any", "logsumexp", "max", "mean", "min", "prod", "std", "std_mean", "sum", "var",
    "var_mean", "cummax", "cummin", "cumprod", "cumsum", "logcumsumexp",
    # shapes and layout
    "AxisError", "broadcast_to", "cat", "concat", "reshape", "split", "squeeze", "stack",
    "sum_to", "swapaxes", "transpose", "unsqueeze", "diag", "diagonal", "flatten", "flip",
    "meshgrid", "pad", "repeat", "repeat_interleave", "roll", "tile", "tril", "triu",
    "unflatten", "unfold",
    # reading and writing at positions
    "argmax", "argmin", "one_hot", "argwhere", "gather", "index_select", "masked_select",
    "nonzero", "scatter", "scatter_add", "scatter_reduce", "take_along_axis",
    # linear algebra
    "einsum", "matmul",
    # sorting
    "argsort", "kthvalue", "sort", "topk",
    # layers' primitives
    "dropout", "log_softmax", "softmax",
]
