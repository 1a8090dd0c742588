"""The workloads in plain NumPy: each forward pass with its backward pass derived by hand.

These are the baselines of every ratio in RESULTS.md, so they are written as a careful person
would write them by hand: batched matmuls, one matmul per weight gradient where the steps can
be collected, no framework and no graph. They import nothing but NumPy, so a process that runs
only them measures NumPy's own memory footprint.
"""

from __future__ import annotations

import math

import numpy as np

from .problems import (ENCODER_PARAMS, GRU_PARAMS, MLP_PARAMS, Problem, w0_outputs, w1_outputs,
                       w2_outputs, w3_outputs, w4_outputs)


class W0NumPy:
    """y₀ = x; y ← y ⊙ w; y ← y + w; … Forward keeps the input of each ⊙ (∂/∂w needs it).
    Backward per op, last op first: add: ∂w += g; mul: ∂w += g ⊙ y_in, g ← g ⊙ w."""

    def __init__(self, problem: Problem):
        self.pairs = int(problem.sizes["n_ops"]) // 2
        self.x = problem.arrays["x"].copy()
        self.w = problem.arrays["w"].copy()
        self.seed = np.ones_like(self.x)

    def step(self):
        x, w = self.x, self.w
        mul_inputs = []
        y = x
        for _ in range(self.pairs):
            mul_inputs.append(y)
            y = y * w
            y = y + w
        g = self.seed
        grad_w = None
        for y_in in reversed(mul_inputs):
            grad_w = g if grad_w is None else grad_w + g     # add: ∂(y + w)/∂w = 1
            grad_w = grad_w + g * y_in                        # mul: ∂(y ⊙ w)/∂w = y
            g = g * w                                         # mul: ∂(y ⊙ w)/∂y = w
        self.grad_x, self.grad_w = g, grad_w
        return y

    def outputs(self, y) -> dict[str, np.ndarray]:
        return w0_outputs(y, self.grad_x, self.grad_w)


class W1NumPy:
    """a₁ = x W₀ᵀ + b₀, h₁ = relu(a₁), a₂ = h₁ W₂ᵀ + b₂, h₂ = relu(a₂), z = h₂ W₄ᵀ + b₄,
    loss = −mean_i log softmax(z_i)[target_i]; then θ ← θ − lr ∂loss/∂θ."""

    def __init__(self, problem: Problem):
        self.params = {k: problem.arrays[k].copy() for k in MLP_PARAMS}
        self.x = problem.arrays["x"]
        self.targets = problem.arrays["targets"]
        self.lr = problem.sizes["lr"]

    def step(self):
        p, x, targets = self.params, self.x, self.targets
        batch = x.shape[0]
        rows = np.arange(batch)
        a1 = x @ p["0.weight"].T + p["0.bias"]                        # (B, 256)
        h1 = np.maximum(a1, 0)
        a2 = h1 @ p["2.weight"].T + p["2.bias"]                       # (B, 256)
        h2 = np.maximum(a2, 0)
        z = h2 @ p["4.weight"].T + p["4.bias"]                        # (B, C)
        shifted = z - z.max(axis=1, keepdims=True)                    # no overflow in exp
        e = np.exp(shifted)
        total = e.sum(axis=1, keepdims=True)
        loss = np.log(total[:, 0]).mean() - shifted[rows, targets].mean()
        # ∂loss/∂z = (softmax(z) − onehot(target)) / B
        grad_z = e / total
        grad_z[rows, targets] -= 1.0
        grad_z /= batch
        g = {"4.weight": grad_z.T @ h2, "4.bias": grad_z.sum(axis=0)}
        grad_a2 = (grad_z @ p["4.weight"]) * (a2 > 0)                 # relu' = [a > 0]
        g["2.weight"], g["2.bias"] = grad_a2.T @ h1, grad_a2.sum(axis=0)
        grad_a1 = (grad_a2 @ p["2.weight"]) * (a1 > 0)
        g["0.weight"], g["0.bias"] = grad_a1.T @ x, grad_a1.sum(axis=0)
        for name, grad in g.items():
            p[name] -= self.lr * grad
        self.grads = g
        return loss

    def outputs(self, loss) -> dict[str, np.ndarray]:
        return w1_outputs(loss, self.grads, self.params)


