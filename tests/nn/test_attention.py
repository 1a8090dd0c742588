"""Attention: the functional kernel, the scoring variants, location-aware attention, hard
attention, multi-head attention and the location-based decoder step, against NumPy references
written from the equations."""

import math

import numpy as np
import pytest

import minigrad as mg
import nn
import nn.functional as F
from tests.nn import seq_reference as ref


def _f64(rng, *shape, requires_grad=True):
    return mg.tensor(rng.standard_normal(shape), dtype=np.float64, requires_grad=requires_grad)


# -- scaled_dot_product_attention and masks ------------------------------------------------------

def test_sdpa_matches_numpy_with_head_axes_and_mask(rng):
    q, k, v = _f64(rng, 2, 3, 4, 5), _f64(rng, 2, 3, 6, 5), _f64(rng, 2, 3, 6, 7)
    mask = rng.random((2, 1, 4, 6)) < 0.7
    out, w = F.scaled_dot_product_attention(q, k, v, mask)
    ref_out, ref_w = ref.attention(q.numpy(), k.numpy(), v.numpy(), mask)
    assert out.shape == (2, 3, 4, 7) and w.shape == (2, 3, 4, 6)
    np.testing.assert_allclose(out.numpy(), ref_out, atol=1e-12)
    np.testing.assert_allclose(w.numpy(), ref_w, atol=1e-12)
    assert np.all(w.numpy()[np.broadcast_to(~mask, w.shape)] == 0.0)
    # an explicit scale replaces 1/√D
    out2, _ = F.scaled_dot_product_attention(q, k, v, scale=0.3)
    np.testing.assert_allclose(out2.numpy(), ref.attention(q.numpy(), k.numpy(), v.numpy(),
                                                           scale=0.3)[0], atol=1e-12)


def test_sdpa_gradcheck_with_mask(rng):
    q, k, v = _f64(rng, 2, 2, 3), _f64(rng, 2, 3, 3), _f64(rng, 2, 3, 2)
    mask = mg.tensor(np.array([[True, False, True], [True, True, False]]))   # (Lq, Lk)
    assert mg.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask)[0],
                        (q, k, v))


def test_sdpa_with_no_keys_or_no_features_is_a_clear_error_or_uniform():
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: no keys .*Lk = 0"):
        F.scaled_dot_product_attention(mg.zeros(1, 3, 4), mg.zeros(1, 0, 4), mg.zeros(1, 0, 2))
    with pytest.raises(ValueError, match=r"1/√D is undefined for D = 0.*pass scale="):
        F.scaled_dot_product_attention(mg.zeros(1, 3, 0), mg.zeros(1, 5, 0), mg.zeros(1, 5, 2))
    v = mg.tensor(np.arange(10.0).reshape(1, 5, 2))
    out, w = F.scaled_dot_product_attention(mg.zeros(1, 3, 0), mg.zeros(1, 5, 0), v, scale=1.0)
    np.testing.assert_allclose(w.numpy(), np.full((1, 3, 5), 0.2))     # every score is 0
    np.testing.assert_allclose(out.numpy(), np.broadcast_to(v.numpy().mean(1), (1, 3, 2)))
    out, w = F.scaled_dot_product_attention(mg.zeros(1, 0, 4), mg.zeros(1, 5, 4), v)
    assert out.shape == (1, 0, 2) and w.shape == (1, 0, 5)           # no query: nothing to do


def test_attention_weights_second_derivatives(rng):
    """create_graph through the fused AttentionWeights: gradients of gradients are right."""
    q, k = _f64(rng, 2, 3), _f64(rng, 4, 3)
    mask = np.array([[True, True, False, True], [False, True, True, True]])

    def grad_norm(q, k):
        w = F.attention_weights(q, k, mask)
        (g,) = mg.grad((w * w * mg.tensor(rng_fixed)).sum(), [q], create_graph=True)
        return (g * g).sum()
    rng_fixed = rng.standard_normal((2, 4))
    assert mg.gradcheck(grad_norm, (q, k))


def test_fully_masked_query_gives_zero_weights_output_and_gradient(rng):
    """Documented choice: a query with no allowed key attends to nothing (zeros, not NaN)."""
    q, k, v = _f64(rng, 1, 3, 4), _f64(rng, 1, 5, 4), _f64(rng, 1, 5, 2)
    mask = np.ones((1, 3, 5), dtype=bool)
    mask[0, 1] = False                                    # query 1 may look at nothing
    out, w = F.scaled_dot_product_attention(q, k, v, mask)
    np.testing.assert_array_equal(w.numpy()[0, 1], 0.0)
    np.testing.assert_array_equal(out.numpy()[0, 1], 0.0)
    (out * mg.tensor(rng.standard_normal(out.shape))).sum().backward()
    for t in (q, k, v):
        assert np.all(np.isfinite(t.grad.numpy()))
    np.testing.assert_array_equal(q.grad.numpy()[0, 1], 0.0)
    # the other queries are unaffected by the empty row
    ref_out, _ = ref.attention(q.numpy()[:, [0, 2]], k.numpy(), v.numpy())
    np.testing.assert_allclose(out.numpy()[:, [0, 2]], ref_out, atol=1e-12)


def test_sdpa_dropout_only_in_training_and_weights_before_dropout(rng):
    q, k, v = _f64(rng, 2, 4, 3), _f64(rng, 2, 6, 3), _f64(rng, 2, 6, 3)
    plain, w = F.scaled_dot_product_attention(q, k, v)
    evald, _ = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, training=False)
    np.testing.assert_array_equal(evald.numpy(), plain.numpy())
    mg.manual_seed(0)
    dropped, w_d = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, training=True)
    assert np.abs(dropped.numpy() - plain.numpy()).max() > 1e-3
    np.testing.assert_allclose(w_d.numpy().sum(-1), 1.0)


