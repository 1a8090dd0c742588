"""The stateless functions layers are made of: linear, layer_norm, embedding, PyTorch's pad, and
dropout in PyTorch's signature.

`linear` and `layer_norm` are single fused primitives (one graph node each, with their backward
written as math) because they sit on every hot path: a GRU calls `linear` twice per time step,
a Transformer calls `layer_norm` twice per layer. The losses are in losses.py, attention in
attention_functional.py; `nn.functional` gathers them all under one name.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

import minigrad as mg

from ._checks import check_constant, check_not_inplace

Tensor = mg.Tensor


# ---------------------------------------------------------------------------------------------
# linear

class Affine(mg.Function):
    """y = x Wᵀ + b, for x (..., I), W (O, I), b (O) -> y (..., O): `linear`'s primitive
    (the layer that owns W and b is `nn.Linear`)."""

    needs_output = False

    def forward(self, x, weight, bias=None):
        """x (..., I), weight (O, I), bias (O,) or None: arrays. Returns y (..., O)."""
        if x.ndim > 2:
            # one (N, I) @ (I, O) product over all leading positions: NumPy's matmul would
            # otherwise run one per leading index, packing W again for each
            leading = x.shape[:-1]
            y = self.forward(x.reshape(math.prod(leading), x.shape[-1]), weight, bias)
            return y.reshape(leading + (y.shape[-1],))
        y = x @ weight.T                                     # (N, O), or (O,) for one row
        if bias is not None:
            if bias.dtype == y.dtype:
                y += bias                                    # in place: no second buffer
            else:
                y = y + bias                                 # mixed dtypes promote
        return y

    def backward(self, grad):
        # bare arrays unless create_graph records the backward (see Function.values)
        grad, x, weight = self.values(grad, *self.inputs[:2])
        has_bias = len(self.inputs) == 3
        needs = [t.requires_grad for t in self.inputs]
        out_features, in_features = weight.shape
        grad_x = grad_w = grad_b = None
        # every product on the leading positions flattened into rows: G (N, O), x (N, I)
        g2, x2 = grad, x
        if x.ndim != 2:
            leading = tuple(x.shape[:-1])
            rows = math.prod(leading)         # spelled out: reshape(-1, 0) is ambiguous
            g2, x2 = grad.reshape(rows, out_features), x.reshape(rows, in_features)
        # ∂L/∂x = G W
        if needs[0]:
            grad_x = g2 @ weight                             # (N, I)
            if x.ndim != 2:
                grad_x = grad_x.reshape(leading + (in_features,))
        # ∂L/∂W = Σ over all leading positions of gᵀ x
        if needs[1]:
            grad_w = g2.T @ x2                               # (O, I)
        # ∂L/∂b = Σ g over all leading positions
        if has_bias and needs[2]:
            grad_b = g2.sum(axis=0)                          # (O,)
        return (grad_x, grad_w, grad_b) if has_bias else (grad_x, grad_w)


Linear = Affine          # its name before: `nn.Linear` is the layer


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = x Wᵀ + b as one primitive.

    x: (..., I) with any leading dimensions; weight: (O, I); bias: (O,) or None.
    Returns (..., O).
    """
    if isinstance(x, Tensor):                                # the common case, checked quickly
        if x.dtype.kind in "biu":
            x = _floating(x, weight)
        xd, wd = x.data, weight.data
        if wd.ndim == 2 and xd.ndim and xd.shape[-1] == wd.shape[1]:
            if bias is None:
                return Affine.apply(x, weight)
            if bias.data.shape == (wd.shape[0],):
                return Affine.apply(x, weight, bias)
    x = _as_tensor(x, weight)
    if weight.ndim != 2:
        raise ValueError(f"linear: weight must be 2-D (out, in), got shape {tuple(weight.shape)}")
    if x.ndim == 0 or x.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear: input shape {tuple(x.shape)} does not end in in_features = "
                         f"{weight.shape[1]} (weight shape {tuple(weight.shape)})")
    if bias is None:
        return Affine.apply(x, weight)
    if tuple(bias.shape) != (weight.shape[0],):
        raise ValueError(f"linear: bias shape {tuple(bias.shape)} must be (out_features,) = "
                         f"({weight.shape[0]},)")
    return Affine.apply(x, weight, bias)


