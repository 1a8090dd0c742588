"""The engine's autodiff promises: accumulation, freed graphs, higher-order derivatives,
`minigrad.grad`, grad mode, hooks, deep graphs and anomaly detection.

Every expected value is computed here from a closed form or by finite differences, never read
back from the engine.
"""

import numpy as np
import pytest

import minigrad as mg


def leaf(values, dtype=np.float64) -> mg.Tensor:
    return mg.tensor(np.asarray(values, dtype=dtype), requires_grad=True)


def sigmoid_np(x):
    return 1.0 / (1.0 + np.exp(-x))


def softmax_np(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def hessian(f, x: mg.Tensor) -> np.ndarray:
    """d²f/dx² of a scalar f of a 1-D x, one row per component of the first gradient."""
    (g,) = mg.grad(f(x), x, create_graph=True)
    rows = [mg.grad(g[k], x, retain_graph=True)[0].numpy() for k in range(x.shape[0])]
    return np.stack(rows)


# -- backward: accumulation, implicit and explicit gradients ----------------------------------

def test_gradients_accumulate_across_backward_calls_and_reset_with_none():
    x = leaf([1.0, -2.0, 3.0])
    (x * x).sum().backward()                               # d/dx Σx² = 2x
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy())
    (3 * x).sum().backward()                               # + 3
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy() + 3)
    x.grad = None
    (3 * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 3.0))


def test_a_leaf_used_twice_gets_both_contributions():
    x = leaf([0.5, 2.0])
    y = x * x + mg.exp(x) * x                              # d/dx = 2x + eˣ(1 + x)
    y.sum().backward()
    v = x.numpy()
    np.testing.assert_allclose(x.grad.numpy(), 2 * v + np.exp(v) * (1 + v), rtol=1e-12)


def test_implicit_gradient_only_for_single_element_outputs():
    x = leaf([1.0, 2.0])
    (x * 2).sum().reshape(1, 1).backward()                  # one element, any shape: fine
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    with pytest.raises(RuntimeError, match=r"single-element.*\(2,\)"):
        (x * 2).backward()


def test_explicit_gradient_of_the_output_shape():
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    upstream = np.arange(6.0).reshape(2, 3)
    (x * x).backward(upstream)                             # vector-Jacobian product: 2x ⊙ u
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy() * upstream)
    x.grad = None
    (x * x).backward(mg.tensor(upstream))                  # a Tensor works too
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy() * upstream)


def test_explicit_gradient_of_the_wrong_shape_is_refused():
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with pytest.raises(ValueError, match=r"backward.*\(3, 2\).*\(2, 3\)"):
        (x * x).backward(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"\(6,\)"):
        (x * x).backward(mg.ones(6, dtype="float64"))


def test_backward_on_a_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        mg.tensor([1.0, 2.0]).sum().backward()
    x = leaf([1.0])
    with mg.no_grad():
        y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()


# -- retain_graph and freed buffers ----------------------------------------------------------

