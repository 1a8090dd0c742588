"""nn.functional in PyTorch's forms: pad, activations, losses with weights and probability
targets, cosine similarity, attention with float masks and grouped key/value heads. Each is
checked against a plain-NumPy reference from its definition and with float64 gradchecks; where
torch is installed, also against torch itself."""

import numpy as np
import pytest

import minigrad as mg
import nn
import nn.functional as F


def f64(array, requires_grad=True):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


# -- pad ----------------------------------------------------------------------------------------

def _torch_pad_numpy(a, pad, mode, value=0.0):
    """PyTorch's flat (left, right, top, bottom, …) amounts as numpy.pad widths. A negative
    amount crops: after padding (so "reflect" mirrors the whole input), except in "circular"
    mode, which wraps the cropped input."""
    widths, crop = [(0, 0)] * a.ndim, [slice(None)] * a.ndim
    for i in range(len(pad) // 2):
        axis = a.ndim - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        widths[axis] = (max(before, 0), max(after, 0))
        crop[axis] = (max(-before, 0), max(-after, 0))      # elements cut at each end
    def cut(b, crops=crop):
        return b[tuple(slice(None) if c == slice(None) else slice(c[0], b.shape[k] - c[1])
                       for k, c in enumerate(crops))]
    if a.ndim == 0:
        return a                              # nothing to pad (numpy.pad refuses 0-d)
    numpy_mode = {"replicate": "edge", "circular": "wrap"}.get(mode, mode)
    if numpy_mode == "wrap":
        return np.pad(cut(a), widths, "wrap")
    if numpy_mode == "constant":
        return cut(np.pad(a, widths, constant_values=value))
    return cut(np.pad(a, widths, numpy_mode))


@pytest.mark.parametrize("pad, mode, shape", [
    ((1, 2), "constant", (2, 3)), ((1, 2, 2, 1), "reflect", (2, 3, 4)),
    ((2, 1, 0, 1), "replicate", (3, 2)), ((1, 3), "circular", (1, 3)),
    ((-1, 2, 1, -1), "constant", (3, 4)), ((2, 2), "constant", (1,)), ((), "constant", ()),
    # negative amounts beside positive ones: the crop comes after the padding
    ((3, -3), "reflect", (5,)), ((-1, 2, 2, -1), "reflect", (3, 4, 4)),
    ((3, -5, 1, -4), "replicate", (2, 5, 5)), ((0, 0, 0, -5), "reflect", (1, 5, 5)),
    ((2, -1), "replicate", (1,)), ((-1, 2), "circular", (5,)), ((2, -1), "circular", (2, 5)),
])
def test_pad_in_pytorch_form(pad, mode, shape, rng):
    a = rng.standard_normal(shape)
    x = f64(a)
    np.testing.assert_allclose(F.pad(x, pad, mode).numpy(), _torch_pad_numpy(a, pad, mode))
    assert mg.gradcheck(lambda t: F.pad(t, pad, mode), [x])


def test_pad_refuses_what_pytorch_refuses():
    x = mg.ones(1, 5)
    with pytest.raises(ValueError, match=r"pad: mode 'reflect' pads axis 1 of length 5 by at "
                                         r"most 4, got \(3, 5\)"):
        F.pad(x, (3, 5), "reflect")
    with pytest.raises(ValueError, match="pad: mode 'circular' pads axis 1 of length 5 by at "
                                         "most 5"):
        F.pad(x, (6, 0), "circular")
    with pytest.raises(ValueError, match="pad: mode 'reflect' pads axis 0 of length 1"):
        F.pad(mg.ones(1), (1, 0), "reflect")


def test_pad_value_and_errors():
    x = mg.ones(2, 2)
    assert F.pad(x, (1, 0), value=-1.0).numpy()[:, 0].tolist() == [-1.0, -1.0]
    with pytest.raises(ValueError, match="pad: mode"):
        F.pad(x, (1, 1), "edge")
    with pytest.raises(ValueError, match=r"3 amounts.*\(2, 2\)"):
        F.pad(x, (1, 1, 1))
    with pytest.raises(ValueError, match="only used by mode 'constant'"):
        F.pad(x, (1, 1), "reflect", value=2.0)


def test_pad_matches_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    for pad, mode in [((1, 2), "constant"), ((1, 2, 2, 1), "reflect"),
                      ((2, 1, 0, 1), "replicate"), ((1, 3), "circular"),
                      ((-1, 2, 2, -1), "reflect"), ((3, -3, 0, -2), "replicate"),
                      ((2, -1), "circular"), ((-1, 3, 1, -3), "constant")]:
        expected = torch.nn.functional.pad(torch.tensor(a), pad, mode=mode).numpy()
        np.testing.assert_allclose(F.pad(mg.tensor(a), pad, mode).numpy(), expected)


# -- activation modules ---------------------------------------------------------------------------

@pytest.mark.parametrize("module, function", [
    (nn.SiLU(), mg.silu), (nn.Mish(), mg.mish), (nn.Softplus(2.0, 1.0),
                                                 lambda x: mg.softplus(x, 2.0, 1.0)),
    (nn.ELU(0.5), lambda x: mg.elu(x, 0.5)), (nn.CELU(2.0), lambda x: mg.celu(x, 2.0)),
    (nn.SELU(), mg.selu), (nn.LeakyReLU(0.2), lambda x: mg.leaky_relu(x, 0.2)),
    (nn.Hardtanh(-2.0, 2.0), lambda x: mg.hardtanh(x, -2.0, 2.0)), (nn.ReLU6(), mg.relu6),
    (nn.Hardsigmoid(), mg.hardsigmoid), (nn.Hardswish(), mg.hardswish),
    (nn.Softsign(), mg.softsign), (nn.LogSigmoid(), mg.logsigmoid),
    (nn.Softmax(0), lambda x: mg.softmax(x, 0)), (nn.LogSoftmax(), mg.log_softmax),
    (nn.Softmin(1), lambda x: mg.softmin(x, 1)),
])
def test_activation_modules_call_their_functions(module, function, rng):
    x = mg.tensor(4 * rng.standard_normal((3, 4)))
    np.testing.assert_array_equal(module(x).numpy(), function(x).numpy())
    assert type(module).__name__ in repr(module) and not list(module.parameters())


def test_functional_offers_the_activations_by_pytorchs_names():
    for name in ("silu", "mish", "softplus", "elu", "celu", "selu", "leaky_relu", "hardtanh",
                 "relu6", "hardsigmoid", "hardswish", "softsign", "logsigmoid"):
        assert getattr(F, name) is getattr(mg, name)


# -- the softmax family without a dim: PyTorch's implicit dim is 0 for 0-, 1- and 3-D input and
#    1 otherwise, minigrad's the last axis; they agree up to 2 axes only

def _softmax_numpy(z, axis):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


SOFTMAX_FAMILY = [
    ("softmax", nn.Softmax, lambda z, axis: _softmax_numpy(z, axis)),
    ("log_softmax", nn.LogSoftmax, lambda z, axis: np.log(_softmax_numpy(z, axis))),
    ("softmin", nn.Softmin, lambda z, axis: _softmax_numpy(-z, axis)),
]


@pytest.mark.parametrize("name, module, reference", SOFTMAX_FAMILY)
@pytest.mark.parametrize("shape", [(), (1,), (5,), (1, 1), (3, 4)])
def test_softmax_family_without_dim_up_to_2_axes_uses_the_last(name, module, reference, shape,
                                                               rng):
    z = rng.standard_normal(shape)
    expected = reference(z, -1) if shape else reference(z[None], -1)[0]
    for call in (getattr(F, name), lambda x: getattr(F, name)(x, dim=None), module(),
                 module(dim=None)):
        out = call(f64(z))
        assert out.shape == shape
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name, module, reference", SOFTMAX_FAMILY)
@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 4, 5)])
def test_softmax_family_without_dim_from_3_axes_raises(name, module, reference, shape, rng):
    z = f64(rng.standard_normal(shape))
    implicit = 0 if len(shape) == 3 else 1
    for call in (getattr(F, name), module(), lambda x: getattr(F, name)(x, dim=None)):
        with pytest.raises(ValueError, match=rf"{name}: no dim given .* PyTorch would take "
                                             rf"dim={implicit} .* pass dim="):
            call(z)
    # a dim or axis given works as before, on every axis
    for axis in range(-len(shape), len(shape)):
        expected = reference(z.numpy(), axis)
        for out in (getattr(F, name)(z, dim=axis), getattr(F, name)(z, axis),
                    getattr(F, name)(z, axis=axis), module(axis)(z), module(dim=axis)(z)):
            np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-15)
    with pytest.raises(TypeError, match="got axis=1 and dim=2"):
        getattr(F, name)(z, 1, dim=2)


