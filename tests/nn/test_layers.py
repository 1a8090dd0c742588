"""Layers against plain-NumPy references from their equations, float64 gradchecks, initialisers."""

import math

import numpy as np
import pytest

import minigrad as mg
import nn
import nn.functional as F


def f64(array, requires_grad=True):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


def linear_numpy(x, weight, bias=None):
    y = np.einsum("...i,oi->...o", x, weight)
    return y if bias is None else y + bias


def layer_norm_numpy(x, n_axes, weight=None, bias=None, eps=1e-5):
    axes = tuple(range(x.ndim - n_axes, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def layer_norm_composed(x, n_axes, weight, bias, eps=1e-5):
    """LayerNorm from minigrad's elementary operations: the unfused reference."""
    axes = tuple(range(x.ndim - n_axes, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    centred = x - mu
    var = (centred * centred).mean(axis=axes, keepdims=True)
    return centred / mg.sqrt(var + eps) * weight + bias


# -- Linear -------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4,), (2, 4), (2, 3, 4)])
def test_linear_forward_matches_numpy(shape, rng):
    layer = nn.Linear(4, 5)
    x = rng.standard_normal(shape).astype(np.float32)
    sd = layer.state_dict()
    out = layer(mg.tensor(x))
    assert out.shape == shape[:-1] + (5,)
    np.testing.assert_allclose(out.numpy(), linear_numpy(x, sd["weight"], sd["bias"]),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 2, 3), (2, 1, 2, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_gradcheck(bias, shape, rng):
    layer = nn.Linear(3, 2, bias=bias).double()
    x = f64(rng.standard_normal(shape))
    params = [layer.weight] + ([layer.bias] if bias else [])
    assert mg.gradcheck(lambda x, w, *b: F.linear(x, w, *b), [x] + params)


@pytest.mark.parametrize("in_features, out_features", [(0, 3), (3, 0)])
def test_linear_with_an_empty_feature_axis(in_features, out_features, rng):
    """No input features: the output is the bias; no output features: an empty output. The
    gradients keep their shapes either way."""
    x = mg.tensor(rng.standard_normal((2, 4, in_features)), requires_grad=True)
    w = mg.tensor(rng.standard_normal((out_features, in_features)), requires_grad=True)
    b = mg.tensor(rng.standard_normal(out_features), requires_grad=True)
    out = F.linear(x, w, b)
    np.testing.assert_allclose(out.numpy(), np.broadcast_to(b.numpy(), (2, 4, out_features))
                               if in_features == 0 else np.zeros((2, 4, 0)))
    out.sum().backward()
    assert x.grad.shape == x.shape and w.grad.shape == w.shape
    np.testing.assert_allclose(b.grad.numpy(), np.full(out_features, 8.0))


def test_linear_of_a_strided_view_matches_numpy(rng):
    """Leading positions that are not contiguous (a sequence read time-major)."""
    x = rng.standard_normal((4, 3, 5))
    w, b = rng.standard_normal((2, 5)), rng.standard_normal(2)
    g = rng.standard_normal((3, 4, 2))
    xt, wt, bt = (mg.tensor(a, requires_grad=True) for a in (x, w, b))
    out = F.linear(xt.transpose(1, 0, 2), wt, bt)                      # (3, 4, 2)
    out.backward(mg.tensor(g))
    xs = x.transpose(1, 0, 2)
    np.testing.assert_allclose(out.numpy(), xs @ w.T + b, rtol=1e-12)
    np.testing.assert_allclose(xt.grad.numpy(), (g @ w).transpose(1, 0, 2), rtol=1e-12)
    np.testing.assert_allclose(wt.grad.numpy(), np.einsum("tbo,tbi->oi", g, xs), rtol=1e-12)
    np.testing.assert_allclose(bt.grad.numpy(), g.sum(axis=(0, 1)), rtol=1e-12)


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 2, 3)])
def test_linear_second_order_matches_unfused(shape, rng):
    x = f64(rng.standard_normal(shape))
    w = f64(rng.standard_normal((4, 3)))
    b = f64(rng.standard_normal(4))

    def second_order(fn):
        loss = (fn(x, w, b) ** 3).sum()
        gx, gw = mg.grad(loss, [x, w], create_graph=True)
        return [g.numpy() for g in mg.grad((gx * gx).sum() + (gw * gw).sum(), [x, w, b])]

    fused = second_order(F.linear)
    unfused = second_order(lambda x, w, b: x @ w.T + b)
    for a, e in zip(fused, unfused):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)


def test_linear_bad_shapes():
    with pytest.raises(ValueError, match="linear: input shape \\(2, 3\\)"):
        nn.Linear(4, 2)(mg.zeros(2, 3))
    with pytest.raises(ValueError, match="linear: bias shape"):
        F.linear(mg.zeros(2, 3), mg.zeros(2, 3), mg.zeros(3))


def test_linear_init_is_uniform_with_bound_one_over_sqrt_fan_in():
    mg.manual_seed(1)
    layer = nn.Linear(256, 128)
    bound = 1 / math.sqrt(256)
    w, b = layer.weight.numpy(), layer.bias.numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # U(−a, a) has standard deviation a/√3
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound
    assert abs(w.mean()) < 0.02 * bound
    assert w.dtype == np.float32


def test_reset_parameters_is_reproducible_after_manual_seed():
    mg.manual_seed(7)
    a = nn.Sequential(nn.Linear(3, 4), nn.Embedding(6, 2))
    mg.manual_seed(7)
    b = nn.Sequential(nn.Linear(3, 4), nn.Embedding(6, 2))
    for (_, pa), (_, pb) in zip(a.state_dict().items(), b.state_dict().items()):
        np.testing.assert_array_equal(pa, pb)
    before = a[0].weight.numpy().copy()
    a[0].reset_parameters()
    assert not np.array_equal(before, a[0].weight.numpy())


# -- Embedding ----------------------------------------------------------------------------

def test_embedding_forward_and_scatter_gradient(rng):
    emb = nn.Embedding(6, 3)
    idx = np.array([[0, 5, 2], [2, 2, 1]])
    out = emb(mg.tensor(idx))
    weight = emb.weight.numpy()
    np.testing.assert_array_equal(out.numpy(), weight[idx])
    upstream = rng.standard_normal((2, 3, 3)).astype(np.float32)
    (out * mg.tensor(upstream)).sum().backward()
    expected = np.zeros((6, 3), dtype=np.float32)
    for pos in np.ndindex(idx.shape):                 # repeated rows accumulate
        expected[idx[pos]] += upstream[pos]
    np.testing.assert_allclose(emb.weight.grad.numpy(), expected, rtol=1e-6)


def test_embedding_init_is_standard_normal_with_zero_padding_row():
    mg.manual_seed(2)
    emb = nn.Embedding(2000, 16, padding_idx=-1)
    assert emb.padding_idx == 1999
    w = emb.weight.numpy()
    np.testing.assert_array_equal(w[1999], 0.0)
    assert abs(w[:-1].mean()) < 0.02 and abs(w[:-1].std() - 1.0) < 0.02


def test_embedding_padding_row_gets_no_gradient(rng):
    emb = nn.Embedding(4, 2, padding_idx=0)
    with mg.no_grad():
        emb.weight.data = emb.weight.data + 1.0      # the padding row is still looked up
    idx = np.array([[0, 1, 0, 3]])
    out = emb(idx)
    np.testing.assert_array_equal(out.numpy(), emb.weight.numpy()[idx])
    (out * 2.0).sum().backward()
    grad = emb.weight.grad.numpy()
    np.testing.assert_array_equal(grad[0], 0.0)
    np.testing.assert_array_equal(grad[1], 2.0)
    np.testing.assert_array_equal(grad[2], 0.0)
    np.testing.assert_array_equal(grad[3], 2.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_from_pretrained_copies_the_table_and_freezes_it(dtype):
    table = np.arange(12.0).reshape(4, 3).astype(dtype)
    emb = nn.Embedding.from_pretrained(table)
    assert emb.weight.dtype == dtype and not emb.weight.requires_grad
    assert (emb.num_embeddings, emb.embedding_dim) == (4, 3)
    np.testing.assert_array_equal(emb(np.array([[3, 0]])).numpy(), table[[[3, 0]]])
    table[0, 0] = 100.0                                   # a copy: the layer does not see it
    assert emb.weight.numpy()[0, 0] == 0.0
    trainable = nn.Embedding.from_pretrained(mg.tensor(table), freeze=False, padding_idx=1)
    np.testing.assert_array_equal(trainable.weight.numpy()[1], table[1])   # kept as given
    (trainable(np.array([1, 2, 2])) * 2.0).sum().backward()
    np.testing.assert_array_equal(trainable.weight.grad.numpy(),
                                  [[0, 0, 0], [0, 0, 0], [4, 4, 4], [0, 0, 0]])
    with pytest.raises(ValueError, match="from_pretrained: embeddings must be 2-D"):
        nn.Embedding.from_pretrained(np.zeros(3))
    with pytest.raises(TypeError, match="from_pretrained: embeddings must be floating"):
        nn.Embedding.from_pretrained(np.zeros((2, 2), dtype=np.int64))


def test_embedding_bad_indices():
    emb = nn.Embedding(4, 2)
    with pytest.raises(ValueError, match="embedding: indices must lie in \\[0, 4\\)"):
        emb(np.array([1, 4]))
    with pytest.raises(ValueError, match="embedding"):
        emb(np.array([-1]))
    with pytest.raises(TypeError, match="embedding: indices must be integers"):
        emb(mg.tensor([0.0, 1.0]))


def test_embedding_gradcheck():
    # without padding_idx: the padding row's gradient is cut on purpose, unlike the true one
    emb = nn.Embedding(5, 3).double()
    idx = np.array([[1, 2, 1], [4, 0, 2]])
    assert mg.gradcheck(lambda w: F.embedding(idx, w), [emb.weight])


# -- LayerNorm ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, normalized", [((2, 3, 5), 5), ((2, 3, 4), (3, 4)),
                                               ((6,), 6)])