def _sigmoid(a: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * a))      # = 1/(1 + e⁻ᵃ), with no overflow


class W2NumPy:
    """Forward: the input projections of all steps in one matmul, then per step
        [r, z] = σ(gx_rz + gh_rz), n = tanh(gx_n + r ⊙ gh_n), h' = n + z ⊙ (h − n),
    with gh = h W_hhᵀ + b_hh. Backward through time collects ∂/∂gx and ∂/∂gh of every step,
    then one matmul per weight: ∂W_ih = Σ_t ∂gx_tᵀ x_t, ∂W_hh = Σ_t ∂gh_tᵀ h_{t−1}."""

    def __init__(self, problem: Problem):
        self.params = {k: problem.arrays[k] for k in GRU_PARAMS}
        self.x = problem.arrays["x"]

    def step(self):
        p, x = self.params, self.x
        w_hh, b_hh = p["weight_hh_l0"], p["bias_hh_l0"]
        batch, steps, inputs = x.shape
        hidden = w_hh.shape[1]
        two_h = 2 * hidden
        gx_all = x @ p["weight_ih_l0"].T + p["bias_ih_l0"]       # (B, T, 3H)
        h = np.zeros((batch, hidden), dtype=x.dtype)
        h_prev = np.empty((steps, batch, hidden), dtype=x.dtype)  # h_{t−1} for each t
        out = np.empty((batch, steps, hidden), dtype=x.dtype)
        saved = []
        for t in range(steps):
            h_prev[t] = h
            gx = gx_all[:, t]
            gh = h @ w_hh.T + b_hh                                # (B, 3H)
            rz = _sigmoid(gx[:, :two_h] + gh[:, :two_h])          # (B, 2H): r and z together
            r, z = rz[:, :hidden], rz[:, hidden:]
            gh_n = gh[:, two_h:]
            n = np.tanh(gx[:, two_h:] + r * gh_n)
            h = n + z * (h - n)
            out[:, t] = h
            saved.append((rz, n, gh_n))
        loss = np.mean(out * out)

        grad_out = out * (2.0 / out.size)                         # ∂mean(h²)/∂h
        grad_gx = np.empty((batch, steps, 3 * hidden), dtype=x.dtype)
        grad_gh = np.empty((steps, batch, 3 * hidden), dtype=x.dtype)
        grad_h = np.zeros((batch, hidden), dtype=x.dtype)
        for t in reversed(range(steps)):
            rz, n, gh_n = saved[t]
            r, z = rz[:, :hidden], rz[:, hidden:]
            grad_h = grad_h + grad_out[:, t]
            grad_an = grad_h * (1 - z) * (1 - n * n)              # through tanh: 1 − n²
            block = grad_gh[t]                                    # (B, 3H) = ∂gh_t
            block[:, :hidden] = grad_an * gh_n                    # ∂r, from r ⊙ gh_n
            block[:, hidden:two_h] = grad_h * (h_prev[t] - n)     # ∂z
            block[:, :two_h] *= rz * (1 - rz)                     # through σ: σ' = σ(1 − σ)
            block[:, two_h:] = grad_an * r                        # ∂gh_n
            grad_gx[:, t, :two_h] = block[:, :two_h]
            grad_gx[:, t, two_h:] = grad_an
            grad_h = grad_h * z + block @ w_hh                    # ∂h_{t−1}
        flat_gx = grad_gx.reshape(-1, 3 * hidden)
        flat_gh = grad_gh.reshape(-1, 3 * hidden)
        self.grads = {"weight_ih_l0": flat_gx.T @ x.reshape(-1, inputs),
                      "bias_ih_l0": flat_gx.sum(axis=0),
                      "weight_hh_l0": flat_gh.T @ h_prev.reshape(-1, hidden),
                      "bias_hh_l0": flat_gh.sum(axis=0)}
        return loss

    def outputs(self, loss) -> dict[str, np.ndarray]:
        return w2_outputs(loss, self.grads)


def _layer_norm(x, weight, bias, eps=1e-5):
    """y = x̂ γ + β, x̂ = (x − mean)/σ over the last axis; also returns x̂ and 1/σ."""
    centred = x - x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps)
    x_hat = centred * rstd
    return x_hat * weight + bias, x_hat, rstd