def _composed_attention(q, k, v, mask=None, keep_scaled=None):
    """softmax(q kᵀ/√D) v written from unfused primitives, optionally with a fixed dropout
    multiplier on the weights: the reference for the fused AttendValues."""
    scores = mg.matmul(q, k.swapaxes(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if mask is not None:
        scores = mg.masked_fill(scores, mg.tensor(~np.asarray(mask)), -math.inf)
    w = mg.softmax(scores, axis=-1)
    dropped = w if keep_scaled is None else w * mg.tensor(keep_scaled)
    return mg.matmul(dropped, v), w


def _assert_same_as_composition(fused, composed, leaves, rng):
    """The fused attention's (out, weights) equal the composition's, and so do the gradients
    a random ∂L/∂out sends to `leaves` through each."""
    (out, w), (ref_out, ref_w) = fused, composed
    np.testing.assert_allclose(out.numpy(), ref_out.numpy(), atol=1e-12)
    np.testing.assert_allclose(w.numpy(), ref_w.numpy(), atol=1e-12)
    g = mg.tensor(rng.standard_normal(out.shape))
    for a, b in zip(mg.grad((out * g).sum(), leaves), mg.grad((ref_out * g).sum(), leaves)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("masked", [False, True])
def test_sdpa_gradients_match_the_unfused_composition(rng, masked):
    """The fused backward (δ = ∂out·out) against the composition's, with broadcast batch axes,
    an all-masked query row, and a loss that also reads the weights."""
    q, k, v = _f64(rng, 2, 3, 4, 5), _f64(rng, 1, 3, 6, 5), _f64(rng, 2, 1, 6, 7)
    mask = None
    if masked:
        mask = rng.random((2, 1, 4, 6)) < 0.6
        mask[1, 0, 2] = False                                  # a query with no allowed key
    g_out, g_w = rng.standard_normal((2, 3, 4, 7)), rng.standard_normal((2, 3, 4, 6))
    for use_weights in (False, True):
        found = []
        for attend in (lambda: F.scaled_dot_product_attention(q, k, v, mask),
                       lambda: _composed_attention(q, k, v, mask)):
            out, w = attend()
            loss = (out * mg.tensor(g_out)).sum()
            if use_weights:
                loss = loss + (w * mg.tensor(g_w)).sum()
            found.append([g.numpy() for g in mg.grad(loss, [q, k, v])])
        for fused, composed in zip(*found):
            assert np.all(np.isfinite(fused))
            np.testing.assert_allclose(fused, composed, rtol=1e-10, atol=1e-12)


def test_sdpa_gradient_only_for_the_inputs_that_require_it(rng):
    q, k, v = _f64(rng, 3, 4), _f64(rng, 5, 4, requires_grad=False), _f64(rng, 5, 2)
    out, _ = F.scaled_dot_product_attention(q, k, v)
    gq, gv = mg.grad(out.sum(), [q, v])
    ref_q, ref_v = mg.grad(_composed_attention(q, k, v)[0].sum(), [q, v])
    np.testing.assert_allclose(gq.numpy(), ref_q.numpy(), atol=1e-12)
    np.testing.assert_allclose(gv.numpy(), ref_v.numpy(), atol=1e-12)
    v2 = _f64(rng, 5, 2, requires_grad=False)
    out, _ = F.scaled_dot_product_attention(q.detach(), k, _f64(rng, 5, 2))
    assert out.requires_grad
    out, _ = F.scaled_dot_product_attention(q.detach(), k, v2)
    assert not out.requires_grad


def test_sdpa_with_dropout_matches_the_composition_with_the_same_keep_mask(rng):
    """Training-mode dropout on the weights: the same keep mask as a Bernoulli(1 − p) draw
    after the same seed, and the fused gradients equal the composition's with that mask."""
    q, k, v = _f64(rng, 2, 4, 3), _f64(rng, 2, 6, 3), _f64(rng, 2, 6, 2)
    mask = rng.random((4, 6)) < 0.7
    p = 0.3
    mg.manual_seed(7)
    out, w = F.scaled_dot_product_attention(q, k, v, mask, dropout_p=p, training=True)
    mg.manual_seed(7)
    keep = mg.rand(2, 4, 6, dtype=np.float64).numpy() >= p
    keep_scaled = keep / (1.0 - p)
    ref_out, ref_w = _composed_attention(q, k, v, mask, keep_scaled)
    _assert_same_as_composition((out, w), (ref_out, ref_w), (q, k, v), rng)

    def with_fixed_mask(q, k, v):
        mg.manual_seed(7)                                     # the same keep mask every call
        return F.scaled_dot_product_attention(q, k, v, mask, dropout_p=p)[0]
    assert mg.gradcheck(with_fixed_mask, (q, k, v))


@pytest.mark.parametrize("p", [0.0, 0.4])
def test_sdpa_second_derivatives(rng, p):
    """create_graph through the fused AttendValues (with and without dropout): gradients of
    gradients pass gradcheck."""
    q, k, v = _f64(rng, 2, 3), _f64(rng, 4, 3), _f64(rng, 4, 2)
    mask = np.array([[True, True, False, True], [False, True, True, True]])
    g_out = mg.tensor(rng.standard_normal((2, 2)))

    def grad_norm(q, k, v):
        mg.manual_seed(3)
        out, _ = F.scaled_dot_product_attention(q, k, v, mask, dropout_p=p)
        gq, gk, gv = mg.grad((out * out * g_out).sum(), [q, k, v], create_graph=True)
        return (gq * gq).sum() + (gk * gv.sum()).sum() + (gv * gv).sum()
    assert mg.gradcheck(grad_norm, (q, k, v))


def _in_small_blocks(monkeypatch, block_bytes=2 * 6 * 8):
    """Make attention take the block-by-block path at any size: by default two query rows of
    six float64 keys a block; larger blocks hold whole (Lq, Lk) matrices."""
    import nn.attention_functional as attention
    monkeypatch.setattr(attention, "BLOCKED_ABOVE", 0)
    monkeypatch.setattr(attention, "BLOCK_BYTES", block_bytes)


@pytest.mark.parametrize("block_bytes", [96, 500, 1000],
                         ids=["rows of a matrix", "two matrices", "one batch entry"])
@pytest.mark.parametrize("case", ["plain", "causal, a masked row", "(B, 1, Lk) mask", "dropout",
                                  "broadcast batch axes"])
def test_sdpa_in_blocks_of_rows_matches_numpy_and_the_composition(case, block_bytes, rng,
                                                                  monkeypatch):
    """Large scores are made and differentiated a block at a time (rows of one (Lq, Lk) matrix,
    or whole matrices along a batch axis); forced onto that path, outputs, weights and
    gradients still match the NumPy reference and the unfused composition (masks broadcast
    from fewer axes, a query with no allowed key, dropout's keep mask, and batch axes that
    broadcast, which go in one piece)."""
    _in_small_blocks(monkeypatch, block_bytes)
    k_batch = (1, 3) if case == "broadcast batch axes" else (2, 3)
    q, k, v = _f64(rng, 2, 3, 5, 4), _f64(rng, *k_batch, 6, 4), _f64(rng, 2, 3, 6, 3)
    mask, keep_scaled, p = None, None, 0.0
    if case == "causal, a masked row":
        mask = np.tril(np.ones((5, 6), bool))
        mask[2] = False
    elif case == "(B, 1, Lk) mask":
        mask = np.array([[True] * 4 + [False] * 2, [True] * 6])[:, None, None, :]
    elif case == "dropout":
        p = 0.25
        mg.manual_seed(5)
        keep_scaled = (mg.rand(2, 3, 5, 6, dtype=np.float64).numpy() >= p) / (1 - p)
    mg.manual_seed(5)
    out, w = F.scaled_dot_product_attention(q, k, v, mask, dropout_p=p)
    ref_out, ref_w = _composed_attention(q, k, v, mask, keep_scaled)
    if keep_scaled is None:
        np.testing.assert_allclose(out.numpy(), ref.attention(q.numpy(), k.numpy(), v.numpy(),
                                                              mask)[0], atol=1e-12)
    _assert_same_as_composition((out, w), (ref_out, ref_w), (q, k, v), rng)


def test_sdpa_in_blocks_of_rows_gradcheck_and_on_a_device(rng, monkeypatch, sim_device):
    _in_small_blocks(monkeypatch)
    q, k, v = _f64(rng, 2, 5, 3), _f64(rng, 2, 4, 3), _f64(rng, 2, 4, 2)
    mask = np.array([[True, True, False, True]] * 4 + [[False] * 4])
    assert mg.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask)[0],
                        (q, k, v))
    results = []
    for device in ("cpu", sim_device):
        leaves = [mg.tensor(t.numpy().astype(np.float32), device=device, requires_grad=True)
                  for t in (q, k, v)]
        out, w = F.scaled_dot_product_attention(*leaves, mg.tensor(mask, device=device))
        (out * out).sum().backward()
        results.append([out.numpy(), w.numpy()] + [t.grad.numpy() for t in leaves])
    for host, sim in zip(*results):
        np.testing.assert_allclose(sim, host, rtol=1e-6, atol=1e-7)


def test_mask_errors_are_clear(rng):
    q = _f64(rng, 2, 3, 4)
    with pytest.raises(TypeError, match="scaled_dot_product_attention: mask must be bool"):
        F.scaled_dot_product_attention(q, q, q, np.ones((3, 3), dtype=int))   # float: added
    with pytest.raises(ValueError, match=r"mask of shape \(3, 2\) does not broadcast"):
        F.scaled_dot_product_attention(q, q, q, np.ones((3, 2), dtype=bool))
    with pytest.raises(ValueError, match="scaled_dot_product_attention: q .* do not fit"):
        F.scaled_dot_product_attention(q, _f64(rng, 2, 3, 5), q)
    out, w = F.scaled_dot_product_attention(q, q, q, dropout_p=1.0)    # every weight dropped
    np.testing.assert_array_equal(out.numpy(), 0.0)
    np.testing.assert_allclose(w.numpy().sum(-1), 1.0)
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match=r"scaled_dot_product_attention: dropout_p must "
                                             r"be in \[0, 1\], got"):
            F.scaled_dot_product_attention(q, q, q, dropout_p=p)