def test_layer_norm_forward_matches_numpy(shape, normalized, rng):
    layer = nn.LayerNorm(normalized)
    n_axes = 1 if isinstance(normalized, int) else len(normalized)
    with mg.no_grad():        # non-trivial affine parameters
        layer.weight.data = rng.standard_normal(layer.weight.shape).astype(np.float32)
        layer.bias.data = rng.standard_normal(layer.bias.shape).astype(np.float32)
    x = (rng.standard_normal(shape) * 3 + 2).astype(np.float32)
    expected = layer_norm_numpy(x.astype(np.float64), n_axes, layer.weight.numpy(),
                                layer.bias.numpy())
    np.testing.assert_allclose(layer(mg.tensor(x)).numpy(), expected, rtol=1e-4, atol=1e-5)


def test_layer_norm_defaults():
    layer = nn.LayerNorm(4)
    np.testing.assert_array_equal(layer.weight.numpy(), np.ones(4))
    np.testing.assert_array_equal(layer.bias.numpy(), np.zeros(4))
    assert layer.eps == 1e-5
    plain = nn.LayerNorm((2, 2), elementwise_affine=False)
    assert list(plain.parameters()) == []
    x = np.arange(8.0).reshape(2, 2, 2)
    np.testing.assert_allclose(plain(f64(x, False)).numpy(), layer_norm_numpy(x, 2))