def test_second_backward_without_retain_graph_names_retain_graph():
    x = leaf([0.3, 0.7])
    y = mg.tanh(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()


def test_retain_graph_allows_a_second_backward_that_doubles_the_gradient():
    x = leaf([0.3, -0.7])
    y = (mg.tanh(x) * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy()
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(first, t + x.numpy() * (1 - t * t), rtol=1e-12)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=1e-12)


def test_saved_buffers_are_freed_after_backward():
    mg.manual_seed(0)
    x = leaf(np.ones((4, 5)))
    y = mg.dropout(x, p=0.5)
    (scaled_mask,) = y.grad_fn.saved_tensors               # the mask lives in saved_tensors
    np.testing.assert_array_equal(scaled_mask, y.numpy())  # x is ones: y is the mask
    assert set(np.unique(scaled_mask)) <= {0.0, 2.0}
    y.sum().backward(retain_graph=True)
    assert len(y.grad_fn.saved_tensors) == 1               # kept while the graph is retained
    np.testing.assert_array_equal(x.grad.numpy(), y.numpy())
    y.sum().backward()
    assert y.grad_fn.saved_tensors == ()                   # freed by the last backward
    with pytest.raises(RuntimeError, match="Dropout.*retain_graph"):
        y.sum().backward()


def test_grad_without_retain_graph_frees_the_graph_too():
    x = leaf([1.0, 2.0])
    y = (mg.exp(x)).sum()
    mg.grad(y, x)
    with pytest.raises(RuntimeError, match="retain_graph"):
        mg.grad(y, x)


# -- create_graph: higher-order derivatives against closed forms ------------------------------

def test_second_derivative_of_x_tanh_x():
    x = leaf([-1.5, -0.2, 0.0, 0.9, 2.0])
    (x * mg.tanh(x)).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(g.numpy(), t + x.numpy() * (1 - t ** 2), rtol=1e-12)
    (d2,) = mg.grad(g.sum(), x)
    # d²/dx² x·tanh x = 2 sech²x − 2x tanh x sech²x
    sech2 = 1 - t ** 2
    np.testing.assert_allclose(d2.numpy(), 2 * sech2 - 2 * x.numpy() * t * sech2, rtol=1e-10)


def test_third_derivative_of_exp_2x():
    x = leaf([-0.5, 0.0, 0.75])
    y = mg.exp(2 * x).sum()
    (d1,) = mg.grad(y, x, create_graph=True)
    (d2,) = mg.grad(d1.sum(), x, create_graph=True)
    (d3,) = mg.grad(d2.sum(), x)
    e = np.exp(2 * x.numpy())
    np.testing.assert_allclose(d1.numpy(), 2 * e, rtol=1e-12)
    np.testing.assert_allclose(d2.numpy(), 4 * e, rtol=1e-12)
    np.testing.assert_allclose(d3.numpy(), 8 * e, rtol=1e-12)


def test_second_derivative_of_sigmoid():
    x = leaf([-3.0, -0.5, 0.0, 1.0, 4.0])
    (d1,) = mg.grad(mg.sigmoid(x).sum(), x, create_graph=True)
    (d2,) = mg.grad(d1.sum(), x)
    s = sigmoid_np(x.numpy())
    np.testing.assert_allclose(d1.numpy(), s * (1 - s), rtol=1e-12)
    np.testing.assert_allclose(d2.numpy(), s * (1 - s) * (1 - 2 * s), rtol=1e-9, atol=1e-15)


def test_hessian_of_weighted_log_softmax_and_of_log_of_softmax():
    x0 = np.array([0.3, -1.2, 2.0, 0.5])
    w = mg.tensor(np.array([1.0, -2.0, 0.5, 3.0]))
    p = softmax_np(x0)
    # ∇ w·log_softmax(x) = w − p Σw, so the Hessian is −(Σw)(diag p − p pᵀ)
    expected = -w.numpy().sum() * (np.diag(p) - np.outer(p, p))
    fused = hessian(lambda x: (w * mg.log_softmax(x)).sum(), leaf(x0))
    composed = hessian(lambda x: (w * mg.log(mg.softmax(x))).sum(), leaf(x0))
    np.testing.assert_allclose(fused, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(composed, expected, rtol=1e-9, atol=1e-12)


def test_hessian_of_weighted_softmax():
    x0 = np.array([0.1, 0.8, -0.4])
    w0 = np.array([2.0, -1.0, 0.5])
    p = softmax_np(x0)
    c = w0 - p @ w0                                        # w − w̄, w̄ = p·w
    jac = np.diag(p) - np.outer(p, p)                      # ∂p/∂x
    # ∂/∂x_k [p_j (w_j − w̄)] = J_jk (w_j − w̄) − p_j (J w)_k, J symmetric
    expected = jac * c[:, None] - np.outer(p, jac @ w0)
    got = hessian(lambda x: (mg.tensor(w0) * mg.softmax(x)).sum(), leaf(x0))
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def test_hessian_vector_product_of_a_quadratic_form():
    rng = np.random.default_rng(1)
    a_np = rng.standard_normal((4, 4))                     # not symmetric on purpose
    v_np = rng.standard_normal(4)
    a, v = mg.tensor(a_np), mg.tensor(v_np)
    x = leaf(rng.standard_normal(4))
    (g,) = mg.grad(x @ (a @ x), x, create_graph=True)      # ∇ xᵀAx = (A + Aᵀ)x
    np.testing.assert_allclose(g.numpy(), (a_np + a_np.T) @ x.numpy(), rtol=1e-12)
    (hv,) = mg.grad((g * v).sum(), x)                      # ∇(∇f · v) = H v = (A + Aᵀ)v
    np.testing.assert_allclose(hv.numpy(), (a_np + a_np.T) @ v_np, rtol=1e-12)


def test_grad_of_grad_through_matmul_getitem_and_broadcast(rng):
    """The first gradient, as a function of the inputs, passes gradcheck: second derivatives
    through matmul, indexing with repeated indices and a broadcast bias are right."""
    w = leaf(rng.standard_normal((3, 4)))
    b = leaf(rng.standard_normal(4))
    x = mg.tensor(rng.standard_normal((5, 3)))
    rows = np.array([0, 2, 2, 4])

    def loss(w, b):
        h = mg.tanh(x @ w + b)                             # (5, 4), b broadcast over rows
        return (h[rows] ** 2).sum() + (h[1:, ::2] * h[:-1, 1::2]).sum()

    def grad_w(w, b):
        return mg.grad(loss(w, b), w, create_graph=True)[0]

    def grad_b(w, b):
        return mg.grad(loss(w, b), b, create_graph=True)[0]

    assert mg.gradcheck(grad_w, (w, b))
    assert mg.gradcheck(grad_b, (w, b))


def test_backward_with_create_graph_accumulates_a_differentiable_grad():
    x = leaf([0.4, -1.1])
    (x ** 3).sum().backward(create_graph=True)             # x.grad = 3x²
    (x ** 3).sum().backward(create_graph=True)             # x.grad = 6x², still recorded
    (d2,) = mg.grad(x.grad.sum(), x)
    np.testing.assert_allclose(d2.numpy(), 12 * x.numpy(), rtol=1e-12)


# -- minigrad.grad ---------------------------------------------------------------------------

def test_grad_returns_gradients_and_leaves_dot_grad_alone():
    x = leaf([1.0, 2.0])
    y = leaf([3.0, -1.0])
    x.grad = mg.tensor(np.array([10.0, 20.0]))
    gx, gy = mg.grad((x * y).sum(), [x, y])
    np.testing.assert_allclose(gx.numpy(), y.numpy())
    np.testing.assert_allclose(gy.numpy(), x.numpy())
    np.testing.assert_allclose(x.grad.numpy(), [10.0, 20.0])  # untouched
    assert y.grad is None
    assert not gx.requires_grad                            # no create_graph: plain values


def test_grad_with_create_graph_is_differentiable():
    x = leaf([0.5, 1.5])
    (g,) = mg.grad((x ** 4).sum(), x, create_graph=True)   # 4x³
    assert g.requires_grad
    (h,) = mg.grad(g.sum(), x)                             # 12x²
    np.testing.assert_allclose(h.numpy(), 12 * x.numpy() ** 2, rtol=1e-12)
    assert x.grad is None


def test_grad_of_an_unused_input_raises_unless_allow_unused():
    x, unused = leaf([1.0, 2.0]), leaf([3.0])
    y = (x * x).sum()
    with pytest.raises(RuntimeError, match="input 1.*allow_unused"):
        mg.grad(y, [x, unused], retain_graph=True)
    gx, gu = mg.grad(y, [x, unused], allow_unused=True)
    np.testing.assert_allclose(gx.numpy(), 2 * x.numpy())
    assert gu is None


def test_grad_with_respect_to_non_leaf_tensors():
    x = leaf([0.2, -0.3])
    u = mg.exp(x)
    v = (u * u).sum()
    gu, gx = mg.grad(v, [u, x])
    np.testing.assert_allclose(gu.numpy(), 2 * u.numpy(), rtol=1e-12)     # ∂v/∂u = 2u
    np.testing.assert_allclose(gx.numpy(), 2 * np.exp(2 * x.numpy()), rtol=1e-12)
    assert x.grad is None and u.grad is None


def test_grad_of_several_outputs_with_grad_outputs():
    x = leaf([0.1, 0.6, -0.8])
    y1, y2 = x * x, mg.exp(x)
    u = np.array([1.0, -2.0, 0.5])
    v = np.array([0.3, 0.0, 4.0])
    (g,) = mg.grad([y1, y2], x, grad_outputs=[mg.tensor(u), mg.tensor(v)])
    # Σ of the two vector-Jacobian products: 2x ⊙ u + eˣ ⊙ v
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy() * u + np.exp(x.numpy()) * v,
                               rtol=1e-12)


def test_grad_argument_errors():
    x = leaf([1.0, 2.0])
    y = x * 3
    with pytest.raises(ValueError, match="2 grad_outputs for 1 outputs"):
        mg.grad(y, x, grad_outputs=[mg.ones(2), mg.ones(2)])
    with pytest.raises(RuntimeError, match="single-element"):
        mg.grad(y, x)
    with pytest.raises(RuntimeError, match="input 0.*does not require grad"):
        mg.grad(y.sum(), mg.tensor([1.0]))


# -- grad mode -------------------------------------------------------------------------------

def test_no_grad_and_enable_grad_as_context_managers_nest():
    x = leaf([1.0])
    assert mg.is_grad_enabled()
    with mg.no_grad():
        assert not mg.is_grad_enabled()
        assert not (x * 2).requires_grad
        with mg.enable_grad():
            assert mg.is_grad_enabled()
            assert (x * 2).requires_grad
            with mg.no_grad():
                assert not mg.is_grad_enabled()
            assert mg.is_grad_enabled()
        assert not mg.is_grad_enabled()
    assert mg.is_grad_enabled()
    assert (x * 2).requires_grad


def test_no_grad_and_enable_grad_as_decorators():
    x = leaf([2.0])

    @mg.no_grad()
    def frozen(t):
        return t * t, mg.is_grad_enabled()

    @mg.enable_grad()
    def recorded(t):
        return t * t, mg.is_grad_enabled()

    y, mode = frozen(x)
    assert not mode and not y.requires_grad
    assert frozen.__name__ == "frozen"                     # functools.wraps
    with mg.no_grad():
        y, mode = recorded(x)
        assert mode and y.requires_grad
        assert not mg.is_grad_enabled()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0])