@pytest.mark.filterwarnings("ignore:Implicit dimension choice")
def test_softmax_family_matches_torch_where_dim_is_implicit(rng):
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    for shape in [(), (1,), (5,), (3, 4)]:
        z = rng.standard_normal(shape)
        for name in ("softmax", "log_softmax", "softmin"):
            theirs = getattr(TF, name)(torch.tensor(z), dim=None)   # PyTorch's implicit dim
            np.testing.assert_allclose(getattr(F, name)(f64(z)).numpy(), theirs.numpy(),
                                       rtol=1e-12, atol=1e-15)


def test_softmax_wrapper_adds_no_graph_node(rng):
    x = f64(rng.standard_normal((3, 4)))
    for name in ("softmax", "log_softmax"):
        ours, engine = getattr(F, name)(x), getattr(mg, name)(x, -1)
        assert type(ours.grad_fn) is type(engine.grad_fn) and ours.grad_fn.inputs[0] is x


# -- dropout in PyTorch's signature (input, p, training, inplace) --------------------------------

@pytest.mark.parametrize("shape", [(), (1,), (3, 4)])
def test_dropout_takes_pytorchs_positional_inplace_false(shape, rng):
    x = f64(rng.standard_normal(shape) + 3.0)
    mg.manual_seed(5)
    out = F.dropout(x, 0.5, True, False)
    mg.manual_seed(5)
    expected = mg.dropout(x, 0.5, True).numpy()
    assert out.shape == shape
    np.testing.assert_array_equal(out.numpy(), expected)
    kept = out.numpy() != 0                        # each element: 0, or x / (1 − p)
    np.testing.assert_allclose(out.numpy()[kept], 2 * x.numpy()[kept], rtol=1e-15)
    np.testing.assert_array_equal(F.dropout(x, 0.5, False, False).numpy(), x.numpy())
    mg.manual_seed(5)
    shared = F.dropout(f64(np.ones((2, 3, 4))), 0.5, noise_shape=(2, 1, 4)).numpy()
    np.testing.assert_array_equal(shared, np.broadcast_to(shared[:, :1], (2, 3, 4)))


