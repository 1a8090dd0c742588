# %% [markdown]
# # Step 5 — Attention over the encoder's states
#
# **Follows:** *Why attention? The encoder bottleneck* (its worked decoder step and its list of
# score functions), *Transformers and attention, explained* (the similarity score and softmax)
# and the *Attention and Transformers lecture slides* (the alignment map, "read with care") —
# claims **C19** (score functions), **C16** (the worked decoder step, with exact numbers) and
# **C14** (an attention map shows the alignment between output and input).
#
# **You write:** four score functions (5.1) and attention with a mask (5.2), in
# `learn/exercises/step05_attention.py`. Then the model of step 4 trains with your attention.

# %%
import numpy as np
import matplotlib.pyplot as plt

import minigrad as mg
import nn
from learn import tasks
from learn.checks import step05_attention as check
from learn.exercises import step05_attention as mine
from learn.earlier import shift_right, greedy_decode

# %% [markdown]
# ## Look back at every encoder state
#
# Step 4's decoder saw the source only through $h_L$. Attention keeps all encoder states
# $h_1 \dots h_L$ and, at every decoder step $t$, lets the decoder state $s_t$ (the **query**)
# score each of them (the **keys**), turn the scores into weights with a softmax, and take the
# weighted average of the states (the **values**) as a *context* vector $c_t$:
#
# $$e_{tj} = \mathrm{score}(s_t, h_j),\qquad
#   \alpha_{tj} = \frac{e^{e_{tj}}}{\sum_{j'} e^{e_{tj'}}},\qquad
#   c_t = \sum_j \alpha_{tj}\, h_j .$$
#
# The weights are positive and sum to 1: a soft choice of where to look. The texts list the
# usual score functions:
#
# | name | score$(q, k)$ |
# |---|---|
# | dot | $q \cdot k$ |
# | scaled dot | $q \cdot k / \sqrt{D}$ (step 8 shows why) |
# | general (bilinear) | $q^\top W k$ |
# | additive (the original, Bahdanau et al.) | $v^\top \tanh(W_q q + W_k k)$ |
#
# ### Exercise 5.1
# Write the four functions for whole batches: queries (B, Lq, D), keys (B, Lk, D), scores
# (B, Lq, Lk). The check compares each with NumPy loops and runs `gradcheck` on it.

# %%
check.scores(mine.score_dot, mine.score_scaled, mine.score_general, mine.score_additive)

# %% [markdown]
# ## Softmax, context, and a mask
#
# Batches mix sentences of different lengths, padded to one length; padding must get no
# attention. A **mask** (True where attention is allowed) sets the disallowed scores to
# $-\infty$ before the softmax: $e^{-\infty} = 0$ exactly, so those weights are exactly zero,
# the allowed ones still sum to 1, and no gradient reaches the masked scores.
#
# ### Exercise 5.2
# Write `attend(scores, values, mask=None)`. The check starts with the worked decoder step of
# *Why attention?*: encoder states $h_1..h_4$ = [1,1], [3,2], [2,4], [1,5] and decoder state
# $s_1$ = [2,1] give dot scores [3, 8, 8, 7].

# %%
check.attend(mine.attend)

# %%
H = mg.tensor(np.array([[[1.0, 1], [3, 2], [2, 4], [1, 5]]]))
s1 = mg.tensor(np.array([[[2.0, 1]]]))
context, weights = mine.attend(mine.score_dot(s1, H), H)
print("scores :", mine.score_dot(s1, H).numpy().ravel())
print("weights:", weights.numpy().ravel().round(4), " (the text rounds to [0.003, 0.45, 0.45, 0.097])")
print("context:", context.numpy().ravel().round(3), " (the text prints [2.35, 3.19])")

# %% [markdown]
# The text's rounded weights do not sum to 1 and its context is off; your exact numbers above
# are the ones to trust — one reason this path checks properties rather than printed digits.
#
# ## Train with your attention
#
# `MyAttention` wraps your general score (with a learned $W$) and your `attend` as a layer;
# step 4's model uses it between its decoder GRU and its readout. Both models — without and
# with attention, each with a 32-unit state — train for the same 300 steps on the same
# batches of 64 strings of 2 to 12 digits, and are tested up to 14 digits. Step 4's exercises
# (`shift_right`, `greedy_decode`) are given here in `learn/earlier.py`, so this step does not
# depend on yours.

# %%
class MyAttention(nn.Module):
    """Your general (bilinear) score and your attend as a layer with a learned W:
    (query, keys, values) -> (context, weights)."""

    def __init__(self, dim: int):
        super().__init__()
        self.W = nn.Parameter(mg.randn(dim, dim) * dim ** -0.5)

    def forward(self, query, keys, values, mask=None):
        return mine.attend(mine.score_general(query, keys, self.W), values, mask)


timer = tasks.Timer()
curves, models = {}, {}
for name, attention in (("no attention", None), ("your attention", MyAttention(32))):
    mg.manual_seed(0)
    models[name] = tasks.Seq2Seq(hidden=32, attention=attention)
    losses = tasks.train_reversal(models[name], shift_right, steps=300, lengths=range(2, 13),
                                  batch=64)
    curves[name] = tasks.accuracy_by_length(models[name], greedy_decode, range(2, 15))
    print(f"{name}: last 20 steps' mean loss {np.mean(losses[-20:]):.3f}, digits right at "
          f"length 9: {curves[name][9]:.1%}, at 12: {curves[name][12]:.1%}, at 14: "
          f"{curves[name][14]:.1%}")
print(f"both trained in {timer():.1f} s")

# %%
fig, ax = plt.subplots(figsize=(6, 3.6))
tasks.plot_accuracy(ax, curves, trained_up_to=12, title="reversal, same training budget")

# %% [markdown]
# Compare the two curves of your run. Short strings come back from both. As strings grow,
# the model without attention falls towards chance, since 32 numbers must carry every digit,
# while the model with attention looks each digit up where it lies in the encoder's states
# and falls much more slowly. Neither has seen strings of 13 or 14 digits. The project's
# `examples/bottleneck.py` trains longer on a harder task.
#
# ## The alignment map (C14)
#
# Each row is one output digit, each column one source digit, the colour the weight
# $\alpha_{tj}$. For reversal the right alignment is the anti-diagonal: output 1 should look at
# source $L$. Read such maps with care (as the slides warn): they show *where* the model looked,
# not *why*, and the encoder states it looked at have already mixed in their neighbours.

# %%
model = models["your attention"]
source = np.array([[3, 1, 4, 1, 5, 9, 2, 6]])
with mg.no_grad():
    memory, state = model.encode(mg.tensor(source))
    output = greedy_decode(model.step_function(memory), state, tasks.BOS, source.shape[1])
    _, _, alignment = model.decode(mg.tensor(shift_right(output, tasks.BOS)), state, memory)
print("source:", source[0], " output:", output[0])
figure = mg.viz.attention_map(alignment.numpy()[0], [str(d) for d in output[0]],
                              [str(d) for d in source[0]], xlabel="source digit",
                              ylabel="output digit")

# %% [markdown]
# **Next:** step 6 asks why the weights must be *soft*: a hard choice of one key would give no
# gradient to the query and keys that made the choice.
