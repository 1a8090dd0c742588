"""The array fast path (`Function.vjp`, used when create_graph=False) must give exactly the
gradients of the recorded path (`Function.backward` on Tensors, used when create_graph=True)."""

import numpy as np
import pytest

import minigrad as mg

CASES = {
    "add": (lambda a, b: a + b, [(3, 4), (4,)]),
    "sub": (lambda a, b: a - b, [(3, 1), (1, 4)]),
    "mul": (lambda a, b: a * b, [(2, 3, 4), (3, 1)]),
    "div": (lambda a, b: a / (b * b + 1), [(3, 4), (3, 4)]),
    "neg": (lambda a: -a, [(3, 4)]),
    "pow2": (lambda a: a ** 2, [(3, 4)]),
    "pow3": (lambda a: a ** 3, [(3, 4)]),
    "exp": (lambda a: a.exp(), [(3, 4)]),
    "log": (lambda a: (a * a + 1).log(), [(3, 4)]),
    "tanh": (lambda a: a.tanh(), [(3, 4)]),
    "sigmoid": (lambda a: a.sigmoid(), [(3, 4)]),
    "relu": (lambda a: a.relu(), [(3, 4)]),
    "masked_fill": (lambda a: a.masked_fill(np.eye(3, 4, dtype=bool), -1.0), [(3, 4)]),
    "sum": (lambda a: a.sum(axis=1), [(3, 4)]),
    "sum_keepdims": (lambda a: a.sum(axis=(0, 2), keepdims=True), [(2, 3, 4)]),
    "mean": (lambda a: a.mean(axis=0), [(3, 4)]),
    "reshape": (lambda a: a.reshape(4, 3), [(3, 4)]),
    "transpose": (lambda a: a.transpose(2, 0, 1), [(2, 3, 4)]),
    "broadcast_to": (lambda a: a.broadcast_to((2, 3, 4)), [(3, 1)]),
    "getitem_basic": (lambda a: a[1:, ::2], [(3, 4)]),
    "getitem_repeat": (lambda a: a[np.array([0, 2, 0, 0])], [(3, 4)]),
    "matmul": (lambda a, b: a @ b, [(2, 3, 4), (4, 5)]),
    "matmul_vec": (lambda a, b: a @ b, [(4,), (2, 4, 3)]),
    "matmul_2d": (lambda a, b: (a @ b.T) @ b, [(3, 4), (5, 4)]),   # b's gradient as factors
    "stack": (lambda a, b: mg.stack([a, b, a], axis=1), [(3, 4), (3, 4)]),
    "concat": (lambda a, b: mg.concat([a, b, a], axis=-1), [(3, 4), (3, 2)]),
    "softmax": (lambda a: a.softmax(axis=0), [(3, 4)]),
    "log_softmax": (lambda a: a.log_softmax(), [(3, 4)]),
    "dropout": (lambda a: (mg.manual_seed(3), mg.dropout(a, 0.4))[1], [(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_path_matches_recorded_backward(name, rng):
    fn, shapes = CASES[name]
    inputs = [mg.tensor(rng.standard_normal(s), dtype=np.float64, requires_grad=True)
              for s in shapes]
    out = fn(*inputs)
    weights = mg.tensor(rng.standard_normal(out.shape), dtype=np.float64)
    loss = (out * out * weights).sum()      # quadratic: the gradient is itself recorded
    fast = mg.grad(loss, inputs, retain_graph=True)
    recorded = mg.grad(loss, inputs, create_graph=True)
    for g_fast, g_recorded in zip(fast, recorded):
        assert g_recorded.requires_grad          # really the recorded path
        np.testing.assert_allclose(g_fast.numpy(), g_recorded.numpy(), rtol=1e-12, atol=1e-12)


# -- classes that promise exact gradients ------------------------------------------------------
# The walk trusts the vjp of a class with `exact_gradients` (True: always; None: an elementwise
# operation of two inputs, when both share one shape and dtype) to return each input's gradient
# in that input's shape and dtype, and skips its own sum-to-shape and cast. Each such class is
# run here where the promise is easiest to break: mixed dtypes, broadcasting, float16.

EXACT_CASES = {
    "Add": [lambda a, b: a + b, lambda a, b: b + a],
    "Sub": [lambda a, b: a - b, lambda a, b: b - a],
    "Mul": [lambda a, b: a * b, lambda a, b: b * a],
    "Div": [lambda a, b: a / (b * b + 1), lambda a, b: b / (a * a + 1)],
    "Neg": [lambda a, b: -a * b],
    "Exp": [lambda a, b: a.exp() * b],
    "Log": [lambda a, b: (a * a + 1).log() * b],
    "Tanh": [lambda a, b: a.tanh() * b],
    "Sigmoid": [lambda a, b: a.sigmoid() * b],
    "Relu": [lambda a, b: a.relu() * b],
    "Reshape": [lambda a, b: a.reshape(-1).reshape(a.shape) * b],
    "Transpose": [lambda a, b: a.T.T * b],
}

PAIRS = {   # (shape, dtype) of a and of b
    "same": [((3, 4), np.float32), ((3, 4), np.float32)],
    "promoted": [((3, 4), np.float32), ((3, 4), np.float64)],
    "broadcast": [((3, 1), np.float32), ((1, 4), np.float32)],
    "both": [((3, 4), np.float16), ((4,), np.float64)],
    "leading": [((4,), np.float32), ((2, 3, 4), np.float32)],
}


def _exact_classes():
    def below(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from below(sub)
    return {c.__name__ for c in below(mg.Function) if c.__dict__.get("exact_gradients", False)
            is not False and c.__module__.startswith("minigrad.")}


def test_every_class_promising_exact_gradients_is_checked():
    assert _exact_classes() == set(EXACT_CASES)


@pytest.mark.parametrize("pair", sorted(PAIRS))
@pytest.mark.parametrize("name", sorted(EXACT_CASES))
def test_exact_gradient_classes_keep_shapes_and_dtypes(name, pair, rng):
    (shape_a, dtype_a), (shape_b, dtype_b) = PAIRS[pair]
    for fn in EXACT_CASES[name]:
        a = mg.tensor(rng.uniform(0.5, 1.5, shape_a).astype(dtype_a), requires_grad=True)
        b = mg.tensor(rng.uniform(0.5, 1.5, shape_b).astype(dtype_b), requires_grad=True)
        out = fn(a, b)
        fast = mg.grad(out.sum(), [a, b], retain_graph=True)
        recorded = mg.grad(out.sum(), [a, b], create_graph=True)   # checks every gradient
        for x, g_fast, g_recorded in zip((a, b), fast, recorded):
            assert g_fast.shape == x.shape and g_fast.dtype == x.dtype
            np.testing.assert_array_equal(g_fast.numpy(), g_recorded.numpy())


# -- the hottest operations' own dispatch (arithmetic, slices, .T, 2-D matmul on NumPy) -------

ARITHMETIC = {"+": (lambda a, b: a + b, np.add, "Add"),
              "-": (lambda a, b: a - b, np.subtract, "Sub"),
              "*": (lambda a, b: a * b, np.multiply, "Mul"),
              "/": (lambda a, b: a / b, np.divide, "Div")}

DISPATCHED = dict(ARITHMETIC, **{
    "slice": (lambda a, b: a[:, 1:], lambda a, b: a[:, 1:], "GetItem"),
    "column": (lambda a, b: a[:, 2], lambda a, b: a[:, 2], "GetItem"),
    ".T": (lambda a, b: a.T, lambda a, b: a.T, "Transpose"),
    "@": (lambda a, b: a @ b.T, lambda a, b: a @ b.T, "MatMul"),
    "exp": (lambda a, b: a.exp(), lambda a, b: np.exp(a), "Exp"),
    "tanh": (lambda a, b: a.tanh(), lambda a, b: np.tanh(a), "Tanh"),
    "sigmoid": (lambda a, b: a.sigmoid(), lambda a, b: 1 / (1 + np.exp(-a)), "Sigmoid"),
    "relu": (lambda a, b: a.relu(), lambda a, b: np.maximum(a, 0), "Relu"),
})


@pytest.mark.parametrize("op", sorted(DISPATCHED))
def test_dispatched_operations_record_the_same_node_as_apply(op, rng):
    f, reference, name = DISPATCHED[op]
    a = mg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = mg.tensor(rng.uniform(1, 2, (2, 3)))
    with mg.name_scope("block"):
        y = f(a, b)
    np.testing.assert_array_equal(y.numpy(), reference(a.numpy(), b.numpy()))
    assert type(y.data) is np.ndarray
    assert type(y.grad_fn).__name__ == name and y.requires_grad and not y.is_leaf
    assert y.grad_fn.inputs[0] is a and y.grad_fn.scope == "block"
    later = f(a, b)
    assert later.grad_fn.sequence > y.grad_fn.sequence       # creation order kept
    with mg.no_grad():
        z = f(a, b)
    assert z.is_leaf and not z.requires_grad and z.grad_fn is None
    constant = f(mg.tensor(a.numpy()), b)                      # no input requires grad
    assert constant.grad_fn is None and not constant.requires_grad
    (grad,) = mg.grad(y, a, grad_outputs=mg.ones_like(y), create_graph=True)
    (again,) = mg.grad(f(a, b), a, grad_outputs=mg.ones_like(y))
    np.testing.assert_array_equal(grad.numpy(), again.numpy())


def test_dispatched_slices_and_transposes_of_a_non_numpy_array_go_through_apply():
    class Marked(np.ndarray):
        pass
    a = mg.Tensor._from_array(np.arange(6.0).reshape(2, 3).view(Marked))
    a.requires_grad = True
    y = (a[:, 1:].T * 2.0).sum()
    y.backward()
    np.testing.assert_array_equal(a.grad.numpy(), [[0, 2, 2], [0, 2, 2]])
    plain = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    for f in (mg.exp, mg.tanh, mg.sigmoid, mg.relu):
        a.grad = plain.grad = None
        f(a).sum().backward()
        f(plain).sum().backward()
        np.testing.assert_array_equal(a.grad.numpy(), plain.grad.numpy())


def test_dispatched_slice_errors_name_the_operation():
    with pytest.raises(IndexError, match="GetItem"):
        mg.tensor(np.ones((2, 3)))[:, 5]


@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "relu"])
def test_dispatched_unary_functions_of_zero_dimensional_tensors_hold_an_array(op):
    f, reference, _ = DISPATCHED[op]
    y = f(mg.tensor(np.float32(-0.5), requires_grad=True), None)
    assert type(y.data) is np.ndarray and y.data.shape == () and y.dtype == np.float32
    np.testing.assert_allclose(float(y.numpy()), reference(np.float32(-0.5), None), rtol=1e-6)
    y.backward()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64,
                                   np.bool_])
def test_dispatched_unary_functions_give_apply_s_dtype_and_values(dtype):
    from minigrad.ops.elementwise import Exp, Relu, Sigmoid, Tanh
    x = mg.tensor(np.array([[-1, 0], [2, 3]]).astype(dtype))
    for f, cls in [(mg.exp, Exp), (mg.tanh, Tanh), (mg.sigmoid, Sigmoid), (mg.relu, Relu)]:
        got, expected = f(x), cls.apply(x)
        assert got.dtype == expected.dtype, cls.__name__
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_dispatched_unary_functions_in_anomaly_mode_are_still_checked():
    a = mg.tensor(np.array([0.0, 800.0]), requires_grad=True)
    with mg.detect_anomaly(), pytest.raises(FloatingPointError, match="Exp"):
        with np.errstate(over="ignore"):
            a.exp()


@pytest.mark.parametrize("op", sorted(ARITHMETIC))
def test_arithmetic_of_zero_dimensional_tensors_holds_an_array(op):
    f, reference, _ = ARITHMETIC[op]
    y = f(mg.tensor(np.float32(3.0), requires_grad=True), mg.tensor(np.float32(2.0)))
    assert type(y.data) is np.ndarray and y.data.shape == () and y.dtype == np.float32
    assert float(y.numpy()) == reference(np.float32(3.0), np.float32(2.0))
    y.backward()


def test_arithmetic_errors_name_the_operation_and_shapes():
    a = mg.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(ValueError, match=r"Mul: .*\(2, 3\) float64, \(4,\) float64"):
        a * mg.tensor(np.ones(4))


def test_arithmetic_in_anomaly_mode_is_still_checked():
    a = mg.tensor(np.array([0.0, 1.0]), requires_grad=True)
    with mg.detect_anomaly(), pytest.raises(FloatingPointError, match="Div"):
        with np.errstate(divide="ignore", invalid="ignore"):
            a / mg.tensor(np.array([0.0, 1.0]))


def test_arithmetic_on_an_ndarray_subclass_goes_through_apply():
    class Marked(np.ndarray):
        pass
    data = np.ones((2, 2)).view(Marked)
    a = mg.Tensor._from_array(data)
    a.requires_grad = True
    y = a * 2.0
    y.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full((2, 2), 2.0))
