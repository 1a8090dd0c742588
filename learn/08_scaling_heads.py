# %% [markdown]
# # Step 8 — Scaling by $1/\sqrt{d}$, and multi-head attention
#
# **Follows:** *Transformers and attention, explained* ("for larger values of n the dot
# product grows large in magnitude and pushes the softmax in regions with small gradients")
# and the *Attention lecture notes* (§14.1.2, the normalised inner product "scales the
# variance to 1 for random keys and queries") — claim **C4**; then *From GRU to Transformer*
# ("Let's have multiple attention heads"), the *Attention and Transformers lecture slides*
# and *Why attention?* — claim **C6**: several heads on their own projections, concatenated,
# then one linear map.
#
# **You write:** the softmax's Jacobian (8.1), the split into heads and the merge back (8.2),
# and multi-head attention (8.3), in `learn/exercises/step08_scaling_heads.py`.

# %%
import numpy as np
import matplotlib.pyplot as plt

import minigrad as mg
import nn
from learn.checks import step08_scaling_heads as check
from learn.exercises import step08_scaling_heads as mine

# %% [markdown]
# ## How large is a dot product?
#
# Take a query and a key with $d$ independent entries of mean 0 and variance 1. Their dot
# product $q\cdot k = \sum_{m=1}^{d} q_m k_m$ is a sum of $d$ independent terms of variance 1,
# so its variance is $d$: in 512 dimensions the scores spread over ±20 and more. Dividing by
# $\sqrt d$ brings the variance back to 1, whatever $d$ is.
#
# Why does the spread matter? Because of what the softmax does with it. Its derivative is a
# matrix, the **Jacobian** $J_{ij} = \partial p_i / \partial s_j$, and it is the only door
# through which gradient reaches the scores, and from them the queries and keys.
#
# ### Exercise 8.1
# Derive $J$ for $p = \mathrm{softmax}(s)$ and write `softmax_jacobian(s)`. (Quotient rule:
# $\partial p_i/\partial s_j = p_i(\delta_{ij} - p_j)$.) The check compares it with finite
# differences and asks what it is for a saturated softmax.

# %%
check.softmax_jacobian(mine.softmax_jacobian)

# %% [markdown]
# When one score is far above the others, $p$ is nearly one-hot, $p_i(\delta_{ij} - p_j)
# \approx 0$ for every entry, and the gradient stops: the soft lookup of step 6 turns back
# into a hard one. Measure it: for each $d$, 16 random keys against random queries, the
# variance of the scores and the mean size $\|J\|$ of your Jacobian, with and without the
# scaling (C4).

# %%
rng = np.random.default_rng(0)
dims = [2, 4, 8, 16, 32, 64, 128, 256, 512]
stats = {"unscaled": {"variance": [], "jacobian": []},
         "scaled by 1/√d": {"variance": [], "jacobian": []}}
for d in dims:
    q = rng.standard_normal((200, d))
    k = rng.standard_normal((200, 16, d))
    raw = np.einsum("nd,nkd->nk", q, k)                                   # (200, 16)
    for name, scores in (("unscaled", raw), ("scaled by 1/√d", raw / np.sqrt(d))):
        stats[name]["variance"].append(scores.var())
        stats[name]["jacobian"].append(np.mean([np.linalg.norm(mine.softmax_jacobian(s))
                                                for s in scores]))
print("d:                ", dims)
for name, values in stats.items():
    print(f"{name:15s} variance:", np.round(values["variance"], 2))
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.4))
for name, values in stats.items():
    left.plot(dims, values["variance"], marker="o", label=name)
    right.plot(dims, values["jacobian"], marker="o", label=name)
left.set(xscale="log", yscale="log", xlabel="d", ylabel="variance of q·k",
         title="score variance")
right.set(xscale="log", xlabel="d", ylabel="mean ‖J‖ (Frobenius)",
          title="gradient through the softmax")
for ax in (left, right):
    ax.grid(alpha=0.3)
    ax.legend()

# %% [markdown]
# Read your numbers: without scaling, the variance grows like $d$ and the Jacobian — the
# gradient the queries and keys get — shrinks towards 0; with the scaling both stay put. The
# notes add the other half of the argument: a query *aligned* with a key still scores
# $O(\sqrt d)$ after scaling, so a real match can still stand out.
#
# ## Several heads
#
# One attention computes one set of weights per position: one way of asking. The text's
# fourth step gives each position several questions at once: $H$ **heads**, each with its own
# query, key and value projections, each attending on its own; their outputs are
# concatenated and mixed by one more linear map $W_O$:
#
# $$\mathrm{head}_h = \mathrm{softmax}\!\big(Q_h K_h^\top / \sqrt{D_h}\big) V_h,\qquad
#   \mathrm{out} = [\mathrm{head}_1; \dots; \mathrm{head}_H]\, W_O^\top .$$
#
# In practice one $(E, E)$ projection computes all heads' queries at once, and head $h$ is
# feature block $h$ of the result ($D_h = E/H$ features each). Splitting is a reshape plus a
# swap of axes; merging is the reverse. No arithmetic, so the cost of $H$ heads of size $E/H$
# is that of one head of size $E$.
#
# ### Exercise 8.2
# Write `split_heads(x, heads)` and `merge_heads(x)`.

# %%
check.split_merge(mine.split_heads, mine.merge_heads)

# %% [markdown]
# ### Exercise 8.3
# Write `multi_head_attention(query, key, value, params, heads, mask=None)` with your split
# and merge, taking its weights from an `nn.MultiHeadAttention`'s state dict. The check
# compares it with that module, and checks that head 0's weights depend on head 0's rows of
# the query projection only.

# %%
check.multi_head_attention(mine.multi_head_attention)

# %% [markdown]
# Your heads, each with its own map, on a random sequence of 6 positions with the causal mask
# of step 7 (an untrained layer: the maps differ only because the heads' projections do;
# `examples/translate.py` shows the heads of a trained model):

# %%
mg.manual_seed(0)
layer = nn.MultiHeadAttention(16, 4)
params = {name: mg.tensor(value) for name, value in layer.state_dict().items()}
x = mg.tensor(np.random.default_rng(1).standard_normal((1, 6, 16)).astype(np.float32) * 2)
out, weights = mine.multi_head_attention(x, x, x, params, 4, mask=np.tril(np.ones((6, 6), bool)))
print("output", out.shape, " weights", weights.shape)
figure = mg.viz.attention_map(weights.numpy()[0], xlabel="key position", ylabel="query position")

# %% [markdown]
# **Next:** step 9 drops the causal mask and finds that attention then cannot tell order at
# all — and adds positions back.