def test_causal_and_padding_masks():
    np.testing.assert_array_equal(nn.causal_mask(4).numpy(), np.tril(np.ones((4, 4), bool)))
    assert nn.causal_mask(3).dtype == np.bool_
    pad = nn.padding_mask([2, 4, 0], max_len=4).numpy()
    assert pad.shape == (3, 1, 4)
    np.testing.assert_array_equal(pad[:, 0], [[1, 1, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0]])
    with pytest.raises(ValueError, match="padding_mask: lengths must lie in"):
        nn.padding_mask([5], max_len=4)


# -- the scoring variants ------------------------------------------------------------------------

def _scores_numpy(layer, q, k):
    """Each variant's score from its equation."""
    if isinstance(layer, nn.DotProductAttention):
        return q @ k.swapaxes(-1, -2) / (np.sqrt(q.shape[-1]) if layer.scaled else 1.0)
    if isinstance(layer, nn.BilinearAttention):
        return np.einsum("bid,de,bje->bij", q, layer.weight.numpy(), k)
    if isinstance(layer, nn.AdditiveAttention):
        Wq, Wk, v = layer.w_q.weight.numpy(), layer.w_k.weight.numpy(), layer.v.weight.numpy()
        B, Lq, Lk = q.shape[0], q.shape[1], k.shape[1]
        s = np.zeros((B, Lq, Lk))
        for b in range(B):
            for i in range(Lq):
                for j in range(Lk):
                    s[b, i, j] = v[0] @ np.tanh(Wq @ q[b, i] + Wk @ k[b, j])
        return s
    if isinstance(layer, nn.RBFAttention):
        diff = q[:, :, None, :] - k[:, None, :, :]
        return -layer.gamma * (diff ** 2).sum(-1)
    raise AssertionError(type(layer))


SOFT_LAYERS = {
    "dot-scaled": lambda: nn.DotProductAttention(),
    "dot-unscaled": lambda: nn.DotProductAttention(scaled=False),
    "bilinear": lambda: nn.BilinearAttention(3, 4),
    "additive": lambda: nn.AdditiveAttention(3, 4, 5),
    "rbf": lambda: nn.RBFAttention(0.7),
}


def _qkv_for(layer, rng):
    Dk = 4 if isinstance(layer, (nn.BilinearAttention, nn.AdditiveAttention)) else 3
    return _f64(rng, 2, 3, 3), _f64(rng, 2, 4, Dk), _f64(rng, 2, 4, 2)


@pytest.mark.parametrize("kind", SOFT_LAYERS)
def test_soft_attention_matches_numpy(kind, rng):
    layer = SOFT_LAYERS[kind]().double()
    q, k, v = _qkv_for(layer, rng)
    mask = rng.random((2, 3, 4)) < 0.8
    ctx, w = layer(q, k, v, mask)
    expected_w = ref.softmax(np.where(mask, _scores_numpy(layer, q.numpy(), k.numpy()),
                                      -np.inf))
    np.testing.assert_allclose(w.numpy(), expected_w, atol=1e-12)
    np.testing.assert_allclose(ctx.numpy(), expected_w @ v.numpy(), atol=1e-12)


