"""The engine's promises, each with the case that once broke or could break it: 0-d gradients
with many contributions, gradients that never alias, the x**0 convention, in-place changes
caught by version checks, per-thread grad mode, and freed graphs that keep no activations."""

import gc
import threading
import weakref

import numpy as np
import pytest

import minigrad as mg
import nn


def scalar(value=2.0):
    return mg.tensor(np.float64(value), requires_grad=True)


# ---------------------------------------------------------------------------------------------
# 0-d tensors: every contribution counts

@pytest.mark.parametrize("program, expected", [
    (lambda x: x * x * x, 3 * 2.0 ** 2),                 # d/dx x³ = 3x²
    (lambda x: x + x + x, 3.0),
    (lambda x: x + x + x + x + x, 5.0),
    (lambda x: x * x + x * x + x, 4 * 2.0 + 1),
    (lambda x: (x * x)[None][0] * x, 3 * 2.0 ** 2),     # through indexing of a 0-d value
    (lambda x: mg.stack([x, x, x]).sum(), 3.0),
    (lambda x: mg.tensor([1.0, 2.0, 3.0], dtype="float64")[1] * x * x * x, 2 * 12.0),
])
def test_a_0d_leaf_gets_every_contribution(program, expected):
    x = scalar()
    program(x).backward()
    assert x.grad.shape == ()
    assert x.grad.item() == pytest.approx(expected, rel=1e-12)


def test_a_reused_0d_loss():
    x = scalar(0.5)
    loss = (x * 3.0).tanh()
    total = loss + 0.5 * loss ** 2 + loss * loss        # l + 1.5 l², l read four times
    total.backward()
    l = np.tanh(1.5)
    assert x.grad.item() == pytest.approx((1 + 3 * l) * (1 - l * l) * 3.0, rel=1e-12)


def test_a_value_read_three_times_by_index():
    v = mg.tensor(np.array([1.5, -2.0]), requires_grad=True)
    (v[0] * v[0] * v[0] + v[1]).backward()
    np.testing.assert_allclose(v.grad.numpy(), [3 * 1.5 ** 2, 1.0], rtol=1e-12)


def test_0d_gradients_accumulate_over_two_backwards():
    x = scalar()
    (x * x * x).backward()
    (x + x + x).backward()
    assert x.grad.item() == pytest.approx(12.0 + 3.0)


def test_second_derivative_through_0d_fan_out():
    x = scalar()
    (g,) = mg.grad(x * x * x * x, x, create_graph=True)     # 4x³
    (h,) = mg.grad(g, x)                                     # 12x²
    assert g.item() == pytest.approx(32.0) and h.item() == pytest.approx(48.0)


def test_hooks_and_retain_grad_on_a_0d_intermediate():
    x = scalar()
    y = x * 1.0
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(g.item()))
    (y * y * y).backward()                                  # ∂/∂y y³ = 3y² = 12
    assert seen == [pytest.approx(12.0)]
    assert y.grad.item() == pytest.approx(12.0) and x.grad.item() == pytest.approx(12.0)


def test_0d_fan_out_under_detect_anomaly():
    x = scalar()
    with mg.detect_anomaly():
        (x * x * x).backward()
    assert x.grad.item() == pytest.approx(12.0)


def test_the_walk_checks_each_gradient_against_its_input():
    class WrongDtype(mg.Function):
        def forward(self, x):
            return x * 2

        def backward(self, grad):
            return grad                                    # fine: the engine casts it

    class WrongKind(mg.Function):
        def forward(self, x):
            return x * 2

        def backward(self, grad):
            return object()

    x = mg.tensor(np.ones(3), requires_grad=True)
    WrongDtype.apply(x).astype("float32").sum().backward()
    assert x.grad.dtype == np.float64
    with pytest.raises((AttributeError, TypeError, AssertionError)):
        WrongKind.apply(x).sum().backward()


# ---------------------------------------------------------------------------------------------
# x ** 0 and x ** y at y = 0

@pytest.mark.parametrize("x0", [0.0, 2.0, -1.5])
def test_x_to_the_0_has_gradient_0(x0):
    x = mg.tensor(np.array([x0]), requires_grad=True)
    (x ** 0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0])


