"""The differential oracles a random program must pass, and the harness that runs them.

`check_program(program)` returns a list of problems (empty when all is well):

- forward: each node's minigrad value has the dtype, shape and values of the registry's NumPy
  references run with the same dtypes;
- numeric: ∂loss/∂leaf from `mg.grad` equals float64 central differences of the same program
  evaluated in plain NumPy; it has the leaf's dtype and shape, and is None exactly when the
  leaf does not reach an output;
- paths: `mg.grad` with create_graph=True gives the same numbers as without, for every leaf and
  intermediate; `backward()` on Σ_k Σ w_k ⊙ output_k gives them too, in leaves' `.grad`, in
  what `register_hook` sees and in `retain_grad`'s `.grad` of intermediates;
- twice: a second `backward(retain_graph=True)` makes every `.grad` exactly twice the first
  and every hook sees exactly the same gradient again;
- eager: the program built again and run the plainest way, `backward()` on the weighted sum
  with no hook anywhere and no retain_graph (NumPy inputs straight through `apply`, array
  gradients, the walk's no-hook test, the graph freed after), gives the leaves' gradients;
  a second `backward()` through the freed graph is refused, and it keeps no arrays;
- device: the program on the simulated device ("sim", arrays that refuse NumPy) gives the
  same values and gradients.

`run_programs(n, seed)` draws n programs from a seeded generator and returns one `Failure`
per failing program (shrunk to the outputs it needs). `new_failures(plant, ...)` runs the same
programs with a bug planted and returns the failures the plant added. A planted-bug test is
one short function; e.g. for the engine's accumulation step:

    def test_dropped_contribution_is_caught():
        def plant(patch):                          # patch: a pytest.MonkeyPatch
            real = autograd._accumulate
            calls = itertools.count()
            patch.setattr(autograd, "_accumulate",
                          lambda *a, **k: real(*a, **k) if next(calls) % 2 else None)
        assert new_failures(plant)

(any engine internal works the same way: patch it inside `plant`; `ops=[...]` limits the
programs to registry entries that reach the code planted in, which makes them cheaper;
`enough=bool`, or whatever else the test asserts of the failures, stops the run at the first
program that settles the verdict).
"""

from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass

import numpy as np
import pytest

import minigrad as mg

from ..minigrad.simdevice import SimArray, SimBackend
from .programs import (Leaf, Program, SeededChooser, build, evaluate_numpy, generate, loss_numpy,
                       ops_named)

EPS = 1e-6                        # central-difference step (float64)


@dataclass
class Failure:
    index: int                    # which program of the run
    program: Program
    problems: list

    def __str__(self) -> str:
        shown = "\n  ".join(self.problems[:6])
        more = f"\n  ... and {len(self.problems) - 6} more" if len(self.problems) > 6 else ""
        return (f"program {self.index} ({len(self.program.nodes)} nodes: "
                f"{', '.join(self.program.ops())}):\n  {shown}{more}\n"
                f"--- program ---\n{self.program.source()}")


# ---------------------------------------------------------------------------------------------
# Tolerances: float64 programs are held tightly; a float32 value anywhere loosens the checks to
# what single precision can promise.

def _tolerance(single: bool, against_differences: bool) -> tuple[float, float]:
    """(rtol, atol per unit of the compared array's largest magnitude)."""
    if against_differences:
        return (2e-3, 2e-3) if single else (1e-5, 1e-6)
    return (1e-4, 1e-5) if single else (1e-9, 1e-11)


def _close(actual, expected, rtol, atol) -> bool:
    size = np.abs(expected)
    scale = 1.0 + float(size.max(initial=0.0))
    return bool((np.abs(actual - expected) <= atol * scale + rtol * size).all())


def _worst(actual, expected) -> str:
    """Where actual and expected differ most, for the message."""
    if actual.shape != expected.shape:
        return f"shapes {actual.shape} vs {expected.shape}"
    diff = np.abs(actual.astype(np.float64) - expected)
    at = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.size else ()
    text = f"{float(actual[at]):.10g}, expected {float(expected[at]):.10g}"
    if actual.size > 1:
        text += (f" at {tuple(int(i) for i in at)} (all: "
                 f"{np.array2string(actual, precision=6)} vs "
                 f"{np.array2string(expected, precision=6)})")
    return text