@pytest.mark.parametrize("kind", SOFT_LAYERS)
def test_c18_soft_attention_gives_gradient_to_queries_keys_and_values(kind, rng):
    """C18/C19: a softmax-weighted average is differentiable in q, k and v; each score
    function gradchecks."""
    layer = SOFT_LAYERS[kind]().double()
    q, k, v = _qkv_for(layer, rng)
    ctx, _ = layer(q, k, v)
    (ctx * mg.tensor(rng.standard_normal(ctx.shape))).sum().backward()
    for name, t in (("query", q), ("keys", k), ("values", v)):
        assert t.grad is not None and np.abs(t.grad.numpy()).max() > 1e-3, name
    assert mg.gradcheck(lambda q, k, v: layer(q, k, v)[0], (q, k, v))


@pytest.mark.parametrize("kind", ["bilinear", "additive"])
def test_scoring_parameters_gradcheck(kind, rng):
    layer = (nn.BilinearAttention(2, 3) if kind == "bilinear"
             else nn.AdditiveAttention(2, 3, 2)).double()
    q, k, v = (_f64(rng, 1, 2, 2, requires_grad=False), _f64(rng, 1, 3, 3, requires_grad=False),
               _f64(rng, 1, 3, 2, requires_grad=False))
    w = rng.standard_normal((1, 2, 2))
    ref.check_parameter_gradients(layer, lambda: (layer(q, k, v)[0] * w).sum())


def test_attention_shape_errors(rng):
    q = _f64(rng, 2, 3, 4)
    with pytest.raises(ValueError, match="DotProductAttention: query and keys must have the "
                                         "same feature size"):
        nn.DotProductAttention()(q, _f64(rng, 2, 5, 3), _f64(rng, 2, 5, 3))
    with pytest.raises(ValueError, match="RBFAttention: keys and values must have the same "
                                         "length"):
        nn.RBFAttention()(q, q, _f64(rng, 2, 2, 4))
    with pytest.raises(ValueError, match=r"BilinearAttention: expected query \(\.\.\., Lq, 3\)"):
        nn.BilinearAttention(3, 4)(q, q, q)


# -- hard attention ------------------------------------------------------------------------------

def test_c18_nearest_hard_attention_gradients_reach_values_only(rng):
    hard = nn.HardAttention("nearest")
    q, k, v = _f64(rng, 2, 3, 4), _f64(rng, 2, 5, 4), _f64(rng, 2, 5, 3)
    ctx, w = hard(q, k, v)
    best = np.argmax(q.numpy() @ k.numpy().swapaxes(-1, -2), axis=-1)       # (B, Lq)
    np.testing.assert_array_equal(w.numpy(), np.eye(5)[best])
    np.testing.assert_allclose(ctx.numpy(), np.take_along_axis(v.numpy(), best[..., None], 1))
    g = rng.standard_normal(ctx.shape)
    (ctx * mg.tensor(g)).sum().backward()
    # queries and keys: no gradient at all (exactly zero); values: Σ over queries that chose it
    assert q.grad is None and k.grad is None
    np.testing.assert_allclose(v.grad.numpy(), np.eye(5)[best].swapaxes(-1, -2) @ g)
    assert np.abs(v.grad.numpy()).max() > 0
    # and the true derivative is zero: nudging q or k does not move the output
    with mg.no_grad():
        for t in (q, k):
            nudged = mg.tensor(t.numpy() + 1e-6 * rng.standard_normal(t.shape))
            args = (nudged, k, v) if t is q else (q, nudged, v)
            np.testing.assert_array_equal(hard(*args)[0].numpy(), ctx.numpy())


def test_c18_exact_hard_attention_finds_nothing_at_random_init(rng):
    hard = nn.HardAttention("exact")
    q, k, v = _f64(rng, 2, 3, 4), _f64(rng, 2, 5, 4), _f64(rng, 2, 5, 3)
    ctx, w = hard(q, k, v)
    np.testing.assert_array_equal(ctx.numpy(), 0.0)
    np.testing.assert_array_equal(w.numpy(), 0.0)
    ctx.sum().backward()
    assert q.grad is None and k.grad is None
    np.testing.assert_array_equal(v.grad.numpy(), 0.0)       # nothing was retrieved