def test_x_to_a_tensor_0_at_x_0_has_gradient_0():
    x = mg.tensor(np.array([0.0, 0.0, 3.0]), requires_grad=True)
    y = mg.tensor(np.array([0.0, 2.0, 0.0]), requires_grad=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        (x ** y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])   # 2·0¹ = 0 too
    np.testing.assert_array_equal(y.grad.numpy(), [0.0, 0.0, np.log(3.0)])


# ---------------------------------------------------------------------------------------------
# gradients never alias

def test_gradients_of_an_add_are_separate_writable_arrays():
    a = mg.tensor(np.ones(3), requires_grad=True)
    b = mg.tensor(np.ones(3), requires_grad=True)
    (a + b).sum().backward()
    assert not np.shares_memory(a.grad.data, b.grad.data)
    a.grad.data[0] = 5.0
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 1.0, 1.0])


def _arrays_made_by(monkeypatch, cls) -> list:
    """Weak references to every gradient array cls's backward returns from now on (weak: they
    do not hold the arrays, so the engine counts the same references as without them)."""
    made, real = [], cls.backward

    def recording(self, grad):
        grads = real(self, grad)
        made.extend(weakref.ref(g) for g in grads if isinstance(g, np.ndarray))
        return grads
    monkeypatch.setattr(cls, "backward", recording)
    return made


@pytest.mark.parametrize("shape", [(), (1,), (5,)])
def test_a_fresh_weight_gradient_is_the_grad_and_a_shared_one_is_copied(monkeypatch, shape):
    """A weight gradient the backward made and nobody else holds becomes .grad itself (no
    copy); the one array Add hands to both its inputs is copied for each."""
    from minigrad.ops.elementwise import Add
    from minigrad.ops.linalg import MatMul
    rng = np.random.default_rng(0)
    x_np, w_np = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    a_np, b_np = rng.standard_normal(shape), rng.standard_normal(shape)
    by_matmul, by_add = _arrays_made_by(monkeypatch, MatMul), _arrays_made_by(monkeypatch, Add)
    x = mg.tensor(x_np)
    w, a, b = (mg.tensor(v, requires_grad=True) for v in (w_np, a_np, b_np))
    ((x @ w) * (a + b)).sum().backward()
    assert w.grad.data is by_matmul[-1]()                 # d/dw = xᵀ g: made, not copied
    assert by_add and all(r() is not a.grad.data and r() is not b.grad.data for r in by_add)
    assert not np.shares_memory(a.grad.data, b.grad.data)
    expect_ab = np.broadcast_to(x_np @ w_np, (3, 5)).sum(axis=0)    # ∂/∂a = Σ_rows x w
    expect_ab = expect_ab.sum().reshape(shape) if shape != (5,) else expect_ab
    np.testing.assert_allclose(a.grad.numpy(), expect_ab)
    np.testing.assert_allclose(b.grad.numpy(), expect_ab)
    np.testing.assert_allclose(w.grad.numpy(), x_np.T @ np.broadcast_to(a_np + b_np, (3, 5)))
    kept = [(t.grad, t.grad.numpy().copy()) for t in (w, a, b)]
    a.grad.data[...] = 7.0                                 # the caller's own, changed
    kept[1] = (a.grad, a.grad.numpy().copy())
    ((x @ w) * (a + b)).sum().backward()                  # adds into .grad: a new array
    for t, (g, value) in zip((w, a, b), kept):
        assert t.grad is not g and not np.shares_memory(t.grad.data, g.data)
        np.testing.assert_array_equal(g.numpy(), value)
    (g_w,) = mg.grad(((x @ w) * (a + b)).sum(), w)
    assert g_w.data is by_matmul[-1]() and not np.shares_memory(g_w.data, w.grad.data)


def test_a_gradient_someone_else_holds_is_copied():
    """The root's gradient of a leaf given by the caller, or a gradient a hook keeps, is held
    elsewhere: the .grad is a copy."""
    a = mg.tensor(np.ones(3), requires_grad=True)
    upstream = mg.tensor(np.array([1.0, 2.0, 3.0]))
    a.backward(upstream)
    assert not np.shares_memory(a.grad.data, upstream.data)
    kept = []
    b = mg.tensor(np.ones(3), requires_grad=True)
    b.register_hook(kept.append)
    (b * 2.0).sum().backward()
    assert kept[0].data is not b.grad.data
    b.grad.data[0] = 9.0
    np.testing.assert_array_equal(kept[0].numpy(), [2.0, 2.0, 2.0])


