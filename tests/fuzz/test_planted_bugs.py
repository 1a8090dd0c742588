"""Bugs planted on purpose, each of which the fuzzer must report: an oracle that never fails
proves nothing. A test plants one bug inside `plant(patch)` (patch: a pytest.MonkeyPatch,
undone afterwards) and asks `new_failures` for the programs that fail only because of it.
Programs are drawn from a few registry entries that reach the planted code, which keeps each
test to a fraction of a second."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import minigrad as mg
from minigrad import autograd
from minigrad.ops import activations, elementwise, nn_ops

from ..minigrad.simdevice import SimArray
from .harness import new_failures

ARITHMETIC = ["mul", "add", "sum", "getitem", "tanh", "matmul"]


def _only_backward(patch, cls, backward) -> None:
    """`backward` becomes cls's derivative."""
    patch.setattr(cls, "backward", backward)


def _oracles(failures) -> set[str]:
    return {p.split("]")[0] + "]" for f in failures for p in f.problems}


def _reported(oracle: str):
    """What a test asserts of its failures: `oracle` reports one of them (new_failures stops
    its run once this holds)."""
    return lambda failures: oracle in _oracles(failures)


def _differing_from_central_differences(failures) -> bool:
    return any("differs from central differences" in p for f in failures for p in f.problems)


def test_a_dropped_contribution_is_caught():
    """Mul's backward forgets ∂z/∂b."""
    def plant(patch):
        def backward(self, grad):
            a, b = self.inputs
            return grad * b, None
        _only_backward(patch, elementwise.Mul, backward)
    failures = new_failures(plant, n=25, ops=ARITHMETIC, enough=_reported("[numeric]"))
    assert failures and "[numeric]" in _oracles(failures)


def _first_copy(grad, shape):
    """grad read at the first of the copies broadcasting made, instead of summed over them."""
    extra = grad.ndim - len(shape)
    index = (0,) * extra + tuple(slice(0, 1) if n == 1 and m != 1 else slice(None)
                                 for n, m in zip(shape, grad.shape[extra:]))
    return grad[index]


def test_a_gradient_not_summed_over_broadcast_copies_is_caught():
    """Add's backward takes one copy's gradient where its operand was broadcast."""
    def plant(patch):
        def backward(self, grad):
            return tuple(_first_copy(grad, x.shape) if x.shape != grad.shape else grad
                         for x in self.inputs)
        _only_backward(patch, elementwise.Add, backward)
    failures = new_failures(plant, n=25, ops=["add", "sum", "mul", "tanh"],
                            enough=_reported("[numeric]"))
    assert failures and "[numeric]" in _oracles(failures)


def test_a_forgotten_cast_back_is_caught():
    """Softmax computes in float64 for float32 inputs and forgets to cast back."""
    real = nn_ops.Softmax.forward

    def plant(patch):
        patch.setattr(nn_ops.Softmax, "forward", lambda self, x: real(self, x.astype("float64")))
    failures = new_failures(plant, n=25, ops=["softmax", "mul", "sum", "add"],
                            enough=_reported("[forward]"))
    assert failures and "[forward]" in _oracles(failures)


def test_a_backward_that_overwrites_its_saved_output_is_caught():
    """Sigmoid's backward computes y(1 − y) in the output's own buffer: right once, then the
    graph holds a wrong y for every later pass."""
    def plant(patch):
        def backward(self, grad):
            y = self.output.data
            y *= 1 - y
            return grad * mg.tensor(y, device=self.output.device)
        _only_backward(patch, activations.Sigmoid, backward)
    failures = new_failures(plant, n=25, ops=["sigmoid", "add", "mul", "sum"],
                            enough=lambda found: {"[paths]", "[twice]"} & _oracles(found))
    assert failures and {"[paths]", "[twice]"} & _oracles(failures)


def test_an_op_bypassing_the_array_module_is_caught_on_the_device():
    """Tanh's forward calls NumPy instead of self.xp: fine on the host, wrong on a device."""
    def plant(patch):
        patch.setattr(elementwise.Tanh, "forward", lambda self, x: np.tanh(x))
    failures = new_failures(plant, n=20, ops=["tanh", "add", "sum"], enough=_reported("[device]"))
    assert failures and "[device]" in _oracles(failures)


def test_an_ignored_retain_grad_is_caught():
    def plant(patch):
        patch.setattr(mg.Tensor, "retain_grad", lambda self: None)
    failures = new_failures(plant, n=20, ops=["add", "mul", "sum"], enough=_reported("[paths]"))
    assert failures and "[paths]" in _oracles(failures)


# -- engine internals: one short test each, skipped where the engine has no such function ----

def _engine_function(name: str):
    function = getattr(autograd, name, None)
    if function is None:
        pytest.skip(f"minigrad.autograd has no {name}")
    return function


