"""The extreme-values arm of the fuzzer: each registry entry that declares `edges` (an `Edges`)
is run on the inputs it accepts at the edges of its domain, one operation at a time, and its
values and gradients compared with float64 NumPy:

- shift: ±1e20 in float64 and ±3e7 in float32 added to the operands it names. The entry
  declares that a common shift changes its result by a constant at most (log-sum-exp, softmax,
  max), so the gradient at c + d is the gradient at d, taken by float64 central differences of
  the reference at d (the offsets as stored, after rounding). A gradient computed from the
  rounded output (e^{x − y} with y ≈ 1e20) fails here.
- zeros: exact zeros in the operands it names, smooth points of the entry: the gradient
  against central differences, and (for `second_order` entries) the recorded gradient's own
  gradient against differences of the first.
- empty: samples with a zero-length axis: the value has the reference's shape, dtype and
  values (NaN and ±inf included), the gradient the input's shape.
- infinite: ±inf and NaN placed in the operands it names: values against the reference, the
  gradient against the entry's convention (`Edges.infinite`, written from the math).
- kinks: exact kinks placed by the entry (`Edges.kinks`): the gradient against its convention.

`edge_problems(op, rng)` returns the problems found (empty when all is well). PyTorch, where
installed, is a second oracle in test_edges.py at the inputs `edge_inputs` draws.
"""

from __future__ import annotations

import numpy as np

import minigrad as mg

from .registry import OpInfo

EPS = 1e-6
SHIFTS = [(1e20, np.float64), (-1e20, np.float64), (3e7, np.float32), (-3e7, np.float32)]
EXTREMES = np.array([np.inf, -np.inf, np.nan])


def _reference(op, arrays, options):
    with np.errstate(all="ignore"):
        return np.asarray(op.reference(*arrays, **options), dtype=np.float64)


def _numeric_gradients(op, arrays, options, weights):
    """∂⟨w, f⟩/∂operand by float64 central differences of the reference."""
    grads = []
    for k, a in enumerate(arrays):
        g = np.zeros(a.shape)
        for index in np.ndindex(*a.shape):
            moved = [b.copy() for b in arrays]
            moved[k][index] += EPS
            up = float((_reference(op, moved, options) * weights).sum())
            moved[k][index] -= 2 * EPS
            down = float((_reference(op, moved, options) * weights).sum())
            g[index] = (up - down) / (2 * EPS)
        grads.append(g)
    return grads


def _run(op, arrays, options, weights, dtype=np.float64, create_graph=False):
    """(output, gradients) of the entry in minigrad, on host tensors of `dtype`."""
    inputs = [mg.tensor(a.astype(dtype), dtype=dtype, requires_grad=True) for a in arrays]
    out = op.call(*inputs, **options)
    if not out.requires_grad:
        return out, [None] * len(inputs), inputs
    grads = mg.grad(out, inputs, grad_outputs=mg.tensor(weights.astype(dtype)),
                    allow_unused=True, create_graph=create_graph)
    return out, list(grads), inputs


def _differs(actual, expected, rtol, atol=0.0) -> bool:
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, np.float64)
    if actual.shape != expected.shape:
        return True
    finite = np.isfinite(expected)
    scale = 1 + float(np.abs(expected, where=finite, out=np.zeros(expected.shape)).max(
        initial=0.0))
    same = np.isclose(actual, expected, rtol=rtol, atol=atol * scale, equal_nan=True)
    return not bool(same.all())


class _Report:
    def __init__(self, op):
        self.op, self.problems = op, []

    def compare(self, kind, what, actual, expected, rtol, atol=0.0, arrays=None, options=None):
        if _differs(actual, expected, rtol, atol):
            shown = "" if arrays is None else f" at {[a.tolist() for a in arrays]} {options}"
            self.problems.append(f"[{kind}] {self.op.name}: {what} {np.asarray(actual).tolist()}"
                                 f", expected {np.asarray(expected).tolist()}{shown}")