def test_backward_does_not_keep_the_callers_gradient():
    a = mg.tensor(np.ones(3), requires_grad=True)
    upstream = np.array([1.0, 2.0, 3.0])
    (a * 1.0).backward(upstream)
    upstream[:] = 0.0
    np.testing.assert_array_equal(a.grad.numpy(), [1.0, 2.0, 3.0])
    (g,) = mg.grad(a * 1.0, a, grad_outputs=mg.tensor(np.ones(3)))
    assert not np.shares_memory(g.data, a.grad.data)


def test_grad_outputs_of_a_leaf_root_are_copied():
    a = mg.tensor(np.ones(2), requires_grad=True)
    g_out = mg.tensor(np.array([4.0, 5.0]))
    (g,) = mg.grad(a, a, grad_outputs=g_out)
    assert not np.shares_memory(g.data, g_out.data)


# ---------------------------------------------------------------------------------------------
# in-place changes between forward and backward

def test_an_optimizer_step_between_forward_and_backward_is_caught():
    layer = nn.Linear(3, 2)
    opt = nn.optim.SGD(layer.parameters(), lr=0.1)
    x = mg.randn(4, 3)
    loss = layer(x).tanh().sum()
    for p in layer.parameters():
        p.grad = mg.ones_like(p)
    opt.step()
    with pytest.raises(RuntimeError, match=r"Affine saved its input 1 .*\(2, 3\).*changed in "
                                           r"place.*version 1"):
        loss.backward()


def test_in_place_change_of_a_saved_tensor_names_the_tensor_and_op():
    w = mg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    c = mg.tensor(np.array([3.0, 4.0]))
    c.name = "scale"
    y = (w * c).sum()
    c.mul_(2.0)
    with pytest.raises(RuntimeError, match="Mul saved its input 1 .*named 'scale'.*version 1"):
        y.backward()


def test_in_place_through_a_detached_alias_or_a_view_is_caught():
    w = mg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = w.exp().sum()
    with mg.no_grad():
        w.detach()[0] = 7.0                                 # shares w's memory
    with pytest.raises(RuntimeError, match="Exp saved its input 0"):
        y.backward()
    z = mg.tensor(np.arange(6.0).reshape(2, 3))
    w2 = mg.tensor(np.ones(3), requires_grad=True)
    y2 = (w2 * z[1]).sum()
    z.add_(1.0)                                             # z[1] is a view of z's memory
    with pytest.raises(RuntimeError, match="Mul saved its input 1"):
        y2.backward()


def test_in_place_changes_after_backward_or_of_unsaved_tensors_are_fine():
    w = mg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    other = mg.tensor(np.array([5.0]))
    y = (w * w).sum()
    other.add_(1.0)                                         # not in y's graph
    y.backward()
    with mg.no_grad():
        w.sub_(0.5 * w.grad)
    np.testing.assert_allclose(w.numpy(), [0.0, 0.0])
    assert w._version == 1


def test_in_place_on_a_tensor_that_requires_grad_needs_no_grad():
    w = mg.tensor(np.ones(2), requires_grad=True)
    for change in (lambda: w.add_(1.0), lambda: w.zero_(), lambda: w.__setitem__(0, 3.0)):
        with pytest.raises(RuntimeError, match="in-place change of a tensor that requires grad"):
            change()
    np.testing.assert_array_equal(w.numpy(), [1.0, 1.0])    # a failed call changes nothing
    assert w._version == 0


