"""Registry entries for minigrad/ops/shape.py: reshaping, transposing, broadcasting and its
reverse, joining, padding, rolling, moving between devices and casting."""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg
from minigrad.ops import indexing as I
from minigrad.ops import shape as S

from .core import CHECK_SHAPES, SHAPES, OpInfo, Sample, _broadcast, _sum_to, _unary, round_trip


def _reshape_samples(shapes):
    targets = SHAPES + [(6,), (1, 2, 2), (1, 2, 3), (4,)]
    out = []
    for s in shapes:
        size = math.prod(s)
        for t in targets:
            if t != s and math.prod(t) == size:
                out.append(Sample((s,), {"shape": t}))
        if s:
            out.append(Sample((s,), {"shape": (-1,)}))
    return tuple(out)


def _transpose_samples():
    out = [Sample((s,), {"axes": ()}) for s in SHAPES if s]        # x.T
    out += [Sample(((1, 2, 3),), {"axes": axes}) for axes in [(2, 0, 1), (1, 0, 2), (0, 2, 1)]]
    out += [Sample(((2, 3),), {"axes": (1, 0)}), Sample(((2, 1),), {"axes": (-1, 0)})]
    return tuple(out)


def _broadcast_to_samples():
    return tuple(Sample((a,), {"shape": b}) for a in SHAPES for b in SHAPES
                 if a != b and _broadcast(a, b) == b)


def _sum_to_samples():
    return tuple(Sample((b,), {"shape": a}) for a in SHAPES for b in SHAPES
                 if a != b and _broadcast(a, b) == b)


CONCAT_SAMPLES = (
    Sample(((1,), (2,)), {"axis": 0}), Sample(((2,), (1,)), {"axis": 0}),
    Sample(((1,), (1,), (1,)), {"axis": 0}), Sample(((1, 3), (1, 3)), {"axis": 0}),
    Sample(((2, 1), (2, 2)), {"axis": 1}), Sample(((2, 1), (2, 1)), {"axis": -1}),
    Sample(((1, 1), (1, 1)), {"axis": 0}), Sample(((1, 3), (1, 3)), {"axis": 0}),
    Sample(((2, 2), (1, 2)), {"axis": 0}), Sample(((3,), (3,)), {"axis": 0}),
)


STACK_SAMPLES = (
    Sample(((), ()), {"axis": 0}), Sample(((), (), ()), {"axis": 0}),
    Sample(((1,), (1,)), {"axis": 0}), Sample(((1,), (1,)), {"axis": 1}),
    Sample(((3,), (3,)), {"axis": 0}), Sample(((2,), (2,)), {"axis": -1}),
    Sample(((1, 1), (1, 1)), {"axis": 2}), Sample(((2,), (2,), (2,)), {"axis": 0}),
)


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

HSTACK_SAMPLES = tuple(Sample(p) for p in [((), ()), ((1,), (2,)), ((3,), ()), ((2, 1), (2, 3)),
                                           ((1, 1), (1, 2), (1, 1)), ((2, 2, 1), (2, 1, 1))])
VSTACK_SAMPLES = tuple(Sample(p) for p in [((), ()), ((1,), (1,)), ((3,), (1, 3)),
                                           ((2, 3), (1, 3)), ((1, 1), (), (2, 1)),
                                           ((1, 2, 2), (2, 2, 2))])
UNBIND_SAMPLES = tuple(Sample((shape,), {"dim": dim}) for shape, dim in [
    ((1,), 0), ((2, 3), 0), ((2, 3), -1), ((3,), -1), ((1, 1), 1), ((3, 2), 1), ((2, 1, 2), 1)])


