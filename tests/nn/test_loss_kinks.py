"""Losses at and near their kinks: binary cross-entropy with logits at z = 0, l1 at d = 0,
smooth_l1 and huber at d = 0 and |d| = β/δ, cross-entropy with tied logits. Expected values
follow PyTorch's documented conventions (sign(0) = 0; σ(0) = ½; the linear piece from |d| = β
on), computed here in NumPy; the optional tests compare with torch itself when installed."""

import numpy as np
import pytest

import minigrad as mg
import nn.functional as F

SHAPES = [(), (1,), (2, 3)]
REDUCTIONS = ["mean", "sum", "none"]


def f64(array, requires_grad=True):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


def reduce_numpy(loss, reduction):
    return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]


def reduction_scale(shape, reduction):
    """∂(reduced loss)/∂ℓ_i when the upstream gradient is all ones."""
    return 1.0 / max(int(np.prod(shape)), 1) if reduction == "mean" else 1.0


def input_grads(loss_fn, inputs, reduction):
    """Gradients of loss_fn(*inputs).sum() (the upstream is all ones for every reduction)."""
    tensors = [f64(a) for a in inputs]
    loss = loss_fn(*tensors)
    (loss.sum() if reduction == "none" else loss).backward()
    return [t.grad.numpy() for t in tensors]


# -- binary cross-entropy with logits -------------------------------------------------------

def bce_numpy(z, y, weight=None, pos_weight=None):
    """From the definition, ℓ = −w·[p·y·log σ(z) + (1 − y)·log(1 − σ(z))], with
    −log σ(z) = log(1 + e^(−z)) = logaddexp(0, −z) and −log(1 − σ(z)) = logaddexp(0, z)."""
    w = 1.0 if weight is None else weight
    p = 1.0 if pos_weight is None else pos_weight
    return w * (p * y * np.logaddexp(0, -z) + (1 - y) * np.logaddexp(0, z))


def bce_grad_numpy(z, y, weight=None, pos_weight=None):
    """∂ℓ/∂z of the definition: d/dz log σ(z) = 1 − σ(z) = σ(−z), d/dz log(1 − σ(z)) = −σ(z),
    so ∂ℓ/∂z = w·[(1 − y)·σ(z) − p·y·σ(−z)]."""
    w = 1.0 if weight is None else weight
    p = 1.0 if pos_weight is None else pos_weight
    sigma = lambda x: np.exp(-np.logaddexp(0, -x))     # noqa: E731  σ(x), no overflow
    return w * ((1 - y) * sigma(z) - p * y * sigma(-z))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("target", [0.0, 1.0, 0.25])
def test_bce_gradient_at_zero_logits_is_sigma_of_zero_minus_target(shape, reduction, target):
    # σ(0) − y = ½ − y; built from relu and abs, the kinks at 0 gave −y
    z = f64(np.zeros(shape))
    loss = F.binary_cross_entropy_with_logits(z, np.full(shape, target), reduction=reduction)
    (loss.sum() if reduction == "none" else loss).backward()
    expected = np.full(shape, (0.5 - target) * reduction_scale(shape, reduction))
    np.testing.assert_allclose(z.grad.numpy(), expected, rtol=1e-15, atol=0)
    np.testing.assert_allclose(loss.numpy(), reduce_numpy(np.full(shape, np.log(2.0)),
                                                          reduction), rtol=1e-15)