# ---------------------------------------------------------------------------------------------
# The device and the engine's global state.

def _registered(device: str) -> bool:
    try:
        mg.tensor(0.0, device=device)
    except ValueError:
        return False
    return True


_HOST = mg.Backend()


class _QuickSim(SimBackend):
    """The simulated device with the host's erf: the plain one runs erf's series operation by
    operation through the device wrapper, milliseconds a call (tests/minigrad checks it);
    here the engine's device discipline is what is under test."""

    def erf(self, array):
        return SimArray(np.asarray(_HOST.erf(array._array)))


@contextlib.contextmanager
def simulated_device():
    """The simulated device "sim" registered for the duration (if it was not already)."""
    if _registered("sim"):
        yield
        return
    mg.register_backend(_QuickSim())
    try:
        yield
    finally:
        mg.unregister_backend("sim")


# ---------------------------------------------------------------------------------------------
# The oracles.

def numeric_gradients(program: Program, leaf: int) -> np.ndarray:
    """∂loss/∂leaf, element by element, by float64 central differences of the NumPy program."""
    node = program.nodes[leaf]
    grad = np.zeros(node.value.shape)
    for index in np.ndindex(*node.value.shape):
        unit = np.zeros(node.value.shape)
        unit[index] = 1.0
        grad[index] = directional_difference(program, leaf, unit)
    return grad


def directional_difference(program: Program, leaf: int, direction: np.ndarray,
                           eps: float = EPS) -> float:
    """(loss(x + εu) − loss(x − εu)) / 2ε for leaf x moved along u, in float64 NumPy."""
    value = program.nodes[leaf].value
    up = loss_numpy(program, {leaf: value + eps * direction})
    down = loss_numpy(program, {leaf: value - eps * direction})
    return (up - down) / (2 * eps)


def _directions(leaf: Leaf, index: int) -> list[np.ndarray]:
    """Unit vectors for a leaf of up to 3 elements; else two fixed random directions (any
    wrong element shows in both unless its error happens to be orthogonal to them)."""
    shape = leaf.value.shape
    if leaf.value.size <= 3:
        units = []
        for position in np.ndindex(*shape):
            unit = np.zeros(shape)
            unit[position] = 1.0
            units.append(unit)
        return units
    rng = np.random.default_rng(index)
    return [rng.standard_normal(shape) for _ in range(2)]