def test_layer_norm_fused_matches_unfused_forward_and_gradients(rng):
    x = f64(rng.standard_normal((2, 3, 4)))
    w = f64(rng.standard_normal(4))
    b = f64(rng.standard_normal(4))
    upstream = mg.tensor(rng.standard_normal((2, 3, 4)))
    fused = F.layer_norm(x, 4, w, b)
    unfused = layer_norm_composed(x, 1, w, b)
    np.testing.assert_allclose(fused.numpy(), unfused.numpy(), rtol=1e-12, atol=1e-12)
    g_fused = mg.grad((fused * upstream).sum(), [x, w, b])
    g_unfused = mg.grad((unfused * upstream).sum(), [x, w, b])
    for a, e in zip(g_fused, g_unfused):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-10, atol=1e-12)
    assert fused._fn is not None and type(fused._fn).__name__ == "LayerNorm"   # one node


@pytest.mark.parametrize("normalized, shape", [(4, (3, 4)), ((2, 3), (2, 2, 3))])
def test_layer_norm_gradcheck(normalized, shape, rng):
    layer = nn.LayerNorm(normalized).double()
    with mg.no_grad():
        layer.weight.data = rng.standard_normal(layer.weight.shape)
        layer.bias.data = rng.standard_normal(layer.bias.shape)
    x = f64(rng.standard_normal(shape))
    assert mg.gradcheck(lambda x, w, b: F.layer_norm(x, normalized, w, b),
                        [x, layer.weight, layer.bias])


