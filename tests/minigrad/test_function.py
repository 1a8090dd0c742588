"""User-defined primitives: subclassing minigrad.Function as its docstring shows."""

import numpy as np
import pytest

import minigrad as mg


class Cube(mg.Function):
    """y = x³ (the example from Function's docstring)."""

    def forward(self, x):            # backend arrays in, a backend array out
        return x ** 3

    def backward(self, grad):        # grad = ∂L/∂y, a Tensor
        (x,) = self.inputs
        return grad * 3 * x * x      # ∂y/∂x = 3x²


def leaf(values, device="cpu") -> mg.Tensor:
    return mg.tensor(np.asarray(values, dtype=np.float64), requires_grad=True, device=device)


def test_docstring_example_forward_and_gradient(device):
    x = leaf([-1.5, 0.5, 2.0], device)
    y = Cube.apply(x)
    assert y.device == device and y.requires_grad and type(y.grad_fn) is Cube
    np.testing.assert_allclose(y.numpy(), x.numpy() ** 3)
    y.sum().backward()
    assert x.grad.device == device
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.numpy() ** 2)


def test_docstring_example_higher_derivatives():
    x = leaf([-1.5, 0.5, 2.0])
    (d1,) = mg.grad(Cube.apply(x).sum(), x, create_graph=True)
    (d2,) = mg.grad(d1.sum(), x, create_graph=True)
    (d3,) = mg.grad(d2.sum(), x)
    np.testing.assert_allclose(d1.numpy(), 3 * x.numpy() ** 2)
    np.testing.assert_allclose(d2.numpy(), 6 * x.numpy())
    np.testing.assert_allclose(d3.numpy(), np.full(3, 6.0))


def test_docstring_example_passes_gradcheck(device, rng):
    x = leaf(rng.standard_normal((2, 3)), device)
    assert mg.gradcheck(Cube.apply, (x,))
    assert mg.gradcheck(lambda x: Cube.apply(mg.tanh(x)) * x, (x,))


class ScaledProduct(mg.Function):
    """z = s · a ⊙ b, with the constant s given as an option."""

    def __init__(self, scale: float):
        self.scale = scale

    def forward(self, a, b):
        return self.scale * a * b

    def backward(self, grad):
        a, b = self.inputs
        # ∂z/∂a = s·b, ∂z/∂b = s·a; None for an input that needs none
        grad_a = grad * b * self.scale if a.requires_grad else None
        grad_b = grad * a * self.scale if b.requires_grad else None
        return grad_a, grad_b


def test_options_go_to_init_and_several_inputs_get_one_gradient_each(rng):
    a, b = leaf(rng.standard_normal(3)), leaf(rng.standard_normal(3))
    z = ScaledProduct.apply(a, b, scale=2.5)
    assert z.grad_fn.scale == 2.5
    np.testing.assert_allclose(z.numpy(), 2.5 * a.numpy() * b.numpy())
    z.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 2.5 * b.numpy())
    np.testing.assert_allclose(b.grad.numpy(), 2.5 * a.numpy())
    constant = mg.tensor(np.array([1.0, 2.0, 3.0]))
    a.grad = None
    ScaledProduct.apply(a, constant, scale=-1.0).sum().backward()   # None for the constant
    np.testing.assert_allclose(a.grad.numpy(), -constant.numpy())
    assert mg.gradcheck(lambda a, b: ScaledProduct.apply(a, b, scale=0.5), (a, b))


def test_engine_sums_a_broadcast_gradient_back_to_the_input_shape(rng):
    class AddBias(mg.Function):
        """y = x + b, b (C,) broadcast over the rows of x (B, C)."""

        def forward(self, x, b):
            return x + b

        def backward(self, grad):
            return grad, grad                              # both (B, C); b is (C,)

    x, b = leaf(rng.standard_normal((4, 3))), leaf(rng.standard_normal(3))
    upstream = rng.standard_normal((4, 3))
    AddBias.apply(x, b).backward(upstream)
    np.testing.assert_allclose(x.grad.numpy(), upstream)
    np.testing.assert_allclose(b.grad.numpy(), upstream.sum(axis=0))
    assert mg.gradcheck(AddBias.apply, (x, b))


def test_backward_may_return_arrays_and_use_output_xp_and_saved_tensors(device):
    seen = {}

    class ClampedExp(mg.Function):
        """y = exp(min(x, 1)); the gradient passes where x < 1."""

        def forward(self, x):
            below = x < 1
            self.save_for_backward(below)
            seen["xp_in_forward"] = self.xp
            return self.xp.exp(self.xp.minimum(x, 1.0))

        def backward(self, grad):
            (below,) = self.saved_tensors
            seen["output_is_y"] = self.output is seen["y"]
            seen["inputs"] = self.inputs
            # ∂y/∂x = y where x < 1, else 0; returned as a bare backend array
            return grad.data * self.output.data * below

    x = leaf([0.0, 0.5, 2.0], device)
    y = ClampedExp.apply(x)
    seen["y"] = y
    assert len(y.grad_fn.saved_tensors) == 1
    y.sum().backward()
    assert seen["xp_in_forward"] is x.xp
    assert seen["output_is_y"] and seen["inputs"][0] is x
    expected = np.exp(np.minimum(x.numpy(), 1.0)) * (x.numpy() < 1)
    np.testing.assert_allclose(x.grad.numpy(), expected)
    assert y.grad_fn.saved_tensors == ()                   # freed after backward


