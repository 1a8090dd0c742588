"""Registry entries for minigrad/ops/indexing.py: basic and advanced indexing, split, the
recorded gradient of indexing (IndexAdd) and scatter_reduce's extremes."""

from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad.ops import indexing

from .core import CHECK_SHAPES, KINK_MARGIN, SHAPES, OpInfo, Sample, scatter


def _index_add(g, shape, index):
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, index, g)
    return out


def _index_menu(s):
    """Indices for x of shape s: basic and advanced, with repeats, and 0-d results."""
    ints = lambda *v: np.array(v, dtype=np.int64)               # noqa: E731
    if s == ():
        return [(), None, Ellipsis]
    if len(s) == 1:
        n = s[0]
        menu = [0, -1, slice(None, None, -1), None, ints(0, 0), ints(n - 1, 0, n - 1),
                (Ellipsis, None)]
        if n > 1:
            menu += [slice(1, None), np.arange(n) % 2 == 0]
        return menu
    m, n = s[0], s[1]
    menu = [0, -1, (0, 0), (-1, n - 1), (slice(None), 0), (Ellipsis, -1), (slice(0, 1),),
            ints(0, 0), (slice(None), ints(n - 1, 0, n - 1)), (ints(0, m - 1), ints(n - 1, 0)),
            (None, 0), np.arange(m * n).reshape(m, n) % 2 == 0]
    return menu


def _getitem_samples(shapes):
    return tuple(Sample((s,), {"index": index}) for s in shapes for index in _index_menu(s))


def _index_add_samples(shapes):
    """IndexAdd: g has the shape of x[index] for an index without None (np.add.at's rule)."""
    out = []
    for s in shapes:
        for index in _index_menu(s):
            parts = index if isinstance(index, tuple) else (index,)
            if any(p is None for p in parts):
                continue
            g_shape = np.zeros(s)[index].shape
            out.append(Sample((g_shape,), {"shape": s, "index": index}))
    return tuple(out)


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


def _scatter_extreme_samples():
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


# -- operations that read x at positions computed from x's values (sorting, ranks, running and
# axis extremes): each is GetItem at those positions, computed again at every compiled replay

def _apart(a, axis, **_) -> bool:
    """Every two elements along axis differ by more than the margin: the order, the ranks and
    the extremes are then unique, and stay so under the finite-difference steps."""
    if a.ndim == 0 or a.shape[axis] < 2:
        return True
    return bool(np.all(np.diff(np.sort(a, axis=axis), axis=axis) > KINK_MARGIN))


def _along(a, axis, f):
    """f applied along axis (a 0-d array as one element)."""
    return f(a.reshape(1), 0).reshape(()) if a.ndim == 0 else f(a, axis)


def _position_samples(shapes, ranked=False):
    """One sample per shape and axis (first and last), with k = 1 and k = n when `ranked`."""
    cases = []
    for s in shapes:
        for axis in ([0, -1] if len(s) > 1 else [-1]):
            n = s[axis] if s else 1
            for k in (dict.fromkeys([1, n]) if ranked else [None]):
                cases.append((s, axis, k))
    return tuple(Sample((s,), {"axis": axis} if k is None else {"axis": axis, "k": k})
                 for s, axis, k in cases)


def _positional_entries() -> list[OpInfo]:
    common = dict(valid=_apart, nonsmooth=True)
    plain = dict(samples=_position_samples(SHAPES), checks=_position_samples(CHECK_SHAPES))
    ranked = dict(samples=_position_samples(SHAPES, True),
                  checks=_position_samples(CHECK_SHAPES, True))
    descending = lambda a, axis: -np.sort(-a, axis=axis)                   # noqa: E731
    return [
        OpInfo("sort", indexing.GetItem, lambda x, axis: mg.sort(x, axis=axis),
               lambda a, axis: _along(a, axis, lambda b, ax: np.sort(b, axis=ax)),
               spell="mg.sort({0}, axis={axis})", **plain, **common),
        OpInfo("sort_descending", indexing.GetItem,
               lambda x, axis: mg.sort(x, dim=axis, descending=True).values,
               lambda a, axis: _along(a, axis, descending),
               spell="mg.sort({0}, dim={axis}, descending=True).values", **plain, **common),
        OpInfo("topk", indexing.GetItem, lambda x, axis, k: x.topk(k, axis)[0],
               lambda a, axis, k: _along(a, axis, lambda b, ax: np.take(
                   descending(b, ax), range(k), axis=ax)) if a.ndim else a,
               spell="{0}.topk({k}, {axis})[0]", **ranked, **common),
        OpInfo("kthvalue", indexing.GetItem, lambda x, axis, k: x.kthvalue(k, axis)[0],
               lambda a, axis, k: a if a.ndim == 0 else np.take(np.sort(a, axis=axis), k - 1,
                                                                axis=axis),
               spell="{0}.kthvalue({k}, {axis})[0]", **ranked, **common),
        OpInfo("cummax", indexing.GetItem, lambda x, axis: mg.cummax(x, axis)[0],
               lambda a, axis: _along(a, axis, np.maximum.accumulate),
               spell="mg.cummax({0}, {axis})[0]", **plain, **common),
        OpInfo("cummin", indexing.GetItem, lambda x, axis: mg.cummin(x, axis)[0],
               lambda a, axis: _along(a, axis, np.minimum.accumulate),
               spell="mg.cummin({0}, {axis})[0]", **plain, **common),
        OpInfo("max_along", indexing.GetItem, lambda x, axis: x.max(dim=axis).values,
               lambda a, axis: a if a.ndim == 0 else np.max(a, axis=axis),
               spell="{0}.max(dim={axis}).values", **plain, **common),
    ]


def entries() -> list[OpInfo]:
    ops: list[OpInfo] = _positional_entries()
    add = ops.append
    add(OpInfo("getitem", indexing.GetItem, lambda x, index: x[index], lambda a, index: a[index],
               _getitem_samples(SHAPES), _getitem_samples(CHECK_SHAPES), spell="{0}[{index}]"))
    add(OpInfo("split", indexing.GetItem, lambda x, n, axis, k: mg.split(x, n, axis)[k],
               lambda a, n, axis, k: np.split(a, n, axis)[k],
               tuple(Sample((s,), {"n": n, "axis": ax, "k": k})
                     for s, n, ax in [((2,), 2, 0), ((3,), 3, 0), ((2, 3), 3, 1), ((2, 2), 2, -1),
                                      ((2, 1), 2, 0), ((1,), 1, 0), ((1, 1), 1, 1)]
                     for k in range(n)),
               spell="mg.split({0}, {n}, {axis})[{k}]"))
    add(OpInfo("index_add", indexing.IndexAdd, scatter,
               lambda g, shape, index: _index_add(g, shape, index),
               _index_add_samples(SHAPES), _index_add_samples(CHECK_SHAPES),
               spell="scatter({0}, {shape}, {index})"))
    add(OpInfo("scatter_extreme", indexing.ScatterExtreme, _scatter_call, _scatter_reference,
               _scatter_extreme_samples(), valid=_scatter_valid_call, nonsmooth=True,
               spell=lambda names, o: (f"mg.scatter_reduce({names[0]}, 0, {o['index'].tolist()}, "
                                       f"{names[1]}, {'amax' if o['largest'] else 'amin'!r}, "
                                       f"include_self={o['include_self']})")))
    return ops
