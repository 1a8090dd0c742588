"""Given code the lessons share (not exercises): small tasks, models and training loops.

Steps 4 and 5 use the reversal task: the source is a random string of digits, the target the
same digits reversed. Every batch holds sequences of one length, so no padding is needed, and a
model is scored per length: the bottleneck shows as accuracy falling with length.
"""

from __future__ import annotations

import time

import numpy as np

import minigrad as mg
import nn
import nn.functional as F

DIGITS = 10
BOS = 10                        # "begin" token fed to the decoder at its first step
VOCAB = 11


def reversal_batch(rng: np.random.Generator, size: int, length: int):
    """source (B, L) digits, target (B, L) the same digits reversed; int64."""
    source = rng.integers(0, DIGITS, size=(size, length))
    return source, source[:, ::-1].copy()


class Seq2Seq(nn.Module):
    """A GRU encoder and a GRU decoder; with `attention` (an nn attention module) each decoder
    state queries the encoder's states (Luong et al. 2015, attention after the recurrence):

        s_t = GRU(embed(y_{t−1}), s_{t−1}),  c_t, α_t = attention(s_t, H, H),
        logits_t = W_o tanh(W_c [s_t; c_t])
    and without it logits_t = W_o tanh(W_c s_t): the decoder sees the source only through its
    start state s_0 = h_L, the encoder's last state (the bottleneck).
    """

    def __init__(self, hidden: int = 48, embed: int = 16, attention: nn.Module | None = None):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, embed)
        self.encoder = nn.GRU(embed, hidden)
        self.decoder = nn.GRU(embed, hidden)
        self.attention = attention
        self.combine = nn.Linear(2 * hidden if attention is not None else hidden, hidden)
        self.readout = nn.Linear(hidden, DIGITS)

    def encode(self, source: mg.Tensor) -> tuple[mg.Tensor, mg.Tensor]:
        """source (B, L) -> encoder states (B, L, H), decoder start state s_0 = h_L (1, B, H)."""
        return self.encoder(self.embed(source))

    def decode(self, inputs: mg.Tensor, state: mg.Tensor, memory: mg.Tensor):
        """Decoder inputs (B, T) from state (1, B, H) -> logits (B, T, 10), the last state
        (1, B, H), attention weights (B, T, L) or None."""
        states, state = self.decoder(self.embed(inputs), state)             # (B, T, H)
        features, weights = states, None
        if self.attention is not None:
            context, weights = self.attention(states, memory, memory)       # (B, T, H)
            features = mg.concat([states, context], axis=-1)
        return self.readout(mg.tanh(self.combine(features))), state, weights

    def forward(self, source: mg.Tensor, decoder_inputs: mg.Tensor) -> mg.Tensor:
        """Teacher forcing: logits (B, T, 10) for decoder inputs (B, T)."""
        memory, state = self.encode(source)
        return self.decode(decoder_inputs, state, memory)[0]

    def step_function(self, memory: mg.Tensor):
        """One decoder step for greedy decoding: (token (B,) int, state) -> (logits (B, 10),
        new state)."""
        def step(token: mg.Tensor, state: mg.Tensor):
            logits, state, _ = self.decode(token.reshape(-1, 1), state, memory)
            return logits[:, 0], state
        return step


def clipped_step(model, optimizer, loss) -> float:
    """One optimiser step on `loss`, the gradient's norm clipped to 1; returns the loss."""
    optimizer.zero_grad()
    loss.backward()
    nn.clip_grad_norm(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()


def train_reversal(model: Seq2Seq, shift_right, steps: int, lengths: range, seed: int = 0,
                   batch: int = 32, lr: float = 2e-2) -> list[float]:
    """Adam on random batches (one length each, drawn from `lengths`); returns the losses.
    `shift_right(target, bos)` makes the decoder's teacher-forcing inputs."""
    rng = np.random.default_rng(seed)
    optimizer = nn.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        source, target = reversal_batch(rng, batch, int(rng.choice(lengths)))
        logits = model(mg.tensor(source), mg.tensor(shift_right(target, BOS)))
        loss = F.cross_entropy(logits, mg.tensor(target), axis=-1)
        losses.append(clipped_step(model, optimizer, loss))
    return losses


def accuracy_by_length(model: Seq2Seq, decode, lengths: range, count: int = 100,
                       seed: int = 99) -> dict[int, float]:
    """Digit accuracy (the fraction of output digits right) per length on held-out sequences,
    decoded greedily by `decode(step_fn, start_state, bos, length)`."""
    rng = np.random.default_rng(seed)
    result = {}
    with mg.no_grad():
        for length in lengths:
            source, target = reversal_batch(rng, count, length)
            memory, state = model.encode(mg.tensor(source))
            predicted = np.asarray(decode(model.step_function(memory), state, BOS, length))
            result[length] = float(np.mean(predicted == target))
    return result


class Timer:
    """Seconds since creation, for printing how long a lesson's training took."""

    def __init__(self):
        self.start = time.perf_counter()

    def __call__(self) -> float:
        return time.perf_counter() - self.start


# -- step 6: key–value retrieval ----------------------------------------------------------------
# Each example holds N random keys x_1..x_N (D,) with random values v_1..v_N (Dv,); the query is
# a fixed hidden rotation A of one key plus a little noise, x_q = A x_j + ε, and the answer is
# v_j. A model can only find j by learning projections under which A x_j and x_j match.

def hidden_rotation(dim: int, seed: int = 0) -> np.ndarray:
    """A fixed random orthogonal (dim, dim) matrix A."""
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((dim, dim)))
    return q * np.sign(np.diag(r))


