"""The public surface of the contract as a user meets it: every promised name, attribute and
method exists and behaves; `minigrad.grad` follows `torch.autograd.grad`'s rules, also when
outputs repeat or feed each other; anomaly mode leaves intended infinities (attention masks)
alone; name scopes nest and unwind; the docstrings state the documented edge cases."""

import importlib
import inspect
import math
import pkgutil

import numpy as np
import pytest

import minigrad as mg
import minigrad.ops

from .primitive_checks import assert_forward, leaf

# -- every name of the contract exists ---------------------------------------------------------

CONTRACT_FUNCTIONS = [
    "tensor", "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "arange", "randn",
    "rand", "manual_seed", "matmul", "softmax", "log_softmax", "logsumexp", "masked_fill",
    "where", "maximum", "minimum", "clip", "concat", "stack", "split", "exp", "log", "sqrt",
    "tanh", "sigmoid", "relu", "gelu", "dropout", "one_hot", "argmax", "no_grad", "enable_grad",
    "is_grad_enabled", "grad", "gradcheck", "cuda_available", "name_scope", "detect_anomaly",
    "register_backend",
]
CONTRACT_METHODS = [
    "backward", "detach", "numpy", "item", "tolist", "to", "cpu", "astype", "sum", "mean", "max",
    "min", "var", "reshape", "transpose", "swapaxes", "squeeze", "unsqueeze", "broadcast_to",
    "exp", "log", "sqrt", "abs", "tanh", "sigmoid", "relu", "softmax", "log_softmax",
    "masked_fill", "matmul", "argmax", "register_hook", "retain_grad",
]


@pytest.mark.parametrize("name", CONTRACT_FUNCTIONS)
def test_every_contract_function_is_public(name):
    assert name in mg.__all__
    assert callable(getattr(mg, name))


def test_the_classes_of_the_contract_are_public():
    assert issubclass(mg.GradcheckError, Exception)
    assert isinstance(mg.tensor(1.0), mg.Tensor)
    assert callable(mg.Function.apply)
    assert callable(mg.viz.draw)


@pytest.mark.parametrize("name", CONTRACT_METHODS)
def test_every_contract_method_is_on_tensor(name):
    assert callable(getattr(mg.Tensor, name))


def test_every_contract_attribute_reads_as_numpy_would(device):
    host = np.arange(24.0).reshape(2, 3, 4)
    x = mg.tensor(host, requires_grad=True, device=device)
    assert not isinstance(x.data, mg.Tensor) and x.data.shape == host.shape
    assert x.grad is None and x.requires_grad and x.is_leaf
    assert (x.shape, x.ndim, x.dtype, x.device) == ((2, 3, 4), 3, np.float64, device)
    assert_forward(x.T, host.T, device)
    y = x * 2
    assert not y.is_leaf and y.requires_grad
    assert mg.tensor([1.0]).is_leaf and not mg.tensor([1.0]).requires_grad


def test_T_is_differentiable_and_matches_the_reversed_axes(device, rng):
    x = leaf(rng.standard_normal((2, 3, 4)), device)
    assert mg.gradcheck(lambda t: t.T, [x])
    weights = rng.standard_normal((4, 3, 2))
    (x.T * mg.tensor(weights, device=device)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), weights.T)


def test_conversions_item_tolist_astype_numpy_on_every_device(device):
    x = mg.tensor(np.array([[1.5, -2.0], [3.25, 4.0]]), device=device)
    assert x.sum().item() == 6.75 and isinstance(x.sum().item(), float)
    assert x.tolist() == [[1.5, -2.0], [3.25, 4.0]]
    assert mg.tensor(7, device=device).item() == 7
    as_int = x.astype("int32")
    assert as_int.dtype == np.int32 and as_int.tolist() == [[1, -2], [3, 4]]
    assert not as_int.requires_grad
    assert x.astype(np.float32).dtype == np.float32
    host = x.numpy()
    assert type(host) is np.ndarray and host.dtype == np.float64
    assert x.cpu().device == "cpu" and x.to("cpu").device == "cpu"


# -- creation -------------------------------------------------------------------------------