# ---------------------------------------------------------------------------------------------
# layer_norm

class LayerNorm(mg.FusedFunction):
    """y = γ ⊙ x̂ + β, x̂ = (x − μ) / σ, with μ and σ² = mean((x − μ)²) over the last
    `n_axes` axes and σ = √(σ² + eps).

    Inputs: x, then γ and β when present (shape = the normalised shape).
    """

    needs_output = False

    def __init__(self, n_axes: int, eps: float, has_weight: bool, has_bias: bool):
        self.n_axes, self.eps = n_axes, eps
        self.has_weight, self.has_bias = has_weight, has_bias

    def _axes(self, ndim: int) -> tuple[int, ...]:
        return tuple(range(ndim - self.n_axes, ndim))

    def forward(self, x, *affine):
        """x (..., *normalised shape), then γ and β when present: arrays. Returns x's
        shape."""
        xp = self.xp
        axes = self._axes(x.ndim)
        mu = x.mean(axis=axes, keepdims=True)
        centred = x - mu                                     # the one full-size buffer
        var = (centred * centred).mean(axis=axes, keepdims=True)
        inv_sigma = (1.0 / xp.sqrt(var + self.eps)).astype(x.dtype, copy=False)
        self.save_for_backward(mu, inv_sigma)                # small: (..., 1, ..., 1)
        y = centred.astype(np.result_type(x.dtype, *[a.dtype for a in affine]), copy=False)
        y *= inv_sigma                                       # x̂, in place
        if self.has_weight:
            y *= affine[0]
        if self.has_bias:
            y += affine[-1]
        return y

    def array_backward(self, grad):
        # plain backward: the formulas of `_gradient_formula` on bare arrays, with the saved statistics
        mu, inv_sigma = self.saved_tensors
        x = self.inputs[0].data
        weight = self.inputs[1].data if self.has_weight else None
        return self._gradient_formula(grad, x, weight, mu, inv_sigma)

    def recorded_backward(self, grad):
        # recording a graph (create_graph): μ and 1/σ must stay functions of x
        x = self.inputs[0]
        axes = self._axes(x.ndim)
        mu = x.mean(axis=axes, keepdims=True)
        inv_sigma = 1.0 / mg.sqrt(x.var(axis=axes, keepdims=True) + self.eps)
        weight = self.inputs[1] if self.has_weight else None
        return self._gradient_formula(grad, x, weight, mu, inv_sigma)

    def _gradient_formula(self, grad, x, weight, mu, inv_sigma):
        """The gradients from x, γ, μ and 1/σ: the same formulas on arrays and on Tensors."""
        needs = [t.requires_grad for t in self.inputs]
        grads = normalised_gradients(
            grad, x, weight, mu, inv_sigma, self._axes(x.ndim),
            tuple(range(x.ndim - self.n_axes)), needs[0],
            (self.has_weight and needs[1], self.has_bias and needs[-1]))
        return _present([grads[0]], grads[1:], self.has_weight, self.has_bias)


def _present(leading: list, affine: tuple, has_weight: bool, has_bias: bool):
    """The gradients of the inputs before γ and β, then (∂γ, ∂β) for those present, as a
    Function returns them: one per input."""
    kept = leading + [g for g, present in zip(affine, (has_weight, has_bias)) if present]
    return tuple(kept) if len(kept) > 1 else kept[0]


