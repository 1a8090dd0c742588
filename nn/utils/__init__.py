"""PyTorch's `torch.nn.utils` names: gradient clipping and `rnn` (variable-length sequences)."""

from . import rnn
from ..optim import clip_grad_norm, clip_grad_norm_, clip_grad_value_

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "rnn"]