def test_no_graph_when_nothing_requires_grad_or_grad_mode_is_off():
    x = mg.tensor(np.array([1.0, 2.0]))
    y = Cube.apply(x)
    assert not y.requires_grad and y.is_leaf
    with mg.no_grad():
        y = Cube.apply(leaf([1.0, 2.0]))
    assert not y.requires_grad and y.is_leaf
    np.testing.assert_allclose(y.numpy(), [1.0, 8.0])


def test_non_differentiable_functions_and_integer_outputs_record_nothing():
    class Sign(mg.Function):
        differentiable = False

        def forward(self, x):
            return self.xp.sign(x)

    class Floor(mg.Function):
        def forward(self, x):
            return self.xp.floor(x).astype(np.int64)

    x = leaf([-2.5, 0.0, 3.5])
    s = Sign.apply(x)
    np.testing.assert_array_equal(s.numpy(), [-1.0, 0.0, 1.0])
    assert not s.requires_grad and s.is_leaf
    f = Floor.apply(x)
    assert f.dtype == np.int64 and not f.requires_grad
    np.testing.assert_array_equal(f.numpy(), [-3, 0, 3])


def test_the_name_scope_is_recorded_on_the_function():
    x = leaf([1.0])
    with mg.name_scope("encoder"), mg.name_scope("layer0"):
        y = Cube.apply(x)
    assert y.grad_fn.scope == "encoder.layer0"
    assert Cube.apply(x).grad_fn.scope == ""


def test_wrong_number_of_gradients_is_an_error():
    class ReturnsOne(mg.Function):
        def forward(self, a, b):
            return a + b

        def backward(self, grad):
            return grad                                    # forgot b's gradient

    with pytest.raises(RuntimeError, match="ReturnsOne.backward returned 1 gradient.*2 input"):
        ReturnsOne.apply(leaf([1.0]), leaf([2.0])).sum().backward()


def test_gradient_of_the_wrong_shape_names_the_function_and_both_shapes():
    class WrongShape(mg.Function):
        def forward(self, x):
            return x * 2

        def backward(self, grad):
            return mg.ones(5, dtype="float64")

    with pytest.raises(ValueError, match=r"WrongShape.*\(5,\).*\(2, 3\)"):
        WrongShape.apply(leaf(np.ones((2, 3)))).sum().backward()


def test_forward_errors_are_prefixed_with_the_function_name():
    class Picky(mg.Function):
        def forward(self, x):
            raise ValueError("x must be positive")

    with pytest.raises(ValueError, match=r"Picky: x must be positive.*\(2,\) float64"):
        Picky.apply(leaf([1.0, -1.0]))


def test_apply_wants_tensors():
    with pytest.raises(TypeError, match="Cube.apply: inputs must be Tensors, got ndarray"):
        Cube.apply(np.ones(3))
    with pytest.raises(TypeError, match="Cube.apply: needs at least one input"):
        Cube.apply()


def test_unimplemented_methods_say_which_class():
    class Half(mg.Function):
        def forward(self, x):
            return x / 2

    with pytest.raises(NotImplementedError, match="Half.backward"):
        Half.apply(leaf([1.0])).sum().backward()
    with pytest.raises(NotImplementedError, match="Function.forward"):
        mg.Function.apply(leaf([1.0]))


class ScaleAndCount(mg.Function):
    """y = 2x, and the count (a second input) goes up by one in place: a forward that changes
    an input, declared in `updates`."""

    updates = (1,)

    def forward(self, x, count):
        count += 1
        return 2.0 * x

    def backward(self, grad):
        return grad * 2.0, None


@pytest.mark.parametrize("shape", [(), (1,), (3,)])
def test_a_forward_that_updates_an_input_marks_it_changed_and_replays(shape):
    """Its input is marked changed (a graph that saved it refuses backward), one that
    requires grad is refused before anything changes, and a compiled step changes it again
    at every replay, as eagerly."""
    count = mg.zeros((), dtype="float64")
    saved = mg.tensor(np.ones(shape), requires_grad=True) * count      # saves count
    x = mg.tensor(np.ones(shape), requires_grad=True)
    ScaleAndCount.apply(x, count).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(shape, 2.0))
    assert count.item() == 1 and count._version == 1
    with pytest.raises(RuntimeError, match="changed in place afterwards"):
        saved.sum().backward()
    with pytest.raises(RuntimeError, match="ScaleAndCount: input 1 .* must not require grad"):
        ScaleAndCount.apply(x, mg.zeros(shape, requires_grad=True))

    @mg.compile
    def step(x):
        return ScaleAndCount.apply(x, count).sum()

    for _ in range(5):
        step(mg.tensor(np.ones(shape)))
    assert step.stats.replays == 3 and count.item() == 6 and count._version == 6
