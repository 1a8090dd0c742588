"""minigrad.compile: capture once, replay exactly, and never replay where a guard says the
step might differ (each guard and each refusal below, and the footguns of replay: frozen
numbers, randomness, outputs overwritten, aliasing, stale parameters)."""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import minigrad as mg
from minigrad import compiled as compiled_module


def _params(rng, *shapes, dtype=np.float64):
    return [mg.tensor(rng.standard_normal(s), dtype=dtype, requires_grad=True) for s in shapes]


def _mlp_step(w1, b1, w2):
    """A two-layer net, the loss, and backward: what a compiled step usually holds."""
    def step(x, target):
        h = mg.tanh(x @ w1 + b1)                 # (B, H)
        err = h @ w2 - target                    # (B, 1)
        loss = (err * err).mean()
        loss.backward()
        return loss
    return step


def _update(params, lr=0.1):
    with mg.no_grad():
        for p in params:
            p.sub_(lr * p.grad)
            p.grad = None


def _run(step, params, batches, compiled):
    run = mg.compile(step) if compiled else step
    losses, grads = [], []
    for x, t in batches:
        losses.append(run(x, t).numpy())
        grads.append([p.grad.numpy() for p in params])
        _update(params)
    return losses, grads, run


def _batches(rng, n=6, shape=(4, 3)):
    return [(mg.tensor(rng.standard_normal(shape)), mg.tensor(rng.standard_normal((shape[0], 1))))
            for _ in range(n)]


def _twin_runs(n=6):
    """The same training run eagerly and compiled, from the same weights and batches."""
    rng = np.random.default_rng(0)
    shapes = [(3, 5), (5,), (5, 1)]
    init = [rng.standard_normal(s) for s in shapes]
    batches = _batches(rng, n)
    results = []
    for compiled in (False, True):
        params = [mg.tensor(v, requires_grad=True) for v in init]
        results.append(_run(_mlp_step(*params), params, batches, compiled))
    return results


@pytest.mark.parametrize("calls", [6, 14])    # 14: past CPython's specialising of the replay
def test_a_compiled_step_equals_eager_bit_for_bit_with_updates_between(calls):
    (losses, grads, _), (losses_c, grads_c, run) = _twin_runs(calls)
    assert run.stats.eager == 1 and run.stats.captures == 1 and run.stats.replays == calls - 2
    for a, b in zip(losses, losses_c):
        np.testing.assert_array_equal(a, b)
    for ga, gb in zip(grads, grads_c):
        for a, b in zip(ga, gb):
            np.testing.assert_array_equal(a, b)


def test_a_replay_reads_parameters_live_and_builds_no_graph():
    rng = np.random.default_rng(1)
    w1, b1, w2 = _params(rng, (3, 5), (5,), (5, 1))
    run = mg.compile(_mlp_step(w1, b1, w2))
    x, t = _batches(rng, 1)[0]
    for _ in range(3):
        w1.grad = b1.grad = w2.grad = None
        run(x, t)
    with mg.no_grad():
        w2.mul_(0.0)                          # the loss is then mean(t²), ∂/∂w1 = 0
    w1.grad = b1.grad = w2.grad = None
    loss = run(x, t)
    assert run.stats.replays == 2
    np.testing.assert_array_equal(loss.numpy(), (t.numpy() ** 2).mean())
    np.testing.assert_array_equal(w1.grad.numpy(), np.zeros((3, 5)))
    assert loss.grad_fn is None


def test_outputs_are_fresh_and_an_output_fed_back_replays_exactly():
    """h ← step(x, h): the output of one replay is the next one's input, and no replay writes
    into an array handed out before."""
    rng = np.random.default_rng(2)
    (w,) = _params(rng, (3, 3))

    def step(x, h):
        h = mg.tanh(x + h @ w)
        (h * h).sum().backward()
        return h.detach()

    def run(f):
        w.grad = None
        h, kept = mg.zeros((2, 3), dtype=np.float64), []
        for k in range(5):
            h = f(mg.tensor(np.full((2, 3), 0.1 * k)), h)
            kept.append((h, h.numpy()))
        return kept, w.grad.numpy()

    eager, g_eager = run(step)
    compiled = mg.compile(step)
    replayed, g_replayed = run(compiled)
    assert compiled.stats.replays == 3
    np.testing.assert_array_equal(g_eager, g_replayed)
    for (_, a), (t, b) in zip(eager, replayed):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(t.numpy(), b)      # unchanged by the later calls


# -- guards: a change re-captures (or stays eager) and is counted with its reason ------------

def _counted_step():
    rng = np.random.default_rng(3)
    w1, b1, w2 = _params(rng, (3, 5), (5,), (5, 1))
    return mg.compile(_mlp_step(w1, b1, w2)), (w1, b1, w2)


def _call(run, params, x, t):
    for p in params:
        p.grad = None
    return run(x, t)


@pytest.mark.parametrize("change", ["shape", "dtype", "requires_grad"])
def test_an_argument_of_another_shape_dtype_or_requires_grad_is_captured_anew(change):
    run, params = _counted_step()
    rng = np.random.default_rng(4)
    x, t = _batches(rng, 1)[0]
    for _ in range(3):
        _call(run, params, x, t)
    other = {"shape": lambda: mg.tensor(rng.standard_normal((6, 3))),
             "dtype": lambda: mg.tensor(rng.standard_normal((4, 3)), dtype=np.float32),
             "requires_grad": lambda: mg.tensor(rng.standard_normal((4, 3)),
                                                requires_grad=True)}[change]()
    t2 = mg.tensor(rng.standard_normal((other.shape[0], 1)))
    expected = _mlp_step(*params)(other, t2).numpy()      # eager, for comparison
    for _ in range(3):
        loss = _call(run, params, other, t2)
    np.testing.assert_array_equal(loss.numpy(), expected)
    assert run.stats.captures == 2 and run.stats.replays == 2     # one replay per signature
    if change == "requires_grad":
        assert other.grad is not None


def test_a_parameter_changed_from_outside_is_guarded():
    run, params = _counted_step()
    rng = np.random.default_rng(5)
    x, t = _batches(rng, 1)[0]
    for _ in range(3):
        _call(run, params, x, t)
    params[1].data = np.zeros(5, dtype=np.float32)        # rebound: another dtype
    loss = _call(run, params, x, t)
    assert any("outside the step changed" in r for r in run.stats.reasons)
    np.testing.assert_array_equal(loss.numpy(), _mlp_step(*params)(x, t).numpy())


def test_a_gradient_left_from_the_last_call_is_guarded():
    """Captured with every .grad None, replayed when one is left over: eager would add to it,
    so the step captures again instead of replacing it."""
    run, params = _counted_step()
    x, t = _batches(np.random.default_rng(6), 1)[0]
    for _ in range(3):
        _call(run, params, x, t)
    first = params[0].grad.numpy()
    run(x, t)                                             # grads not cleared
    np.testing.assert_array_equal(params[0].grad.numpy(), 2 * first)
    assert any("has a .grad now" in r for r in run.stats.reasons)


def test_grad_mode_anomaly_mode_and_numbers_are_part_of_the_signature():
    rng = np.random.default_rng(7)
    (w,) = _params(rng, (3,))

    def step(x, scale):
        y = (x * w * scale).sum()
        if mg.is_grad_enabled():
            y.backward()
        return y

    run = mg.compile(step)
    x = mg.tensor(rng.standard_normal(3))
    for scale in (2.0, 2.0, 2.0, 3.0, 3.0, 3.0):
        w.grad = None
        y = run(x, scale)
        np.testing.assert_array_equal(y.numpy(), (x.numpy() * w.numpy() * scale).sum())
        np.testing.assert_array_equal(w.grad.numpy(), x.numpy() * scale)
    assert run.stats.replays == 2
    with mg.no_grad():
        for _ in range(3):
            y = run(x, 3.0)
    assert y.requires_grad is False and run.stats.captures == 3
    with mg.detect_anomaly():
        run(x, 3.0)
    assert "anomaly" in run.stats.reasons[-1]