@pytest.mark.parametrize("use_weight, use_bias", [(True, False), (False, True), (False, False)])
def test_layer_norm_without_some_affine_parameters(use_weight, use_bias, rng):
    x = f64(rng.standard_normal((3, 4)))
    w = f64(rng.standard_normal(4)) if use_weight else None
    b = f64(rng.standard_normal(4)) if use_bias else None
    expected = layer_norm_numpy(x.numpy(), 1, None if w is None else w.numpy(),
                                None if b is None else b.numpy())
    np.testing.assert_allclose(F.layer_norm(x, 4, w, b).numpy(), expected, rtol=1e-12)
    inputs = [x] + [t for t in (w, b) if t is not None]

    def fn(x, *affine):
        rest = list(affine)
        return F.layer_norm(x, 4, rest.pop(0) if use_weight else None,
                            rest.pop(0) if use_bias else None)

    assert mg.gradcheck(fn, inputs)
    if not use_weight and not use_bias:
        assert list(nn.LayerNorm(4, elementwise_affine=False).parameters()) == []
    assert (nn.LayerNorm(4, bias=use_bias).bias is None) == (not use_bias)


def test_layer_norm_second_order(rng):
    x = f64(rng.standard_normal((2, 5)))
    w = f64(rng.standard_normal(5))
    b = f64(rng.standard_normal(5))
    v = mg.tensor(rng.standard_normal((2, 5)))

    def grad_of_x(fn):
        def first(x, w, b):
            loss = (fn(x, w, b) ** 2 * v).sum()
            return mg.grad(loss, x, create_graph=True)[0]
        return first

    fused = grad_of_x(lambda x, w, b: F.layer_norm(x, 5, w, b))
    unfused = grad_of_x(lambda x, w, b: layer_norm_composed(x, 1, w, b))
    # the first-order gradient itself is differentiable: gradcheck it
    assert mg.gradcheck(fused, [x, w, b])
    # and its derivatives agree with those of the unfused composition
    u = mg.tensor(rng.standard_normal((2, 5)))
    a = mg.grad((fused(x, w, b) * u).sum(), [x, w, b])
    e = mg.grad((unfused(x, w, b) * u).sum(), [x, w, b])
    for ga, ge in zip(a, e):
        np.testing.assert_allclose(ga.numpy(), ge.numpy(), rtol=1e-9, atol=1e-11)


def test_layer_norm_shape_errors():
    with pytest.raises(ValueError, match="layer_norm: input shape \\(2, 3\\)"):
        nn.LayerNorm(4)(mg.zeros(2, 3))


@pytest.mark.parametrize("norm", [F.layer_norm, F.rms_norm], ids=["layer_norm", "rms_norm"])
@pytest.mark.parametrize("shape", [(), (1,)])
def test_norm_eps_refuses_a_tensor_whose_gradient_would_be_lost(norm, shape, rng):
    x = f64(rng.standard_normal((2, 3)))
    with pytest.raises(TypeError, match=f"{norm.__name__}: eps .* requires grad"):
        norm(x, 3, eps=f64(np.full(shape, 0.5)))
    if shape == ():                        # a constant 0-d tensor converts, as in PyTorch
        np.testing.assert_array_equal(norm(x, 3, eps=f64(np.array(0.5), False)).numpy(),
                                      norm(x, 3, eps=0.5).numpy())


# -- Dropout and activations ----------------------------------------------------------------