def test_exact_hard_attention_picks_the_matching_key(rng):
    keys = rng.standard_normal((1, 4, 3))
    query = keys[:, [2, 0]].copy()                  # query 0 equals key 2, query 1 equals key 0
    query[0, 1, 0] += 1e-9                          # ... almost: no match for query 1 now
    values = rng.standard_normal((1, 4, 2))
    ctx, w = nn.HardAttention("exact")(mg.tensor(query), mg.tensor(keys), mg.tensor(values))
    np.testing.assert_array_equal(w.numpy()[0], [[0, 0, 1, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(ctx.numpy()[0], [values[0, 2], [0, 0]])
    # a masked-out match is not found either
    mask = np.array([True, True, False, True])
    ctx_m, _ = nn.HardAttention("exact")(mg.tensor(query), mg.tensor(keys),
                                         mg.tensor(values), mask)
    np.testing.assert_array_equal(ctx_m.numpy(), 0.0)


def test_nearest_hard_attention_respects_mask(rng):
    q, k, v = _f64(rng, 1, 2, 3), _f64(rng, 1, 4, 3), _f64(rng, 1, 4, 2)
    mask = np.array([[[True, False, True, False], [False, False, False, False]]])
    ctx, w = nn.HardAttention("nearest")(q, k, v, mask)
    scores = np.where(mask, q.numpy() @ k.numpy().swapaxes(-1, -2), -np.inf)
    np.testing.assert_array_equal(w.numpy()[0, 0], np.eye(4)[np.argmax(scores[0, 0])])
    np.testing.assert_array_equal(w.numpy()[0, 1], 0.0)
    np.testing.assert_array_equal(ctx.numpy()[0, 1], 0.0)


# -- multi-head attention ------------------------------------------------------------------------

@pytest.mark.parametrize("mask_shape", [None, (3, 5), (2, 3, 5), (2, 1, 3, 5), (2, 2, 3, 5)])
def test_multi_head_attention_matches_numpy(mask_shape, rng):
    """C6: heads on learned projections, concatenated, then W_o; cross-attention Lq != Lk."""
    mha = nn.MultiHeadAttention(4, 2).double()
    query, kv = _f64(rng, 2, 3, 4), _f64(rng, 2, 5, 4)
    mask = None if mask_shape is None else rng.random(mask_shape) < 0.7
    out, w = mha(query, kv, kv, mask)
    ref_out, ref_w = ref.multi_head_attention(query.numpy(), kv.numpy(), kv.numpy(),
                                              mha.state_dict(), "", 2, mask)
    assert out.shape == (2, 3, 4) and w.shape == (2, 2, 3, 5)
    np.testing.assert_allclose(out.numpy(), ref_out, atol=1e-12)
    np.testing.assert_allclose(w.numpy(), ref_w, atol=1e-12)


def test_multi_head_attention_gradcheck(rng):
    mha = nn.MultiHeadAttention(4, 2).double()
    query, key, value = _f64(rng, 1, 2, 4), _f64(rng, 1, 3, 4), _f64(rng, 1, 3, 4)
    assert mg.gradcheck(lambda q, k, v: mha(q, k, v)[0], (query, key, value))
    x = _f64(rng, 1, 3, 4, requires_grad=False)
    w = rng.standard_normal((1, 3, 4))
    ref.check_parameter_gradients(mha, lambda: (mha(x, x, x, nn.causal_mask(3))[0] * w).sum())


def test_multi_head_attention_fully_masked_rows_keep_parameters_finite(rng):
    mha = nn.MultiHeadAttention(4, 2)
    x = mg.tensor(rng.standard_normal((2, 3, 4)).astype(np.float32))
    mask = nn.padding_mask([0, 2], max_len=3)           # sequence 0 has no valid key at all
    out, w = mha(x, x, x, mask)
    out.sum().backward()
    assert np.all(np.isfinite(out.numpy())) and np.all(w.numpy()[0] == 0)
    for name, p in mha.named_parameters():
        assert np.all(np.isfinite(p.grad.numpy())), name


def test_multi_head_attention_layout_and_errors():
    mha = nn.MultiHeadAttention(6, 3)
    assert [n for n, _ in mha.named_parameters()] == [
        f"{p}.{w}" for p in ("q_proj", "k_proj", "v_proj", "out_proj") for w in ("weight", "bias")]
    assert np.all(mha.q_proj.bias.numpy() == 0) and np.all(mha.out_proj.bias.numpy() == 0)
    with pytest.raises(ValueError, match="embed_dim 6 must be divisible by num_heads 4"):
        nn.MultiHeadAttention(6, 4)
    with pytest.raises(ValueError, match=r"MultiHeadAttention: expected query \(B, Lq, 6\)"):
        mha(mg.zeros(1, 2, 5), mg.zeros(1, 2, 6), mg.zeros(1, 2, 6))


@pytest.mark.parametrize("cls", [nn.MultiHeadAttention, nn.MultiheadAttention])
def test_pytorch_packed_projection_names_load(cls, rng):
    """in_proj_weight (3E, E) / in_proj_bias (3E): the q, k, v row blocks; q_proj_weight etc.
    when kdim or vdim differ; a packed name beside its targets, or one that does not split in
    three, is an error that changes nothing."""
    mha = cls(6, 2).double()
    w, b = rng.standard_normal((18, 6)), rng.standard_normal(18)
    out_w, out_b = rng.standard_normal((6, 6)), rng.standard_normal(6)
    mha.load_state_dict({"in_proj_weight": w, "in_proj_bias": mg.tensor(b),
                         "out_proj.weight": out_w, "out_proj.bias": out_b})
    for k, part in enumerate("qkv"):
        proj = getattr(mha, f"{part}_proj")
        np.testing.assert_array_equal(proj.weight.numpy(), w[6 * k:6 * (k + 1)])
        np.testing.assert_array_equal(proj.bias.numpy(), b[6 * k:6 * (k + 1)])
    before = {k: v.copy() for k, v in mha.state_dict().items()}
    both = {**mha.state_dict(), "in_proj_weight": w}
    with pytest.raises(RuntimeError, match="unexpected keys: in_proj_weight"):
        mha.load_state_dict(both)
    bad = {"in_proj_weight": rng.standard_normal((17, 6)), "in_proj_bias": b,
           "out_proj.weight": out_w, "out_proj.bias": out_b}
    with pytest.raises(RuntimeError, match="in_proj_weight"):
        mha.load_state_dict(bad)
    for k, v in mha.state_dict().items():
        np.testing.assert_array_equal(v, before[k])
    cross = cls(6, 2, kdim=4, vdim=5).double()
    ks, vs = rng.standard_normal((6, 4)), rng.standard_normal((6, 5))
    cross.load_state_dict({"q_proj_weight": w[:6], "k_proj_weight": ks, "v_proj_weight": vs,
                           "in_proj_bias": b, "out_proj.weight": out_w, "out_proj.bias": out_b})
    np.testing.assert_array_equal(cross.k_proj.weight.numpy(), ks)
    np.testing.assert_array_equal(cross.v_proj.weight.numpy(), vs)
    np.testing.assert_array_equal(cross.v_proj.bias.numpy(), b[12:])
    layer = nn.TransformerEncoderLayer(6, 2, 8, dropout=0.0)       # inside a model, by prefix
    state = {k: v for k, v in layer.state_dict().items() if ".q_proj." not in k and
             ".k_proj." not in k and ".v_proj." not in k}
    layer.load_state_dict({**state, "self_attn.in_proj_weight": w.astype(np.float32),
                           "self_attn.in_proj_bias": b.astype(np.float32)})
    np.testing.assert_array_equal(layer.self_attn.k_proj.weight.numpy(),
                                  w[6:12].astype(np.float32))


def test_multi_head_attention_pytorch_parity(rng):
    torch = pytest.importorskip("torch")
    mha = nn.MultiHeadAttention(8, 2).double()
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=True).double()
    sd = mha.state_dict()
    # PyTorch packs the three input projections into one (3E, E) matrix
    theirs.load_state_dict({
        "in_proj_weight": torch.tensor(np.concatenate([sd[f"{p}_proj.weight"] for p in "qkv"])),
        "in_proj_bias": torch.tensor(np.concatenate([sd[f"{p}_proj.bias"] for p in "qkv"])),
        "out_proj.weight": torch.tensor(sd["out_proj.weight"]),
        "out_proj.bias": torch.tensor(sd["out_proj.bias"])})
    q, kv = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 5, 8))
    allowed = rng.random((3, 5)) < 0.7
    allowed[:, 0] = True
    out, w = mha(mg.tensor(q), mg.tensor(kv), mg.tensor(kv), allowed)
    t_out, t_w = theirs(torch.tensor(q), torch.tensor(kv), torch.tensor(kv),
                        attn_mask=torch.tensor(~allowed), average_attn_weights=False)
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(w.numpy(), t_w.detach().numpy(), atol=1e-12)
    again = nn.MultiHeadAttention(8, 2).double()
    again.load_state_dict(theirs.state_dict())             # PyTorch's names and tensors
    for name, value in again.state_dict().items():
        np.testing.assert_array_equal(value, sd[name])