def test_the_same_tensor_passed_twice_is_another_signature():
    rng = np.random.default_rng(8)
    a, b = _params(rng, (3,), (3,))

    def step(x, y):
        loss = (x * y).sum()
        loss.backward()
        return loss

    run = mg.compile(step)
    for _ in range(3):
        a.grad = b.grad = None
        run(a, b)
    for _ in range(3):
        a.grad = None
        run(a, a)                                 # ∂(a·a)/∂a = 2a, both contributions
        np.testing.assert_array_equal(a.grad.numpy(), 2 * a.numpy())
    assert run.stats.captures == 2


def test_a_full_cache_runs_eagerly_and_says_so():
    run = mg.compile(lambda x: (x * 2).sum(), cache_size=2)
    for n in (1, 2, 3, 3):
        run(mg.ones(n))
    assert run.stats.reasons[-1].startswith("cache full")


# -- refusals: the step stays eager, correct, and stats say why -----------------------------

def _refused(step, *args, message):
    run = mg.compile(step)
    for _ in range(4):
        run(*args)
    assert run.stats.replays == 0, run.stats
    assert any(message in r for r in run.stats.reasons), run.stats.reasons
    return run


@pytest.mark.parametrize("read", [lambda t: t.item(), float, bool, lambda t: t.numpy(),
                                  np.asarray, lambda t: f"{t:.3f}",
                                  lambda t: mg.allclose(t, t * 2)])
def test_reading_values_refuses_capture(read):
    w = mg.tensor([1.5], requires_grad=True)

    def step(x):
        w.grad = None
        loss = (x * w).sum()
        read(loss)
        loss.backward()
        return loss

    _refused(step, mg.tensor([2.0]), message="reads a tensor's values")


def test_branching_on_values_refuses_capture():
    w = mg.tensor([1.5], requires_grad=True)

    def step(x):
        w.grad = None
        loss = (x * w).sum()
        if loss > 0:                        # the branch taken would be frozen
            loss = loss * 2
        loss.backward()
        return loss

    run = _refused(step, mg.tensor([2.0]), message="reads a tensor's values")
    run(mg.tensor([-2.0]))
    np.testing.assert_array_equal(w.grad.numpy(), [-2.0])


def test_an_optimizer_step_inside_refuses_capture():
    w = mg.tensor([1.5], requires_grad=True)

    def step(x):
        w.grad = None
        loss = (x * w).sum()
        loss.backward()
        with mg.no_grad():
            w.sub_(0.1 * w.grad)
        return loss

    _refused(step, mg.tensor([2.0]), message="in-place change")
    np.testing.assert_allclose(w.numpy(), [1.5 - 4 * 0.2], rtol=1e-6)     # every call updated


def _seeded_calls(f, w, calls=6):
    mg.manual_seed(11)
    results = []
    for _ in range(calls):
        w.grad = None
        results.append((f(mg.tensor(np.ones(50))).numpy(), w.grad.numpy()))
    return results


@pytest.mark.parametrize("draw", ["dropout", "locked_dropout", "randn", "rand_mask"])
def test_randomness_is_drawn_fresh_at_every_replay_as_eagerly(draw):
    """Dropout inside an operation, mg.randn and a mask compared from mg.rand outside one: each
    replay draws again, in eager's order, so a seeded replay equals a seeded eager run."""
    w = mg.tensor(np.ones(50), requires_grad=True)

    def step(x):
        if draw == "dropout":
            y = mg.dropout(x * w, 0.5)
        elif draw == "locked_dropout":                   # one draw per column of (5, 10)
            y = mg.dropout((x * w).reshape(5, 10), 0.5, noise_shape=(1, 10))
        elif draw == "randn":
            y = (x + mg.randn(50, dtype=np.float64)) * w
        else:
            y = mg.where(mg.rand(50) >= 0.5, x * w, 0.0)
        loss = y.sum()
        loss.backward()
        return loss

    compiled = mg.compile(step)
    eager, replayed = _seeded_calls(step, w), _seeded_calls(compiled, w)
    assert compiled.stats.replays == 4
    for (la, ga), (lb, gb) in zip(eager, replayed):
        np.testing.assert_array_equal(la, lb)
        np.testing.assert_array_equal(ga, gb)
    assert len({float(l) for l, _ in replayed}) > 1          # fresh draws on every call


def test_a_detached_value_is_taken_again_at_every_replay():
    """x.detach() inside the step is the step's own value, cut from the graph: each replay takes
    it from that replay's x, never the captured one (here a scale, so the result would move)."""
    w = mg.tensor(np.array([1.0, 2.0]), requires_grad=True)

    def step(x):
        scaled = x * w
        loss = (scaled / scaled.detach().abs().amax()).sum()
        loss.backward()
        return loss

    _replays_as_eager(step, w, [np.array([1.0, 3.0]) * k for k in range(1, 6)])


def _replays_as_eager(step, w, inputs) -> None:
    """step compiled and called on each input in turn gives, every call, the output and w's
    gradient of the same call made eagerly, bit for bit; all calls from the third replay."""
    compiled = mg.compile(step)
    for values in inputs:
        x = mg.tensor(values)
        w.grad = None
        out = compiled(x)
        grad = w.grad.numpy()
        w.grad = None
        np.testing.assert_array_equal(out.numpy(), step(x).numpy())
        np.testing.assert_array_equal(grad, w.grad.numpy())
    assert compiled.stats.replays == len(inputs) - 2, compiled.stats


SCALE = np.array([1.0, 10.0, 100.0, 1000.0])
POSITIONAL = {   # each reads x at positions that x's values decide
    "sort": lambda t: mg.sort(t, axis=0) * mg.tensor(SCALE),
    "sort indices": lambda t: t[mg.sort(t, dim=0, descending=True).indices] * mg.tensor(SCALE),
    "argsort": lambda t: mg.take_along_axis(t, mg.argsort(t), 0) * mg.tensor(SCALE),
    "topk": lambda t: t.topk(2)[0] * mg.tensor(SCALE[:2]),
    "kthvalue": lambda t: t.kthvalue(2)[0],
    "cummax": lambda t: mg.cummax(t, 0)[0] * mg.tensor(SCALE),
    "cummin indices": lambda t: t[mg.cummin(t, 0)[1]] * mg.tensor(SCALE),
    "max along a dim": lambda t: t.max(dim=0).values,
    "argmin": lambda t: mg.take_along_axis(t, mg.argmin(t, keepdims=True), 0),
}


@pytest.mark.parametrize("name", list(POSITIONAL))
def test_positions_computed_from_values_are_computed_again_at_every_replay(name):
    """The order, ranks and extremes of x move from call to call: each replay reads x where
    its own values say, with eager's values and gradients bit for bit."""
    f, w = POSITIONAL[name], mg.tensor(np.ones(4), requires_grad=True)

    def step(x):
        y = f(x * w)
        y.sum().backward()
        return y

    _replays_as_eager(step, w, [[3.0, -1.0, 2.0, 0.5], [3.0, -1.0, 2.0, 0.5],
                                [-1.0, 2.0, 3.0, -4.0], [2.0, 3.0, -1.0, 1.0],
                                [0.5, -2.0, 1.0, 3.0]])