def normalised_gradients(grad, x, weight, mu, inv_sigma, stat_axes, param_axes, needs_x,
                         needs_affine):
    """∂L/∂x, ∂L/∂γ and ∂L/∂β of y = γ ⊙ x̂ + β, x̂ = (x − μ)/σ, where μ and σ² are x's
    mean and (biased) variance over `stat_axes`, γ and β broadcast against x and are summed
    back over `param_axes` (layer norm and batch norm alike): the same formulas on arrays and
    on Tensors. `weight` None is γ = 1; `needs_affine` says for γ and β whether to compute."""
    x_hat = (x - mu) * inv_sigma
    g_hat = grad * weight if weight is not None else grad
    grad_x = None
    if needs_x:
        # ∂L/∂x = (1/σ)(ĝ − mean(ĝ) − x̂ ⊙ mean(ĝ ⊙ x̂)), ĝ = g ⊙ γ, the means over stat_axes
        grad_x = (g_hat - g_hat.mean(axis=stat_axes, keepdims=True)
                  - x_hat * (g_hat * x_hat).mean(axis=stat_axes, keepdims=True)) * inv_sigma
    # ∂L/∂γ = Σ over param_axes of g ⊙ x̂;  ∂L/∂β = Σ over param_axes of g
    grad_weight = (grad * x_hat).sum(axis=param_axes) if needs_affine[0] else None
    grad_bias = grad.sum(axis=param_axes) if needs_affine[1] else None
    return grad_x, grad_weight, grad_bias


