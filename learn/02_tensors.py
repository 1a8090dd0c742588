# %% [markdown]
# # Step 2 — Tensors, broadcasting, and a primitive of your own
#
# **Follows:** the background of every text: attention is written with matrices ("it's mostly
# just matrix multiplications", as the *Attention and Transformers lecture slides* put it), and
# the softmax that turns scores into weights appears in all five texts. You build the softmax
# here as a primitive with its own backward; step 5 uses it for attention.
#
# **You write:** `sum_to_shape` (exercise 2.1) and a `Softmax` primitive (exercise 2.2) in
# `learn/exercises/step02_tensors.py`.

# %%
import numpy as np
import matplotlib.pyplot as plt

import minigrad as mg
from learn.checks import step02_tensors as check
from learn.exercises import step02_tensors as mine

# %% [markdown]
# ## From numbers to arrays
#
# A minigrad `Tensor` is a NumPy array plus the graph bookkeeping of step 1. An operation on
# tensors is one node, however many elements it touches; its backward receives the whole
# upstream gradient array $\partial L/\partial y$ (the same shape as $y$) and returns one
# gradient array per input. For an elementwise $y = a \odot b$ that is simply
# $\bar a = \bar y \odot b$ and $\bar b = \bar y \odot a$.
#
# **Broadcasting** lets shapes differ: `x` of shape (3, 1) plus `w` of shape (4,) gives (3, 4).
# NumPy first *prepends* size-1 axes to the shorter shape — (4,) becomes (1, 4) — then
# *stretches* every size-1 axis to match. Each element of `w` is used 3 times, once per row,
# and by step 1's fan-out rule its gradient is the **sum** of those 3 contributions. So the
# backward of a broadcast is a sum back to the input's shape ("sum-to-shape").

# %%
x = mg.tensor(np.arange(3.0).reshape(3, 1), requires_grad=True)
w = mg.tensor(np.array([1.0, 10.0, 100.0, 1000.0]), requires_grad=True)
y = x + w
print("y.shape:", y.shape)
y.sum().backward()
print("x.grad (each x used 4 times):", x.grad.numpy().ravel())
print("w.grad (each w used 3 times):", w.grad.numpy())

# %% [markdown]
# ### Exercise 2.1
# Write `sum_to_shape(grad, shape)` in NumPy: sum over the prepended axes, then over the
# stretched size-1 axes (keeping them), and return exactly `shape` — which may be `()`, a
# 0-d scalar. minigrad runs this after every backward; `mg.sum_to` is its version.

# %%
check.sum_to_shape(mine.sum_to_shape)

# %% [markdown]
# ## Writing a primitive: softmax
#
# $$\mathrm{softmax}(x)_i = \frac{e^{x_i}}{\sum_j e^{x_j}}$$
#
# turns any scores into positive weights that sum to 1. Two facts make a good primitive of it:
#
# * **Stability.** $e^{1000}$ overflows float64. Since softmax does not change when the same
#   number is subtracted from every $x_i$, subtract the row's maximum first: the largest
#   exponent is then $e^0 = 1$.
# * **A compact backward.** The Jacobian is $\partial y_i/\partial x_k = y_i(\delta_{ik} - y_k)$.
#   Multiply by the upstream gradient $g$ and sum over $i$:
#   $\bar x_k = y_k\,(g_k - \sum_i g_i y_i)$. One line, and no Jacobian matrix is ever built.
#
# In minigrad a primitive is a subclass of `mg.Function` with `forward` (NumPy arrays in, an
# array out, via `self.xp`) and `backward` (the upstream gradient as a Tensor in, written with
# minigrad operations so that it can itself be differentiated). `self.output` is $y$.
#
# Two tools check a backward:
# * `mg.gradcheck(fn, inputs)` compares it with central differences in float64 (step 1's
#   referee), and names the input and element that disagree.
# * `mg.check_backward(Cls, inputs)` runs your `forward` a second time with minigrad operations
#   standing in for NumPy's, differentiates that exactly, and compares it with your `backward`
#   — no finite-difference noise.
#
# ### Exercise 2.2
# Write `Softmax.forward` and `Softmax.backward`.

# %%
check.softmax_function(mine.Softmax)

# %% [markdown]
# The Jacobian $\mathrm{diag}(y) - y y^\top$ of your softmax at one point, built one column at
# a time by backward passes with one-hot upstream gradients — the rows sum to 0 because the
# outputs always sum to 1:

# %%
z = mg.tensor(np.array([2.0, 1.0, 0.1, -1.0]), requires_grad=True)
columns = []
for k in range(4):
    z.grad = None
    mine.softmax(z).backward(mg.tensor(np.eye(4)[k]))       # ∂y_k/∂z
    columns.append(z.grad.numpy())
jacobian = np.stack(columns)
fig, ax = plt.subplots(figsize=(4, 3.4))
image = ax.imshow(jacobian, cmap="RdBu", vmin=-0.3, vmax=0.3)
ax.set(title="∂softmax(z)_i / ∂z_k", xlabel="k", ylabel="i")
fig.colorbar(image)
print("softmax(z) =", mine.softmax(z).numpy().round(4))
print(f"largest |row sum| of the Jacobian: {np.abs(jacobian.sum(axis=1)).max():.1e}")

# %% [markdown]
# **Next:** step 3 writes a GRU cell with these tools, and shows that its state is already a
# weighted sum of everything it has seen — the first step from recurrence towards attention.
