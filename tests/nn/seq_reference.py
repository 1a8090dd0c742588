"""Plain-NumPy references for the sequence layers, written from their equations (not from the
code under test), and a finite-difference check of module parameter gradients."""

import numpy as np

import minigrad as mg


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softmax(x, axis=-1):
    """Softmax; a slice that is all −inf gives zeros."""
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    total = e.sum(axis=axis, keepdims=True)
    return e / np.where(total == 0, 1.0, total)


def attention(q, k, v, mask=None, scale=None):
    """softmax(q kᵀ · scale, masked) v, for any leading axes. Returns (out, weights)."""
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    scores = np.einsum("...id,...jd->...ij", q, k) * scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = softmax(scores)
    return np.einsum("...ij,...jd->...id", w, v), w


def linear(x, sd, prefix):
    y = x @ sd[prefix + "weight"].T
    return y + sd[prefix + "bias"] if prefix + "bias" in sd else y


def multi_head_attention(query, key, value, sd, prefix, heads, mask=None):
    """PyTorch's formula: per head h, softmax(Q_h K_hᵀ/√Dh) V_h, heads concatenated, then W_o.
    mask (B, Lq, Lk)-broadcastable (all heads) or (B, heads, Lq, Lk)."""
    B, Lq, E = query.shape
    Dh = E // heads
    Q = linear(query, sd, prefix + "q_proj.")
    K = linear(key, sd, prefix + "k_proj.")
    V = linear(value, sd, prefix + "v_proj.")
    outs, weights = [], []
    for h in range(heads):
        cols = slice(h * Dh, (h + 1) * Dh)
        m = None
        if mask is not None:
            m = mask[:, h] if mask.ndim == 4 and mask.shape[1] == heads else mask
            m = m[:, 0] if m.ndim == 4 else m
        o, w = attention(Q[..., cols], K[..., cols], V[..., cols], m)
        outs.append(o)
        weights.append(w)
    out = linear(np.concatenate(outs, axis=-1), sd, prefix + "out_proj.")
    return out, np.stack(weights, axis=1)


def layer_norm(x, weight, bias, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * weight + bias


def _norm(x, sd, name):
    return layer_norm(x, sd[name + ".weight"], sd[name + ".bias"])


def _ffn(x, sd, prefix):
    return linear(np.maximum(linear(x, sd, prefix + "linear1."), 0.0), sd, prefix + "linear2.")


def encoder_layer(x, sd, heads, norm_first, mask=None, prefix=""):
    """x = norm1(x + SA(x)); x = norm2(x + FF(x))  or the pre-LN order (no dropout)."""
    def sa(y):
        return multi_head_attention(y, y, y, sd, prefix + "self_attn.", heads, mask)[0]
    if norm_first:
        x = x + sa(_norm(x, sd, prefix + "norm1"))
        return x + _ffn(_norm(x, sd, prefix + "norm2"), sd, prefix)
    x = _norm(x + sa(x), sd, prefix + "norm1")
    return _norm(x + _ffn(x, sd, prefix), sd, prefix + "norm2")


def decoder_layer(x, memory, sd, heads, norm_first, tgt_mask=None, memory_mask=None, prefix=""):
    """Self-attention, cross-attention to memory, FFN; post-LN or pre-LN (no dropout)."""
    def sa(y):
        return multi_head_attention(y, y, y, sd, prefix + "self_attn.", heads, tgt_mask)[0]

    def ca(y):
        return multi_head_attention(y, memory, memory, sd, prefix + "multihead_attn.", heads,
                                    memory_mask)[0]
    if norm_first:
        x = x + sa(_norm(x, sd, prefix + "norm1"))
        x = x + ca(_norm(x, sd, prefix + "norm2"))
        return x + _ffn(_norm(x, sd, prefix + "norm3"), sd, prefix)
    x = _norm(x + sa(x), sd, prefix + "norm1")
    x = _norm(x + ca(x), sd, prefix + "norm2")
    return _norm(x + _ffn(x, sd, prefix), sd, prefix + "norm3")


def gru_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh):
    """GRUCell from its equations, one gate at a time."""
    H = h.shape[-1]

    def pre(k):  # pre-activations of gate k from the input and from h
        rows = slice(k * H, (k + 1) * H)
        return x @ weight_ih[rows].T + bias_ih[rows], h @ weight_hh[rows].T + bias_hh[rows]
    (xr, hr), (xz, hz), (xn, hn) = pre(0), pre(1), pre(2)
    r = sigmoid(xr + hr)
    z = sigmoid(xz + hz)
    return (1 - z) * np.tanh(xn + r * hn) + z * h


def lstm_cell(x, h, c, weight_ih, weight_hh, bias_ih, bias_hh):
    """LSTMCell from its equations: gates i, f, g, o."""
    H = h.shape[-1]

    def pre(k):
        rows = slice(k * H, (k + 1) * H)
        return x @ weight_ih[rows].T + bias_ih[rows] + h @ weight_hh[rows].T + bias_hh[rows]
    i, f, g, o = sigmoid(pre(0)), sigmoid(pre(1)), np.tanh(pre(2)), sigmoid(pre(3))
    c = f * c + i * g
    return o * np.tanh(c), c


def update_gate_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh):
    """u = σ(W_u x + U_u h + b), h̃ = tanh(W x + U h + b), h' = u ⊙ h + (1 − u) ⊙ h̃."""
    H = h.shape[-1]
    u = sigmoid(x @ weight_ih[:H].T + bias_ih[:H] + h @ weight_hh[:H].T + bias_hh[:H])
    cand = np.tanh(x @ weight_ih[H:].T + bias_ih[H:] + h @ weight_hh[H:].T + bias_hh[H:])
    return u * h + (1 - u) * cand


def run_layers(cell, x, sd, num_layers, h0=None, H=None):
    """A stacked recurrent layer from a cell reference: x (B, T, I) -> (output, [h_T per layer])."""
    B, T, _ = x.shape
    finals = []
    for k in range(num_layers):
        p = {name: sd[f"{name}_l{k}"] for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}
        h = np.zeros((B, H)) if h0 is None else h0[k]
        outs = []
        for t in range(T):
            h = cell(x[:, t], h, **p)
            outs.append(h)
        x = np.stack(outs, axis=1)
        finals.append(h)
    return x, finals


def check_parameter_gradients(module, loss_fn, eps=1e-6, atol=1e-7, rtol=1e-5):
    """Compare each parameter's .grad from loss_fn().backward() with central differences.

    The module must be float64; loss_fn() returns a scalar Tensor."""
    module.zero_grad()
    loss_fn().backward()
    for name, param in module.named_parameters():
        analytic = np.zeros(param.shape) if param.grad is None else param.grad.numpy()
        base = param.data.copy()
        numeric = np.zeros(param.shape)
        for index in np.ndindex(*param.shape):
            values = []
            for sign in (1.0, -1.0):
                moved = base.copy()
                moved[index] += sign * eps
                param.data = moved
                with mg.no_grad():
                    values.append(loss_fn().item())
            numeric[index] = (values[0] - values[1]) / (2 * eps)
        param.data = base
        np.testing.assert_allclose(analytic, numeric, atol=atol, rtol=rtol,
                                   err_msg=f"gradient of parameter {name}")