@pytest.mark.parametrize("shape", SHAPES)
def test_bce_gradient_at_zero_with_weight_and_pos_weight(shape):
    y = np.linspace(0, 1, int(np.prod(shape))).reshape(shape)
    w = np.full(shape, 3.0)
    p = np.full(shape[-1:] if shape else (), 2.5)
    z = f64(np.zeros(shape))
    F.binary_cross_entropy_with_logits(z, y, weight=w, pos_weight=p, reduction="sum").backward()
    # w·((1 − y)·½ − p·y·½) at z = 0
    np.testing.assert_allclose(z.grad.numpy(), 3.0 * ((1 - y) * 0.5 - 2.5 * y * 0.5),
                               rtol=1e-15, atol=1e-16)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bce_is_stable_and_exact_for_huge_logits(dtype):
    z = np.array([-1e4, -200.0, -30.0, -1e-8, 0.0, 1e-8, 30.0, 200.0, 1e4], dtype=dtype)
    for target in (0.0, 1.0, 0.5):
        y = np.full(z.shape, target, dtype=dtype)
        logits = mg.tensor(z, requires_grad=True)
        loss = F.binary_cross_entropy_with_logits(logits, y, reduction="none")
        loss.sum().backward()
        assert loss.dtype == dtype and logits.grad.dtype == dtype
        z64, y64 = z.astype(np.float64), y.astype(np.float64)
        # float32 rounds σ(±1e-8) to ½: absolute errors of its epsilon are expected
        rtol, atol = (1e-6, 1e-7) if dtype == np.float32 else (1e-12, 1e-15)
        np.testing.assert_allclose(loss.numpy(), bce_numpy(z64, y64), rtol=rtol, atol=atol)
        np.testing.assert_allclose(logits.grad.numpy(), bce_grad_numpy(z64, y64),
                                   rtol=rtol, atol=atol)
        assert np.isfinite(loss.numpy()).all() and np.isfinite(logits.grad.numpy()).all()


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("options", ["plain", "weight", "pos_weight", "both"])
def test_bce_matches_numpy_with_weight_and_pos_weight(reduction, options, rng):
    z = rng.standard_normal((4, 3)) * 5
    z[0, 0] = 0.0
    y = rng.random((4, 3))
    kwargs = {}
    if options in ("weight", "both"):
        kwargs["weight"] = rng.random((4, 1)) + 0.5          # broadcast over columns
    if options in ("pos_weight", "both"):
        kwargs["pos_weight"] = rng.random(3) + 0.5           # one per class
    loss = F.binary_cross_entropy_with_logits(f64(z, False), y, reduction=reduction, **kwargs)
    np.testing.assert_allclose(loss.numpy(), reduce_numpy(bce_numpy(z, y, **kwargs),
                                                          reduction), rtol=1e-12)
    (grad_z,) = input_grads(lambda t: F.binary_cross_entropy_with_logits(
        t, y, reduction=reduction, **kwargs), [z], reduction)
    expected = np.broadcast_to(bce_grad_numpy(z, y, **kwargs), z.shape)
    np.testing.assert_allclose(grad_z, expected * reduction_scale(z.shape, reduction),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("shape, weight_shape, pos_shape", [
    ((), (), ()), ((1,), (1,), (1,)), ((1,), (), None), ((3, 4), (4,), (4,)),
    ((3, 4), (3, 1), None), ((2, 3), None, (3,)),
])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_gradcheck_for_every_input(shape, weight_shape, pos_shape, reduction, rng):
    inputs = [f64(rng.standard_normal(shape) * 2), f64(rng.random(shape))]
    if weight_shape is not None:
        inputs.append(f64(rng.random(weight_shape) + 0.5))
    if pos_shape is not None:
        inputs.append(f64(rng.random(pos_shape) + 0.5))

    def loss(z, y, *extras):
        kwargs = {}
        if weight_shape is not None:
            kwargs["weight"] = extras[0]
        if pos_shape is not None:
            kwargs["pos_weight"] = extras[-1]
        return F.binary_cross_entropy_with_logits(z, y, reduction=reduction, **kwargs)

    assert mg.gradcheck(loss, inputs)


def test_bce_is_one_node_of_its_inputs(rng):
    z, y = f64(rng.standard_normal(5)), f64(rng.random(5), False)
    w, p = f64(rng.random(5), False), f64(rng.random(5), False)
    loss = F.binary_cross_entropy_with_logits(z, y, weight=w, pos_weight=p)
    assert type(loss.grad_fn).__name__ == "BinaryCrossEntropyWithLogits"
    assert loss.grad_fn.inputs == (z, y, w, p)


@pytest.mark.parametrize("shape", SHAPES)
def test_bce_second_derivative_matches_closed_form_at_and_away_from_zero(shape, rng):
    """∂²ℓ/∂z² = w·L·σ(z)(1 − σ(z)), L = 1 + (p − 1)·y: ¼·w·L at z = 0."""
    z_values = np.array(rng.standard_normal(shape) * 3)
    z_values.flat[0] = 0.0
    y = rng.random(shape)
    w, p = rng.random(shape) + 0.5, rng.random(shape) + 0.5
    z = f64(z_values)
    loss = F.binary_cross_entropy_with_logits(z, y, weight=w, pos_weight=p, reduction="sum")
    (grad,) = mg.grad(loss, z, create_graph=True)
    np.testing.assert_allclose(grad.numpy(), bce_grad_numpy(z_values, y, w, p), rtol=1e-12)
    (second,) = mg.grad(grad.sum(), z)
    sigma = 1 / (1 + np.exp(-z_values))
    expected = w * (1 + (p - 1) * y) * sigma * (1 - sigma)
    np.testing.assert_allclose(second.numpy(), expected, rtol=1e-12)
    assert second.numpy().flat[0] == pytest.approx(0.25 * w.flat[0] * (1 + (p.flat[0] - 1)
                                                                         * y.flat[0]))


def test_bce_create_graph_gradients_of_target_weight_and_pos_weight(rng):
    z, y = f64(rng.standard_normal(4)), f64(rng.random(4))
    w, p = f64(rng.random(4) + 0.5), f64(rng.random(4) + 0.5)
    loss = F.binary_cross_entropy_with_logits(z, y, weight=w, pos_weight=p)
    recorded = mg.grad(loss, [z, y, w, p], create_graph=True)
    plain = mg.grad(F.binary_cross_entropy_with_logits(z, y, weight=w, pos_weight=p),
                    [z, y, w, p])
    for a, b in zip(recorded, plain):                        # ∂ℓ/∂y = w·(p·sp(−z) − sp(z))
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-15)  # cancels
    assert mg.gradcheck(lambda z, y, w, p: mg.grad(
        F.binary_cross_entropy_with_logits(z, y, weight=w, pos_weight=p), z,
        create_graph=True)[0], [z, y, w, p])