@pytest.mark.parametrize("where", [lambda t: mg.nonzero(t > 0, as_tuple=True),
                                   lambda t: mg.argwhere(t > 0)[:, 0]])
def test_positions_whose_count_the_values_decide_refuse_capture(where):
    w = mg.tensor(np.ones(4), requires_grad=True)

    def step(x):
        w.grad = None
        loss = (x * w)[where(x)].sum()
        loss.backward()
        return loss

    run = _refused(step, mg.tensor([3.0, -1.0, 2.0, 0.5]), message="computed from values")
    run(mg.tensor([-1.0, 2.0, -3.0, -4.0]))
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 2.0, 0.0, 0.0])


SCATTERS = {
    "scatter": lambda x, i, s: mg.scatter(x, 0, i, s),
    "scatter_add": lambda x, i, s: mg.scatter_add(x, 0, i, s),
    "scatter_reduce prod": lambda x, i, s: mg.scatter_reduce(x, 0, i, s, "prod"),
    "scatter_reduce amax": lambda x, i, s: mg.scatter_reduce(x, 0, i, s, "amax"),
}


@pytest.mark.parametrize("name", list(SCATTERS))
def test_scatters_at_positions_from_a_tensor_refuse_and_from_constants_replay(name):
    """A scatter plans its writes from the index's values on the host (repeats, rounds): with
    the index a tensor of the step the plan would be frozen, so the step stays eager; with a
    constant index it replays."""
    scatter, w = SCATTERS[name], mg.tensor(np.ones(4), requires_grad=True)

    def step(x, index):
        w.grad = None
        loss = (scatter(x * w, index, (x * w)[:3] * 3.0) * mg.tensor([1.0, 2.0, 3.0, 4.0])).sum()
        loss.backward()
        return loss

    x = mg.tensor([0.5, -1.0, 2.0, 1.5])
    run = _refused(step, x, mg.tensor([2, 0, 2]), message="positions")
    run(x, mg.tensor([1, 3, 0]))
    expected = w.grad.numpy()
    w.grad = None
    step(x, mg.tensor([1, 3, 0]))
    np.testing.assert_array_equal(expected, w.grad.numpy())
    constant = mg.compile(lambda x: step(x, [2, 0, 2]))
    for _ in range(4):
        loss = constant(x)
    np.testing.assert_array_equal(loss.numpy(), step(x, [2, 0, 2]).numpy())
    assert constant.stats.replays == 2


# constants computed from a step's values outside any Function, each with a kernel: computed
# again from each replay's values
RECOMPUTED = {
    "tril": lambda h: mg.tril(h),
    "triu": lambda h: mg.triu(h, 1),
    "any": lambda h: mg.where(mg.any(h > 1.2, axis=-1, keepdims=True), h, 0.0),
    "all": lambda h: mg.where(mg.all(h > 0.4, axis=-1, keepdims=True), h, 0.0),
    "an integer-to-float cast": lambda h: h * mg.exp(mg.argmax(h, axis=-1, keepdims=True)),
    "one_hot": lambda h: h * mg.one_hot(mg.argmax(h, axis=-1), 3, dtype=np.float64),
    "isclose": lambda h: mg.where(mg.isclose(h, mg.tensor(1.5), atol=0.3), h, 0.0),
    "vector_norm of order 0": lambda h: h * mg.linalg.vector_norm(h - 1.5, ord=0, dim=-1,
                                                                  keepdim=True),
    "index_fill": lambda h: mg.index_fill(h, -1, mg.argmax(h[0], keepdims=True), 0.0),
    "count_nonzero": lambda h: h * mg.count_nonzero(h > 1.0, dim=-1, keepdims=True),
}


@pytest.mark.parametrize("name", list(RECOMPUTED))
@pytest.mark.parametrize("shape", [(3, 3), (1, 3)])
def test_constants_computed_from_values_are_computed_again_at_replay(name, shape):
    """Masks, casts and counts made from the step's values outside any Function replay, each
    computed again from the replay's values: equal to eager on inputs that change them."""
    w = mg.tensor(np.linspace(0.5, 1.5, 3), requires_grad=True)

    def step(x):
        loss = RECOMPUTED[name](x * w).sum()
        loss.backward()
        return loss

    rng = np.random.default_rng(len(name))
    compiled = _against_eager(step, w, (mg.tensor(rng.uniform(0.0, 2.0, shape))
                                        for _ in range(6)))
    assert compiled.stats.replays == 4, compiled.stats


def test_one_hot_checks_its_range_again_at_replay():
    w = mg.tensor(np.ones(3), requires_grad=True)

    @mg.compile
    def step(labels):
        loss = (mg.one_hot(labels, 3, dtype=np.float64) * w).sum()
        loss.backward()
        return loss

    for _ in range(3):
        step(mg.tensor([0, 2]))
    assert step.stats.replays == 1
    with pytest.raises(ValueError, match=r"one_hot: indices must lie in \[0, 3\)"):
        step(mg.tensor([0, 3]))


def test_values_computed_outside_operations_refuse_capture():
    """Positions whose count the values decide (nonzero), computed from a tensor's array
    outside any Function, would be frozen: refused."""
    w = mg.tensor(np.ones(3), requires_grad=True)

    def step(x):
        w.grad = None
        loss = (x * w)[mg.nonzero(x > 1.5, as_tuple=True)].sum()
        loss.backward()
        return loss

    run = _refused(step, mg.tensor([1.0, 3.0, 2.0]), message="computed from values outside")
    run(mg.tensor([3.0, 1.0, 1.0]))
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 0.0, 0.0])


# values a step reads from its input through .data, outside any operation, and feeds back in
DATA_READS = {
    "mg.tensor of .data": lambda x, w: w * mg.tensor(x.data * 2.0),
    "a number from .data": lambda x, w: x * w * float(x.data.max()),
    "a 0-d tensor from .data": lambda x, w: x * w * mg.tensor(x.data.max()),
    "mg.full from .data": lambda x, w: w * mg.full((3,), float(x.data.flat[0])),
    "from_numpy of .data": lambda x, w: w * mg.from_numpy(x.data * 2.0),
    "an array operand from .data": lambda x, w: w * (x.data + 1.0),
    "an option from .data": lambda x, w: mg.roll(x * w, int(x.data.flat[0]) % 3, dims=-1),
    "an index from .data": lambda x, w: (x * w)[..., np.argsort(x.data.ravel())],
    "a scatter's positions from .data": lambda x, w: mg.scatter_add(
        (x * w).reshape(-1), 0, np.argsort(x.data.ravel()), x.reshape(-1) * 3.0),
}


@pytest.mark.parametrize("name", list(DATA_READS))
@pytest.mark.parametrize("shape", [(3,), (1, 3)])
def test_values_read_through_data_refuse_capture(name, shape):
    """What a step computes from `.data` outside any operation becomes a constant or an
    option of the capture. It differs from the previous call's, so the capture is refused and
    every call runs eagerly with its own values (a replay would freeze the captured ones)."""
    read, w = DATA_READS[name], mg.tensor(np.ones(3), requires_grad=True)

    def step(x):
        loss = read(x, w).sum()
        loss.backward()
        return loss

    compiled = _against_eager(step, w, (mg.tensor(np.array([float(i), 2.0 * i % 5, 1.5 - i])
                                                  .reshape(shape)) for i in range(5)))
    assert compiled.stats.replays == 0, compiled.stats
    assert "differs from the previous call's" in compiled.stats.reasons[-1], compiled.stats