def test_an_accumulation_that_drops_every_other_contribution_is_caught():
    real = _engine_function("_accumulate")

    def plant(patch):
        calls = itertools.count()
        patch.setattr(autograd, "_accumulate",
                      lambda *args, **kwargs: real(*args, **kwargs) if next(calls) % 2 else None)
    assert new_failures(plant, n=40, enough=bool)


def test_an_engine_sum_to_shape_that_keeps_one_copy_is_caught():
    _engine_function("_sum_to_array")

    def plant(patch):
        patch.setattr(autograd, "_sum_to_array", lambda g, shape, owner="": _first_copy(g, shape))
    failures = new_failures(plant, n=25, ops=["add", "mul", "sum", "tanh"],
                            enough=_reported("[numeric]"))
    assert failures and "[numeric]" in _oracles(failures)


def test_the_lost_zero_d_contributions_of_the_old_engine_are_caught():
    """The engine before `_accumulate` added a 0-d gradient's third and later contributions
    into a NumPy scalar (`previous += g` rebinds a local): planted again here."""
    real = _engine_function("_accumulate")

    def plant(patch):
        def lossy(entry, g, create_graph):
            _, previous, owned = entry
            if owned and not create_graph and len(previous.shape) == 0:
                return
            real(entry, g, create_graph)
        patch.setattr(autograd, "_accumulate", lossy)
    failures = new_failures(plant, n=40, ops=["add", "mul", "sum", "getitem"],
                            enough=_differing_from_central_differences)
    assert any("differs from central differences" in p for f in failures for p in f.problems)


def test_an_accumulation_that_drops_the_third_contribution_is_caught():
    real = _engine_function("_accumulate")

    def plant(patch):
        counts: dict = {}

        def third_lost(entry, g, create_graph):
            key = id(entry[0])                         # the tensor receiving g
            counts[key] = counts.get(key, 0) + 1
            if counts[key] != 3:
                real(entry, g, create_graph)
        patch.setattr(autograd, "_accumulate", third_lost)
    failures = new_failures(plant, n=40, enough=_differing_from_central_differences)
    assert any("differs from central differences" in p for f in failures for p in f.problems)


def test_a_second_gradient_added_into_the_first_in_place_is_caught():
    """The walk adds a tensor's second gradient into its first array, which it did not make
    (Add hands one array to both inputs; a root's gradient is the caller's), instead of into
    a new buffer."""
    real = _engine_function("_accumulate")
    reached = []

    def plant(patch):
        def in_place(entry, g, create_graph):
            previous = entry[1]
            if create_graph or entry[2] or type(previous) is not np.ndarray or \
                    type(g) is not np.ndarray or not previous.ndim:
                return real(entry, g, create_graph)
            reached.append(True)
            previous += g                                  # into an array someone else holds
            entry[2] = True
            return "copy"
        patch.setattr(autograd, "_accumulate", in_place)
    failures = new_failures(plant, n=40, ops=ARITHMETIC,
                            enough=lambda found: reached and _reported("[numeric]")(found))
    assert reached and failures and "[numeric]" in _oracles(failures)


def test_a_backward_that_adds_into_the_kept_grad_in_place_is_caught():
    """backward adds a leaf's new gradient into the `.grad` it already has in place, so a
    `.grad` the caller kept from the first backward changes under them."""
    real = _engine_function("_grad_plus")
    reached = []

    def plant(patch):
        def in_place(grad, g, create_graph):
            if create_graph:
                return real(grad, g, create_graph)
            reached.append(True)
            grad.data += g
            return grad
        patch.setattr(autograd, "_grad_plus", in_place)
    failures = new_failures(plant, n=20, ops=["mul", "add", "sum", "tanh"],
                            enough=lambda found: reached and _reported("[eager]")(found))
    assert reached and failures and "[eager]" in _oracles(failures)


def test_a_gradient_left_in_the_wrong_dtype_is_caught():
    """The walk casts a float64 gradient of a float32 input back to float32: planted here, the
    engine's own check of each gradient's dtype (or the oracles) must fail."""
    real = _engine_function("_conform")

    def plant(patch):
        def uncast(g, x, fn, create_graph):
            dtype = x.data.dtype
            conformed = real(g, x, fn, create_graph)
            if dtype == np.float64 or create_graph or not hasattr(conformed, "astype"):
                return conformed
            return conformed.astype(np.float64)           # the cast to x's dtype undone
        patch.setattr(autograd, "_conform", uncast)
    assert new_failures(plant, n=60, enough=bool)


# -- the extreme-values arm (edges.py) ------------------------------------------------------------

def _edge_problems(name, plant):
    from .edges import edge_problems
    from .registry import BY_NAME
    with pytest.MonkeyPatch.context() as patch:
        plant(patch)
        return edge_problems(BY_NAME[name], np.random.default_rng(0))


