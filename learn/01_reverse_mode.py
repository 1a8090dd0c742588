# %% [markdown]
# # Step 1 — Reverse mode by hand
#
# **Follows:** the background every one of the path's texts assumes: a network is trained by
# gradient descent, and the gradient comes from reverse-mode automatic differentiation
# (backpropagation). No claim of the texts is tested here; step 3 starts on them.
#
# **You write:** a gradient derived by hand (exercise 1.1) and the reverse walk over a graph
# of scalars (exercise 1.2), in `learn/exercises/step01_reverse_mode.py`.
#
# **How to work:** open that file next to this notebook, replace a `raise NotImplementedError`
# with your code, then run the cell that calls `check...`. A check tests *your* code against
# minigrad and against finite differences, with stated tolerances, and says which number is
# wrong. From the command line, `python -m learn.run 1` runs this whole lesson with your code.

# %%
import math

import numpy as np
import matplotlib.pyplot as plt

import minigrad as mg
from learn.checks import step01_reverse_mode as check
from learn.exercises import step01_reverse_mode as mine

# %% [markdown]
# ## A computation is a graph
#
# Take $f(a, b, c) = \tanh(a b + c)\cdot a$. Evaluating it means computing named intermediate
# values, each from a few earlier ones:
#
# $$e = a b,\qquad d = e + c,\qquad t = \tanh d,\qquad f = t\,a .$$
#
# Every line is a node of a graph whose edges point from inputs to results. Each node knows its
# **local derivatives**: $\partial e/\partial a = b$, $\partial d/\partial e = 1$,
# $\partial t/\partial d = 1 - t^2$, $\partial f/\partial t = a$, and so on.
#
# **The chain rule in reverse.** Start at the output with $\partial f/\partial f = 1$ and walk
# the lines backwards. Each node's gradient $\bar v = \partial f/\partial v$ is known once every
# node that *uses* $v$ has been visited, and then
#
# $$\bar u \mathrel{+}= \frac{\partial v}{\partial u}\,\bar v \quad\text{for every input } u \text{ of } v.$$
#
# One backward walk gives the derivative with respect to *every* input, at about the cost of one
# forward pass. That is why training networks with millions of parameters is possible.
#
# **Why gradients add (fan-out).** $a$ is used twice: by $e = ab$ and by $f = t a$. Nudge $a$ by
# $\varepsilon$ and both uses move $f$, so to first order the effects add:
# $\partial f/\partial a = t + \bar e\, b$. A node used $k$ times collects $k$ contributions.
#
# ### Exercise 1.1
# Write `grad_by_hand(a, b, c)`: the forward lines above, then the reverse lines, returning
# `(f, (df_da, df_db, df_dc))`.

# %%
check.grad_by_hand(mine.grad_by_hand)

# %% [markdown]
# The check compared your numbers with minigrad, which builds the same graph from tensors and
# walks it backwards:

# %%
a, b, c = (mg.tensor(np.float64(v), requires_grad=True) for v in (0.7, -1.2, 0.3))
f = (a * b + c).tanh() * a
f.backward()
print("minigrad:   f =", f.item(), " grads:", a.grad.item(), b.grad.item(), c.grad.item())
print("your code:  f =", *mine.grad_by_hand(0.7, -1.2, 0.3))

# %% [markdown]
# ## Finite differences: the independent referee
#
# A derivative is a limit, $\partial f/\partial a \approx (f(a+\varepsilon) - f(a-\varepsilon))/2\varepsilon$
# (central differences, error $O(\varepsilon^2)$). Too large an $\varepsilon$ and the
# $O(\varepsilon^2)$ term dominates; too small and float64's rounding (about $10^{-16}$ relative)
# is divided by $\varepsilon$. The figure shows both regimes for $\partial f/\partial a$ —
# and why every gradient check in this path runs in float64 with $\varepsilon$ near $10^{-6}$.

# %%
_, (exact, _, _) = mine.grad_by_hand(0.7, -1.2, 0.3)
f_np = lambda a: math.tanh(a * -1.2 + 0.3) * a
epsilons = np.logspace(-13, -1, 49)
errors = [abs((f_np(0.7 + e) - f_np(0.7 - e)) / (2 * e) - exact) for e in epsilons]
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.loglog(epsilons, np.maximum(errors, 1e-17), marker=".")
ax.set(xlabel="step ε", ylabel="|central difference − exact|",
       title="Finite differences: truncation (right) against rounding (left)")
ax.grid(alpha=0.3)
best = epsilons[int(np.argmin(errors))]
print(f"smallest error {min(errors):.1e} at ε = {best:.1e}")

# %% [markdown]
# ## The general walk
#
# Exercise 1.1 followed one fixed graph. A framework does the same for any graph, in two
# phases:
#
# 1. **Topological order**: list the nodes so that every node comes after all of its inputs.
#    A depth-first search that appends a node once all its inputs are listed does it. Write it
#    with an explicit stack: a recurrent network unrolled over a long sequence is thousands of
#    nodes deep, and Python's recursion stops at about a thousand.
# 2. **Reverse accumulation**: set every grad to 0 and the output's to 1; then for each node in
#    *reverse* order, add `local_grad * node.grad` into each input's grad. Reverse topological
#    order guarantees that a node's grad is complete (every user has contributed) before it is
#    passed on.
#
# `learn/exercises/step01_reverse_mode.py` gives you a tiny `Node` class: `x * y`, `x + y` and
# `x.tanh()` build nodes that record their `inputs` and `local_grads`.
#
# ### Exercise 1.2
# Write `backward(output)`. The check runs it on `x * x` (one operation using `x` twice), on 20
# random graphs with reused values (against minigrad), and on a chain 5000 operations deep.

# %%
check.backward(mine.backward)

# %%
x = mine.Node(2.0, name="x")
y = mine.Node(-0.5, name="y")
out = (x * y + x).tanh() * x          # x is used three times
mine.backward(out)
print(f"∂out/∂x = {x.grad:.6f}   ∂out/∂y = {y.grad:.6f}")

# %% [markdown]
# minigrad's `Tensor.backward` is the same algorithm, with arrays instead of numbers (step 2)
# and a `Function` object per operation holding the local derivative rule. Its graph walk is
# in `minigrad/autograd.py`; read it now: it should look familiar.
#
# **Next:** step 2 moves from scalars to tensors, where broadcasting adds a twist to the
# backward rule, and you write a primitive of your own.
