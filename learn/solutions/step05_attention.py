"""Step 5 solutions."""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg


def score_dot(q, k):
    return q @ k.swapaxes(-1, -2)                               # (B, Lq, Lk)


def score_scaled(q, k):
    return q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])


def score_general(q, k, W):
    return q @ W @ k.swapaxes(-1, -2)


def score_additive(q, k, W_q, W_k, v):
    pairs = mg.tanh((q @ W_q.T).unsqueeze(2) + (k @ W_k.T).unsqueeze(1))   # (B, Lq, Lk, A)
    return (pairs * v).sum(axis=-1)


def attend(scores, values, mask=None):
    if mask is not None:
        scores = mg.masked_fill(scores, ~np.asarray(mask, dtype=bool), -np.inf)
    weights = mg.softmax(scores, axis=-1)
    return weights @ values, weights
