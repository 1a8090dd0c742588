"""The op registry: every differentiable primitive of minigrad and nn, with what it takes to
test it (in the spirit of PyTorch's OpInfo database).

Each `OpInfo` names the `Function` subclass it reaches and gives:

- `call`: a user-level way to reach it (`lambda a, b: a * b`, `nn.functional.linear`, ...),
  taking one Tensor per operand and the sample's options as keywords;
- `reference`: the same computation in plain NumPy, written from the math (never from the code
  under test), on arrays of any float dtype;
- `samples`: operand shapes and options, `()` and `(1,)` included, every broadcasting pair the
  fuzzer may combine; `checks` is the subset the per-op tests iterate;
- `domains`: where each operand's values may lie (log and sqrt positive, a divisor away from
  0, exp's argument moderate), and `valid`, which rejects inputs too close to a kink or a tie
  (relu, abs, max, clip, maximum) or too badly conditioned to difference;
- flags: `broadcasts`, `nonsmooth`, `second_order` (create_graph gives a correct second
  derivative), `random` (draws from minigrad's RNG: its reference replays the seeded draws).

Several entries may reach one class (scalar and tensor exponents both reach Pow). A Function
subclass that no entry reaches makes tests/fuzz/test_registry.py fail, naming it: adding a
primitive means adding an entry here (see tests/README.md).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import minigrad as mg
from minigrad.ops import activations, elementwise, indexing, linalg, nn_ops, reduce
from minigrad.ops import shape as shape_ops
from nn import attention_functional, functional, recurrent
from nn import attention as nn_attention

Shape = tuple


# ---------------------------------------------------------------------------------------------
# Domains: where an operand's values may lie.

@dataclass(frozen=True)
class Domain:
    """Values for an operand: `draw` makes fresh ones, `holds` says whether an existing value
    (a float64 array) may be used there."""
    name: str
    draw: Callable[[np.random.Generator, Shape], np.ndarray]
    holds: Callable[[np.ndarray], bool]


def _signed(rng, shape, low, high):
    """Values with low ≤ |v| ≤ high and random signs."""
    return rng.choice([-1.0, 1.0], size=shape) * rng.uniform(low, high, size=shape)


REAL = Domain("real", lambda rng, s: _signed(rng, s, 0.1, 2.0), lambda a: True)
POSITIVE = Domain("positive", lambda rng, s: rng.uniform(0.5, 2.0, size=s),
                  lambda a: bool(a.min(initial=1.0) > 0.2))
NONZERO = Domain("nonzero", lambda rng, s: _signed(rng, s, 0.5, 2.0),
                 lambda a: bool(np.abs(a).min(initial=1.0) > 0.3))
UNIT = Domain("unit", lambda rng, s: rng.uniform(0.0, 1.0, size=s),
              lambda a: bool(a.min(initial=0.0) >= 0 and a.max(initial=1.0) <= 1))
MODERATE = Domain("moderate", lambda rng, s: _signed(rng, s, 0.1, 1.5),
                  lambda a: bool(np.abs(a).max(initial=0.0) <= 3.0))

KINK_MARGIN = 1e-2      # inputs of nonsmooth ops keep this far from their kinks and ties


def _off_kink(x, kink) -> bool:
    """Every element is exactly at the kink (a constant there: both sides agree) or clear of it."""
    gap = np.abs(x - kink)
    return bool(np.all((gap == 0) | (gap > KINK_MARGIN)))


def _no_near_ties(x, axis) -> bool:
    """Along the reduced axes the extreme is unique by a margin, or tied exactly."""
    for sign in (1.0, -1.0):
        y = sign * x
        top = np.max(y, axis=axis, keepdims=True)
        gap = top - y
        if np.any((gap > 0) & (gap <= KINK_MARGIN)):
            return False
    return True


# ---------------------------------------------------------------------------------------------
# Samples and entries.

@dataclass(frozen=True)
class Sample:
    """Operand shapes and options. `options` is a dict, or a function of a NumPy generator
    returning one (random masks, indices, targets)."""
    shapes: tuple
    options: object = field(default_factory=dict)

    def make_options(self, rng: np.random.Generator) -> dict:
        return self.options(rng) if callable(self.options) else dict(self.options)


@dataclass(frozen=True)
class Edges:
    """What an entry accepts at the edges of its domain, and its convention there (the
    extreme-values arm, edges.py, draws them):

    - shift: the operands a common shift c may move without changing the result by more than
      a constant (log-sum-exp, softmax, max): the gradient at c + d is that at d;
    - zeros: the operands whose exact zeros are smooth points (products, x of x·log y);
    - empty: samples with a zero-length axis, which must give the reference's (empty or
      −inf, NaN) result;
    - infinite_at, infinite: the operands that may hold ±inf and NaN, and the gradients
      expected there, f(*arrays, weights=w, **options) -> one array (or None) per operand;
    - kinks: (place, gradients): place(rng, arrays, options) puts exact kinks into the
      operands, `gradients` as `infinite` gives the convention there.
    """
    shift: tuple = ()
    zeros: tuple = ()
    empty: tuple = ()
    infinite_at: tuple = ()
    infinite: Callable | None = None
    kinks: tuple | None = None


@dataclass(frozen=True)
class OpInfo:
    name: str
    function: type
    call: Callable
    reference: Callable
    samples: tuple
    checks: tuple = ()
    domains: tuple = (REAL,)
    valid: Callable | None = None
    broadcasts: bool = False
    nonsmooth: bool = False
    second_order: bool = True
    random: bool = False
    spell: object = ""                      # format string, or f(names, options) -> str
    exact_options: Callable | None = None   # options for the float64 reference of a program
    # (each operand's ancestry: the nodes it is computed from, itself included; operand
    # dtypes) -> True where a reported bug would fire: the fuzzer leaves that combination out,
    # and test_found_bugs.py reproduces the bug directly
    known_bug: Callable | None = None
    gradcheck_options: dict = field(default_factory=dict)   # e.g. a wider step for float32
    passes_gradient: bool = True            # False: its backward gives every operand None
    edges: Edges | None = None              # the extreme values it accepts (edges.py)

    def domain(self, position: int) -> Domain:
        return self.domains[min(position, len(self.domains) - 1)]

    def accepts(self, arrays, options) -> bool:
        return self.valid is None or bool(self.valid(*arrays, **options))

    def draw(self, sample: Sample, rng: np.random.Generator) -> tuple[list, dict]:
        """Operands for `sample` from the domains, with its options (drawn again while too
        near a kink or a tie for `valid`)."""
        for _ in range(100):
            arrays = [np.asarray(self.domain(k).draw(rng, s), dtype=np.float64)
                      for k, s in enumerate(sample.shapes)]
            options = sample.make_options(rng)
            if self.accepts(arrays, options):
                return arrays, options
        raise AssertionError(f"{self.name}: no valid inputs drawn for {sample}")

    def check_samples(self) -> tuple:
        return self.checks or self.samples

    def spelled(self, names, options) -> str:
        if callable(self.spell):
            return self.spell(names, options)
        return self.spell.format(*names, **{k: literal(v) for k, v in options.items()})


def literal(value) -> str:
    """Python source for an option value (arrays, slices, dtypes, index tuples)."""
    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r}, dtype={str(value.dtype)!r})"
    if isinstance(value, slice):
        return f"slice({value.start!r}, {value.stop!r}, {value.step!r})"
    if value is Ellipsis:
        return "..."
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return repr(np.dtype(value).name)
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


# ---------------------------------------------------------------------------------------------
# Shapes the samples draw on: small, so that central differences stay cheap.

SHAPES = [(), (1,), (2,), (3,), (1, 1), (1, 3), (2, 1), (2, 2), (2, 3), (3, 2)]
CHECK_SHAPES = [(), (1,), (2, 3)]


def _broadcast(*shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None


# every pair that broadcasts to a shape of SHAPES (the fuzzer's menu), and the pairs the per-op
# checks run: equal, one side 0-d, size-1 both ways, a row against a matrix
PAIRS = [(a, b) for a in SHAPES for b in SHAPES if _broadcast(a, b) in SHAPES]
CHECK_PAIRS = [((), ()), ((1,), (1,)), ((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)),
               ((2, 1), (1, 3)), ((), (2, 3)), ((2, 3), ()), ((1,), ()), ((2, 3), (1, 1))]


def _unary(shapes=SHAPES, options=None):
    return tuple(Sample((s,), options or {}) for s in shapes)


def _binary(pairs):
    return tuple(Sample(p) for p in pairs)


# ---------------------------------------------------------------------------------------------
# Plain-NumPy references.

def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


_erf_scalar = np.vectorize(math.erf, otypes=[np.float64])


def _erf(a):
    return np.asarray(_erf_scalar(a)).astype(a.dtype)


def _normal_cdf(a):
    return 0.5 * (1 + _erf(a / math.sqrt(2)))


def _softmax(a, axis):
    """eᵃ / Σ eᵃ; a slice that is all −inf gives zeros."""
    top = np.max(a, axis=axis, keepdims=True, initial=-np.inf)
    top = np.where(np.isfinite(top), top, 0)
    e = np.exp(a - top)
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total == 0, 1, total)


def _log_softmax(a, axis):
    shifted = a - np.max(a, axis=axis, keepdims=True, initial=-np.inf)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


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


def _sum_to(a, shape):
    """a summed over the axes broadcasting added or stretched, down to `shape`."""
    a = a.sum(axis=tuple(range(a.ndim - len(shape))))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and a.shape[i] != 1)
    return a.sum(axis=stretched, keepdims=True).reshape(shape)


def _index_add(g, shape, index):
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, index, g)
    return out


def _dropout_keep(seed, shape, dtype, p):
    """The kept positions of a dropout drawn right after `manual_seed(seed)`: uniform draws of
    the seeded generator, at least p."""
    return np.random.default_rng(seed).random(shape).astype(dtype) >= p


def _dropout(a, p, seed):
    scaled = _dropout_keep(seed, a.shape, a.dtype, p).astype(a.dtype) * (1.0 / (1.0 - p))
    return a * scaled


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


# ---------------------------------------------------------------------------------------------
# User-level helpers for the primitives reached only through another path. A program listing
# calls them by these names.

def seeded(seed: int, f: Callable, *args, **kwargs):
    """f(*args, **kwargs) right after `manual_seed(seed)`: the same random draws every call."""
    mg.manual_seed(seed)
    return f(*args, **kwargs)


def other_device(device: str) -> str:
    """A second device to move to and back: the simulated one from the host, else the host."""
    return "sim" if device == "cpu" else "cpu"


def round_trip(x):
    """x moved to another device and back: two ToDevice nodes."""
    return x.to(other_device(x.device)).to(x.device)


def scatter(g, shape, index):
    """zeros(shape) with [index] += g, as the recorded gradient of x[index] (IndexAdd)."""
    x = mg.zeros(shape, dtype=g.dtype, device=g.device, requires_grad=True)
    found = mg.grad(x[index], x, grad_outputs=g, create_graph=True)[0]
    return found if g.requires_grad else found.detach()


# ---------------------------------------------------------------------------------------------
# Option menus that depend on the shape.

def _reduction_samples(shapes, with_tuples=True):
    out = []
    for s in shapes:
        axes = [None] + list(range(len(s))) + ([-1] if s else [])
        if with_tuples and len(s) == 2:
            axes.append((0, 1))
        for axis, keepdims in itertools.product(axes, (False, True)):
            out.append(Sample((s,), {"axis": axis, "keepdims": keepdims}))
    return tuple(out)


def _axis_samples(shapes):
    """softmax-like: one axis, ndim ≥ 1."""
    return tuple(Sample((s,), {"axis": a}) for s in shapes if s for a in range(-1, len(s)))


def _mask_options(mask_shape, **fixed):
    def make(rng):
        mask = rng.random(mask_shape) < 0.5
        return {"mask": np.asarray(mask), **fixed}
    return make


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


def _scatter_samples(shapes):
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


def _matmul_samples():
    pairs = [((3,), (3,)), ((2,), (2,)), ((1, 3), (3,)), ((2, 3), (3,)), ((2,), (2, 3)),
             ((2, 1), (1, 3)), ((1, 1), (1, 1)), ((2, 2), (2, 2)), ((2, 2), (2, 3)),
             ((2, 3), (3, 2)), ((3, 2), (2, 2)), ((1, 2, 2), (2, 2)), ((2, 2), (1, 2, 2)),
             ((1, 2, 3), (3, 2)), ((1,), (1, 3))]
    return tuple(Sample(p) for p in pairs)


# ---------------------------------------------------------------------------------------------
# The entries.

def _entries() -> list[OpInfo]:
    E = elementwise
    F = functional
    ops: list[OpInfo] = []
    add = ops.append

    # -- arithmetic, broadcasting both ways ----------------------------------------------------
    binary = dict(samples=_binary(PAIRS), checks=_binary(CHECK_PAIRS), broadcasts=True)
    add(OpInfo("add", E.Add, lambda a, b: a + b, np.add, spell="{0} + {1}", **binary))
    add(OpInfo("sub", E.Sub, lambda a, b: a - b, np.subtract, spell="{0} - {1}", **binary))
    add(OpInfo("mul", E.Mul, lambda a, b: a * b, np.multiply, spell="{0} * {1}", **binary))
    add(OpInfo("div", E.Div, lambda a, b: a / b, np.divide, spell="{0} / {1}",
               domains=(REAL, NONZERO), **binary))
    add(OpInfo("pow", E.Pow, lambda a, b: a ** b, np.power, spell="{0} ** {1}",
               domains=(POSITIVE, MODERATE), **binary))
    add(OpInfo("maximum", E.Maximum, mg.maximum, np.maximum, spell="mg.maximum({0}, {1})",
               valid=lambda a, b: _off_kink(a - b, 0), nonsmooth=True, **binary))
    add(OpInfo("minimum", E.Minimum, mg.minimum, np.minimum, spell="mg.minimum({0}, {1})",
               valid=lambda a, b: _off_kink(a - b, 0), nonsmooth=True, **binary))

    # -- a Python number on one side: the other operand is a constant of the graph -------------
    scalar = _unary(options={"c": 0.5}) + _unary([(), (2, 3)], {"c": -1.5})
    add(OpInfo("add_scalar", E.Add, lambda x, c: x + c, lambda a, c: a + c,
               _unary(options={"c": 0.5}) + _unary([()], {"c": 3.0}), spell="{0} + {c}"))
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
               _unary(options={"p": 2}) + _unary(options={"p": 3}), spell="{0} ** {p}"))
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
               spell="abs({0})", **unary))
    add(OpInfo("tanh", E.Tanh, mg.tanh, np.tanh, spell="mg.tanh({0})", **unary))
    add(OpInfo("sigmoid", activations.Sigmoid, mg.sigmoid, _sigmoid, spell="mg.sigmoid({0})", **unary))
    add(OpInfo("relu", activations.Relu, mg.relu, lambda a: np.maximum(a, 0),
               valid=lambda a: _off_kink(a, 0), nonsmooth=True, spell="mg.relu({0})", **unary))
    add(OpInfo("gelu", activations.Gelu, mg.gelu, lambda a: a * _normal_cdf(a), spell="mg.gelu({0})",
               **unary))
    add(OpInfo("gelu_tanh", activations.GeluTanh, lambda x: mg.gelu(x, approximate="tanh"),
               lambda a: 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3))),
               spell="mg.gelu({0}, approximate='tanh')", **unary))

    # -- selections -----------------------------------------------------------------------------
    clip_bounds = [{"lo": -0.5, "hi": 0.5}, {"lo": None, "hi": 0.3}, {"lo": -0.2, "hi": None}]
    add(OpInfo("clip", E.Clip, mg.clip, lambda a, lo, hi: np.clip(a, lo, hi),
               tuple(Sample((s,), b) for s in SHAPES for b in clip_bounds),
               tuple(Sample((s,), b) for s in CHECK_SHAPES for b in clip_bounds[:2]),
               valid=lambda a, lo, hi: all(_off_kink(a, v) for v in (lo, hi) if v is not None),
               nonsmooth=True, spell="mg.clip({0}, {lo}, {hi})"))
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

    # -- reductions (0-d results from axis=None and from every axis of a 1-d tensor) ---------
    R = reduce
    reductions = dict(samples=_reduction_samples(SHAPES),
                      checks=_reduction_samples(CHECK_SHAPES, with_tuples=False))
    add(OpInfo("sum", R.Sum, mg.sum, lambda a, axis, keepdims: np.sum(a, axis, keepdims=keepdims),
               spell="mg.sum({0}, axis={axis}, keepdims={keepdims})", **reductions))
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
               spell="mg.max({0}, axis={axis}, keepdims={keepdims})", **reductions))
    add(OpInfo("min", R.Min, mg.min, lambda a, axis, keepdims: np.min(a, axis, keepdims=keepdims),
               valid=lambda a, axis, keepdims: _no_near_ties(a, axis), nonsmooth=True,
               spell="mg.min({0}, axis={axis}, keepdims={keepdims})", **reductions))
    add(OpInfo("logsumexp", R.LogSumExp, mg.logsumexp, _logsumexp,
               spell="mg.logsumexp({0}, axis={axis}, keepdims={keepdims})",
               samples=tuple(s for s in _reduction_samples(SHAPES)
                             if s.shapes[0] or s.options["axis"] is None),
               checks=tuple(s for s in _reduction_samples(CHECK_SHAPES, with_tuples=False)
                            if s.shapes[0] or s.options["axis"] is None)))
    add(OpInfo("softmax", nn_ops.Softmax, mg.softmax, _softmax, _axis_samples(SHAPES),
               _axis_samples(CHECK_SHAPES), spell="mg.softmax({0}, axis={axis})"))
    add(OpInfo("log_softmax", nn_ops.LogSoftmax, mg.log_softmax, _log_softmax,
               _axis_samples(SHAPES), _axis_samples(CHECK_SHAPES),
               spell="mg.log_softmax({0}, axis={axis})"))
    dropout_samples = tuple(Sample((s,), {"p": p, "seed": 7}) for s in SHAPES
                            for p in (0.25, 0.5))
    add(OpInfo("dropout", nn_ops.Dropout, lambda x, p, seed: seeded(seed, mg.dropout, x, p),
               _dropout, dropout_samples,
               tuple(Sample((s,), {"p": 0.5, "seed": 3}) for s in CHECK_SHAPES),
               random=True, spell="seeded({seed}, mg.dropout, {0}, {p})"))

    # -- indexing -------------------------------------------------------------------------------
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
               _scatter_samples(SHAPES), _scatter_samples(CHECK_SHAPES),
               spell="scatter({0}, {shape}, {index})"))

    # -- shapes ---------------------------------------------------------------------------------
    S = shape_ops
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

    # -- products -------------------------------------------------------------------------------
    add(OpInfo("matmul", linalg.MatMul, lambda a, b: a @ b, np.matmul, _matmul_samples(),
               spell="{0} @ {1}"))
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
    ce_cases = [((2, 3), {}), ((3,), {}), ((1, 3), {"reduction": "sum"}),
                ((2, 3), {"reduction": "none"}), ((2, 2), {"label_smoothing": 0.1}),
                ((2, 3), {"ignore_index": -1}), ((1, 2, 3), {"reduction": "none"}),
                ((1,), {}), ((1, 1), {"reduction": "sum"})]
    add(OpInfo("cross_entropy", F.CrossEntropy,
               lambda z, targets, **o: F.cross_entropy(z, targets, **o), _cross_entropy,
               tuple(Sample((s,), _targets_options(s, o)) for s, o in ce_cases),
               spell="nn.functional.cross_entropy({0}, {targets}, ignore_index={ignore_index}, "
                     "reduction={reduction}, label_smoothing={label_smoothing})"))
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
    return ops


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
    return functional.layer_norm(x, x.shape[x.ndim - n_axes:], weight, bias)


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
    return functional.binary_cross_entropy_with_logits(z, y, weight=weight, reduction=reduction,
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
    return functional.attention_weights(q, k, mask=mask)


def _attend_call(q, k, v, mask=None, dropout_p=0.0, seed=None):
    if dropout_p:
        return seeded(seed, functional.scaled_dot_product_attention, q, k, v, mask=mask,
                      dropout_p=dropout_p)[0]
    return functional.scaled_dot_product_attention(q, k, v, mask=mask)[0]


from .registry_porting import ABSTRACT_PORTING, porting_entries  # noqa: E402  (uses the above)



# ---------------------------------------------------------------------------------------------
# The extreme values each entry accepts (edges.py draws them), and its conventions there,
# written from the math.

def _shared_sigmoid(d):
    return 0.5 * (1 + np.tanh(0.5 * d))          # σ(d) for any d, ±inf included


def _logaddexp_edges(a, b, weights):
    """σ(a − b) and σ(b − a); ½ each for equal infinities, 0 where both are −inf."""
    d = np.where(a == b, 0.0, a - b)
    dead = (a == -np.inf) & (b == -np.inf)
    return (_sum_to(weights * np.where(dead, 0.0, _shared_sigmoid(d)), a.shape),
            _sum_to(weights * np.where(dead, 0.0, _shared_sigmoid(-d)), b.shape))


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


def _at(kinks):
    """place(rng, arrays, options): about half of the first operand's elements set to one of
    the kinks (a function of the options)."""
    def place(rng, arrays, options):
        points = [k for k in kinks(options) if k is not None]
        a = arrays[0].reshape(-1)
        chosen = rng.random(a.size) < 0.5
        a[chosen] = rng.choice(points, size=int(chosen.sum()))
        return arrays
    return place


def _clip_at_bounds(a, weights, lo, hi):
    """1 where lo ≤ x ≤ hi, the bounds included (PyTorch's clamp)."""
    inside = np.ones(a.shape, bool)
    if lo is not None:
        inside &= a >= lo
    if hi is not None:
        inside &= a <= hi
    return (weights * inside,)


def _empty_reductions(axis_for_all=True):
    samples = [Sample(((0, 3),), {"axis": 1, "keepdims": False}),
               Sample(((0, 3),), {"axis": -1, "keepdims": True}),
               Sample(((2, 0, 3),), {"axis": 2, "keepdims": False})]
    if axis_for_all:            # reductions with a value over nothing: Σ = 0, Π = 1, LSE = −inf
        samples += [Sample(((2, 0),), {"axis": 1, "keepdims": False}),
                    Sample(((0,),), {"axis": None, "keepdims": False}),
                    Sample(((2, 0),), {"axis": (0, 1), "keepdims": True})]
    return tuple(samples)


EMPTY_AXES = (Sample(((2, 0),), {"axis": 1}), Sample(((2, 0),), {"axis": -1}),
              Sample(((0,),), {"axis": 0}), Sample(((0, 3),), {"axis": 0}),
              Sample(((0, 3),), {"axis": 1}))
EMPTY_SCANS = (Sample(((0, 3),), {"axis": 0}), Sample(((2, 0),), {"axis": 1}),
               Sample(((0,),), {"axis": None}))

EDGES: dict[str, Edges] = {
    "logaddexp": Edges(shift=(0, 1), infinite_at=(0, 1), infinite=_logaddexp_edges),
    "logsumexp": Edges(shift=(0,), empty=_empty_reductions(), infinite_at=(0,),
                       infinite=_logsumexp_edges),
    "logcumsumexp": Edges(shift=(0,), empty=EMPTY_SCANS),
    "softmax": Edges(shift=(0,), empty=EMPTY_AXES),
    "log_softmax": Edges(shift=(0,), empty=EMPTY_AXES),
    "cross_entropy": Edges(shift=(0,)),
    "weighted_cross_entropy": Edges(shift=(0,)),
    "max": Edges(empty=_empty_reductions(False)),      # (a shift makes ties: kinks)
    "min": Edges(empty=_empty_reductions(False)),
    "sum": Edges(zeros=(0,), empty=_empty_reductions()),
    "prod": Edges(zeros=(0,), empty=_empty_reductions()),
    "cumsum": Edges(empty=EMPTY_SCANS),
    "cumprod": Edges(zeros=(0,), empty=EMPTY_SCANS),
    "xlogy": Edges(zeros=(0,)),
    "mul": Edges(zeros=(0, 1)),
    "pow_scalar": Edges(zeros=(0,)),
    "sigmoid": Edges(infinite_at=(0,), infinite=lambda a, weights: (
        weights * _shared_sigmoid(a) * _shared_sigmoid(-a),)),
    "tanh": Edges(infinite_at=(0,), infinite=lambda a, weights: (
        weights * (1 - np.tanh(a) ** 2),)),
    "relu": Edges(kinks=(_at(lambda o: [0.0]), lambda a, weights: (weights * (a > 0),))),
    "abs": Edges(kinks=(_at(lambda o: [0.0]), lambda a, weights: (weights * np.sign(a),))),
    "clip": Edges(kinks=(_at(lambda o: [o["lo"], o["hi"]]), _clip_at_bounds)),
}

REGISTRY: list[OpInfo] = [dataclasses.replace(op, edges=EDGES[op.name]) if op.name in EDGES
                          else op for op in _entries() + porting_entries()]
BY_NAME: dict[str, OpInfo] = {op.name: op for op in REGISTRY}
assert len(BY_NAME) == len(REGISTRY), "registry names must be unique"

# Function subclasses that are shared bases, never applied themselves
ABSTRACT = {reduce._Reduction, mg.FusedFunction,
            *ABSTRACT_PORTING}


def all_function_classes() -> list[type]:
    """Every subclass of mg.Function defined by minigrad and nn (recursively), in a stable
    order; classes defined elsewhere (tests making their own) are left out."""
    found, stack = [], [mg.Function]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in found:
                found.append(sub)
                stack.append(sub)
    ours = [c for c in found if c.__module__.split(".")[0] in ("minigrad", "nn")]
    return sorted(ours, key=lambda c: (c.__module__, c.__qualname__))


def unregistered() -> list[type]:
    covered = {op.function for op in REGISTRY}
    return [c for c in all_function_classes() if c not in covered and c not in ABSTRACT]