def entries() -> list[OpInfo]:
    ops: list[OpInfo] = []
    add = ops.append
    add(OpInfo("reshape", S.Reshape, lambda x, shape: x.reshape(shape),
               lambda a, shape: a.reshape(shape), _reshape_samples(SHAPES),
               _reshape_samples(CHECK_SHAPES), spell="{0}.reshape({shape})"))
    add(OpInfo("squeeze", S.Reshape, lambda x, axis: mg.squeeze(x, axis),
               lambda a, axis: np.squeeze(a, axis),
               tuple(Sample((s,), {"axis": a}) for s in SHAPES for a in range(len(s))
                     if s[a] == 1), spell="mg.squeeze({0}, {axis})"))
    add(OpInfo("unsqueeze", S.Reshape, lambda x, axis: mg.unsqueeze(x, axis),
               lambda a, axis: np.expand_dims(a, axis),
               tuple(Sample((s,), {"axis": a}) for s in SHAPES for a in range(-1, len(s) + 1)),
               spell="mg.unsqueeze({0}, {axis})"))
    add(OpInfo("transpose", S.Transpose, lambda x, axes: x.transpose(*axes),
               lambda a, axes: np.transpose(a, axes or None), _transpose_samples(),
               spell="{0}.transpose(*{axes})"))
    add(OpInfo("broadcast_to", S.BroadcastTo, mg.broadcast_to, np.broadcast_to,
               _broadcast_to_samples(), spell="mg.broadcast_to({0}, {shape})"))
    add(OpInfo("sum_to", S.SumTo, mg.sum_to, _sum_to, _sum_to_samples(),
               spell="mg.sum_to({0}, {shape})"))
    add(OpInfo("concat", S.Concat, lambda *xs, axis: mg.concat(xs, axis),
               lambda *arrays, axis: np.concatenate(arrays, axis), CONCAT_SAMPLES,
               spell=lambda names, o: f"mg.concat([{', '.join(names)}], axis={o['axis']})"))
    add(OpInfo("stack", S.Stack, lambda *xs, axis: mg.stack(xs, axis),
               lambda *arrays, axis: np.stack(arrays, axis), STACK_SAMPLES,
               spell=lambda names, o: f"mg.stack([{', '.join(names)}], axis={o['axis']})"))
    add(OpInfo("to_device", S.ToDevice, round_trip, lambda a: a.copy(), _unary(),
               _unary(CHECK_SHAPES), spell="round_trip({0})"))
    add(OpInfo("astype", S.AsType, lambda x, dtype: x.astype(dtype),
               lambda a, dtype: a.astype(dtype),
               _unary(options={"dtype": np.float32}) + _unary(options={"dtype": np.float64}),
               spell="{0}.astype({dtype})",
               # differences of a float32 result need a step far above its rounding
               gradcheck_options={"eps": 1e-3, "atol": 1e-3},
               # a program's float64 reference keeps full precision through a cast
               exact_options=lambda o: {**o, "dtype": np.float64}))
    add(OpInfo("pad", S.Pad, mg.pad,
               lambda a, pad_width, constant_values:
               np.pad(a, pad_width, constant_values=constant_values) if a.ndim else a.copy(),
               PAD_SAMPLES, spell="mg.pad({0}, {pad_width}, constant_values={constant_values})"))
    add(OpInfo("roll", S.Roll, mg.roll, lambda a, shift, axis: np.roll(a, shift, axis),
               ROLL_SAMPLES, spell="mg.roll({0}, {shift}, {axis})"))
    # -- PyTorch's names --------------------------------------------------------------------
    add(OpInfo("clone", S.Clone, mg.clone, np.copy, _unary(), _unary(CHECK_SHAPES),
               spell="mg.clone({0})", passes_through=(0,)))
    add(OpInfo("permute", S.Transpose, lambda x: x.permute(*range(x.ndim - 1, -1, -1)),
               np.transpose, _unary(), _unary(CHECK_SHAPES),
               spell="{0}.permute(*reversed(range({0}.ndim)))"))
    add(OpInfo("expand", S.BroadcastTo, lambda x: x.expand(2, *([-1] * x.ndim)),
               lambda a: np.broadcast_to(a, (2,) + a.shape), _unary(), _unary(CHECK_SHAPES),
               spell="{0}.expand(2, -1, ...)"))
    add(OpInfo("chunk", S.Concat, lambda x: mg.cat(x.reshape(-1).chunk(2)[::-1]),
               lambda a: np.concatenate(np.array_split(a.reshape(-1), 2)[::-1])
               if a.size % 2 == 0 or a.size == 1 else
               np.concatenate([a.reshape(-1)[-(a.size // 2):], a.reshape(-1)[:-(a.size // 2)]]),
               _unary([s for s in SHAPES if math.prod(s) % 2 == 0 or math.prod(s) == 1]),
               _unary([s for s in CHECK_SHAPES if math.prod(s) % 2 == 0 or math.prod(s) == 1]),
               spell="mg.cat({0}.reshape(-1).chunk(2)[::-1])"))
    add(OpInfo("hstack", S.Concat, lambda *xs: mg.hstack(xs), lambda *arrays: np.hstack(arrays),
               HSTACK_SAMPLES, spell=lambda names, o: f"mg.hstack([{', '.join(names)}])"))
    add(OpInfo("vstack", S.Concat, lambda *xs: mg.vstack(xs), lambda *arrays: np.vstack(arrays),
               VSTACK_SAMPLES, spell=lambda names, o: f"mg.vstack([{', '.join(names)}])"))
    # the slices in reverse order, stacked back: each slice reaches its own place
    add(OpInfo("unbind", I.GetItem, lambda x, dim: mg.stack(x.unbind(dim)[::-1], dim),
               lambda a, dim: np.flip(a, dim), UNBIND_SAMPLES, UNBIND_SAMPLES[:3],
               spell="mg.stack({0}.unbind({dim})[::-1], {dim})"))
    return ops