def test_in_place_methods_compute_what_numpy_does():
    t = mg.tensor(np.array([1.0, 2.0, 3.0]))
    t.add_(mg.tensor(np.array([1.0, 1.0, 1.0])), alpha=2).sub_(1.0).mul_(3.0).div_(2.0)
    np.testing.assert_allclose(t.numpy(), ((np.array([1.0, 2.0, 3.0]) + 2) - 1) * 3 / 2)
    t.copy_(np.array([0.5, 0.5, 0.5])).fill_(4.0)
    np.testing.assert_array_equal(t.numpy(), [4.0, 4.0, 4.0])
    t.grad = mg.ones(3)
    t.grad.zero_()
    np.testing.assert_array_equal(t.grad.numpy(), [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"copy_: .*tensor shape \(3,\)"):
        t.copy_(np.ones(4))


# ---------------------------------------------------------------------------------------------
# grad mode per thread

def test_no_grad_in_another_thread_does_not_change_this_one():
    inside, release = threading.Event(), threading.Event()

    def hold_no_grad():
        with mg.no_grad():
            inside.set()
            release.wait(5)

    worker = threading.Thread(target=hold_no_grad)
    worker.start()
    inside.wait(5)
    x = mg.tensor([1.0], requires_grad=True)
    recorded = (x * 2).requires_grad
    enabled = mg.is_grad_enabled()
    release.set()
    worker.join()
    assert recorded and enabled


def _train(seed: int, steps: int = 20) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w = mg.tensor(rng.standard_normal((4, 1)), requires_grad=True)
    x = mg.tensor(rng.standard_normal((16, 4)))
    y = mg.tensor(rng.standard_normal((16, 1)))
    for _ in range(steps):
        loss = ((x @ w).tanh() - y).sum() ** 2 * 0.01
        w.grad = None
        loss.backward()
        with mg.no_grad():
            w.sub_(0.1 * w.grad)
    return w.numpy()


def test_two_threads_train_separate_models_as_if_one_after_the_other():
    sequential = [_train(1), _train(2)]
    results = {}
    threads = [threading.Thread(target=lambda s=s: results.__setitem__(s, _train(s, 20)))
               for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(results[1], sequential[0])
    np.testing.assert_array_equal(results[2], sequential[1])


def test_grad_mode_decorators_with_and_without_parentheses_and_on_generators():
    @mg.no_grad
    def bare():
        return mg.is_grad_enabled()

    @mg.no_grad()
    def called():
        return mg.is_grad_enabled()

    @mg.no_grad()
    def steps():
        for _ in range(2):
            yield mg.is_grad_enabled()

    @mg.inference_mode
    def inferred():
        return mg.is_grad_enabled()

    assert not bare() and not called() and not inferred()
    modes = []
    for inside in steps():
        modes.append((inside, mg.is_grad_enabled()))       # the caller's mode between steps
    assert modes == [(False, True), (False, True)]
    with mg.no_grad():
        assert mg.enable_grad(lambda: mg.is_grad_enabled())()


def test_set_grad_enabled_as_a_call_and_as_a_context():
    try:
        mg.set_grad_enabled(False)
        assert not mg.is_grad_enabled()
    finally:
        mg.set_grad_enabled(True)
    with mg.set_grad_enabled(False):
        assert not mg.is_grad_enabled()
    assert mg.is_grad_enabled()
    with mg.inference_mode():
        assert not (mg.tensor([1.0], requires_grad=True) * 2).requires_grad


# ---------------------------------------------------------------------------------------------
# memory: a spent graph holds no arrays

def test_a_kept_loss_keeps_no_activations_after_backward():
    x = mg.tensor(np.random.default_rng(0).standard_normal((8, 8)), requires_grad=True)
    hidden = (x @ x).tanh()
    big = hidden.exp()
    refs = [weakref.ref(hidden), weakref.ref(big)]
    loss = (big * hidden).sum()
    del hidden, big
    assert all(r() is not None for r in refs)            # the graph needs them
    loss.backward()
    assert all(r() is None for r in refs)                # gone, though loss is kept
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


@pytest.mark.parametrize("on_device", [False, True])
def test_a_freed_graph_still_describes_each_input_it_let_go(on_device, sim_device):
    """After a backward without retain_graph each input other than a leaf that requires grad
    is a stub: no values, but the tensor's shape, dtype, name, device, producer and
    requires_grad, one stub per tensor however many operations read it, and the tensor itself
    while something else keeps it alive."""
    from minigrad.gradients import SpentTensor
    device = sim_device if on_device else "cpu"
    x = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True, device=device)
    scale = mg.tensor(np.full((2, 3), 2.0, dtype=np.float32), device=device)   # a constant
    hidden = x * scale
    hidden.name = "hidden"
    maker = hidden.grad_fn
    squared = hidden * hidden                             # hidden read twice by one node
    loss = (squared.exp() * 1.0).sum()
    loss.backward()
    a, b = squared.grad_fn.inputs
    assert a is b and isinstance(a, SpentTensor)          # one stub for the one tensor
    assert a.tensor is hidden                             # alive: the test holds it
    assert (a.shape, a.ndim, a.dtype, a.name, a.device) == ((2, 3), 2, np.float64, "hidden",
                                                            device)
    assert a._fn is maker and a._requires_grad is True    # as the walk and pictures read it
    x_kept, c = maker.inputs
    assert x_kept is x                                    # a leaf that requires grad stays
    assert isinstance(c, SpentTensor) and c._fn is None and c._requires_grad is False
    assert (c.shape, c.dtype, c.device, c.name) == ((2, 3), np.float32, device, None)
    assert c.tensor is scale                              # read once, and held by the test
    exp_out, _ = loss.grad_fn.inputs[0]._fn.inputs        # squared.exp(): held by no one
    assert exp_out.tensor is None and exp_out.shape == (2, 3)
    del scale
    gc.collect()
    assert c.tensor is None                               # nothing else held the constant


def test_a_tensor_read_by_two_nodes_and_held_by_none_gets_one_stub_and_goes():
    x = mg.tensor(np.arange(4.0), requires_grad=True)
    h = x * 2.0
    ref = weakref.ref(h)
    loss = (h * 3.0 + h.exp()).sum()
    del h
    loss.backward()
    scaled, exp_out = loss.grad_fn.inputs[0]._fn.inputs   # the sum's input, made by the add
    from_mul, from_exp = scaled._fn.inputs[0], exp_out._fn.inputs[0]
    assert from_mul is from_exp and from_mul.shape == (4,)  # one stub for h, read twice
    assert ref() is None and from_mul.tensor is None        # and h went with the graph


def test_a_hook_handle_holds_its_tensor_weakly():
    x = mg.tensor([1.0], requires_grad=True)
    y = x * 2
    handle = y.register_hook(lambda g: None)
    ref = weakref.ref(y)
    del y
    gc.collect()
    assert ref() is None
    handle.remove()                                      # harmless once the tensor is gone


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2 ** 20


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/statm"), reason="needs /proc")
def test_500_steps_keeping_every_loss_tensor_use_flat_memory():
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 1024), nn.Tanh(), nn.Linear(1024, 1))
    opt = nn.optim.SGD(model.parameters(), lr=1e-3)
    x = mg.randn(64, 4)
    losses = []
    rss = []
    for step in range(500):
        loss = (model(x) ** 2).mean()          # each step's activations: about 0.5 MB
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)                    # as a user logging losses might do
        if step in (100, 499):
            gc.collect()
            rss.append(_rss_mb())
    # kept activations would add 400 × 0.5 MB between the two readings
    assert rss[1] - rss[0] < 40, rss