def _check_shift(report, op, edges, rng):
    for sample in op.check_samples():
        arrays, options = op.draw(sample, rng)
        weights = rng.standard_normal(_reference(op, arrays, options).shape)
        for c, dtype in SHIFTS:
            stored = [np.array(np.asarray(a + c if k in edges.shift else a, dtype=dtype),
                               dtype=np.float64) for k, a in enumerate(arrays)]
            offsets = [np.array(s - c) if k in edges.shift else s for k, s in enumerate(stored)]
            if not op.accepts(offsets, options):
                continue
            out, grads, _ = _run(op, stored, options, weights, dtype)
            single = dtype == np.float32
            # relative, and absolute on the scale of the largest value: an output that is a
            # small difference of O(1) terms (log_softmax's x − logsumexp) keeps their rounding
            tol = 1e-6 if single else 1e-12
            report.compare("shift", f"value at c = {c:g} ({np.dtype(dtype).name})", out.numpy(),
                           _reference(op, stored, options), tol, tol,
                           arrays=offsets, options=options)
            expected = _numeric_gradients(op, offsets, options, weights)
            for k, (g, e) in enumerate(zip(grads, expected)):
                report.compare("shift", f"gradient of operand {k} at c = {c:g} "
                               f"({np.dtype(dtype).name})", None if g is None else g.numpy(),
                               e, 1e-4 if single else 1e-6, 1e-4 if single else 1e-7,
                               arrays=offsets, options=options)


def _with_zeros(rng, a):
    a = a.copy()
    if a.size:
        flat = a.reshape(-1)
        flat[rng.random(a.size) < 0.5] = 0.0
        flat[rng.integers(a.size)] = 0.0
    return a


def _zeros_inputs(op, edges, rng):
    for sample in op.check_samples():
        arrays, options = op.draw(sample, rng)
        yield ([_with_zeros(rng, a) if k in edges.zeros else a for k, a in enumerate(arrays)],
               options)


def second_derivatives(grads, inputs, directions):
    """∂⟨u, ∇⟨w, f⟩⟩/∂x for each input x, from gradients recorded with create_graph; a gradient
    recorded as a constant contributes 0."""
    recorded = [(g * mg.tensor(u)).sum() for g, u in zip(grads, directions)
                if g is not None and g.requires_grad]
    second = (mg.grad(sum(recorded), inputs, allow_unused=True) if recorded
              else [None] * len(inputs))
    return [np.zeros(tuple(x.shape)) if d is None else d.numpy() for d, x in zip(second, inputs)]


def _check_zeros(report, op, edges, rng):
    for arrays, options in _zeros_inputs(op, edges, rng):
        weights = rng.standard_normal(_reference(op, arrays, options).shape)
        out, grads, inputs = _run(op, arrays, options, weights, create_graph=op.second_order)
        report.compare("zeros", "value", out.numpy(), _reference(op, arrays, options), 1e-12)
        expected = _numeric_gradients(op, arrays, options, weights)
        for k, (g, e) in enumerate(zip(grads, expected)):
            report.compare("zeros", f"gradient of operand {k}",
                           None if g is None else g.numpy(), e, 1e-6, 1e-7, arrays, options)
        if not op.second_order:
            continue
        # the recorded gradient's own gradient: ∂⟨u, ∇⟨w, f⟩⟩/∂x against differences of ∇
        directions = [rng.standard_normal(a.shape) for a in arrays]
        second = second_derivatives(grads, inputs, directions)
        for k, a in enumerate(arrays):
            numeric = np.zeros(a.shape)
            for index in np.ndindex(*a.shape):
                values = []
                for step in (EPS, -EPS):
                    moved = [b.copy() for b in arrays]
                    moved[k][index] += step
                    _, g_moved, _ = _run(op, moved, options, weights)
                    values.append(sum(float((g.numpy() * u).sum())
                                      for g, u in zip(g_moved, directions) if g is not None))
                numeric[index] = (values[0] - values[1]) / (2 * EPS)
            report.compare("zeros", f"second derivative along operand {k}", second[k], numeric,
                           1e-4, 1e-5, arrays, options)


def _empty_inputs(op, edges, rng):
    for sample in edges.empty:
        yield [np.zeros(s) for s in sample.shapes], sample.make_options(rng)


