# %% [markdown]
# # Step 9 — Non-causal attention, permutation equivariance, and positions
#
# **Follows:** *From GRU to Transformer* ("Gated Recurrent Units to Non-Causal Attention": look
# at the entire sequence, then "give a sense of position"), the *Attention and Transformers
# lecture slides* ("self-attention is a permutation-equivariant neural network module"; "the
# masked attention removes the permutation equivariant property") — claim **C10**; *Transformers
# and attention, explained* and the slides (the sinusoidal encoding) — claim **C8**; and the
# *Attention lecture notes* (§14.1.3: a shift of position is a multiplication, $e^{j\omega(t+\phi)}
# = e^{j\omega t} e^{j\omega\phi}$) — claim **C9**.
#
# **You write:** a measure of equivariance (9.1), the sinusoidal encoding (9.2) and the shift
# as a rotation (9.3), in `learn/exercises/step09_positions.py`.

# %%
import numpy as np
import matplotlib.pyplot as plt

import minigrad as mg
import nn
from learn import tasks
from learn.checks import step09_positions as check
from learn.exercises import step09_positions as mine

# %% [markdown]
# ## Drop the mask, and order is gone
#
# Step 7's weights range over $i \le t$ because a GRU reads left to right. Nothing in
# attention needs that: an encoder may let every position look at every other,
# $h_t = \sum_{i=1}^{T}\alpha_{ti} v_i$ — non-causal attention. But look at what it computes.
# The score of $t$ and $i$ depends on the *contents* $x_t$ and $x_i$ only, never on where they
# stand. Shuffle the positions with a permutation $P$ and every output is still computed — it
# just lands in the shuffled place:
#
# $$A(PX) = P\,A(X).$$
#
# (The slides' proof: $\mathrm{softmax}(P S P^\top) = P\,\mathrm{softmax}(S)\,P^\top$ for a
# permutation, and $P^\top P = I$.) A layer with this property is **permutation-equivariant**;
# followed by a mean over positions it cannot tell "dog bites man" from "man bites dog".
#
# ### Exercise 9.1
# Write `equivariance_gap(f, x, order)`: $\max |f(Px) - P f(x)|$ for one reordering.

# %%
check.equivariance_gap(mine.equivariance_gap)

# %% [markdown]
# Now measure attention (C10): `nn.MultiHeadAttention` as self-attention, the same with the
# causal mask, and a feed-forward layer at every position.

# %%
mg.manual_seed(0)
attention = nn.MultiHeadAttention(8, 2)
feed_forward = nn.FeedForward(8, 16)
x = np.random.default_rng(0).standard_normal((2, 6, 8)).astype(np.float32)
order = np.array([4, 2, 0, 5, 1, 3])
causal = np.tril(np.ones((6, 6), dtype=bool))
layers = {"self-attention": lambda v: attention(v, v, v)[0],
          "self-attention, causal mask": lambda v: attention(v, v, v, mask=causal)[0],
          "feed-forward, per position": feed_forward}
for name, f in layers.items():
    print(f"{name:28s} gap {mine.equivariance_gap(f, x, order):.2e}")

# %% [markdown]
# Your gaps: float32 rounding (about $10^{-7}$) for self-attention and the feed-forward
# layer — equivariant — and order one for the causal mask, which ties position $t$ to the
# positions before it (the slides' caveat). So an encoder built of these layers needs
# positions put into its inputs.
#
# ## Sinusoidal positions (C8)
#
# The Transformer adds to each input $x_t$ a vector $\mathrm{PE}(t)$ of sines and cosines of
# $t$ at $D/2$ frequencies $\omega_i = \mathrm{base}^{-2i/D}$ (geometrically spaced, from one
# turn per $2\pi$ positions down to one per $2\pi\cdot\mathrm{base}$):
#
# $$\mathrm{PE}(t)_{2i} = \sin(\omega_i t),\qquad \mathrm{PE}(t)_{2i+1} = \cos(\omega_i t).$$
#
# The paper's base is 10000; *Transformers and attention, explained* writes 1e5, so keep it a
# parameter.
#
# ### Exercise 9.2
# Write `sinusoidal_encoding(T, D, base)`.

# %%
check.sinusoidal_encoding(mine.sinusoidal_encoding)