def test_dropout_train_and_eval():
    mg.manual_seed(3)
    layer = nn.Dropout(0.25)
    x = mg.ones(200, 50)
    y = layer(x).numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    assert abs(kept.mean() - 0.75) < 0.01
    layer.eval()
    assert layer(x) is x
    with pytest.raises(ValueError, match="Dropout"):
        nn.Dropout(1.5)


@pytest.mark.parametrize("shape", [(4, 6, 5), (6, 5), (1, 1, 1)])
def test_dropout1d_zeroes_whole_channels_as_pytorch_does(shape, rng):
    x = mg.tensor(rng.uniform(0.5, 2.0, size=shape), requires_grad=True)
    layer = nn.Dropout1d(0.5)
    mg.manual_seed(2)
    y = layer(x)
    ratio = y.numpy() / x.numpy()                    # (N, C, L) or (C, L): one draw per channel
    np.testing.assert_array_equal(ratio, np.broadcast_to(ratio[..., :1], shape))
    assert set(np.unique(ratio)) <= {0.0, 2.0}
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), ratio)
    np.testing.assert_array_equal(layer.eval()(x).numpy(), x.numpy())
    assert repr(layer) == "Dropout1d(p=0.5)"
    with pytest.raises(ValueError, match=r"dropout1d: input must be \(N, C, L\) or \(C, L\), "
                                         r"got shape \(2, 3, 4, 5\)"):
        nn.Dropout1d(0.5).train()(mg.ones(2, 3, 4, 5))


def test_dropout_is_reproducible():
    x = mg.ones(10, 10)
    mg.manual_seed(5)
    a = nn.Dropout(0.5)(x).numpy()
    mg.manual_seed(5)
    b = nn.Dropout(0.5)(x).numpy()
    np.testing.assert_array_equal(a, b)


def test_activation_modules_match_numpy(rng):
    x = rng.standard_normal((3, 4))
    t = f64(x, False)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(nn.ReLU()(t).numpy(), np.maximum(x, 0))
    np.testing.assert_allclose(nn.Tanh()(t).numpy(), np.tanh(x))
    np.testing.assert_allclose(nn.Sigmoid()(t).numpy(), 1 / (1 + np.exp(-x)))
    np.testing.assert_allclose(nn.GELU()(t).numpy(), x * 0.5 * (1 + erf(x / math.sqrt(2))),
                               rtol=1e-10)
    tanh_form = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(nn.GELU("tanh")(t).numpy(), tanh_form, rtol=1e-10)
    with pytest.raises(ValueError, match="GELU"):
        nn.GELU("fast")


# -- initialisers -------------------------------------------------------------------------

def test_calculate_gain():
    assert nn.init.calculate_gain("linear") == 1.0
    assert nn.init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert nn.init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.init.calculate_gain("swish")


def test_initialisers_have_the_right_spread():
    mg.manual_seed(4)
    fan_out, fan_in = 300, 200
    w = nn.Parameter(np.zeros((fan_out, fan_in), dtype=np.float32))
    assert nn.init.xavier_uniform_(w) is w
    bound = math.sqrt(6 / (fan_in + fan_out))
    assert np.abs(w.numpy()).max() <= bound and w.dtype == np.float32
    nn.init.xavier_normal_(w, gain=2.0)
    assert w.numpy().std() == pytest.approx(2 * math.sqrt(2 / (fan_in + fan_out)), rel=0.02)
    nn.init.kaiming_normal_(w, nonlinearity="relu")
    assert w.numpy().std() == pytest.approx(math.sqrt(2 / fan_in), rel=0.02)
    nn.init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu")
    assert np.abs(w.numpy()).max() <= math.sqrt(6 / fan_out)
    assert w.numpy().std() == pytest.approx(math.sqrt(2 / fan_out), rel=0.02)
    nn.init.normal_(w, mean=3.0, std=0.5)
    assert w.numpy().mean() == pytest.approx(3.0, abs=0.01)
    nn.init.trunc_normal_(w, std=1.0, a=-1.0, b=1.0)
    assert np.abs(w.numpy()).max() <= 1.0
    nn.init.constant_(w, 0.5)
    np.testing.assert_array_equal(w.numpy(), 0.5)
    nn.init.zeros_(w)
    np.testing.assert_array_equal(w.numpy(), 0.0)
    with pytest.raises(ValueError, match="fan"):
        nn.init.xavier_uniform_(nn.Parameter(np.zeros(3)))


