"""Published claims about gated RNNs, attention and positional encodings, run on the library.
Each test is named after its claim (c1, c2, ...: a numbering local to this file) and its
docstring states the claim. Where a text rounds or miscomputes, the exact numbers are checked
and the text's are shown to differ."""

import math

import numpy as np
import pytest

import minigrad as mg
import nn
from tests.nn import seq_reference as ref


def _unrolled_sum(gate, candidate, h0):
    """h_t = Σ_{i≤t} [Π_{j=i+1..t} u_j] (1 − u_i) c_i + [Π_{j≤t} u_j] h_0, for every t.

    gate, candidate: (B, T, H); h0: (B, H). Returns (B, T, H)."""
    B, T, H = gate.shape
    out = np.zeros((B, T, H))
    for t in range(T):
        total = np.prod(gate[:, :t + 1], axis=1) * h0
        for i in range(t + 1):
            total = total + np.prod(gate[:, i + 1:t + 1], axis=1) * (1 - gate[:, i]) \
                * candidate[:, i]
        out[:, t] = total
    return out


def test_c1_gru_is_a_weighted_sum_of_its_candidates(rng):
    """C1: h_t = Σ_i [Π_{j=i+1..t} z_j](1 − z_i) ñ_i + [Π_{j=1..t} z_j] h_0 (z = update gate,
    ñ = candidate n), equal to the recurrent GRU; in every layer of a stack too."""
    gru = nn.GRU(3, 4, num_layers=2).double()
    x = mg.tensor(rng.standard_normal((2, 7, 3)))
    h0 = rng.standard_normal((2, 2, 4))
    out, h_n, gates = gru(x, mg.tensor(h0), return_gates=True)
    top = gates[1]
    np.testing.assert_allclose(_unrolled_sum(top.z.numpy(), top.n.numpy(), h0[1]), out.numpy(),
                               atol=1e-6, rtol=0)
    bottom = gates[0]
    np.testing.assert_allclose(_unrolled_sum(bottom.z.numpy(), bottom.n.numpy(), h0[0])[:, -1],
                               h_n.numpy()[0], atol=1e-6, rtol=0)
    # the text's weights: a nonnegative set that sums to 1 with h_0's share
    z = top.z.numpy()
    weights = [np.prod(z[:, i + 1:], axis=1) * (1 - z[:, i]) for i in range(7)]
    np.testing.assert_allclose(sum(weights) + np.prod(z, axis=1), 1.0, atol=1e-12)


def test_c1_update_gate_unit_unrolls_the_same_way(rng):
    """The text's simplified unit h_t = u_t h_{t−1} + (1 − u_t) h̃_t unrolls identically."""
    layer = nn.UpdateGateRNN(2, 3).double()
    x = mg.tensor(rng.standard_normal((2, 6, 2)))
    h0 = rng.standard_normal((1, 2, 3))
    out, _, (g,) = layer(x, mg.tensor(h0), return_gates=True)
    np.testing.assert_allclose(_unrolled_sum(g.u.numpy(), g.c.numpy(), h0[0]), out.numpy(),
                               atol=1e-6, rtol=0)


def test_c3_dot_product_similarity_worked_example():
    """C3: keys at 0°, 45°, 90°, query at 60°."""
    angles = np.radians([0.0, 45.0, 90.0])
    keys = np.stack([np.cos(angles), np.sin(angles)], axis=1)[None]          # (1, 3, 2)
    query = np.array([[[math.cos(math.radians(60)), math.sin(math.radians(60))]]])
    attn = nn.DotProductAttention(scaled=False)
    scores = attn.scores(mg.tensor(query), mg.tensor(keys)).numpy()[0, 0]
    np.testing.assert_allclose(scores, [0.5, 0.966, 0.866], atol=5e-4)
    _, w = attn(mg.tensor(query), mg.tensor(keys), mg.tensor(keys))
    np.testing.assert_allclose(w.numpy()[0, 0], [0.248, 0.395, 0.357], atol=5e-4)
    # the text prints [0.24, 0.39, 0.35]: the exact values truncated, not rounded
    np.testing.assert_array_equal(np.floor(w.numpy()[0, 0] * 100) / 100, [0.24, 0.39, 0.35])