def test_grad_mode_is_restored_after_an_exception():
    with pytest.raises(ZeroDivisionError):
        with mg.no_grad():
            1 / 0
    assert mg.is_grad_enabled()

    @mg.no_grad()
    def fails():
        raise KeyError("x")

    with pytest.raises(KeyError):
        fails()
    assert mg.is_grad_enabled()


def test_one_no_grad_object_can_be_entered_twice():
    guard = mg.no_grad()
    with guard:
        with guard:
            assert not mg.is_grad_enabled()
        assert not mg.is_grad_enabled()
    assert mg.is_grad_enabled()


def test_detach_shares_data_and_cuts_the_graph():
    x = leaf([1.0, 2.0])
    y = x * 3
    d = y.detach()
    assert d.data is y.data                                # shared, not copied
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    z = d * x                                              # gradient only through x
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.numpy())


def test_is_leaf_and_grad_fn():
    x = leaf([1.0])
    c = mg.tensor([1.0])
    assert x.is_leaf and c.is_leaf
    y = x * 2
    assert not y.is_leaf and type(y.grad_fn).__name__ == "Mul"
    assert (c * 2).is_leaf                                 # nothing to differentiate
    with mg.no_grad():
        assert (x * 2).is_leaf
    with pytest.raises(RuntimeError, match="non-leaf"):
        y.requires_grad = False