# ---------------------------------------------------------------------------------------------
# a fused primitive whose inputs depend on each other: create_graph gives the same gradient

def _fused_programs():
    rng = np.random.default_rng(3)

    def leaf(*shape):
        return mg.tensor(rng.standard_normal(shape), requires_grad=True)

    q, v, gx = leaf(2, 3, 4), leaf(2, 3, 4), leaf(1, 3, 6)
    w_hh = leaf(6, 2)
    attention = (q, lambda q: nn.functional.scaled_dot_product_attention(
        q, q * 2.0, v * q)[0])                            # k and v computed from q
    gru = (gx, lambda gx: nn.recurrent.gru_sequence(gx, gx[:, 0, :2].tanh(), w_hh))
    return [attention, gru]


@pytest.mark.parametrize("case", range(2))
def test_create_graph_through_a_fused_primitive_counts_each_path_once(case):
    x, program = _fused_programs()[case]
    (plain,) = mg.grad((program(x) ** 2).sum(), x)
    (recorded,) = mg.grad((program(x) ** 2).sum(), x, create_graph=True)
    np.testing.assert_allclose(recorded.numpy(), plain.numpy(), rtol=1e-10, atol=1e-12)


def test_an_array_gradient_under_create_graph_becomes_a_tensor():
    class ArrayBackward(mg.Function):
        def forward(self, x):
            return x * 2

        def backward(self, grad):
            return grad.data * 2                        # an array, even when recording

    x = mg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    (g,) = mg.grad(ArrayBackward.apply(x).sum(), x, create_graph=True)
    assert isinstance(g, mg.Tensor)
    np.testing.assert_array_equal(g.numpy(), [2.0, 2.0])