def _against_eager(step, w, inputs):
    """`step` compiled, called on each of `inputs` in turn and then eagerly on the same one:
    the same loss and the same w.grad every time. Returns the compiled step."""
    compiled = mg.compile(step)
    for x in inputs:
        w.grad = None
        loss, grad = compiled(x).numpy(), w.grad.numpy()
        w.grad = None
        np.testing.assert_array_equal(loss, step(x).numpy())
        np.testing.assert_array_equal(grad, w.grad.numpy())
    return compiled


@pytest.mark.parametrize("extra", [lambda h: h * 2.0, lambda h: h.exp()])
def test_a_step_whose_operations_change_between_its_first_calls_refuses_capture(extra):
    """A step that branches on state its guards do not see (here a dict outside it) and so
    runs other operations than on the previous call is not captured."""
    w, mode = mg.tensor(np.ones(3), requires_grad=True), {"more": False}

    def step(x):
        h = x * w
        if mode["more"]:
            h = extra(h)
        loss = h.sum()
        loss.backward()
        return loss

    def calls():
        for more in (False, True, True, False):
            mode["more"] = more
            yield mg.tensor([1.0, 2.0, 3.0])

    compiled = _against_eager(step, w, calls())
    assert compiled.stats.replays == 0, compiled.stats
    assert "differs from the previous call's" in compiled.stats.reasons[-1], compiled.stats


def _sgd_through_data(w, x):
    w.data = np.asarray(w.data - 0.1 * w.grad.data)        # 0-d arithmetic gives a scalar


def _sgd_into_data(w, x):
    w.data -= 0.1 * w.grad.data


def _sgd_by_setitem(w, x):
    w.data[...] = w.data - 0.1 * w.grad.data


def _scaled_argument(w, x):
    x.data *= 0.5


WRITES = {"w.data = ...": (_sgd_through_data, False), "w.data -= ...": (_sgd_into_data, False),
          "w.data[...] = ...": (_sgd_by_setitem, False), "x.data *= ...": (_scaled_argument, False),
          "w.data -= ... first": (_sgd_into_data, True)}


@pytest.mark.parametrize("name", list(WRITES))
@pytest.mark.parametrize("shape", [(), (1,), (3,)])
def test_writes_through_data_refuse_capture(name, shape):
    """PyTorch's old idiom `p.data -= lr * p.grad` inside a step changes a parameter outside
    any operation: a replay would not, so the capture is refused and every call updates. Also
    when the write comes first, before any operation reads the tensor (seen from the second
    call on: the tensors the previous call read are watched from the start), and for a
    write into an argument."""
    write, first = WRITES[name]
    w = mg.tensor(np.full(shape, 1.0), requires_grad=True)     # a parameter: from outside

    def step(x):
        if first and w.grad is not None:
            write(w, x)
        w.grad = None
        loss = (w * x * x).sum()
        loss.backward()
        if not first:
            write(w, x)
        return loss

    results = []
    for compiled in (False, True):
        w.data, w.grad = np.full(shape, 1.0), None
        run = mg.compile(step) if compiled else step
        results.append([(run(mg.tensor(np.full(shape, 1.0 + i))).numpy(), w.numpy())
                        for i in range(5)])
    for (loss, w), (loss_c, w_c) in zip(*results):
        np.testing.assert_array_equal(loss, loss_c)
        np.testing.assert_array_equal(w, w_c)
    assert run.stats.replays == 0, run.stats
    assert "from outside the step" in run.stats.reasons[-1], run.stats


# writes through .data into values the step computed, before later operations read them
INTERMEDIATE_WRITES = {
    "h.data[...] = ... (a mask)": lambda h, mask: h.data.__setitem__(h.data < 2.0, 0.0),
    "h.data *= ...": lambda h, mask: h.data.__imul__(3.0),
    "h.data = ...": lambda h, mask: setattr(h, "data", np.asarray(h.data * 3.0)),
    "the comparison's .data[...] = ...": lambda h, mask: mask.data.__setitem__(..., True),
}


@pytest.mark.parametrize("name", list(INTERMEDIATE_WRITES))
@pytest.mark.parametrize("shape", [(), (1,), (3,)])
def test_writes_through_data_into_computed_values_refuse_capture(name, shape):
    """`scores.data[mask] = 0` inside a step changes a value the step computed outside any
    operation: the later operations and the backward read the changed values eagerly, a
    replay would not write, so the capture is refused and every call runs eagerly."""
    write, w = INTERMEDIATE_WRITES[name], mg.tensor(np.full(shape, 1.5), requires_grad=True)

    def step(x):
        h = x * w
        mask = h > 2.0
        write(h, mask)
        loss = (mg.where(mask, h, 0.0) * w).sum()
        loss.backward()
        return loss

    compiled = _against_eager(step, w, (mg.tensor(np.full(shape, 1.0 + i)) for i in range(5)))
    assert compiled.stats.replays == 0, compiled.stats
    assert "the step computed was" in compiled.stats.reasons[-1], compiled.stats


def test_views_of_parameters_changed_by_a_live_update_still_replay():
    """A value the step computed that is a view of a parameter (w.T, w[0]) changes when the
    optimizer inside the step updates the parameter in place: not a write through .data, the
    step replays, equal to eager."""
    results = []
    for compiled in (False, True):
        w = mg.tensor(np.arange(6.0).reshape(2, 3) / 7.0, requires_grad=True)

        @mg.compiler.disable
        @mg.no_grad()
        def sgd():
            w.sub_(0.1 * w.grad)
            w.grad = None

        def step(x):
            loss = (x @ w.T).sum() + (w[0] * w[1]).sum()
            loss.backward()
            sgd()
            return loss

        run = mg.compile(step) if compiled else step
        results.append([(run(mg.tensor(np.ones((4, 3)) * i)).numpy(), w.numpy().copy())
                        for i in range(5)])
    assert run.stats.replays == 3, run.stats
    for (loss, w_eager), (loss_c, w_c) in zip(*results):
        np.testing.assert_array_equal(loss, loss_c)
        np.testing.assert_array_equal(w_eager, w_c)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")    # 0·inf, discarded by where
def test_constants_holding_nan_inf_and_huge_values_replay():
    """Constants equal from call to call, NaN, ±inf and 1e20 among them, compare as equal
    (NaN to NaN), so the step still replays, and the replay equals eager."""
    w = mg.tensor(np.ones(4), requires_grad=True)

    def step(x):
        edges = mg.tensor([np.nan, np.inf, -np.inf, 1e20])
        loss = mg.where(mg.isfinite(edges), x * w * edges, x * w).sum() * mg.tensor(0.0).exp()
        loss.backward()
        return loss

    compiled = _against_eager(step, w, (mg.tensor(np.arange(4.0) - i) for i in range(5)))
    assert compiled.stats.replays == 3, compiled.stats


def test_constants_made_alike_at_every_call_replay():
    """Tensors, numbers and arrays made inside the step from data that does not change (and
    options that do not) are constants of the capture: the step replays."""
    w = mg.tensor(np.ones((3, 3)), requires_grad=True)
    lower = np.tril(np.ones((3, 3), dtype=bool))

    def step(x):
        h = x * w * mg.tensor([1.0, 2.0, 3.0]) + mg.full((3,), 0.5) * 2.0
        h = mg.where(mg.tensor(lower), h, 0.0) + mg.from_numpy(np.arange(3.0)) * x.shape[-1]
        loss = mg.roll(h, 1, dims=-1)[[2, 0, 1]].sum()
        loss.backward()
        return loss

    compiled = _against_eager(step, w, (mg.tensor(np.arange(3.0) * i - 1.0) for i in range(5)))
    assert compiled.stats.replays == 3, compiled.stats


