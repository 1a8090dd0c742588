# %% [markdown]
# # Step 3 — A GRU cell, its backward, and its state as a weighted sum
#
# **Follows:** *From GRU to Transformer* (the article that builds self-attention step by step
# from gated recurrent units), its section "Gated Recurrent Neural Networks" and "What are these
# shortcut connections" — claim **C1**: the GRU's additive update unrolls into a weighted sum of
# all earlier candidate vectors.
#
# **You write:** the GRU cell with minigrad operations (3.1), its gate arithmetic as one
# primitive with a hand-written backward (3.2), and the unrolled weighted sum (3.3), in
# `learn/exercises/step03_gru.py`.

# %%
import numpy as np
import matplotlib.pyplot as plt

import minigrad as mg
import nn
from learn.checks import step03_gru as check
from learn.exercises import step03_gru as mine

# %% [markdown]
# ## The GRU
#
# A recurrent network reads a sequence $x_1, \dots, x_T$ one vector at a time and keeps a state
# $h_t$ that should summarise everything read so far. The gated recurrent unit (GRU) computes,
# with $\sigma$ the logistic sigmoid and $\odot$ the elementwise product:
#
# $$\begin{aligned}
# r_t &= \sigma(W_{ir} x_t + b_{ir} + W_{hr} h_{t-1} + b_{hr}) &&\text{reset gate}\\
# z_t &= \sigma(W_{iz} x_t + b_{iz} + W_{hz} h_{t-1} + b_{hz}) &&\text{update gate}\\
# n_t &= \tanh(W_{in} x_t + b_{in} + r_t \odot (W_{hn} h_{t-1} + b_{hn})) &&\text{candidate } \tilde h_t\\
# h_t &= (1 - z_t) \odot n_t + z_t \odot h_{t-1}
# \end{aligned}$$
#
# (minigrad's and PyTorch's convention; the text writes $u_t$ for the gate and has it multiply
# $h_{t-1}$ the same way.) The last line is the key: the new state is a *gated average* of the
# old state and a candidate. With $z_t \approx 1$ the state is copied through unchanged; with
# $z_t \approx 0$ it is replaced by the candidate.
#
# ### Exercise 3.1
# Write `gru_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh)` with minigrad operations. The
# check compares it with `nn.GRUCell` given the same weights.

# %%
check.gru_cell(mine.gru_cell)

# %% [markdown]
# ## The backward of the gates, by hand
#
# Your `gru_cell` is a graph of a dozen small operations, and minigrad differentiates it. A
# framework often fuses such a chain into one primitive with a hand-written backward (fewer
# nodes, less memory). Split the cell after its two matrix products, $g^x = W_{ih} x + b_{ih}$
# and $g^h = W_{hh} h + b_{hh}$, and differentiate the rest. With $\bar h'$ the upstream
# gradient, step 1's recipe gives, line by line from the bottom:
#
# $$\bar n = \bar h' \odot (1 - z),\quad \bar z = \bar h' \odot (h - n),\quad \bar h = \bar h' \odot z,$$
# $$\bar a_n = \bar n \odot (1 - n^2),\quad \bar r = \bar a_n \odot g^h_n,\quad
#   \bar a_z = \bar z \odot z(1-z),\quad \bar a_r = \bar r \odot r(1-r),$$
#
# and $\bar g^x = [\bar a_r; \bar a_z; \bar a_n]$, $\bar g^h = [\bar a_r; \bar a_z; \bar a_n \odot r]$
# (the reset gate multiplies only $g^h_n$).
#
# ### Exercise 3.2
# Write the `GRUGates` primitive: `forward` on arrays, `backward` from the formulas above. The
# check runs `mg.gradcheck` on it (float64, central differences) and names the input and
# element of a wrong gradient.

# %%
check.gru_gates(mine.GRUGates)

# %%
mg.manual_seed(0)
cell = nn.GRUCell(4, 6)
w = {k: mg.tensor(v.astype(np.float64)) for k, v in cell.state_dict().items()}
x = mg.tensor(np.random.default_rng(0).standard_normal((2, 4)))
h = mg.zeros((2, 6), dtype="float64")
fused = mine.GRUGates.apply(x @ w["weight_ih"].T + w["bias_ih"], h @ w["weight_hh"].T + w["bias_hh"], h)
plain = mine.gru_cell(x, h, w["weight_ih"], w["weight_hh"], w["bias_ih"], w["bias_hh"])
print(f"largest difference between your fused and your plain cell: "
      f"{np.abs(fused.numpy() - plain.numpy()).max():.1e}")

# %% [markdown]
# ## The shortcut: a GRU's state is a weighted sum of its candidates (C1)
#
# Unroll $h_t = z_t \odot h_{t-1} + (1 - z_t)\odot n_t$ once, twice, ... all the way to $h_0$:
#
# $$h_t = \sum_{i=1}^{t} \Big[\prod_{j=i+1}^{t} z_j\Big] (1 - z_i) \odot n_i
#        \;+\; \Big[\prod_{j=1}^{t} z_j\Big] \odot h_0 .$$
#
# The state at $t$ is a **weighted sum of every earlier candidate** $n_i$, candidate $i$
# weighted by "written at $i$" ($1 - z_i$) times "kept ever since" ($\prod_{j>i} z_j$). The
# weights are non-negative and, with $h_0$'s weight, sum to 1 in every hidden unit. This is
# the shortcut connection the text points at, and it already looks like attention: a weighted
# average over the past. The difference is *how* the weights arise — as products of gates,
# each depending on the previous state. Step 7 frees them.
#
# (The text writes the weights as $\prod_{j=1}^{t-i+1} u_j \prod_{k=1}^{i-1}(1-u_k)$; that
# index form is slightly off — the formula above is the exact one, and your check proves it.)
#
# ### Exercise 3.3
# Write `unrolled_states(z, candidates, h0)` from the formula, with sums and products. The
# check reads the gates of a real `nn.GRU` and compares your sums with its recurrent states.

# %%
check.unrolled_states(mine.unrolled_states)

# %% [markdown]
# The implicit weights $\prod_{j=i+1}^{t} z_j (1 - z_i)$ of an (untrained) GRU on a random
# sequence, averaged over hidden units: row $t$ shows how much of each past candidate is in
# $h_t$. Step 7 draws the same picture for a trained GRU next to causal attention.

# %%
mg.manual_seed(1)
gru = nn.GRU(8, 16)
with mg.no_grad():
    _, _, gates = gru(mg.randn(1, 12, 8), return_gates=True)
z = gates[0].z.numpy()[0].astype(np.float64)                       # (T, H)
T = z.shape[0]
implicit = np.zeros((T, T))
for t in range(T):
    for i in range(t + 1):
        implicit[t, i] = np.mean(np.prod(z[i + 1:t + 1], axis=0) * (1 - z[i]))
fig, ax = plt.subplots(figsize=(4.5, 3.8))
image = ax.imshow(implicit, cmap="viridis")
ax.set(title="GRU: weight of candidate i in h_t", xlabel="candidate i", ylabel="state t")
fig.colorbar(image)
print("weights of h_1..h_T plus h_0's weight, summed over i (mean over units):",
      (implicit.sum(axis=1) + np.mean(np.cumprod(z, axis=0), axis=1)).round(6))

# %% [markdown]
# **Next:** step 4 uses GRUs as an encoder and a decoder, and measures what happens when a
# whole sentence must pass through the one vector $h_T$.