# -- optional parity with PyTorch ---------------------------------------------------------

def test_linear_and_layer_norm_match_torch(rng):
    torch = pytest.importorskip("torch")
    ours = nn.Sequential(nn.Linear(4, 3), nn.LayerNorm(3))
    with mg.no_grad():
        ours[1].weight.data = rng.standard_normal(3).astype(np.float32)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.LayerNorm(3))
    theirs.load_state_dict({k: torch.from_numpy(v) for k, v in ours.state_dict().items()})
    x = rng.standard_normal((2, 5, 4)).astype(np.float32)
    expected = theirs(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(ours(mg.tensor(x)).numpy(), expected, rtol=1e-5, atol=1e-5)


# -- activation and dropout modules: gradients ---------------------------------------------

@pytest.mark.parametrize("module", [nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.GELU(),
                                    nn.GELU("tanh"), nn.Identity()],
                         ids=["relu", "tanh", "sigmoid", "gelu", "gelu-tanh", "identity"])
def test_activation_modules_gradcheck(module, rng):
    x = rng.standard_normal((3, 4))
    x[np.abs(x) < 0.05] = 0.5                  # keep ReLU's kink away from the differences
    assert mg.gradcheck(module, [f64(x)])


def test_dropout_gradient_is_the_kept_mask_scaled(rng):
    """y = x ⊙ m / (1 − p) with m the kept positions, so ∂L/∂x = g ⊙ m / (1 − p)."""
    mg.manual_seed(9)
    x = f64(rng.standard_normal((20, 30)))
    y = nn.Dropout(0.4)(x)
    g = rng.standard_normal((20, 30))
    (y * mg.tensor(g)).sum().backward()
    kept = y.numpy() != 0
    assert 0.5 < kept.mean() < 0.7
    np.testing.assert_allclose(y.numpy(), np.where(kept, x.numpy() / 0.6, 0.0), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, g / 0.6, 0.0), rtol=1e-12)


# -- default initialisation: the distributions PyTorch uses ------------------------------------

def _uniform_spread(values, bound):
    """Samples of U(−bound, bound): all inside, reaching near the edge, std ≈ bound/√3."""
    values = np.asarray(values, dtype=np.float64)
    assert np.abs(values).max() <= bound * (1 + 1e-6)
    assert np.abs(values).max() > 0.97 * bound
    assert values.std() == pytest.approx(bound / math.sqrt(3), rel=0.05)


def test_attention_and_transformer_defaults_follow_pytorch():
    """MultiHeadAttention draws q, k, v from the Xavier bound of PyTorch's packed (3E, E)
    matrix, √(6 / 4E); nn.Transformer re-draws every other weight matrix Xavier-uniform."""
    mg.manual_seed(12)
    E, F = 64, 256
    mha = nn.MultiHeadAttention(E, 4)
    for name in ("q_proj", "k_proj", "v_proj"):
        _uniform_spread(getattr(mha, name).weight.numpy(), math.sqrt(6 / (4 * E)))
    _uniform_spread(mha.out_proj.weight.numpy(), 1 / math.sqrt(E))   # nn.Linear's default
    for proj in (mha.q_proj, mha.k_proj, mha.v_proj, mha.out_proj):
        np.testing.assert_array_equal(proj.bias.numpy(), 0.0)

    model = nn.Transformer(E, 4, 1, 1, F, dropout=0.0)
    sd = model.state_dict()
    layer = "decoder.layers.0."
    _uniform_spread(sd[layer + "multihead_attn.k_proj.weight"], math.sqrt(6 / (4 * E)))
    _uniform_spread(sd[layer + "multihead_attn.out_proj.weight"], math.sqrt(6 / (2 * E)))
    _uniform_spread(sd[layer + "linear1.weight"], math.sqrt(6 / (E + F)))
    _uniform_spread(sd[layer + "linear1.bias"], 1 / math.sqrt(E))          # biases: nn.Linear's
    np.testing.assert_array_equal(sd[layer + "norm3.weight"], 1.0)