class _Checker:
    """The oracles on one program; `run` applies them all and returns the problems."""

    def __init__(self, program: Program, device: str):
        self.program, self.device = program, device
        self.problems: list[str] = []
        self.flags = program.requires_grad()
        self.live = program.reaches_outputs()
        self.grad_nodes = [i for i, f in enumerate(self.flags) if f]
        self.typed = evaluate_numpy(program, exact=False)
        self.stage = "forward"                     # the oracle running, for an exception
        self.single = any(v.dtype == np.float32 for v in self.typed)

    def fail(self, oracle: str, message: str) -> None:
        self.problems.append(f"[{oracle}] {message}")

    def _name(self, i: int) -> str:
        kind = "leaf" if isinstance(self.program.nodes[i], Leaf) else "value"
        return f"{kind} v{i}"

    def roots(self, tensors):
        return [tensors[i] for i in self.program.outputs]

    def weights(self, device):
        return [mg.tensor(w, dtype=np.float64, device=device) for w in self.program.weights]

    # forward -------------------------------------------------------------------------------
    def check_forward(self, tensors) -> None:
        rtol, atol = _tolerance(self.single, False)
        rtol, atol = rtol * 10, atol * 10          # two implementations of each op
        for i, (t, expected) in enumerate(zip(tensors, self.typed)):
            if not isinstance(t, mg.Tensor):
                self.fail("forward", f"v{i} is a {type(t).__name__}, not a Tensor")
                continue
            if t.dtype != expected.dtype or tuple(t.shape) != expected.shape:
                self.fail("forward", f"v{i}: {t.dtype} {tuple(t.shape)}, the NumPy reference "
                                     f"gives {expected.dtype} {expected.shape}")
                continue
            if not _close(t.numpy().astype(np.float64), expected.astype(np.float64), rtol, atol):
                self.fail("forward", f"v{i} differs from the NumPy reference: "
                                     f"{_worst(t.numpy(), expected)}")
            if bool(t.requires_grad) != self.flags[i]:
                self.fail("forward", f"v{i}.requires_grad is {t.requires_grad}, expected "
                                     f"{self.flags[i]}")

    # gradients -----------------------------------------------------------------------------
    def gradients(self, tensors, **options) -> dict:
        found = mg.grad(self.roots(tensors), [tensors[i] for i in self.grad_nodes],
                        grad_outputs=self.weights(tensors[0].device), allow_unused=True,
                        **options)
        return {i: g for i, g in zip(self.grad_nodes, found)}

    def check_gradient_form(self, oracle, i, g, tensor) -> bool:
        """g is None exactly when node i does not reach an output; else a Tensor of the node's
        dtype, shape and device."""
        if g is None:
            if self.live[i]:
                self.fail(oracle, f"{self._name(i)} reaches an output but got no gradient")
            return False
        if not self.live[i]:
            self.fail(oracle, f"{self._name(i)} reaches no output but got a gradient")
            return False
        if g.dtype != tensor.dtype or tuple(g.shape) != tuple(tensor.shape) or \
                g.device != tensor.device:
            self.fail(oracle, f"{self._name(i)} ({tensor.dtype} {tuple(tensor.shape)} on "
                              f"{tensor.device}) got a gradient {g.dtype} {tuple(g.shape)} on "
                              f"{g.device}")
            return False
        return True

    def compare(self, oracle, what, actual: np.ndarray, expected: np.ndarray) -> None:
        rtol, atol = _tolerance(self.single, False)
        if not _close(actual.astype(np.float64), expected.astype(np.float64), rtol, atol):
            self.fail(oracle, f"{what}: {_worst(actual, expected)}")

    def check_handed_out_apart(self, tensors, plain) -> None:
        """The gradients mg.grad returns share memory with one another and with the program's
        values no more than those values share among themselves (a reshape's output may view
        its input; a gradient handed out must be the caller's own). Two nodes that are one
        tensor (a cast to its own dtype hands back its operand) get one gradient, twice."""
        found = [plain[i] for i in self.grad_nodes]
        same = {(a, b) for a, i in enumerate(self.grad_nodes)
                for b, j in enumerate(self.grad_nodes) if a < b and tensors[i] is tensors[j]}
        shared = {(i, j) for i, j in _sharing(found + list(tensors))
                  if i < len(found) and (i, j) not in same}
        if shared:
            names = [f"∂/∂{self._name(i)}" for i in self.grad_nodes] + \
                [self._name(i) for i in range(len(tensors))]
            self.fail("numeric", "mg.grad handed out arrays that share memory: " + ", ".join(
                sorted(f"{names[i]} and {names[j]}" for i, j in shared)))

    def check_numeric(self, tensors, plain) -> dict:
        """Leaf gradients against central differences along a few directions (each element of
        a small leaf); returns every node's gradient as an array (None where there is none)."""
        rtol, atol = _tolerance(self.single, True)
        arrays = {}
        for i in self.grad_nodes:
            g = plain[i]
            arrays[i] = g.numpy() if self.check_gradient_form("numeric", i, g, tensors[i]) \
                else None
            node = self.program.nodes[i]
            if not isinstance(node, Leaf) or arrays[i] is None:
                continue
            analytic = arrays[i].astype(np.float64)
            scale = 1.0 + float(np.abs(analytic).max(initial=0.0)) * math.sqrt(analytic.size)
            for u in _directions(node, i):
                numeric = directional_difference(self.program, i, u)
                along = float(np.sum(analytic * u))
                if abs(along - numeric) > atol * scale + rtol * abs(numeric) and \
                        self._smooth_along(i, u, numeric, atol * scale, rtol):
                    expected = numeric_gradients(self.program, i)
                    self.fail("numeric", f"∂loss/∂v{i} differs from central differences: "
                                         f"{_worst(arrays[i], expected)}")
                    break
        return arrays

    def _smooth_along(self, leaf: int, u, numeric: float, atol: float, rtol: float) -> bool:
        """Does the central difference with a ten times smaller step agree with `numeric`?
        Where the loss is smooth both estimate one derivative; where a jump lies within the
        step (a rounding op's input that sits on a whole number only up to rounding, as
        trunc(cos(x, x)) does) they differ tenfold, and central differences say nothing."""
        finer = directional_difference(self.program, leaf, u, EPS / 10)
        return abs(finer - numeric) <= atol + rtol * abs(numeric)

    def check_recorded(self, tensors, arrays) -> None:
        recorded = self.gradients(tensors, create_graph=True)
        for i in self.grad_nodes:
            g = recorded[i]
            if self.check_gradient_form("paths", i, g, tensors[i]) and arrays[i] is not None:
                self.compare("paths", f"∂loss/∂v{i} with create_graph=True vs without",
                             g.numpy(), arrays[i])

    def check_backward_twice(self, tensors, arrays) -> None:
        """backward() on the weighted sum, with a hook on every node and retain_grad on every
        intermediate; then a second backward through the retained graph."""
        seen: dict[int, list] = {i: [] for i in self.grad_nodes}
        for i in self.grad_nodes:
            tensors[i].register_hook(lambda g, i=i: seen[i].append(g.numpy().copy()))
            if not tensors[i].is_leaf:
                tensors[i].retain_grad()
        total = None
        for root, w in zip(self.roots(tensors), self.weights("cpu")):
            term = (root * w).sum()
            total = term if total is None else total + term
        total.backward(retain_graph=True)
        first = {}
        for i in self.grad_nodes:
            g = tensors[i].grad
            if not self.check_gradient_form("paths", i, g, tensors[i]):
                continue
            first[i] = g.numpy().copy()
            if arrays[i] is not None:
                self.compare("paths", f"{self._name(i)}.grad after backward() vs mg.grad",
                             first[i], arrays[i])
            if len(seen[i]) != 1 or not np.array_equal(seen[i][0], first[i]):
                self.fail("paths", f"the hook on {self._name(i)} saw {seen[i]}, its .grad "
                                   f"is {first[i]}")
        total.backward(retain_graph=True)
        for i, g1 in first.items():
            g = tensors[i].grad
            g2 = None if g is None else g.numpy()
            if g2 is None or not np.array_equal(g2, 2 * g1):
                self.fail("twice", f"{self._name(i)}.grad after two backward(retain_graph="
                                   f"True): {g2}, expected exactly 2 × {g1}")
            if len(seen[i]) != 2 or not np.array_equal(seen[i][1], seen[i][0]):
                self.fail("twice", f"the hook on {self._name(i)} saw {seen[i]} over two "
                                   f"backward passes")

    def _weighted_total(self, tensors):
        total = None
        for root, w in zip(self.roots(tensors), self.weights("cpu")):
            term = (root * w).sum()
            total = term if total is None else total + term
        return total

    def check_eager(self, arrays) -> None:
        tensors = build(self.program, "cpu")
        total = self._weighted_total(tensors)
        with pytest.MonkeyPatch.context() as patch:     # none of these tensors has a hook
            patch.setattr(mg.Tensor, "_hooks_used", False)
            total.backward()
            for i in self.grad_nodes:
                if not isinstance(self.program.nodes[i], Leaf) or arrays[i] is None:
                    continue
                g = tensors[i].grad
                if self.check_gradient_form("eager", i, g, tensors[i]):
                    self.compare("eager", f"{self._name(i)}.grad after a plain backward() vs "
                                          f"mg.grad", g.numpy(), arrays[i])
            self.check_grads_kept_apart(tensors)
        self.check_freed(total)

    def check_grads_kept_apart(self, tensors) -> None:
        """The .grads a backward() set share memory with no other .grad and no leaf, and the
        caller keeping them sees them unchanged by a later backward() over the same leaves
        (which adds into .grad)."""
        leaves = [t for t, node in zip(tensors, self.program.nodes) if isinstance(node, Leaf)]
        kept = [(k, t.grad, t.grad.numpy().copy()) for k, t in enumerate(leaves)
                if t.grad is not None]
        self._check_apart(leaves, "after a plain backward()")
        again = []
        for node, t in zip(self.program.nodes, tensors):     # the same leaves, new operations
            again.append(t if isinstance(node, Leaf) else
                         node.op.call(*(again[j] for j in node.operands), **node.options))
        try:
            self._weighted_total(again).backward()
        except Exception as error:                      # noqa: BLE001 - any raise is a finding
            self.fail("eager", f"a backward() over the same leaves again raised {error}")
            return
        self._check_apart(leaves, "after a second backward() adding into them")
        for k, grad, value in kept:
            if not _same(grad.numpy(), value):
                self.fail("eager", f".grad of leaf {k} kept by the caller changed by a later "
                                   f"backward(): {_worst(grad.numpy(), value)}")

    def _check_apart(self, leaves, when: str) -> None:
        shared = _sharing([t.grad for t in leaves] + leaves)
        if shared:
            self.fail("eager", f"{when}: arrays that share memory (.grad of leaf k: k, leaf k: "
                               f"{len(leaves)} + k): {sorted(shared)}")

    def check_freed(self, total) -> None:
        try:
            total.backward()
        except RuntimeError as error:
            if "a second time" not in str(error):
                self.fail("eager", f"a second backward() raised {error}")
        else:
            self.fail("eager", "a second backward() through the freed graph was not refused")
        fn, kept = total.grad_fn, []
        seen, stack = set(), [fn]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if node._freed:          # a node the walk ran (one whose gradient was None is not)
                kept += [x for x in node.inputs
                         if isinstance(x, mg.Tensor) and not (x.is_leaf and x.requires_grad)]
            stack += [x._fn for x in node.inputs]
        if kept:
            self.fail("eager", f"the freed graph still holds {len(kept)} tensor(s) with values")

    def check_device(self, tensors, arrays) -> None:
        other = build(self.program, self.device)
        for i, (t, host) in enumerate(zip(other, tensors)):
            if t.device != self.device or t.dtype != host.dtype:
                self.fail("device", f"v{i} on {self.device}: {t.dtype} on {t.device}, on the "
                                    f"host {host.dtype}")
            else:
                self.compare("device", f"v{i} on {self.device} vs the host", t.numpy(),
                             host.numpy())
        found = self.gradients(other)
        for i in self.grad_nodes:
            g = found[i]
            if self.check_gradient_form("device", i, g, other[i]) and arrays[i] is not None:
                self.compare("device", f"∂loss/∂v{i} on {self.device} vs the host", g.numpy(),
                             arrays[i])

    def _merge_aliases(self, tensors) -> None:
        """A step may hand back its operand itself (a cast to the same dtype, a reshape to the
        same shape): both nodes are then one tensor, which reaches an output if either does."""
        live_ids = {id(t) for t, live in zip(tensors, self.live) if live}
        self.live = [id(t) in live_ids for t in tensors]

    def run(self) -> list[str]:
        self.stage = "forward"
        tensors = build(self.program, "cpu")
        self._merge_aliases(tensors)
        self.check_forward(tensors)
        self.stage = "numeric"
        plain = self.gradients(tensors, retain_graph=True)
        self.check_handed_out_apart(tensors, plain)
        arrays = self.check_numeric(tensors, plain)
        self.stage = "paths"
        self.check_recorded(tensors, arrays)
        self.check_backward_twice(tensors, arrays)     # the same graph, retained so far
        self.stage = "eager"
        self.check_eager(arrays)
        if self.device is not None:
            self.stage = "device"
            self.check_device(tensors, arrays)
        return self.problems