@pytest.mark.parametrize("make, fill", [(mg.zeros, 0.0), (mg.ones, 1.0), (mg.empty, 0.0)])
def test_filled_tensors_take_a_shape_tuple_and_options(make, fill, device):
    t = make((2, 3), dtype="float64", requires_grad=True, device=device)
    assert_forward(t, np.full((2, 3), fill), device)
    assert t.requires_grad and t.is_leaf


def test_full_takes_a_shape_and_a_value(device):
    assert_forward(mg.full((2, 1), -3.5, device=device), np.full((2, 1), -3.5, np.float32),
                   device)
    assert_forward(mg.full(3, 2, dtype="int64", device=device), np.full(3, 2), device)


@pytest.mark.parametrize("make", [mg.randn, mg.rand])
def test_random_tensors_take_sizes_or_a_shape(make, device):
    assert make(2, 3, device=device).shape == (2, 3)
    assert make((2, 3), device=device).shape == (2, 3)
    assert make(device=device).shape == ()
    assert make(4, dtype=np.float64, device=device).dtype == np.float64


def test_manual_seed_replays_randn_rand_and_dropout_together(device):
    """One seed fixes the whole stream: interleaved draws replay exactly, a new seed differs."""
    def draws():
        x = mg.ones(64, device=device)
        return [mg.randn(5, device=device).numpy(), mg.dropout(x, 0.3).numpy(),
                mg.rand(3, 2, device=device).numpy(), mg.dropout(x, 0.3, True).numpy()]
    mg.manual_seed(11)
    first = draws()
    mg.manual_seed(11)
    for a, b in zip(first, draws()):
        np.testing.assert_array_equal(a, b)
    mg.manual_seed(12)
    assert not all(np.array_equal(a, b) for a, b in zip(first, draws()))


def test_rng_state_saved_midway_replays_the_rest_of_the_stream(device):
    """get_rng_state mid-stream, draw, set_rng_state: the same draws again (randn, dropout,
    rand) on each device; a malformed state is refused and changes nothing."""
    x = mg.ones(64, device=device)
    mg.manual_seed(5)
    mg.randn(7, device=device)
    state = mg.get_rng_state(device)
    first = [mg.randn(5, device=device).numpy(), mg.dropout(x, 0.3).numpy(),
             mg.rand(3, device=device).numpy()]
    mg.set_rng_state(state, device)
    again = [mg.randn(5, device=device).numpy(), mg.dropout(x, 0.3).numpy(),
             mg.rand(3, device=device).numpy()]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    mg.set_rng_state(np.array(state.numpy().tolist(), dtype=np.uint8), device)  # via JSON
    with pytest.raises(ValueError, match="set_rng_state"):
        mg.set_rng_state(np.zeros(5, dtype=np.uint8), device)
    np.testing.assert_array_equal(mg.randn(5, device=device).numpy(), first[0])


# -- dropout(x, p, training), one_hot, argmax(x, axis) ----------------------------------------

def test_dropout_positional_arguments(device, rng):
    x = leaf(rng.uniform(0.5, 1.5, size=(4, 50)), device)
    assert mg.dropout(x, 0.25, False) is x                 # evaluation: the identity
    mg.manual_seed(3)
    y = mg.dropout(x, 0.25, True)
    kept = y.numpy() != 0
    # inverted dropout: kept elements are scaled by 1/(1 − p), the rest are zero
    np.testing.assert_allclose(y.numpy()[kept], x.numpy()[kept] / 0.75, rtol=1e-12)
    assert 0.6 < kept.mean() < 0.9
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.75, rtol=1e-12)


def test_one_hot_is_rows_of_the_identity(device):
    indices = np.array([[0, 3], [2, 2], [1, 0]])
    out = mg.one_hot(mg.tensor(indices, device=device), 4)
    assert_forward(out, np.eye(4, dtype=np.float32)[indices], device)
    assert not out.requires_grad


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_argmax_with_a_positional_axis(axis, device, rng):
    host = rng.standard_normal((3, 5))
    x = mg.tensor(host, requires_grad=True, device=device)
    for out in (mg.argmax(x, axis), x.argmax(axis)):
        assert_forward(out, np.argmax(host, axis), device)
        assert out.dtype == np.int64 and not out.requires_grad
    assert mg.argmax(x).item() == np.argmax(host)


# -- minigrad.grad follows torch.autograd.grad ------------------------------------------------