def _layer_norm_backward(grad_y, x_hat, rstd, weight):
    """∂x = (1/σ)(ĝ − mean(ĝ) − x̂ mean(ĝ ⊙ x̂)) with ĝ = ∂y ⊙ γ; ∂γ = Σ ∂y ⊙ x̂; ∂β = Σ ∂y."""
    rows = grad_y.reshape(-1, grad_y.shape[-1])
    grad_w = (rows * x_hat.reshape(rows.shape)).sum(axis=0)
    grad_b = rows.sum(axis=0)
    g_hat = grad_y * weight
    grad_x = rstd * (g_hat - g_hat.mean(axis=-1, keepdims=True)
                     - x_hat * (g_hat * x_hat).mean(axis=-1, keepdims=True))
    return grad_x, grad_w, grad_b


class W3NumPy:
    """The pre-LN layer by hand, u = x + MHA(LN₁(x)), out = u + FFN(LN₂(u)), with q, k, v
    projected by one matmul against the stacked weight [W_q; W_k; W_v] (3E, E)."""

    def __init__(self, problem: Problem):
        a = problem.arrays
        self.src = a["src"]
        self.heads = int(problem.sizes["heads"])
        self.p = {k: a[k] for k in ENCODER_PARAMS}
        self.w_qkv = np.concatenate([a[f"self_attn.{n}_proj.weight"] for n in "qkv"])
        self.b_qkv = np.concatenate([a[f"self_attn.{n}_proj.bias"] for n in "qkv"])
        steps = self.src.shape[1]
        # additive causal mask: 0 where key j ≤ query i, −inf above the diagonal
        self.mask_add = np.triu(np.full((steps, steps), -np.inf, dtype=np.float32), k=1)

    def step(self):
        p, x, heads = self.p, self.src, self.heads
        batch, steps, embed = x.shape
        dh = embed // heads
        scale = 1.0 / math.sqrt(dh)
        # -- forward ------------------------------------------------------------------------
        h1, x_hat1, rstd1 = _layer_norm(x, p["norm1.weight"], p["norm1.bias"])
        qkv = h1 @ self.w_qkv.T + self.b_qkv                              # (B, T, 3E)
        qkv = qkv.reshape(batch, steps, 3, heads, dh).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0] * scale, qkv[1], qkv[2]                          # (B, heads, T, Dh)
        weights = q @ k.swapaxes(-1, -2)                                  # (B, heads, T, T)
        weights += self.mask_add
        weights -= weights.max(axis=-1, keepdims=True)                    # no overflow in exp
        np.exp(weights, out=weights)
        weights /= weights.sum(axis=-1, keepdims=True)
        heads_out = weights @ v                                           # (B, heads, T, Dh)
        context = heads_out.transpose(0, 2, 1, 3).reshape(batch, steps, embed)
        u = x + context @ p["self_attn.out_proj.weight"].T + p["self_attn.out_proj.bias"]
        h2, x_hat2, rstd2 = _layer_norm(u, p["norm2.weight"], p["norm2.bias"])
        a1 = h2 @ p["linear1.weight"].T + p["linear1.bias"]              # (B, T, FFN)
        f1 = np.maximum(a1, 0)
        out = u + f1 @ p["linear2.weight"].T + p["linear2.bias"]          # (B, T, E)
        loss = np.mean(out * out)
        # -- backward -----------------------------------------------------------------------
        g = {}
        grad_out = (out * (2.0 / out.size)).reshape(-1, embed)            # (B·T, E)
        g["linear2.weight"] = grad_out.T @ f1.reshape(-1, f1.shape[-1])
        g["linear2.bias"] = grad_out.sum(axis=0)
        grad_a1 = (grad_out @ p["linear2.weight"]) * (a1.reshape(-1, a1.shape[-1]) > 0)
        g["linear1.weight"] = grad_a1.T @ h2.reshape(-1, embed)
        g["linear1.bias"] = grad_a1.sum(axis=0)
        grad_h2 = (grad_a1 @ p["linear1.weight"]).reshape(batch, steps, embed)
        grad_u, g["norm2.weight"], g["norm2.bias"] = _layer_norm_backward(
            grad_h2, x_hat2, rstd2, p["norm2.weight"])
        grad_u = (grad_u + grad_out.reshape(grad_u.shape)).reshape(-1, embed)  # + residual
        g["self_attn.out_proj.weight"] = grad_u.T @ context.reshape(-1, embed)
        g["self_attn.out_proj.bias"] = grad_u.sum(axis=0)
        grad_context = (grad_u @ p["self_attn.out_proj.weight"])
        grad_context = grad_context.reshape(batch, steps, heads, dh).transpose(0, 2, 1, 3)
        grad_v = weights.swapaxes(-1, -2) @ grad_context                  # (B, heads, T, Dh)
        # softmax: ∂S = P ⊙ (∂P − δ), δ_i = Σ_j ∂P_ij P_ij = ∂ctx_i · ctx_i (as in W4NumPy);
        # masked entries have P = 0, so ∂S = 0 there
        delta = (grad_context * heads_out).sum(axis=-1, keepdims=True)
        grad_scores = grad_context @ v.swapaxes(-1, -2)                   # (B, heads, T, T)
        grad_scores -= delta
        grad_scores *= weights
        grad_q = (grad_scores @ k) * scale
        grad_k = grad_scores.swapaxes(-1, -2) @ q
        grad_qkv = np.stack([grad_q, grad_k, grad_v])                     # (3, B, heads, T, Dh)
        grad_qkv = grad_qkv.transpose(1, 3, 0, 2, 4).reshape(-1, 3 * embed)
        grad_w_qkv = grad_qkv.T @ h1.reshape(-1, embed)                   # (3E, E)
        grad_b_qkv = grad_qkv.sum(axis=0)
        for i, name in enumerate("qkv"):
            rows = slice(i * embed, (i + 1) * embed)
            g[f"self_attn.{name}_proj.weight"] = grad_w_qkv[rows]
            g[f"self_attn.{name}_proj.bias"] = grad_b_qkv[rows]
        grad_h1 = grad_qkv @ self.w_qkv                                   # (B·T, E)
        # src requires no grad: of LN₁'s backward only ∂γ and ∂β are needed
        g["norm1.weight"] = (grad_h1 * x_hat1.reshape(grad_h1.shape)).sum(axis=0)
        g["norm1.bias"] = grad_h1.sum(axis=0)
        self.grads = g
        return loss

    def outputs(self, loss) -> dict[str, np.ndarray]:
        return w3_outputs(loss, self.grads)