def test_requires_grad_only_on_floating_tensors():
    with pytest.raises(TypeError, match="requires_grad.*int64"):
        mg.tensor([1, 2], requires_grad=True)
    with pytest.raises(TypeError, match="requires_grad.*bool"):
        mg.tensor([True, False]).requires_grad = True
    with pytest.raises(TypeError, match="requires_grad"):
        mg.zeros(3, dtype="int32", requires_grad=True)


def test_integer_and_bool_results_never_require_grad():
    x = leaf([0.5, -1.5, 2.5])
    assert not (x > 0).requires_grad
    assert not x.argmax().requires_grad
    ints = x.astype("int64")
    assert ints.dtype == np.int64 and not ints.requires_grad and ints.is_leaf
    assert not (ints * 2).requires_grad
    assert not mg.one_hot(mg.tensor([0, 2]), 3).requires_grad
    mixed = ints * x                                       # float result: gradient through x
    assert mixed.requires_grad
    mixed.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ints.numpy().astype(np.float64))


# -- hooks and retain_grad -------------------------------------------------------------------

def test_hook_sees_the_gradient():
    x = leaf([1.0, 2.0, 3.0])
    y = x * x
    seen = []
    y.register_hook(lambda g: seen.append(g.numpy()))
    (y * mg.tensor(np.array([1.0, 10.0, 100.0]))).sum().backward()
    np.testing.assert_allclose(seen[0], [1.0, 10.0, 100.0])
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy() * [1.0, 10.0, 100.0])