def _cubic():
    """x and y = x³ (elementwise); z = Σ 3y. Closed forms: ∂Σy/∂x = 3x², ∂z/∂x = 9x²."""
    x = leaf([1.0, -2.0, 0.5], "cpu")
    y = x ** 3
    return x, y, (3 * y).sum()


def test_grad_of_a_repeated_output_counts_it_once_per_entry():
    x, _, z = _cubic()
    (g,) = mg.grad([z, z], x)
    np.testing.assert_allclose(g.numpy(), 2 * 9 * x.numpy() ** 2, rtol=1e-12)


def test_grad_when_one_output_is_computed_from_another():
    """outputs (z, y) with z made from y: y's gradient is its own grad_output plus what z
    sends back through it, whichever order the outputs come in."""
    for order in ("z first", "y first"):
        x, y, z = _cubic()
        ones = mg.ones(3, dtype=np.float64)
        outputs, grad_outputs = ([z, y], [None, ones]) if order == "z first" else \
            ([y, z], [ones, None])
        (g,) = mg.grad(outputs, x, grad_outputs=grad_outputs)
        np.testing.assert_allclose(g.numpy(), (9 + 3) * x.numpy() ** 2, rtol=1e-12,
                                   err_msg=order)


def test_grad_of_a_leaf_that_is_also_an_output():
    x = leaf([1.0, 2.0], "cpu")
    (g,) = mg.grad([x.sum(), x], x, grad_outputs=[None, mg.tensor(np.array([10.0, 20.0]))])
    np.testing.assert_array_equal(g.numpy(), [11.0, 21.0])


def test_grad_of_repeated_outputs_with_create_graph_differentiates_again():
    x, _, z = _cubic()
    (g,) = mg.grad([z, z], x, create_graph=True)            # 18x²
    (h,) = mg.grad(g.sum(), x)                               # 36x
    np.testing.assert_allclose(h.numpy(), 36 * x.numpy(), rtol=1e-12)


def test_grad_returns_a_tuple_with_one_entry_per_input_and_leaves_grad_alone():
    x, y, z = _cubic()
    result = mg.grad(z, [x, x], retain_graph=True)
    assert isinstance(result, tuple) and len(result) == 2
    np.testing.assert_array_equal(result[0].numpy(), result[1].numpy())
    assert x.grad is None and not result[0].requires_grad
    (only,) = mg.grad(z, x)
    np.testing.assert_allclose(only.numpy(), 9 * x.numpy() ** 2, rtol=1e-12)


def test_grad_with_an_input_that_is_also_an_output_and_a_repeated_output():
    """outputs (z, y, z), inputs (x, y), with y = x·tanh(x) and z = Σ y²; torch.autograd.grad
    gives ∂/∂y = 2·2y + w (z twice, plus y's own grad_output w) and ∂/∂x = (4y + w)·y'."""
    values = np.array([0.3, -1.2, 2.0])
    w = np.array([1.0, -0.5, 2.0])
    x = mg.tensor(values, requires_grad=True)
    y = mg.tanh(x) * x
    z = (y * y).sum()
    grad_x, grad_y = mg.grad([z, y, z], [x, y], grad_outputs=[None, mg.tensor(w), None])
    t = np.tanh(values)
    y_host = values * t
    np.testing.assert_allclose(grad_y.numpy(), 4 * y_host + w, rtol=1e-12)
    dy_dx = t + values * (1 - t * t)
    np.testing.assert_allclose(grad_x.numpy(), (4 * y_host + w) * dy_dx, rtol=1e-12)


def test_grad_and_backward_say_integer_tensors_never_carry_a_gradient():
    counts = mg.tensor([1, 2, 3])
    x = leaf([1.0], "cpu")
    with pytest.raises(RuntimeError, match=r"grad: input 0 \(shape \(3,\), int64\).*integer"):
        mg.grad(x.sum(), counts)
    with pytest.raises(RuntimeError, match=r"grad: output 0 .*int64.*integer"):
        mg.grad(counts.sum(), x)
    with pytest.raises(RuntimeError, match=r"backward: this tensor \(\(\) int64\).*integer"):
        counts.sum().backward()
    with pytest.raises(TypeError, match="requires_grad.*int64"):
        mg.tensor([1, 2], requires_grad=True)