# -- location-aware attention (Chorowski et al. 2015) --------------------------------------------

def _location_numpy(layer, q, k, v, mask=None, prev=None):
    """Each step from the equations, with loops: f_{t,j,n} = Σ_i F[n, i] α_{t−1}[j + i − k//2]
    (zero outside 0..Lk−1), e_{t,j} = vᵀ tanh(W_q q_t + W_k k_j + W_f f_{t,j}), α_t the masked
    softmax of e_t; α_0 one-hot on position 0 unless given."""
    Wq, Wk, Wf = (layer.w_q.weight.numpy(), layer.w_k.weight.numpy(),
                  layer.w_f.weight.numpy())
    w, filters = layer.v.weight.numpy()[0], layer.filters.numpy()
    B, T, S = q.shape[0], q.shape[1], k.shape[1]
    n_filters, width = filters.shape
    alpha = np.zeros((B, S)) if prev is None else prev.copy()
    if prev is None:
        alpha[:, 0] = 1.0
    mask = np.ones((B, T, S), dtype=bool) if mask is None else np.broadcast_to(mask, (B, T, S))
    weights = np.zeros((B, T, S))
    for t in range(T):
        e = np.zeros((B, S))
        for b in range(B):
            for j in range(S):
                f = np.zeros(n_filters)
                for n in range(n_filters):
                    for i in range(width):
                        src = j + i - width // 2
                        if 0 <= src < S:
                            f[n] += filters[n, i] * alpha[b, src]
                e[b, j] = w @ np.tanh(Wq @ q[b, t] + Wk @ k[b, j] + Wf @ f)
        alpha = ref.softmax(np.where(mask[:, t], e, -np.inf))
        weights[:, t] = alpha
    return weights @ v, weights


def _location_layer(n_filters=2, width=3):
    return nn.LocationAwareAttention(3, 4, 5, n_filters=n_filters, kernel_size=width).double()


@pytest.mark.parametrize("B, T, S", [(2, 3, 5), (2, 1, 4), (2, 3, 1), (2, 1, 1), (1, 1, 1),
                                     (1, 2, 3)])
def test_location_aware_attention_matches_numpy_and_gradchecks(B, T, S, rng):
    layer = _location_layer()
    q, k, v = _f64(rng, B, T, 3), _f64(rng, B, S, 4), _f64(rng, B, S, 2)
    mask = rng.random((B, T, S)) < 0.8
    mask[:, :, 0] = True
    for kwargs in (dict(), dict(mask=mask), dict(prev=ref.softmax(rng.standard_normal((B, S))))):
        given = {**kwargs, "prev": mg.tensor(kwargs["prev"])} if "prev" in kwargs else kwargs
        ctx, w = layer(q, k, v, **given)
        ref_ctx, ref_w = _location_numpy(layer, q.numpy(), k.numpy(), v.numpy(), **kwargs)
        assert ctx.shape == (B, T, 2) and w.shape == (B, T, S)
        np.testing.assert_allclose(w.numpy(), ref_w, atol=1e-12)
        np.testing.assert_allclose(ctx.numpy(), ref_ctx, atol=1e-12)
    prev = mg.tensor(ref.softmax(rng.standard_normal((B, S))), requires_grad=True)
    assert mg.gradcheck(lambda q, k, v, prev: layer(q, k, v, mask, prev)[0], (q, k, v, prev))
    g = rng.standard_normal((B, T, 2))
    ref.check_parameter_gradients(
        layer, lambda: (layer(q.detach(), k.detach(), v.detach(), mask)[0] * g).sum())


def test_location_aware_attention_gradient_reaches_the_filters_through_every_step(rng):
    """α_t depends on all the earlier steps: a loss on the last step's context alone moves
    the filters and the first query."""
    layer = _location_layer(width=5)
    q, k, v = _f64(rng, 1, 4, 3), _f64(rng, 1, 6, 4), _f64(rng, 1, 6, 2)
    ctx, _ = layer(q, k, v)
    ctx[:, -1].sum().backward()
    assert np.abs(layer.filters.grad.numpy()).max() > 1e-6
    assert np.abs(q.grad.numpy()[0, 0]).max() > 1e-6


def test_location_aware_attention_step_by_step_equals_the_sequence(rng):
    layer = _location_layer()
    q, k, v = _f64(rng, 2, 4, 3), _f64(rng, 2, 5, 4), _f64(rng, 2, 5, 2)
    mask = rng.random((2, 4, 5)) < 0.7
    ctx, w = layer(q, k, v, mask)
    prev = layer.initial_weights(k)
    np.testing.assert_array_equal(prev.numpy(), np.eye(5)[[0, 0]])
    for t in range(4):
        c_t, prev = layer.step(q[:, t], k, v, prev, mask[:, t])
        np.testing.assert_allclose(prev.numpy(), w.numpy()[:, t], atol=1e-12)
        np.testing.assert_allclose(c_t.numpy(), ctx.numpy()[:, t], atol=1e-12)


@pytest.mark.parametrize("B, T, S", [(2, 4, 5), (1, 1, 1)])
def test_location_aware_attention_projected_keys_made_once_give_the_same_values_and_gradients(
        B, T, S, rng):
    """A decoder stepping one query at a time passes project_keys(keys), made once: the
    weights, the context and every parameter's gradient are those of the whole sequence."""
    layer = _location_layer()
    q, k, v = _f64(rng, B, T, 3), _f64(rng, B, S, 4), _f64(rng, B, S, 2)
    g = rng.standard_normal((B, T, 2))
    ctx, w = layer(q, k, v)
    (ctx * g).sum().backward()
    expected = {name: p.grad.numpy().copy() for name, p in layer.named_parameters()}
    layer.zero_grad()
    projected, prev, contexts = layer.project_keys(k), layer.initial_weights(k), []
    for t in range(T):
        c_t, prev = layer.step(q[:, t], k, v, prev, projected_keys=projected)
        np.testing.assert_allclose(prev.numpy(), w.numpy()[:, t], atol=1e-12)
        contexts.append(c_t)
    (mg.stack(contexts, axis=1) * g).sum().backward()
    for name, p in layer.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), expected[name], atol=1e-12, err_msg=name)
    assert mg.gradcheck(lambda pk: layer(q, k, v, projected_keys=pk)[0],
                        (layer.project_keys(k).detach().requires_grad_(),))
    with pytest.raises(ValueError, match=r"LocationAwareAttention: projected_keys must be "
                                         r"project_keys\(keys\) \(B, Lk, A\) = "):
        layer(q, k, v, projected_keys=_f64(rng, B, S, 4))


