"""The compiled-step arm of the fuzzer: each random program run as a training step under
`minigrad.compile` (parameters read from outside and updated in place between calls, the other
leaves passed in fresh each call), called eagerly, captured and replayed, and required to give
exactly (bit for bit) the outputs, loss and gradients of the same calls made eagerly; and the
bugs planted in the replay that the arm must catch.

    MINIGRAD_FUZZ_COMPILED=5000 python -m pytest -q tests/fuzz/test_compiled.py   # longer
"""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

import minigrad as mg
from minigrad import compiled as compiled_module
from minigrad.gradients import IndexedGradient

from .harness import new_compiled_failures, run_compiled

PROGRAMS = int(os.environ.get("MINIGRAD_FUZZ_COMPILED", "60"))
SEED = int(os.environ.get("MINIGRAD_FUZZ_SEED", "0"))
ARITHMETIC = ["mul", "add", "sum", "getitem", "tanh", "matmul"]


def test_random_programs_replay_exactly():
    failures, counts = run_compiled(PROGRAMS, SEED)
    assert not failures, "\n\n".join(str(f) for f in failures[:3])
    # the arm must reach the replay for most programs, not refuse them all
    assert counts["replayed"] >= 0.8 * PROGRAMS, counts


def test_random_programs_replay_exactly_with_the_optimizer_step_inside():
    """The same programs with clearing and an SGD update inside the step, run live at every
    replay (mg.compiler.disable), the learning rate changed between calls."""
    failures, counts = run_compiled(PROGRAMS // 2, SEED, inside=True)
    assert not failures, "\n\n".join(str(f) for f in failures[:3])
    assert counts["replayed"] >= 0.8 * (PROGRAMS // 2), counts


def test_a_skipped_live_call_is_caught():
    """The optimizer's live call recorded but not made at replay."""
    def plant(patch):
        patch.setattr(compiled_module._Writer, "_live", lambda writer, call: None)
    assert new_compiled_failures(plant, n=20, ops=ARITHMETIC, inside=True, enough=bool)


def test_a_live_call_with_its_learning_rate_frozen_is_caught():
    """The live update replayed with the learning rate it read at capture."""
    real = compiled_module._Writer._live

    def frozen(writer, call):
        fn, args, kwargs, mode = writer.program.lives[call]
        inner = inspect.unwrap(fn)
        cells = [c.cell_contents for c in getattr(inner, "__closure__", None) or ()]
        hyper = next((c for c in cells if isinstance(c, dict) and "lr" in c), None)
        if hyper is not None:
            captured = dict(hyper)

            def with_frozen_lr(*a, **k):
                now = dict(hyper)
                hyper.update(captured)
                try:
                    return fn(*a, **k)
                finally:
                    hyper.update(now)
            writer.program.lives[call] = (with_frozen_lr, args, kwargs, mode)
        real(writer, call)

    def plant(patch):
        patch.setattr(compiled_module._Writer, "_live", frozen)
    assert new_compiled_failures(plant, n=20, ops=ARITHMETIC, inside=True, enough=bool)


def test_a_wrong_accumulation_kind_is_caught():
    """The second gradient of a value added in place into the first, which may be shared
    (Add hands one array to both inputs), instead of into a new buffer."""
    real = compiled_module._owned_copy

    def plant(patch):                  # "copy" replayed as "add": no buffer of the walk's own
        patch.setattr(compiled_module, "_owned_copy",
                      lambda g: real(g) if type(g) is IndexedGradient else g)
    assert new_compiled_failures(plant, n=30, ops=ARITHMETIC, enough=bool)


def test_a_skipped_conform_is_caught():
    """Gradients not summed back to their input's shape (nor cast to its dtype)."""
    def plant(patch):
        patch.setattr(compiled_module, "_conform",
                      lambda g, conform, x, name: g.data if isinstance(g, mg.Tensor) else g)
    assert new_compiled_failures(plant, n=30, ops=["add", "mul", "sum", "tanh"], enough=bool)


def test_a_stale_parameter_is_caught():
    """Tensors from outside the step read as they were at capture, not live."""
    def frozen(t):
        copy = mg.Tensor._from_array(t.data.copy())
        copy._requires_grad = t._requires_grad
        return copy

    def plant(patch):
        patch.setattr(compiled_module, "_external", frozen)
    assert new_compiled_failures(plant, n=30, ops=ARITHMETIC, enough=bool)


def test_a_reused_buffer_still_live_is_caught():
    """Each operation's output written into the array it had at the previous replay, which the
    caller may still hold (an output handed out) or a backward may still need."""
    kept: dict = {}                      # (program, value) -> the array of the last replay

    def reuse(where, array):
        old = kept.get(where)
        if type(old) is np.ndarray and type(array) is np.ndarray and old.shape == array.shape \
                and old.dtype == array.dtype and old.flags.writeable and \
                not np.may_share_memory(old, array):
            old[...] = array
            array = old
        kept[where] = array
        return array

    real = compiled_module._Writer._keep

    def keep(writer, k):               # each operation's result written into the last one's
        writer.name("_reuse", reuse)
        writer.emit(f"v{k} = _reuse(({id(writer.program)}, {k}), v{k})", 3)
        real(writer, k)

    def plant(patch):
        kept.clear()
        patch.setattr(compiled_module._Writer, "_keep", keep)
    assert new_compiled_failures(plant, n=30, ops=ARITHMETIC, enough=bool)


def test_a_formula_given_its_inputs_in_the_wrong_order_is_caught():
    """A backward written as a `gradients` formula called by the replay with its inputs'
    arrays swapped (Mul's ∂a would read a instead of b)."""
    real = compiled_module._Writer._formula_values

    def swapped(writer, entry, formula):
        values = real(writer, entry, formula)
        return values[:1] + values[1:][::-1]

    def plant(patch):
        patch.setattr(compiled_module._Writer, "_formula_values", swapped)
    assert new_compiled_failures(plant, n=30, ops=["mul", "matmul", "sub", "add"], enough=bool)


def test_the_arm_lands_fresh_gradients_uncopied_and_shared_ones_copied():
    """The arm reaches both sides of the landing: a gradient nothing else holds set as the
    .grad itself, and one held elsewhere (one array given to two names) copied."""
    real = compiled_module.held_alone
    seen = []

    def counted(g, references):        # one frame more holds g: counted as one reference more
        seen.append(real(g, references + 1))
        return seen[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compiled_module, "held_alone", counted)
        failures, counts = run_compiled(12, SEED)
    assert not failures, "\n\n".join(str(f) for f in failures[:3])
    assert True in seen and False in seen, seen


def test_a_gradient_landed_uncopied_while_held_elsewhere_is_caught():
    """The landing's reference count not read: an array Add gives to both its inputs becomes
    the .grad of both leaves (shared memory, where eager's copies share none)."""
    def unchecked(g, references):
        if type(g) is not np.ndarray:
            return False
        flags = g.flags
        return flags.owndata and flags.c_contiguous and flags.aligned and flags.writeable

    def plant(patch):
        patch.setattr(compiled_module, "held_alone", unchecked)
    assert new_compiled_failures(plant, n=12, enough=bool)


def _added_once_per_position(indexed, buffer):
    """buffer[index] += values: an advanced index that names a position twice adds there once."""
    if indexed.is_basic:
        indexed.add_into(buffer)
    else:
        buffer[indexed.index] += indexed.values


def test_an_indexed_gradient_added_once_per_repeated_position_is_caught():
    """The replay adds a gradient read at an index into the value's buffer with `+=`, which
    counts a repeated position once (eager scatter-adds: x[[0, 0]] gives x[0] two)."""
    real = compiled_module._Writer.emit

    def emit(writer, line, indent=2):
        if ".add_into(" in line:
            indexed, buffer = line.split(".add_into(")
            writer.name("_added_once", _added_once_per_position)
            line = f"_added_once({indexed.strip()}, {buffer.rstrip(')')})"
        real(writer, line, indent)

    def plant(patch):
        patch.setattr(compiled_module._Writer, "emit", emit)
    assert new_compiled_failures(plant, n=20, enough=bool)
