"""Step 10 solutions: forward methods for the given classes."""

from __future__ import annotations

import minigrad as mg
import nn

from learn.exercises import step10_transformer as given


class PreLNBlock(given.PreLNBlock):
    def forward(self, x, mask=None):
        a = self.norm1(x)
        x = x + self.self_attn(a, a, a, mask)[0]
        return x + self.linear2(mg.relu(self.linear1(self.norm2(x))))


class TinyLM(given.TinyLM):
    def forward(self, tokens):
        x = self.positions(self.embed(tokens))
        mask = nn.causal_mask(tokens.shape[1])
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.norm(x))