def test_extreme_arm_catches_a_gradient_read_from_the_rounded_output():
    """logaddexp's gradient as e^{a − z}: right for moderate inputs, 1 instead of ½ at 1e20."""
    from minigrad.ops import elementwise as binary_functions

    def backward(self, grad):
        g, a, b = self.values(grad, *self.inputs)
        z = self.ops.logaddexp(a, b)
        return g * self.ops.exp(a - z), g * self.ops.exp(b - z)
    assert not _edge_problems("logaddexp", lambda patch: None)
    problems = _edge_problems("logaddexp", lambda patch: _only_backward(
        patch, binary_functions.LogAddExp, backward))
    assert any(p.startswith("[shift]") for p in problems)
    assert any(p.startswith("[infinite]") for p in problems)


def test_extreme_arm_catches_a_product_gradient_that_loses_its_own_derivative():
    """prod's Π_{k ≠ i} x_k computed on bare arrays: first derivatives right, second 0."""
    from minigrad.ops import reduce

    def backward(self, grad):
        others = reduce._product_of_others(self.xp, self.inputs[0].data, self.axes)
        return self._kept(grad) * mg.tensor(others)
    assert not _edge_problems("prod", lambda patch: None)
    problems = _edge_problems("prod", lambda patch: _only_backward(patch, reduce.Prod,
                                                                     backward))
    assert any("second derivative" in p for p in problems)


def test_extreme_arm_catches_a_softmax_that_refuses_an_empty_axis():
    def shift(x, axis, xp):
        return x - x.max(axis=axis, keepdims=True)
    assert not _edge_problems("softmax", lambda patch: None)
    problems = _edge_problems("softmax", lambda patch: patch.setattr(nn_ops, "_stable_shift",
                                                                       shift))
    assert any(p.startswith("[empty]") and "raised" in p for p in problems)


def _max_pool_scan(better):
    """convolution._scan_maximum with `better(tap, best, ops)` deciding when a tap replaces."""
    from nn import convolution

    def scan(ops, taps, first_real):
        maxima, chosen = taps[0], ops.zeros_like(taps[0], dtype=np.int64)
        for k, tap in enumerate(taps[1:], start=1):
            replaces = better(tap, maxima, ops)
            maxima = ops.where(replaces, tap, maxima)
            chosen = ops.where(replaces, k, chosen)
        return maxima, ops.where(chosen == 0, first_real, chosen)
    return lambda patch: patch.setattr(convolution, "_scan_maximum", scan)


@pytest.mark.parametrize("name", ["max_pool1d", "max_pool2d"])
def test_extreme_arm_catches_max_pooling_that_breaks_ties_or_nan_otherwise(name):
    """The gradient of a tie going to the last maximum, and NaN no longer winning a window."""
    assert not _edge_problems(name, _max_pool_scan(lambda tap, best, ops: (tap > best)
                                                   | ops.isnan(tap)))
    problems = _edge_problems(name, _max_pool_scan(lambda tap, best, ops: (tap >= best)
                                                   | ops.isnan(tap)))
    assert any(p.startswith("[kinks]") for p in problems)
    problems = _edge_problems(name, _max_pool_scan(lambda tap, best, ops: tap > best))
    assert any(p.startswith("[infinite]") for p in problems)


def test_a_two_dimensional_matmul_gradient_off_by_a_factor_is_caught():
    """MatMul's path for two matrices (the common case, taken before any promotion) scales
    ∂B by 1.001."""
    from minigrad.ops import linalg
    real = linalg.MatMul.gradients

    def gradients(self, g, a, b):
        grad_a, grad_b = real(self, g, a, b)
        if a.ndim == 2 and b.ndim == 2 and grad_b is not None:
            grad_b = grad_b * 1.001
        return grad_a, grad_b
    failures = new_failures(lambda patch: patch.setattr(linalg.MatMul, "gradients", gradients),
                            n=40, ops=["matmul", "add", "tanh"], enough=bool)
    assert failures


# -- the eager path's fast paths (function.py, gradients.py) --------------------------------------

def test_array_gradients_handed_the_inputs_in_the_wrong_order_are_caught():
    """`values` given a gradient as an array (the path of minigrad's own backwards when nothing
    is recorded) returns the inputs' arrays reversed."""
    from minigrad import function

    def plant(patch):
        real = function.Function.values

        def reversed_values(self, *tensors):
            if tensors and isinstance(tensors[0], np.ndarray):
                return (tensors[0], *[t.data for t in reversed(tensors[1:])])
            return real(self, *tensors)
        patch.setattr(function.Function, "values", reversed_values)
    failures = new_failures(plant, n=25, ops=["div", "add", "sum", "tanh"],
                            enough=_reported("[numeric]"))
    assert failures and "[numeric]" in _oracles(failures)