def test_manual_seed_grad_create_graph_and_hooks_inside_refuse_capture():
    w = mg.tensor([1.5, 2.0], requires_grad=True)
    x = mg.tensor([2.0, 3.0])

    def seeded(x):
        mg.manual_seed(0)
        w.grad = None
        loss = mg.dropout(x * w, 0.5).sum()
        loss.backward()
        return loss

    def with_grad(x):
        (g,) = mg.grad((x * w).sum(), [w])
        return g

    def twice(x):
        w.grad = None
        (x * w * w).sum().backward(create_graph=True)
        return w.grad

    def hooked(x):
        w.grad = None
        y = x * w
        y.register_hook(lambda g: g * 2)
        y.sum().backward()
        return y

    _refused(seeded, x, message="manual_seed")
    _refused(with_grad, x, message="minigrad.grad")
    _refused(twice, x, message="create_graph")
    _refused(hooked, x, message="hooks")


def test_manual_seed_called_again_and_again_inside_refuses_capture():
    """Each manual_seed frees the generator the one before made; a later one may be put at a
    freed one's address, so the generator before the step must be told apart by itself, not
    by its id()."""
    w = mg.tensor([1.5, 2.0, -0.5], requires_grad=True)

    def reseeding(x):
        w.grad = None
        total = 0
        for _ in range(3):
            mg.manual_seed(3)          # the generator before is freed here,
            mg.manual_seed(7)          # and its memory most often given to this one
            total = total + mg.dropout(x * w, 0.5).sum()
        total.backward()
        return total

    run = _refused(reseeding, mg.tensor([2.0, 3.0, 1.0]), message="manual_seed")
    mg.manual_seed(1)
    loss = run(mg.tensor([2.0, 3.0, 1.0]))             # eager again: seeded as written
    mg.manual_seed(7)
    np.testing.assert_array_equal(loss.numpy(), 3 * mg.dropout(
        mg.tensor([2.0, 3.0, 1.0]) * w.detach(), 0.5).sum().numpy())


def test_a_gradient_assigned_inside_refuses_capture():
    w = mg.tensor([1.5], requires_grad=True)

    def step(x):
        w.grad = mg.zeros(1, dtype=w.dtype)          # zero_grad(set_to_none=False) style
        loss = (x * w).sum()
        loss.backward()
        return loss

    _refused(step, mg.tensor([2.0]), message="assigned inside the step")


def test_nested_compiled_steps_fail_on_the_first_call():
    inner = mg.compile(lambda x: x * 2)
    outer = mg.compile(lambda x: inner(x) + 1)
    with pytest.raises(RuntimeError, match="nested"):
        outer(mg.ones(2))


def test_the_environment_switch_turns_replay_off(monkeypatch):
    monkeypatch.setenv("MINIGRAD_COMPILE", "0")
    run = mg.compile(lambda x: (x * 2).sum())
    for _ in range(4):
        run(mg.ones(2))
    assert run.stats.eager == 4 and run.stats.captures == 0 and run.stats.replays == 0


def test_check_compares_with_eager_and_catches_a_frozen_input():
    """Data read through a Python global is frozen into the capture: check=True sees the
    replay differ from eager and raises."""
    source = {"values": np.ones(3)}
    w = mg.tensor(np.ones(3), requires_grad=True)

    def step():
        w.grad = None
        loss = (mg.tensor(source["values"]) * w).sum()
        loss.backward()
        return loss

    run = mg.compile(step, check=True)
    run(), run()
    source["values"] = np.full(3, 2.0)
    with pytest.raises(RuntimeError, match="differs from the eager step"):
        run()