def test_bce_create_graph_with_operands_computed_from_one_another(rng):
    """Target, weight and pos_weight computed from the logits: the recorded backward must
    follow each path once, as the plain one does; its own derivative is checked too."""
    z = f64(rng.standard_normal(3))
    z_values = z.numpy()

    def loss(z):
        return F.binary_cross_entropy_with_logits(z, mg.sigmoid(z * 0.5), weight=z * z,
                                                  pos_weight=z * z + 1, reduction="sum")

    def loss_numpy(v):
        return bce_numpy(v, 1 / (1 + np.exp(-v * 0.5)), v * v, v * v + 1).sum()

    eps = 1e-6
    numeric = np.array([(loss_numpy(z_values + eps * e) - loss_numpy(z_values - eps * e))
                        / (2 * eps) for e in np.eye(3)])
    (plain,) = mg.grad(loss(z), z)
    (recorded,) = mg.grad(loss(z), z, create_graph=True)
    np.testing.assert_allclose(plain.numpy(), numeric, rtol=1e-7)
    np.testing.assert_allclose(recorded.numpy(), numeric, rtol=1e-7)
    assert mg.gradcheck(lambda z: mg.grad(loss(z), z, create_graph=True)[0], [z])


def test_bce_bad_inputs():
    z = f64(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"binary_cross_entropy_with_logits: logits shape "
                                         r"\(2, 3\) and target shape \(3,\)"):
        F.binary_cross_entropy_with_logits(z, np.zeros(3))
    with pytest.raises(ValueError, match=r"weight shape \(2,\) does not broadcast"):
        F.binary_cross_entropy_with_logits(z, np.zeros((2, 3)), weight=np.ones(2))
    with pytest.raises(ValueError, match=r"pos_weight shape \(4, 2, 3\) does not broadcast"):
        F.binary_cross_entropy_with_logits(z, np.zeros((2, 3)), pos_weight=np.ones((4, 2, 3)))
    with pytest.raises(TypeError, match="reduction= by keyword"):
        F.binary_cross_entropy_with_logits(z, np.zeros((2, 3)), "sum")
    with pytest.raises(ValueError, match="reduction"):
        F.binary_cross_entropy_with_logits(z, np.zeros((2, 3)), reduction="avg")


# -- l1, smooth_l1, huber -----------------------------------------------------------------

def smooth_l1_numpy(d, beta):
    a = np.abs(d)
    return np.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta)


def smooth_l1_grad_numpy(d, beta):
    """PyTorch's convention: d/β strictly inside, sign(d) from |d| = β on (the two agree
    there), 0 at d = 0."""
    return np.where(np.abs(d) < beta, d / beta, np.sign(d))


def huber_numpy(d, delta):
    a = np.abs(d)
    return np.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))


