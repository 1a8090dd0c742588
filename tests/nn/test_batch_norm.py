"""Batch and group normalisation: F.batch_norm, nn.BatchNorm1d (and, at the end, F.group_norm
and nn.GroupNorm) against plain-NumPy references from the equations (training and eval,
running statistics), float64 gradchecks of every input in both modes, errors, state dicts,
compiled steps, and PyTorch's numbers when it is installed."""

import numpy as np
import pytest

import minigrad as mg
import nn
import nn.functional as F

SHAPES = [(4, 3), (5, 3, 7), (2, 1), (3, 2, 1), (1, 2, 3)]


def f64(array, requires_grad=True):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


def batch_norm_numpy(x, mean, var, weight=None, bias=None, eps=1e-5):
    """y = γ (x − μ)/√(σ² + eps) + β with μ, σ², γ, β per channel (axis 1)."""
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def batch_statistics(x):
    """Per channel: the mean, the biased and the unbiased variance over every axis but 1."""
    per_channel = np.moveaxis(x, 1, 0).reshape(x.shape[1], -1)
    return per_channel.mean(axis=1), per_channel.var(axis=1), per_channel.var(axis=1, ddof=1)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("affine", [True, False])
def test_training_normalises_with_the_batch_and_moves_the_running_statistics(shape, affine):
    rng = np.random.default_rng(sum(shape))
    x = rng.normal(size=shape) * 3.0 + 2.0
    if x.size // shape[1] < 2:
        pytest.skip("training needs two values per channel (tested below)")
    weight, bias = rng.normal(size=shape[1]), rng.normal(size=shape[1])
    running_mean, running_var = rng.normal(size=shape[1]), rng.uniform(0.5, 2, shape[1])
    rm, rv = f64(running_mean, False), f64(running_var, False)
    y = F.batch_norm(f64(x), rm, rv, *([f64(weight), f64(bias)] if affine else []),
                     training=True, momentum=0.3, eps=1e-3)
    mean, var, unbiased = batch_statistics(x)
    expected = batch_norm_numpy(x, mean, var, *((weight, bias) if affine else ()), eps=1e-3)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rm.numpy(), 0.7 * running_mean + 0.3 * mean, rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.7 * running_var + 0.3 * unbiased, rtol=1e-12)
    assert rm._version == rv._version == 1                  # changed in place, seen by graphs


@pytest.mark.parametrize("shape", SHAPES)
def test_eval_uses_the_running_statistics(shape):
    rng = np.random.default_rng(1)
    x, weight, bias = rng.normal(size=shape), rng.normal(size=shape[1]), rng.normal(size=shape[1])
    mean, var = rng.normal(size=shape[1]), rng.uniform(0.5, 2, shape[1])
    y = F.batch_norm(f64(x), f64(mean, False), f64(var, False), f64(weight), f64(bias))
    np.testing.assert_allclose(y.numpy(), batch_norm_numpy(x, mean, var, weight, bias),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 5), (2, 1), (2, 1, 1)])
@pytest.mark.parametrize("present", ["both", "weight", "bias", "neither"])
def test_gradcheck_training(shape, present):
    rng = np.random.default_rng(2)
    x = f64(rng.normal(size=shape) * 2.0 + 1.0)
    affine = {"weight": f64(rng.normal(size=shape[1])), "bias": f64(rng.normal(size=shape[1]))}
    if present != "both":
        affine = {k: (v if k == present else None) for k, v in affine.items()}

    def fn(x, *params):
        given = iter(params)
        w, b = (next(given) if affine[k] is not None else None for k in ("weight", "bias"))
        return F.batch_norm(x, None, None, w, b, training=True, eps=1e-2)
    assert mg.gradcheck(fn, [x] + [t for t in affine.values() if t is not None])


@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 5), (1, 1), (1, 2, 1)])
def test_gradcheck_eval_of_every_input_the_running_statistics_included(shape):
    rng = np.random.default_rng(3)
    inputs = [f64(rng.normal(size=shape)), f64(rng.normal(size=shape[1])),
              f64(rng.uniform(0.5, 2.0, shape[1])), f64(rng.normal(size=shape[1])),
              f64(rng.normal(size=shape[1]))]
    assert mg.gradcheck(lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, eps=1e-2), inputs)


@pytest.mark.parametrize("training", [True, False])
def test_second_derivative_under_create_graph(training):
    """The recorded backward's gradient, differentiated again, against finite differences of
    the plain gradient."""
    rng = np.random.default_rng(4)
    x, w = f64(rng.normal(size=(4, 2, 3))), f64(rng.normal(size=2))
    stats = [None, None] if training else [f64(rng.normal(size=2), False),
                                           f64(rng.uniform(0.5, 2, 2), False)]
    probe = rng.normal(size=(4, 2, 3))

    def grad_of_x(x, w):
        y = F.batch_norm(x, *stats, w, None, training=training, eps=1e-2)
        (g,) = mg.grad((y * y * mg.tensor(probe)).sum(), [x], create_graph=True)
        return g
    assert mg.gradcheck(grad_of_x, [x, w])