def test_check_passes_on_a_correct_step_and_counts():
    rng = np.random.default_rng(0)
    shapes = [(3, 5), (5,), (5, 1)]
    params = [mg.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    run = mg.compile(_mlp_step(*params), check=True)
    for x, t in _batches(rng, 5):
        run(x, t)
        _update(params)
    assert run.stats.checked == 2 and run.stats.replays == 3


def test_zero_grad_inside_the_step_is_replayed():
    rng = np.random.default_rng(9)
    params = _params(rng, (3, 5), (5,), (5, 1))
    inner = _mlp_step(*params)

    def step(x, t):
        for p in params:
            p.grad = None
        return inner(x, t)

    run = mg.compile(step)
    x, t = _batches(rng, 1)[0]
    first = None
    for _ in range(4):
        run(x, t)
        first = params[0].grad.numpy() if first is None else first
        np.testing.assert_array_equal(params[0].grad.numpy(), first)
    assert run.stats.replays == 2


class _ScaledSquare(mg.FusedFunction):
    """y = s·x² with s an option; ∂y/∂x = 2·s·x, written once on arrays and once recorded."""

    calls = {"array": 0, "recorded": 0}

    def __init__(self, scale):
        self.scale = scale

    def forward(self, x):
        self.save_for_backward(x)
        return self.scale * x * x

    def array_backward(self, grad):
        _ScaledSquare.calls["array"] += 1
        (x,) = self.saved_tensors
        return (2.0 * self.scale) * x * grad

    def recorded_backward(self, grad):
        _ScaledSquare.calls["recorded"] += 1
        (x,) = self.inputs
        return (2.0 * self.scale) * x * grad


def test_a_fused_function_replays_its_array_backward_on_fresh_saved_values():
    """A FusedFunction's replay runs its forward (saving that call's arrays) and its own
    `array_backward`, so the gradients follow the new inputs exactly."""
    rng = np.random.default_rng(7)
    (w,) = _params(rng, (4,))

    def step(x):
        loss = (_ScaledSquare.apply(x * w, scale=1.5) + w).sum()
        loss.backward()
        return loss

    run = mg.compile(step)
    _ScaledSquare.calls.update(array=0, recorded=0)
    for i in range(5):
        x = mg.tensor(rng.standard_normal(4))
        w.grad = None
        loss = run(x)
        xs, ws = x.numpy(), w.numpy()
        u = xs * ws                                   # the same operations in the same order
        np.testing.assert_array_equal(loss.numpy(), (1.5 * u * u + ws).sum())
        np.testing.assert_array_equal(w.grad.numpy(), 3.0 * u * xs + 1.0)
    assert run.stats.replays == 3
    assert _ScaledSquare.calls == {"array": 5, "recorded": 0}


@pytest.mark.parametrize("test", [lambda x: ~(x > 0), mg.isnan, mg.isfinite, mg.isinf,
                                  mg.isposinf, mg.isneginf],
                         ids=["not", "isnan", "isfinite", "isinf", "isposinf", "isneginf"])
# x·w's backward multiplies a zero gradient by an infinite x where the mask did not cover it:
# NaN in ∂/∂w, eager and replayed alike, and NumPy's warning each time
@pytest.mark.filterwarnings("ignore:invalid value encountered in multiply:RuntimeWarning")
def test_elementwise_tests_are_computed_again_at_every_replay(test):
    """A bool mask from an elementwise test of an argument steers masked_fill: each replay
    computes it from that call's values, as eager does."""
    (w,) = _params(np.random.default_rng(8), (5,))

    def step(x):
        loss = (mg.masked_fill(x * w, test(x), 0.0) ** 2).sum()
        loss.backward()
        return loss

    run = mg.compile(step)
    values = np.array([1.0, -2.0, np.inf, np.nan, -np.inf])
    for call in range(5):
        x = mg.tensor(np.roll(values, call))
        w.grad = None
        loss = run(x)
        g = w.grad.numpy()
        w.grad = None
        expected = step(x)
        np.testing.assert_array_equal(loss.numpy(), expected.numpy())
        np.testing.assert_array_equal(g, w.grad.numpy())
    assert run.stats.replays == 3


# -- memory: between replays a program holds parameters and constants only -------------------

class _Probe(mg.Function):
    """y = 2x; keeps weak references to the arrays it makes and saves, to see who holds them."""

    made: list = []

    def forward(self, x):
        y = x * 2
        kept = x + 0                            # a saved value the program owns
        self.save_for_backward(kept)
        _Probe.made += [weakref.ref(y), weakref.ref(kept)]
        return y

    def backward(self, grad):
        (kept,) = self.saved_tensors
        assert kept.shape == grad.shape
        return grad * 2                         # ∂y/∂x = 2


def test_a_replay_keeps_no_array_but_the_outputs_handed_out():
    rng = np.random.default_rng(3)
    (w,) = _params(rng, (4,))

    def step(x):
        y = _Probe.apply(x * w)
        loss = (y * y).sum()
        loss.backward()
        return y, loss

    run = mg.compile(step)
    held = []
    for call in range(4):
        for rows in (3, 1, 5):                   # three argument signatures, cached side by side
            x = mg.tensor(rng.standard_normal((rows, 4)))
            w.grad = None
            _Probe.made.clear()
            y, loss = run(x)
            expected = 2 * (x.numpy() * w.numpy())
            np.testing.assert_array_equal(y.numpy(), expected)
            held.append((y, expected))
            alive = {id(r()) for r in _Probe.made if r() is not None}
            assert alive <= {id(y.data)}, "a replay left an array of the step alive"
    assert run.stats.replays == 6
    for y, expected in held:                     # outputs handed out are never written into
        np.testing.assert_array_equal(y.numpy(), expected)


def test_gradients_land_uncopied_only_where_nothing_else_holds_them():
    """A weight's gradient the backward made for it alone becomes its .grad as it is; the one
    array Add gives both inputs is copied for each; a .grad the caller kept from an earlier
    call stays as it was through later replays, updates and in-place changes of the new one;
    every value equals eager's."""
    rng = np.random.default_rng(4)
    init = [rng.standard_normal(s) for s in ((3, 2), (2,), (2,))]
    batches = [mg.tensor(rng.standard_normal((5, 3))) for _ in range(6)]

    def train(compiled):
        w, a, b = (mg.tensor(v, requires_grad=True) for v in init)

        def step(x):
            loss = ((x @ w) * (a + b)).sum()     # Add hands one gradient to a and to b
            loss.backward()
            return loss

        run = mg.compile(step) if compiled else step
        kept, seen = [], []
        for x in batches:
            for p in (w, a, b):
                p.grad = None
            loss = run(x)
            grads = [p.grad for p in (w, a, b)]
            kept.append([(g, g.numpy()) for g in grads])
            seen.append([loss.numpy()] + [g.numpy() for g in grads])
            assert not np.shares_memory(a.grad.data, b.grad.data)
            assert not any(np.shares_memory(g.data, p.data) for g in grads for p in (w, a, b))
            a.grad.mul_(2.0)                     # the caller's own .grad, changed in place
            with mg.no_grad():
                for p in (w, a, b):
                    p.sub_(0.1 * p.grad)
            kept[-1][1] = (a.grad, a.grad.numpy())
        return seen, kept, run

    landed = []
    real = compiled_module.held_alone

    def counted(g, references):          # one frame more holds g: one reference more
        landed.append(real(g, references + 1))
        return landed[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compiled_module, "held_alone", counted)
        (eager, _, _), (compiled, kept, run) = train(False), train(True)
    assert run.stats.replays == 4
    assert landed.count(True) == 4 and landed.count(False) == 8    # w's; a's and b's copied
    for values, values_c in zip(eager, compiled):
        for e, c in zip(values, values_c):
            np.testing.assert_array_equal(e, c)
    for grads in kept:                           # never written by a later call
        for g, value in grads:
            np.testing.assert_array_equal(g.numpy(), value)


def test_the_cache_holds_no_activations_after_replays_of_several_shapes():
    rng = np.random.default_rng(4)
    (w,) = _params(rng, (256,))

    def step(x):
        y = mg.tanh(x * w)
        loss = (y * y).sum()
        loss.backward()
        return loss

    run = mg.compile(step)
    batches = [mg.tensor(rng.standard_normal((rows, 256))) for rows in (512, 256, 128)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(4):
            for x in batches:
                w.grad = None
                run(x)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert run.stats.replays == 6
    # w.grad (2 KB) and the programs' bookkeeping; one (512, 256) activation alone is 1 MB
    assert held < 256 * 1024, f"{held} bytes held after the replays"


def _subclasses(cls) -> list:
    found = []
    for sub in cls.__subclasses__():
        found += [sub] + _subclasses(sub)
    return found


def test_built_in_functions_keep_state_only_through_save_for_backward():
    """A replay reuses one Function per operation and, after each replay, lets go of what a
    built-in one kept by clearing `saved_tensors` only when its forward calls
    save_for_backward (see compiled._Writer._reset): so no method of a built-in Function but
    __init__ may set an attribute on self, and save_for_backward is called in forward itself."""
    import ast
    import inspect
    import textwrap

    import minigrad.ops  # noqa: F401  (every built-in class defined)
    built_in = [c for c in _subclasses(mg.Function) if compiled_module._built_in(c)]
    assert len(built_in) > 50
    for cls in built_in:
        for name, method in vars(cls).items():
            if name == "__init__" or not inspect.isfunction(method):
                continue
            tree = ast.parse(textwrap.dedent(inspect.getsource(method)))
            for node in ast.walk(tree):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
                for target in targets:         # self.x = ..., self.x[i] = ..., self.x.y = ...
                    while isinstance(target, (ast.Subscript, ast.Attribute)):
                        if isinstance(target, ast.Attribute) and \
                                isinstance(target.value, ast.Name) and target.value.id == "self":
                            raise AssertionError(f"{cls.__name__}.{name} sets self.{target.attr}")
                        target = target.value
                if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == \
                        "save_for_backward":
                    assert name == "forward", f"{cls.__name__}.{name} saves"


def test_the_replay_is_written_as_calls_of_each_functions_own_methods():
    rng = np.random.default_rng(5)
    (w,) = _params(rng, (3,))

    def step(x):
        loss = (mg.tanh(x * w) + w).sum()
        loss.backward()
        return loss

    run = mg.compile(step)
    for _ in range(3):
        w.grad = None
        run(mg.tensor(rng.standard_normal((2, 3))))
    (signature,) = run._signatures.values()
    source = signature.program.source
    for name in ("Mul", "Tanh", "Add", "Sum"):
        assert f".forward(" in source and f"# {name}" in source
    # one backward per operation: a Function written as a `gradients` formula is given the
    # arrays the replay holds (no holder is filled for them), the others their own backward
    backwards = [line for line in source.splitlines()
                 if ".backward(" in line or ".gradients(" in line]
    assert len(backwards) == 4
    for line in backwards:
        name = line.rsplit("# ", 1)[1]
        entry = next(e for e in signature.program.entries if e.cls.__name__ == name)
        formula = compiled_module._formula(entry.cls) is not None
        assert (".gradients(g" in line) == formula, line
    assert sum(".gradients(g" in line for line in backwards) >= 3     # Mul, Tanh, Add
    assert "_owned_copy(g" in source             # w's second gradient: the walk's own buffer



class _Cube(mg.Function):
    """y = x³, its derivative written as a `gradients` formula (a class of one's own)."""

    def forward(self, x):
        return x ** 3

    def gradients(self, g, x, y):
        # ∂y/∂x = 3x²
        return g * 3 * x * x


def test_a_formula_of_ones_own_is_given_the_arrays_and_replays_exactly():
    rng = np.random.default_rng(8)
    (w,) = _params(rng, (2, 3))
    x0 = rng.standard_normal((2, 3))

    def step(x):
        loss = (_Cube.apply(x * w) * w).sum()
        loss.backward()
        return loss

    # eager: the formula is the backward (x³'s second derivative too, under create_graph)
    x = mg.tensor(x0, requires_grad=True)
    (g,) = mg.grad(_Cube.apply(x).sum(), [x], create_graph=True)
    np.testing.assert_allclose(g.numpy(), 3 * x0 ** 2)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x0)

    run = mg.compile(step)
    for _ in range(4):
        w.grad = None
        replayed = run(mg.tensor(x0)).numpy()
        replayed_grad = w.grad.numpy()
        w.grad = None
        np.testing.assert_array_equal(step(mg.tensor(x0)).numpy(), replayed)
        np.testing.assert_array_equal(w.grad.numpy(), replayed_grad)
    assert run.stats.replays == 2
    (signature,) = run._signatures.values()
    assert ".gradients(g" in next(line for line in signature.program.source.splitlines()
                                  if "# _Cube" in line and "= op" in line and "forward" not in line)


# -- live calls (mg.compiler.disable): the optimizer step inside the compiled step -----------

def _sgd(params, hyper):
    """A plain SGD step with momentum, marked to run live; hyper: {"lr": .., "t": step count}."""
    state = {}

    @mg.compiler.disable
    @mg.no_grad()
    def step():
        hyper["t"] += 1
        for i, p in enumerate(params):
            buf = state.get(i)
            if buf is None:
                buf = state[i] = p.grad.data.copy()
            else:
                buf *= 0.9
                buf += p.grad.data
            p.sub_(hyper["lr"] * buf)
    return step


def _live_training(compiled: bool, calls: int = 6):
    rng = np.random.default_rng(3)
    params = _params(rng, (3, 5), (5,), (5, 1))
    inner = _mlp_step(*params)
    hyper = {"lr": 0.1, "t": 0}
    update = _sgd(params, hyper)

    @mg.compiler.disable
    def zero_grad():
        for p in params:
            p.grad = None

    def step(x, t):
        zero_grad()
        loss = inner(x, t)
        update()
        return loss

    run = mg.compile(step) if compiled else step
    history = []
    for x, t in _batches(rng, calls):
        loss = run(x, t)
        history.append([loss.numpy()] + [p.numpy() for p in params] +
                       [p.grad.numpy() for p in params])
        hyper["lr"] *= 0.7                       # a schedule: read at every replay
    return history, run, hyper


def test_a_live_optimizer_step_inside_replays_bit_for_bit_and_reads_lr_live():
    eager, _, hyper = _live_training(False)
    replayed, run, hyper_c = _live_training(True)
    assert run.stats.replays == 4 and run.stats.eager == 1, run.stats
    assert hyper_c["t"] == hyper["t"] == 6                 # the live call made at every call
    for a, b in zip(eager, replayed):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    source = next(iter(run._signatures.values())).program.source
    assert "step, live" in source and "zero_grad, live" in source


def test_a_live_call_runs_as_itself_outside_a_compiled_step():
    calls = []
    marked = mg.compiler.disable(lambda a, b=1: calls.append((a, b)) or a + b)
    assert marked(2, b=3) == 5 and calls == [(2, 3)]


def test_a_live_result_is_handed_out_fresh_and_a_step_argument_passed_to_it_is_this_calls():
    w = mg.tensor([1.5, -2.0], requires_grad=True)

    @mg.compiler.disable
    def norm_of(x):                 # x: the step's argument, read at every replay
        return float(np.abs(x.data).sum() + np.abs(w.grad.data).sum())

    def step(x):
        w.grad = None
        (x * w).sum().backward()
        return norm_of(x)

    run = mg.compile(step)
    for k in range(5):
        x = mg.tensor([1.0 + k, 2.0])
        assert run(x) == step(x)
    assert run.stats.replays == 3, run.stats


def test_a_live_result_used_by_the_step_refuses_capture():
    w = mg.tensor([1.5], requires_grad=True)
    total = mg.compiler.disable(lambda: mg.tensor([float(np.abs(w.grad.data).sum())]))
    number = mg.compiler.disable(lambda: float(np.abs(w.grad.data).sum()))

    def uses_tensor(x):
        w.grad = None
        loss = (x * w).sum()
        loss.backward()
        return loss * total()

    def uses_number(x):
        w.grad = None
        loss = (x * w).sum()
        loss.backward()
        return loss * number()

    def returns_derived_number(x):
        w.grad = None
        (x * w).sum().backward()
        return number() * 2

    _refused(uses_tensor, mg.tensor([2.0]), message="a live call")
    _refused(uses_number, mg.tensor([2.0]), message="a live call returned")
    _refused(returns_derived_number, mg.tensor([2.0]), message="a live call returned one")


def test_a_live_call_given_a_computed_tensor_a_grad_or_an_iterator_refuses_capture():
    w = mg.tensor([1.5, 0.5], requires_grad=True)
    look = mg.compiler.disable(lambda *xs: None)

    def given(what):
        def step(x):
            w.grad = None
            y = x * w
            y.sum().backward()
            look({"computed": y, "grad": w.grad, "iterator": iter([w])}[what])
            return y
        return step

    _refused(given("computed"), mg.tensor([2.0, 1.0]), message="the step computed")
    _refused(given("grad"), mg.tensor([2.0, 1.0]), message="set inside the step")
    _refused(given("iterator"), mg.tensor([2.0, 1.0]), message="iterator")


def test_a_live_call_that_changes_the_steps_own_tensors_refuses_capture():
    w = mg.tensor([1.5], requires_grad=True)
    held = {}
    change = mg.compiler.disable(lambda: held["y"].add_(1.0))

    def step(x):
        w.grad = None
        y = x * w
        held["y"] = y.detach()
        y.sum().backward()
        change()
        return y

    _refused(step, mg.tensor([2.0]), message="changed a tensor")


def test_an_operation_reading_a_grad_set_inside_the_step_refuses_capture():
    w = mg.tensor([1.5], requires_grad=True)

    def step(x):
        w.grad = None
        (x * w).sum().backward()
        return w.grad * 2

    _refused(step, mg.tensor([2.0]), message="reads a .grad")


def test_nested_live_calls_run_inside_the_outer_and_nested_cases_refuse():
    w = mg.tensor([1.5], requires_grad=True)
    seen = []
    inner = mg.compiler.disable(lambda: seen.append("inner"))
    outer = mg.compiler.disable(lambda: (seen.append("outer"), inner()))

    def step(x):
        w.grad = None
        loss = (x * w).sum()
        loss.backward()
        outer()
        return loss

    run = mg.compile(step)
    for _ in range(4):
        run(mg.tensor([2.0]))
    assert run.stats.replays == 2 and seen == ["outer", "inner"] * 4, (run.stats, seen)
    source = next(iter(run._signatures.values())).program.source
    assert source.count(", live") == 1                   # one recorded call: the outer

    compiled_inside = mg.compile(lambda x: x * 2)
    calls_compiled = mg.compiler.disable(lambda: compiled_inside(mg.ones(1)))
    with pytest.raises(RuntimeError, match="nested"):
        mg.compile(lambda x: (calls_compiled(), x * 2)[1])(mg.ones(1))

    class _LiveInBackward(mg.Function):
        def forward(self, x):
            return x * 2

        def backward(self, g):
            inner()
            return g * 2

    def in_backward(x):
        w.grad = None
        loss = _LiveInBackward.apply(x * w).sum()
        loss.backward()
        return loss

    _refused(in_backward, mg.tensor([2.0]), message="inside a backward")


def test_check_refuses_a_step_with_live_calls():
    _, run, _ = _live_training(True, calls=1)
    checked = mg.compile(run.fn, check=True)
    rng = np.random.default_rng(0)
    x, t = _batches(rng, 1)[0]
    checked(x, t)
    checked(x, t)
    with pytest.raises(RuntimeError, match="live calls"):
        checked(x, t)


def _check_tanh_step(run, x, w):
    """One call of a step computing sum(tanh(x w)) and its backward, against NumPy."""
    w.grad = None
    loss = run(x)
    expected = np.tanh(x.numpy() @ w.numpy())
    np.testing.assert_allclose(loss.numpy(), expected.sum(), rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), x.numpy().T @ (1 - expected ** 2), rtol=1e-12)