def layer_norm(x: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing `normalized_shape` axes, then scale by γ and shift by β:
    y = γ ⊙ (x − μ)/√(σ² + eps) + β.

    x: (..., *normalized_shape); weight, bias: normalized_shape or None. Returns x's shape.
    """
    shape = _as_shape(normalized_shape)
    x = _floating(_as_tensor(x, weight), weight)
    if tuple(x.shape[x.ndim - len(shape):]) != shape or x.ndim < len(shape):
        raise ValueError(f"layer_norm: input shape {tuple(x.shape)} does not end in "
                         f"normalized_shape {shape}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise ValueError(f"layer_norm: {name} shape {tuple(t.shape)} must equal "
                             f"normalized_shape {shape}")
    inputs = [x] + [t for t in (weight, bias) if t is not None]
    eps = check_constant("layer_norm", "eps", eps)
    return LayerNorm.apply(*inputs, n_axes=len(shape), eps=eps,
                           has_weight=weight is not None, has_bias=bias is not None)


# ---------------------------------------------------------------------------------------------
# batch_norm

class BatchNorm(mg.FusedFunction):
    """y = γ ⊙ x̂ + β per channel c (axis 1), x̂ = (x − μ_c)/σ_c, σ_c = √(σ²_c + eps): with
    `batch_stats`, μ and σ² are the batch's mean and biased variance over every axis but 1,
    else the running mean and variance given as inputs (their gradients too, should they
    require grad).

    Inputs: x (N, C, *), then the running mean and variance (C,) when `running`, then the
    count of batches (0-d int) when `counted`, then γ and β (C,) when present. With both
    `batch_stats` and `running`, forward also moves the running statistics towards the
    batch's, in place (they are its `updates`): r ← (1 − m) r + m b, the variance's b
    unbiased (n/(n − 1)), m = momentum, or 1/count after counting this batch when momentum
    is None.
    """

    needs_output = False
    updates: tuple = ()             # the running statistics (and count), when it moves them

    def __init__(self, batch_stats: bool, running: bool, eps: float, has_weight: bool,
                 has_bias: bool, counted: bool = False, momentum: float | None = None):
        self.batch_stats, self.running, self.counted = batch_stats, running, counted
        self.eps, self.momentum = eps, momentum
        self.has_weight, self.has_bias = has_weight, has_bias
        if batch_stats and running:
            self.updates = (1, 2, 3) if counted else (1, 2)

    @staticmethod
    def _axes(ndim: int) -> tuple[int, ...]:
        return (0,) + tuple(range(2, ndim))

    @staticmethod
    def _per_channel(a, ndim: int):
        """(C,) -> (1, C, 1, …): broadcast against x (N, C, *)."""
        return a.reshape((1, -1) + (1,) * (ndim - 2))

    def _affine(self, inputs) -> tuple:
        return tuple(inputs[1 + 2 * self.running + self.counted:])

    def forward(self, x, *rest):
        """x (N, C, *), the running statistics and count when given, γ and β: arrays.
        Returns x's shape."""
        xp = self.xp
        affine = self._affine((x, *rest))
        statistics = rest[:2] if self.running else ()
        dtype = np.result_type(x.dtype, *[a.dtype for a in (*statistics, *affine)])
        if self.batch_stats:
            axes = self._axes(x.ndim)
            mu = x.mean(axis=axes, keepdims=True)
            y = (x - mu).astype(dtype, copy=False)           # the one full-size buffer
            var = (y * y).mean(axis=axes, keepdims=True)
        else:
            mu, var = (self._per_channel(a, x.ndim) for a in statistics)
            y = (x - mu).astype(dtype, copy=False)
        inv_sigma = (1.0 / xp.sqrt(var + self.eps)).astype(dtype, copy=False)
        self.save_for_backward(mu, inv_sigma)                # small: (1, C, 1, …)
        y *= inv_sigma                                       # x̂, in place
        if self.has_weight:
            y *= self._per_channel(affine[0], x.ndim)
        if self.has_bias:
            y += self._per_channel(affine[-1], x.ndim)
        if self.updates:                                     # last: nothing changes on error
            self._move_running(x.size // x.shape[1], mu.reshape(-1), var.reshape(-1),
                               *rest[:2 + self.counted])
        return y

    def _move_running(self, n: int, mean, var, running_mean, running_var, *count):
        """r ← (1 − m) r + m b for the mean and the (unbiased) variance, in place; the count
        (when given) up by one first."""
        if self.counted:
            count[0][...] += 1
        factor = self.momentum if self.momentum is not None else 1.0 / float(count[0])
        for running, batch in ((running_mean, mean), (running_var, var * (n / (n - 1)))):
            running *= 1.0 - factor
            running += (factor * batch).astype(running.dtype, copy=False)

    def array_backward(self, grad):
        mu, inv_sigma = self.saved_tensors
        return self._gradient_formula(grad, [t.data for t in self.inputs], mu, inv_sigma)

    def recorded_backward(self, grad):
        # recording a graph (create_graph): μ and 1/σ must stay functions of their inputs
        x, *rest = self.inputs
        if self.batch_stats:
            axes = self._axes(x.ndim)
            mu = x.mean(axis=axes, keepdims=True)
            var = x.var(axis=axes, keepdims=True, ddof=0)
        else:
            mu, var = (self._per_channel(t, x.ndim) for t in rest[:2])
        return self._gradient_formula(grad, self.inputs, mu, 1.0 / mg.sqrt(var + self.eps))

    def _gradient_formula(self, grad, inputs, mu, inv_sigma):
        """The gradients from the inputs, μ and 1/σ: the same formulas on arrays and on
        Tensors. The running statistics and count of a training step get none."""
        needs = [t.requires_grad for t in self.inputs]
        x, ndim = inputs[0], inputs[0].ndim
        axes = self._axes(ndim)
        affine = self._affine(inputs)
        weight = self._per_channel(affine[0], ndim) if self.has_weight else None
        needs_affine = (self.has_weight and needs[-1 - self.has_bias],
                        self.has_bias and needs[-1])
        unused = [None] * (2 * self.running + self.counted)
        if self.batch_stats:
            grad_x, *grad_affine = normalised_gradients(grad, x, weight, mu, inv_sigma, axes,
                                                        axes, needs[0], needs_affine)
        else:
            # the statistics are inputs: x̂ = (x − μ)/σ is affine in x, ĝ = g ⊙ γ
            x_hat = (x - mu) * inv_sigma
            g_hat = grad * weight if weight is not None else grad
            grad_x = g_hat * inv_sigma if needs[0] else None             # ∂L/∂x = ĝ/σ
            # ∂L/∂μ = −Σ ĝ/σ;  ∂L/∂σ² = −½ Σ ĝ ⊙ x̂/σ²  (sums over every axis but 1)
            unused = [-(g_hat * inv_sigma).sum(axis=axes) if needs[1] else None,
                      (g_hat * x_hat * inv_sigma * inv_sigma).sum(axis=axes) * -0.5
                      if needs[2] else None]
            # ∂L/∂γ = Σ g ⊙ x̂;  ∂L/∂β = Σ g
            grad_affine = [(grad * x_hat).sum(axis=axes) if needs_affine[0] else None,
                           grad.sum(axis=axes) if needs_affine[1] else None]
        return _present([grad_x] + unused, grad_affine, self.has_weight, self.has_bias)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch normalisation (Ioffe & Szegedy 2015), as torch.nn.functional.batch_norm: per
    channel c (axis 1), y = γ_c (x − μ_c)/√(σ²_c + eps) + β_c.

    training: μ and σ² are the batch's mean and biased variance over every axis but 1, and
    the running statistics, when given, move towards the batch's in place (one operation,
    replayed by a compiled step): r ← (1 − momentum) r + momentum b, with the unbiased
    variance (n/(n − 1)) for σ². Otherwise the running statistics are used (and required).

    input: (N, C, *); running_mean, running_var, weight, bias: (C,) or None. Returns input's
    shape.
    """
    if momentum is None:
        raise ValueError("batch_norm: momentum must be a number (nn.BatchNorm1d's momentum "
                         "None counts its batches)")
    return normalise_batch(input, running_mean, running_var, None, weight, bias, training,
                           momentum, eps)


def normalise_batch(input, running_mean, running_var, count, weight, bias, training: bool,
                    momentum, eps) -> Tensor:
    """batch_norm, with `count` (a 0-d int64 tensor, or None) counted up by a training step
    that moves the running statistics: momentum None then takes 1/count (BatchNorm1d's)."""
    x = _floating(_as_tensor(input, weight), weight)
    if x.ndim < 2:
        raise ValueError(f"batch_norm: input shape {tuple(x.shape)} needs a batch and a channel "
                         f"axis: (N, C) or (N, C, *)")
    channels = x.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (channels,):
            raise ValueError(f"batch_norm: {name} shape {tuple(t.shape)} must be (C,) = "
                             f"({channels},) for input shape {tuple(x.shape)}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("batch_norm: give both running_mean and running_var, or neither")
    eps = check_constant("batch_norm", "eps", eps)
    running = running_mean is not None
    if not training and not running:
        raise ValueError("batch_norm: running_mean and running_var are needed when not "
                         "training (training=False)")
    if training and (x.size // channels if channels else 0) <= 1:
        raise ValueError(f"batch_norm: training needs more than one value per channel, got "
                         f"input shape {tuple(x.shape)}")
    counted = bool(training and running and count is not None)
    if momentum is not None:
        momentum = check_constant("batch_norm", "momentum", momentum)
    elif training and running and not counted:
        raise ValueError("batch_norm: momentum None needs the count of batches")
    inputs = [x] + ([running_mean, running_var] if running else []) + (
        [count] if counted else []) + [t for t in (weight, bias) if t is not None]
    return BatchNorm.apply(*inputs, batch_stats=bool(training), running=running, eps=eps,
                           has_weight=weight is not None, has_bias=bias is not None,
                           counted=counted, momentum=momentum)


def _as_tensor(x, like: Tensor | None) -> Tensor:
    """Array data as a Tensor on `like`'s device (Tensors pass through)."""
    if isinstance(x, Tensor):
        return x
    return mg.tensor(x, device=like.device if like is not None else "cpu")


def _floating(x: Tensor, like: Tensor | None) -> Tensor:
    """Integer or bool x as floats, by minigrad's dtype rule: the dtype of the float tensor it
    meets (`like`), else the default float. Float x passes unchanged."""
    if x.dtype.kind not in "biu":
        return x
    float_like = like is not None and like.dtype.kind == "f"
    return x.astype(like.dtype if float_like else mg.get_default_dtype())


def _as_shape(shape) -> tuple[int, ...]:
    if isinstance(shape, numbers.Integral):
        return (int(shape),)
    return tuple(int(n) for n in shape)


# ---------------------------------------------------------------------------------------------
# pad, in PyTorch's form

_TORCH_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None) -> Tensor:
    """torch.nn.functional.interpolate over the spatial axes of (N, C, L) or (N, C, H, W):
    modes "nearest", "nearest-exact", "linear" (one axis) and "bilinear" (two), each axis
    resampled in turn. Output size: `size`, or ⌊S · scale_factor⌋. Output position o reads
    source coordinate o·r (nearest), (o + ½)·r (nearest-exact) or (o + ½)·r − ½ clamped at 0
    (linear), r = S/S_out, or 1/scale_factor when that is given (and not recomputed), as
    PyTorch; with align_corners, o·(S − 1)/(S_out − 1). Linear mixes the two neighbours,
    x[i]·(1 − λ) + x[i + 1]·λ. Gradients: those of the reads (nearest adds a position's
    gradients) and of the mix."""
    x = input
    spatial = x.ndim - 2
    linear = {"linear": 1, "bilinear": 2}
    if spatial not in (1, 2):
        raise ValueError(f"interpolate: input (N, C, L) or (N, C, H, W), got shape "
                         f"{tuple(x.shape)}")
    if mode not in ("nearest", "nearest-exact", *linear) or linear.get(mode, spatial) != spatial:
        raise ValueError(f"interpolate: mode {mode!r} for an input of {spatial} spatial axes "
                         f"(shape {tuple(x.shape)}); modes: nearest, nearest-exact, linear (1), "
                         f"bilinear (2)")
    if align_corners is not None and mode not in linear:
        raise ValueError("interpolate: align_corners goes with the linear modes only")
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give one of size and scale_factor")
    inputs = tuple(x.shape[2:])
    if size is not None:
        outputs = _per_spatial_axis(size, spatial, "size", int)
        ratios = [s / o for s, o in zip(inputs, outputs)]
    else:
        scales = _per_spatial_axis(scale_factor, spatial, "scale_factor", float)
        outputs = tuple(int(math.floor(s * f)) for s, f in zip(inputs, scales))
        ratios = [s / o if recompute_scale_factor else 1.0 / f
                  for s, o, f in zip(inputs, outputs, scales)]
    if any(o < 1 for o in outputs):
        raise ValueError(f"interpolate: output size {outputs} from input shape {tuple(x.shape)}")
    for k, (length, out, ratio) in enumerate(zip(inputs, outputs, ratios)):
        x = _resample(x, 2 + k, length, out, ratio, mode, bool(align_corners))
    return x


def _per_spatial_axis(value, spatial: int, name: str, kind) -> tuple:
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * spatial
    if len(values) != spatial or any(not isinstance(v, numbers.Real) or v <= 0
                                     for v in values):
        raise ValueError(f"interpolate: {name} must be a positive number or {spatial} of them, "
                         f"got {value!r}")
    return tuple(kind(v) for v in values)


def _resample(x: Tensor, axis: int, length: int, out: int, ratio: float, mode: str,
              align_corners: bool) -> Tensor:
    """x along `axis` (length long) read at `out` positions, as `interpolate` says."""
    o = np.arange(out, dtype=np.float64)
    if mode in ("nearest", "nearest-exact"):
        source = np.floor((o + (0.5 if mode == "nearest-exact" else 0.0)) * ratio)
        index = np.minimum(source.astype(np.int64), length - 1)
        return mg.index_select(x, axis, mg.tensor(index, device=x.device))
    if align_corners:
        position = o * ((length - 1) / (out - 1)) if out > 1 else np.zeros(out)
    else:
        position = np.maximum((o + 0.5) * ratio - 0.5, 0.0)
    left = np.minimum(np.floor(position).astype(np.int64), length - 1)
    right = np.minimum(left + 1, length - 1)
    weight = (position - left).reshape((out,) + (1,) * (x.ndim - 1 - axis))
    weight = mg.tensor(weight, dtype=x.dtype, device=x.device)
    return (mg.index_select(x, axis, mg.tensor(left, device=x.device)) * (1.0 - weight)
            + mg.index_select(x, axis, mg.tensor(right, device=x.device)) * weight)


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """PyTorch's pad: `pad` is a flat (left, right, top, bottom, …) sequence for the last
    len(pad) // 2 axes, the last axis first; mode "constant" (`value`, 0 by default),
    "reflect", "replicate" or "circular". A negative amount crops: in PyTorch's order, after
    the positive amounts have padded (a reflection mirrors the uncropped input), except in
    "circular" mode, which wraps the cropped input. As in PyTorch, a "reflect" amount must be
    smaller than the axis and a "circular" one at most its length. `minigrad.pad` takes
    NumPy's ((before, after), …) form."""
    if mode not in _TORCH_PAD_MODES:
        raise ValueError(f"pad: mode must be one of {', '.join(map(repr, _TORCH_PAD_MODES))}, "
                         f"got {mode!r}")
    amounts = [int(p) for p in pad]
    if len(amounts) % 2 or len(amounts) // 2 > input.ndim:
        raise ValueError(f"pad: {len(amounts)} amounts do not make (left, right) pairs for the "
                         f"last axes of shape {tuple(input.shape)}")
    if value is not None and mode != "constant":
        raise ValueError(f"pad: value is only used by mode 'constant', got mode {mode!r}")
    widths = [(0, 0)] * input.ndim
    crop = [slice(None)] * input.ndim
    for i in range(len(amounts) // 2):
        axis = input.ndim - 1 - i
        before, after = amounts[2 * i], amounts[2 * i + 1]
        widths[axis] = (max(before, 0), max(after, 0))
        start = max(-before, 0)                          # the crop keeps [start, stop)
        if mode == "circular":                           # wraps the cropped axis: crop, pad
            stop = max(input.shape[axis] - max(-after, 0), start)
            n = stop - start
        else:                                            # pads the whole axis, then crops
            n = input.shape[axis]
            stop = max(n + sum(widths[axis]) - max(-after, 0), start)
        limit = {"reflect": n - 1, "circular": n}.get(mode)    # the length being padded
        if limit is not None and max(widths[axis]) > limit:
            raise ValueError(f"pad: mode {mode!r} pads axis {axis} of length {n} by at most "
                             f"{limit}, got ({before}, {after}) for shape {tuple(input.shape)}")
        crop[axis] = slice(start, stop)
    is_cropped = any(s != slice(None) for s in crop)
    if mode == "circular" and is_cropped:
        input = input[tuple(crop)]
    out = mg.pad(input, widths, mode, 0.0 if value is None else value)
    if mode != "circular" and is_cropped:
        out = out[tuple(crop)]
    return out


# ---------------------------------------------------------------------------------------------
# embedding

def embedding(indices, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    """Rows of `weight` (V, D) picked by integer `indices` of any shape: (...) -> (..., D).

    Rows equal to `padding_idx` are looked up as usual but pass no gradient to `weight`.
    """
    if weight.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D (V, D), got shape "
                         f"{tuple(weight.shape)}")
    index = _as_index_tensor(indices, weight.device, "embedding")
    num = weight.shape[0]
    data = index.data
    if data.size and (int(data.min()) < 0 or int(data.max()) >= num):
        raise ValueError(f"embedding: indices must lie in [0, {num}) for a table of "
                         f"{num} rows, got values from {int(data.min())} to {int(data.max())}")
    rows = weight[index]                                     # (..., D)
    if padding_idx is None:
        return rows
    is_pad = (index == padding_idx).unsqueeze(-1)            # (..., 1)
    # the padding row keeps its value but its gradient is cut: where() routes none to it
    return mg.where(is_pad, rows.detach(), rows)


def _as_index_tensor(indices, device: str, op: str) -> Tensor:
    if not isinstance(indices, Tensor):
        indices = mg.tensor(np.asarray(indices) if isinstance(indices, (list, tuple, int))
                            else indices, device=device)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got dtype {indices.dtype}")
    if indices.device != device:
        raise RuntimeError(f"{op}: indices are on {indices.device}, the table on {device}")
    return indices


def rms_norm(x: Tensor, normalized_shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """torch.nn.functional.rms_norm: y = γ ⊙ x / √(mean(x²) + eps) over the trailing
    `normalized_shape` axes (Zhang and Sennrich 2019). eps None is the dtype's machine epsilon,
    as PyTorch's. Composed from minigrad operations (their gradients)."""
    shape = _as_shape(normalized_shape)
    x = _floating(_as_tensor(x, weight), weight)
    if tuple(x.shape[x.ndim - len(shape):]) != shape or x.ndim < len(shape):
        raise ValueError(f"rms_norm: input shape {tuple(x.shape)} does not end in "
                         f"normalized_shape {shape}")
    if weight is not None and tuple(weight.shape) != shape:
        raise ValueError(f"rms_norm: weight shape {tuple(weight.shape)} must equal "
                         f"normalized_shape {shape}")
    eps = (float(np.finfo(x.dtype).eps) if eps is None
           else check_constant("rms_norm", "eps", eps))
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    y = x * mg.rsqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    return y if weight is None else y * weight


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """torch.nn.functional.group_norm (Wu & He 2018): the C channels of x (N, C, *) in
    `num_groups` groups of C/G, each group of each sample normalised over its channels and
    positions (layer_norm's fused primitive on x viewed as (N, G, C/G · Π*)), then γ and β
    per channel. Its gradients are those of layer_norm, reshape and the affine product."""
    x = _floating(_as_tensor(input, weight), weight)
    if x.ndim < 2 or not isinstance(num_groups, numbers.Integral) or num_groups < 1 or \
            x.shape[1] % num_groups:
        raise ValueError(f"group_norm: input (N, C, *) with C divisible by num_groups, got "
                         f"shape {tuple(x.shape)} and num_groups={num_groups!r}")
    channels = x.shape[1]
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (channels,):
            raise ValueError(f"group_norm: {name} shape {tuple(t.shape)} must be (C,) = "
                             f"({channels},)")
    grouped = x.reshape(x.shape[0], num_groups,
                        channels // num_groups * math.prod(x.shape[2:]))   # (N, G, C/G · Π*)
    y = layer_norm(grouped, grouped.shape[-1:], eps=eps).reshape(tuple(x.shape))
    per_channel = (channels,) + (1,) * (x.ndim - 2)             # (C, 1, …) against (N, C, *)
    if weight is not None:
        y = y * weight.reshape(per_channel)
    if bias is not None:
        y = y + bias.reshape(per_channel)
    return y


def normalize(x: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """torch.nn.functional.normalize: x / max(‖x‖_p, eps) along `dim`."""
    return x / mg.clamp(mg.vector_norm(x, p, dim, keepdim=True), min=eps)


def one_hot(indices, num_classes: int = -1) -> Tensor:
    """torch.nn.functional.one_hot: int64, shape indices.shape + (num_classes,); num_classes
    -1 is max(indices) + 1."""
    if num_classes == -1:
        num_classes = int(mg.tensor(indices).max()) + 1
    return mg.one_hot(indices, num_classes, dtype="int64")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False, *,
            noise_shape: tuple | None = None) -> Tensor:
    """minigrad.dropout in PyTorch's signature: y = x ⊙ m / (1 − p), m ~ Bernoulli(1 − p), when
    training, else x. `inplace` must be False (see check_not_inplace); `noise_shape` (a keyword)
    shares one draw along each axis of size 1, as in minigrad.dropout."""
    check_not_inplace("dropout", inplace, "; minigrad's noise_shape goes by keyword: "
                      "dropout(x, p, training, noise_shape=...)")
    return mg.dropout(input, p, training, noise_shape)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Channel dropout, as PyTorch's: input (N, C, L) or (C, L); each channel is kept or
    dropped whole (the same draw for all L positions) and the kept ones scaled by 1/(1 − p).
    For a (B, T, E) sequence, `mg.dropout(x, p, noise_shape=(B, 1, E))` is the same idea with
    the features last (locked, or variational, dropout). `inplace` must be False."""
    check_not_inplace("dropout1d", inplace)
    if input.ndim not in (2, 3):
        raise ValueError(f"dropout1d: input must be (N, C, L) or (C, L), got shape "
                         f"{tuple(input.shape)}")
    return mg.dropout(input, p, training, noise_shape=tuple(input.shape[:-1]) + (1,))
