"""Registry entries for minigrad/ops/elementwise.py: arithmetic (broadcasting both ways and with
a Python number), the elementary functions, and the selections (clip, masked_fill, where)."""

from __future__ import annotations

import itertools

import numpy as np

import minigrad as mg
from minigrad.ops import elementwise as E

from .core import (CHECK_PAIRS, CHECK_SHAPES, MODERATE, NONZERO, PAIRS, POSITIVE, REAL, SHAPES,
                   UNIT, Domain, Edges, OpInfo, Sample, _at, _binary, _broadcast, _off_kink,
                   _shared_sigmoid, _signed, _sum_to, _unary)


SIGNED_UNIT = Domain("signed unit", lambda rng, s: _signed(rng, s, 0.05, 0.9),
                     lambda a: bool(np.abs(a).max(initial=0.0) < 0.95))


ABOVE_ONE = Domain("above one", lambda rng, s: rng.uniform(1.2, 3.0, size=s),
                   lambda a: bool(a.min(initial=2.0) > 1.1))


def _mask_options(mask_shape, **fixed):
    def make(rng):
        mask = rng.random(mask_shape) < 0.5
        return {"mask": np.asarray(mask), **fixed}
    return make


# the conventions at infinities and kinks (edges.py), written from the math


def _logaddexp_edges(a, b, weights):
    """σ(a − b) and σ(b − a); ½ each for equal infinities, 0 where both are −inf."""
    d = np.where(a == b, 0.0, a - b)
    dead = (a == -np.inf) & (b == -np.inf)
    return (_sum_to(weights * np.where(dead, 0.0, _shared_sigmoid(d)), a.shape),
            _sum_to(weights * np.where(dead, 0.0, _shared_sigmoid(-d)), b.shape))


def _clip_at_bounds(a, weights, lo, hi):
    """1 where lo ≤ x ≤ hi, the bounds included (PyTorch's clamp)."""
    inside = np.ones(a.shape, bool)
    if lo is not None:
        inside &= a >= lo
    if hi is not None:
        inside &= a <= hi
    return (weights * inside,)


def _extreme_edges(wins):
    """maximum's (wins = np.greater) or minimum's gradients at ±inf and NaN: the winner gets
    the gradient, a tie (±inf both) splits it, a NaN operand gets it (two NaNs split it)."""
    def gradients(a, b, weights):
        share = wins(a, b) + 0.5 * (a == b)
        share = np.where(np.isnan(a), np.where(np.isnan(b), 0.5, 1.0),
                         np.where(np.isnan(b), 0.0, share))
        return (_sum_to(weights * share, a.shape), _sum_to(weights * (1 - share), b.shape))
    return gradients