class W4NumPy:
    """P = softmax(S), S = (q/√Dh) kᵀ, out = P v. Backward: ∂v = Pᵀ ∂out, ∂P = ∂out vᵀ,
    ∂S = P ⊙ (∂P − δ) with δ_i = Σ_j ∂P_ij P_ij = ∂out_i · out_i, ∂q = ∂S k/√Dh, ∂k = ∂Sᵀ q/√Dh.
    q is scaled instead of S (L·Dh products, not L²), and the (L, L) buffers are reused."""

    def __init__(self, problem: Problem):
        self.q, self.k, self.v = (problem.arrays[n] for n in "qkv")
        self.grad_out = problem.arrays["grad_out"]

    def step(self):
        q, k, v, grad_out = self.q, self.k, self.v, self.grad_out
        scale = 1.0 / math.sqrt(q.shape[-1])
        q_scaled = q * scale
        weights = q_scaled @ k.swapaxes(-1, -2)                          # S: (B, heads, L, L)
        weights -= weights.max(axis=-1, keepdims=True)                   # no overflow in exp
        np.exp(weights, out=weights)
        weights /= weights.sum(axis=-1, keepdims=True)                   # P
        out = weights @ v                                                # (B, heads, L, Dh)
        grad_v = weights.swapaxes(-1, -2) @ grad_out
        delta = (grad_out * out).sum(axis=-1, keepdims=True)            # Σ_j ∂P_ij P_ij
        grad_scores = grad_out @ v.swapaxes(-1, -2)                      # ∂P, then ∂S in place
        grad_scores -= delta
        grad_scores *= weights
        self.grads = {"q": (grad_scores @ k) * scale,
                      "k": grad_scores.swapaxes(-1, -2) @ q_scaled, "v": grad_v}
        return out

    def outputs(self, out) -> dict[str, np.ndarray]:
        return w4_outputs(out, self.grads)