def huber_grad_numpy(d, delta):
    return np.where(np.abs(d) < delta, d, delta * np.sign(d))


KINKED = {
    "l1": (lambda x, t, r: F.l1_loss(x, t, reduction=r), lambda d: np.abs(d), np.sign),
    "smooth_l1": (lambda x, t, r: F.smooth_l1_loss(x, t, reduction=r, beta=0.5),
                  lambda d: smooth_l1_numpy(d, 0.5), lambda d: smooth_l1_grad_numpy(d, 0.5)),
    "smooth_l1_beta_2": (lambda x, t, r: F.smooth_l1_loss(x, t, reduction=r, beta=2.0),
                         lambda d: smooth_l1_numpy(d, 2.0),
                         lambda d: smooth_l1_grad_numpy(d, 2.0)),
    "huber": (lambda x, t, r: F.huber_loss(x, t, r, delta=0.5),
              lambda d: huber_numpy(d, 0.5), lambda d: huber_grad_numpy(d, 0.5)),
    "huber_delta_3": (lambda x, t, r: F.huber_loss(x, t, r, delta=3.0),
                      lambda d: huber_numpy(d, 3.0), lambda d: huber_grad_numpy(d, 3.0)),
}
EDGE = {"l1": 0.0, "smooth_l1": 0.5, "smooth_l1_beta_2": 2.0, "huber": 0.5,
        "huber_delta_3": 3.0}


def kink_differences(edge):
    """d exactly at the kinks (0, ±edge) and just beside them, plus plain values."""
    d = [0.0, -0.0, edge, -edge, 1e-12, -1e-12, edge + 1e-9, edge - 1e-9, -edge - 1e-9,
         -edge + 1e-9, 2.5 * edge + 1.0, -3.0 * edge - 1.0, 0.3 * edge]
    return np.array(d)


@pytest.mark.parametrize("name", list(KINKED))
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_losses_at_their_kinks_follow_pytorch_conventions(name, reduction, rng):
    loss_fn, value_numpy, grad_numpy = KINKED[name]
    d = kink_differences(EDGE[name])
    target = rng.standard_normal(d.shape)
    x = target + d
    d = x - target                                          # the difference as computed
    loss = loss_fn(f64(x, False), f64(target, False), reduction)
    np.testing.assert_allclose(loss.numpy(), reduce_numpy(value_numpy(d), reduction),
                               rtol=1e-13, atol=1e-15)
    grad_x, grad_t = input_grads(lambda a, b: loss_fn(a, b, reduction), [x, target], reduction)
    expected = grad_numpy(d) * reduction_scale(d.shape, reduction)
    np.testing.assert_allclose(grad_x, expected, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(grad_t, -expected, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", list(KINKED))
def test_losses_at_exact_kinks_written_out(name):
    """The kink values themselves, spelled out: at d = 0 every gradient is 0; at |d| = β the
    smooth_l1 gradient is ±1 and its value ½β; at |d| = δ the huber gradient is ±δ and its
    value ½δ²."""
    edge = EDGE[name]
    if name == "l1":
        d, values, grads = [0.0, 1.0, -2.0], [0.0, 1.0, 2.0], [0.0, 1.0, -1.0]
    elif name.startswith("smooth_l1"):
        d, values, grads = [0.0, edge, -edge], [0.0, edge / 2, edge / 2], [0.0, 1.0, -1.0]
    else:
        d, values = [0.0, edge, -edge], [0.0, edge * edge / 2, edge * edge / 2]
        grads = [0.0, edge, -edge]
    x = f64(d)
    loss = KINKED[name][0](x, f64(np.zeros(3), False), "none")
    loss.sum().backward()
    np.testing.assert_array_equal(loss.numpy(), values)
    np.testing.assert_array_equal(x.grad.numpy(), grads)


@pytest.mark.parametrize("name", list(KINKED))
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_kinked_losses_gradcheck_away_from_kinks(name, shape, reduction, rng):
    edge = EDGE[name]
    # differences at least 0.1 away from 0 and from ±edge: both sides of each kink
    magnitudes = rng.choice([0.3, 0.7, 1.6, 4.1], size=shape) * max(edge, 0.5)
    magnitudes = np.where(np.abs(magnitudes - edge) < 0.1, magnitudes + 0.25, magnitudes)
    d = magnitudes * rng.choice([-1.0, 1.0], size=shape)
    target = rng.standard_normal(shape)
    assert mg.gradcheck(lambda a, b: KINKED[name][0](a, b, reduction),
                        [f64(target + d), f64(target)])


@pytest.mark.parametrize("name", ["smooth_l1", "huber"])
@pytest.mark.parametrize("huge", [1e30, 1e300, np.inf])
def test_huge_differences_give_the_linear_slope_not_nan(name, huge):
    loss_fn, _, grad_numpy = KINKED[name]
    x = f64([huge, -huge, 0.1])
    loss = loss_fn(x, f64(np.zeros(3), False), "sum")
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), grad_numpy(np.array([huge, -huge, 0.1])))
    assert not np.isnan(loss.numpy())


