"""PyTorch's `torch.nn.utils` names: gradient clipping, `rnn` (variable-length sequences),
and `data` (Dataset, DataLoader: PyTorch's torch.utils.data)."""

from . import data, rnn
from ..optim import clip_grad_norm, clip_grad_norm_, clip_grad_value_

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "data", "rnn"]
