"""The primitives, by kind. Tensor's operators and methods call the functions re-exported here."""

from .elementwise import (abs, add, clip, div, equal, exp, gelu, greater, greater_equal, isfinite,
                          isnan, less, less_equal, log, logical_and, logical_not, logical_or,
                          masked_fill, maximum, minimum, mul, neg, not_equal, pow, relu, sigmoid,
                          sqrt, sub, tanh, where)
from .indexing import argmax, argmin, getitem, one_hot
from .linalg import matmul
from .nn_ops import dropout, log_softmax, softmax
from .reduce import all, any, logsumexp, max, mean, min, std, sum, var
from .shape import (astype, broadcast_to, cat, concat, reshape, split, squeeze, stack, sum_to,
                    swapaxes, to_device, transpose, unsqueeze)

from .. import autograd as _autograd  # noqa: E402
import sys as _sys  # noqa: E402

_autograd._OPS = _sys.modules[__name__]      # what Function.ops gives a recorded backward
