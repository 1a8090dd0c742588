"""Registry entries for minigrad/ops/reduce.py: the reductions (0-d results from axis=None and
from every axis of a 1-d tensor) and the scans."""

from __future__ import annotations

import itertools
import math

import numpy as np

import minigrad as mg
from minigrad.ops import reduce as R

from .core import CHECK_SHAPES, SHAPES, Edges, OpInfo, Sample, _no_near_ties


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(a % max(ndim, 1) for a in axes)


def _logsumexp(a, axis, keepdims):
    """log Σ eᵃ: −inf for an empty or all −inf slice, +inf where one element is +inf."""
    top = np.max(a, axis=axis, keepdims=True, initial=-np.inf)
    top = np.where(np.isfinite(top), top, 0)
    out = np.log(np.sum(np.exp(a - top), axis=axis, keepdims=True)) + top
    return out if keepdims else np.squeeze(out, axis=_axes(axis, a.ndim))


def _reduction_samples(shapes, with_tuples=True):
    out = []
    for s in shapes:
        axes = [None] + list(range(len(s))) + ([-1] if s else [])
        if with_tuples and len(s) == 2:
            axes.append((0, 1))
        for axis, keepdims in itertools.product(axes, (False, True)):
            out.append(Sample((s,), {"axis": axis, "keepdims": keepdims}))
    return tuple(out)


def _extreme_edges(extreme):
    """max's (or min's) gradient with ±inf and NaN in the operand: shared evenly by the
    elements equal to the slice's extreme, or by its NaN elements when it holds any."""
    def gradients(a, weights, axis, keepdims):
        axes = _axes(axis, a.ndim)
        y = extreme(a, axis=axes, keepdims=True)
        hit = (a == y) | (np.isnan(a) & np.isnan(y))
        share = hit / hit.sum(axis=axes, keepdims=True)
        w = weights if keepdims else np.expand_dims(weights, axes)
        return (share * w,)
    return gradients


def _std(a, axis, keepdims, ddof):
    return np.std(a, axis=axis, keepdims=keepdims, ddof=ddof)


def _std_samples(shapes):
    """The reductions' menu with ddof 0, and ddof 1 wherever at least two elements are reduced."""
    out = []
    for sample in _reduction_samples(shapes):
        (shape,), options = sample.shapes, sample.options
        out.append(Sample((shape,), {**options, "ddof": 0}))
        if math.prod(shape[a] for a in _axes(options["axis"], len(shape))) >= 2:
            out.append(Sample((shape,), {**options, "ddof": 1}))
    return tuple(out)


def _std_valid(a, axis, keepdims, ddof):
    """Off the kink at std = 0: every reduced slice spreads, or is constant exactly (one
    element, or copies of one value), where the gradient is 0 on both sides."""
    y = np.std(a, axis=axis, ddof=ddof)
    return bool(np.all((y == 0) | (y > 0.05)))


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


def _scan_samples(shapes):
    out = []
    for s in shapes:
        axes = [None] + list(range(len(s))) if s else [None, 0]
        out += [Sample((s,), {"axis": axis}) for axis in axes]
    return tuple(out)


def _logsumexp_edges(a, weights, axis, keepdims):
    """softmax(a) over the reduced axes; where the maximum is +inf the +inf elements share the
    gradient evenly (softmax's limit); an all −inf slice gets none; NaN spreads."""
    axes = _axes(axis, a.ndim)
    top = np.max(a, axis=axes, keepdims=True)
    at_top = (a == top) & ~np.isfinite(top)
    e = np.exp(np.where(at_top, 0.0, a - top))
    softmax = np.where(top == -np.inf, 0.0, e / e.sum(axis=axes, keepdims=True))
    w = weights if keepdims else np.expand_dims(weights, axes)
    return (w * softmax,)


def _empty_reductions(axis_for_all=True):
    samples = [Sample(((0, 3),), {"axis": 1, "keepdims": False}),
               Sample(((0, 3),), {"axis": -1, "keepdims": True}),
               Sample(((2, 0, 3),), {"axis": 2, "keepdims": False})]
    if axis_for_all:            # reductions with a value over nothing: Σ = 0, Π = 1, LSE = −inf
        samples += [Sample(((2, 0),), {"axis": 1, "keepdims": False}),
                    Sample(((0,),), {"axis": None, "keepdims": False}),
                    Sample(((2, 0),), {"axis": (0, 1), "keepdims": True})]
    return tuple(samples)


EMPTY_SCANS = (Sample(((0, 3),), {"axis": 0}), Sample(((2, 0),), {"axis": 1}),
               Sample(((0,),), {"axis": None}))


