"""minigrad: reverse-mode automatic differentiation over NumPy (CPU) or CuPy (GPU).

    import minigrad as mg
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    x.grad          # tensor([2., 4., 6.])
"""

__version__ = "0.1.0"   # the one place the version is written; pyproject.toml reads it here

from . import viz
from ._malloc import tune_malloc
from .anomaly import detect_anomaly
from .autograd import Function, grad
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, name_scope, no_grad,
                        set_grad_enabled)
from .backend import Backend, cuda_available, manual_seed, register_backend, unregister_backend
from .creation import (arange, empty, eye, full, get_rng_state, linspace, logspace, ones,
                       ones_like, rand, randint, randn, randperm, set_rng_state, tensor,
                       tril_indices, triu_indices, zeros, zeros_like)
from .threads import get_num_threads, set_num_threads
from .gradcheck import GradcheckError, check_backward, gradcheck
from .ops import (abs, all, any, argmax, argmin, broadcast_to, cat, clip, concat, dropout, exp,
                  gelu, isfinite, isnan, log, log_softmax, logsumexp, masked_fill, matmul, max,
                  maximum, mean, min, minimum, one_hot, relu, reshape, sigmoid, softmax, split,
                  sqrt, squeeze, stack, std, sum, sum_to, swapaxes, tanh, transpose, unsqueeze,
                  var, where)
from .ops import (AxisError, diag, diagonal, einsum, flatten, flip, meshgrid, pad, repeat,
                  repeat_interleave, roll, tile, tril, triu, unflatten, unfold)
from .ops import (ceil, copysign, divide, floor, floor_divide, fmod, mod, remainder, round,
                  sign, trunc)
from .ops import (cummax, cummin, cumprod, cumsum, logcumsumexp, prod, std_mean,
                  take_along_axis, var_mean)
from .ops import (argwhere, gather, index_select, masked_select, nonzero, scatter, scatter_add,
                  scatter_reduce)
from .ops import (celu, elu, erf, erfc, hardsigmoid, hardswish, hardtanh, leaky_relu,
                  logsigmoid, mish, relu6, selu, silu, softmin, softplus, softsign)
from .ops import (acos, acosh, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, asin,
                  asinh, atan, atan2, atanh, cos, cosh, exp2, expm1, hypot, lerp, log1p, log2,
                  log10, logaddexp, rsqrt, sin, sinh, square, tan, xlogy)
from .ops import argsort, kthvalue, sort, topk
from .ops import allclose, isclose, isinf, isneginf, isposinf
from .tensor import Tensor

div = divide          # PyTorch's name: div(a, b, rounding_mode=None)

float32 = "float32"
float64 = "float64"

__all__ = [
    "Tensor", "Function", "tensor", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
    "arange", "eye", "randn", "rand", "manual_seed", "get_rng_state", "set_rng_state",
    "get_num_threads", "set_num_threads",
    "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled", "grad",
    "name_scope", "detect_anomaly", "tune_malloc",
    "gradcheck", "check_backward", "GradcheckError", "cuda_available", "Backend",
    "register_backend",
    "unregister_backend", "viz",
    "abs", "all", "any", "argmax", "argmin", "broadcast_to", "cat", "clip", "concat", "dropout",
    "exp", "gelu", "isfinite", "isnan", "log", "log_softmax", "logsumexp", "masked_fill", "matmul",
    "max", "maximum", "mean", "min", "minimum", "one_hot", "relu", "reshape", "sigmoid",
    "softmax", "split", "sqrt", "squeeze", "stack", "std", "sum", "sum_to", "swapaxes", "tanh",
    "transpose", "unsqueeze", "var", "where", "float32", "float64",
    # rearranging
    "AxisError", "diag", "diagonal", "einsum", "flatten", "flip", "meshgrid", "pad", "repeat",
    "repeat_interleave", "roll", "tile", "tril", "triu", "unflatten", "unfold",
    # rounding, sign and remainders
    "ceil", "copysign", "div", "divide", "floor", "floor_divide", "fmod", "mod", "remainder",
    "round", "sign", "trunc",
    # reductions
    "cummax", "cummin", "cumprod", "cumsum", "logcumsumexp", "prod", "std_mean", "var_mean",
    # reading and writing at positions
    "argwhere", "gather", "index_select", "masked_select", "nonzero", "scatter", "scatter_add",
    "scatter_reduce", "take_along_axis",
    # activations
    "celu", "elu", "erf", "erfc", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu",
    "logsigmoid", "mish", "relu6", "selu", "silu", "softmin", "softplus", "softsign",
    # elementary functions
    "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
    "asin", "asinh", "atan", "atan2", "atanh", "cos", "cosh", "exp2", "expm1", "hypot", "lerp",
    "log1p", "log2", "log10", "logaddexp", "rsqrt", "sin", "sinh", "square", "tan", "xlogy",
    # sorting
    "argsort", "kthvalue", "sort", "topk",
    # predicates and creation
    "allclose", "isclose", "isinf", "isneginf", "isposinf", "linspace", "logspace", "randint",
    "randperm", "tril_indices", "triu_indices",
]
