"""Registry entries for minigrad/ops/nn_ops.py: softmax, log_softmax and dropout."""

from __future__ import annotations

import minigrad as mg
from minigrad.ops import nn_ops

from .core import (CHECK_SHAPES, SHAPES, Edges, OpInfo, Sample, _dropout_keep, _log_softmax,
                   _softmax, seeded)


def _dropout(a, p, seed):
    scaled = _dropout_keep(seed, a.shape, a.dtype, p).astype(a.dtype) * (1.0 / (1.0 - p))
    return a * scaled


def _dropout_shared(a, p, seed, noise_shape):
    """Dropout with one draw per position of noise_shape, broadcast along its axes of size 1."""
    keep = _dropout_keep(seed, noise_shape, a.dtype, p).astype(a.dtype) * (1.0 / (1.0 - p))
    return a * keep


def _noise_shapes(shapes):
    """One draw shared along the first axis, and along all but the last."""
    return tuple(Sample((s,), {"p": 0.5, "seed": 7, "noise_shape": n}) for s in shapes if s
                 for n in dict.fromkeys([(1,) + s[1:], (1,) * (len(s) - 1) + s[-1:]]))


def _axis_samples(shapes):
    """softmax-like: one axis, ndim ≥ 1."""
    return tuple(Sample((s,), {"axis": a}) for s in shapes if s for a in range(-1, len(s)))


EMPTY_AXES = (Sample(((2, 0),), {"axis": 1}), Sample(((2, 0),), {"axis": -1}),
              Sample(((0,),), {"axis": 0}), Sample(((0, 3),), {"axis": 0}),
              Sample(((0, 3),), {"axis": 1}))


def _softmax_edges(a, weights, axis):
    """y ⊙ (w − Σ_j w_j y_j), y = softmax(a): 0 where a is −inf or a slice is all −inf; NaN over a
    slice holding +inf or NaN (y is NaN at +inf there)."""
    y = _softmax(a, axis)
    return (y * (weights - (weights * y).sum(axis=axis, keepdims=True)),)


def entries() -> list[OpInfo]:
    ops: list[OpInfo] = []
    add = ops.append
    add(OpInfo("softmax", nn_ops.Softmax, mg.softmax, _softmax, _axis_samples(SHAPES),
               _axis_samples(CHECK_SHAPES), spell="mg.softmax({0}, axis={axis})",
               edges=Edges(shift=(0,), empty=EMPTY_AXES, infinite_at=(0,),
                           infinite=_softmax_edges)))
    add(OpInfo("log_softmax", nn_ops.LogSoftmax, mg.log_softmax, _log_softmax,
               _axis_samples(SHAPES), _axis_samples(CHECK_SHAPES),
               spell="mg.log_softmax({0}, axis={axis})",
               edges=Edges(shift=(0,), empty=EMPTY_AXES)))
    dropout_samples = tuple(Sample((s,), {"p": p, "seed": 7}) for s in SHAPES
                            for p in (0.25, 0.5))
    add(OpInfo("dropout", nn_ops.Dropout, lambda x, p, seed: seeded(seed, mg.dropout, x, p),
               _dropout, dropout_samples,
               tuple(Sample((s,), {"p": 0.5, "seed": 3}) for s in CHECK_SHAPES),
               random=True, spell="seeded({seed}, mg.dropout, {0}, {p})"))
    add(OpInfo("dropout_noise_shape", nn_ops.Dropout,
               lambda x, p, seed, noise_shape: seeded(seed, mg.dropout, x, p,
                                                      noise_shape=noise_shape),
               _dropout_shared, _noise_shapes(SHAPES), _noise_shapes(CHECK_SHAPES),
               random=True,
               spell="seeded({seed}, mg.dropout, {0}, {p}, noise_shape={noise_shape})"))
    return ops
