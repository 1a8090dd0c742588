"""Step 3 solutions."""

from __future__ import annotations

import numpy as np

import minigrad as mg


def gru_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh):
    gx = x @ weight_ih.T + bias_ih                       # (B, 3H)
    gh = h @ weight_hh.T + bias_hh                       # (B, 3H)
    x_r, x_z, x_n = mg.split(gx, 3, axis=-1)
    h_r, h_z, h_n = mg.split(gh, 3, axis=-1)
    r = mg.sigmoid(x_r + h_r)
    z = mg.sigmoid(x_z + h_z)
    n = mg.tanh(x_n + r * h_n)
    return (1 - z) * n + z * h


class GRUGates(mg.Function):
    """h' from the gate pre-activations gx, gh and the state h."""

    def forward(self, gx, gh, h):
        xp = self.xp
        x_r, x_z, x_n = xp.split(gx, 3, axis=-1)
        h_r, h_z, h_n = xp.split(gh, 3, axis=-1)
        r = 1 / (1 + xp.exp(-(x_r + h_r)))
        z = 1 / (1 + xp.exp(-(x_z + h_z)))
        n = xp.tanh(x_n + r * h_n)
        self.save_for_backward(r, z, n, h_n)
        return (1 - z) * n + z * h

    def backward(self, grad):
        r, z, n, h_n = self.saved_tensors
        g = grad.numpy()
        h = self.inputs[2].numpy()
        grad_n = g * (1 - z)                             # h' = (1 − z) n + z h
        grad_z = g * (h - n)
        grad_h = g * z
        grad_an = grad_n * (1 - n * n)                   # n = tanh(a_n), a_n = x_n + r h_n
        grad_r = grad_an * h_n
        grad_az = grad_z * z * (1 - z)                   # z = σ(a_z)
        grad_ar = grad_r * r * (1 - r)                   # r = σ(a_r)
        grad_gx = np.concatenate([grad_ar, grad_az, grad_an], axis=-1)
        grad_gh = np.concatenate([grad_ar, grad_az, grad_an * r], axis=-1)
        return grad_gx, grad_gh, grad_h


def unrolled_states(z, candidates, h0):
    T = z.shape[0]
    states = np.zeros_like(candidates)
    for t in range(T):
        total = np.prod(z[:t + 1], axis=0) * h0          # Π_{j=1..t} z_j h_0
        for i in range(t + 1):
            total = total + np.prod(z[i + 1:t + 1], axis=0) * (1 - z[i]) * candidates[i]
        states[t] = total
    return states