@pytest.mark.parametrize("call, error, match", [
    (lambda x: F.dropout(x, 0.5, True, True), ValueError, r"dropout: inplace=True .* not "
                                                          r"supported"),
    (lambda x: F.dropout(x, 0.5, True, (3, 1)), TypeError, r"dropout: inplace .* must be False, "
                                                           r"got tuple \(3, 1\).*noise_shape="),
    (lambda x: F.dropout1d(x, 0.5, True, True), ValueError, r"dropout1d: inplace=True"),
    (lambda x: nn.Dropout(0.5, True)(x), ValueError, r"Dropout: inplace=True"),
    (lambda x: nn.Dropout1d(0.5, inplace=True)(x), ValueError, r"Dropout1d: inplace=True"),
])
def test_dropout_inplace_true_is_a_clear_error(call, error, match, rng):
    x = f64(rng.standard_normal((3, 4)))
    with pytest.raises(error, match=match):
        call(x)


ACTIVATIONS_WITH_INPLACE = {  # PyTorch's positional order, inplace last
    "ReLU": (), "ReLU6": (), "SiLU": (), "Mish": (), "SELU": (), "Hardsigmoid": (),
    "Hardswish": (), "ELU": (1.0,), "CELU": (1.0,), "LeakyReLU": (0.01,),
    "Hardtanh": (-1.0, 1.0)}


@pytest.mark.parametrize("name", list(ACTIVATIONS_WITH_INPLACE))
def test_activations_take_pytorchs_inplace_false_and_refuse_true(name, rng):
    args = ACTIVATIONS_WITH_INPLACE[name]
    layer = getattr(nn, name)
    for shape in [(), (1,), (3, 4)]:
        x = f64(rng.standard_normal(shape))
        np.testing.assert_array_equal(layer(*args, False)(x).numpy(), layer(*args)(x).numpy())
    with pytest.raises(ValueError, match=f"{name}: inplace=True .* never changes its input"):
        layer(*args, True)
    with pytest.raises(ValueError, match=f"{name}: inplace=True"):
        layer(inplace=True)


# -- losses -------------------------------------------------------------------------------------

def _log_softmax(z):
    m = z.max(-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(-1, keepdims=True))