def check_program(program: Program, device: str | None = "sim") -> list[str]:
    """Every oracle on one program; the problems found (an exception counts as one, under the
    oracle that was running)."""
    checker = _Checker(program, device)
    with simulated_device(), np.errstate(all="ignore"):
        try:
            checker.run()
        except Exception as error:                 # noqa: BLE001 - any raise is a finding
            checker.fail(checker.stage, f"raised {type(error).__name__}: {error}")
    return checker.problems


# ---------------------------------------------------------------------------------------------
# Runs of many programs.

def program_at(seed: int, index: int, ops=None) -> Program:
    """Program `index` of the run seeded `seed`: the same program on every machine."""
    chooser = SeededChooser(np.random.default_rng([seed, index]))
    return generate(chooser, None if ops is None else ops_named(ops))


def shrink(program: Program, device: str | None = "sim") -> Program:
    """Drop outputs (and what only they need) while the program still fails."""
    k = 0
    while len(program.outputs) > 1 and k < len(program.outputs):
        candidate = program.pruned([j for j in range(len(program.outputs)) if j != k])
        if check_program(candidate, device):
            program = candidate
        else:
            k += 1
    return program


def run_programs(n: int, seed: int = 0, ops=None, device: str | None = "sim",
                 shrink_first: int = 3) -> list[Failure]:
    """Programs 0 … n−1 of the run seeded `seed` (drawn from the registry entries named in
    `ops`, default all), each through every oracle. Returns one Failure per failing program;
    the first `shrink_first` of them shrunk."""
    failures = []
    for index in range(n):
        program = program_at(seed, index, ops)
        problems = check_program(program, device)
        if problems:
            if len(failures) < shrink_first:
                program = shrink(program, device)
                problems = check_program(program, device) or problems
            failures.append(Failure(index, program, problems))
    return failures


