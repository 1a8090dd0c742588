"""Basic layers: Linear, Embedding, LayerNorm, BatchNorm1d/2d, GroupNorm, RMSNorm, Flatten,
Unflatten, Upsample, Dropout and Identity (activation modules are in activations.py, loss modules in
loss_modules.py, convolution and pooling in convolution.py).

Parameter layouts match PyTorch's, so state dicts can be exchanged. Every layer allocates its
parameters with full shapes in `__init__` and fills them in `reset_parameters()` from
minigrad's RNG (reproducible after `minigrad.manual_seed`).
"""

from __future__ import annotations

import minigrad as mg

from . import functional as F
from . import init
from .activations import GELU, ReLU, Sigmoid, Tanh  # noqa: F401  (their home before)
from .layer_functions import _as_shape, normalise_batch
from .loss_modules import CrossEntropyLoss, MSELoss  # noqa: F401  (their home before)
from ._checks import check_flag, check_not_inplace, check_size
from .module import Module, Parameter


def _empty_parameter(*shape: int, dtype=None, device="cpu") -> Parameter:
    return Parameter(mg.zeros(*shape, dtype=dtype, device=device))


def _affine_parameters(layer: Module, affine: bool, channels: int, dtype, device) -> None:
    """A normalisation layer's weight γ and bias β (channels,), or both None without affine;
    its reset_parameters fills them."""
    for name in ("weight", "bias"):
        layer.register_parameter(name, _empty_parameter(channels, dtype=dtype, device=device)
                                 if affine else None)


class Linear(Module):
    """y = x Wᵀ + b.

    weight: (O, I), bias: (O,), both U(−1/√I, 1/√I) as in PyTorch.
    forward: x (..., I) -> (..., O).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device="cpu", dtype=None):
        super().__init__()
        # as PyTorch: sizes are ints (0 allowed), bias a bool
        self.in_features = check_size("Linear", "in_features", in_features, minimum=0)
        self.out_features = check_size("Linear", "out_features", out_features, minimum=0)
        self.weight = _empty_parameter(out_features, in_features, dtype=dtype, device=device)
        if check_flag("Linear", "bias", bias):
            self.bias = _empty_parameter(out_features, dtype=dtype, device=device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw weight and bias again from U(−1/√I, 1/√I) (minigrad's RNG), PyTorch's
        default."""
        init.fan_in_uniform_(self.weight, self.bias)

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: (..., I). Returns (..., O)."""
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Embedding(Module):
    """A lookup table: y = weight[indices].

    weight: (V, D) ~ N(0, 1), with the `padding_idx` row set to zero; that row never receives
    a gradient. forward: integer indices (...) -> (..., D).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 device="cpu", dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} is out of range for "
                                 f"{num_embeddings} embeddings")
            padding_idx = int(padding_idx) % num_embeddings
        self.padding_idx = padding_idx
        self.weight = _empty_parameter(num_embeddings, embedding_dim, dtype=dtype,
                                       device=device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw weight again from N(0, 1), with the padding_idx row zero."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with mg.no_grad():
                keep = mg.arange(self.num_embeddings, device=self.weight.device) != \
                    self.padding_idx
                self.weight.data = mg.where(keep.unsqueeze(-1), self.weight, 0.0).data

    def forward(self, indices) -> mg.Tensor:
        """indices: integer Tensor/array (...). Returns (..., D)."""
        return F.embedding(indices, self.weight, self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True,
                        padding_idx: int | None = None) -> "Embedding":
        """An Embedding whose weight is a copy of `embeddings` (V, D), as PyTorch's: frozen
        (requires_grad False) unless `freeze=False`; the padding_idx row is kept as given and
        gets no gradient. (PyTorch's weight shares the given tensor's memory; this one does
        not.)"""
        table = embeddings if isinstance(embeddings, mg.Tensor) else mg.tensor(embeddings)
        if table.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D (V, D), got "
                             f"shape {tuple(table.shape)}")
        if table.dtype.kind != "f":
            raise TypeError(f"Embedding.from_pretrained: embeddings must be floating, got "
                            f"{table.dtype}")
        layer = cls(table.shape[0], table.shape[1], padding_idx, device=table.device,
                    dtype=table.dtype)
        with mg.no_grad():
            layer.weight.data = table.detach().clone().data
        layer.weight.requires_grad = not freeze
        return layer

    def extra_repr(self) -> str:
        pad = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"