def test_location_aware_attention_without_location_weights_is_additive_attention(rng):
    """W_f = 0: the previous weights are not seen, and the scores are vᵀ tanh(W_q q + W_k k)."""
    layer = _location_layer()
    additive = nn.AdditiveAttention(3, 4, 5).double()
    for name in ("w_q", "w_k", "v"):
        getattr(additive, name).weight.data = getattr(layer, name).weight.data.copy()
    layer.w_f.weight.data = np.zeros_like(layer.w_f.weight.data)
    q, k, v = _f64(rng, 2, 3, 3), _f64(rng, 2, 5, 4), _f64(rng, 2, 5, 2)
    mask = rng.random((2, 3, 5)) < 0.7
    for ours, theirs in zip(layer(q, k, v, mask), additive(q, k, v, mask)):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-13)


def test_location_aware_attention_errors(rng):
    with pytest.raises(ValueError, match="LocationAwareAttention: kernel_size must be odd"):
        nn.LocationAwareAttention(3, 4, 5, kernel_size=4)
    layer = _location_layer()
    q, k, v = _f64(rng, 2, 3, 3), _f64(rng, 2, 5, 4), _f64(rng, 2, 5, 2)
    with pytest.raises(ValueError, match=r"LocationAwareAttention: prev must be the previous "
                                         r"weights \(B, Lk\) = \(2, 5\), got \(2, 4\)"):
        layer(q, k, v, prev=_f64(rng, 2, 4))
    with pytest.raises(ValueError, match=r"LocationAwareAttention: expected query \(\.\.\., "
                                         r"Lq, 3\)"):
        layer(k, k, v)
    with pytest.raises(ValueError, match="LocationAwareAttention: mask of shape"):
        layer(q, k, v, mask=np.ones((2, 3, 4), dtype=bool))


# -- location-based attention decoder step (C13) -------------------------------------------------

def test_location_attention_decoder_step_matches_numpy(rng):
    step = nn.LocationAttentionDecoderStep(embed_dim=3, hidden_size=4, max_len=6).double()
    x, h, enc = _f64(rng, 2, 3), _f64(rng, 2, 4), _f64(rng, 2, 5, 4)     # L = 5 < L_max = 6
    mask = np.array([[True] * 5, [True, True, True, False, False]])
    h_new, alpha = step(x, h, enc, mask)
    sd = step.state_dict()
    X, Hd, Enc = x.numpy(), h.numpy(), enc.numpy()
    logits = np.concatenate([Hd, X], -1) @ sd["attn.weight"].T + sd["attn.bias"]   # (B, 6)
    a = ref.softmax(np.where(mask, logits[:, :5], -np.inf))
    c = np.einsum("bl,bld->bd", a, Enc)                                            # c = H^E α
    z = np.maximum(np.concatenate([X, c], -1) @ sd["attn_combine.weight"].T
                   + sd["attn_combine.bias"], 0)
    gru = {k[4:]: v for k, v in sd.items() if k.startswith("gru.")}
    np.testing.assert_allclose(alpha.numpy(), a, atol=1e-12)
    np.testing.assert_allclose(h_new.numpy(), ref.gru_cell(z, Hd, **gru), atol=1e-12)
    assert mg.gradcheck(lambda x, h, enc: step(x, h, enc, mask)[0], (x, h, enc))


# -- masks: the forms every attention layer accepts ----------------------------------------------

MASKED_LAYERS = dict(SOFT_LAYERS, **{
    "hard-nearest": lambda: nn.HardAttention("nearest"),
    "hard-exact": lambda: nn.HardAttention("exact"),
})


def _attention_weights_numpy(layer, q, k, allowed):
    """The weights a layer should give under a mask, from its definition."""
    if isinstance(layer, nn.HardAttention):
        if layer.mode == "nearest":
            candidates = np.broadcast_to(allowed, (q.shape[0], q.shape[1], k.shape[1]))
        else:
            candidates = (q[:, :, None, :] == k[:, None, :, :]).all(-1) & allowed
        scores = np.where(candidates, q @ k.swapaxes(-1, -2), -np.inf)
        return np.eye(k.shape[1])[scores.argmax(-1)] * candidates.any(-1, keepdims=True)
    return ref.softmax(np.where(allowed, _scores_numpy(layer, q, k), -np.inf))


@pytest.mark.parametrize("mask_shape", [(3, 4), (2, 3, 4), (1, 3, 4), (2, 1, 4), (4,)],
                         ids=["Lq,Lk", "B,Lq,Lk", "1,Lq,Lk", "B,1,Lk", "Lk"])
@pytest.mark.parametrize("kind", MASKED_LAYERS)
def test_masks_as_bool_tensor_or_numpy_array(kind, mask_shape, rng):
    """A mask may be a bool Tensor or a NumPy bool array of any shape that broadcasts to
    (B, Lq, Lk); both give the masked reference's weights and context."""
    layer = MASKED_LAYERS[kind]().double()
    q, k, v = _qkv_for(layer, rng)
    if kind == "hard-exact":                        # give some queries an exact match
        k = mg.tensor(np.concatenate([q.numpy()[:, :2], k.numpy()[:, 2:]], axis=1))
    allowed = rng.random(mask_shape) < 0.6
    expected_w = _attention_weights_numpy(layer, q.numpy(), k.numpy(), allowed)
    for mask in (allowed, mg.tensor(allowed)):
        ctx, w = layer(q, k, v, mask)
        np.testing.assert_allclose(w.numpy(), expected_w, atol=1e-12)
        np.testing.assert_allclose(ctx.numpy(), expected_w @ v.numpy(), atol=1e-12)