def test_hook_can_replace_the_gradient_and_be_removed():
    scores = leaf([[0.2, 1.0, -0.5], [0.0, 0.3, 0.9]])
    values = mg.tensor(np.array([[1.0], [2.0], [4.0]]))

    def attend():
        weights = mg.softmax(scores, axis=-1)
        return weights, (weights @ values).sum()

    weights, out = attend()
    handle = weights.register_hook(lambda g: g * 0)        # block the weights' gradient
    out.backward()
    np.testing.assert_array_equal(scores.grad.numpy(), np.zeros((2, 3)))

    scores.grad = None
    weights, out = attend()
    weights.register_hook(lambda g: g * 2)                 # a new graph, a doubling hook
    out.backward()
    p = np.stack([softmax_np(r) for r in scores.numpy()])
    v = values.numpy()[:, 0]
    expected = p * (v[None, :] - (p @ v)[:, None])         # softmax VJP, upstream v per row
    np.testing.assert_allclose(scores.grad.numpy(), 2 * expected, rtol=1e-12)

    scores.grad = None
    handle.remove()
    weights, out = attend()
    out.backward()
    np.testing.assert_allclose(scores.grad.numpy(), expected, rtol=1e-12)


def test_removed_hook_is_not_called_again():
    x = leaf([1.0])
    calls = []
    handle = x.register_hook(lambda g: calls.append(1))
    (x * 2).sum().backward()
    handle.remove()
    handle.remove()                                        # removing twice is harmless
    (x * 2).sum().backward()
    assert len(calls) == 1


def test_hook_on_a_leaf_changes_what_is_accumulated():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: g * 10)
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 30.0])


def test_a_hook_may_not_change_the_shape_and_its_dtype_is_cast_back():
    x = leaf([1.0, 2.0], dtype=np.float32)
    y = x * 3
    y.register_hook(lambda g: g.sum())                     # a scalar for a (2,) tensor
    with pytest.raises(RuntimeError, match=r"hook.*shape \(2,\).*shape \(\)"):
        y.sum().backward()
    assert x.grad is None                                  # nothing deposited
    w = x * 3
    w.register_hook(lambda g: 2.0)                         # not a Tensor
    with pytest.raises(TypeError, match="hook.*returned a float; a hook returns a Tensor"):
        w.sum().backward()
    z = x * 3
    z.register_hook(lambda g: g.astype(np.float64) * 2)
    z.sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])


def test_a_root_gradient_of_another_dtype_is_cast_to_the_output_dtype():
    x = leaf([1.0, 2.0], dtype=np.float32)
    y = (x * x).exp()
    y.backward(mg.tensor(np.array([1.0, 0.5])))            # float64 seed for a float32 output
    assert x.grad.dtype == np.float32
    x64 = x.numpy().astype(np.float64)
    np.testing.assert_allclose(x.grad.numpy(), 2 * x64 * np.exp(x64 * x64) * [1.0, 0.5],
                               rtol=1e-6)