def test_smooth_l1_with_beta_zero_is_l1_and_bad_parameters_are_refused(rng):
    x, t = rng.standard_normal(5), rng.standard_normal(5)
    x[0] = t[0]
    a, b = f64(x), f64(x)
    F.smooth_l1_loss(a, t, beta=0.0).backward()
    F.l1_loss(b, t).backward()
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    assert a.grad.numpy()[0] == 0.0
    with pytest.raises(ValueError, match="smooth_l1_loss: beta"):
        F.smooth_l1_loss(a, t, beta=-1.0)
    for delta in (0.0, -1.0):
        with pytest.raises(ValueError, match="huber_loss: delta"):
            F.huber_loss(a, t, delta=delta)
    with pytest.raises(ValueError, match=r"l1_loss: input shape \(5,\)"):
        F.l1_loss(a, np.zeros(4))


def test_huber_is_delta_times_smooth_l1(rng):
    x, t = rng.standard_normal((3, 4)) * 3, rng.standard_normal((3, 4))
    for delta in (0.5, 1.0, 2.5):
        np.testing.assert_allclose(
            F.huber_loss(f64(x, False), t, "none", delta=delta).numpy(),
            delta * F.smooth_l1_loss(f64(x, False), t, reduction="none", beta=delta).numpy(),
            rtol=1e-12)


# -- cross-entropy with tied logits ---------------------------------------------------------

@pytest.mark.parametrize("classes", [1, 2, 5])
def test_cross_entropy_with_all_logits_tied(classes):
    """Equal logits: p = 1/C, ℓ = log C, ∂ℓ/∂z = 1/C − onehot(t)."""
    z = f64(np.full((3, classes), 7.0))
    targets = np.array([0, classes - 1, 0])
    loss = F.cross_entropy(z, targets, reduction="sum")
    loss.backward()
    np.testing.assert_allclose(loss.numpy(), 3 * np.log(classes), atol=1e-15)
    expected = np.full((3, classes), 1.0 / classes)
    expected[np.arange(3), targets] -= 1.0
    np.testing.assert_allclose(z.grad.numpy(), expected, atol=1e-15)


# -- against PyTorch (optional) ------------------------------------------------------------

def torch_grads(torch, loss_fn, arrays, reduction, differentiable=None):
    """torch's loss and the gradients of its first `differentiable` inputs (all by default)."""
    count = len(arrays) if differentiable is None else differentiable
    tensors = [torch.tensor(a, dtype=torch.float64, requires_grad=i < count)
               for i, a in enumerate(arrays)]
    loss = loss_fn(*tensors)
    (loss.sum() if reduction == "none" else loss).backward()
    return loss.detach().numpy(), [t.grad.numpy() for t in tensors[:count]]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("options", ["plain", "weight", "pos_weight", "both"])