def _weighted_ce_numpy(z, t, w, ignore_index=None, reduction="mean", eps=0.0, log_p=None):
    """From PyTorch's definition, one position at a time."""
    log_p = _log_softmax(z) if log_p is None else log_p
    classes = z.shape[-1]
    losses, total = np.zeros(t.shape), 0.0
    for pos in np.ndindex(t.shape):
        if ignore_index is not None and t[pos] == ignore_index:
            continue
        row = log_p[pos]
        losses[pos] = (1 - eps) * -w[t[pos]] * row[t[pos]] + eps / classes * -(w * row).sum()
        total += w[t[pos]]
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.sum() / total


@pytest.mark.parametrize("options", [dict(), dict(reduction="sum"), dict(reduction="none"),
                                     dict(ignore_index=2), dict(label_smoothing=0.2),
                                     dict(ignore_index=0, label_smoothing=0.1,
                                          reduction="none")])
def test_cross_entropy_and_nll_with_class_weights(options, rng):
    z, t = rng.standard_normal((2, 3, 4)), rng.integers(0, 4, (2, 3))
    w = rng.uniform(0.5, 2.0, 4)
    eps = options.get("label_smoothing", 0.0)
    expected = _weighted_ce_numpy(z, t, w, options.get("ignore_index"),
                                  options.get("reduction", "mean"), eps)
    x = f64(z)
    np.testing.assert_allclose(F.cross_entropy(x, t, weight=w, **options).numpy(), expected)
    assert mg.gradcheck(lambda v: F.cross_entropy(v, t, weight=f64(w, False), **options), [x])
    if not eps:
        log_p = _log_softmax(z)
        nll_options = {k: v for k, v in options.items() if k != "label_smoothing"}
        np.testing.assert_allclose(
            F.nll_loss(f64(log_p), t, weight=w, **nll_options).numpy(),
            _weighted_ce_numpy(z, t, w, log_p=log_p, reduction=options.get("reduction", "mean"),
                               ignore_index=options.get("ignore_index")))
    weight = f64(w)                                     # the weights get gradients too
    assert mg.gradcheck(lambda v: F.cross_entropy(f64(z, False), t, weight=v, **options),
                        [weight])


@pytest.mark.parametrize("weighted, eps, reduction", [(False, 0.0, "mean"), (True, 0.1, "sum"),
                                                      (True, 0.0, "none")])
def test_cross_entropy_with_probability_targets(weighted, eps, reduction, rng):
    z, q = rng.standard_normal((3, 4)), rng.dirichlet(np.ones(4), 3)
    w = rng.uniform(0.5, 2.0, 4) if weighted else np.ones(4)
    smoothed = (1 - eps) * q + eps / 4
    losses = -(w * smoothed * _log_softmax(z)).sum(-1)
    expected = {"mean": losses.mean(), "sum": losses.sum(), "none": losses}[reduction]
    x = f64(z)
    options = dict(weight=w if weighted else None, label_smoothing=eps, reduction=reduction)
    np.testing.assert_allclose(F.cross_entropy(x, q, **options).numpy(), expected)
    assert mg.gradcheck(lambda v, p: F.cross_entropy(v, p, **options), [x, f64(q)])
    with pytest.raises(ValueError, match="ignore_index applies to class-index targets"):
        F.cross_entropy(x, q, ignore_index=0)


def _bce_numpy(p, y):
    with np.errstate(divide="ignore"):
        return -(y * np.maximum(np.log(p), -100) + (1 - y) * np.maximum(np.log(1 - p), -100))


@pytest.mark.parametrize("shape, reduction", [((3, 4), "mean"), ((), "sum"), ((1,), "none")])
def test_binary_cross_entropy_on_probabilities(shape, reduction, rng):
    p, y, w = rng.uniform(0.05, 0.95, shape), rng.uniform(0, 1, shape), rng.uniform(0.5, 2, shape)
    losses = w * _bce_numpy(p, y)
    expected = {"mean": losses.mean(), "sum": losses.sum(), "none": losses}[reduction]
    np.testing.assert_allclose(F.binary_cross_entropy(f64(p), y, w, reduction=reduction).numpy(), expected)
    assert mg.gradcheck(lambda a, b: F.binary_cross_entropy(a, b, f64(w, False), reduction=reduction),
                        [f64(p), f64(y)])