def test_c4_scaling_keeps_score_variance_near_one():
    """C4: for random q, k ~ N(0, I_d), q·k/√d has variance ≈ 1 for every d (q·k: ≈ d)."""
    rng = np.random.default_rng(4)
    for d in (4, 64, 512):
        q = mg.tensor(rng.standard_normal((1, 300, d)))
        k = mg.tensor(rng.standard_normal((1, 300, d)))
        scaled = nn.DotProductAttention(scaled=True).scores(q, k).numpy()
        unscaled = nn.DotProductAttention(scaled=False).scores(q, k).numpy()
        assert scaled.var() == pytest.approx(1.0, rel=0.1)
        assert unscaled.var() == pytest.approx(d, rel=0.1)


def test_c4_unscaled_softmax_gradients_shrink_with_dimension():
    """C4: unscaled scores saturate the softmax as d grows, so its gradient vanishes; scaled
    scores keep it at the same size."""
    rng = np.random.default_rng(5)
    norms = {True: [], False: []}
    dims = (4, 64, 1024)
    for scaled in (True, False):
        for d in dims:
            q = rng.standard_normal((1, 200, d))
            k = rng.standard_normal((1, 16, d))
            scores = nn.DotProductAttention(scaled=scaled).scores(mg.tensor(q), mg.tensor(k))
            s = mg.tensor(scores.numpy(), requires_grad=True)
            upstream = mg.tensor(rng.standard_normal((1, 200, 16)))
            (mg.softmax(s) * upstream).sum().backward()       # ∂L/∂scores through softmax
            norms[scaled].append(np.linalg.norm(s.grad.numpy(), axis=-1).mean())
    unscaled, scaled = norms[False], norms[True]
    assert unscaled[0] > unscaled[1] > unscaled[2] and unscaled[2] < 0.25 * unscaled[0]
    assert max(scaled) < 1.5 * min(scaled)