def test_momentum_none_takes_the_mean_of_all_batches():
    rng = np.random.default_rng(5)
    layer = nn.BatchNorm1d(2, momentum=None, dtype="float64")
    batches = [rng.normal(size=(6, 2)) * (k + 1) + k for k in range(3)]
    for batch in batches:
        layer(f64(batch))
    means = [batch_statistics(b)[0] for b in batches]
    variances = [batch_statistics(b)[2] for b in batches]
    np.testing.assert_allclose(layer.running_mean.numpy(), np.mean(means, axis=0), rtol=1e-12)
    np.testing.assert_allclose(layer.running_var.numpy(), np.mean(variances, axis=0),
                               rtol=1e-12)
    assert layer.num_batches_tracked.item() == 3


def test_module_modes_buffers_and_state_dict():
    layer = nn.BatchNorm1d(3)
    assert list(layer.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                        "num_batches_tracked"]
    np.testing.assert_array_equal(layer.weight.numpy(), np.ones(3, np.float32))
    np.testing.assert_array_equal(layer.running_var.numpy(), np.ones(3, np.float32))
    x = mg.tensor(np.random.default_rng(6).normal(size=(8, 3, 4)).astype(np.float32))
    trained = layer(x)                                     # batch statistics
    per_channel = trained.numpy().transpose(1, 0, 2).reshape(3, -1)
    np.testing.assert_allclose(per_channel.mean(axis=1), 0.0, atol=1e-5)
    layer.eval()
    before = layer.running_mean.numpy().copy()
    evaluated = layer(x)                                   # running statistics, no update
    np.testing.assert_array_equal(layer.running_mean.numpy(), before)
    np.testing.assert_allclose(evaluated.numpy(), batch_norm_numpy(
        x.numpy(), before, layer.running_var.numpy()), rtol=1e-5, atol=1e-6)
    plain = nn.BatchNorm1d(3, affine=False, track_running_stats=False).eval()
    assert list(plain.state_dict()) == [] and plain.running_mean is None
    np.testing.assert_allclose(plain(x).numpy(), trained.numpy(), rtol=1e-5, atol=1e-6)
    layer.reset_running_stats()
    np.testing.assert_array_equal(layer.running_mean.numpy(), np.zeros(3, np.float32))
    assert layer.num_batches_tracked.item() == 0


def test_errors_name_the_operation_and_shapes():
    x = mg.tensor(np.ones((4, 3)))
    with pytest.raises(ValueError, match=r"batch_norm: weight shape \(2,\) must be \(C,\)"):
        F.batch_norm(x, None, None, mg.ones(2), training=True)
    with pytest.raises(ValueError, match="more than one value per channel.*\\(1, 3\\)"):
        F.batch_norm(mg.ones(1, 3), None, None, training=True)
    with pytest.raises(ValueError, match="needed when not training"):
        F.batch_norm(x, None, None)
    with pytest.raises(ValueError, match="both running_mean and running_var"):
        F.batch_norm(x, mg.zeros(3), None, training=True)
    with pytest.raises(ValueError, match=r"input shape \(3,\) needs a batch and a channel axis"):
        F.batch_norm(mg.ones(3), None, None, training=True)
    with pytest.raises(ValueError, match=r"BatchNorm1d: input must be \(N, C\) or \(N, C, L\)"):
        nn.BatchNorm1d(3)(mg.ones(2, 3, 4, 5))
    with pytest.raises(TypeError, match="num_features must be an int"):
        nn.BatchNorm1d(3.0)
    layer = nn.BatchNorm1d(3)
    with pytest.raises(ValueError, match="more than one value per channel"):
        layer(mg.ones(1, 3))


@pytest.mark.parametrize("momentum", [0.1, None])
def test_a_compiled_training_step_replays_and_moves_the_running_statistics(momentum):
    """The running statistics and the count move inside the one operation: a replay runs its
    forward again on their live arrays, so a compiled training step replays and ends where
    eager ends, bit for bit, losses, weights and buffers alike."""
    rng = np.random.default_rng(7)
    batches = [mg.tensor(rng.normal(size=(6, 3, 2)).astype(np.float32)) for _ in range(6)]
    results = []
    for compiled in (False, True):
        mg.manual_seed(0)
        model = nn.Sequential(nn.Conv1d(3, 4, 1), nn.BatchNorm1d(4, momentum=momentum),
                              nn.ReLU(), nn.Flatten(), nn.Linear(8, 1))
        optimizer = nn.optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            optimizer.zero_grad()
            loss = (model(x) ** 2).mean()
            loss.backward()
            optimizer.step()
            return loss
        run = mg.compile(step) if compiled else step
        results.append([run(x).numpy() for x in batches] +
                       [v.copy() for v in model.state_dict().values()])
    assert run.stats.replays == 4, run.stats
    assert model[1].num_batches_tracked.item() == 6
    for eager, replayed in zip(*results):
        np.testing.assert_array_equal(eager, replayed)