def test_binary_cross_entropy_at_zero_and_one_is_finite_as_in_pytorch():
    p = f64([0.0, 1e-50, 1.0, 1.0])
    y = f64([0.0, 1.0, 1.0, 0.0])
    loss = F.binary_cross_entropy(p, y, reduction="none")
    np.testing.assert_allclose(loss.numpy(), [0.0, 100.0, 0.0, 100.0])
    gp, gy = mg.grad(loss.sum(), [p, y])
    np.testing.assert_allclose(gp.numpy(), [0.0, -1e12, 0.0, 1e12])   # PyTorch's values
    np.testing.assert_allclose(gy.numpy(), [100.0, 100.0, -100.0, -100.0])
    with pytest.raises(ValueError, match=r"binary_cross_entropy: input must hold probabilities"):
        F.binary_cross_entropy(f64([1.5]), [1.0])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target, rng):
    log_q = np.log(rng.dirichlet(np.ones(4), 3))
    p = rng.dirichlet(np.ones(4), 3)
    p[0, 1] = 0.0                                       # 0·log 0 = 0
    target = np.log(p + 1e-3) if log_target else p
    pointwise = (np.exp(target) * (target - log_q) if log_target
                 else np.where(p > 0, p * (np.log(np.where(p > 0, p, 1)) - log_q), 0.0))
    expected = {"mean": pointwise.mean(), "sum": pointwise.sum(), "none": pointwise,
                "batchmean": pointwise.sum() / 3}[reduction]
    out = F.kl_div(f64(log_q), target, reduction=reduction, log_target=log_target)
    np.testing.assert_allclose(out.numpy(), expected)
    assert mg.gradcheck(lambda a: F.kl_div(a, f64(target, False), reduction=reduction,
                                                  log_target=log_target),
                        [f64(log_q)])


@pytest.mark.parametrize("shapes, dim", [(((3, 4), (3, 4)), 1), (((2, 3, 4), (4,)), -1),
                                         (((4,), (4,)), 0), (((3, 1), (1, 5)), 0)])
def test_cosine_similarity(shapes, dim, rng):
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    norm = lambda v: np.maximum(np.sqrt((v * v).sum(dim)), 1e-8)     # noqa: E731
    wide_a, wide_b = np.broadcast_arrays(a, b)
    expected = (wide_a * wide_b).sum(dim) / (norm(wide_a) * norm(wide_b))
    x, y = f64(np.array(a)), f64(np.array(b))
    np.testing.assert_allclose(F.cosine_similarity(x, y, dim).numpy(), expected)
    assert mg.gradcheck(lambda u, v: F.cosine_similarity(u, v, dim), [x, y])


@pytest.mark.parametrize("dtype, scale", [(np.float64, 1e200), (np.float64, 1e300),
                                          (np.float32, 1e25), (np.float16, 1e3)])
def test_cosine_similarity_of_huge_vectors(dtype, scale):
    """‖x‖² would overflow in the dtype; the similarity is scale-free, so the value is that of
    the unscaled vectors and the gradient that one divided by the scale."""
    a, b = np.array([[1.0, 2.0, -0.5]]), np.array([[3.0, 1.0, 0.25]])
    x, y = (mg.tensor((v * scale).astype(dtype), requires_grad=True) for v in (a, b))
    out = F.cosine_similarity(x, y)
    na, nb = np.sqrt((a * a).sum()), np.sqrt((b * b).sum())
    cos = (a * b).sum() / (na * nb)
    gx, gy = mg.grad(out.sum(), [x, y])
    tol = {np.float64: 1e-12, np.float32: 1e-6, np.float16: 2e-3}[dtype]
    np.testing.assert_allclose(out.numpy(), [cos], rtol=tol)
    # ∂cos/∂a = b/(‖a‖‖b‖) − cos·a/‖a‖², and x = scale·a
    np.testing.assert_allclose(gx.numpy().astype(np.float64) * scale,
                               b / (na * nb) - cos * a / na ** 2, rtol=tol, atol=tol)
    np.testing.assert_allclose(gy.numpy().astype(np.float64) * scale,
                               a / (na * nb) - cos * b / nb ** 2, rtol=tol, atol=tol)


def test_cosine_similarity_of_a_zero_vector_is_zero_with_finite_gradients():
    x, y = f64(np.zeros((1, 3))), f64([[1.0, 2.0, 2.0]])
    out = F.cosine_similarity(x, y)
    assert out.tolist() == [0.0]
    gx, gy = mg.grad(out.sum(), [x, y])
    assert np.isfinite(gx.numpy()).all() and np.isfinite(gy.numpy()).all()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cosine_embedding_loss(reduction, rng):
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    y = np.array([1, -1, -1, 1])
    cos = (a * b).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12))
    losses = np.where(y == 1, 1 - cos, np.maximum(cos - 0.1, 0))
    expected = {"mean": losses.mean(), "sum": losses.sum(), "none": losses}[reduction]
    out = F.cosine_embedding_loss(f64(a), f64(b), y, 0.1, reduction=reduction)
    np.testing.assert_allclose(out.numpy(), expected)
    assert mg.gradcheck(lambda u, v: F.cosine_embedding_loss(u, v, y, 0.1, reduction=reduction),
                        [f64(a), f64(b)])
    one = F.cosine_embedding_loss(f64(a[0]), f64(b[0]), np.array(1))          # (D,), 0-d y
    np.testing.assert_allclose(one.numpy(), 1 - cos[0])


