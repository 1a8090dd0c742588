# %% [markdown]
# # Step 4 — The encoder–decoder and its bottleneck
#
# **Follows:** *Why attention? The encoder bottleneck* (a blog post that works through an
# encoder–decoder by hand), the *Attention and Transformers lecture slides* ("challenging to
# encode entire sentence in hidden state") and the *Attention lecture notes* (§14.1.1) — claim
# **C12**: an RNN encoder–decoder squeezes the whole source into one vector, and quality falls
# as sentences grow.
#
# **You write:** the teacher-forcing shift (4.1) and greedy decoding (4.2), in
# `learn/exercises/step04_bottleneck.py`. A model trains for a few seconds with them.

# %%
import numpy as np
import matplotlib.pyplot as plt

import minigrad as mg
from learn import tasks
from learn.checks import step04_bottleneck as check
from learn.exercises import step04_bottleneck as mine

# %% [markdown]
# ## Encoder and decoder
#
# Translation maps a sequence to a sequence of another length and order. The classic design
# uses two recurrent networks:
#
# * the **encoder** GRU reads the source $x_1 \dots x_L$ and ends in a state $h_L$;
# * the **decoder** GRU starts from $s_0 = h_L$ and writes the target one token at a time,
#   each step reading the token it wrote before.
#
# Everything the decoder knows about the source passes through the one vector $h_L$: that is
# the bottleneck. Our task makes it easy to measure: the source is a random string of digits
# and the target is the same string **reversed**, so the first output digit is the last input
# digit, and the last output the first input — the longest path through the recurrence.
#
# **Teacher forcing.** In training, the decoder at step $t$ reads the *true* previous target
# token $y_{t-1}$ (a "begin" token at $t = 1$) instead of its own guess: all steps then train
# at once, and an early mistake does not derail the rest.
#
# ### Exercise 4.1
# Write `shift_right(target, bos)`: the decoder's inputs, `bos` followed by all but the last
# target token.

# %%
check.shift_right(mine.shift_right)

# %% [markdown]
# **Greedy decoding.** At test time there is no true previous token: the decoder reads its own
# previous output. The simplest rule takes the most likely token at every step (the argmax)
# and feeds it back with the new state.
#
# ### Exercise 4.2
# Write `greedy_decode(step, state, bos, length)`.

# %%
check.greedy_decode(mine.greedy_decode)

# %% [markdown]
# ## Training, and accuracy against length
#
# `learn/tasks.py` holds the model (`Seq2Seq`: an embedding, a GRU encoder, a GRU decoder, a
# readout) and a training loop (Adam on cross-entropy), which uses your `shift_right`. We train
# on strings of 2 to 9 digits and measure, with your `greedy_decode`, the fraction of output
# digits right for each length from 2 to 12 (lengths 10–12 were never seen in training).

# %%
timer = tasks.Timer()
mg.manual_seed(0)
model = tasks.Seq2Seq()
losses = tasks.train_reversal(model, mine.shift_right, steps=250, lengths=range(2, 10))
accuracy = tasks.accuracy_by_length(model, mine.greedy_decode, range(2, 13))
print(f"trained {len(losses)} steps in {timer():.1f} s; "
      f"last 20 steps' mean loss {np.mean(losses[-20:]):.3f}")
for length, value in accuracy.items():
    print(f"length {length:2d}: {value:.1%} of digits right")

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
left.plot(losses, lw=0.8)
left.set(xlabel="step", ylabel="cross-entropy (nats)", title="training loss")
left.grid(alpha=0.3)
tasks.plot_accuracy(right, {"no attention": accuracy}, trained_up_to=9,
                    title="the bottleneck: accuracy falls with length")

# %% [markdown]
# Read the curve from the run above: short strings come back well, and accuracy falls as the
# string grows, because a fixed-size vector holds a growing string less and less exactly — and
# the first digits read, which are the last to be written, have had the longest way to go.
# Try `tasks.Seq2Seq(hidden=128)` to see how far a bigger $h_L$ moves the curve.
#
# **Next:** step 5 keeps *all* encoder states and lets the decoder look back at them at every
# step: attention.
