"""Losses against plain-NumPy references, gradchecks, stability and input checks."""

import numpy as np
import pytest

import minigrad as mg
import nn
import nn.functional as F


def f64(array, requires_grad=True):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


def cross_entropy_numpy(logits, targets, ignore_index=None, reduction="mean", smoothing=0.0):
    """From the definition: log p = z − log Σ e^z, ℓ = (1 − ε)(−log p_t) + ε mean_c(−log p_c)."""
    z = logits.astype(np.float64)
    m = z.max(axis=-1, keepdims=True)
    log_p = z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))
    losses = np.zeros(targets.shape)
    kept = np.ones(targets.shape, dtype=bool)
    for pos in np.ndindex(targets.shape):
        t = targets[pos]
        if ignore_index is not None and t == ignore_index:
            kept[pos] = False
            continue
        losses[pos] = (1 - smoothing) * -log_p[pos][t] + smoothing * -log_p[pos].mean()
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / kept.sum()


CASES = [
    dict(),
    dict(reduction="sum"),
    dict(reduction="none"),
    dict(ignore_index=1),
    dict(ignore_index=-100, reduction="none"),
    dict(label_smoothing=0.1),
    dict(label_smoothing=0.2, ignore_index=1, reduction="mean"),
    dict(label_smoothing=0.3, ignore_index=1, reduction="sum"),
]


def _targets(rng, shape, classes, ignore_index):
    t = rng.integers(0, classes, size=shape)
    if ignore_index is not None:
        t.flat[::3] = ignore_index               # some positions ignored
    return t


@pytest.mark.parametrize("options", CASES)
def test_cross_entropy_matches_numpy_on_sequences(options, rng):
    logits = rng.standard_normal((2, 5, 4)).astype(np.float32) * 3
    targets = _targets(rng, (2, 5), 4, options.get("ignore_index"))
    loss = F.cross_entropy(mg.tensor(logits), mg.tensor(targets), **options)
    expected = cross_entropy_numpy(logits, targets, options.get("ignore_index"),
                                   options.get("reduction", "mean"),
                                   options.get("label_smoothing", 0.0))
    assert loss.shape == np.shape(expected) and loss.dtype == np.float32
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("options", CASES)
def test_cross_entropy_gradcheck(options, rng):
    logits = f64(rng.standard_normal((2, 3, 4)))
    targets = _targets(rng, (2, 3), 4, options.get("ignore_index"))
    assert mg.gradcheck(lambda z: F.cross_entropy(z, targets, **options), [logits])


def test_cross_entropy_is_one_node_and_accepts_plain_arrays(rng):
    logits = mg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    loss = F.cross_entropy(logits, [0, 3, 1])
    assert type(loss._fn).__name__ == "CrossEntropy" and loss._fn.inputs == (logits,)


def test_cross_entropy_second_order_matches_unfused(rng):
    logits = f64(rng.standard_normal((3, 4)))
    targets = np.array([2, 0, 3])
    v = mg.tensor(rng.standard_normal((3, 4)))

    def unfused(z):
        log_p = mg.log_softmax(z, axis=-1)
        nll = -(log_p * mg.one_hot(targets, 4, dtype=np.float64)).sum(axis=-1)
        return 0.9 * nll.mean() + 0.1 * -log_p.mean(axis=-1).mean()

    def hvp(fn):
        g = mg.grad(fn(logits), logits, create_graph=True)[0]
        # the recorded first-order gradient equals the plain one
        plain = mg.grad(fn(logits), logits)[0]
        np.testing.assert_allclose(g.numpy(), plain.numpy(), rtol=1e-12, atol=1e-15)
        return mg.grad((g * v).sum(), logits)[0].numpy()

    fused = hvp(lambda z: F.cross_entropy(z, targets, label_smoothing=0.1))
    np.testing.assert_allclose(fused, hvp(unfused), rtol=1e-9, atol=1e-12)