def _check_empty(report, op, edges, rng):
    for arrays, options in _empty_inputs(op, edges, rng):
        shapes = [a.shape for a in arrays]
        try:
            expected = _reference(op, arrays, options)
            weights = np.ones(expected.shape)
            out, grads, _ = _run(op, arrays, options, weights)
        except Exception as error:                  # noqa: BLE001 - any raise is a finding
            report.problems.append(f"[empty] {op.name} {shapes} {options}: raised "
                                   f"{type(error).__name__}: {error}")
            continue
        report.compare("empty", f"value for {shapes} {options}", out.numpy(), expected,
                       1e-12)
        for k, (g, a) in enumerate(zip(grads, arrays)):
            if g is not None and tuple(g.shape) != a.shape:
                report.problems.append(f"[empty] {op.name}: gradient of operand {k} has shape "
                                       f"{tuple(g.shape)}, the operand {a.shape}")


def _infinite_inputs(op, edges, rng):
    for sample in op.check_samples():
        arrays, options = op.draw(sample, rng)
        for k in edges.infinite_at:
            a = arrays[k].reshape(-1)
            if a.size:
                a[rng.random(a.size) < 0.5] = rng.choice(EXTREMES)
                a[rng.integers(a.size)] = rng.choice(EXTREMES)
        yield arrays, options


def _check_infinite(report, op, edges, rng):
    for arrays, options in _infinite_inputs(op, edges, rng):
        weights = rng.standard_normal(_reference(op, arrays, options).shape)
        out, grads, _ = _run(op, arrays, options, weights)
        report.compare("infinite", "value", out.numpy(), _reference(op, arrays, options), 1e-12,
                       arrays=arrays, options=options)
        with np.errstate(all="ignore"):
            expected = edges.infinite(*arrays, weights=weights, **options)
        for k, (g, e) in enumerate(zip(grads, expected)):
            if e is not None:
                report.compare("infinite", f"gradient of operand {k}",
                               None if g is None else g.numpy(), e, 1e-12, 1e-14, arrays,
                               options)


def _kink_inputs(op, edges, rng):
    place, _ = edges.kinks
    for sample in op.check_samples():
        arrays, options = op.draw(sample, rng)
        yield place(rng, [a.copy() for a in arrays], options), options


def _check_kinks(report, op, edges, rng):
    _, convention = edges.kinks
    for arrays, options in _kink_inputs(op, edges, rng):
        weights = rng.standard_normal(_reference(op, arrays, options).shape)
        _, grads, _ = _run(op, arrays, options, weights)
        expected = convention(*arrays, weights=weights, **options)
        for k, (g, e) in enumerate(zip(grads, expected)):
            if e is not None:
                report.compare("kinks", f"gradient of operand {k}",
                               None if g is None else g.numpy(), e, 1e-12, 1e-14, arrays,
                               options)


def edge_inputs(op: OpInfo, rng: np.random.Generator):
    """(class, arrays, options) for the inputs each declared class but the shift draws: the
    ones a second oracle can be run on as they are (a shift needs exact float64 offsets)."""
    edges = op.edges
    for kind, wanted, inputs in [("zeros", edges.zeros, _zeros_inputs),
                                 ("empty", edges.empty, _empty_inputs),
                                 ("infinite", edges.infinite_at, _infinite_inputs),
                                 ("kinks", edges.kinks, _kink_inputs)]:
        if wanted:
            for arrays, options in inputs(op, edges, rng):
                yield kind, arrays, options


def edge_problems(op: OpInfo, rng: np.random.Generator) -> list[str]:
    """Every edge class `op.edges` declares, once over the entry's check samples."""
    edges, report = op.edges, _Report(op)
    with np.errstate(all="ignore"):
        for wanted, check in [(edges.shift, _check_shift), (edges.zeros, _check_zeros),
                              (edges.empty, _check_empty), (edges.infinite, _check_infinite),
                              (edges.kinks, _check_kinks)]:
            if wanted:
                check(report, op, edges, rng)
    return report.problems