def new_failures(plant, n: int = 150, seed: int = 0, ops=None, enough=None) -> list[Failure]:
    """The failures of `run_programs(n, seed, ops)` with a bug planted by `plant(patch)`
    (patch: a pytest.MonkeyPatch, undone afterwards) that the same run without it does not
    have: programs that already fail (a bug the engine has today) prove nothing about the
    plant. `enough`, when given, is what the test asserts of the failures (true of more
    failures whenever it is true of fewer): the run stops at the first program after which it
    holds, and the test's verdict is the one the whole run would give."""
    return _added_by_plant(check_program, plant, n, seed, ops, enough)


def _added_by_plant(check, plant, n: int, seed: int, ops, enough) -> list[Failure]:
    """The failures `check` (program -> problems) finds in programs 0 … n−1 with the plant in
    place and not without it; each program failing with the plant is checked again without."""
    ops = None if ops is None else tuple(ops)
    found, stopped = [], False
    with pytest.MonkeyPatch.context() as patch:
        plant(patch)
        for index in range(n):
            program = program_at(seed, index, ops)
            problems = check(program)
            if problems:
                found.append(Failure(index, program, problems))
                if enough is not None and enough(found):
                    stopped = True
                    break
    added = [f for f in found if not _fails_unplanted(check, seed, f.index, ops)]
    if stopped and not enough(added):     # one was a failure without the plant: run them all
        return _added_by_plant(check, plant, n, seed, ops, None)
    return added


