"""Step 6 solutions."""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg


def nearest_lookup(q, k, v):
    scores = q @ k.swapaxes(-1, -2)                                 # (B, Lq, Lk)
    weights = mg.one_hot(mg.argmax(scores, axis=-1), k.shape[-2], dtype=v.dtype)
    return weights @ v, weights


def soft_lookup(q, k, v):
    weights = mg.softmax(q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1]), axis=-1)
    return weights @ v, weights


def gradient_norms(loss, params):
    names = list(params)
    grads = mg.grad(loss, [params[name] for name in names], retain_graph=True,
                    allow_unused=True)
    return {name: 0.0 if g is None else float(np.sqrt((g.numpy().astype(np.float64) ** 2).sum()))
            for name, g in zip(names, grads)}
