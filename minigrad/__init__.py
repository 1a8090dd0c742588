"""minigrad: reverse-mode automatic differentiation over NumPy (CPU) or CuPy (GPU).

    import minigrad as mg
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    x.grad          # tensor([2., 4., 6.])
"""

__version__ = "0.1.0"   # the one place the version is written; pyproject.toml reads it here

from .tensor import Tensor     # first: Tensor, then (its late binding) the ops and the walk
from .tensor import get_default_dtype, set_default_dtype
from . import viz
from ._malloc import tune_malloc
from .anomaly import detect_anomaly
from .autograd import grad
from .function import Function, FusedFunction
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, name_scope, no_grad,
                        set_grad_enabled)
from .backend import Backend, cuda_available, manual_seed, register_backend, unregister_backend
from .creation import (arange, bernoulli, empty, eye, from_numpy, full, full_like,
                       get_rng_state, linspace, logspace, multinomial, normal, ones, ones_like,
                       rand, rand_like, randint, randn, randn_like, randperm, set_rng_state,
                       tensor, tril_indices, triu_indices, zeros, zeros_like)
from .threads import get_num_threads, set_num_threads
from .gradcheck import GradcheckError, check_backward, gradcheck
from .ops import *  # noqa: F401,F403  (the operations: exactly the names in ops.__all__)
from . import ops as _ops
from . import linalg
from .compiled import compile
from . import compiler

# dtype names as PyTorch spells them (mg.tensor(x, dtype=mg.int64), t.to(mg.float64))
float16, float32, float64 = "float16", "float32", "float64"
int32, int64, bool = "int32", "int64", "bool"


def is_tensor(obj):
    """Is obj a minigrad Tensor? A Python bool, as torch.is_tensor."""
    return isinstance(obj, Tensor)


def numel(t: Tensor) -> int:
    """The number of elements of t (torch.numel)."""
    return t.numel()

__all__ = [
    "Tensor", "Function", "FusedFunction", "tensor", "zeros", "ones", "full", "empty",
    "zeros_like", "ones_like", "full_like", "arange", "eye", "linspace", "logspace", "rand",
    "rand_like", "randint", "randn", "randn_like", "randperm", "multinomial", "bernoulli", "normal", "tril_indices", "triu_indices", "manual_seed", "get_rng_state",
    "set_rng_state", "get_num_threads", "set_num_threads",
    "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled", "grad",
    "name_scope", "detect_anomaly", "tune_malloc", "compile", "compiler",
    "gradcheck", "check_backward", "GradcheckError", "cuda_available", "Backend",
    "register_backend", "unregister_backend", "viz", "linalg", "from_numpy", "float32",
    "float64", "int32", "int64", "bool", "float16", "is_tensor", "numel", "set_default_dtype",
    "get_default_dtype",
] + _ops.__all__