def test_check_compares_the_running_statistics_and_a_later_change_is_seen():
    rng = np.random.default_rng(9)
    layer = nn.BatchNorm1d(3)
    step = mg.compile(lambda x: layer(x).sum(), check=3)
    for _ in range(5):                    # two replays checked against eager, bit for bit
        step(mg.tensor(rng.normal(size=(4, 3)).astype(np.float32)))
    assert step.stats.replays == 3 and layer.num_batches_tracked.item() == 5
    # a graph that saved the running statistics (eval) refuses backward after a training
    # replay changed them, as after add_
    x = mg.tensor(rng.normal(size=(4, 3)).astype(np.float32), requires_grad=True)
    layer.eval()
    saved = layer(x)
    layer.train()
    step(mg.tensor(rng.normal(size=(4, 3)).astype(np.float32)))
    assert step.stats.replays == 4
    with pytest.raises(RuntimeError, match="changed in place afterwards"):
        saved.sum().backward()


def test_running_statistics_the_step_computed_refuse_capture():
    def step(x):
        return F.batch_norm(x, mg.zeros(3) * 1.0, mg.ones(3) * 1.0, training=True).sum()
    run = mg.compile(step)
    for _ in range(4):
        run(mg.tensor(np.arange(12.0).reshape(4, 3)))
    assert run.stats.replays == 0
    assert "not a tensor from outside the step" in run.stats.reasons[-1], run.stats


def test_eval_replays_reading_the_running_statistics_live():
    rng = np.random.default_rng(10)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).eval()
    x = mg.tensor(rng.normal(size=(5, 3)).astype(np.float32))
    evaluate = mg.compile(lambda x: model(x))
    outputs = [evaluate(x).numpy() for _ in range(4)]
    assert evaluate.stats.replays == 2, evaluate.stats
    state = model.state_dict()
    state["1.running_mean"] = state["1.running_mean"] + 1.0
    model.load_state_dict(state)
    np.testing.assert_array_equal(evaluate(x).numpy(), model(x).numpy())
    assert not np.array_equal(outputs[-1], model(x).numpy())


def test_an_input_changed_in_place_must_not_require_grad():
    running = mg.zeros(3, requires_grad=True)
    before = running.numpy().copy()
    with pytest.raises(RuntimeError, match="input 1 .* changed in place by the operation"):
        F.batch_norm(mg.ones(4, 3) * mg.arange(4.0)[:, None], running, mg.ones(3),
                     training=True)
    np.testing.assert_array_equal(running.numpy(), before)     # nothing changed