def test_loss_modules_call_their_functions(rng):
    z, t = mg.tensor(rng.standard_normal((3, 4))), rng.integers(0, 4, 3)
    w = rng.uniform(0.5, 2, 4)
    p = mg.tensor(rng.uniform(0.1, 0.9, 3))
    for module, expected in (
            (nn.CrossEntropyLoss(weight=w), F.cross_entropy(z, t, weight=w)),
            (nn.NLLLoss(w, reduction="sum"), F.nll_loss(z, t, reduction="sum", weight=w))):
        np.testing.assert_allclose(module(z, t).numpy(), expected.numpy())
    np.testing.assert_allclose(nn.BCELoss()(p, p.numpy()).numpy(),
                               F.binary_cross_entropy(p, p.numpy()).numpy())
    np.testing.assert_allclose(nn.BCEWithLogitsLoss(pos_weight=np.ones(3) * 2)(z[0, :3], p).numpy(),
                               F.binary_cross_entropy_with_logits(z[0, :3], p,
                                                                  pos_weight=np.ones(3) * 2).numpy())
    np.testing.assert_allclose(nn.KLDivLoss(reduction="batchmean")(mg.log_softmax(z), mg.softmax(z)).item(),
                               0.0, atol=1e-6)
    np.testing.assert_allclose(nn.CosineSimilarity(dim=0)(z, z).numpy(), np.ones(4), rtol=1e-6)
    assert nn.CosineEmbeddingLoss(0.2)(z, z, np.ones(3)).item() < 1e-6


def test_losses_match_torch(rng):
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    z, t, w = rng.standard_normal((5, 4)), rng.integers(0, 4, 5), rng.uniform(0.5, 2, 4)
    q = rng.dirichlet(np.ones(4), 5)
    T = torch.tensor
    for mine, theirs in (
            (F.cross_entropy(f64(z), t, weight=w, label_smoothing=0.1),
             TF.cross_entropy(T(z), T(t), weight=T(w), label_smoothing=0.1)),
            (F.cross_entropy(f64(z), q, weight=w), TF.cross_entropy(T(z), T(q), weight=T(w))),
            (F.nll_loss(f64(z), t, weight=w, ignore_index=1),
             TF.nll_loss(T(z), T(t), weight=T(w), ignore_index=1)),
            (F.kl_div(f64(np.log(q)), q[::-1].copy(), reduction="batchmean"),
             TF.kl_div(T(np.log(q)), T(q[::-1].copy()), reduction="batchmean")),
            (F.cosine_similarity(f64(z), f64(z[::-1].copy())),
             TF.cosine_similarity(T(z), T(z[::-1].copy()))),
            (F.binary_cross_entropy(f64(q), q[::-1].copy()),
             TF.binary_cross_entropy(T(q), T(q[::-1].copy())))):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-10)


# PyTorch's third positional argument of cross_entropy / nll_loss (first of CrossEntropyLoss)
# is `weight`; minigrad's is ignore_index. As many targets as classes, so that comparing the
# targets with the weights elementwise would run without an error.
@pytest.mark.parametrize("as_weight", [np.asarray, list, lambda w: f64(w, False), lambda w: 0.5,
                                       lambda w: True])
@pytest.mark.parametrize("call, op", [
    (lambda z, t, w: F.cross_entropy(z, t, w), "cross_entropy"),
    (lambda z, t, w: F.nll_loss(mg.log_softmax(z), t, w), "nll_loss"),
    (lambda z, t, w: nn.CrossEntropyLoss(w)(z, t), "CrossEntropyLoss"),
    (lambda z, t, w: nn.NLLLoss(None, ignore_index=w)(mg.log_softmax(z), t), "NLLLoss"),
])
def test_class_weights_given_positionally_raise(call, op, as_weight, rng):
    z, t, w = f64(rng.standard_normal((4, 4))), rng.integers(0, 4, 4), rng.uniform(0.5, 2, 4)
    with pytest.raises(TypeError, match=rf"{op}: ignore_index must be an int or None.*weight="):
        call(z, t, as_weight(w))