def test_gradcheck_error_names_a_named_input():
    x = leaf([0.5, 1.0], "cpu")
    x.name = "weights"

    class Wrong(mg.Function):
        def forward(self, a):
            return a * a

        def backward(self, grad):
            (a,) = self.inputs
            return grad * a                                # should be 2a

    with pytest.raises(mg.GradcheckError, match=r"input 0 'weights' .*index \(0,\)"):
        mg.gradcheck(lambda t: Wrong.apply(t), [x])


# -- anomaly mode ----------------------------------------------------------------------------

def test_anomaly_mode_lets_an_attention_mask_of_minus_inf_through(device, rng):
    """masked_fill(scores, ~mask, -inf) makes -inf on purpose, and log_softmax passes it on:
    neither is an anomaly. Gradients match the run without anomaly mode."""
    scores_host = rng.standard_normal((2, 3))
    mask = mg.tensor(np.array([[True, False, True], [False, False, False]]), device=device)

    def run():
        scores = leaf(scores_host, device)
        masked = mg.masked_fill(scores, ~mask, -math.inf)
        picked = mg.where(mask, mg.log_softmax(masked), 0.0)
        (mg.softmax(masked).sum() + picked.sum()).backward()
        return scores.grad.numpy()

    plain = run()
    with mg.detect_anomaly():
        checked = run()
    np.testing.assert_array_equal(checked, plain)
    assert np.isfinite(plain).all()


def test_anomaly_mode_flags_an_infinity_made_from_finite_values(device):
    x = leaf([1.0, 1000.0], device)
    with np.errstate(all="ignore"), pytest.raises(FloatingPointError, match="Exp.*inf.*forward"):
        with mg.detect_anomaly():
            mg.exp(x)


def test_anomaly_mode_flags_nan_even_when_an_input_carries_inf(device):
    x = leaf([1.0, math.inf], device)
    with np.errstate(all="ignore"), pytest.raises(FloatingPointError, match="Sub.*NaN"):
        with mg.detect_anomaly():
            _ = (x * 2) - x                                # inf − inf = NaN


# -- name scopes ------------------------------------------------------------------------------

def test_name_scopes_nest_and_unwind_after_an_exception():
    x = leaf([1.0], "cpu")
    with pytest.raises(KeyError):
        with mg.name_scope("encoder"):
            raise KeyError("inside")
    assert (x * 2).grad_fn.scope == ""
    with mg.name_scope("encoder"):
        with mg.name_scope("layer0"):
            inner = x * 2
        with mg.name_scope(""):                            # an empty name adds nothing
            same = x * 2
        outer = x * 2
    assert (inner.grad_fn.scope, same.grad_fn.scope, outer.grad_fn.scope) == \
        ("encoder.layer0", "encoder", "encoder")


# -- documented edge cases ----------------------------------------------------------------------

def test_docstrings_state_the_edge_cases():
    assert "ties" in mg.max.__doc__.lower() and "evenly" in mg.max.__doc__
    assert "ties" in mg.min.__doc__.lower()
    for fn, result in ((mg.softmax, "zeros"), (mg.log_softmax, "−inf"),
                       (mg.logsumexp, "−inf")):
        doc = fn.__doc__
        assert "all −inf" in doc and result in doc and "NaN" in doc, fn.__name__
    assert "1e4" in mg.logsumexp.__doc__
    assert "class Cube(minigrad.Function)" in mg.Function.__doc__


def _primitives() -> list[type]:
    """Every Function subclass defined in minigrad's primitive modules (every module of ops/)."""
    found = []
    for info in pkgutil.iter_modules(minigrad.ops.__path__):
        module = importlib.import_module(f"minigrad.ops.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, mg.Function) and cls.__module__ == module.__name__ and \
                    ("backward" in vars(cls) or "gradients" in vars(cls)):
                found.append(cls)
    return found


def test_every_primitive_states_its_derivative_beside_its_backward():
    primitives = _primitives()
    assert len(primitives) > 30
    missing = [cls.__name__ for cls in primitives
               if "∂" not in inspect.getsource(vars(cls).get("gradients", cls.backward))]
    assert not missing, f"backward without its derivative written as math: {missing}"