def test_bce_matches_torch_at_and_near_zero(reduction, options, rng):
    torch = pytest.importorskip("torch")
    z = np.concatenate([[0.0, -0.0, 1e-12, -1e-12, 1e-6, 1e4, -1e4, 40.0, -40.0],
                        rng.standard_normal(7) * 3]).reshape(4, 4)
    y = rng.random((4, 4))
    y.flat[:3] = [0.0, 1.0, 0.5]
    arrays = [z, y]
    if options in ("weight", "both"):
        arrays.append(rng.random((4, 1)) + 0.5)
    if options in ("pos_weight", "both"):
        arrays.append(rng.random(4) + 0.5)

    def call(module, z, y, *extras):
        kwargs = {}
        if options in ("weight", "both"):
            kwargs["weight"] = extras[0]
        if options in ("pos_weight", "both"):
            kwargs["pos_weight"] = extras[-1]
        return module(z, y, reduction=reduction, **kwargs)

    # torch differentiates logits and targets only (weight and pos_weight are constants there)
    theirs, their_grads = torch_grads(torch, lambda *t: call(
        torch.nn.functional.binary_cross_entropy_with_logits, *t), arrays, reduction, 2)
    tensors = [f64(a) for a in arrays]
    ours = call(F.binary_cross_entropy_with_logits, *tensors)
    (ours.sum() if reduction == "none" else ours).backward()
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-12, atol=1e-14)
    for t, theirs_grad in zip(tensors, their_grads):
        np.testing.assert_allclose(t.grad.numpy(), theirs_grad, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", list(KINKED))
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_kinked_losses_match_torch_at_and_near_kinks(name, reduction, rng):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    theirs_fn = {
        "l1": lambda x, t: tf.l1_loss(x, t, reduction=reduction),
        "smooth_l1": lambda x, t: tf.smooth_l1_loss(x, t, reduction=reduction, beta=0.5),
        "smooth_l1_beta_2": lambda x, t: tf.smooth_l1_loss(x, t, reduction=reduction,
                                                           beta=2.0),
        "huber": lambda x, t: tf.huber_loss(x, t, reduction=reduction, delta=0.5),
        "huber_delta_3": lambda x, t: tf.huber_loss(x, t, reduction=reduction, delta=3.0),
    }[name]
    d = kink_differences(EDGE[name])
    target = np.round(rng.standard_normal(d.shape), 2)
    x = target + d
    theirs, their_grads = torch_grads(torch, theirs_fn, [x, target], reduction)
    ours = KINKED[name][0](f64(x, False), f64(target, False), reduction).numpy()
    our_grads = input_grads(lambda a, b: KINKED[name][0](a, b, reduction), [x, target],
                            reduction)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_array_equal(a, b)


def test_smooth_l1_with_beta_zero_and_infinite_differences_match_torch():
    torch = pytest.importorskip("torch")
    x = np.array([0.0, 1.0, -2.0, np.inf, -np.inf, 1e300])
    t = np.zeros(6)
    for ours_fn, theirs_fn in (
            (lambda a, b: F.smooth_l1_loss(a, b, reduction="sum", beta=0.0),
             lambda a, b: torch.nn.functional.smooth_l1_loss(a, b, reduction="sum", beta=0.0)),
            (lambda a, b: F.smooth_l1_loss(a, b, reduction="sum", beta=1.0),
             lambda a, b: torch.nn.functional.smooth_l1_loss(a, b, reduction="sum", beta=1.0)),
            (lambda a, b: F.huber_loss(a, b, "sum", delta=2.0),
             lambda a, b: torch.nn.functional.huber_loss(a, b, reduction="sum", delta=2.0))):
        theirs, (their_grad, _) = torch_grads(torch, theirs_fn, [x, t], "sum")
        (our_grad, _) = input_grads(ours_fn, [x, t], "sum")
        np.testing.assert_array_equal(our_grad, their_grad)
        assert ours_fn(f64(x, False), f64(t, False)).numpy() == theirs


# -- another device --------------------------------------------------------------------------

def test_losses_run_on_another_device_and_match_the_host(sim_device, rng):
    """The fused primitive uses only the array module of its inputs (xp), as CuPy needs."""
    z, y = rng.standard_normal((3, 4)), rng.random((3, 4))
    z[0, 0] = 0.0
    w, p = rng.random((3, 1)) + 0.5, rng.random(4) + 0.5
    results = {}
    for device in ("cpu", sim_device):
        tensors = [mg.tensor(a, requires_grad=True, device=device) for a in (z, y, w, p)]
        losses = [F.binary_cross_entropy_with_logits(*tensors[:2], weight=tensors[2],
                                                     pos_weight=tensors[3]),
                  F.l1_loss(*tensors[:2]), F.smooth_l1_loss(*tensors[:2], beta=0.3),
                  F.huber_loss(*tensors[:2], delta=0.3)]
        total = losses[0] + losses[1] + losses[2] + losses[3]
        assert total.device == device
        total.backward()
        results[device] = [total.numpy()] + [t.grad.numpy() for t in tensors]
    for host, other in zip(results["cpu"], results[sim_device]):
        np.testing.assert_allclose(other, host, rtol=1e-12)
