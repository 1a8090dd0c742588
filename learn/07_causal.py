# %% [markdown]
# # Step 7 — From the GRU to causal attention
#
# **Follows:** *From GRU to Transformer*, its sections "Gated Recurrent Units to Causal
# Attention" (free the dependent weights, free up the candidate vectors, separate keys and
# values) — claim **C2** — and the *Attention and Transformers lecture slides* ("masked
# attention forces attention weights on future values to be 0") — claim **C11**: put −∞ on
# the scores of future positions before the softmax, and their weights become exactly 0.
#
# **You write:** the causal mask (7.1), causal self-attention (7.2) and a probe of which
# output depends on which input (7.3), in `learn/exercises/step07_causal.py`.

# %%
import numpy as np
import matplotlib.pyplot as plt

import minigrad as mg
import nn
from learn import tasks
from learn.checks import step07_causal as check
from learn.exercises import step07_causal as mine

# %% [markdown]
# ## Three dependencies to free
#
# Step 3 unrolled the GRU into a weighted sum of its candidates,
#
# $$h_t = \sum_{i=1}^{t} w_{ti} \odot \tilde h_i, \qquad
#   w_{ti} = \Big[\prod_{j=i+1}^{t} z_j\Big](1 - z_i),$$
#
# (plus $h_0$'s share). Everything in it is tied to everything before: each gate $z_j$ depends
# on $h_{j-1}$, so the weights depend on the whole past; each candidate
# $\tilde h_i = f(x_i, h_{i-1})$ does too; and the same vector $\tilde h_i$ both decides how
# much it counts and is what is counted. The text cuts the ties one at a time:
#
# 1. **Free the dependent weights.** Let the weights come from a score of each candidate
#    against the current input, normalised over the past:
#    $\alpha_{ti} \propto \exp(\mathrm{ATT}(\tilde h_i, x_t))$ for $i \le t$, $\sum_i \alpha_{ti} = 1$.
# 2. **Free the candidates.** Replace $\tilde h_i$ by a function of its own input only,
#    $f(x_i)$ (an embedding, or the layer below): now no position waits for another.
# 3. **Separate keys and values.** One $f$ would serve as query, key and value at once; give
#    each role its own projection:
#    $$\alpha_{ti} \propto \exp\big(q_t \cdot k_i / \sqrt{d}\big),\quad q_t = x_t W_q,\;
#      k_i = x_i W_k,\qquad h_t = \sum_{i \le t} \alpha_{ti}\, v_i,\quad v_i = x_i W_v .$$
#
# That is **causal self-attention**: the GRU's weighted sum over the past, with weights that
# any position can compute at once. (The text's fourth step, several heads, is step 8.)
#
# ## The causal mask
#
# "Over $i \le t$" is a mask: compute every score $q_t \cdot k_i$ as one $(T, T)$ matrix, then
# put $-\infty$ where $i > t$. Since $e^{-\infty} = 0$, those weights are *exactly* zero, not
# small: the future is not down-weighted, it is absent.
#
# ### Exercise 7.1
# Write `causal_mask(T)`.

# %%
check.causal_mask(mine.causal_mask)

# %% [markdown]
# ### Exercise 7.2
# Write `causal_self_attention(x, W_q, W_k, W_v, causal=True)` from the formula above. The
# check compares it with a NumPy loop over the past of each position, and runs the
# **causality probe**: change the inputs after position $t$ and the outputs up to $t$ must
# not move by a single bit, their gradient with respect to those inputs must be exactly 0.

# %%
check.causal_self_attention(mine.causal_self_attention)

# %% [markdown]
# ## What depends on what
#
# The probe generalises into a picture: for every output position $t$ and input position $s$,
# how strongly does $h_t$ depend on $x_s$? One backward pass per row answers it.
#
# ### Exercise 7.3
# Write `dependence(f, x)`: the $(T, T)$ matrix of gradient norms
# $\|\partial (\sum_j h_{tj}) / \partial x_s\|$.

# %%
check.dependence(mine.dependence)

# %%
T, D = 10, 8
rng = np.random.default_rng(0)
x = mg.tensor(rng.standard_normal((1, T, D)), requires_grad=True)
Ws = [mg.tensor(rng.standard_normal((D, D)) / np.sqrt(D)) for _ in range(3)]
mg.manual_seed(0)
gru = nn.GRU(D, D)
maps = {"GRU": mine.dependence(lambda v: gru(v.astype("float32"))[0], x),
        "causal attention": mine.dependence(lambda v: mine.causal_self_attention(v, *Ws)[0], x),
        "attention, no mask": mine.dependence(
            lambda v: mine.causal_self_attention(v, *Ws, causal=False)[0], x)}
fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
for ax, (name, grid) in zip(axes, maps.items()):
    ax.imshow(np.where(grid > 0, grid, np.nan), cmap="viridis")
    ax.set(title=name, xlabel="input position s", ylabel="output position t")
    print(f"{name:20s}: exactly zero above the diagonal: {bool(np.all(np.triu(grid, 1) == 0))}")
fig.suptitle("‖∂h_t/∂x_s‖ (blank: exactly 0)")

# %% [markdown]
# The GRU and causal attention share the triangle: neither looks ahead. What differs is the
# path: in the GRU, $x_s$ reaches $h_t$ through $t - s$ recurrent steps; in attention through
# one weighted sum, however far apart they are.
#
# ## Trained, side by side
#
# Both models now learn one causal task: at every position, say the largest digit read so
# far. Each embeds the digits, mixes the positions (a GRU, or your causal attention) and reads
# out 10 logits per position. Then, as step 3 promised, the GRU's implicit weights of its
# candidates (the $w_{ti}$ above, averaged over units) stand next to the attention weights
# $\alpha_{ti}$ on one sequence.

# %%
class GRUTagger(nn.Module):
    def __init__(self, dim: int = 16):
        super().__init__()
        self.embed = nn.Embedding(tasks.DIGITS, dim)
        self.gru = nn.GRU(dim, dim)
        self.readout = nn.Linear(dim, tasks.DIGITS)

    def forward(self, digits):
        return self.readout(self.gru(self.embed(digits))[0])


class AttentionTagger(nn.Module):
    """Embedding, your causal self-attention with learned W_q, W_k, W_v, a readout."""

    def __init__(self, dim: int = 16):
        super().__init__()
        self.embed = nn.Embedding(tasks.DIGITS, dim)
        self.W_q, self.W_k, self.W_v = (nn.Parameter(mg.randn(dim, dim) * dim ** -0.5)
                                        for _ in range(3))
        self.readout = nn.Linear(dim, tasks.DIGITS)

    def forward(self, digits, return_weights=False):
        h, weights = mine.causal_self_attention(self.embed(digits), self.W_q, self.W_k, self.W_v)
        return (self.readout(h), weights) if return_weights else self.readout(h)


timer = tasks.Timer()
make_batch = lambda rng: tasks.running_max_batch(rng, 32, 8)
test = tasks.running_max_batch(np.random.default_rng(99), 200, 8)
models, curves = {}, {}
for name, cls in (("GRU", GRUTagger), ("causal attention", AttentionTagger)):
    mg.manual_seed(0)
    models[name] = cls()
    curves[name] = tasks.train_labels(models[name], make_batch, steps=120)
    print(f"{name:16s}: last 10 steps' mean loss {np.mean(curves[name][-10:]):.3f}, test accuracy "
          f"{tasks.label_accuracy(models[name], *test):.1%}")
print(f"trained in {timer():.1f} s")

# %%
sequence = np.array([[2, 7, 1, 3, 8, 0, 4, 5]])
with mg.no_grad():
    _, _, gates = models["GRU"].gru(models["GRU"].embed(mg.tensor(sequence)), return_gates=True)
    _, alpha = models["causal attention"](mg.tensor(sequence), return_weights=True)
z = gates[0].z.numpy()[0].astype(np.float64)                           # (T, H)
implicit = np.zeros((len(z), len(z)))
for t in range(len(z)):
    for i in range(t + 1):
        implicit[t, i] = np.mean(np.prod(z[i + 1:t + 1], axis=0) * (1 - z[i]))
labels = [str(d) for d in sequence[0]]
fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), gridspec_kw={"width_ratios": (1.2, 1, 1)})
for name, curve in curves.items():
    axes[0].plot(curve, label=name, lw=0.9)
axes[0].set(xlabel="step", ylabel="cross-entropy (nats)", title="training")
axes[0].legend()
axes[0].grid(alpha=0.3)
mg.viz.attention_map([implicit, alpha.numpy()[0]], [labels, labels], [labels, labels],
                     titles=["GRU: weight of candidate i in h_t", "causal attention: α_ti"],
                     xlabel="digit i", ylabel="position t (digit)", axes=axes[1:])

# %% [markdown]
# Compare your two maps. Both are triangles over the past. The attention rows can put their
# weight on any earlier digit directly — for this task, on the largest so far — while the
# GRU's weights are products of gates and can only fade with distance or be kept by
# $z \approx 1$ all the way.
#
# **Next:** step 8 asks why the scores are divided by $\sqrt d$, and runs several attentions
# side by side: heads.