# PyTorch's next positional parameter at these places is the deprecated size_average, which
# turns MSELoss("sum") into a mean: here those calls raise instead of meaning something else
@pytest.mark.parametrize("call", [
    lambda: nn.MSELoss("sum"), lambda: nn.L1Loss("sum"), lambda: nn.SmoothL1Loss("sum"),
    lambda: nn.KLDivLoss("batchmean"), lambda: nn.BCELoss(None, "sum"),
    lambda: nn.BCEWithLogitsLoss(None, "sum"), lambda: nn.NLLLoss(None, 3),
    lambda: nn.CosineEmbeddingLoss(0.2, "sum"), lambda: nn.CrossEntropyLoss(None, "sum"),
    lambda: F.mse_loss(f64([1.0]), [0.0], "sum"), lambda: F.l1_loss(f64([1.0]), [0.0], "sum"),
    lambda: F.smooth_l1_loss(f64([1.0]), [0.0], "sum"),
    lambda: F.kl_div(f64([-1.0]), [0.5], "sum"),
    lambda: F.binary_cross_entropy(f64([0.5]), [1.0], None, "sum"),
    lambda: F.binary_cross_entropy_with_logits(f64([0.5]), [1.0], None, "sum"),
    lambda: F.cosine_embedding_loss(f64([1.0]), f64([1.0]), np.array(1), 0.0, "sum"),
])
def test_pytorchs_size_average_slot_takes_no_positional_argument(call):
    with pytest.raises(TypeError, match="positional argument"):
        call()


def test_nll_loss_module_takes_weight_first_as_pytorch(rng):
    torch = pytest.importorskip("torch")
    z, t, w = rng.standard_normal((5, 4)), rng.integers(0, 4, 5), rng.uniform(0.5, 2, 4)
    log_p = _log_softmax(z)
    expected = torch.nn.NLLLoss(torch.tensor(w))(torch.tensor(log_p), torch.tensor(t))
    np.testing.assert_allclose(nn.NLLLoss(w)(f64(log_p), t).numpy(), expected.numpy(),
                               rtol=1e-12)


@pytest.mark.parametrize("z_shape, t", [((3, 4), [1, -100, 3]), ((1, 4), [-100]),
                                        ((4,), -100)])
def test_a_target_of_minus_100_says_pytorchs_default_differs(z_shape, t, rng):
    z, t = rng.standard_normal(z_shape), np.asarray(t)
    for call in (lambda: F.cross_entropy(f64(z), t), lambda: F.nll_loss(f64(z), t),
                 lambda: F.cross_entropy(f64(z), t, weight=np.ones(4))):
        with pytest.raises(ValueError, match=r"target -100 is out of range.*PyTorch's is -100: "
                                             r"pass ignore_index=-100"):
            call()
    # as PyTorch does with its default: positions at -100 are skipped (a 0 loss when all are)
    kept = np.atleast_1d(t) != -100
    rows = _log_softmax(np.atleast_2d(z))[kept, np.atleast_1d(t)[kept]]
    expected = -rows.mean() if rows.size else 0.0
    loss = F.cross_entropy(f64(z), t, ignore_index=-100)
    assert loss.shape == ()
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-12)
    torch = pytest.importorskip("torch")
    theirs = torch.nn.functional.cross_entropy(torch.tensor(z), torch.tensor(t))
    if rows.size:                              # PyTorch's mean of nothing is NaN; ours is 0
        np.testing.assert_allclose(loss.numpy(), theirs.numpy(), rtol=1e-12)


# -- attention with a float mask and grouped key/value heads ------------------------------------

def _attention_numpy(q, k, v, bias=None, allowed=None, scale=None):
    """softmax(scale·q kᵀ + bias) v from the definition, forbidden scores set to −inf."""
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = scale * q @ np.swapaxes(k, -1, -2)
    if bias is not None:
        s = s + bias
    if allowed is not None:
        s = np.where(allowed, s, -np.inf)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(m), m, 0))
    total = e.sum(-1, keepdims=True)
    w = e / np.where(total == 0, 1, total)
    return w @ v, w


