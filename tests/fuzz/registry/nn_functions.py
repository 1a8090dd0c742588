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


# -- convolution and pooling over one or two axes (nn/convolution.py) --------------------------

def _per_axis(value, dims: int) -> tuple:
    """An option given as an int or as one int per spatial axis, as one int per axis."""
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * dims


def _unbatched_too(dims: int):
    """A reference of an (N, C, *S) input (S of `dims` axes) applied to an unbatched (C, *S)
    one as to (1, C, *S)."""
    def wrap(reference):
        def run(x, *rest, **options):
            if x.ndim == dims + 1:
                return reference(x[None], *rest, **options)[0]
            return reference(x, *rest, **options)
        return run
    return wrap


def _correlation(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """y[n, o, i] = b[o] + Σ_c Σ_k w[o, c, k] x[n, g·C_g + c, i·s + k·d − p_before] (g the
    group of o, C_g = w.shape[1]; i and k one index per spatial axis), one output position at
    a time."""
    dims = w.ndim - 2
    c_out, c_group, *kernel = w.shape
    strides, dilations = _per_axis(stride, dims), _per_axis(dilation, dims)
    spans = [d * (k - 1) + 1 for d, k in zip(dilations, kernel)]
    if padding == "same":                       # output size S; the odd one after
        widths = [((span - 1) // 2, (span - 1) - (span - 1) // 2) for span in spans]
    elif padding == "valid":
        widths = [(0, 0)] * dims
    else:
        widths = [(p, p) for p in _per_axis(padding, dims)]
    x = np.pad(x, [(0, 0), (0, 0)] + widths)
    out_shape = [(n - span) // s + 1 for n, span, s in zip(x.shape[2:], spans, strides)]
    dtype = np.result_type(x, w) if b is None else np.result_type(x, w, b)
    y = np.zeros((x.shape[0], c_out, *out_shape), dtype=dtype)
    per_group = c_out // groups
    for o in range(c_out):
        group = o // per_group
        channels = slice(group * c_group, (group + 1) * c_group)
        for i in np.ndindex(*out_shape):
            window = x[(slice(None), channels) + tuple(
                slice(at * s, at * s + span, d)
                for at, s, span, d in zip(i, strides, spans, dilations))]   # (N, C_g, *K)
            y[(slice(None), o) + i] = (window * w[o]).sum(axis=tuple(range(1, dims + 2))) + \
                (0 if b is None else b[o])
    return y


_conv1d, _conv2d, _conv3d = (_unbatched_too(dims)(_correlation) for dims in (1, 2, 3))


def _window_taps(spatial, kernel_size, stride, padding, dilation, ceil_mode):
    """The input position of every tap of every window of a pooling of a (*S) plane, as
    PyTorch lays the windows out: (*S_out, ΠK, D), taps in row-major order, positions outside
    the input included. Per axis S_out = ⌊(S + 2p − d(K − 1) − 1)/s⌋ + 1, rounded up with
    ceil_mode unless the last window would start past S + p."""
    dims = len(spatial)
    kernel, pads, dilations = (_per_axis(v, dims) for v in (kernel_size, padding, dilation))
    strides = kernel if stride is None else _per_axis(stride, dims)
    out_shape = []
    for n, k, s, p, d in zip(spatial, kernel, strides, pads, dilations):
        extra = s - 1 if ceil_mode else 0
        m = (n + 2 * p - d * (k - 1) - 1 + extra) // s + 1
        out_shape.append(m - 1 if ceil_mode and (m - 1) * s >= n + p else m)
    taps = list(np.ndindex(*kernel))
    positions = np.zeros((*out_shape, len(taps), dims), dtype=np.int64)
    for i in np.ndindex(*out_shape):
        for t, tap in enumerate(taps):
            positions[i + (t,)] = [at * s - p + k * d for at, s, p, k, d
                                   in zip(i, strides, pads, tap, dilations)]
    return positions


def _read_taps(x, positions, fill):
    """x (N, C, *S) read at `positions` (..., D), `fill` where a position is outside the
    input: (N, C, ...)."""
    spatial = np.array(x.shape[2:])
    inside = np.all((positions >= 0) & (positions < spatial), axis=-1)
    clipped = np.clip(positions, 0, spatial - 1)
    values = x[(Ellipsis, *np.moveaxis(clipped, -1, 0))]
    return np.where(inside, values, np.asarray(fill, dtype=x.dtype))


def _max_pool(dims: int):
    @_unbatched_too(dims)
    def reference(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
        """Each window's largest input element (−inf padding)."""
        positions = _window_taps(x.shape[2:], kernel_size, stride, padding, dilation,
                                 ceil_mode)
        return _read_taps(x, positions, -np.inf).max(-1)
    return reference


def _avg_pool(dims: int):
    @_unbatched_too(dims)
    def reference(x, kernel_size, stride=None, padding=0, ceil_mode=False,
                  count_include_pad=True, divisor_override=None):
        """Each window's sum over divisor_override, or over the count of its positions inside
        the padded input (or, without count_include_pad, inside the input)."""
        positions = _window_taps(x.shape[2:], kernel_size, stride, padding, 1, ceil_mode)
        total = _read_taps(x, positions, 0).sum(-1)
        if divisor_override is not None:
            return total / np.asarray(divisor_override, dtype=x.dtype)
        pads, spatial = np.array(_per_axis(padding, dims)), np.array(x.shape[2:])
        low, high = (-pads, spatial + pads) if count_include_pad else (0, spatial)
        count = np.all((positions >= low) & (positions < high), axis=-1).sum(-1)   # (*S_out)
        return total / count.astype(x.dtype)
    return reference


def _max_pool_valid(dims: int):
    def valid(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
        """In every window the largest element leads the next by more than the margin, so that
        the maximum stays put under the finite-difference steps."""
        if np.prod(kernel_size) < 2:
            return True
        spatial = x.shape[-dims:]
        positions = _window_taps(spatial, kernel_size, stride, padding, dilation, ceil_mode)
        planes = x.reshape((-1, 1) + spatial)                # batched or not alike
        windows = np.sort(_read_taps(planes, positions, -np.inf), axis=-1)
        top, second = windows[..., -1], windows[..., -2]
        return bool(np.all((second == -np.inf) | (top - second > KINK_MARGIN)))
    return valid


def _max_pool_rule(dims: int):
    """The gradient of a max pooling by PyTorch's rule, read from the windows one tap at a
    time (taps inside the input, in row-major order): a window's gradient goes to the tap that
    was last to satisfy `value > best or value is NaN`, starting from best = −inf at the first
    tap inside the input. So ties go to the first maximum, NaN wins (the last NaN), and an
    all −inf window sends its gradient to its first tap inside the input."""
    def rule(x, weights, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
        batched = x.ndim == dims + 2
        planes, w = (x, weights) if batched else (x[None], weights[None])
        spatial = planes.shape[2:]
        positions = _window_taps(spatial, kernel_size, stride, padding, dilation, ceil_mode)
        grad = np.zeros(planes.shape)
        for n, c in np.ndindex(*planes.shape[:2]):
            for window in np.ndindex(*positions.shape[:-2]):
                chosen, best = None, -np.inf
                for tap in positions[window]:
                    if not all(0 <= t < size for t, size in zip(tap, spatial)):
                        continue
                    value = planes[(n, c, *tap)]
                    if chosen is None:                       # the first tap inside
                        chosen = tuple(tap)
                    if value > best or np.isnan(value):
                        chosen, best = tuple(tap), value
                grad[(n, c, *chosen)] += w[(n, c, *window)]
        return (grad if batched else grad[0],)
    return rule


def _ties(rng, arrays, options):
    """The input rounded to whole numbers: equal values in most windows (max pooling's
    kinks)."""
    return [np.round(arrays[0])]


def _affine_gradient(reference):
    """∂⟨w, f(x, ...)⟩/∂x of a reference affine in x (an average pooling, a convolution),
    exactly: f at each unit impulse less f at zero, which does not depend on x's own values
    (so it holds where x has ±inf and NaN too). The other operands get no expected gradient."""
    def gradient(x, *rest, weights, **options):
        at_zero = reference(np.zeros(x.shape), *rest, **options)
        grad = np.zeros(x.shape)
        for index in np.ndindex(*x.shape):
            impulse = np.zeros(x.shape)
            impulse[index] = 1.0
            grad[index] = float(((reference(impulse, *rest, **options) - at_zero)
                                 * weights).sum())
        return (grad,) + (None,) * len(rest)
    return gradient


def _keywords_spell(function):
    def spell(names, options):
        given = ", ".join(f"{k}={literal(v)}" for k, v in options.items())
        return f"nn.functional.{function}({', '.join(names)}{', ' if given else ''}{given})"
    return spell


def _convolution_entries() -> list[OpInfo]:
    ops: list[OpInfo] = []
    # conv1d: x (N, C_in, L) or (C_in, L), weight (C_out, C_in/groups, K), bias (C_out,)
    conv1d_cases = [(((2, 3), (2, 2, 2), (2,)), {}),
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
    # conv2d: x (N, C_in, H, W) or (C_in, H, W), weight (C_out, C_in/groups, kH, kW)
    conv2d_cases = [(((2, 3, 3), (2, 2, 2, 2), (2,)), {}),
                    (((1, 1, 1), (1, 1, 1, 1), (1,)), {}),
                    (((1, 2, 4, 3), (3, 2, 2, 2), (3,)), {"stride": 2}),
                    (((2, 2, 3, 3), (2, 1, 2, 2)), {"padding": 1, "groups": 2}),
                    (((1, 1, 4, 3), (1, 1, 2, 2), (1,)), {"padding": "same", "dilation": (2, 1)}),
                    (((1, 3, 2), (2, 1, 2, 2)), {"padding": "valid"}),
                    (((1, 4, 3, 3), (4, 1, 3, 1), (4,)), {"groups": 4, "padding": (1, 0),
                                                          "stride": (2, 1)}),
                    (((2, 1, 3, 4), (1, 1, 2, 3), (1,)), {"padding": "same"}),
                    (((1, 2, 5, 3), (2, 2, 2, 2), (2,)), {"stride": (2, 1), "padding": (1, 0),
                                                          "dilation": (2, 1)})]
    # conv3d: x (N, C_in, D, H, W) or (C_in, D, H, W), weight (C_out, C_in/groups, kD, kH, kW)
    conv3d_cases = [(((2, 2, 3, 2), (2, 2, 2, 1, 2), (2,)), {}),
                    (((1, 1, 1, 1), (1, 1, 1, 1, 1), (1,)), {}),
                    (((1, 2, 3, 2, 3), (2, 1, 2, 2, 2)), {"padding": 1, "groups": 2,
                                                          "stride": (2, 1, 2)})]
    # an empty batch (zero input channels are refused: test_convolution.py)
    conv_empty = {"conv1d": (Sample(((0, 2, 3), (2, 2, 2), (2,)), {}),
                             Sample(((0, 1, 4), (2, 1, 3)), {"padding": 1})),
                  "conv2d": (Sample(((0, 2, 3, 3), (2, 2, 2, 2), (2,)), {}),
                             Sample(((0, 1, 3, 2), (3, 1, 2, 1)), {"stride": 2})),
                  "conv3d": (Sample(((0, 1, 2, 2, 2), (1, 1, 1, 2, 1), (1,)), {}),)}
    for name, reference, cases in (("conv1d", _conv1d, conv1d_cases),
                                   ("conv2d", _conv2d, conv2d_cases),
                                   ("conv3d", _conv3d, conv3d_cases)):
        function = getattr(F, name)
        ops.append(OpInfo(name, convolution.Correlate,
                          lambda x, w, b=None, _f=function, **o: _f(x, w, b, **o), reference,
                          tuple(Sample(shapes, options) for shapes, options in cases),
                          spell=_keywords_spell(name),
                          edges=Edges(zeros=(0, 1, 2), infinite_at=(0,),
                                      infinite=_affine_gradient(reference),
                                      empty=conv_empty[name])))
    # pooling: x (N, C, L) or (C, L); x (N, C, H, W) or (C, H, W)
    max_cases = {
        1: [((2, 3), {"kernel_size": 2}),
            ((1, 1), {"kernel_size": 1}),
            ((2, 1, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
            ((1, 2, 5), {"kernel_size": 2, "ceil_mode": True}),
            ((1, 1, 6), {"kernel_size": 2, "stride": 1, "padding": 1, "dilation": 2}),
            ((2, 3), {"kernel_size": 3, "stride": 1, "padding": 1}),
            ((1, 2, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2,
                         "ceil_mode": True}),
            ((3, 2), {"kernel_size": 2, "stride": 1})],
        2: [((2, 3, 3), {"kernel_size": 2}),
            ((1, 1, 1), {"kernel_size": 1}),
            ((2, 1, 4, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
            ((1, 2, 3, 5), {"kernel_size": (2, 3), "stride": 2, "ceil_mode": True}),
            ((1, 1, 5, 4), {"kernel_size": 2, "stride": 1, "padding": 1, "dilation": (2, 1)}),
            ((2, 3, 3), {"kernel_size": 3, "stride": 1, "padding": 1}),
            ((1, 2, 5, 5), {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2,
                            "ceil_mode": True}),
            ((3, 2, 2), {"kernel_size": (2, 1), "stride": 1})],
        3: [((1, 2, 3, 3), {"kernel_size": 2}),
            ((1, 1, 1, 1), {"kernel_size": 1}),
            ((1, 1, 3, 4, 3), {"kernel_size": (2, 3, 2), "stride": 2, "padding": 1,
                               "ceil_mode": True})]}
    avg_cases = {
        1: [((2, 3), {"kernel_size": 2}),
            ((1, 1), {"kernel_size": 1}),
            ((2, 1, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
            ((1, 2, 5), {"kernel_size": 2, "ceil_mode": True}),
            ((1, 2, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                         "count_include_pad": False}),
            ((2, 3), {"kernel_size": 3, "stride": 1, "padding": 1, "count_include_pad": False}),
            ((1, 1, 6), {"kernel_size": 4, "stride": 3, "padding": 2, "ceil_mode": True}),
            ((3, 2), {"kernel_size": 2, "stride": 1})],
        2: [((2, 3, 3), {"kernel_size": 2}),
            ((1, 1, 1), {"kernel_size": 1}),
            ((2, 1, 4, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
            ((1, 2, 3, 5), {"kernel_size": (2, 3), "ceil_mode": True}),
            ((1, 2, 5, 4), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                            "count_include_pad": False}),
            ((2, 3, 3), {"kernel_size": 3, "stride": 1, "padding": 1,
                         "count_include_pad": False}),
            ((1, 1, 4, 3), {"kernel_size": (2, 3), "stride": (2, 1), "padding": 1,
                            "divisor_override": 4}),
            ((3, 2, 2), {"kernel_size": 2, "stride": 1, "divisor_override": -3}),
            ((1, 1, 6, 3), {"kernel_size": (4, 2), "stride": (3, 1), "padding": (2, 1),
                            "ceil_mode": True})],
        3: [((1, 2, 3, 3), {"kernel_size": 2}),
            ((1, 1, 1, 1), {"kernel_size": 1}),
            ((1, 1, 3, 4, 3), {"kernel_size": (2, 3, 2), "stride": 2, "padding": 1,
                               "count_include_pad": False})]}
    for dims in (1, 2, 3):
        name = f"max_pool{dims}d"
        ops.append(OpInfo(name, convolution.WindowMax,
                          lambda x, _f=getattr(F, name), **o: _f(x, **o), _max_pool(dims),
                          tuple(Sample((shape,), options) for shape, options in max_cases[dims]),
                          valid=_max_pool_valid(dims), nonsmooth=True, spell=_keywords_spell(name),
                          edges=Edges(infinite_at=(0,), infinite=_max_pool_rule(dims),
                                      kinks=(_ties, _max_pool_rule(dims)),
                                      empty=(Sample(((0, 2) + (4,) * dims,),
                                                    {"kernel_size": 2}),))))
        name = f"avg_pool{dims}d"
        ops.append(OpInfo(name, convolution.WindowMean,
                          lambda x, _f=getattr(F, name), **o: _f(x, **o), _avg_pool(dims),
                          tuple(Sample((shape,), options) for shape, options in avg_cases[dims]),
                          spell=_keywords_spell(name),
                          edges=Edges(infinite_at=(0,), infinite=_affine_gradient(_avg_pool(dims)),
                                      empty=(Sample(((0, 2) + (4,) * dims,),
                                                    {"kernel_size": 2}),))))
    return ops