def test_retain_grad_keeps_the_gradient_of_a_non_leaf():
    x = leaf([0.5, -0.5])
    h = mg.tanh(x)
    h.retain_grad()
    other = mg.exp(x)                                      # not retained
    (h * h + other).sum().backward()
    np.testing.assert_allclose(h.grad.numpy(), 2 * h.numpy(), rtol=1e-12)
    assert other.grad is None
    assert x.grad is not None


def test_slices_and_broadcasts_of_leaves_add_up():
    """Every leaf gets its gradient: x twice through a broadcast, w through slices."""
    x, w = leaf([0.5, -1.5, 2.0]), leaf(np.arange(6.0).reshape(2, 3) / 7)
    y = (w[:, :2] * x[:2] + w[:, 1:] * x[1:]).tanh().sum() + (x * x).sum()
    y.backward()
    wn, xn = w.numpy(), x.numpy()
    t = np.tanh(wn[:, :2] * xn[:2] + wn[:, 1:] * xn[1:])
    d = 1 - t * t
    grad_x = 2 * xn
    grad_x[:2] += (d * wn[:, :2]).sum(0)
    grad_x[1:] += (d * wn[:, 1:]).sum(0)
    grad_w = np.zeros((2, 3))
    grad_w[:, :2] += d * xn[:2]
    grad_w[:, 1:] += d * xn[1:]
    np.testing.assert_allclose(x.grad.numpy(), grad_x, rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), grad_w, rtol=1e-12)


def test_register_hook_and_retain_grad_need_requires_grad():
    c = mg.tensor([1.0])
    with pytest.raises(RuntimeError, match="register_hook"):
        c.register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="retain_grad"):
        c.retain_grad()


# -- depth -----------------------------------------------------------------------------------

def test_a_chain_of_100000_operations_backpropagates():
    n = 100_000
    x = leaf(0.5)
    scale, shift = mg.tensor(np.float64(1.00001)), mg.tensor(np.float64(0.001))
    y = x
    for i in range(n):
        y = y * scale if i % 2 else y + shift              # 50,000 of each
    y.backward()
    np.testing.assert_allclose(x.grad.item(), 1.00001 ** (n // 2), rtol=1e-9)
    np.testing.assert_allclose(y.item(), _chain_value(0.5, n), rtol=1e-12)
    del y                                                  # freeing a deep graph must not recurse


def _chain_value(x: float, n: int) -> float:
    for i in range(n):
        x = x * 1.00001 if i % 2 else x + 0.001
    return x


# -- anomaly detection -----------------------------------------------------------------------

def test_detect_anomaly_names_the_op_that_made_a_nan_in_forward():
    x = leaf([1.0, -1.0])
    with np.errstate(all="ignore"):
        y = mg.log(x)                                      # off by default: NaN passes silently
        assert np.isnan(y.numpy()[1])
        with pytest.raises(FloatingPointError, match=r"Log.*NaN.*forward"):
            with mg.detect_anomaly():
                mg.log(x * 2)


def test_detect_anomaly_names_the_op_whose_gradient_is_infinite():
    x = leaf([0.0, 4.0])
    with np.errstate(all="ignore"):
        mg.sqrt(x).sum().backward()                        # off by default: inf passes
        assert np.isinf(x.grad.numpy()[0])
        x.grad = None
        with pytest.raises(FloatingPointError, match=r"Sqrt.*inf.*gradient"):
            with mg.detect_anomaly():
                mg.sqrt(x).sum().backward()


def test_detect_anomaly_reports_the_scope():
    x = leaf([-1.0])
    with np.errstate(all="ignore"), pytest.raises(FloatingPointError, match="encoder.ffn"):
        with mg.detect_anomaly(), mg.name_scope("encoder"), mg.name_scope("ffn"):
            mg.log(x)