@pytest.mark.parametrize("bias_shape", [(3, 5), (2, 1, 3, 5), (1, 5)])
def test_attention_with_an_additive_float_mask(bias_shape, rng):
    q, k, v = (rng.standard_normal(s) for s in ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 3)))
    bias = rng.standard_normal(bias_shape)
    out, weights = F.scaled_dot_product_attention(f64(q), f64(k), f64(v), attn_mask=bias)
    expected, expected_w = _attention_numpy(q, k, v, bias)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    np.testing.assert_allclose(weights.numpy(), expected_w, rtol=1e-10)
    assert mg.gradcheck(lambda a, b, c, d: F.scaled_dot_product_attention(a, b, c, d)[0],
                        [f64(q), f64(k), f64(v), f64(bias)])        # the bias gets its gradient


def test_float_mask_of_minus_infinity_forbids_and_a_full_row_gives_zeros(rng):
    q, k, v = (f64(rng.standard_normal(s)) for s in ((3, 4), (3, 4), (3, 2)))
    bias = np.zeros((3, 3))
    bias[0, 1:] = -np.inf                       # query 0 sees key 0 only
    bias[2, :] = -np.inf                        # query 2 sees nothing
    out, weights = F.scaled_dot_product_attention(q, k, v, bias)
    assert weights.numpy()[0].tolist() == [1.0, 0.0, 0.0]
    assert weights.numpy()[2].tolist() == [0.0, 0.0, 0.0] and out.numpy()[2].tolist() == [0, 0]
    grads = mg.grad(out.sum(), [q, k, v])
    assert all(np.isfinite(g.numpy()).all() for g in grads)


@pytest.mark.parametrize("kv_heads", [1, 2, 4])
def test_grouped_query_attention(kv_heads, rng):
    q = rng.standard_normal((2, 4, 3, 5))
    k, v = rng.standard_normal((2, kv_heads, 6, 5)), rng.standard_normal((2, kv_heads, 6, 2))
    allowed = np.tril(np.ones((3, 6), dtype=bool))
    out, weights = F.scaled_dot_product_attention(f64(q), f64(k), f64(v), allowed,
                                                  enable_gqa=True)
    group = 4 // kv_heads                      # query head h reads key/value head h // group
    expected, _ = _attention_numpy(q, np.repeat(k, group, axis=1), np.repeat(v, group, axis=1),
                                   allowed=allowed)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    assert weights.shape == (2, 4, 3, 6)
    assert mg.gradcheck(lambda a, b, c: F.scaled_dot_product_attention(
        a, b, c, is_causal=True, enable_gqa=True)[0], [f64(q[:1, :, :2]), f64(k[:1, :, :2]),
                                                        f64(v[:1, :, :2])])


def test_attention_argument_errors():
    q, k = mg.ones(2, 4, 3, 5), mg.ones(2, 3, 3, 5)
    with pytest.raises(ValueError, match="4 query heads cannot share 3"):
        F.scaled_dot_product_attention(q, k, k, enable_gqa=True)
    with pytest.raises(ValueError, match="not both"):
        F.scaled_dot_product_attention(q, q, q, np.ones((3, 3), bool), is_causal=True)
    with pytest.raises(TypeError, match="mask and attn_mask"):
        F.scaled_dot_product_attention(q, q, q, np.ones((3, 3), bool), attn_mask=np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"float mask of shape \(4, 4\)"):
        F.scaled_dot_product_attention(q, q, q, np.zeros((4, 4)))


def test_attention_matches_torch(rng):
    torch = pytest.importorskip("torch")
    q, k, v = (rng.standard_normal(s) for s in ((2, 4, 3, 8), (2, 2, 5, 8), (2, 2, 5, 6)))
    bias = rng.standard_normal((3, 5))
    T = torch.tensor
    theirs = torch.nn.functional.scaled_dot_product_attention(T(q), T(k), T(v), attn_mask=T(bias),
                                                              enable_gqa=True)
    mine, _ = F.scaled_dot_product_attention(f64(q), f64(k), f64(v), attn_mask=bias,
                                             enable_gqa=True)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-10)
    theirs = torch.nn.functional.scaled_dot_product_attention(T(q), T(q), T(q), is_causal=True)
    mine, _ = F.scaled_dot_product_attention(f64(q), f64(q), f64(q), is_causal=True)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-10)


@pytest.mark.parametrize("weight_shape", [(3, 2, 2), (3,), ()])
def test_embedding_refuses_a_table_that_is_not_2d(weight_shape):
    weight = mg.zeros(*weight_shape, requires_grad=True)
    with pytest.raises(ValueError, match=rf"embedding: weight must be 2-D .*got shape "
                                         rf"\({', '.join(map(str, weight_shape))}"):
        F.embedding(mg.tensor(np.array([0, 1])), weight)
