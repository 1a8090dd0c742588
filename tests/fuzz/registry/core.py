"""What a registry entry is made of: `OpInfo` and `Edges`, the operand domains, the shapes and
sample helpers the entries draw on, the plain-NumPy references more than one kind uses, and the
user-level helpers a program listing calls (`seeded`, `round_trip`, `scatter`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import minigrad as mg

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
    # the operands read as values only (targets taken by argmax): they get no gradient
    value_operands: tuple = ()
    # the operands whose gradient is the output's own gradient array, passed on as it is (a + b
    # gives ∂L/∂z to a and to b): a value fed through them lands in several leaves as one array
    passes_through: tuple = ()
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
# Plain-NumPy references more than one kind uses.

def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


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


def _sum_to(a, shape):
    """a summed over the axes broadcasting added or stretched, down to `shape`."""
    a = a.sum(axis=tuple(range(a.ndim - len(shape))))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and a.shape[i] != 1)
    return a.sum(axis=stretched, keepdims=True).reshape(shape)


def _dropout_keep(seed, shape, dtype, p):
    """The kept positions of a dropout drawn right after `manual_seed(seed)`: uniform draws of
    the seeded generator, at least p."""
    return np.random.default_rng(seed).random(shape).astype(dtype) >= p


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
# Conventions at the edges (see Edges).

def _shared_sigmoid(d):
    return 0.5 * (1 + np.tanh(0.5 * d))          # σ(d) for any d, ±inf included


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