@functools.lru_cache(maxsize=None)
def _fails_unplanted(check, seed: int, index: int, ops: tuple | None) -> bool:
    return bool(check(program_at(seed, index, ops)))


# ---------------------------------------------------------------------------------------------
# The compiled-step arm: the program as a training step under minigrad.compile, called several
# times with its parameters updated in between, against the same calls made eagerly.

COMPILED_CALLS = 5                 # call 1 eager, call 2 captured, calls 3+ replayed


def _compiled_setup(program: Program):
    """Parameters (leaves that require grad, read from outside the step, every other one) and
    the step; the other leaves come in as arguments."""
    params = {i: mg.tensor(node.value.astype(node.dtype), dtype=node.dtype, requires_grad=True)
              for n, (i, node) in enumerate((i, node) for i, node in enumerate(program.nodes)
                                            if isinstance(node, Leaf) and node.requires_grad)
              if n % 2 == 0}
    weights = [mg.tensor(w, dtype=np.float64) for w in program.weights]

    def step(*args):
        tensors, given = [], iter(args)
        for i, node in enumerate(program.nodes):
            if isinstance(node, Leaf):
                tensors.append(params[i] if i in params else next(given))
            else:
                tensors.append(node.op.call(*(tensors[j] for j in node.operands),
                                            **node.options))
        total = None
        for i, w in zip(program.outputs, weights):
            term = (tensors[i] * w).sum()
            total = term if total is None else total + term
        if total.requires_grad:
            total.backward()
        return [tensors[i] for i in program.outputs], total

    return params, step