def test_a_formula_handed_its_two_arrays_in_the_wrong_order_is_caught():
    """The backward of a two-input formula (mul, matmul) reads its inputs' arrays itself when
    given the gradient as an array, and hands them to `gradients` swapped."""
    from minigrad import function
    from minigrad.ops.elementwise import Mul
    from minigrad.ops.linalg import MatMul

    def swapped(self, grad):
        inputs = self.inputs
        if type(grad) is np.ndarray and len(inputs) == 2:
            return self.gradients(grad, inputs[1].data, inputs[0].data)
        return function._formula_of_inputs(self, grad)

    def plant(patch):
        for cls in (Mul, MatMul):
            assert cls.backward is function._formula_of_inputs
            patch.setattr(cls, "backward", swapped)
    failures = new_failures(plant, n=25, ops=["mul", "add", "sum", "tanh"],
                            enough=_reported("[numeric]"))
    assert failures and "[numeric]" in _oracles(failures)


def test_a_numpy_fast_path_that_takes_device_arrays_for_numpy_is_caught():
    """apply's test for plain NumPy inputs checks the wrong array type: a device's arrays go
    through the CPU's path, with NumPy as their array module."""
    from minigrad import function

    def plant(patch):
        patch.setattr(function, "_ndarray", SimArray)
    failures = new_failures(plant, n=20, ops=["tanh", "add", "mul", "sum"],
                            enough=_reported("[device]"))
    assert failures and "[device]" in _oracles(failures)


def test_a_release_that_leaves_the_freed_test_unarmed_is_caught():
    """release frees a node's values but leaves its stamp, so the walk's one test of freed or
    changed nodes lets a second backward through the freed graph run."""
    from minigrad import gradients

    def plant(patch):
        patch.setattr(gradients, "FREED_STAMP", 2 ** 62)
    failures = new_failures(plant, n=20, ops=["mul", "add", "sum", "tanh"],
                            enough=_reported("[eager]"))
    assert failures and "[eager]" in _oracles(failures)


def test_a_release_that_keeps_the_activations_is_caught():
    """release keeps every input as it is: a kept root holds the step's arrays."""
    from minigrad import gradients

    def plant(patch):
        def keeping(functions):
            for fn in functions:
                fn.saved_tensors, fn.stamp = gradients._RELEASED, gradients.FREED_STAMP
        patch.setattr(autograd, "release", keeping)
    failures = new_failures(plant, n=20, ops=["mul", "add", "sum", "tanh"],
                            enough=_reported("[eager]"))
    assert failures and "[eager]" in _oracles(failures)


def _flags_alone(g, references):
    """`held_alone` without its reference count: the layout read, the holders not."""
    if type(g) is not np.ndarray:
        return False
    flags = g.flags
    return flags.owndata and flags.c_contiguous and flags.aligned and flags.writeable


def test_the_eager_arm_lands_fresh_gradients_uncopied_and_shared_ones_copied():
    """The eager arm reaches both sides of handing a gradient out: one nothing else holds set
    as the .grad itself, one held elsewhere (one array given to two inputs) copied."""
    from minigrad import gradients
    seen = []

    def counted(g, references):        # one frame more holds g: counted as one reference more
        seen.append(gradients.held_alone(g, references + 1))
        return seen[-1]

    def plant(patch):
        patch.setattr(autograd, "held_alone", counted)
    assert not new_failures(plant, n=10)
    assert True in seen and False in seen, seen


def test_a_gradient_handed_out_uncopied_while_held_elsewhere_is_caught():
    """backward() hands a gradient out as the .grad without reading its reference count: the
    array Add gives to both its inputs becomes the .grad of both leaves."""
    def plant(patch):
        patch.setattr(autograd, "held_alone", _flags_alone)
    failures = new_failures(plant, n=10,
                            enough=lambda found: "[eager]" in _oracles(found) and any(
                                "share memory" in p for f in found for p in f.problems))
    assert failures and "[eager]" in _oracles(failures)
    assert any("share memory" in p for f in failures for p in f.problems)


def test_mg_grad_handing_out_a_shared_gradient_uncopied_is_caught():
    """mg.grad returns every gradient as the walk holds it, copying none: the array Add gives
    to both its inputs becomes the answer for both, which the caller may then change."""
    def plant(patch):
        patch.setattr(autograd, "_handed_out", lambda g, is_owned: mg.Tensor._from_array(g))
    failures = new_failures(plant, n=10,
                            enough=lambda found: "[numeric]" in _oracles(found) and any(
                                "mg.grad handed out arrays that share memory" in p
                                for f in found for p in f.problems))
    assert failures and "[numeric]" in _oracles(failures)
    assert any("mg.grad handed out arrays that share memory" in p
               for f in failures for p in f.problems)