def test_cross_entropy_is_stable_for_huge_logits():
    logits = mg.tensor([[1e4, 0.0, -1e4], [1e4, 1e4, 0.0]], requires_grad=True)
    loss = F.cross_entropy(logits, np.array([2, 0]), reduction="none")
    # target 2 of row 0: −log p = 1e4 − (−1e4) = 2e4; row 1: two tied maxima, −log ½
    np.testing.assert_allclose(loss.numpy(), [2e4, np.log(2)], rtol=1e-6)
    loss.sum().backward()
    grad = logits.grad.numpy()
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad, [[1, 0, -1], [-0.5, 0.5, 0]], atol=1e-6)


def test_cross_entropy_all_targets_ignored_gives_zero_not_nan():
    logits = mg.tensor(np.ones((2, 3)), requires_grad=True)
    loss = F.cross_entropy(logits, np.array([-1, -1]), ignore_index=-1)
    assert loss.item() == 0.0
    loss.backward()
    np.testing.assert_array_equal(logits.grad.numpy(), 0.0)


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_mean_over_zero_total_weight_is_not_finite(label_smoothing):
    """Kept targets whose class weights sum to 0: the weighted mean divides by 0, as PyTorch's
    does (NaN there), never a finite number made up by dividing by 1."""
    logits = mg.tensor(np.random.default_rng(0).standard_normal((2, 3)))
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = F.cross_entropy(logits, np.array([0, 0]), weight=mg.tensor([0.0, 1.0, 1.0]),
                               label_smoothing=label_smoothing)
    assert not np.isfinite(loss.item())


def test_cross_entropy_bad_inputs():
    logits = mg.zeros(2, 3)
    with pytest.raises(ValueError, match="cross_entropy: target 3 is out of range for 3"):
        F.cross_entropy(logits, np.array([0, 3]))
    with pytest.raises(ValueError, match="cross_entropy: target -1"):
        F.cross_entropy(logits, np.array([0, -1]))
    with pytest.raises(ValueError, match="cross_entropy: target -2"):       # int32 targets too
        F.cross_entropy(logits, np.array([-2, 1], dtype=np.int32))
    with pytest.raises(ValueError, match="cross_entropy: targets shape \\(3,\\)"):
        F.cross_entropy(logits, np.array([0, 1, 2]))
    with pytest.raises(TypeError, match="cross_entropy: indices must be integers"):
        F.cross_entropy(logits, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(logits, np.array([0, 1]), reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing"):
        F.cross_entropy(logits, np.array([0, 1]), label_smoothing=1.5)


TARGETS = np.array([0, 2])
PROBABILITIES = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])


@pytest.mark.parametrize("loss, name", [
    (lambda x, t: F.cross_entropy(x, TARGETS, label_smoothing=t), "label_smoothing"),
    (lambda x, t: F.cross_entropy(x, TARGETS, label_smoothing=t, weight=np.ones(3)),
     "label_smoothing"),
    (lambda x, t: F.cross_entropy(x, PROBABILITIES, label_smoothing=t), "label_smoothing"),
    (lambda x, t: F.huber_loss(x, np.zeros((2, 3)), delta=t), "delta"),
    (lambda x, t: F.smooth_l1_loss(x, np.zeros((2, 3)), beta=t), "beta")],
    ids=["cross_entropy", "cross_entropy-weight", "cross_entropy-probabilities", "huber_loss",
         "smooth_l1_loss"])
@pytest.mark.parametrize("shape", [(), (1,)])
def test_constant_options_refuse_a_tensor_whose_gradient_would_be_lost(loss, name, shape, rng):
    x = f64(rng.standard_normal((2, 3)) * 2)
    with pytest.raises(TypeError, match=f"{name} is a constant of the graph.*requires grad"):
        loss(x, f64(np.full(shape, 0.3)))
    if shape == ():                        # a constant 0-d tensor converts, as in PyTorch
        np.testing.assert_array_equal(loss(x, f64(np.array(0.3), False)).numpy(),
                                      loss(x, 0.3).numpy())


