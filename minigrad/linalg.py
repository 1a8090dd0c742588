"""`minigrad.linalg`, PyTorch's torch.linalg names for the norms (the operations live in ops)."""

from .ops import vector_norm

norm = vector_norm      # torch.linalg.norm of a vector (this module has no matrix norms)

__all__ = ["norm", "vector_norm"]
