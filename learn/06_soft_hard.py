# %% [markdown]
# # Step 6 — Soft versus hard lookup
#
# **Follows:** the *Attention lecture notes* (§14.1.2, "queries, keys and values": three ideas
# for a lookup table a network can learn) and *Transformers and attention, explained* ("a
# retrieval mechanism in which the keys may not be exactly equal to the query") — claim
# **C18**: an exact-match lookup returns nothing at initialisation and gives no gradient; a
# nearest-key lookup gives gradient to the values but none to the queries or keys; the
# softmax-weighted average gives gradients to queries, keys and values.
#
# **You write:** a hard and a soft lookup (6.1) and a measure of which tensors a loss sends
# gradient to (6.2), in `learn/exercises/step06_soft_hard.py`.

# %%
import numpy as np
import matplotlib.pyplot as plt

import minigrad as mg
import nn
from learn import tasks
from learn.checks import step06_soft_hard as check
from learn.exercises import step06_soft_hard as mine

# %% [markdown]
# ## Attention is a lookup table
#
# A hash table stores values under keys and returns the value whose key equals the query.
# Step 5's attention is a table too: the decoder state asks (the query), the encoder states
# answer (keys and values). But the queries and keys of a network are vectors it *learns*,
# and learning needs gradients. The notes try three designs:
#
# 1. **exact match** — return the value whose key equals the query. At initialisation random
#    queries match no key: nothing comes back, and a small change of query or key still
#    matches nothing, so no gradient flows anywhere;
# 2. **nearest key** — return the value of the best-scoring key, $\arg\max_j q\cdot k_j$.
#    Something comes back and the values get gradient, but a small change of $q$ or $k$ almost
#    never changes *which* key wins: $\partial\,\mathrm{output}/\partial q = 0$;
# 3. **soft** — return the softmax-weighted average of all values. Every weight moves with
#    $q$ and every $k_j$, so queries, keys and values all get gradient.
#
# "Whenever we make a hard decision, there's a gradient problem. We need to soften this hard
# decision." — the notes.
#
# ### Exercise 6.1
# Write `nearest_lookup` (idea 2) and `soft_lookup` (idea 3, with scores scaled by $1/\sqrt D$).
# The check compares them with NumPy, looks at the gradients each lets through, and checks
# that the soft lookup of a query scaled up a millionfold *is* the nearest-key lookup.

# %%
check.lookups(mine.nearest_lookup, mine.soft_lookup)

# %% [markdown]
# ## Why the hard choice gives no gradient
#
# Turn a query of length 2 from −20° to 170°, past four unit keys at 0°, 50°, 100° and 150°
# whose values are 0, 1, 2 and 3, and watch the output. The nearest-key lookup is a staircase: flat
# between jumps, so its derivative is 0 wherever it exists. The soft lookup is a smooth ramp
# with a slope everywhere.

# %%
angles = np.deg2rad([0.0, 50.0, 100.0, 150.0])
keys = np.stack([np.cos(angles), np.sin(angles)], axis=1)[None]          # (1, 4, 2)
values = np.array([[[0.0], [1.0], [2.0], [3.0]]])                         # (1, 4, 1)
sweep = np.deg2rad(np.linspace(-20, 170, 200))
queries = 2 * np.stack([np.cos(sweep), np.sin(sweep)], axis=1)[None]     # (1, 200, 2)
outputs = {name: lookup(mg.tensor(queries), mg.tensor(keys), mg.tensor(values))[0].numpy()[0, :, 0]
           for name, lookup in (("nearest key", mine.nearest_lookup), ("soft", mine.soft_lookup))}
fig, ax = plt.subplots(figsize=(6, 3.2))
for (name, out), colour in zip(outputs.items(), ("tab:orange", "tab:blue")):
    ax.plot(np.rad2deg(sweep), out, color=colour, label=name)
for angle in np.rad2deg(angles):
    ax.axvline(angle, color="gray", lw=0.5, ls=":")
ax.set(xlabel="query angle (degrees; dotted: the keys)", ylabel="output",
       title="the value looked up as the query turns")
ax.legend()
ax.grid(alpha=0.3)