def test_cross_entropy_matches_torch(rng):
    torch = pytest.importorskip("torch")
    logits = rng.standard_normal((2, 5, 7)).astype(np.float32)
    targets = rng.integers(0, 7, size=(2, 5))
    targets[0, 1] = -100
    for reduction in ("mean", "sum", "none"):
        ours = F.cross_entropy(mg.tensor(logits), targets, ignore_index=-100,
                               reduction=reduction, label_smoothing=0.1).numpy()
        theirs = torch.nn.functional.cross_entropy(
            torch.from_numpy(logits).reshape(-1, 7), torch.from_numpy(targets).reshape(-1),
            ignore_index=-100, reduction=reduction, label_smoothing=0.1).numpy()
        np.testing.assert_allclose(ours.reshape(-1), theirs.reshape(-1), rtol=1e-5, atol=1e-6)


# -- nll, mse, bce --------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_matches_numpy_and_cross_entropy(reduction, rng):
    log_p = rng.standard_normal((2, 3, 4))
    targets = rng.integers(0, 4, size=(2, 3))
    targets[1, 2] = 9
    loss = F.nll_loss(f64(log_p, False), targets, ignore_index=9, reduction=reduction)
    picked = np.where(targets == 9, 0.0, -np.take_along_axis(
        log_p, np.where(targets == 9, 0, targets)[..., None], axis=-1)[..., 0])
    expected = {"none": picked, "sum": picked.sum(), "mean": picked.sum() / 5}[reduction]
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-12)
    z = f64(log_p, False)
    np.testing.assert_allclose(
        F.nll_loss(mg.log_softmax(z, -1), targets, ignore_index=9, reduction=reduction).numpy(),
        F.cross_entropy(z, targets, ignore_index=9, reduction=reduction).numpy(), rtol=1e-12)


def test_nll_loss_gradcheck(rng):
    log_p = f64(rng.standard_normal((3, 4)))
    targets = np.array([1, 0, 3])
    assert mg.gradcheck(lambda x: F.nll_loss(x, targets, ignore_index=0), [log_p])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction, rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    loss = F.mse_loss(f64(a, False), b, reduction=reduction)
    sq = (a - b) ** 2
    expected = {"none": sq, "sum": sq.sum(), "mean": sq.mean()}[reduction]
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-12)
    assert mg.gradcheck(lambda x, y: F.mse_loss(x, y, reduction=reduction), [f64(a), f64(b)])
    with pytest.raises(ValueError, match="mse_loss: input shape \\(2, 3\\)"):
        F.mse_loss(f64(a), np.zeros(3))


def test_bce_with_logits_matches_numpy(rng):
    z = rng.standard_normal(6) * 30
    y = rng.random(6)
    s = 1 / (1 + np.exp(-z))
    expected = -(y * np.log(np.clip(s, 1e-300, None)) + (1 - y) * np.log(
        np.clip(1 - s, 1e-300, None)))
    loss = F.binary_cross_entropy_with_logits(f64(z, False), y, reduction="none")
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-6, atol=1e-10)
    assert mg.gradcheck(lambda x: F.binary_cross_entropy_with_logits(x, y), [f64(z / 30)])


def test_loss_modules_equal_functions(rng):
    logits = mg.tensor(rng.standard_normal((4, 3)))
    targets = np.array([0, 2, 1, 2])
    module = nn.CrossEntropyLoss(label_smoothing=0.1, reduction="sum")
    assert module(logits, targets).item() == F.cross_entropy(
        logits, targets, reduction="sum", label_smoothing=0.1).item()
    other = mg.tensor(rng.standard_normal((4, 3)))
    assert nn.MSELoss()(logits, other).item() == F.mse_loss(logits, other).item()
