"""Registry entries for the operations ported from PyTorch and NumPy: rearranging (pad, roll,
einsum), rounding and remainders, scans and prod, scatter_reduce's extremes, activations,
elementary functions, and binary cross-entropy on probabilities. `registry.py` appends them to
its own; the conventions (domains, `valid`, samples with () and (1,)) are the same."""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg
from minigrad.ops import activations as A
from minigrad.ops import elementwise as E
from minigrad.ops import nn_ops
from minigrad.ops import rounding
from minigrad.ops import reduce as R
from minigrad.ops import reduce as scan
from minigrad.ops import elementwise as B
from minigrad.ops import elementwise as T
from minigrad.ops import shape as layout
from minigrad.ops.linalg import Einsum
from minigrad.ops.indexing import ScatterExtreme
from nn import functional, losses

from .registry import (CHECK_PAIRS, CHECK_SHAPES, KINK_MARGIN, MODERATE, NONZERO, PAIRS,
                       POSITIVE, REAL, SHAPES, UNIT, Domain, OpInfo, Sample, _binary, _erf,
                       _off_kink, _reduction_samples, _signed, _unary, literal)

SIGNED_UNIT = Domain("signed unit", lambda rng, s: _signed(rng, s, 0.05, 0.9),
                     lambda a: bool(np.abs(a).max(initial=0.0) < 0.95))
ABOVE_ONE = Domain("above one", lambda rng, s: rng.uniform(1.2, 3.0, size=s),
                   lambda a: bool(a.min(initial=2.0) > 1.1))
PROBABILITY = Domain("probability", lambda rng, s: rng.uniform(0.05, 0.95, size=s),
                     lambda a: bool(a.min(initial=0.5) > 0.01 and a.max(initial=0.5) < 0.99))


def _off_whole(a, offset=0.0) -> bool:
    """Every element clear of the jumps at whole numbers (+ offset), or exactly on one."""
    return _off_kink(a - offset - np.round(a - offset), 0)