# %% [markdown]
# ## Where does the gradient go?
#
# To see the claim on a model, measure the gradient each parameter receives. A tensor can get
# no gradient in two ways: no differentiable path leads to it (then autodiff has nothing to
# give and `mg.grad` returns `None`), or every path multiplies by a zero (then the gradient is
# an array of exact zeros). Both mean the parameter cannot learn.
#
# ### Exercise 6.2
# Write `gradient_norms(loss, params)`: the norm of $\partial\,\mathrm{loss}/\partial p$ for
# each named tensor, 0.0 where no gradient arrives.

# %%
check.gradient_norms(mine.gradient_norms)

# %% [markdown]
# ## The claim on a retrieval task (C18)
#
# `tasks.Retriever` puts learned projections in front of a lookup: $q = W_q x_q$,
# $k_i = W_k x_i$, $u_i = W_v v_i$. Each example holds 8 random keys with random values; the
# query is a hidden rotation of one key plus noise, and the model must return that key's
# value. It can only succeed by *learning* $W_q$ and $W_k$ so that the rotated query lands
# next to its key. The exact-match lookup is `nn.HardAttention(mode="exact")`.

# %%
exact = nn.HardAttention(mode="exact", scaled=False)
lookups = {"exact match": exact, "nearest key": mine.nearest_lookup, "soft": mine.soft_lookup}
batch = tasks.retrieval_batch(np.random.default_rng(0), 32, 8, 8, tasks.hidden_rotation(8))
print(f"{'lookup':12s} {'loss':>6s} {'‖∂L/∂W_q‖':>10s} {'‖∂L/∂W_k‖':>10s} {'‖∂L/∂W_v‖':>10s}")
for name, lookup in lookups.items():
    mg.manual_seed(0)
    model = tasks.Retriever(lookup, 8)
    loss, _ = tasks.retrieval_loss(model, batch)
    norms = mine.gradient_norms(loss, {"W_q": model.W_q, "W_k": model.W_k, "W_v": model.W_v})
    print(f"{name:12s} {loss.item():6.3f} {norms['W_q']:10.4f} {norms['W_k']:10.4f} "
          f"{norms['W_v']:10.4f}")

# %% [markdown]
# Your table is the claim: exact match sends gradient nowhere (its output is all zeros),
# the nearest key only to the values' projection, the soft lookup to all three.
#
# ## Train each one
#
# Same initial weights, same batches, 150 Adam steps each. The accuracy counts an example
# right when the largest weight sits on the right key (chance: 1 in 8).

# %%
timer = tasks.Timer()
histories = {}
for name, lookup in lookups.items():
    mg.manual_seed(0)
    histories[name] = tasks.train_retrieval(tasks.Retriever(lookup, 8), steps=150)
    print(f"{name:12s}: mean of the last 20 steps: loss {np.mean(histories[name]['loss'][-20:]):.3f}, "
          f"right key {np.mean(histories[name]['accuracy'][-20:]):.0%}")
print(f"trained in {timer():.1f} s")

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.4))
colours = {"exact match": "tab:red", "nearest key": "tab:orange", "soft": "tab:blue"}
for name, history in histories.items():
    left.plot(history["loss"], color=colours[name], label=name, lw=0.9)
    right.plot(np.convolve(history["accuracy"], np.ones(10) / 10, mode="valid"),
               color=colours[name], label=name)
left.set(xlabel="step", ylabel="mean squared error", title="loss")
right.axhline(1 / 8, color="gray", ls=":", label="chance")
right.set(xlabel="step", ylabel="right key (10-step mean)", ylim=(0, 1.05),
          title="retrieval accuracy")
for ax in (left, right):
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)

# %% [markdown]
# Read your curves: the exact-match model never moves; the nearest-key model lowers its loss a
# little by shrinking $W_v$ towards the average value, but its accuracy stays where the random
# initial $W_q$ and $W_k$ put it, because the choice of key cannot learn; the soft model
# learns to find the key. After training, a soft model can still be *run* with a hard choice
# (its weights are sharp); what it cannot do without the softmax is learn.
#
# **Next:** step 7 returns to the GRU of step 3 and frees its weights one by one until it
# becomes causal attention.