def _torch_name(name):
    """Our parameter name -> (PyTorch name, rows) for PyTorch's packed in_proj tensors."""
    for i, p in enumerate("qkv"):
        for kind in ("weight", "bias"):
            suffix = f"{p}_proj.{kind}"
            if name.endswith(suffix):
                return name[:-len(suffix)] + f"in_proj_{kind}", i
    return name, None


INIT_PAIRS = {
    "Linear": lambda lib: lib.Linear(256, 2048),
    "Embedding": lambda lib: lib.Embedding(512, 16),
    "LayerNorm": lambda lib: lib.LayerNorm(32),
    "GRUCell": lambda lib: lib.GRUCell(16, 512),
    "GRU": lambda lib: lib.GRU(16, 512, num_layers=2, batch_first=True),
    "LSTMCell": lambda lib: lib.LSTMCell(16, 256),
    "LSTM": lambda lib: lib.LSTM(16, 256, batch_first=True),
    "MultiHeadAttention": lambda lib: (lib.MultiHeadAttention(256, 4) if lib is nn else
                                       lib.MultiheadAttention(256, 4, batch_first=True)),
    "TransformerEncoderLayer": lambda lib: (
        lib.TransformerEncoderLayer(64, 4, 1024) if lib is nn else
        lib.TransformerEncoderLayer(64, 4, 1024, batch_first=True)),
    "Transformer": lambda lib: (
        lib.Transformer(64, 4, 1, 1, 1024) if lib is nn else
        lib.Transformer(64, 4, 1, 1, 1024, batch_first=True)),
}


@pytest.mark.parametrize("kind", INIT_PAIRS)
def test_default_initialisation_matches_torch(kind):
    """Each parameter's initial distribution matches PyTorch's: constants exactly, random
    ones in spread (std within sampling error) and family (uniform vs normal: max/std)."""
    torch = pytest.importorskip("torch")
    mg.manual_seed(0)
    torch.manual_seed(0)
    ours = INIT_PAIRS[kind](nn).state_dict()
    theirs = {k: v.detach().double().numpy() for k, v in INIT_PAIRS[kind](torch.nn)
              .state_dict().items()}
    for name, value in ours.items():
        torch_name, part = _torch_name(name)
        expected = theirs[torch_name]
        if part is not None:
            expected = np.split(expected, 3)[part]
        assert value.shape == expected.shape, name
        value = value.astype(np.float64)
        if expected.std() == 0:
            np.testing.assert_array_equal(value, expected, err_msg=name)
            continue
        # the std of n samples is known to about 1/√n (relative): allow 4 of those
        tolerance = 4 / math.sqrt(value.size) + 0.01
        assert value.std() == pytest.approx(expected.std(), rel=tolerance), name
        if value.size >= 1000:
            shape_ratio = np.abs(value).max() / value.std()
            assert shape_ratio == pytest.approx(np.abs(expected).max() / expected.std(),
                                                rel=0.1), name


@pytest.mark.parametrize("shape, dim, sizes", [((4, 6), 1, (3, 2)), ((2, 6, 5), -2, (2, -1)),
                                               ((1,), 0, (1, 1)), ((6,), 0, (2, 3))])
def test_unflatten_inverts_flatten(shape, dim, sizes):
    a = np.arange(float(np.prod(shape))).reshape(shape)
    unflatten = nn.Unflatten(dim, sizes)
    out = unflatten(f64(a))
    axis = dim % len(shape)
    np.testing.assert_array_equal(out.numpy(),
                                  a.reshape(shape[:axis] + tuple(sizes) + shape[axis + 1:]))
    flatten = nn.Flatten(axis, axis + len(sizes) - 1)
    np.testing.assert_array_equal(flatten(out).numpy(), a)
    assert repr(unflatten) == f"Unflatten(dim={dim}, unflattened_size={tuple(sizes)})"


