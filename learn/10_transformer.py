# %% [markdown]
# # Step 10 — The Transformer layer, and a small language model
#
# **Follows:** *From GRU to Transformer* ("Let's use Non-Linear Attention", "Full
# Self-Attention Layer") — claim **C2**'s last step, a position-wise feed-forward
# non-linearity; *Transformers and attention, explained* and the *Attention and Transformers
# lecture slides* (blocks of self-attention and feed-forward networks with residual
# connections and layer normalisation) — claim **C7**; and the slides' "decoder-only
# transformers have become the mainstream design" — claim **C21**.
#
# **You write:** a pre-LN Transformer block (10.1) and a decoder-only language model of your
# blocks (10.2), in `learn/exercises/step10_transformer.py`. Then it learns to write Python.

# %%
import numpy as np
import matplotlib.pyplot as plt

import minigrad as mg
import nn
import nn.functional as F
from learn import tasks
from learn.checks import step10_transformer as check
from learn.exercises import step10_transformer as mine

# %% [markdown]
# ## The last pieces
#
# After step 9, each position's output is $h_t = [h_t^1; \dots; h_t^H] W_O$, a weighted
# *average* of linear maps of the inputs. The text points at what is missing:
#
# * **a non-linearity.** Averages of linear maps are linear in the values: the layer can
#   move information between positions but hardly transform it. So a small two-layer network
#   $g$ follows, the same at every position: $\mathrm{FFN}(x) = W_2\,\mathrm{relu}(W_1 x + b_1) + b_2$
#   (step 9 measured it: per position, so equivariant);
# * **residual connections.** Each sublayer *adds* to its input, $x \leftarrow x + f(x)$, as
#   the GRU's additive update did in step 3: the identity path carries gradient through any
#   number of layers;
# * **layer normalisation.** Each position's vector is rescaled to mean 0 and variance 1 over
#   its features (then scaled and shifted by learned $\gamma, \beta$), so its size stays put
#   as layers stack. The *pre-LN* arrangement normalises the input of each sublayer and
#   leaves the residual path untouched:
#
# $$x \leftarrow x + \mathrm{MultiHead}(\mathrm{LN}_1(x)),\qquad
#   x \leftarrow x + \mathrm{FFN}(\mathrm{LN}_2(x)).$$
#
# (The original Transformer normalised after each sum, "post-LN"; pre-LN trains more easily
# without a warm-up and is what most models use now.)
#
# ### Exercise 10.1
# Write `PreLNBlock.forward`. Its parts are given and named as in
# `nn.TransformerEncoderLayer`, so the check loads that layer's weights into yours and
# compares the two.

# %%
check.block(mine.PreLNBlock)

# %% [markdown]
# ## A decoder-only language model
#
# A language model predicts each next token from the ones before. Decoder-only Transformers
# do it with causal self-attention only (step 7): the logits at position $t$ see tokens
# $0..t$ and predict token $t+1$, so one forward pass trains every position of a window at
# once. The model: token embeddings plus the sinusoidal positions of step 9, a stack of your
# blocks under the causal mask, a final layer norm (the residual stream of a pre-LN stack is
# never normalised otherwise) and a linear map to one logit per character.
#
# ### Exercise 10.2
# Write `TinyLM.forward`. The check tests its shapes and probes it: logits must not move
# when later tokens change, and must move when earlier tokens swap places.

# %%
check.language_model(mine.TinyLM)

# %% [markdown]
# ## Train it on Python
#
# The text is the source of a few modules of Python's own standard library, read from the
# running Python's files (no download). The first 90 % trains, the last 10 % validates. A
# model that ignored context could at best learn how often each character occurs; that
# entropy is the line to beat.

# %%
text = tasks.stdlib_text()
vocab = tasks.CharVocab(text)
data = vocab.encode(text)
split = int(0.9 * len(data))
counts = np.bincount(data[:split], minlength=len(vocab.chars)) / split
unigram = -np.sum(counts[counts > 0] * np.log(counts[counts > 0]))
print(f"{len(text):,} characters, {len(vocab.chars)} distinct; ln {len(vocab.chars)} = "
      f"{np.log(len(vocab.chars)):.2f} nats (uniform guess), {unigram:.2f} nats (character "
      f"frequencies alone)")

# %%
timer = tasks.Timer()
context = 32
mg.manual_seed(0)
model = mine.TinyLM(len(vocab.chars), d_model=48, heads=4, layers=2, context=context)
losses = tasks.train_lm(model, data[:split], steps=check.BY_STEP, context=context)
with mg.no_grad():
    inputs, targets = tasks.lm_batch(np.random.default_rng(1), data[split:], 128, context)
    validation = F.cross_entropy(model(mg.tensor(inputs)), mg.tensor(targets), axis=-1).item()
print(f"trained {len(losses)} steps in {timer():.1f} s; validation loss {validation:.3f} nats "
      f"per character")
check.trained(losses, validation)

# %%
fig, ax = plt.subplots(figsize=(6, 3.4))
ax.plot(losses, lw=0.8, label="training (one batch)")
ax.axhline(validation, color="tab:green", ls="--", label="validation, at the end")
ax.axhline(unigram, color="gray", ls=":", label="character frequencies alone")
ax.set(xlabel="step", ylabel="nats per character", title="your Transformer learns Python")
ax.legend()
ax.grid(alpha=0.3)

# %%
for prompt in ("def ", "class ", "    if "):
    ids = tasks.sample(model, vocab.encode(prompt), 160, context)
    print(vocab.decode(ids))
    print("-" * 40)

# %% [markdown]
# A couple of hundred steps on two CPU cores: the samples have Python's indentation, its
# keywords and its punctuation, if not yet its meaning. `examples/tiny_gpt.py` trains the
# same design for longer.
#
# ## The path, looking back
#
# Step 3 wrote a GRU's state as a gated sum of its past candidates. Step 7 freed the weights,
# the candidates, and the keys from the values: causal attention. Step 8 scaled the scores
# and ran several heads; step 9 dropped the mask and found order had to be added back; this
# step added the feed-forward network, residuals and layer norm. Each piece was yours, and
# each was checked — by finite differences, exact zeros, probes and parity with a
# reference — rather than by printed digits.
