"""Checks of step 10: your pre-LN block against nn.TransformerEncoderLayer given the same
weights (claims C2 and C7: attention, feed-forward, residuals and layer norm make the layer),
and your decoder-only model's shapes, causality and training (C21)."""

from __future__ import annotations

import numpy as np

import minigrad as mg
import nn

from learn.checks._core import (Wrong, exercise, expect_close, expect_gradients_reach_all,
                                expect_shape, expect_tensor)

FILE = "step10_transformer.py"
EXERCISES = {"10.1": ("PreLNBlock",), "10.2": ("TinyLM",)}
THRESHOLD, BY_STEP = 2.0, 250           # validation nats per character, after this many steps


@exercise("10.1", "PreLNBlock", file=FILE)
def block(PreLNBlock) -> str:
    rng = np.random.default_rng(101)
    d, heads, ff, B, T = 16, 4, 32, 2, 6
    mg.manual_seed(101)
    reference = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, norm_first=True)
    state = reference.state_dict()
    for name in state:                     # layer norms and biases away from 1 and 0
        state[name] = state[name] + (rng.standard_normal(state[name].shape) * 0.2).astype(
            state[name].dtype)
    reference.load_state_dict(state)
    mine = PreLNBlock(d, heads, ff)
    mine.load_state_dict(state)
    x = rng.standard_normal((B, T, d)).astype(np.float32)
    causal = np.tril(np.ones((T, T), dtype=bool))
    for name, mask in (("no mask", None), ("a causal mask", causal)):
        with mg.no_grad():
            want = reference(mg.tensor(x), mask)
        got = expect_tensor("the block's output", mine(mg.tensor(x), mask))
        expect_shape("the block's output", got, (B, T, d))
        expect_close(f"output [b, t, e] with {name} (against nn.TransformerEncoderLayer, "
                     f"norm_first=True)", got, want, atol=1e-5, rtol=1e-4)
    changed = x.copy()
    changed[:, 3:] += 5.0
    moved = np.abs(mine(mg.tensor(changed), causal).numpy()[:, :3]
                   - mine(mg.tensor(x), causal).numpy()[:, :3]).max()
    if moved != 0:
        raise Wrong(f"with the causal mask, outputs at positions 0..2 moved by {moved:.3g} when "
                    f"only inputs from position 3 on changed: pass the mask to self_attn")
    expect_gradients_reach_all(mine, mine(mg.tensor(x), causal))
    return ("matches nn.TransformerEncoderLayer(norm_first=True) with and without a mask "
            "(1e-4, float32), causal under the mask, gradients reach every parameter")


@exercise("10.2", "TinyLM", file=FILE)
def language_model(TinyLM) -> str:
    rng = np.random.default_rng(102)
    vocab, T = 11, 9
    mg.manual_seed(102)
    model = TinyLM(vocab, d_model=16, heads=2, layers=2, context=16)
    tokens = rng.integers(0, vocab, size=(3, T))
    logits = expect_tensor("the logits", model(mg.tensor(tokens)))
    expect_shape("the logits", logits, (3, T, vocab))
    changed = tokens.copy()
    changed[:, 5:] = (changed[:, 5:] + 1) % vocab
    moved = np.abs(model(mg.tensor(changed)).numpy()[:, :5] - logits.numpy()[:, :5]).max()
    if moved != 0:
        raise Wrong(f"logits at positions 0..4 moved by {moved:.3g} when only tokens from "
                    f"position 5 on changed: the model must not see the future (causal mask "
                    f"in every block)")
    moved = np.abs(model(mg.tensor(changed)).numpy()[:, 5:] - logits.numpy()[:, 5:]).max()
    if moved == 0:
        raise Wrong("the logits at positions 5.. did not change when the tokens there did")
    swapped = tokens.copy()
    swapped[:, [0, 1]] = swapped[:, [1, 0]]
    if tokens[0, 0] != tokens[0, 1] and np.abs(
            model(mg.tensor(swapped)).numpy()[0, 2] - logits.numpy()[0, 2]).max() == 0:
        raise Wrong("swapping tokens 0 and 1 left the logits at position 2 unchanged: add "
                    "the positional encoding to the embeddings")
    expect_gradients_reach_all(model, logits)
    return ("logits (B, T, vocab), blind to later tokens, moved by earlier ones and by their "
            "order; gradients reach every parameter")


@exercise("10.2", "TinyLM", file=FILE)
def trained(losses: list[float], validation: float) -> str:
    if len(losses) < BY_STEP:
        raise Wrong(f"train for at least {BY_STEP} steps (got {len(losses)})")
    if not np.isfinite(validation) or validation >= THRESHOLD:
        raise Wrong(f"the validation loss after {len(losses)} steps is {validation:.3f} nats "
                    f"per character, expected below {THRESHOLD} (a model that ignores context "
                    f"stays near 3): check the blocks' residuals and the final norm")
    return f"validation loss {validation:.3f} < {THRESHOLD} nats per character by step {BY_STEP}"