@pytest.mark.parametrize("mask_shape", [(3, 5), (2, 3, 5), (2, 2, 3, 5), (2, 1, 5)],
                         ids=["Lq,Lk", "B,Lq,Lk", "B,heads,Lq,Lk", "B,1,Lk"])
def test_multi_head_and_sdpa_masks_as_tensor_or_numpy(mask_shape, rng):
    mha = nn.MultiHeadAttention(4, 2).double()
    query, kv = _f64(rng, 2, 3, 4), _f64(rng, 2, 5, 4)
    allowed = rng.random(mask_shape) < 0.6
    ref_out, ref_w = ref.multi_head_attention(query.numpy(), kv.numpy(), kv.numpy(),
                                              mha.state_dict(), "", 2, allowed)
    for mask in (allowed, mg.tensor(allowed)):
        out, w = mha(query, kv, kv, mask)
        np.testing.assert_allclose(out.numpy(), ref_out, atol=1e-12)
        np.testing.assert_allclose(w.numpy(), ref_w, atol=1e-12)
    if len(mask_shape) == 4:                       # per-head masks, straight to the kernel
        q, k, v = _f64(rng, 2, 2, 3, 4), _f64(rng, 2, 2, 5, 4), _f64(rng, 2, 2, 5, 3)
        expected = ref.attention(q.numpy(), k.numpy(), v.numpy(), allowed)
        for mask in (allowed, mg.tensor(allowed)):
            out, w = F.scaled_dot_product_attention(q, k, v, mask)
            np.testing.assert_allclose(out.numpy(), expected[0], atol=1e-12)
            np.testing.assert_allclose(w.numpy(), expected[1], atol=1e-12)


@pytest.mark.parametrize("kind", list(MASKED_LAYERS) + ["multi-head", "decoder-step"])
def test_fully_masked_query_sends_no_nan_anywhere(kind, rng):
    """The documented choice for a query with no allowed key, in every layer: zero weights,
    zero context, and finite gradients for inputs and parameters."""
    if kind == "multi-head":
        layer = nn.MultiHeadAttention(4, 2).double()
        q, k, v = _f64(rng, 2, 3, 4), _f64(rng, 2, 4, 4), _f64(rng, 2, 4, 4)
        call = lambda mask: layer(q, k, v, mask)          # noqa: E731
        inputs = [q, k, v]
    elif kind == "decoder-step":
        layer = nn.LocationAttentionDecoderStep(3, 4, max_len=4).double()
        x, h, enc = _f64(rng, 2, 3), _f64(rng, 2, 4), _f64(rng, 2, 4, 4)
        call = lambda mask: layer(x, h, enc, mask[:, 0])  # noqa: E731
        inputs = [x, h, enc]
    else:
        layer = MASKED_LAYERS[kind]().double()
        q, k, v = _qkv_for(layer, rng)
        call = lambda mask: layer(q, k, v, mask)          # noqa: E731
        inputs = [q, k, v]
    allowed = np.ones((2, 3, 4), dtype=bool)
    allowed[1] = False                              # batch element 1 may attend to nothing
    out, w = call(allowed)
    np.testing.assert_array_equal(w.numpy()[1], 0.0)
    if kind == "multi-head":                        # zero heads, so out = W_o·0 + b_o
        np.testing.assert_array_equal(out.numpy()[1], np.broadcast_to(
            layer.out_proj.bias.numpy(), (3, 4)))
    elif kind != "decoder-step":                    # (there the GRU step still runs)
        np.testing.assert_array_equal(out.numpy()[1], 0.0)
    (out * mg.tensor(rng.standard_normal(out.shape))).sum().backward()
    for t in inputs + list(layer.parameters()):
        if t.grad is not None:
            assert np.all(np.isfinite(t.grad.numpy()))


def test_location_attention_decoder_step_parameter_gradients(rng):
    step = nn.LocationAttentionDecoderStep(embed_dim=2, hidden_size=3, max_len=4).double()
    x, h = _f64(rng, 2, 2, requires_grad=False), _f64(rng, 2, 3, requires_grad=False)
    enc = _f64(rng, 2, 3, 3, requires_grad=False)                     # L = 3 < L_max = 4
    mask = np.array([[True, True, True], [True, False, True]])
    w = rng.standard_normal((2, 3))
    ref.check_parameter_gradients(step, lambda: (step(x, h, enc, mask)[0] * w).sum())


def test_multi_head_self_attention_packed_projection_matches_separate_ones(rng):
    """mha(x, x, x) projects q, k, v in one product with stacked weights; the same values
    passed as three different tensors take the three separate products. Both must agree."""
    mha = nn.MultiHeadAttention(8, 2).double()
    x = mg.tensor(rng.standard_normal((2, 5, 8)), requires_grad=True)
    mask = nn.causal_mask(5)
    packed, packed_w = mha(x, x, x, mask)
    (packed * packed).sum().backward()
    packed_grads = {n: p.grad.numpy() for n, p in mha.named_parameters()}
    packed_x = x.grad.numpy()
    mha.zero_grad()
    x.grad = None
    separate, separate_w = mha(x, x * 1.0, x * 1.0, mask)
    (separate * separate).sum().backward()
    np.testing.assert_allclose(packed.numpy(), separate.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(packed_w.numpy(), separate_w.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(packed_x, x.grad.numpy(), rtol=1e-10, atol=1e-12)
    for name, p in mha.named_parameters():
        np.testing.assert_allclose(packed_grads[name], p.grad.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=name)


def test_gumbel_softmax_samples_follow_the_softmax_and_hard_passes_its_gradient():
    mg.manual_seed(5)
    probabilities = np.array([0.1, 0.2, 0.7])
    logits = mg.tensor(np.log(np.tile(probabilities, (6000, 1))), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.numpy().sum(axis=1), 1.0, rtol=1e-6)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    counts = hard.numpy().mean(axis=0)
    assert set(np.unique(hard.numpy())) == {0.0, 1.0}
    assert np.all(np.abs(counts - probabilities) < 0.02), counts      # argmax of logits + g
    (hard * mg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert np.all(np.isfinite(logits.grad.numpy())) and np.abs(logits.grad.numpy()).sum() > 0
    columns = F.gumbel_softmax(mg.tensor(np.log(np.tile(probabilities, (5, 1))).T), hard=True,
                               dim=0)
    np.testing.assert_array_equal(columns.numpy().sum(axis=0), np.ones(5))
    with pytest.raises(ValueError, match="gumbel_softmax: tau must be > 0"):
        F.gumbel_softmax(logits, tau=0.0)
