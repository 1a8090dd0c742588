"""The primitives, by kind. `__all__` below is the one list of minigrad's public operations:
`minigrad/__init__.py` takes its names from it, and the Tensor methods call the functions here.

Adding a primitive: its class and function in the module of its kind, its name in `__all__`
here, and one entry in the tests' registry (see tests/README.md).
"""

from .common import AxisError
from .elementwise import (abs, acos, acosh, add, arccos, arccosh, arcsin, arcsinh, arctan,
                          arctan2, arctanh, asin, asinh, atan, atan2, atanh, clamp, clip, cos,
                          cosh, exp, exp2, expm1, hypot, lerp, log, log1p, log2, log10,
                          logaddexp, logit, masked_fill, maximum, minimum, mul, multiply,
                          nan_to_num, neg, negative, pow, reciprocal, rsqrt, sin, sinh, sqrt,
                          square, sub, subtract, tan, tanh, true_divide, xlogy)
from .compare import (allclose, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, eq, equal,
                      ge, greater, greater_equal, gt, isclose, isfinite, isinf, isnan, isneginf,
                      isposinf, le, less, less_equal, logical_and, logical_not, logical_or,
                      logical_xor, lt, ne, not_equal)
from .rounding import (ceil, copysign, div, divide, floor, floor_divide, fmod, mod, remainder,
                       round, sign, trunc)
from .indexing import (argmax, argmin, argwhere, gather, getitem, index_fill, index_select,
                       masked_select, nonzero, one_hot, scatter, scatter_add, scatter_reduce,
                       take_along_axis, where)
from .shape import (astype, broadcast_to, cat, chunk, clone, concat, diag, diagonal, expand,
                    flatten, flip, hstack, meshgrid, pad, permute, repeat, repeat_interleave,
                    reshape, roll, split, squeeze, stack, sum_to, swapaxes, tile, to_device,
                    transpose, tril, triu, unbind, unflatten, unfold, unsqueeze, vstack)
from .reduce import (MaxResult, all, amax, amin, any, cdist, count_nonzero, cummax, cummin,
                     cumprod, cumsum, diff, logcumsumexp, logsumexp, max, mean, min, nanmean,
                     nansum, norm, prod, std, std_mean, sum, var, var_mean, vector_norm)
from .linalg import addmm, baddbmm, bmm, dot, einsum, matmul, mm, outer, tensordot, trace
from .sorting import SortResult, argsort, kthvalue, median, sort, topk
from .nn_ops import dropout, log_softmax, softmax
from .activations import (celu, elu, erf, erfc, gelu, glu, hardsigmoid, hardswish, hardtanh,
                          leaky_relu, logsigmoid, mish, relu, relu6, selu, sigmoid, silu,
                          softmin, softplus, softsign)

__all__ = [
    # elementwise arithmetic and elementary functions
    "add", "sub", "subtract", "mul", "multiply", "neg", "negative", "pow", "true_divide",
    "abs", "clip", "exp", "log", "maximum", "masked_fill", "minimum", "sqrt", "tanh", "where",
    "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
    "asin", "asinh", "atan", "atan2", "atanh", "cos", "cosh", "exp2", "expm1", "hypot", "lerp",
    "log1p", "log2", "log10", "logaddexp", "rsqrt", "sin", "sinh", "square", "tan", "xlogy",
    "clamp", "logit", "nan_to_num", "reciprocal",
    # activations
    "celu", "elu", "erf", "erfc", "gelu", "glu", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu",
    "logsigmoid", "mish", "relu", "relu6", "selu", "sigmoid", "silu", "softmin", "softplus",
    "softsign",
    # comparisons and predicates
    "allclose", "isclose", "isfinite", "isinf", "isnan", "isneginf", "isposinf",
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
    "not_equal",
    "logical_and", "logical_not", "logical_or", "logical_xor",
    # rounding, sign and remainders
    "ceil", "copysign", "div", "divide", "floor", "floor_divide", "fmod", "mod", "remainder",
    "round", "sign", "trunc",
    # reductions and scans
    "all", "amax", "amin", "any", "logsumexp", "max", "mean", "min", "prod", "std", "std_mean", "sum", "var",
    "var_mean", "cummax", "cummin", "cumprod", "cumsum", "logcumsumexp", "MaxResult", "norm",
    "vector_norm", "nansum", "nanmean", "count_nonzero", "diff", "cdist",
    # shapes and layout
    "AxisError", "broadcast_to", "cat", "concat", "reshape", "split", "squeeze", "stack",
    "sum_to", "swapaxes", "transpose", "unsqueeze", "diag", "diagonal", "flatten", "flip",
    "meshgrid", "pad", "repeat", "repeat_interleave", "roll", "tile", "tril", "triu",
    "unflatten", "unfold", "chunk", "clone", "expand", "hstack", "permute", "unbind", "vstack",
    # reading and writing at positions
    "argmax", "argmin", "one_hot", "argwhere", "gather", "index_fill", "index_select",
    "masked_select",
    "nonzero", "scatter", "scatter_add", "scatter_reduce", "take_along_axis",
    # linear algebra
    "addmm", "baddbmm", "bmm", "dot", "einsum", "matmul", "mm", "outer", "tensordot", "trace",
    # sorting
    "argsort", "kthvalue", "median", "sort", "SortResult", "topk",
    # layers' primitives
    "dropout", "log_softmax", "softmax",
]