def entries() -> list[OpInfo]:
    ops: list[OpInfo] = []
    add = ops.append

    # -- arithmetic, broadcasting both ways ----------------------------------------------------
    binary = dict(samples=_binary(PAIRS), checks=_binary(CHECK_PAIRS), broadcasts=True)
    add(OpInfo("add", E.Add, lambda a, b: a + b, np.add, spell="{0} + {1}", passes_through=(0, 1),
               **binary))
    add(OpInfo("sub", E.Sub, lambda a, b: a - b, np.subtract, spell="{0} - {1}", passes_through=(0,),
               **binary))
    add(OpInfo("mul", E.Mul, lambda a, b: a * b, np.multiply, spell="{0} * {1}",
               edges=Edges(zeros=(0, 1)), **binary))
    add(OpInfo("div", E.Div, lambda a, b: a / b, np.divide, spell="{0} / {1}",
               domains=(REAL, NONZERO), **binary))
    add(OpInfo("pow", E.Pow, lambda a, b: a ** b, np.power, spell="{0} ** {1}",
               domains=(POSITIVE, MODERATE), **binary))
    add(OpInfo("maximum", E.Maximum, mg.maximum, np.maximum, spell="mg.maximum({0}, {1})",
               valid=lambda a, b: _off_kink(a - b, 0), nonsmooth=True, **binary,
               edges=Edges(infinite_at=(0, 1), infinite=_extreme_edges(np.greater))))
    add(OpInfo("minimum", E.Minimum, mg.minimum, np.minimum, spell="mg.minimum({0}, {1})",
               valid=lambda a, b: _off_kink(a - b, 0), nonsmooth=True, **binary,
               edges=Edges(infinite_at=(0, 1), infinite=_extreme_edges(np.less))))

    # -- a Python number on one side: the other operand is a constant of the graph -------------
    scalar = _unary(options={"c": 0.5}) + _unary([(), (2, 3)], {"c": -1.5})
    add(OpInfo("add_scalar", E.Add, lambda x, c: x + c, lambda a, c: a + c,
               _unary(options={"c": 0.5}) + _unary([()], {"c": 3.0}), spell="{0} + {c}",
               passes_through=(0,)))
    add(OpInfo("rsub_scalar", E.Sub, lambda x, c: c - x, lambda a, c: c - a, scalar,
               spell="{c} - {0}"))
    add(OpInfo("mul_scalar", E.Mul, lambda x, c: c * x, lambda a, c: c * a, scalar,
               spell="{c} * {0}"))
    add(OpInfo("rdiv_scalar", E.Div, lambda x, c: c / x, lambda a, c: c / a, scalar,
               domains=(NONZERO,), spell="{c} / {0}"))
    add(OpInfo("rpow_scalar", E.Pow, lambda x, c: c ** x, lambda a, c: c ** a,
               _unary(options={"c": 1.5}), domains=(MODERATE,), spell="{c} ** {0}"))
    add(OpInfo("neg", E.Neg, lambda x: -x, np.negative, _unary(), _unary(CHECK_SHAPES),
               spell="-{0}"))
    add(OpInfo("pow_scalar", E.PowScalar, lambda x, p: x ** p, lambda a, p: a ** p,
               _unary(options={"p": 2}) + _unary(options={"p": 3}), spell="{0} ** {p}",
               edges=Edges(zeros=(0,))))
    add(OpInfo("pow_scalar_real", E.PowScalar, lambda x, p: x ** p, lambda a, p: a ** p,
               _unary(options={"p": 0.5}) + _unary(CHECK_SHAPES, {"p": -1.5}),
               domains=(POSITIVE,), spell="{0} ** {p}"))

    # -- unary functions ------------------------------------------------------------------------
    unary = dict(samples=_unary(), checks=_unary(CHECK_SHAPES))
    add(OpInfo("exp", E.Exp, mg.exp, np.exp, domains=(MODERATE,), spell="mg.exp({0})",
               **unary))
    add(OpInfo("log", E.Log, mg.log, np.log, domains=(POSITIVE,), spell="mg.log({0})",
               **unary))
    add(OpInfo("sqrt", E.Sqrt, mg.sqrt, np.sqrt, domains=(POSITIVE,), spell="mg.sqrt({0})",
               **unary))
    add(OpInfo("abs", E.Abs, abs, np.abs, valid=lambda a: _off_kink(a, 0), nonsmooth=True,
               spell="abs({0})", **unary,
               edges=Edges(kinks=(_at(lambda o: [0.0]),
                                  lambda a, weights: (weights * np.sign(a),)))))
    add(OpInfo("tanh", E.Tanh, mg.tanh, np.tanh, spell="mg.tanh({0})", **unary,
               edges=Edges(infinite_at=(0,), infinite=lambda a, weights: (
                   weights * (1 - np.tanh(a) ** 2),))))

    # -- selections -----------------------------------------------------------------------------
    clip_bounds = [{"lo": -0.5, "hi": 0.5}, {"lo": None, "hi": 0.3}, {"lo": -0.2, "hi": None}]
    add(OpInfo("clip", E.Clip, mg.clip, lambda a, lo, hi: np.clip(a, lo, hi),
               tuple(Sample((s,), b) for s in SHAPES for b in clip_bounds),
               tuple(Sample((s,), b) for s in CHECK_SHAPES for b in clip_bounds[:2]),
               valid=lambda a, lo, hi: all(_off_kink(a, v) for v in (lo, hi) if v is not None),
               nonsmooth=True, spell="mg.clip({0}, {lo}, {hi})",
               edges=Edges(kinks=(_at(lambda o: [o["lo"], o["hi"]]), _clip_at_bounds))))
    bound_shapes = [(x, lo, hi) for x, lo, hi in itertools.product(SHAPES[:6], repeat=3)
                    if _broadcast(x, lo, hi) in SHAPES][::7]
    add(OpInfo("clip_tensor_bounds", E.Clip, lambda x, lo, hi: mg.clip(x, lo, hi),
               lambda a, lo, hi: np.clip(a, lo, hi),
               tuple(Sample(s) for s in bound_shapes),
               tuple(Sample(s) for s in [((), (), ()), ((1,), (1,), (1,)), ((2, 3), (3,), ()),
                                         ((), (2, 3), (2, 1))]),
               domains=(REAL, Domain("below", lambda rng, s: rng.uniform(-1.5, -0.6, size=s),
                                     lambda a: bool(a.max(initial=-1.0) < -0.5)),
                        Domain("above", lambda rng, s: rng.uniform(0.6, 1.5, size=s),
                               lambda a: bool(a.min(initial=1.0) > 0.5))),
               valid=lambda a, lo, hi: _off_kink(a - lo, 0) and _off_kink(a - hi, 0),
               broadcasts=True, nonsmooth=True, spell="mg.clip({0}, {1}, {2})"))
    fill_shapes = [(s, m) for s in SHAPES for m in SHAPES if _broadcast(s, m) == s]
    add(OpInfo("masked_fill", E.MaskedFill, lambda x, mask, value: mg.masked_fill(x, mask, value),
               lambda a, mask, value: np.where(mask, np.asarray(value, dtype=a.dtype), a),
               tuple(Sample((s,), _mask_options(m, value=v))
                     for (s, m), v in itertools.product(fill_shapes, (0.0, -1.5))),
               tuple(Sample((s,), _mask_options(m, value=0.5))
                     for s, m in [((), ()), ((1,), (1,)), ((2, 3), (2, 3)), ((2, 3), (3,))]),
               spell="mg.masked_fill({0}, {mask}, {value})"))
    add(OpInfo("masked_fill_tensor", E.MaskedFill,
               lambda x, value, mask: mg.masked_fill(x, mask, value),
               lambda a, value, mask: np.where(mask, value.astype(a.dtype), a),
               tuple(Sample((s, ()), _mask_options(m)) for s, m in fill_shapes),
               tuple(Sample((s, ()), _mask_options(m))
                     for s, m in [((), ()), ((1,), (1,)), ((2, 3), (2, 3)), ((2, 3), (3,))]),
               spell="mg.masked_fill({0}, {mask}, {1})"))
    add(OpInfo("where", E.Where, lambda a, b, mask: mg.where(mask, a, b),
               lambda a, b, mask: np.where(mask, a, b),
               tuple(Sample(p, _mask_options(_broadcast(*p))) for p in PAIRS),
               tuple(Sample(p, _mask_options(_broadcast(*p))) for p in CHECK_PAIRS),
               broadcasts=True, spell="mg.where({mask}, {0}, {1})"))

    # -- elementary functions ---------------------------------------------------------------
    for name, cls, function, reference, domain in [
            ("sin", E.Sin, mg.sin, np.sin, REAL), ("cos", E.Cos, mg.cos, np.cos, REAL),
            ("tan", E.Tan, mg.tan, np.tan, MODERATE),
            ("arcsin", E.Arcsin, mg.arcsin, np.arcsin, SIGNED_UNIT),
            ("arccos", E.Arccos, mg.arccos, np.arccos, SIGNED_UNIT),
            ("arctan", E.Arctan, mg.arctan, np.arctan, REAL),
            ("sinh", E.Sinh, mg.sinh, np.sinh, MODERATE),
            ("cosh", E.Cosh, mg.cosh, np.cosh, MODERATE),
            ("arcsinh", E.Arcsinh, mg.arcsinh, np.arcsinh, REAL),
            ("arccosh", E.Arccosh, mg.arccosh, np.arccosh, ABOVE_ONE),
            ("arctanh", E.Arctanh, mg.arctanh, np.arctanh, SIGNED_UNIT),
            ("log2", E.Log2, mg.log2, np.log2, POSITIVE),
            ("log10", E.Log10, mg.log10, np.log10, POSITIVE),
            ("log1p", E.Log1p, mg.log1p, np.log1p, POSITIVE),
            ("expm1", E.Expm1, mg.expm1, np.expm1, MODERATE),
            ("exp2", E.Exp2, mg.exp2, np.exp2, MODERATE),
            ("rsqrt", E.Rsqrt, mg.rsqrt, lambda a: 1 / np.sqrt(a), POSITIVE)]:
        add(OpInfo(name, cls, function, reference, domains=(domain,),
                   spell=f"mg.{function.__name__}({{0}})", **unary))
    for name, cls, function, reference, domains, edges in [
            ("arctan2", E.Arctan2, mg.arctan2, np.arctan2, (REAL, REAL), None),
            ("logaddexp", E.LogAddExp, mg.logaddexp, np.logaddexp, (REAL, REAL),
             Edges(shift=(0, 1), infinite_at=(0, 1), infinite=_logaddexp_edges)),
            ("hypot", E.Hypot, mg.hypot, np.hypot, (REAL, REAL), None),
            ("xlogy", E.Xlogy, mg.xlogy, lambda a, b: a * np.log(b), (REAL, POSITIVE),
             Edges(zeros=(0,)))]:
        add(OpInfo(name, cls, function, reference, domains=domains,
                   spell=f"mg.{function.__name__}({{0}}, {{1}})", edges=edges, **binary))
    # -- PyTorch's names --------------------------------------------------------------------
    add(OpInfo("reciprocal", E.Reciprocal, mg.reciprocal, np.reciprocal, domains=(NONZERO,),
               spell="mg.reciprocal({0})", **unary))
    add(OpInfo("nan_to_num", E.NanToNum, mg.nan_to_num, np.nan_to_num,
               spell="mg.nan_to_num({0})", **unary))
    add(OpInfo("clamp", E.Clip, lambda x, lo, hi: mg.clamp(x, min=lo, max=hi),
               lambda a, lo, hi: np.clip(a, lo, hi),
               tuple(Sample((s,), {"lo": -0.5, "hi": 0.7}) for s in SHAPES),
               tuple(Sample((s,), {"lo": -0.5, "hi": 0.7}) for s in CHECK_SHAPES),
               valid=lambda a, lo, hi: _off_kink(a, lo) and _off_kink(a, hi), nonsmooth=True,
               spell="mg.clamp({0}, min={lo}, max={hi})"))
    add(OpInfo("logit", E.Logit, mg.logit, lambda a: np.log(a) - np.log1p(-a),
               valid=lambda a: bool(np.all((a > 0.05) & (a < 0.95))),
               spell="mg.logit({0})", domains=(UNIT,), **unary,
               edges=Edges(infinite_at=(0,), infinite=lambda a, weights: (
                   weights * np.where((a >= 0) & (a <= 1), 1 / (a * (1 - a)), np.nan),))))
    add(OpInfo("logit_of_sigmoid", E.Logit, lambda x: mg.logit(mg.sigmoid(x)), lambda a: a,
               spell="mg.logit(mg.sigmoid({0}))", domains=(MODERATE,), **unary))
    return ops