def test_against_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    for shape in [(4, 3), (5, 3, 7)]:
        for momentum in (0.1, None):
            ours = nn.BatchNorm1d(3, momentum=momentum, dtype="float64")
            theirs = torch.nn.BatchNorm1d(3, momentum=momentum, dtype=torch.float64)
            weight, bias = rng.normal(size=3), rng.normal(size=3)
            ours.load_state_dict({**ours.state_dict(), "weight": weight, "bias": bias})
            theirs.load_state_dict({**theirs.state_dict(), "weight": torch.tensor(weight),
                                    "bias": torch.tensor(bias)})
            for mode in ("train", "train", "eval"):
                ours.train(mode == "train")
                theirs.train(mode == "train")
                x, g = rng.normal(size=shape) * 2 + 1, rng.normal(size=shape)
                a, b = f64(x), torch.tensor(x, requires_grad=True)
                ours(a).backward(mg.tensor(g))
                theirs(b).backward(torch.tensor(g))
                np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10,
                                           atol=1e-12)
            for key, value in theirs.state_dict().items():
                np.testing.assert_allclose(ours.state_dict()[key], value.numpy(), rtol=1e-12)
            np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                                       rtol=1e-10)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_on_the_simulated_device_as_on_the_host(sim_device, momentum):
    """The module's operation, its running statistics and count moved on a device whose arrays
    refuse implicit conversion to NumPy (as CuPy's do): the same numbers as on the host."""
    rng = np.random.default_rng(11)
    batches = [rng.normal(size=(5, 3, 2)) for _ in range(3)]
    layers = [nn.BatchNorm1d(3, momentum=momentum, dtype="float64"),
              nn.BatchNorm1d(3, momentum=momentum, dtype="float64").to(sim_device)]
    grads = []
    for layer, device in zip(layers, ("cpu", sim_device)):
        for batch in batches:
            x = mg.tensor(batch, device=device, requires_grad=True)
            layer(x).sum().backward()
        grads.append(x.grad.numpy())
        layer.eval()
        grads.append(layer(mg.tensor(batches[0], device=device)).numpy())
    assert layers[1].running_mean.device == "sim"
    np.testing.assert_allclose(grads[2], grads[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grads[3], grads[1], rtol=1e-12, atol=1e-12)
    for (key, host), (_, device) in zip(layers[0].state_dict().items(),
                                        layers[1].state_dict().items()):
        np.testing.assert_allclose(device, host, rtol=1e-12, err_msg=key)


# -- group norm: a composition of layer_norm, reshape and the affine product --------------------

def group_norm_numpy(x, groups, weight=None, bias=None, eps=1e-5):
    grouped = x.reshape(x.shape[0], groups, -1)
    mu = grouped.mean(axis=-1, keepdims=True)
    var = grouped.var(axis=-1, keepdims=True)
    y = ((grouped - mu) / np.sqrt(var + eps)).reshape(x.shape)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


@pytest.mark.parametrize("shape, groups", [((2, 6, 5), 3), ((3, 4), 2), ((1, 4, 2, 3), 4),
                                           ((2, 6, 1), 1), ((2, 1), 1)])
def test_group_norm_against_numpy_and_gradcheck(shape, groups):
    rng = np.random.default_rng(sum(shape))
    a, w, b = rng.normal(size=shape) * 2 + 1, rng.normal(size=shape[1]), rng.normal(size=shape[1])
    np.testing.assert_allclose(F.group_norm(f64(a), groups, f64(w), f64(b)).numpy(),
                               group_norm_numpy(a, groups, w, b), rtol=1e-10, atol=1e-12)
    layer = nn.GroupNorm(groups, shape[1], dtype="float64")
    np.testing.assert_allclose(layer(f64(a)).numpy(), group_norm_numpy(a, groups),
                               rtol=1e-10, atol=1e-12)
    if a[0].size // groups > 1:
        assert mg.gradcheck(lambda x, w, b: F.group_norm(x, groups, w, b, eps=1e-2),
                            [f64(a), f64(w), f64(b)])


def test_group_norm_errors_and_pytorch():
    with pytest.raises(ValueError, match="num_channels 6 is not divisible by num_groups 4"):
        nn.GroupNorm(4, 6)
    with pytest.raises(ValueError, match=r"group_norm: input \(N, C, \*\) with C divisible"):
        F.group_norm(mg.ones(2, 6), 4)
    assert list(nn.GroupNorm(2, 4).state_dict()) == ["weight", "bias"]
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(14)
    a, g = rng.normal(size=(2, 6, 3)), rng.normal(size=(2, 6, 3))
    ours, theirs = nn.GroupNorm(3, 6, dtype="float64"), torch.nn.GroupNorm(3, 6).double()
    x, t = f64(a), torch.tensor(a, requires_grad=True)
    ours(x).backward(mg.tensor(g))
    theirs(t).backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-10)


# -- BatchNorm2d: the same operation over (N, C, H, W) -------------------------------------------

def test_batch_norm_2d_over_images_and_its_shape_check():
    rng = np.random.default_rng(15)
    a = rng.normal(size=(4, 3, 2, 5)) * 2 + 1
    layer = nn.BatchNorm2d(3, dtype="float64")
    y = layer(f64(a))
    mean, var, unbiased = batch_statistics(a)
    np.testing.assert_allclose(y.numpy(), batch_norm_numpy(a, mean, var), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(layer.running_var.numpy(), 0.9 + 0.1 * unbiased, rtol=1e-12)
    assert mg.gradcheck(lambda x: nn.BatchNorm2d(3, eps=1e-2, dtype="float64")(x),
                        [f64(a[:2, :, :1])])
    with pytest.raises(ValueError, match=r"BatchNorm2d: input must be \(N, C, H, W\), got shape "
                                         r"\(4, 3\)"):
        layer(mg.ones(4, 3))
    with pytest.raises(ValueError, match=r"BatchNorm1d: input must be \(N, C\) or \(N, C, L\)"):
        nn.BatchNorm1d(3)(mg.ones(2, 3, 4, 5))
    torch = pytest.importorskip("torch")
    theirs = torch.nn.BatchNorm2d(3).double()
    ours = nn.BatchNorm2d(3, dtype="float64")
    for _ in range(2):
        x, t = f64(a), torch.tensor(a, requires_grad=True)
        ours(x).backward(mg.tensor(np.cos(a)))
        theirs(t).backward(torch.tensor(np.cos(a)))
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key], value.numpy(), rtol=1e-12)