def retrieval_batch(rng: np.random.Generator, size: int, num_keys: int, dim: int,
                    rotation: np.ndarray, noise: float = 0.1):
    """query (B, 1, D), keys (B, N, D), values (B, N, D), the index j of the right key (B,);
    float64 arrays (the index int64)."""
    keys = rng.standard_normal((size, num_keys, dim))
    values = rng.standard_normal((size, num_keys, dim))
    target = rng.integers(0, num_keys, size=size)
    query = keys[np.arange(size), target] @ rotation.T + noise * rng.standard_normal((size, dim))
    return query[:, None], keys, values, target


class Retriever(nn.Module):
    """Learned projections in front of a lookup function:

        q = W_q x_q,  k_i = W_k x_i,  u_i = W_v v_i,  output = lookup(q, k, u)

    `lookup(q (B, 1, d), k (B, N, d), u (B, N, D)) -> (output (B, 1, D), weights (B, 1, N))`."""

    def __init__(self, lookup, dim: int):
        super().__init__()
        self.lookup = lookup
        self.W_q = nn.Parameter(mg.randn(dim, dim, dtype="float64") * dim ** -0.5)
        self.W_k = nn.Parameter(mg.randn(dim, dim, dtype="float64") * dim ** -0.5)
        self.W_v = nn.Parameter(mg.randn(dim, dim, dtype="float64") * dim ** -0.5)

    def forward(self, query, keys, values):
        return self.lookup(query @ self.W_q.T, keys @ self.W_k.T, values @ self.W_v.T)


def retrieval_loss(model: Retriever, batch) -> tuple[mg.Tensor, float]:
    """Mean squared error between the output and the right value, and the fraction of
    examples whose largest weight sits on the right key (all-zero weights count as wrong)."""
    query, keys, values, target = batch
    output, weights = model(mg.tensor(query), mg.tensor(keys), mg.tensor(values))
    wanted = values[np.arange(len(target)), target][:, None]           # (B, 1, D)
    loss = ((output - mg.tensor(wanted)) ** 2).mean()
    w = weights.numpy()[:, 0]
    hit = (w.argmax(axis=-1) == target) & (w.max(axis=-1) > 0)
    return loss, float(hit.mean())


def train_retrieval(model: Retriever, steps: int, num_keys: int = 8, dim: int = 8,
                    batch: int = 32, lr: float = 1e-2, seed: int = 0) -> dict[str, list[float]]:
    """Adam on fresh batches; returns the per-step losses and accuracies."""
    rng = np.random.default_rng(seed)
    rotation = hidden_rotation(dim)
    optimizer = nn.optim.Adam(model.parameters(), lr=lr)
    history = {"loss": [], "accuracy": []}
    for _ in range(steps):
        loss, accuracy = retrieval_loss(model, retrieval_batch(rng, batch, num_keys, dim,
                                                               rotation))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history["loss"].append(loss.item())
        history["accuracy"].append(accuracy)
    return history


# -- step 7: a label at every position ------------------------------------------------------------

def running_max_batch(rng: np.random.Generator, size: int, length: int):
    """digits (B, T) and, at each position t, the largest digit so far (B, T); int64. A causal
    task: the label at t depends on the inputs up to t only."""
    digits = rng.integers(0, DIGITS, size=(size, length))
    return digits, np.maximum.accumulate(digits, axis=1)


