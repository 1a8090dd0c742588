"""Step 10 exercises: a pre-LN Transformer block, and a decoder-only language model built of
your blocks."""

from __future__ import annotations

import numpy as np

import minigrad as mg
import nn


# -- exercise 10.1 ------------------------------------------------------------------------------

class PreLNBlock(nn.Module):
    """One pre-LN Transformer layer. Its parts are given, named as in nn.TransformerEncoderLayer
    (so that layer's weights load into it); write forward."""

    def __init__(self, d_model: int, heads: int, d_ff: int):
        super().__init__()
        self.self_attn = nn.MultiHeadAttention(d_model, heads)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x: mg.Tensor, mask=None) -> mg.Tensor:
        """x (B, T, d_model) -> (B, T, d_model), in two residual steps:

            x = x + SelfAttention(norm1(x))              (self_attn(a, a, a, mask)[0])
            x = x + linear2(relu(linear1(norm2(x))))     (the position-wise feed-forward net)

        mask: None or bool, True = allowed, passed to self_attn."""
        raise NotImplementedError


# -- exercise 10.2 ------------------------------------------------------------------------------

class TinyLM(nn.Module):
    """A decoder-only language model: token embeddings plus sinusoidal positions, `layers` of
    your PreLNBlock under a causal mask, a final LayerNorm and a linear map to next-token
    logits. Its parts are given; write forward."""

    def __init__(self, vocab: int, d_model: int = 48, heads: int = 4, layers: int = 2,
                 context: int = 64):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.positions = nn.SinusoidalPositionalEncoding(d_model, max_len=context)
        self.blocks = nn.ModuleList(PreLNBlock(d_model, heads, 2 * d_model)
                                    for _ in range(layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens: mg.Tensor) -> mg.Tensor:
        """tokens (B, T) int -> logits (B, T, vocab), the logits at t predicting token t + 1
        from tokens 0..t only:

            x = positions(embed(tokens));  x = block(x, causal mask) for each block;
            logits = head(norm(x))

        The causal mask is (T, T), True on and below the diagonal (nn.causal_mask(T) makes
        one)."""
        raise NotImplementedError
