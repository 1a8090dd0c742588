"""The primitives, by kind. Tensor's operators and methods call the functions re-exported here."""

from .elementwise import (abs, add, clip, div, equal, exp, gelu, greater, greater_equal, isfinite,
                          isnan, less, less_equal, log, logical_and, logical_not, logical_or,
                          logical_xor, masked_fill, maximum, minimum, mul, neg, not_equal, pow, relu, sigmoid,
                          sqrt, sub, tanh, where)
from .indexing import argmax, argmin, getitem, one_hot
from .linalg import matmul
from .nn_ops import dropout, log_softmax, softmax
from .reduce import (all, any, logsumexp, max, mean, min, prod, std, std_mean, sum, var,
                     var_mean)
from .shape import (astype, broadcast_to, cat, concat, reshape, split, squeeze, stack, sum_to,
                    swapaxes, to_device, transpose, unsqueeze)
from .common import AxisError
from .predicates import allclose, isclose, isinf, isneginf, isposinf
from .sorting import argsort, kthvalue, sort, topk
from .activations import (celu, elu, erf, erfc, hardsigmoid, hardswish, hardtanh, leaky_relu,
                          logsigmoid, mish, relu6, selu, silu, softmin, softplus, softsign)
from .transcendental import (acos, acosh, arccos, arccosh, arcsin, arcsinh, arctan, arctanh,
                             asin, asinh, atan, atanh, cos, cosh, exp2, expm1, log1p, log2, log10,
                             rsqrt, sin, sinh, square, tan)
from .binary_functions import arctan2, atan2, hypot, lerp, logaddexp, xlogy
from .gather import (argwhere, gather, index_select, masked_select, nonzero, scatter,
                     scatter_add, scatter_reduce, take_along_axis)
from .scan import cummax, cummin, cumprod, cumsum, logcumsumexp
from .rounding import (ceil, copysign, divide, floor, floor_divide, fmod, mod, remainder, round,
                       sign, trunc)
from .einsum import einsum
from .layout import (diag, diagonal, flatten, flip, meshgrid, pad, repeat, repeat_interleave,
                     roll, tile, tril, triu, unflatten, unfold)

from .. import autograd as _autograd  # noqa: E402
from .. import tensor_methods as _tensor_methods  # noqa: E402
import sys as _sys  # noqa: E402

_autograd._OPS = _sys.modules[__name__]      # what Function.ops gives a recorded backward
_tensor_methods._OPS = _sys.modules[__name__]   # what the Tensor methods call