class LayerNorm(Module):
    """y = γ ⊙ (x − μ)/√(σ² + eps) + β over the trailing `normalized_shape` axes (Ba et al.
    2016), one fused primitive.

    weight γ: ones, bias β: zeros, both of shape normalized_shape.
    forward: x (..., *normalized_shape) -> same shape.
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device="cpu", dtype=None):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = float(eps)
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = _empty_parameter(*self.normalized_shape, dtype=dtype, device=device)
            if bias:
                self.bias = _empty_parameter(*self.normalized_shape, dtype=dtype,
                                             device=device)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """weight γ back to ones and bias β to zeros."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: (..., *normalized_shape). Returns the same shape, normalised over those axes."""
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class BatchNorm1d(Module):
    """Batch normalisation over the channels of (N, C) or (N, C, L) (Ioffe & Szegedy 2015), as
    torch.nn.BatchNorm1d: y = γ (x − μ)/√(σ² + eps) + β per channel, one fused primitive.

    In training, μ and σ² are the batch's (over N, and L), and the running statistics move
    towards them: r ← (1 − momentum) r + momentum b (the variance's unbiased); momentum None
    takes the plain mean of all batches so far. In eval, the running statistics are used.
    Without track_running_stats there are none, and the batch's are used in eval too.

    weight γ: ones, bias β: zeros (C,) with affine; buffers running_mean (zeros), running_var
    (ones) and num_batches_tracked (0, int64) with track_running_stats. The running
    statistics and the count move inside the one operation, so a compiled step replays it.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device="cpu",
                 dtype=None):
        super().__init__()
        name = type(self).__name__
        self.num_features = check_size(name, "num_features", num_features)
        self.eps = float(eps)
        self.momentum = None if momentum is None else float(momentum)
        self.affine = check_flag(name, "affine", affine)
        self.track_running_stats = check_flag(name, "track_running_stats", track_running_stats)
        _affine_parameters(self, affine, num_features, dtype, device)
        if track_running_stats:
            self.register_buffer("running_mean", mg.zeros(num_features, dtype=dtype,
                                                          device=device))
            self.register_buffer("running_var", mg.ones(num_features, dtype=dtype,
                                                        device=device))
            self.register_buffer("num_batches_tracked", mg.zeros((), dtype="int64",
                                                                 device=device))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """running_mean to zeros, running_var to ones, num_batches_tracked to 0."""
        if self.track_running_stats:
            with mg.no_grad():
                self.running_mean.fill_(0.0)
                self.running_var.fill_(1.0)
                self.num_batches_tracked.fill_(0)

    def reset_parameters(self) -> None:
        """The running statistics reset, weight γ back to ones and bias β to zeros."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    INPUTS = {2: "(N, C)", 3: "(N, C, L)"}            # the input shapes it takes, by ndim

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: (N, C) or (N, C, L) (BatchNorm2d: (N, C, H, W)). Returns the same shape."""
        if x.ndim not in self.INPUTS:
            raise ValueError(f"{type(self).__name__}: input must be "
                             f"{' or '.join(self.INPUTS.values())}, got shape {tuple(x.shape)}")
        batch_stats = self.training or self.running_mean is None
        running = not self.training or self.track_running_stats
        # training counts the batch in num_batches_tracked, inside the one operation
        return normalise_batch(x, self.running_mean if running else None,
                               self.running_var if running else None,
                               self.num_batches_tracked if running else None, self.weight,
                               self.bias, batch_stats, self.momentum, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class BatchNorm2d(BatchNorm1d):
    """torch.nn.BatchNorm2d: BatchNorm1d's normalisation per channel of (N, C, H, W), the
    statistics over N, H and W."""

    INPUTS = {4: "(N, C, H, W)"}


class GroupNorm(Module):
    """torch.nn.GroupNorm (Wu & He 2018): each sample's C channels in `num_groups` groups,
    each group normalised over its channels and positions, then γ and β per channel.

    weight γ: ones, bias β: zeros (num_channels,), with affine. forward: (N, C, *) -> same.
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device="cpu", dtype=None):
        super().__init__()
        self.num_groups = check_size("GroupNorm", "num_groups", num_groups)
        self.num_channels = check_size("GroupNorm", "num_channels", num_channels)
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels {num_channels} is not divisible by "
                             f"num_groups {num_groups}")
        self.eps, self.affine = float(eps), check_flag("GroupNorm", "affine", affine)
        _affine_parameters(self, affine, num_channels, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """weight γ back to ones and bias β to zeros."""
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: (N, C, *). Returns the same shape."""
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class RMSNorm(Module):
    """y = γ ⊙ x / √(mean(x²) + eps) over the trailing `normalized_shape` axes, as
    torch.nn.RMSNorm (eps None: the dtype's machine epsilon).

    weight γ: ones of shape normalized_shape (with elementwise_affine).
    """

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device="cpu", dtype=None):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = None if eps is None else float(eps)
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = _empty_parameter(*self.normalized_shape, dtype=dtype, device=device)
            init.ones_(self.weight)
        else:
            self.register_parameter("weight", None)

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: (..., *normalized_shape). Returns the same shape."""
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class Flatten(Module):
    """torch.nn.Flatten: axes start_dim … end_dim merged (by default all but the batch axis)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x with axes start_dim … end_dim merged into one."""
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Upsample(Module):
    """torch.nn.Upsample: `F.interpolate` with its size or scale_factor, mode and
    align_corners kept."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: (N, C, L) or (N, C, H, W), resampled over its spatial axes."""
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.recompute_scale_factor)

    def extra_repr(self) -> str:
        given = (f"size={self.size}" if self.size is not None
                 else f"scale_factor={self.scale_factor}")
        return f"{given}, mode={self.mode!r}"


class Unflatten(Module):
    """torch.nn.Unflatten: axis `dim` split into `unflattened_size` (Flatten's inverse)."""

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x with axis `dim` split into the axes of `unflattened_size`."""
        return x.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Dropout(Module):
    """Inverted dropout: in training, zero each element with probability p and scale the rest
    by 1/(1 − p); the identity in eval mode. PyTorch's `inplace` must be False."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        check_not_inplace(type(self).__name__, inplace)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
        self.p = float(p)

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns the same shape: masked and scaled in training, x in eval."""
        return mg.dropout(x, self.p, training=self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Dropout1d(Dropout):
    """Channel dropout (PyTorch's nn.Dropout1d): input (N, C, L) or (C, L); in training each
    channel is zeroed whole with probability p, the rest scaled by 1/(1 − p)."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x (N, C, L) or (C, L). Returns the same shape."""
        return F.dropout1d(x, self.p, training=self.training)


class Identity(Module):
    """y = x."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """Returns x itself."""
        return x
