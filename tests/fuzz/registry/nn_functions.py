"""Registry entries for nn's Functions and for the nn.functional calls that reach minigrad's:
linear, layer norm, the losses, attention, hard attention and the GRU sequence."""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg
from minigrad.ops import elementwise as E
from minigrad.ops import nn_ops
from nn import attention as nn_attention
from nn import attention_functional, convolution, losses, recurrent
from nn import functional as F

from .core import (CHECK_SHAPES, KINK_MARGIN, PAIRS, POSITIVE, REAL, SHAPES, UNIT, Domain, Edges,
                   OpInfo, Sample, _dropout_keep, _log_softmax, _sigmoid, _softmax, literal,
                   seeded)


PROBABILITY = Domain("probability", lambda rng, s: rng.uniform(0.05, 0.95, size=s),
                     lambda a: bool(a.min(initial=0.5) > 0.01 and a.max(initial=0.5) < 0.99))


def _linear(x, w, b=None):
    y = x @ w.T
    return y if b is None else y + b


def _layer_norm(x, *affine, n_axes, has_weight, has_bias, eps=1e-5):
    axes = tuple(range(x.ndim - n_axes, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if has_weight:
        y = y * affine[0]
    if has_bias:
        y = y + affine[-1]
    return y


def _cross_entropy(logits, targets, ignore_index, reduction, label_smoothing):
    classes = logits.shape[-1]
    z, t = logits.reshape(-1, classes), targets.reshape(-1)
    log_p = _log_softmax(z, -1)
    kept = np.ones(t.shape, bool) if ignore_index is None else t != ignore_index
    safe = np.where(kept, t, 0)
    nll = -log_p[np.arange(t.size), safe]
    loss = (1 - label_smoothing) * nll + label_smoothing * -log_p.mean(axis=-1)
    loss = np.where(kept, loss, 0)
    if reduction == "none":
        return loss.reshape(logits.shape[:-1])
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / max(int(kept.sum()), 1)


def _softplus(a):
    """log(1 + eᵃ), without overflow."""
    return np.log1p(np.exp(-np.abs(a))) + np.maximum(a, 0)


def _bce_with_logits(z, y, *extras, reduction, has_weight, has_pos_weight):
    """ℓ = w·[p·y·softplus(−z) + (1 − y)·softplus(z)], which is −w·[p·y·log σ(z) +
    (1 − y)·log(1 − σ(z))]."""
    w = extras[0] if has_weight else 1
    p = extras[-1] if has_pos_weight else 1
    loss = w * (p * y * _softplus(-z) + (1 - y) * _softplus(z))
    loss = np.broadcast_to(loss, z.shape) if reduction == "none" else loss
    return {"none": lambda l: l, "sum": np.sum, "mean": np.mean}[reduction](loss)


def _attention_weights(q, k, mask=None):
    scores = (q @ np.swapaxes(k, -1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return _softmax(scores, -1)


def _attend(q, k, v, mask=None, dropout_p=0.0, seed=None):
    w = _attention_weights(q, k, mask)
    if dropout_p:
        keep = _dropout_keep(seed, w.shape, w.dtype, dropout_p)
        w = w * (keep.astype(w.dtype) * (1.0 / (1.0 - dropout_p)))
    return w @ v


def _gru(gx, h0, w, b=None):
    """h_t = (1 − z) ⊙ n + z ⊙ h_{t−1} over t, with the gates r, z, n of nn.GRUCell."""
    H = h0.shape[-1]
    h, outputs = h0, []
    for t in range(gx.shape[1]):
        gh = h @ w.T + (0 if b is None else b)
        r = _sigmoid(gx[:, t, :H] + gh[:, :H])
        z = _sigmoid(gx[:, t, H:2 * H] + gh[:, H:2 * H])
        n = np.tanh(gx[:, t, 2 * H:] + r * gh[:, 2 * H:])
        h = (1 - z) * n + z * h
        outputs.append(h)
    return np.stack(outputs, axis=1)


def _bce(p, y):
    return -(y * np.maximum(np.log(p), -100) + (1 - y) * np.maximum(np.log1p(-p), -100))


def _hard_choice_call(q, k, mode):
    """HardAttention's weights: the one-hot choice of a key for each query (HardChoice)."""
    values = mg.zeros(k.shape[:-1] + (1,), dtype=q.dtype, device=q.device)
    return nn_attention.HardAttention(mode=mode)(q, k, values)[1]


def _hard_choice(q, k, mode):
    """one_hot(argmax_j q·k_j) ("nearest", the first best key), or one_hot(first j with
    k_j = q), zeros where none ("exact"); in q's dtype (the values' dtype in the call)."""
    keys = k.shape[-2]
    if mode == "nearest":
        scores = q @ np.swapaxes(k, -1, -2)
        chosen = np.argmax(scores, axis=-1)
        found = np.ones(chosen.shape, dtype=bool)
    else:
        equal = np.all(q[..., :, None, :] == k[..., None, :, :], axis=-1)
        chosen, found = np.argmax(equal, axis=-1), np.any(equal, axis=-1)
    one_hot = (chosen[..., None] == np.arange(keys)) & found[..., None]
    return one_hot.astype(q.dtype)


def _hard_choice_valid(q, k, mode):
    """The best key wins by a margin (a step's difference never changes the choice)."""
    if mode != "nearest":
        return True
    scores = np.sort(q @ np.swapaxes(k, -1, -2), axis=-1)
    return scores.shape[-1] < 2 or bool(np.all(scores[..., -1] - scores[..., -2] > KINK_MARGIN))


def _layer_norm_call(x, *affine, n_axes, has_weight, has_bias):
    weight = affine[0] if has_weight else None
    bias = affine[-1] if has_bias else None
    return F.layer_norm(x, x.shape[x.ndim - n_axes:], weight, bias)


def _layer_norm_valid(x, *affine, n_axes, **_):
    """Each normalised slice spreads enough for x̂ to be well conditioned (or has one element,
    when x̂ = 0 exactly)."""
    axes = tuple(range(x.ndim - n_axes, x.ndim))
    return math.prod(x.shape[a] for a in axes) == 1 or bool(np.var(x, axis=axes).min() > 0.05)


def _layer_norm_spell(names, o):
    weight = names[1] if o["has_weight"] else None
    bias = names[-1] if o["has_bias"] else None
    return (f"nn.functional.layer_norm({names[0]}, {names[0]}.shape[{names[0]}.ndim - "
            f"{o['n_axes']}:], {weight}, {bias})")


def _batch_norm(x, *rest, batch_stats, has_weight, has_bias, eps=1e-5):
    """Per channel (axis 1): the batch's mean and biased variance over the other axes, or the
    running ones given first."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if batch_stats:
        mu, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    else:
        mu, var, rest = rest[0].reshape(shape), rest[1].reshape(shape), rest[2:]
    y = (x - mu) / np.sqrt(var + eps)
    if has_weight:
        y = y * rest[0].reshape(shape)
    if has_bias:
        y = y + rest[-1].reshape(shape)
    return y


def _batch_norm_call(x, *rest, batch_stats, has_weight, has_bias):
    running = [None, None] if batch_stats else list(rest[:2])
    affine = rest if batch_stats else rest[2:]
    weight = affine[0] if has_weight else None
    bias = affine[-1] if has_bias else None
    return F.batch_norm(x, *running, weight, bias, training=batch_stats)


def _batch_norm_moving_call(x, *affine, has_weight, has_bias, batch_stats=True):
    """Training with running statistics (made here, as buffers would be): they move in place
    inside the operation, and the output is the batch's."""
    channels = x.shape[1]
    running = [mg.zeros(channels, dtype=x.dtype, device=x.device),
               mg.ones(channels, dtype=x.dtype, device=x.device)]
    weight = affine[0] if has_weight else None
    bias = affine[-1] if has_bias else None
    return F.batch_norm(x, *running, weight, bias, training=True, momentum=0.3)


def _batch_norm_valid(x, *rest, batch_stats, **_):
    """In training, each channel spreads enough for x̂ to be well conditioned."""
    axes = (0,) + tuple(range(2, x.ndim))
    return not batch_stats or bool(np.var(x, axis=axes).min() > 0.05)


def _batch_norm_spell(names, o):
    running = "None, None" if o["batch_stats"] else f"{names[1]}, {names[2]}"
    affine = names[1:] if o["batch_stats"] else names[3:]
    weight = affine[0] if o["has_weight"] else None
    bias = affine[-1] if o["has_bias"] else None
    return (f"nn.functional.batch_norm({names[0]}, {running}, {weight}, {bias}, "
            f"training={o['batch_stats']})")


def _targets_options(logits_shape, fixed):
    def make(rng):
        classes = logits_shape[-1]
        targets = rng.integers(0, classes, size=logits_shape[:-1])
        options = {"ignore_index": None, "reduction": "mean", "label_smoothing": 0.0, **fixed}
        if options["ignore_index"] is not None and targets.size:
            targets.reshape(-1)[0] = options["ignore_index"]
        return {"targets": np.asarray(targets, dtype=np.int64), **options}
    return make


def _bce_call(z, y, *extras, reduction, has_weight, has_pos_weight):
    weight = extras[0] if has_weight else None
    pos_weight = extras[-1] if has_pos_weight else None
    return F.binary_cross_entropy_with_logits(z, y, weight=weight, reduction=reduction,
                                              pos_weight=pos_weight)


def _bce_spell(names, o):
    weight = names[2] if o["has_weight"] else None
    pos_weight = names[-1] if o["has_pos_weight"] else None
    return (f"nn.functional.binary_cross_entropy_with_logits({names[0]}, {names[1]}, "
            f"weight={weight}, reduction={o['reduction']!r}, pos_weight={pos_weight})")


def _attention_mask_options(shapes, masked, **fixed):
    q, k = shapes[0], shapes[1]
    scores = np.broadcast_shapes(q[:-1], k[:-2] + (1,)) + (k[-2],)

    def make(rng):
        mask = np.asarray(rng.random(scores) < 0.6) if masked else None
        return {"mask": mask, **fixed}
    return make


def _attention_weights_call(q, k, mask=None):
    return F.attention_weights(q, k, mask=mask)


def _attend_call(q, k, v, mask=None, dropout_p=0.0, seed=None):
    if dropout_p:
        return seeded(seed, F.scaled_dot_product_attention, q, k, v, mask=mask,
                      dropout_p=dropout_p)[0]
    return F.scaled_dot_product_attention(q, k, v, mask=mask)[0]


def _reduced(loss, reduction):
    return {"none": lambda v: v, "sum": np.sum, "mean": np.mean}[reduction](loss)


def _kl_div(log_q, p, reduction):
    loss = np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0) - p * log_q
    if reduction == "batchmean":
        return (loss.sum() / (log_q.shape[0] if log_q.ndim else 1)).astype(loss.dtype)
    return _reduced(loss, reduction)


def _cosine_similarity(a, b, dim):
    a, b = np.broadcast_arrays(a, b)
    norm = lambda v: np.sqrt(np.maximum((v * v).sum(dim), 1e-16))        # noqa: E731
    return (a * b).sum(dim) / (norm(a) * norm(b))


def _norms_clear_of_zero(a, b, dim) -> bool:
    """Both operands' norms along `dim` clear of the clamp at zero: a vector of zeros (x − x)
    gets a gradient of 1e8 along the other (the clamp's, not the math's), which float32 sums
    cannot carry beside the rest of a program's gradient."""
    a, b = np.broadcast_arrays(a, b)
    return all(np.sqrt((v * v).sum(dim)).min(initial=1.0) > 1e-2 for v in (a, b))


def _weighted_ce_options(logits_shape):
    def make(rng):
        classes = logits_shape[-1]
        targets = rng.integers(0, classes, size=logits_shape[:-1])
        return {"targets": np.asarray(targets, dtype=np.int64), "label_smoothing": 0.1}
    return make


def _weighted_ce_call(z, w, targets, label_smoothing):
    return F.cross_entropy(z, targets, weight=w, label_smoothing=label_smoothing)


def _weighted_ce(z, w, targets, label_smoothing):
    """(1 − ε)(−w_t log p_t) + (ε/C) Σ_c (−w_c log p_c), summed and divided by Σ w_t."""
    log_p = _log_softmax(z, -1).reshape(-1, z.shape[-1])
    t = targets.reshape(-1)
    picked = -log_p[np.arange(t.size), t] * w[t]
    spread = -(log_p * w).sum(-1)
    loss = (1 - label_smoothing) * picked + label_smoothing / z.shape[-1] * spread
    return loss.sum() / w[t].sum()


def _clear_argmax(y) -> bool:
    """Along the last axis the largest element leads the next by more than the margin, so the
    targets argmax(y) stay put under the finite-difference steps."""
    if y.shape[-1] < 2:
        return True
    top2 = np.sort(y, axis=-1)[..., -2:]
    return bool(np.all(top2[..., 1] - top2[..., 0] > KINK_MARGIN))


# targets computed in the program (argmax of an operand), so that they change from call to call
# in the compiled arm: the losses must read each call's targets
def _nll_of_argmax(z, y, reduction):
    return F.nll_loss(mg.log_softmax(z, -1), mg.argmax(y, -1), reduction=reduction)


def _nll_of_argmax_reference(z, y, reduction):
    return _cross_entropy(z, np.argmax(y, -1), None, reduction, 0.0)


def _weighted_ce_of_argmax(z, y, w):
    return F.cross_entropy(z, mg.argmax(y, -1), weight=w, label_smoothing=0.1)


def _weighted_ce_of_argmax_reference(z, y, w):
    return _weighted_ce(z, w, np.argmax(y, -1), 0.1)


def _weighted_ce_spell(names, o):
    return (f"nn.functional.cross_entropy({names[0]}, {literal(o['targets'])}, "
            f"weight={names[1]}, label_smoothing={o['label_smoothing']})")


def _soft_ce(z, q, label_smoothing):
    classes = z.shape[-1]
    smoothed = (1 - label_smoothing) * q + label_smoothing / classes
    return (-(smoothed * _log_softmax(z, -1)).sum(-1)).mean()


def entries() -> list[OpInfo]:
    ops: list[OpInfo] = []
    add = ops.append
    linear_shapes = [((3,), (2, 3), (2,)), ((2, 3), (2, 3), (2,)), ((1, 3), (1, 3)),
                     ((2, 2), (3, 2), (3,)), ((1, 2, 3), (2, 3), (2,)), ((2, 1), (2, 1), (2,)),
                     ((2, 3), (1, 3), (1,))]
    add(OpInfo("linear", F.Affine, F.linear, _linear, tuple(Sample(s) for s in linear_shapes),
               spell=lambda names, o: f"nn.functional.linear({', '.join(names)})"))

    # -- fused nn primitives --------------------------------------------------------------------
    norm_cases = [((2, 3), 1, True, True), ((3,), 1, True, True), ((2, 3), 2, True, True),
                  ((1, 3), 1, False, False), ((2, 2), 1, True, False), ((2, 3), 1, False, True),
                  ((1, 2, 3), 1, True, True), ((2, 1), 1, True, True), ((1,), 1, False, True)]
    norm_samples = []
    for x_shape, n_axes, has_weight, has_bias in norm_cases:
        affine = x_shape[len(x_shape) - n_axes:]
        shapes = (x_shape,) + (affine,) * (has_weight + has_bias)
        norm_samples.append(Sample(shapes, {"n_axes": n_axes, "has_weight": has_weight,
                                            "has_bias": has_bias}))
    add(OpInfo("layer_norm", F.LayerNorm, _layer_norm_call, _layer_norm, tuple(norm_samples),
               valid=_layer_norm_valid, spell=_layer_norm_spell))
    # batch norm: x (N, C, *) with γ and β (C,) when present; in eval the running mean and
    # variance (C,) come after x, the variance positive
    bn_cases = [((4, 3), True, True), ((3, 2, 4), True, True), ((2, 1), False, False),
                ((3, 2), True, False), ((2, 2, 1), False, True), ((1, 2, 3), True, True),
                ((5, 1, 2), True, True)]
    for batch_stats in (True, False):
        samples = []
        for x_shape, has_weight, has_bias in bn_cases:
            channels = (x_shape[1],)
            shapes = (x_shape,) + (channels,) * (2 * (not batch_stats) + has_weight + has_bias)
            samples.append(Sample(shapes, {"batch_stats": batch_stats,
                                           "has_weight": has_weight, "has_bias": has_bias}))
        add(OpInfo("batch_norm" + ("" if batch_stats else "_running"), F.BatchNorm,
                   _batch_norm_call, _batch_norm, tuple(samples), valid=_batch_norm_valid,
                   domains=(REAL,) if batch_stats else (REAL, REAL, POSITIVE, REAL, REAL),
                   spell=_batch_norm_spell))
        if batch_stats:                 # the same, moving running statistics made in the call
            add(OpInfo("batch_norm_moving", F.BatchNorm, _batch_norm_moving_call, _batch_norm,
                       tuple(samples), valid=_batch_norm_valid,
                       spell=lambda names, o: (
                           f"nn.functional.batch_norm({names[0]}, mg.zeros({names[0]}.shape[1]), "
                           f"mg.ones({names[0]}.shape[1]), "
                           f"{names[1] if o['has_weight'] else None}, "
                           f"{names[-1] if o['has_bias'] else None}, training=True, "
                           f"momentum=0.3)")))
    ce_cases = [((2, 3), {}), ((3,), {}), ((1, 3), {"reduction": "sum"}),
                ((2, 3), {"reduction": "none"}), ((2, 2), {"label_smoothing": 0.1}),
                ((2, 3), {"ignore_index": -1}), ((1, 2, 3), {"reduction": "none"}),
                ((1,), {}), ((1, 1), {"reduction": "sum"})]
    add(OpInfo("cross_entropy", F.CrossEntropy,
               lambda z, targets, **o: F.cross_entropy(z, targets, **o), _cross_entropy,
               tuple(Sample((s,), _targets_options(s, o)) for s, o in ce_cases),
               spell="nn.functional.cross_entropy({0}, {targets}, ignore_index={ignore_index}, "
                     "reduction={reduction}, label_smoothing={label_smoothing})",
               edges=Edges(shift=(0,))))
    bce_cases = [((), (), "mean"), ((1,), (1,), "sum"), ((2, 3), (2, 3), "none"),
                 ((2, 3), (2, 3), "mean", (3,)), ((2, 3), (2, 3), "sum", None, (3,)),
                 ((2, 1), (2, 1), "none", (1,), (2, 1)), ((3,), (3,), "mean", (), ())]
    bce_samples = []
    for z_shape, y_shape, reduction, *extras in bce_cases:
        extras = (extras + [None, None])[:2]
        shapes = (z_shape, y_shape) + tuple(e for e in extras if e is not None)
        bce_samples.append(Sample(shapes, {"reduction": reduction,
                                           "has_weight": extras[0] is not None,
                                           "has_pos_weight": extras[1] is not None}))
    add(OpInfo("bce_with_logits", F.BinaryCrossEntropyWithLogits, _bce_call, _bce_with_logits,
               tuple(bce_samples), domains=(REAL, UNIT, POSITIVE), spell=_bce_spell))
    attention_shapes = [((2, 2), (2, 2)), ((1, 3), (2, 3)), ((1, 2, 2), (1, 2, 2)),
                        ((2, 1), (3, 1)), ((1, 1), (1, 1))]
    add(OpInfo("attention_weights", attention_functional.AttentionWeights,
               _attention_weights_call, _attention_weights,
               tuple(Sample(p, _attention_mask_options(p, masked))
                     for p in attention_shapes for masked in (False, True)),
               spell="nn.functional.attention_weights({0}, {1}, mask={mask})"))
    attend_shapes = [((2, 2), (2, 2), (2, 3)), ((1, 3), (2, 3), (2, 2)),
                     ((1, 2, 2), (1, 2, 2), (1, 2, 2)), ((2, 1), (3, 1), (3, 1)),
                     ((1, 1), (1, 1), (1, 1))]
    add(OpInfo("attend", attention_functional.AttendValues, _attend_call, _attend,
               tuple(Sample(p, _attention_mask_options(p, masked))
                     for p in attend_shapes for masked in (False, True)),
               spell="nn.functional.scaled_dot_product_attention({0}, {1}, {2}, mask={mask})[0]"))
    add(OpInfo("attend_dropout", attention_functional.AttendValues, _attend_call, _attend,
               tuple(Sample(p, _attention_mask_options(p, False, dropout_p=0.5, seed=5))
                     for p in attend_shapes[:2] + attend_shapes[-1:]),
               random=True,
               spell="seeded({seed}, nn.functional.scaled_dot_product_attention, {0}, {1}, {2}, "
                     "dropout_p={dropout_p})[0]"))
    hard_shapes = [((2, 2), (2, 2)), ((1, 3), (2, 3)), ((1, 2, 2), (1, 2, 2)), ((1, 1), (1, 1))]
    add(OpInfo("hard_choice", nn_attention.HardChoice, _hard_choice_call, _hard_choice,
               tuple(Sample(p, {"mode": "nearest"}) for p in hard_shapes),
               tuple(Sample(p, {"mode": m}) for p in hard_shapes for m in ("nearest", "exact")),
               valid=_hard_choice_valid, nonsmooth=True, passes_gradient=False,
               spell="nn.HardAttention(mode={mode})({0}, {1}, "
                     "mg.zeros({1}.shape[:-1] + (1,), dtype={0}.dtype, device={0}.device))[1]"))
    gru_shapes = [((1, 2, 3), (1, 1), (3, 1), (3,)), ((2, 2, 3), (2, 1), (3, 1)),
                  ((1, 2, 6), (1, 2), (6, 2), (6,))]
    add(OpInfo("gru_sequence", recurrent.GRUSequence, recurrent.gru_sequence, _gru,
               tuple(Sample(s) for s in gru_shapes),
               spell=lambda names, o: f"nn.recurrent.gru_sequence({', '.join(names)})"))

    # -- losses (most reduce to a 0-d loss) ------------------------------------------------------
    probability_samples = tuple(Sample((s, s), {"reduction": r}) for s in SHAPES
                                for r in ("none", "mean"))
    add(OpInfo("binary_cross_entropy", losses.BinaryCrossEntropy,
               F.binary_cross_entropy,
               lambda p, y, reduction: _reduced(_bce(p, y), reduction), probability_samples,
               tuple(Sample((s, s), {"reduction": "mean"}) for s in CHECK_SHAPES),
               domains=(PROBABILITY, UNIT),
               spell="nn.functional.binary_cross_entropy({0}, {1}, reduction={reduction})"))
    add(OpInfo("kl_div", E.Xlogy, F.kl_div,
               lambda log_q, p, reduction: _kl_div(log_q, p, reduction),
               tuple(Sample((s, s), {"reduction": r}) for s in SHAPES
                     for r in ("batchmean", "sum")),
               tuple(Sample((s, s), {"reduction": "batchmean"}) for s in CHECK_SHAPES),
               domains=(REAL, PROBABILITY),
               spell="nn.functional.kl_div({0}, {1}, {reduction})"))
    add(OpInfo("cosine_similarity", E.Sqrt,
               lambda a, b, dim: F.cosine_similarity(a, b, dim),
               _cosine_similarity,
               tuple(Sample((a, b), {"dim": -1}) for a, b in PAIRS if a and b) +
               tuple(Sample((s, s), {"dim": 0}) for s in SHAPES if s),
               tuple(Sample(p, {"dim": -1}) for p in [((3,), (3,)), ((2, 3), (3,)),
                                                      ((1,), (1,))]),
               broadcasts=True, valid=_norms_clear_of_zero,
               spell="nn.functional.cosine_similarity({0}, {1}, {dim})"))
    ce_shapes = [s for s in SHAPES if s]
    add(OpInfo("weighted_cross_entropy", nn_ops.LogSoftmax, _weighted_ce_call, _weighted_ce,
               tuple(Sample((s, s[-1:]), _weighted_ce_options(s)) for s in ce_shapes),
               tuple(Sample((s, s[-1:]), _weighted_ce_options(s)) for s in [(1,), (2, 3)]),
               domains=(REAL, POSITIVE), spell=_weighted_ce_spell, edges=Edges(shift=(0,))))
    argmax_shapes = [(1,), (3,), (2, 3), (3, 2)]
    add(OpInfo("nll_loss_of_argmax", nn_ops.LogSoftmax, _nll_of_argmax, _nll_of_argmax_reference,
               tuple(Sample((s, s), {"reduction": r}) for s in argmax_shapes
                     for r in ("mean", "sum", "none")),
               tuple(Sample((s, s), {"reduction": "mean"}) for s in [(1,), (2, 3)]),
               valid=lambda z, y, **_: _clear_argmax(y), nonsmooth=True, value_operands=(1,),
               spell="nn.functional.nll_loss(mg.log_softmax({0}, -1), mg.argmax({1}, -1), "
                     "reduction={reduction})"))
    add(OpInfo("weighted_cross_entropy_of_argmax", nn_ops.LogSoftmax, _weighted_ce_of_argmax,
               _weighted_ce_of_argmax_reference,
               tuple(Sample((s, s, s[-1:]), {}) for s in argmax_shapes),
               tuple(Sample((s, s, s[-1:]), {}) for s in [(1,), (2, 3)]),
               domains=(REAL, REAL, POSITIVE), valid=lambda z, y, w: _clear_argmax(y),
               nonsmooth=True, value_operands=(1,),
               spell="nn.functional.cross_entropy({0}, mg.argmax({1}, -1), weight={2}, "
                     "label_smoothing=0.1)"))
    add(OpInfo("soft_cross_entropy", nn_ops.LogSoftmax,
               lambda z, q, label_smoothing: F.cross_entropy(
                   z, q, label_smoothing=label_smoothing),
               _soft_ce, tuple(Sample((s, s), {"label_smoothing": e}) for s in ce_shapes
                               for e in (0.0, 0.1)),
               tuple(Sample((s, s), {"label_smoothing": 0.1}) for s in [(1,), (2, 3)]),
               domains=(REAL, UNIT),
               spell="nn.functional.cross_entropy({0}, {1}, label_smoothing={label_smoothing})"))
    ops.extend(_convolution_entries())
    return ops


# -- convolution and pooling over one axis (nn/convolution.py) ----------------------------------

def _unbatched_too(reference):
    """`reference` of an (N, C, L) input applied to an unbatched (C, L) one as to (1, C, L)."""
    def run(x, *rest, **options):
        if x.ndim == 2:
            return reference(x[None], *rest, **options)[0]
        return reference(x, *rest, **options)
    return run


@_unbatched_too
def _conv1d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """y[n, o, l] = b[o] + Σ_c Σ_k w[o, c, k] x[n, g·C_g + c, l·s + k·d − p_left] (g the group
    of o, C_g = w.shape[1]), one output position at a time."""
    c_out, c_group, k = w.shape
    span = dilation * (k - 1) + 1
    if padding == "same":                       # output length L; the odd one on the right
        left, right = (span - 1) // 2, (span - 1) - (span - 1) // 2
    elif padding == "valid":
        left = right = 0
    else:
        left = right = padding
    x = np.pad(x, ((0, 0), (0, 0), (left, right)))
    out_length = (x.shape[-1] - span) // stride + 1
    dtype = np.result_type(x, w) if b is None else np.result_type(x, w, b)
    y = np.zeros((x.shape[0], c_out, out_length), dtype=dtype)
    per_group = c_out // groups
    for o in range(c_out):
        group = o // per_group
        channels = slice(group * c_group, (group + 1) * c_group)
        for l in range(out_length):
            window = x[:, channels, l * stride:l * stride + span:dilation]      # (N, C_g, K)
            y[:, o, l] = (window * w[o]).sum(axis=(1, 2)) + (0 if b is None else b[o])
    return y


def _pool_windows(x, kernel_size, stride, padding, dilation, ceil_mode, fill):
    """The windows of x (N, C, L) as PyTorch's pooling lays them out, (N, C, L_out, K), with
    `fill` at positions outside the input: L_out = ⌊(L + 2p − d(K − 1) − 1)/s⌋ + 1, rounded up
    with ceil_mode unless the last window would start past L + p."""
    length = x.shape[-1]
    stride = kernel_size if stride is None else stride
    span = dilation * (kernel_size - 1) + 1
    extra = stride - 1 if ceil_mode else 0
    out_length = (length + 2 * padding - span + extra) // stride + 1
    if ceil_mode and (out_length - 1) * stride >= length + padding:
        out_length -= 1
    windows = np.full(x.shape[:2] + (out_length, kernel_size), fill, dtype=x.dtype)
    for l in range(out_length):
        for k in range(kernel_size):
            i = l * stride - padding + k * dilation
            if 0 <= i < length:
                windows[:, :, l, k] = x[:, :, i]
    return windows


@_unbatched_too
def _max_pool1d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    return _pool_windows(x, kernel_size, stride, padding, dilation, ceil_mode, -np.inf).max(-1)


@_unbatched_too
def _avg_pool1d(x, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True):
    """Each window's sum over the count of its positions inside the padded input (or, without
    count_include_pad, inside the input)."""
    stride = kernel_size if stride is None else stride
    total = _pool_windows(x, kernel_size, stride, padding, 1, ceil_mode, 0).sum(-1)
    starts = np.arange(total.shape[-1])[:, None] * stride - padding + np.arange(kernel_size)
    low, high = (-padding, x.shape[-1] + padding) if count_include_pad else (0, x.shape[-1])
    count = ((starts >= low) & (starts < high)).sum(-1)                 # (L_out,)
    return total / count.astype(x.dtype)


def _max_pool_valid(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """In every window the largest element leads the next by more than the margin, so that
    the maximum stays put under the finite-difference steps."""
    if kernel_size < 2:
        return True
    x = x[None] if x.ndim == 2 else x
    windows = np.sort(_pool_windows(x, kernel_size, stride, padding, dilation, ceil_mode,
                                    -np.inf), axis=-1)
    top, second = windows[..., -1], windows[..., -2]
    return bool(np.all((second == -np.inf) | (top - second > KINK_MARGIN)))


def _keywords_spell(function):
    def spell(names, options):
        given = ", ".join(f"{k}={literal(v)}" for k, v in options.items())
        return f"nn.functional.{function}({', '.join(names)}{', ' if given else ''}{given})"
    return spell


def _convolution_entries() -> list[OpInfo]:
    ops: list[OpInfo] = []
    # conv1d: x (N, C_in, L) or (C_in, L), weight (C_out, C_in/groups, K), bias (C_out,)
    conv_cases = [(((2, 3), (2, 2, 2), (2,)), {}),
                  (((1, 1), (1, 1, 1), (1,)), {}),
                  (((1, 2, 4), (3, 2, 2), (3,)), {"stride": 2}),
                  (((2, 2, 3), (2, 1, 2)), {"padding": 1, "groups": 2}),
                  (((1, 1, 5), (1, 1, 2), (1,)), {"padding": "same", "dilation": 2}),
                  (((1, 3), (2, 1, 2)), {"padding": "valid"}),
                  (((1, 4, 3), (4, 1, 3), (4,)), {"groups": 4, "padding": 1, "stride": 2}),
                  (((2, 1, 4), (1, 1, 2), (1,)), {"padding": "same"}),
                  (((2, 1), (3, 2, 1), (3,)), {}),
                  (((1, 1, 2), (1, 1, 2), (1,)), {"padding": 1}),
                  (((1, 2, 5), (2, 2, 2), (2,)), {"stride": 2, "padding": 1, "dilation": 2})]
    ops.append(OpInfo("conv1d", convolution.Correlate1d,
                      lambda x, w, b=None, **o: F.conv1d(x, w, b, **o), _conv1d,
                      tuple(Sample(shapes, options) for shapes, options in conv_cases),
                      spell=_keywords_spell("conv1d")))
    # pooling: x (N, C, L) or (C, L)
    max_cases = [((2, 3), {"kernel_size": 2}),
                 ((1, 1), {"kernel_size": 1}),
                 ((2, 1, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
                 ((1, 2, 5), {"kernel_size": 2, "ceil_mode": True}),
                 ((1, 1, 6), {"kernel_size": 2, "stride": 1, "padding": 1, "dilation": 2}),
                 ((2, 3), {"kernel_size": 3, "stride": 1, "padding": 1}),
                 ((1, 2, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2,
                              "ceil_mode": True}),
                 ((3, 2), {"kernel_size": 2, "stride": 1})]
    ops.append(OpInfo("max_pool1d", convolution.WindowMax1d,
                      lambda x, **o: F.max_pool1d(x, **o), _max_pool1d,
                      tuple(Sample((shape,), options) for shape, options in max_cases),
                      valid=_max_pool_valid, nonsmooth=True, spell=_keywords_spell("max_pool1d")))
    avg_cases = [((2, 3), {"kernel_size": 2}),
                 ((1, 1), {"kernel_size": 1}),
                 ((2, 1, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
                 ((1, 2, 5), {"kernel_size": 2, "ceil_mode": True}),
                 ((1, 2, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                              "count_include_pad": False}),
                 ((2, 3), {"kernel_size": 3, "stride": 1, "padding": 1,
                           "count_include_pad": False}),
                 ((1, 1, 6), {"kernel_size": 4, "stride": 3, "padding": 2, "ceil_mode": True}),
                 ((3, 2), {"kernel_size": 2, "stride": 1})]
    ops.append(OpInfo("avg_pool1d", convolution.WindowMean1d,
                      lambda x, **o: F.avg_pool1d(x, **o), _avg_pool1d,
                      tuple(Sample((shape,), options) for shape, options in avg_cases),
                      spell=_keywords_spell("avg_pool1d")))
    return ops