def _arguments(program: Program, params: dict, call: int) -> list:
    """Fresh argument tensors for one call, their values moved a little from call to call."""
    args = []
    for i, node in enumerate(program.nodes):
        if isinstance(node, Leaf) and i not in params:
            # elements rotated (masks, orders and maxima move) and scaled toward 0: the values
            # stay in the leaf's domain
            value = np.roll(node.value, call).reshape(node.value.shape) * (1.0 - 0.01 * call)
            args.append(mg.tensor(value.astype(node.dtype), dtype=node.dtype,
                                  requires_grad=node.requires_grad))
    return args


def _same(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and \
        np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def _live_update(params: dict, hyper: dict, zero_grads: bool):
    """The optimizer inside the step: clearing the gradients (when the arm clears them) and an
    SGD update with the learning rate in `hyper`, each marked to run live at every replay."""
    @mg.compiler.disable
    def zero_grad():
        for p in params.values():
            p.grad = None

    @mg.compiler.disable
    @mg.no_grad()
    def update():
        for p in params.values():
            if p.grad is not None:
                p.sub_(hyper["lr"] * p.grad)

    return (zero_grad if zero_grads else None), update


def _compiled_calls(program: Program, compiled: bool, zero_grads: bool, inside: bool = False):
    """The results of every call: (outputs, loss, each argument's and parameter's .grad) as
    NumPy arrays, the output Tensors themselves, and the step. With `inside`, the optimizer
    (clearing and the update) is in the step, live, with a learning rate changed every call."""
    params, step = _compiled_setup(program)
    hyper = {"lr": 0.125}
    if inside:
        zero_grad, update = _live_update(params, hyper, zero_grads)
        inner = step

        def step(*args):
            if zero_grad is not None:
                zero_grad()
            result = inner(*args)
            update()
            return result
    run = mg.compile(step) if compiled else step
    results, handed_out = [], []
    for call in range(COMPILED_CALLS):
        args = _arguments(program, params, call)
        if zero_grads and not inside:
            for p in params.values():
                p.grad = None
        outputs, total = run(*args)
        leaves = args + list(params.values())
        kept_grads = [t.grad for t in leaves]
        handed_out.append((outputs, kept_grads))
        grads = [None if g is None else g.numpy() for g in kept_grads]
        results.append(([o.numpy() for o in outputs], total.numpy(), grads,
                        _sharing(list(outputs) + [total] + kept_grads + leaves)))
        if inside:
            hyper["lr"] *= 0.75                  # a schedule, read by the replayed update
            continue
        with mg.no_grad():                       # the optimizer's in-place update
            for p in params.values():
                if p.grad is not None:
                    p.sub_(0.125 * p.grad)
    return results, handed_out, run


def _sharing(tensors: list) -> set:
    """The pairs (i, j) of the tensors (None skipped) whose arrays share memory (a simulated
    device's array: the NumPy array it wraps)."""
    arrays = [None if t is None else getattr(t.data, "_array", t.data) for t in tensors]
    return {(i, j) for i, a in enumerate(arrays) for j in range(i + 1, len(arrays))
            if a is not None and arrays[j] is not None and np.may_share_memory(a, arrays[j])}


def check_compiled(program: Program, inside: bool = False) -> tuple[list[str], str | None]:
    """The program as a compiled step against the same step run eagerly, exactly: every output,
    loss and gradient of every call, outputs and .grads handed out earlier unchanged by later
    calls, and no array shared among outputs, .grads and leaves that eager's do not share
    (with `inside`, the optimizer step made inside the step). Returns the problems, and why
    the step was not replayed (None when it was)."""
    zero_grads = len(program.nodes) % 2 == 0       # else gradients accumulate over calls
    problems: list[str] = []
    with simulated_device(), np.errstate(all="ignore"):
        try:
            eager, eager_out, _ = _compiled_calls(program, False, zero_grads, inside)
        except Exception as error:                 # noqa: BLE001 - the eager oracles' business
            return [], f"the eager step raises {type(error).__name__}"
        try:
            compiled, handed_out, run = _compiled_calls(program, True, zero_grads, inside)
        except Exception as error:                 # noqa: BLE001 - any raise is a finding
            return [f"[compiled] raised {type(error).__name__}: {error}"], None
    if run.stats.replays == 0:
        return [], run.stats.reasons[-1] if run.stats.reasons else "not replayed"
    for call, ((outs, total, grads, shared), (outs_c, total_c, grads_c, shared_c)) in \
            enumerate(zip(eager, compiled)):
        if shared_c - shared:           # a .grad shared with an output, another .grad, a leaf
            problems.append(f"[compiled] call {call}: arrays that share memory where eager's "
                            f"do not (outputs, loss, .grads, leaves): {sorted(shared_c - shared)}")
        for k, (a, b) in enumerate(zip(outs, outs_c)):
            if not _same(a, b):
                problems.append(f"[compiled] call {call}: output {k} {_worst(b, a)}")
        if not _same(total, total_c):
            problems.append(f"[compiled] call {call}: loss {total_c} vs eager {total}")
        for k, (a, b) in enumerate(zip(grads, grads_c)):
            if (a is None) != (b is None) or (a is not None and not _same(a, b)):
                problems.append(f"[compiled] call {call}: .grad of leaf {k}: "
                                f"{b if b is None or a is None else _worst(b, a)}")
        (outputs, kept_grads), (eager_outputs, _) = handed_out[call], eager_out[call]
        for k, (mine, theirs) in enumerate(zip(outputs, eager_outputs)):
            if not _same(mine.numpy(), theirs.numpy()):   # later calls changed one of them
                problems.append(f"[compiled] call {call}: output {k} after the last call: "
                                f"{_worst(mine.numpy(), theirs.numpy())}")
        for k, (kept, value) in enumerate(zip(kept_grads, grads_c)):
            if kept is not None and not _same(kept.numpy(), value):   # written in place later
                problems.append(f"[compiled] call {call}: .grad of leaf {k} kept by the caller, "
                                f"after the last call: {_worst(kept.numpy(), value)}")
    return problems, None


def run_compiled(n: int, seed: int = 0, ops=None,
                 inside: bool = False) -> tuple[list[Failure], dict]:
    """Programs 0 … n−1 of the run seeded `seed` through `check_compiled`: the failures, and
    how many programs were replayed or not, with the reasons."""
    failures, counts = [], {"replayed": 0}
    for index in range(n):
        program = program_at(seed, index, ops)
        problems, skipped = check_compiled(program, inside)
        if skipped is not None:
            counts[skipped] = counts.get(skipped, 0) + 1
            continue
        counts["replayed"] += 1
        if problems:
            failures.append(Failure(index, program, problems))
    return failures, counts


def _replay_problems(program: Program) -> list[str]:
    return check_compiled(program)[0]


def _replay_problems_inside(program: Program) -> list[str]:
    return check_compiled(program, inside=True)[0]


def new_compiled_failures(plant, n: int = 60, seed: int = 0, ops=None, inside: bool = False,
                          enough=None) -> list[Failure]:
    """`new_failures` for the compiled-step arm (with `inside`, its optimizer inside)."""
    check = _replay_problems_inside if inside else _replay_problems
    return _added_by_plant(check, plant, n, seed, ops, enough)