# %%
pe = mine.sinusoidal_encoding(50, 32)
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
image = left.imshow(pe, cmap="RdBu", aspect="auto")
left.set(xlabel="feature (even: sin, odd: cos)", ylabel="position t", title="PE(t)")
fig.colorbar(image, ax=left)
image = right.imshow(pe @ pe.T, cmap="viridis")
right.set(xlabel="position s", ylabel="position t", title="PE(t) · PE(s)")
fig.colorbar(image, ax=right)

# %% [markdown]
# The dot products on the right depend only on $t - s$ (every diagonal is constant): the
# encoding makes *relative* position visible to a dot-product score.
#
# ## A shift is a rotation (C9)
#
# Why relative? Each pair $(\sin\omega_i t, \cos\omega_i t)$ is a point on a circle turning at
# speed $\omega_i$. Moving from $t$ to $t + \phi$ turns it by the angle $\omega_i\phi$, the same
# for every $t$ — in complex numbers $e^{j\omega(t+\phi)} = e^{j\omega\phi}\,e^{j\omega t}$. So
# there is one matrix $R(\phi)$, a 2×2 rotation per pair, with
# $\mathrm{PE}(t+\phi) = R(\phi)\,\mathrm{PE}(t)$ for all $t$. A layer can learn "look 3 back"
# as one fixed linear map.
#
# ### Exercise 9.3
# Write `shift_rotation(phi, D, base)`; the check asks for the identity at 1e-6 for many $t$
# and $\phi$.

# %%
check.shift_rotation(mine.shift_rotation)

# %% [markdown]
# ## An order probe
#
# A task that order decides: is the first digit of a sequence smaller than the last? Reversing
# a sequence flips the answer. Two models, each an embedding, one self-attention layer with a
# residual, the mean over positions and a readout — one with your positional encoding added to
# the embeddings, one without. The one without is equivariant then averaged, so it gives a
# sequence and its reverse *the same* output: it cannot beat a coin.

# %%
class OrderClassifier(nn.Module):
    def __init__(self, positions: np.ndarray | None, dim: int = 16):
        super().__init__()
        self.embed = nn.Embedding(tasks.DIGITS, dim)
        self.attention = nn.MultiHeadAttention(dim, 2)
        self.feed_forward = nn.FeedForward(dim, 2 * dim)
        self.readout = nn.Linear(dim, 2)
        self.positions = None if positions is None else mg.tensor(positions.astype(np.float32))

    def forward(self, digits):
        x = self.embed(digits)
        if self.positions is not None:
            x = x + self.positions[:digits.shape[1]]
        x = x + self.attention(x, x, x)[0]
        x = x + self.feed_forward(x)
        return self.readout(x.mean(axis=1))


timer = tasks.Timer()
make_batch = lambda rng: tasks.order_batch(rng, 64, 6)
test = tasks.order_batch(np.random.default_rng(99), 500, 6)
probe = test[0][:5]
histories = {}
for name, positions in (("no positions", None),
                        ("sinusoidal positions", mine.sinusoidal_encoding(6, 16))):
    mg.manual_seed(0)
    model = OrderClassifier(positions)
    histories[name] = tasks.train_labels(model, make_batch, steps=150, lr=1e-2)
    with mg.no_grad():
        flipped = model(mg.tensor(probe[:, ::-1].copy())).numpy()
        flip = np.abs(model(mg.tensor(probe)).numpy() - flipped).max()
    print(f"{name:21s}: test accuracy {tasks.label_accuracy(model, *test):.1%}; largest change of "
          f"a logit when the sequence is reversed: {flip:.2e}")
print(f"trained in {timer():.1f} s")

# %%
fig, ax = plt.subplots(figsize=(6, 3.2))
for name, losses in histories.items():
    ax.plot(np.convolve(losses, np.ones(10) / 10, mode="valid"), label=name)
ax.axhline(np.log(2), color="gray", ls=":", label="a coin: ln 2")
ax.set(xlabel="step", ylabel="cross-entropy (10-step mean)",
       title="is the first digit smaller than the last?")
ax.legend()
ax.grid(alpha=0.3)

# %% [markdown]
# Read your probe: without positions the reversed sequence gives the same logits to rounding,
# so the loss stays at $\ln 2$; with your encoding the model learns the task. *From GRU to
# Transformer* also notes that a fixed sinusoidal encoding, unlike a learned one, exists at
# lengths never seen in training.
#
# **Next:** step 10 adds the last pieces — a feed-forward network, layer norm, residuals — and
# builds a Transformer layer, then a small language model from it.