def interpolate_numpy(a, out, ratio, mode, align_corners=False):
    """One spatial axis (the last) resampled from the definitions, with loops."""
    n = a.shape[-1]
    y = np.empty(a.shape[:-1] + (out,))
    for o in range(out):
        if mode == "nearest":
            y[..., o] = a[..., min(int(np.floor(o * ratio)), n - 1)]
        elif mode == "nearest-exact":
            y[..., o] = a[..., min(int(np.floor((o + 0.5) * ratio)), n - 1)]
        else:
            p = (o * (n - 1) / (out - 1) if out > 1 else 0.0) if align_corners else \
                max((o + 0.5) * ratio - 0.5, 0.0)
            i = min(int(np.floor(p)), n - 1)
            j, w = min(i + 1, n - 1), p - i
            y[..., o] = a[..., i] * (1 - w) + a[..., j] * w
    return y


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "linear"])
@pytest.mark.parametrize("shape", [(2, 3, 5), (1, 1, 1), (1, 2, 4)])
def test_interpolate_one_axis_against_numpy_and_gradcheck(mode, shape):
    a = np.random.default_rng(len(shape) + shape[-1]).normal(size=shape)
    n = shape[-1]
    for kwargs, out, ratio in ((dict(size=7), 7, n / 7), (dict(scale_factor=1.7),
                                                          int(n * 1.7), 1 / 1.7),
                               (dict(scale_factor=2.5, recompute_scale_factor=True),
                                int(n * 2.5), n / int(n * 2.5))):
        corners = [False, True] if mode == "linear" else [None]
        for align in corners:
            got = F.interpolate(f64(a), mode=mode, align_corners=align, **kwargs)
            np.testing.assert_allclose(got.numpy(), interpolate_numpy(a, out, ratio, mode,
                                                                      bool(align)),
                                       rtol=1e-12, atol=1e-12)
    assert mg.gradcheck(lambda x: F.interpolate(x, size=6, mode=mode), [f64(a)])


def test_interpolate_two_axes_is_one_axis_then_the_other_and_upsample_keeps_it():
    a = np.random.default_rng(17).normal(size=(1, 2, 3, 4))
    got = F.interpolate(f64(a), size=(5, 7), mode="bilinear")
    rows = interpolate_numpy(np.swapaxes(a, -1, -2), 5, 3 / 5, "linear")
    expected = interpolate_numpy(np.swapaxes(rows, -1, -2), 7, 4 / 7, "linear")
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)
    up = nn.Upsample(scale_factor=2, mode="nearest")
    np.testing.assert_array_equal(up(f64(a)).numpy(), a.repeat(2, axis=-2).repeat(2, axis=-1))
    assert repr(up) == "Upsample(scale_factor=2, mode='nearest')"
    with pytest.raises(ValueError, match="interpolate: mode 'bilinear' for an input of 1"):
        F.interpolate(mg.ones(1, 1, 4), size=3, mode="bilinear")
    with pytest.raises(ValueError, match="give one of size and scale_factor"):
        F.interpolate(mg.ones(1, 1, 4))
    with pytest.raises(ValueError, match="align_corners goes with the linear modes only"):
        F.interpolate(mg.ones(1, 1, 4), size=3, align_corners=True)


def test_interpolate_against_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(18)
    for shape, mode in (((2, 3, 5), "linear"), ((1, 2, 4, 6), "bilinear"),
                        ((1, 2, 4, 6), "nearest"), ((2, 1, 5), "nearest-exact")):
        for kwargs in (dict(scale_factor=1.7), dict(scale_factor=0.6),
                       dict(size=8 if len(shape) == 3 else (7, 9))):
            for align in ([None, True] if "linear" in mode else [None]):
                a = rng.normal(size=shape)
                x, t = f64(a), torch.tensor(a, requires_grad=True)
                y = F.interpolate(x, mode=mode, align_corners=align, **kwargs)
                expected = torch.nn.functional.interpolate(t, mode=mode, align_corners=align,
                                                           **kwargs)
                np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), rtol=1e-12,
                                           atol=1e-12)
                g = rng.normal(size=y.shape)
                y.backward(mg.tensor(g))
                expected.backward(torch.tensor(g))
                np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12,
                                           atol=1e-12)