def test_an_operation_of_another_thread_during_the_capture_discards_it():
    """A capture records what this thread's step does; an operation another thread runs
    meanwhile is never recorded, and since what it did could pass for the step's own doing, the
    capture is discarded and made again on a later call. Every answer is right."""
    import threading
    rng = np.random.default_rng(3)
    w = mg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    other = mg.tensor(rng.standard_normal(4), requires_grad=True)
    started, done = threading.Event(), threading.Event()

    def poke():
        started.wait(10)
        (other * 2).sum()              # an operation of this thread, during the capture
        done.set()

    def step(x):
        loss = (x @ w).tanh().sum()
        if run.stats.eager == 1 and not done.is_set():   # the second call: being captured
            started.set()
            done.wait(10)
        loss.backward()
        return loss

    run = mg.compile(step)
    thread = threading.Thread(target=poke)
    thread.start()
    xs = [mg.tensor(rng.standard_normal((5, 3))) for _ in range(4)]
    for x in xs:
        _check_tanh_step(run, x, w)
    thread.join()
    assert done.is_set()
    assert any("capture discarded: another thread" in r for r in run.stats.reasons), run.stats
    assert run.stats.captures == 2 and run.stats.replays == 1, run.stats


class _Gate(mg.Function):
    """y = x, whose forward waits for `gate` (set by the test) after setting `entered`."""

    entered = gate = None

    def forward(self, x):
        type(self).entered.set()
        type(self).gate.wait(10)
        return x.copy()

    def backward(self, grad):
        return grad