@pytest.mark.parametrize("base", [10000.0, 1e5])
def test_c8_sinusoidal_formula(base, rng):
    """C8: PE(t, 2i) = sin(t / base^(2i/D)), PE(t, 2i+1) = cos(t / base^(2i/D)); 002 uses
    10000, 001 writes 1e5, so the base is a parameter."""
    D, T = 6, 9
    pe = nn.SinusoidalPositionalEncoding(D, max_len=20, base=base)
    expected = np.zeros((T, D))
    for t in range(T):
        for i in range(D // 2):
            expected[t, 2 * i] = math.sin(t / base ** (2 * i / D))
            expected[t, 2 * i + 1] = math.cos(t / base ** (2 * i / D))
    np.testing.assert_allclose(nn.sinusoidal_encoding(T, D, base), expected, atol=1e-12)
    x = rng.standard_normal((2, T, D))
    np.testing.assert_allclose(pe(mg.tensor(x)).numpy(), x + expected, atol=1e-6)


def test_c9_position_shift_is_a_rotation_independent_of_t():
    """C9: PE(t + φ) = R(φ) PE(t), R(φ) block-diagonal 2×2 rotations by ω_i φ, the same
    matrix for every t."""
    D = 16
    pe_table = nn.sinusoidal_encoding(300, D)
    module = nn.SinusoidalPositionalEncoding(D, max_len=300)
    for phi in (1, 5, 17, 100):
        R = np.zeros((D, D))
        for i in range(D // 2):
            a = phi / 10000 ** (2 * i / D)
            R[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[math.cos(a), math.sin(a)],
                                                   [-math.sin(a), math.cos(a)]]
        np.testing.assert_allclose(module.shift_matrix(phi), R, atol=1e-12)
        for t in range(0, 300 - phi, 7):
            np.testing.assert_allclose(R @ pe_table[t], pe_table[t + phi], atol=1e-6)
        np.testing.assert_allclose(R @ R.T, np.eye(D), atol=1e-12)        # a rotation


def test_c10_self_attention_is_permutation_equivariant_until_masked_or_positioned(rng):
    """C10: A(PX) = P A(X) without positions; a causal mask or added positions break it."""
    mha = nn.MultiHeadAttention(8, 2).double()
    x = rng.standard_normal((2, 6, 8))
    perm = np.array([3, 0, 5, 1, 4, 2])

    def attend(inputs, mask=None):
        t = mg.tensor(inputs)
        return mha(t, t, t, mask)[0].numpy()
    np.testing.assert_allclose(attend(x[:, perm]), attend(x)[:, perm], atol=1e-12)
    causal = nn.causal_mask(6)
    assert np.abs(attend(x[:, perm], causal) - attend(x, causal)[:, perm]).max() > 1e-3
    pos = nn.SinusoidalPositionalEncoding(8).double()
    with_pos = pos(mg.tensor(x)).numpy()
    with_pos_perm = pos(mg.tensor(x[:, perm])).numpy()
    assert np.abs(attend(with_pos_perm) - attend(with_pos)[:, perm]).max() > 1e-3


def test_c11_causal_mask_zeroes_future_weights_and_gradients(rng):
    """C11: −inf on future scores gives weights exactly 0, and output t does not depend on
    inputs after t (its gradient with respect to them is exactly 0)."""
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0).double()
    T = 5
    x = mg.tensor(rng.standard_normal((2, T, 8)), requires_grad=True)
    _, w = layer.self_attn(x, x, x, nn.causal_mask(T))
    assert np.all(w.numpy()[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0.0)
    for t in range(T):
        # a random projection of output t (a plain sum of a LayerNorm output is constant)
        w = mg.tensor(rng.standard_normal((2, 8)))
        (g,) = mg.grad((layer(x, nn.causal_mask(T))[:, t] * w).sum(), x)
        g = g.numpy()
        assert np.all(g[:, t + 1:] == 0.0)
        assert np.all(np.abs(g[:, :t + 1]).sum(axis=-1) > 0)


def test_c16_worked_decoder_step():
    """C16: h = [1,1],[3,2],[2,4],[1,5], s1 = [2,1]: scores [3,8,8,7]; exact weights
    [0.0028, 0.4211, 0.4211, 0.1549] (the text: [0.003, 0.45, 0.45, 0.097]); context
    [2.263, 3.304] (the text: [2.35, 3.19])."""
    h = mg.tensor([[[1.0, 1.0], [3.0, 2.0], [2.0, 4.0], [1.0, 5.0]]], dtype=np.float64)
    s1 = mg.tensor([[[2.0, 1.0]]], dtype=np.float64)
    attn = nn.DotProductAttention(scaled=False)
    np.testing.assert_array_equal(attn.scores(s1, h).numpy()[0, 0], [3, 8, 8, 7])
    context, w = attn(s1, h, h)
    np.testing.assert_allclose(w.numpy()[0, 0], [0.0028, 0.4211, 0.4211, 0.1549], atol=5e-5)
    np.testing.assert_allclose(context.numpy()[0, 0], [2.263, 3.304], atol=5e-4)
    assert np.abs(w.numpy()[0, 0] - [0.003, 0.45, 0.45, 0.097]).max() > 0.02
    assert np.abs(context.numpy()[0, 0] - [2.35, 3.19]).max() > 0.05
    # the text's "[5, 2, 9] -> [0.1, 0.02, 0.88]" is off too
    w2 = mg.softmax(mg.tensor([5.0, 2.0, 9.0], dtype=np.float64)).numpy()
    np.testing.assert_allclose(w2, [0.018, 0.001, 0.981], atol=5e-4)


def test_c17_i_love_pizza():
    """C17: I = [1,0], love = [2,1], pizza = [0,2]; Q = K = V = embeddings, unscaled dot
    product: "love" gets weights [0.045, 0.909, 0.045] and output [1.864, 1.000] (the text
    rounds these to [0.045, 0.91, 0.045] and [1.87, 1.00]); scaling by √2 would change them."""
    X = mg.tensor([[[1.0, 0.0], [2.0, 1.0], [0.0, 2.0]]], dtype=np.float64)
    out, w = nn.DotProductAttention(scaled=False)(X, X, X)
    np.testing.assert_allclose(w.numpy()[0, 1], [0.045, 0.909, 0.045], atol=5e-4)
    np.testing.assert_allclose(out.numpy()[0, 1], [1.864, 1.000], atol=5e-4)
    _, w_scaled = nn.DotProductAttention(scaled=True)(X, X, X)
    assert np.abs(w_scaled.numpy()[0, 1] - [0.045, 0.909, 0.045]).max() > 0.1


def test_c17_two_heads_concatenated():
    """C17, two heads: the text gives each head's projected vectors for "love" (its head-1
    keys are not a linear map of the embeddings, so the heads run on those vectors):
    head 1 q = [1,1], keys [1,1],[1,2],[0,1], values [1,0],[2,1],[0,1] -> weights
    [0.245, 0.665, 0.090], output [1.575, 0.755] (text: [0.24, 0.66, 0.10], [1.56, 0.76]);
    head 2 q = [1,3], keys [0,1],[1,1],[1,3], values [1,1],[2,0],[5,5] -> weights
    [0.0009, 0.0025, 0.9966], output [4.989, 4.984] (text: [4.99, 4.99])."""
    attn = nn.DotProductAttention(scaled=False)

    def head(q, keys, values):
        t = [mg.tensor([v], dtype=np.float64) for v in ([q], keys, values)]
        return attn(*t)
    out1, w1 = head([1, 1], [[1, 1], [1, 2], [0, 1]], [[1, 0], [2, 1], [0, 1]])
    out2, w2 = head([1, 3], [[0, 1], [1, 1], [1, 3]], [[1, 1], [2, 0], [5, 5]])
    np.testing.assert_allclose(w1.numpy()[0, 0], [0.245, 0.665, 0.090], atol=5e-4)
    np.testing.assert_allclose(w2.numpy()[0, 0], [0.0009, 0.0025, 0.9966], atol=5e-5)
    both = mg.concat([out1, out2], axis=-1).numpy()[0, 0]
    np.testing.assert_allclose(both, [1.575, 0.755, 4.989, 4.984], atol=5e-4)
    # the same from NumPy: softmax of the head scores [2, 3, 1] and [3, 4, 10]
    head1 = ref.softmax(np.array([2.0, 3.0, 1.0])) @ np.array([[1, 0], [2, 1], [0, 1]])
    head2 = ref.softmax(np.array([3.0, 4.0, 10.0])) @ np.array([[1, 1], [2, 0], [5, 5]])
    np.testing.assert_allclose(both, np.concatenate([head1, head2]), atol=1e-12)


def test_c20_positions_concatenated_instead_of_added(rng):
    """C20: mode="concat" appends PE[:T] as extra features, leaving x itself untouched."""
    pe = nn.SinusoidalPositionalEncoding(4, max_len=10, mode="concat")
    x = rng.standard_normal((2, 5, 3)).astype(np.float32)
    y = pe(mg.tensor(x)).numpy()
    assert y.shape == (2, 5, 7)
    np.testing.assert_array_equal(y[..., :3], x)
    np.testing.assert_allclose(y[..., 3:], np.broadcast_to(nn.sinusoidal_encoding(5, 4),
                                                           (2, 5, 4)), atol=1e-6)