def _quotient_off_whole(a, b) -> bool:
    """a / b clear of whole numbers: the jumps of floor, trunc, fmod and remainder."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _off_whole(np.asarray(a / b))


# -- references written from the definitions ----------------------------------------------------

_erfc_scalar = np.vectorize(math.erfc, otypes=[np.float64])


def _erfc(a):
    return np.asarray(_erfc_scalar(a)).astype(a.dtype)


def _softplus(a, beta, threshold):
    return np.where(a * beta > threshold, a, np.logaddexp(0, a * beta) / beta).astype(a.dtype)


def _elu(a, alpha, scale=1.0, input_scale=1.0):
    negative = alpha * np.expm1(np.minimum(a, 0) * input_scale)
    return (scale * np.where(a > 0, a, negative)).astype(a.dtype)


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


def _scan_reference(function):
    def reference(a, axis):
        if axis is None:
            return function(a.reshape(-1), 0)
        if a.ndim == 0:
            return function(a.reshape(1), 0).reshape(())
        return function(a, axis)
    return reference


def _logcumsumexp(a, axis):
    return np.logaddexp.accumulate(a, axis=axis)


def _scatter_extreme(x, src, index, largest, include_self):
    """out[index[i]] = max (or min) of the src elements sent there, and of x's own value when
    include_self; positions nothing writes keep x."""
    out = x.copy()
    groups = {}
    for i, target in enumerate(index):
        groups.setdefault(int(target), []).append(src[i])
    pick = np.max if largest else np.min
    for target, members in groups.items():
        out[target] = pick(([x[target]] if include_self else []) + members)
    return out


def _scatter_valid(x, src, index, largest, include_self, **_):
    """The winner of each written position beats the rest by a margin, or ties exactly."""
    for target in set(index.tolist()):
        members = [s for s, t in zip(src, index) if t == target]
        members += [x[target]] if include_self else []
        values = np.sort(np.asarray(members))[::-1 if largest else 1]
        gap = np.abs(values[0] - values[1:])
        if np.any((gap > 0) & (gap <= KINK_MARGIN)):
            return False
    return True


def _bce(p, y):
    return -(y * np.maximum(np.log(p), -100) + (1 - y) * np.maximum(np.log1p(-p), -100))


# -- samples -------------------------------------------------------------------------------------

def _scan_samples(shapes):
    out = []
    for s in shapes:
        axes = [None] + list(range(len(s))) if s else [None, 0]
        out += [Sample((s,), {"axis": axis}) for axis in axes]
    return tuple(out)


PAD_SAMPLES = (Sample(((),), {"pad_width": 1, "constant_values": 0.0}),
               Sample(((1,), ), {"pad_width": (1, 2), "constant_values": 0.5}),
               Sample(((2,),), {"pad_width": 1, "constant_values": 0.0}),
               Sample(((1, 1),), {"pad_width": ((0, 1), (1, 0)), "constant_values": -1.0}),
               Sample(((2, 3),), {"pad_width": ((1, 0), (0, 2)), "constant_values": 0.0}),
               Sample(((3, 2),), {"pad_width": 1, "constant_values": 2.0}))
ROLL_SAMPLES = (Sample(((1,),), {"shift": 1, "axis": 0}), Sample(((3,),), {"shift": -1, "axis": 0}),
                Sample(((2, 3),), {"shift": 2, "axis": 1}), Sample(((2, 3),), {"shift": (1, 1),
                                                                              "axis": (0, 1)}),
                Sample(((1, 1),), {"shift": 3, "axis": -1}), Sample(((2, 2),), {"shift": 1,
                                                                                "axis": 0}))
EINSUM_SAMPLES = tuple(Sample(shapes, {"subscripts": spec}) for spec, shapes in [
    ("ij,jk->ik", ((2, 3), (3, 2))), ("i,i->", ((3,), (3,))), ("i,j->ij", ((2,), (3,))),
    ("ii->i", ((2, 2),)), ("ij->", ((2, 3),)), ("ij,ij->ij", ((1, 3), (2, 3))),
    ("...i,...i->...", ((2, 3), (3,))), (",i->i", ((), (3,))), ("i->", ((1,),)),
    ("ij,jk,k->i", ((2, 2), (2, 3), (3,))), ("ij->ji", ((1, 1),)), ("bij,bjk->bik",
                                                                      ((1, 2, 3), (1, 3, 2))),
])


def _scatter_samples():
    cases = [((3,), (4,), [0, 2, 0, 0]), ((1,), (2,), [0, 0]), ((2,), (1,), [1]),
             ((3,), (3,), [2, 2, 1]), ((), (), 0)]
    return tuple(Sample((x, s), {"index": np.array(index, dtype=np.int64), "largest": largest,
                                 "include_self": include})
                 for x, s, index in cases for largest in (True, False)
                 for include in (True, False))


def _scatter_call(x, src, index, largest, include_self):
    return mg.scatter_reduce(x, 0, index, src, "amax" if largest else "amin",
                             include_self=include_self)


def _scatter_reference(x, src, index, largest, include_self):
    if x.ndim == 0:
        return _scatter_extreme(x.reshape(1), src.reshape(1), np.zeros(1, dtype=np.int64),
                                largest, include_self).reshape(())
    return _scatter_extreme(x, src, index, largest, include_self)


def _scatter_valid_call(x, src, index, largest, include_self):
    if x.ndim == 0:
        return _scatter_valid(x.reshape(1), src.reshape(1), np.zeros(1, dtype=np.int64),
                              largest, include_self)
    return _scatter_valid(x, src, index, largest, include_self)


# -- the entries ---------------------------------------------------------------------------------

def porting_entries() -> list[OpInfo]:
    ops: list[OpInfo] = []
    add = ops.append
    unary = dict(samples=_unary(), checks=_unary(CHECK_SHAPES))
    binary = dict(samples=_binary(PAIRS), checks=_binary(CHECK_PAIRS), broadcasts=True)

    # -- elementary functions ---------------------------------------------------------------
    for name, cls, function, reference, domain in [
            ("sin", T.Sin, mg.sin, np.sin, REAL), ("cos", T.Cos, mg.cos, np.cos, REAL),
            ("tan", T.Tan, mg.tan, np.tan, MODERATE),
            ("arcsin", T.Arcsin, mg.arcsin, np.arcsin, SIGNED_UNIT),
            ("arccos", T.Arccos, mg.arccos, np.arccos, SIGNED_UNIT),
            ("arctan", T.Arctan, mg.arctan, np.arctan, REAL),
            ("sinh", T.Sinh, mg.sinh, np.sinh, MODERATE),
            ("cosh", T.Cosh, mg.cosh, np.cosh, MODERATE),
            ("arcsinh", T.Arcsinh, mg.arcsinh, np.arcsinh, REAL),
            ("arccosh", T.Arccosh, mg.arccosh, np.arccosh, ABOVE_ONE),
            ("arctanh", T.Arctanh, mg.arctanh, np.arctanh, SIGNED_UNIT),
            ("log2", T.Log2, mg.log2, np.log2, POSITIVE),
            ("log10", T.Log10, mg.log10, np.log10, POSITIVE),
            ("log1p", T.Log1p, mg.log1p, np.log1p, POSITIVE),
            ("expm1", T.Expm1, mg.expm1, np.expm1, MODERATE),
            ("exp2", T.Exp2, mg.exp2, np.exp2, MODERATE),
            ("rsqrt", T.Rsqrt, mg.rsqrt, lambda a: 1 / np.sqrt(a), POSITIVE),
            ("erf", A.Erf, mg.erf, _erf, REAL), ("erfc", A.Erfc, mg.erfc, _erfc, REAL),
            ("silu", A.Silu, mg.silu, lambda a: a * _sigmoid(a), REAL),
            ("mish", A.Mish, mg.mish, lambda a: a * np.tanh(np.logaddexp(0, a)).astype(a.dtype),
             REAL),
            ("logsigmoid", A.LogSigmoid, mg.logsigmoid, lambda a: -np.logaddexp(0, -a), REAL)]:
        add(OpInfo(name, cls, function, reference, domains=(domain,),
                   spell=f"mg.{function.__name__}({{0}})", **unary))
    for name, cls, function, reference, domains in [
            ("arctan2", B.Arctan2, mg.arctan2, np.arctan2, (REAL, REAL)),
            ("logaddexp", B.LogAddExp, mg.logaddexp, np.logaddexp, (REAL, REAL)),
            ("hypot", B.Hypot, mg.hypot, np.hypot, (REAL, REAL)),
            ("xlogy", B.Xlogy, mg.xlogy, lambda a, b: a * np.log(b), (REAL, POSITIVE))]:
        add(OpInfo(name, cls, function, reference, domains=domains,
                   spell=f"mg.{function.__name__}({{0}}, {{1}})", **binary))

    # -- activations with options and kinks ---------------------------------------------------
    add(OpInfo("softplus", A.Softplus, mg.softplus, _softplus,
               _unary(options={"beta": 1.0, "threshold": 20.0}) +
               _unary(CHECK_SHAPES, {"beta": 2.0, "threshold": 1.0}),
               valid=lambda a, beta, threshold: _off_kink(a * beta, threshold), nonsmooth=True,
               spell="mg.softplus({0}, beta={beta}, threshold={threshold})"))
    add(OpInfo("elu", A.Elu, mg.elu, _elu, _unary(options={"alpha": 1.0}) +
               _unary(CHECK_SHAPES, {"alpha": 0.5}),
               valid=lambda a, alpha: _off_kink(a, 0), nonsmooth=True,
               spell="mg.elu({0}, {alpha})"))
    add(OpInfo("celu", A.Elu, mg.celu, lambda a, alpha: _elu(a, alpha, input_scale=1 / alpha),
               _unary(CHECK_SHAPES, {"alpha": 2.0}), valid=lambda a, alpha: _off_kink(a, 0),
               nonsmooth=True, spell="mg.celu({0}, {alpha})"))
    add(OpInfo("selu", A.Elu, mg.selu,
               lambda a: _elu(a, 1.6732632423543772848170429916717,
                              1.0507009873554804934193349852946),
               _unary(CHECK_SHAPES), valid=lambda a: _off_kink(a, 0), nonsmooth=True,
               spell="mg.selu({0})"))
    add(OpInfo("leaky_relu", A.LeakyRelu, mg.leaky_relu,
               lambda a, negative_slope: np.where(a > 0, a, a * negative_slope).astype(a.dtype),
               _unary(options={"negative_slope": 0.1}), _unary(CHECK_SHAPES,
                                                               {"negative_slope": 0.2}),
               valid=lambda a, negative_slope: _off_kink(a, 0), nonsmooth=True,
               spell="mg.leaky_relu({0}, {negative_slope})"))
    add(OpInfo("hardtanh", A.Hardtanh, mg.hardtanh,
               lambda a, min_val, max_val: np.clip(a, min_val, max_val),
               _unary(options={"min_val": -0.5, "max_val": 1.0}),
               _unary(CHECK_SHAPES, {"min_val": -1.0, "max_val": 0.5}),
               valid=lambda a, min_val, max_val: _off_kink(a, min_val) and _off_kink(a, max_val),
               nonsmooth=True, spell="mg.hardtanh({0}, {min_val}, {max_val})"))
    add(OpInfo("relu6", A.Hardtanh, mg.relu6, lambda a: np.clip(a, 0, 6), _unary(CHECK_SHAPES),
               valid=lambda a: _off_kink(a, 0) and _off_kink(a, 6), nonsmooth=True,
               spell="mg.relu6({0})"))
    add(OpInfo("hardsigmoid", A.Hardsigmoid, mg.hardsigmoid,
               lambda a: (np.clip(a + 3, 0, 6) / 6).astype(a.dtype), **unary,
               valid=lambda a: _off_kink(a, -3) and _off_kink(a, 3), nonsmooth=True,
               spell="mg.hardsigmoid({0})"))
    add(OpInfo("hardswish", A.Hardswish, mg.hardswish,
               lambda a: (a * np.clip(a + 3, 0, 6) / 6).astype(a.dtype), **unary,
               valid=lambda a: _off_kink(a, -3) and _off_kink(a, 3), nonsmooth=True,
               spell="mg.hardswish({0})"))

    # -- rounding and remainders: gradient 0 for the steps, kept clear of their jumps ------------
    for name, cls, function, reference, valid in [
            ("floor", rounding.Floor, mg.floor, np.floor, _off_whole),
            ("ceil", rounding.Ceil, mg.ceil, np.ceil, _off_whole),
            ("trunc", rounding.Trunc, mg.trunc, np.trunc, _off_whole),
            ("round", rounding.Round, mg.round, np.round, lambda a: _off_whole(a, 0.5)),
            ("sign", rounding.Sign, mg.sign, np.sign, lambda a: _off_kink(a, 0))]:
        add(OpInfo(name, cls, function, reference, domains=(MODERATE,), valid=valid,
                   nonsmooth=True, spell=f"mg.{name}({{0}})", **unary))
    for name, cls, function, reference in [
            ("fmod", rounding.Fmod, mg.fmod, np.fmod),
            ("remainder", rounding.Remainder, lambda a, b: a % b, np.remainder),
            ("floor_divide", rounding.FloorDivide, lambda a, b: a // b, np.floor_divide),
            ("div_trunc", rounding.TruncDivide,
             lambda a, b: mg.div(a, b, rounding_mode="trunc"), lambda a, b: np.trunc(a / b))]:
        add(OpInfo(name, cls, function, reference, domains=(REAL, NONZERO),
                   valid=_quotient_off_whole, nonsmooth=True,
                   spell={"remainder": "{0} % {1}", "floor_divide": "{0} // {1}",
                          "div_trunc": "mg.div({0}, {1}, rounding_mode='trunc')"}.get(
                       name, f"mg.{name}({{0}}, {{1}})"), **binary))
    add(OpInfo("copysign", rounding.Copysign, mg.copysign, np.copysign,
               domains=(NONZERO, NONZERO), nonsmooth=True, spell="mg.copysign({0}, {1})",
               **binary))

    # -- reductions and scans --------------------------------------------------------------------
    add(OpInfo("prod", R.Prod, mg.prod,
               lambda a, axis, keepdims: np.prod(a, axis, keepdims=keepdims),
               _reduction_samples(SHAPES), _reduction_samples(CHECK_SHAPES, with_tuples=False),
               spell="mg.prod({0}, axis={axis}, keepdims={keepdims})"))
    for name, cls, function, reference in [
            ("cumsum", scan.CumSum, mg.cumsum, np.cumsum),
            ("cumprod", scan.CumProd, mg.cumprod, np.cumprod),
            ("logcumsumexp", scan.LogCumSumExp, mg.logcumsumexp, _logcumsumexp)]:
        add(OpInfo(name, cls, function, _scan_reference(reference), _scan_samples(SHAPES),
                   _scan_samples(CHECK_SHAPES), spell=f"mg.{name}({{0}}, {{axis}})"))

    # -- rearranging -------------------------------------------------------------------------------
    add(OpInfo("pad", layout.Pad, mg.pad,
               lambda a, pad_width, constant_values:
               np.pad(a, pad_width, constant_values=constant_values) if a.ndim else a.copy(),
               PAD_SAMPLES, spell="mg.pad({0}, {pad_width}, constant_values={constant_values})"))
    add(OpInfo("roll", layout.Roll, mg.roll, lambda a, shift, axis: np.roll(a, shift, axis),
               ROLL_SAMPLES, spell="mg.roll({0}, {shift}, {axis})"))
    add(OpInfo("einsum", Einsum, lambda *xs, subscripts: mg.einsum(subscripts, *xs),
               lambda *arrays, subscripts: np.asarray(np.einsum(subscripts, *arrays)),
               EINSUM_SAMPLES,
               spell=lambda names, o: f"mg.einsum({o['subscripts']!r}, {', '.join(names)})"))
    add(OpInfo("scatter_extreme", ScatterExtreme, _scatter_call, _scatter_reference,
               _scatter_samples(), valid=_scatter_valid_call, nonsmooth=True,
               spell=lambda names, o: (f"mg.scatter_reduce({names[0]}, 0, {o['index'].tolist()}, "
                                       f"{names[1]}, {'amax' if o['largest'] else 'amin'!r}, "
                                       f"include_self={o['include_self']})")))

    # -- losses (most reduce to a 0-d loss) ---------------------------------------------------------
    bce_samples = tuple(Sample((s, s), {"reduction": r}) for s in SHAPES
                        for r in ("none", "mean"))
    add(OpInfo("binary_cross_entropy", losses.BinaryCrossEntropy,
               functional.binary_cross_entropy,
               lambda p, y, reduction: _reduced(_bce(p, y), reduction), bce_samples,
               tuple(Sample((s, s), {"reduction": "mean"}) for s in CHECK_SHAPES),
               domains=(PROBABILITY, UNIT),
               spell="nn.functional.binary_cross_entropy({0}, {1}, reduction={reduction})"))
    add(OpInfo("kl_div", B.Xlogy, functional.kl_div,
               lambda log_q, p, reduction: _kl_div(log_q, p, reduction),
               tuple(Sample((s, s), {"reduction": r}) for s in SHAPES
                     for r in ("batchmean", "sum")),
               tuple(Sample((s, s), {"reduction": "batchmean"}) for s in CHECK_SHAPES),
               domains=(REAL, PROBABILITY),
               spell="nn.functional.kl_div({0}, {1}, {reduction})"))
    add(OpInfo("cosine_similarity", E.Sqrt,
               lambda a, b, dim: functional.cosine_similarity(a, b, dim),
               _cosine_similarity,
               tuple(Sample((a, b), {"dim": -1}) for a, b in PAIRS if a and b) +
               tuple(Sample((s, s), {"dim": 0}) for s in SHAPES if s),
               tuple(Sample(p, {"dim": -1}) for p in [((3,), (3,)), ((2, 3), (3,)),
                                                      ((1,), (1,))]),
               broadcasts=True, spell="nn.functional.cosine_similarity({0}, {1}, {dim})"))
    ce_shapes = [s for s in SHAPES if s]
    add(OpInfo("weighted_cross_entropy", nn_ops.LogSoftmax, _weighted_ce_call, _weighted_ce,
               tuple(Sample((s, s[-1:]), _weighted_ce_options(s)) for s in ce_shapes),
               tuple(Sample((s, s[-1:]), _weighted_ce_options(s)) for s in [(1,), (2, 3)]),
               domains=(REAL, POSITIVE), spell=_weighted_ce_spell))
    add(OpInfo("soft_cross_entropy", nn_ops.LogSoftmax,
               lambda z, q, label_smoothing: functional.cross_entropy(
                   z, q, label_smoothing=label_smoothing),
               _soft_ce, tuple(Sample((s, s), {"label_smoothing": e}) for s in ce_shapes
                               for e in (0.0, 0.1)),
               tuple(Sample((s, s), {"label_smoothing": 0.1}) for s in [(1,), (2, 3)]),
               domains=(REAL, UNIT),
               spell="nn.functional.cross_entropy({0}, {1}, label_smoothing={label_smoothing})"))
    return ops


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


def _log_softmax(a):
    shifted = a - a.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def _weighted_ce_options(logits_shape):
    def make(rng):
        classes = logits_shape[-1]
        targets = rng.integers(0, classes, size=logits_shape[:-1])
        return {"targets": np.asarray(targets, dtype=np.int64), "label_smoothing": 0.1}
    return make


def _weighted_ce_call(z, w, targets, label_smoothing):
    return functional.cross_entropy(z, targets, weight=w, label_smoothing=label_smoothing)


def _weighted_ce(z, w, targets, label_smoothing):
    """(1 − ε)(−w_t log p_t) + (ε/C) Σ_c (−w_c log p_c), summed and divided by Σ w_t."""
    log_p = _log_softmax(z).reshape(-1, z.shape[-1])
    t = targets.reshape(-1)
    picked = -log_p[np.arange(t.size), t] * w[t]
    spread = -(log_p * w).sum(-1)
    loss = (1 - label_smoothing) * picked + label_smoothing / z.shape[-1] * spread
    return loss.sum() / w[t].sum()


def _weighted_ce_spell(names, o):
    return (f"nn.functional.cross_entropy({names[0]}, {literal(o['targets'])}, "
            f"weight={names[1]}, label_smoothing={o['label_smoothing']})")


def _soft_ce(z, q, label_smoothing):
    classes = z.shape[-1]
    smoothed = (1 - label_smoothing) * q + label_smoothing / classes
    return (-(smoothed * _log_softmax(z)).sum(-1)).mean()


# shared bases, never applied themselves
ABSTRACT_PORTING = {A._Activation, rounding._Step, T._Unary}
