"""Positional encodings: attention is blind to order, so position is added to (or concatenated
with) the inputs.

    PE[t, 2i]   = sin(t / base^(2i/d))
    PE[t, 2i+1] = cos(t / base^(2i/d))          (Vaswani et al. 2017, §3.5; base = 10000)

Each pair of columns (2i, 2i+1) turns at its own frequency ω_i = base^(−2i/d), so shifting the
position by φ rotates every pair by the angle ω_i φ:

    PE[t + φ] = R(φ) PE[t],   R(φ) = block-diag of [[cos ω_i φ, sin ω_i φ], [−sin ω_i φ, cos ω_i φ]]

R(φ) does not depend on t: relative offsets are linear maps of the encoding.
"""

from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad import Tensor

from . import init
from .module import Module, Parameter

__all__ = ["sinusoidal_encoding", "SinusoidalPositionalEncoding", "LearnedPositionalEmbedding"]


def _frequencies(d_model: int, base: float) -> np.ndarray:
    """ω_i = base^(−2i/d) for i = 0 .. ⌈d/2⌉ − 1 (float64)."""
    return base ** (-np.arange(0, d_model, 2, dtype=np.float64) / d_model)


def sinusoidal_encoding(length: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The table PE (length, d_model), float64: PE[t, 2i] = sin(t ω_i), PE[t, 2i+1] = cos(t ω_i),
    ω_i = base^(−2i/d). An odd d_model ends with a sine column."""
    if length < 0 or d_model < 1:
        raise ValueError(f"sinusoidal_encoding: need length >= 0 and d_model >= 1, got "
                         f"{length} and {d_model}")
    t = np.arange(length, dtype=np.float64)[:, None]                 # (L, 1)
    angles = t * _frequencies(d_model, base)                         # (L, ⌈d/2⌉)
    pe = np.empty((length, d_model), dtype=np.float64)
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, :d_model // 2])
    return pe


class SinusoidalPositionalEncoding(Module):
    """Fixed sinusoidal positions, added to the input or concatenated with it.

        mode="add":    y = x + PE[:T]             x (B, T, d_model) -> (B, T, d_model)
        mode="concat": y = [x; PE[:T]]            x (B, T, D)       -> (B, T, D + d_model)

    Concatenating keeps content and position in separate features, so a query can match
    either. The table (max_len, d_model) is a non-persistent buffer `pe` (not in the
    state dict: it is a function of the arguments).
    """

    def __init__(self, d_model: int, max_len: int = 5000, base: float = 10000.0,
                 mode: str = "add"):
        super().__init__()
        if mode not in ("add", "concat"):
            raise ValueError(f"SinusoidalPositionalEncoding: mode must be 'add' or 'concat', "
                             f"got {mode!r}")
        self.d_model, self.max_len, self.base, self.mode = int(d_model), int(max_len), \
            float(base), mode
        table = sinusoidal_encoding(self.max_len, self.d_model, self.base).astype(
            mg.get_default_dtype())
        self.register_buffer("pe", mg.tensor(table), persistent=False)

    def shift_matrix(self, phi: float) -> np.ndarray:
        """R(φ) (d_model, d_model), float64, with PE[t + φ] = R(φ) PE[t] for every t:
        one 2×2 rotation by ω_i φ per (sin, cos) column pair (a lone last sine column of an
        odd d_model has no partner, so it is not covered)."""
        R = np.zeros((self.d_model, self.d_model))
        for i, w in enumerate(_frequencies(self.d_model, self.base)[: self.d_model // 2]):
            c, s = np.cos(w * phi), np.sin(w * phi)
            # sin(ω(t+φ)) = sin ωt cos ωφ + cos ωt sin ωφ
            # cos(ω(t+φ)) = cos ωt cos ωφ − sin ωt sin ωφ
            R[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
        return R

    def forward(self, x: Tensor) -> Tensor:
        """x: (B, T, d_model) for "add", (B, T, D) for "concat". Returns x + PE[:T] (B, T,
        d_model) or [x; PE[:T]] (B, T, D + d_model)."""
        name = "SinusoidalPositionalEncoding"
        if x.ndim != 3 or (self.mode == "add" and x.shape[-1] != self.d_model):
            want = f"(B, T, {self.d_model})" if self.mode == "add" else "(B, T, D)"
            raise ValueError(f"{name}: input must be {want}, got shape {tuple(x.shape)}")
        B, T = x.shape[0], x.shape[1]
        if T > self.max_len:
            raise ValueError(f"{name}: sequence length {T} exceeds max_len {self.max_len}")
        pe = self.pe[:T]                                      # (T, d_model)
        if pe.dtype != x.dtype:
            pe = pe.astype(x.dtype)
        if self.mode == "add":
            return x + pe                                     # (B, T, d_model)
        pe = pe.unsqueeze(0).broadcast_to((B, T, self.d_model))
        return mg.concat([x, pe], axis=-1)                    # (B, T, D + d_model)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}, base={self.base}, " \
               f"mode={self.mode!r}"


class LearnedPositionalEmbedding(Module):
    """A trained vector per position, added to the input: y = x + weight[:T].

    weight: (max_len, d_model) ~ N(0, 1) (as nn.Embedding). x (B, T, d_model) -> same shape.
    Unlike the sinusoidal table it cannot go beyond max_len.
    """

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.max_len, self.d_model = int(max_len), int(d_model)
        self.weight = Parameter(mg.zeros(self.max_len, self.d_model))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw weight again from N(0, 1)."""
        init.normal_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        """x: (B, T, d_model). Returns x + weight[:T]."""
        name = "LearnedPositionalEmbedding"
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"{name}: input must be (B, T, {self.d_model}), got shape "
                             f"{tuple(x.shape)}")
        if x.shape[1] > self.max_len:
            raise ValueError(f"{name}: sequence length {x.shape[1]} exceeds max_len "
                             f"{self.max_len}")
        return x + self.weight[:x.shape[1]]                  # (B, T, d_model)

    def extra_repr(self) -> str:
        return f"max_len={self.max_len}, d_model={self.d_model}"
