"""The differential fuzzer: random programs drawn from the registry, each through every oracle
of harness.py (forward against NumPy, gradients against central differences, backward() vs
mg.grad vs create_graph vs hooks and retain_grad, two backward passes, the simulated device).

Derandomized, so every run checks the same programs. For a long run:

    MINIGRAD_FUZZ_EXAMPLES=100000 python -m pytest tests/fuzz/test_fuzz.py

and MINIGRAD_FUZZ_SEED=<int> draws a different set. A failure prints the shrunk program as
Python that rebuilds it.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import minigrad as mg

from .harness import check_program, program_at
from .programs import ByteChooser, ProgramBuilder, Step, evaluate_numpy, generate
from .registry import REGISTRY

EXAMPLES = int(os.environ.get("MINIGRAD_FUZZ_EXAMPLES", "1000"))
SEED = os.environ.get("MINIGRAD_FUZZ_SEED")


@st.composite
def programs(draw, ops=None):
    """A program whose every choice is read from bytes hypothesis draws (and shrinks)."""
    return generate(ByteChooser(draw(st.binary(min_size=32, max_size=160))), ops)


def _fuzz(test):
    test = settings(max_examples=EXAMPLES, deadline=None, derandomize=SEED is None,
                    database=None, suppress_health_check=list(HealthCheck))(test)
    return test if SEED is None else seed(int(SEED))(test)


@_fuzz
@given(programs())
def test_random_programs_pass_every_oracle(program):
    problems = check_program(program)
    assert not problems, "\n".join(problems) + "\n--- program ---\n" + program.source()


def test_programs_reach_what_the_oracles_are_for():
    """The generator's programs, counted: fan-out of 3 or more, 0-d values read 3 or more
    times, reused intermediates (all counting only reads whose gradient reaches the value),
    0-d results of reductions and indexing, float32 meeting float64, several outputs; every
    registry entry drawn; no value read more than 5 times."""
    programs = [program_at(0, k) for k in range(800)]
    counts = dict.fromkeys(["fan-out ≥ 3", "0-d fan-out ≥ 3", "intermediate reused",
                            "0-d result", "float32 and float64", "several outputs"], 0)
    drawn = set()
    for program in programs:
        assert max(program.uses()) <= 5, program
        uses = program.uses(live_only=True)
        values = evaluate_numpy(program, exact=False)
        steps = [i for i, node in enumerate(program.nodes) if isinstance(node, Step)]
        counts["fan-out ≥ 3"] += max(uses) >= 3
        counts["0-d fan-out ≥ 3"] += any(u >= 3 and values[i].ndim == 0
                                         for i, u in enumerate(uses))
        counts["intermediate reused"] += any(uses[i] >= 2 for i in steps)
        counts["0-d result"] += any(values[i].ndim == 0 and all(
            values[j].ndim for j in program.nodes[i].operands) for i in steps)
        counts["float32 and float64"] += len({v.dtype for v in values}) == 2
        counts["several outputs"] += len(program.outputs) >= 2
        drawn.update(program.ops())
    share = {k: v / len(programs) for k, v in counts.items()}
    wanted = {"fan-out ≥ 3": 0.45, "0-d fan-out ≥ 3": 0.2, "intermediate reused": 0.3,
              "0-d result": 0.15, "float32 and float64": 0.4, "several outputs": 0.6}
    assert all(share[k] >= v for k, v in wanted.items()), share
    assert drawn == {op.name for op in REGISTRY}, {op.name for op in REGISTRY} - drawn


# ---------------------------------------------------------------------------------------------
# The 0-d fan-out cases, checked directly: a 0-d value read three or more times.

def _cube():
    b = ProgramBuilder()
    x = b.leaf(2.0)
    return b.program([b.step("mul", b.step("mul", x, x), x)])


def _triple_sum():
    b = ProgramBuilder()
    x = b.leaf(2.0)
    return b.program([b.step("add", b.step("add", x, x), x)])


def _loss_plus_half_square():
    """l + 0.5·l² for a 0-d loss l = Σ v²: l is read twice by the loss and once inside l²."""
    b = ProgramBuilder()
    v = b.leaf([0.5, -1.0, 2.0])
    l = b.step("sum", b.step("mul", v, v), axis=None, keepdims=False)
    half_square = b.step("mul_scalar", b.step("pow_scalar", l, p=2), c=0.5)
    return b.program([b.step("add", l, half_square)])


def _read_three_times():
    """v[0] read three times, then the three reads multiplied."""
    b = ProgramBuilder()
    v = b.leaf([1.5, -0.5])
    reads = [b.step("getitem", v, index=0) for _ in range(3)]
    return b.program([b.step("mul", b.step("mul", reads[0], reads[1]), reads[2])])


def _one_read_used_three_times():
    b = ProgramBuilder()
    v = b.leaf([1.5, -0.5])
    u = b.step("getitem", v, index=0)
    return b.program([b.step("add", b.step("mul", u, u), u)])


def _indexed_and_scaled():
    """x[()] and 2·x as two outputs: an indexing gradient meets an ordinary one at a 0-d x."""
    b = ProgramBuilder()
    x = b.leaf(0.5)
    return b.program([b.step("getitem", x, index=()), b.step("mul_scalar", x, c=2.0)])


ZERO_D_FAN_OUT = {"x*x*x": _cube, "x+x+x": _triple_sum, "l+0.5*l**2": _loss_plus_half_square,
                  "v[0]*v[0]*v[0]": _read_three_times, "u=v[0]; u*u+u": _one_read_used_three_times,
                  "x[()], 2*x": _indexed_and_scaled}


@pytest.mark.parametrize("case", list(ZERO_D_FAN_OUT))
def test_zero_d_fan_out_passes_every_oracle(case):
    program = ZERO_D_FAN_OUT[case]()
    problems = check_program(program)
    assert not problems, "\n".join(problems)


def _closed_form_cases():
    """(name, f(leaf) -> 0-d loss, leaf value, ∂loss/∂leaf worked by hand)."""
    v = np.array([0.5, -1.0, 2.0])
    lv = float(v @ v)                                   # l = Σ v²

    def loss_plus_half_square(x):
        l = (x * x).sum()
        return l + 0.5 * l ** 2

    def one_read_used_three_times(x):
        u = x[0]
        return u * u + u

    return [("x*x*x", lambda x: x * x * x, 2.0, 12.0),                   # 3x²
            ("x+x+x", lambda x: x + x + x, 2.0, 3.0),
            ("l+0.5*l**2", loss_plus_half_square, v, (1 + lv) * 2 * v),  # (1 + l)·2v
            ("v[0]*v[0]*v[0]", lambda x: x[0] * x[0] * x[0], [1.5, -0.5], [3 * 1.5 ** 2, 0.0]),
            ("u=v[0]; u*u+u", one_read_used_three_times, [1.5, -0.5], [2 * 1.5 + 1, 0.0])]


@pytest.mark.parametrize("name, f, value, expected", _closed_form_cases(),
                         ids=[case[0] for case in _closed_form_cases()])
def test_zero_d_fan_out_closed_forms(name, f, value, expected):
    """The same cases against their derivatives worked by hand, through backward() and
    mg.grad (plain and recorded)."""
    x = mg.tensor(np.asarray(value, dtype=np.float64), requires_grad=True)
    f(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12, err_msg="backward()")
    x = mg.tensor(np.asarray(value, dtype=np.float64), requires_grad=True)
    for create_graph in (False, True):
        (g,) = mg.grad(f(x), x, create_graph=create_graph)
        np.testing.assert_allclose(g.numpy(), expected, rtol=1e-12,
                                   err_msg=f"mg.grad, create_graph={create_graph}")


def test_zero_d_read_by_index_and_by_an_op_as_two_outputs():
    x = mg.tensor(np.float64(0.5), requires_grad=True)
    (g,) = mg.grad([x[()], 2 * x], [x])
    assert g.item() == 3.0