def entries() -> list[OpInfo]:
    ops: list[OpInfo] = []
    add = ops.append

    # -- reductions --------------------------------------------------------------------------------
    reductions = dict(samples=_reduction_samples(SHAPES),
                      checks=_reduction_samples(CHECK_SHAPES, with_tuples=False))
    add(OpInfo("sum", R.Sum, mg.sum, lambda a, axis, keepdims: np.sum(a, axis, keepdims=keepdims),
               spell="mg.sum({0}, axis={axis}, keepdims={keepdims})", **reductions,
               edges=Edges(zeros=(0,), empty=_empty_reductions())))
    add(OpInfo("mean", R.Mean, mg.mean,
               lambda a, axis, keepdims: np.mean(a, axis, keepdims=keepdims),
               spell="mg.mean({0}, axis={axis}, keepdims={keepdims})", **reductions))
    add(OpInfo("var", R.Var, mg.var, lambda a, axis, keepdims: np.var(a, axis, keepdims=keepdims),
               spell="mg.var({0}, axis={axis}, keepdims={keepdims})", **reductions))
    add(OpInfo("std", R.Std, mg.std, _std, _std_samples(SHAPES), _std_samples(CHECK_SHAPES),
               valid=_std_valid, nonsmooth=True,
               spell="mg.std({0}, axis={axis}, keepdims={keepdims}, ddof={ddof})"))
    add(OpInfo("max", R.Max, mg.max, lambda a, axis, keepdims: np.max(a, axis, keepdims=keepdims),
               valid=lambda a, axis, keepdims: _no_near_ties(a, axis), nonsmooth=True,
               spell="mg.max({0}, axis={axis}, keepdims={keepdims})", **reductions,
               edges=Edges(empty=_empty_reductions(False),     # (a shift makes ties: kinks)
                           infinite_at=(0,), infinite=_extreme_edges(np.max))))
    add(OpInfo("min", R.Min, mg.min, lambda a, axis, keepdims: np.min(a, axis, keepdims=keepdims),
               valid=lambda a, axis, keepdims: _no_near_ties(a, axis), nonsmooth=True,
               spell="mg.min({0}, axis={axis}, keepdims={keepdims})", **reductions,
               edges=Edges(empty=_empty_reductions(False),
                           infinite_at=(0,), infinite=_extreme_edges(np.min))))
    add(OpInfo("logsumexp", R.LogSumExp, mg.logsumexp, _logsumexp,
               spell="mg.logsumexp({0}, axis={axis}, keepdims={keepdims})",
               samples=tuple(s for s in _reduction_samples(SHAPES)
                             if s.shapes[0] or s.options["axis"] is None),
               checks=tuple(s for s in _reduction_samples(CHECK_SHAPES, with_tuples=False)
                            if s.shapes[0] or s.options["axis"] is None),
               edges=Edges(shift=(0,), empty=_empty_reductions(), infinite_at=(0,),
                           infinite=_logsumexp_edges)))
    add(OpInfo("prod", R.Prod, mg.prod,
               lambda a, axis, keepdims: np.prod(a, axis, keepdims=keepdims),
               _reduction_samples(SHAPES), _reduction_samples(CHECK_SHAPES, with_tuples=False),
               spell="mg.prod({0}, axis={axis}, keepdims={keepdims})",
               edges=Edges(zeros=(0,), empty=_empty_reductions())))

    # -- scans -------------------------------------------------------------------------------------
    for name, cls, function, reference, edges in [
            ("cumsum", R.CumSum, mg.cumsum, np.cumsum, Edges(empty=EMPTY_SCANS)),
            ("cumprod", R.CumProd, mg.cumprod, np.cumprod, Edges(zeros=(0,), empty=EMPTY_SCANS)),
            ("logcumsumexp", R.LogCumSumExp, mg.logcumsumexp, _logcumsumexp,
             Edges(shift=(0,), empty=EMPTY_SCANS))]:
        add(OpInfo(name, cls, function, _scan_reference(reference), _scan_samples(SHAPES),
                   _scan_samples(CHECK_SHAPES), spell=f"mg.{name}({{0}}, {{axis}})",
                   edges=edges))
    add(OpInfo("vector_norm", R.EuclideanNorm,
               lambda x, axis, keepdims: mg.linalg.vector_norm(x, 2, axis, keepdims),
               lambda a, axis, keepdims: np.sqrt(np.sum(a * a, axis, keepdims=keepdims)),
               spell="mg.linalg.vector_norm({0}, 2, {axis}, {keepdims})", **reductions,
               edges=Edges(empty=_empty_reductions())))
    add(OpInfo("vector_norm_p", R.PNorm,
               lambda x, axis, keepdims: mg.linalg.vector_norm(x, 3, axis, keepdims),
               lambda a, axis, keepdims: np.sum(np.abs(a) ** 3, axis,
                                                keepdims=keepdims) ** (1 / 3),
               spell="mg.linalg.vector_norm({0}, 3, {axis}, {keepdims})", **reductions))
    return ops
