"""Registry entries for minigrad/ops/activations.py: the smooth activations and those with
options and kinks."""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg
from minigrad.ops import activations as A

from .core import (CHECK_SHAPES, REAL, Edges, OpInfo, Sample, _at, _off_kink, _shared_sigmoid,
                   _sigmoid, _unary)


_erf_scalar = np.vectorize(math.erf, otypes=[np.float64])


def _erf(a):
    return np.asarray(_erf_scalar(a)).astype(a.dtype)


def _normal_cdf(a):
    return 0.5 * (1 + _erf(a / math.sqrt(2)))


_erfc_scalar = np.vectorize(math.erfc, otypes=[np.float64])


def _erfc(a):
    return np.asarray(_erfc_scalar(a)).astype(a.dtype)


def _gelu_tanh_derivative(a):
    """d/dx ½x(1 + tanh u), u = √(2/π)(x + 0.044715x³), in float64: 1 and 0 in the far tails
    (tanh u = ±1 there), NaN at NaN."""
    x = np.asarray(a, dtype=np.float64)
    near = np.where(np.abs(x) < 20, x, 0.0)
    t = np.tanh(math.sqrt(2 / math.pi) * (near + 0.044715 * near ** 3))
    slope = 0.5 * (1 + t) + 0.5 * near * (1 - t * t) * math.sqrt(2 / math.pi) * (
        1 + 3 * 0.044715 * near ** 2)
    return np.where(np.abs(x) < 20, slope, np.where(x > 0, 1.0, np.where(x < 0, 0.0, np.nan)))


def _softplus(a, beta, threshold):
    return np.where(a * beta > threshold, a, np.logaddexp(0, a * beta) / beta).astype(a.dtype)


def _elu(a, alpha, scale=1.0, input_scale=1.0):
    negative = alpha * np.expm1(np.minimum(a, 0) * input_scale)
    return (scale * np.where(a > 0, a, negative)).astype(a.dtype)


GLU_SAMPLES = tuple(Sample((half, half), {"dim": dim}) for half, dim in [
    ((1,), -1), ((1, 1), 0), ((2, 3), 0), ((3, 2), -1), ((2, 1), 1), ((1, 2, 2), 1)])


def entries() -> list[OpInfo]:
    ops: list[OpInfo] = []
    add = ops.append

    # -- smooth -----------------------------------------------------------------------------------
    unary = dict(samples=_unary(), checks=_unary(CHECK_SHAPES))
    add(OpInfo("sigmoid", A.Sigmoid, mg.sigmoid, _sigmoid, spell="mg.sigmoid({0})", **unary,
               edges=Edges(infinite_at=(0,), infinite=lambda a, weights: (
                   weights * _shared_sigmoid(a) * _shared_sigmoid(-a),))))
    add(OpInfo("relu", A.Relu, mg.relu, lambda a: np.maximum(a, 0),
               valid=lambda a: _off_kink(a, 0), nonsmooth=True, spell="mg.relu({0})", **unary,
               edges=Edges(kinks=(_at(lambda o: [0.0]), lambda a, weights: (weights * (a > 0),)))))
    add(OpInfo("gelu", A.Gelu, mg.gelu, lambda a: a * _normal_cdf(a), spell="mg.gelu({0})",
               **unary))
    add(OpInfo("gelu_tanh", A.GeluTanh, lambda x: mg.gelu(x, approximate="tanh"),
               lambda a: 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3))),
               spell="mg.gelu({0}, approximate='tanh')", **unary,
               edges=Edges(infinite_at=(0,), infinite=lambda a, weights: (
                   weights * _gelu_tanh_derivative(a),))))
    for name, cls, function, reference, domain in [
            ("erf", A.Erf, mg.erf, _erf, REAL), ("erfc", A.Erfc, mg.erfc, _erfc, REAL),
            ("silu", A.Silu, mg.silu, lambda a: a * _sigmoid(a), REAL),
            ("mish", A.Mish, mg.mish, lambda a: a * np.tanh(np.logaddexp(0, a)).astype(a.dtype),
             REAL),
            ("logsigmoid", A.LogSigmoid, mg.logsigmoid, lambda a: -np.logaddexp(0, -a), REAL)]:
        add(OpInfo(name, cls, function, reference, domains=(domain,),
                   spell=f"mg.{function.__name__}({{0}})", **unary))

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
    # glu of the two halves joined: a ⊙ σ(b), and the halves may be of size 1
    add(OpInfo("glu", A.Sigmoid, lambda a, b, dim: mg.glu(mg.cat([a, b], dim), dim),
               lambda a, b, dim: a * _sigmoid(b), GLU_SAMPLES, GLU_SAMPLES[:3],
               spell="mg.glu(mg.cat([{0}, {1}], {dim}), {dim})"))
    return ops
