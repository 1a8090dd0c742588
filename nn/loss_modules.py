"""Module forms of the losses in losses.py that PyTorch also offers as modules:
CrossEntropyLoss, MSELoss, NLLLoss, BCELoss, BCEWithLogitsLoss, KLDivLoss, CosineEmbeddingLoss,
CosineSimilarity, L1Loss, SmoothL1Loss and HuberLoss. Each holds
its options (class weights are kept as given, not as parameters) and calls its function.

Where PyTorch's next positional parameter is its deprecated `size_average` (which turns
`MSELoss("sum")` into a mean), the options are keyword-only here, so that such a call raises
TypeError instead of meaning something else in each library; the functions do the same."""

from __future__ import annotations

import minigrad as mg

from . import functional as F
from ._checks import check_ignore_index
from .module import Module


class CrossEntropyLoss(Module):
    """Module form of `nn.functional.cross_entropy`: forward(logits (..., C), targets (...));
    `axis=1` reads PyTorch's layout (N, C, d1, ...). Class weights go in `weight=` (PyTorch's
    first positional argument, minigrad's is ignore_index: a non-int there raises)."""

    def __init__(self, ignore_index: int | None = None, *, reduction: str = "mean",
                 label_smoothing: float = 0.0, weight=None, axis: int | None = None):
        super().__init__()
        self.ignore_index = check_ignore_index("CrossEntropyLoss", ignore_index)
        self.reduction = reduction
        self.label_smoothing, self.weight, self.axis = label_smoothing, weight, axis

    def forward(self, logits: mg.Tensor, targets) -> mg.Tensor:
        """logits: (..., C); targets: integer (...), or class probabilities (..., C). Returns
        the loss: () for "mean" and "sum", (...) for "none"."""
        return F.cross_entropy(logits, targets, self.ignore_index, self.reduction,
                               self.label_smoothing, weight=self.weight, axis=self.axis)


class MSELoss(Module):
    """Module form of `nn.functional.mse_loss`."""

    def __init__(self, *, reduction: str = "mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input: mg.Tensor, target) -> mg.Tensor:
        """input, target: the same shape. Returns mean((input − target)²), or as `reduction`
        says."""
        return F.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(Module):
    """Module form of `nn.functional.nll_loss`."""

    def __init__(self, weight=None, *, ignore_index: int | None = None, reduction: str = "mean",
                 axis: int | None = None):
        super().__init__()
        self.weight, self.reduction = weight, reduction
        self.ignore_index = check_ignore_index("NLLLoss", ignore_index)
        self.axis = axis

    def forward(self, log_probs: mg.Tensor, targets) -> mg.Tensor:
        """log_probs: (..., C); targets: integer (...). Returns the loss."""
        return F.nll_loss(log_probs, targets, self.ignore_index, self.reduction,
                          weight=self.weight, axis=self.axis)


class BCELoss(Module):
    """Module form of `nn.functional.binary_cross_entropy` (on probabilities)."""

    def __init__(self, weight=None, *, reduction: str = "mean"):
        super().__init__()
        self.weight, self.reduction = weight, reduction

    def forward(self, input: mg.Tensor, target) -> mg.Tensor:
        """input: probabilities in [0, 1]; target: the same shape. Returns the loss."""
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(Module):
    """Module form of `nn.functional.binary_cross_entropy_with_logits`."""

    def __init__(self, weight=None, *, reduction: str = "mean", pos_weight=None):
        super().__init__()
        self.weight, self.reduction, self.pos_weight = weight, reduction, pos_weight

    def forward(self, logits: mg.Tensor, target) -> mg.Tensor:
        """logits and target of one shape. Returns the loss."""
        return F.binary_cross_entropy_with_logits(logits, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class KLDivLoss(Module):
    """Module form of `nn.functional.kl_div`."""

    def __init__(self, *, reduction: str = "mean", log_target: bool = False):
        super().__init__()
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input: mg.Tensor, target) -> mg.Tensor:
        """input: log-probabilities; target: probabilities (log with log_target)."""
        return F.kl_div(input, target, reduction=self.reduction,
                        log_target=self.log_target)


class CosineEmbeddingLoss(Module):
    """Module form of `nn.functional.cosine_embedding_loss`."""

    def __init__(self, margin: float = 0.0, *, reduction: str = "mean"):
        super().__init__()
        self.margin, self.reduction = margin, reduction

    def forward(self, input1: mg.Tensor, input2: mg.Tensor, target) -> mg.Tensor:
        """input1, input2: (N, D); target: (N,) of 1 and −1. Returns the loss."""
        return F.cosine_embedding_loss(input1, input2, target, self.margin,
                                       reduction=self.reduction)


class CosineSimilarity(Module):
    """Module form of `nn.functional.cosine_similarity`."""

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: mg.Tensor, x2: mg.Tensor) -> mg.Tensor:
        """x1, x2: broadcastable. Returns their cosine similarity along dim."""
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class L1Loss(Module):
    """Module form of `nn.functional.l1_loss`: |input − target|, reduced."""

    def __init__(self, *, reduction: str = "mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input: mg.Tensor, target) -> mg.Tensor:
        """input and target of one shape (target broadcast as in mse_loss). Returns the loss."""
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(Module):
    """Module form of `nn.functional.smooth_l1_loss` (quadratic below β, linear above)."""

    def __init__(self, *, reduction: str = "mean", beta: float = 1.0):
        super().__init__()
        self.reduction, self.beta = reduction, beta

    def forward(self, input: mg.Tensor, target) -> mg.Tensor:
        """input and target of one shape. Returns the loss."""
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(Module):
    """Module form of `nn.functional.huber_loss` (quadratic below δ, δ-sloped above)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__()
        self.reduction, self.delta = reduction, delta

    def forward(self, input: mg.Tensor, target) -> mg.Tensor:
        """input and target of one shape. Returns the loss."""
        return F.huber_loss(input, target, self.reduction, self.delta)