def test_another_threads_operation_that_outlasts_the_capture_leaves_nothing_recording():
    """An operation another thread starts during a capture and finishes after it must not put
    the capture's recorder back in place: every later operation of every thread would be
    recorded into it, a leak that grows with each step."""
    import threading
    from minigrad import recording
    rng = np.random.default_rng(5)
    w = mg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    _Gate.entered, _Gate.gate = threading.Event(), threading.Event()
    results = []

    def other():
        results.append(_Gate.apply(mg.tensor(np.arange(3.0))).numpy())

    def step(x):
        if run.stats.eager == 1 and not _Gate.entered.is_set():   # the capture
            thread.start()
            _Gate.entered.wait(10)           # the other thread's operation has begun
        loss = (x @ w).tanh().sum()
        loss.backward()
        return loss

    run = mg.compile(step)
    thread = threading.Thread(target=other)
    x = mg.tensor(rng.standard_normal((4, 3)))
    run(x), run(x)                           # eager, then the capture the other thread spoils
    assert recording.SLOT.recorder is None
    _Gate.gate.set()                         # the other operation ends after the capture
    thread.join()
    np.testing.assert_array_equal(results[0], np.arange(3.0))
    assert recording.SLOT.recorder is None, "a finished capture's recorder is recording again"
    assert any("another thread" in r for r in run.stats.reasons), run.stats.reasons
    for _ in range(3):                       # captured again, then replayed, and right
        _check_tanh_step(run, x, w)
    assert run.stats.replays == 2, run.stats


def test_two_threads_capturing_at_once_take_turns_and_both_replay_right():
    """One thread captures at a time: a step that would be captured while another thread
    captures runs eagerly and is captured on a later call; each then replays its own step."""
    import threading
    rng = np.random.default_rng(6)
    wa = mg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    wb = mg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    inside, b_done, a_done = threading.Event(), threading.Event(), threading.Event()

    def step_a(x):
        loss = (x @ wa).tanh().sum()
        if run_a.stats.eager == 1 and run_a.stats.captures == 0 and not inside.is_set():
            inside.set()                     # A is being captured: let B call meanwhile
            b_done.wait(10)
        loss.backward()
        return loss

    def step_b(x):
        loss = (x @ wb).sin().sum()
        loss.backward()
        return loss

    run_a, run_b = mg.compile(step_a), mg.compile(step_b)
    xs = [mg.tensor(rng.standard_normal((4, 3))) for _ in range(5)]
    b_losses = []

    def thread_b():
        inside.wait(10)
        for k, x in enumerate(xs):           # the first two calls fall inside A's capture
            if k == 2:
                b_done.set()
                a_done.wait(10)
            wb.grad = None
            b_losses.append((run_b(x).numpy(), wb.grad.numpy()))

    b = threading.Thread(target=thread_b)
    b.start()
    a_results = []
    for x in xs:
        wa.grad = None
        a_results.append((run_a(x).numpy(), wa.grad.numpy()))
    a_done.set()
    b.join()
    # A: eager, a capture B disturbed (discarded), a capture, two replays
    assert (run_a.stats.captures, run_a.stats.replays) == (2, 2), run_a.stats
    assert any("capture discarded" in r for r in run_a.stats.reasons)
    # B: two calls while A captured (eager), then eager, a capture, a replay
    assert (run_b.stats.eager, run_b.stats.captures, run_b.stats.replays) == (3, 1, 1), run_b.stats
    assert sum("another thread is capturing" in r for r in run_b.stats.reasons) == 2
    for (loss, grad), x in zip(a_results, xs):
        y = np.tanh(x.numpy() @ wa.numpy())
        np.testing.assert_allclose(loss, y.sum(), rtol=1e-12)
        np.testing.assert_allclose(grad, x.numpy().T @ (1 - y ** 2), rtol=1e-12)
    for (loss, grad), x in zip(b_losses, xs):
        z = x.numpy() @ wb.numpy()
        np.testing.assert_allclose(loss, np.sin(z).sum(), rtol=1e-12)
        np.testing.assert_allclose(grad, x.numpy().T @ np.cos(z), rtol=1e-12)


def test_threads_sharing_one_compiled_step_each_get_their_own_answers():
    """Replays hold no buffer from one call to the next, so threads may share a compiled
    inference step: every answer equals the NumPy reference for that thread's input."""
    import sys
    import threading
    rng = np.random.default_rng(4)
    w = mg.tensor(rng.standard_normal((6, 3)), requires_grad=True)

    @mg.compile
    def infer(x):
        with mg.no_grad():
            return (x @ w).tanh() * 2

    xs = [mg.tensor(rng.standard_normal((4, 6))) for _ in range(16)]
    infer(xs[0]), infer(xs[1])           # the eager call and the capture, before the threads
    wrong, errors = [], []

    def work(k):
        try:
            for r in range(40):
                i = (5 * k + r) % len(xs)
                if not np.array_equal(infer(xs[i]).numpy(), np.tanh(xs[i].numpy() @ w.numpy()) * 2):
                    wrong.append(i)
        except Exception as error:       # pragma: no cover - reported below
            errors.append(repr(error))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors and not wrong
    assert infer.stats.replays == 6 * 40, infer.stats
