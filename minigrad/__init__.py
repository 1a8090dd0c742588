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
from .creation import (arange, empty, eye, full, ones, ones_like, rand, randn, tensor, zeros,
                       zeros_like)
from .gradcheck import GradcheckError, check_backward, gradcheck
from .ops import (abs, all, any, argmax, argmin, broadcast_to, cat, clip, concat, dropout, exp,
                  gelu, isfinite, isnan, log, log_softmax, logsumexp, masked_fill, matmul, max,
                  maximum, mean, min, minimum, one_hot, relu, reshape, sigmoid, softmax, split,
                  sqrt, squeeze, stack, std, sum, sum_to, swapaxes, tanh, transpose, unsqueeze,
                  var, where)
from .tensor import Tensor

float32 = "float32"
float64 = "float64"

__all__ = [
    "Tensor", "Function", "tensor", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
    "arange", "eye", "randn", "rand", "manual_seed",
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
]
