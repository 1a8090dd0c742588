"""Registry entries for minigrad/ops/rounding.py: rounding, remainders and copysign, whose
gradient is 0 for the steps; their inputs keep clear of the jumps."""

from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad.ops import rounding

from .core import (CHECK_PAIRS, CHECK_SHAPES, MODERATE, NONZERO, PAIRS, REAL, OpInfo, _binary,
                   _off_kink, _unary)


def _off_whole(a, offset=0.0) -> bool:
    """Every element clear of the jumps at whole numbers (+ offset), or exactly on one."""
    return _off_kink(a - offset - np.round(a - offset), 0)


def _quotient_off_whole(a, b) -> bool:
    """a / b clear of whole numbers: the jumps of floor, trunc, fmod and remainder."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _off_whole(np.asarray(a / b))


def entries() -> list[OpInfo]:
    ops: list[OpInfo] = []
    add = ops.append
    unary = dict(samples=_unary(), checks=_unary(CHECK_SHAPES))
    binary = dict(samples=_binary(PAIRS), checks=_binary(CHECK_PAIRS), broadcasts=True)
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
    return ops