def train_labels(model: nn.Module, make_batch, steps: int, lr: float = 2e-2,
                 seed: int = 0) -> list[float]:
    """Adam on cross-entropy between model(inputs) (B, T, C) logits and labels (B, T), on fresh
    batches `make_batch(rng)`; returns the losses."""
    rng = np.random.default_rng(seed)
    optimizer = nn.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        inputs, labels = make_batch(rng)
        loss = F.cross_entropy(model(mg.tensor(inputs)), mg.tensor(labels), axis=-1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def label_accuracy(model: nn.Module, inputs: np.ndarray, labels: np.ndarray) -> float:
    """The fraction of positions whose argmax logit is the label."""
    with mg.no_grad():
        predicted = model(mg.tensor(inputs)).numpy().argmax(axis=-1)
    return float(np.mean(predicted == labels))


# -- step 9: a task that needs order -------------------------------------------------------------

def order_batch(rng: np.random.Generator, size: int, length: int):
    """digits (B, T) whose first and last digits differ, and the label 1 where the first is
    the smaller, else 0 (B,); int64. Reversing a sequence flips its label, so a model blind
    to order cannot beat chance."""
    digits = rng.integers(0, DIGITS, size=(size, length))
    same = digits[:, 0] == digits[:, -1]
    digits[same, -1] = (digits[same, 0] + rng.integers(1, DIGITS, size=int(same.sum()))) % DIGITS
    return digits, (digits[:, 0] < digits[:, -1]).astype(np.int64)


# -- step 10: characters of Python's own standard library -----------------------------------------

def stdlib_text(modules: tuple[str, ...] = ("textwrap", "string", "functools", "argparse")) -> str:
    """The source of a few standard-library modules of the running Python, read from disk
    (no download), joined in the given order; characters outside printable ASCII, tab and
    newline become "?"."""
    import importlib
    import inspect
    from pathlib import Path

    keep = {chr(i) for i in range(32, 127)} | {"\n", "\t"}
    parts = [Path(inspect.getsourcefile(importlib.import_module(name))).read_text(
        encoding="utf-8") for name in modules]
    return "".join(c if c in keep else "?" for c in "\n".join(parts))


class CharVocab:
    """Characters <-> integer ids, over the characters of a text."""

    def __init__(self, text: str):
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def encode(self, text: str) -> np.ndarray:
        return np.array([self.index[c] for c in text], dtype=np.int64)

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)


def lm_batch(rng: np.random.Generator, data: np.ndarray, size: int, context: int):
    """`size` random windows of `context` + 1 characters: inputs (B, T) and the next
    characters (B, T)."""
    starts = rng.integers(0, len(data) - context - 1, size=size)
    windows = np.stack([data[s:s + context + 1] for s in starts])
    return windows[:, :-1], windows[:, 1:]


def sample(model: nn.Module, prompt: np.ndarray, length: int, context: int,
           temperature: float = 0.8, seed: int = 0) -> np.ndarray:
    """Extend `prompt` (ids) by `length` characters, each drawn from softmax(logits / T) of
    the model's last position over the last `context` characters."""
    rng = np.random.default_rng(seed)
    ids = list(prompt)
    with mg.no_grad():
        for _ in range(length):
            logits = model(mg.tensor(np.array([ids[-context:]]))).numpy()[0, -1] / temperature
            p = np.exp(logits - logits.max())
            ids.append(int(rng.choice(len(p), p=p / p.sum())))
    return np.array(ids)


def train_lm(model: nn.Module, data: np.ndarray, steps: int, context: int, batch: int = 32,
             lr: float = 1e-2, seed: int = 0) -> list[float]:
    """Adam on next-character cross-entropy over random windows of `data` (ids); the learning
    rate falls linearly to a tenth over the steps. Returns the losses (nats per character)."""
    rng = np.random.default_rng(seed)
    optimizer = nn.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for step in range(steps):
        optimizer.param_groups[0]["lr"] = lr * (1 - 0.9 * step / steps)
        inputs, targets = lm_batch(rng, data, batch, context)
        loss = F.cross_entropy(model(mg.tensor(inputs)), mg.tensor(targets), axis=-1)
        losses.append(clipped_step(model, optimizer, loss))
    return losses


def plot_accuracy(ax, curves: dict[str, dict[int, float]], trained_up_to: int,
                  title: str) -> None:
    """Digit accuracy against source length, one line per model (`curves`: name -> {length:
    accuracy}), with chance (1 in 10) and the lengths longer than any training string marked."""
    colours = iter(("tab:red", "tab:blue", "tab:green", "tab:purple"))
    for name, curve in curves.items():
        ax.plot(list(curve), list(curve.values()), marker="o", color=next(colours), label=name)
    longest = max(length for curve in curves.values() for length in curve)
    ax.axhline(0.1, color="gray", ls=":", label="chance (1 in 10)")
    if longest > trained_up_to:
        ax.axvspan(trained_up_to + 0.5, longest + 0.5, color="gray", alpha=0.1,
                   label="longer than any training string")
    ax.set(xlabel="source length", ylabel="digits right", ylim=(0, 1.05), title=title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
