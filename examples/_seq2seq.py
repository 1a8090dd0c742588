"""What translate.py and g2p.py share: vocabularies, padded batches, the teacher-forced loss
and training step, greedy and beam decoding, attention figures.

A model decodes through two methods:

    memory, state = model.encode(...)                 # tuples of tensors, batch first
    log_probs, state, weights = model.step(y_prev, state, memory)
        y_prev (N,) ids of the previous outputs; log_probs (N, V) and weights (N, S) (or None)
        as NumPy arrays

Every tensor of `memory` and `state` has one row per sequence, so that beam search can copy
and reorder hypotheses by picking rows.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import minigrad as mg
import nn.functional as F
from _common import optimizer_step, save_figure, training_step

SPECIALS = ("<pad>", "<s>", "</s>")
PAD, BOS, EOS = 0, 1, 2                  # their ids in a vocabulary built with all three


class Vocab:
    """Symbols <-> ids, the `specials` first (padding is always id 0)."""

    def __init__(self, symbols, specials: tuple[str, ...] = SPECIALS):
        self.itos = list(specials) + sorted(set(symbols) - set(specials))
        self.stoi = {s: i for i, s in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, symbols) -> list[int]:
        return [self.stoi[s] for s in symbols]

    def decode(self, ids) -> list[str]:
        """Symbols up to (not including) the first </s> or padding."""
        out = []
        for i in ids:
            if int(i) in (PAD, EOS):
                break
            out.append(self.itos[int(i)])
        return out


@dataclass
class Batch:
    """A padded batch: src (B, S) ids, src_len (B,), tgt_in = <s> y (B, T), tgt_out = y </s>
    (B, T); padding id 0 after each sequence's end."""
    src: np.ndarray
    src_len: np.ndarray
    tgt_in: np.ndarray
    tgt_out: np.ndarray


def make_batch(pairs, src_vocab: Vocab, tgt_vocab: Vocab) -> Batch:
    """(source symbols, target symbols) pairs -> a padded Batch."""
    B = len(pairs)
    S = max(len(s) for s, _ in pairs)
    T = max(len(t) for _, t in pairs) + 1
    src = np.zeros((B, S), dtype=np.int64)
    tgt_in = np.zeros((B, T), dtype=np.int64)
    tgt_out = np.zeros((B, T), dtype=np.int64)
    for b, (s, t) in enumerate(pairs):
        src[b, :len(s)] = src_vocab.encode(s)
        ids = tgt_vocab.encode(t)
        tgt_in[b, :len(ids) + 1] = [BOS] + ids
        tgt_out[b, :len(ids) + 1] = ids + [EOS]
    return Batch(src, np.array([len(s) for s, _ in pairs]), tgt_in, tgt_out)


def forward_backward(model, *inputs, label_smoothing: float = 0.0):
    """Teacher forcing on a batch of Tensors: `model(*inputs[:-1])` gives logits (B, T, V) for
    the targets `inputs[-1]` (B, T) (y </s>, then padding); the mean cross-entropy over the
    targets that are not padding, and its backward. The part of a step mg.compile replays."""
    *model_inputs, tgt_out = inputs
    logits, _ = model(*model_inputs)                                    # (B, T, V)
    loss = F.cross_entropy(logits, tgt_out, ignore_index=PAD, label_smoothing=label_smoothing,
                           axis=-1)
    loss.backward()
    return loss


def compiled_forward_backward(model, args):
    """forward_backward with `model` bound, as the script runs it: captured and replayed by
    mg.compile (one capture per batch shape, 128 kept: g2p's standard split makes about 61
    shapes of (letters, phonemes) per epoch at 256 words a batch, and the padded target
    lengths add more from epoch to epoch; a capture holds no activations), or eagerly with
    --no-compile."""
    return training_step(functools.partial(forward_backward, model), args, cache_size=128)


def train_step(model, optimizer, arrays, clip: float, device: str, run=None, **options) -> float:
    """One training step on a batch's arrays (the model's inputs, then the targets): `run`
    (forward_backward with the model bound, compiled or not; default: eager), the gradients
    clipped to norm `clip`, the optimizer's step (`options`: lr, label_smoothing). Returns the
    loss."""
    tensors = [mg.tensor(a, device=device) for a in arrays]
    return optimizer_step(model, optimizer, run or functools.partial(forward_backward, model),
                          tensors, clip, **options)


def same_length_batches(lengths, batch_size: int, rng: np.random.Generator | None = None):
    """Indices cut into batches whose sources all have one length (no source padding). With
    `rng`: each length's indices shuffled, then the batches shuffled (a training epoch);
    without: in order, shortest first (for decoding)."""
    by_length: dict[int, list[int]] = {}
    for i, n in enumerate(lengths):
        by_length.setdefault(int(n), []).append(i)
    batches = []
    for n in sorted(by_length):
        index = np.array(by_length[n])
        if rng is not None:
            index = index[rng.permutation(len(index))]
        batches += [index[i:i + batch_size].tolist() for i in range(0, len(index), batch_size)]
    return batches if rng is None else [batches[i] for i in rng.permutation(len(batches))]


def _rows(tensors: tuple, rows) -> tuple:
    """Pick rows (hypotheses) of every tensor in a state or memory."""
    return tuple(t[rows] for t in tensors)


@mg.no_grad()
def greedy_decode(model, memory: tuple, state: tuple, max_steps: int):
    """The most likely symbol at every step. Returns (ids (B, steps), weights (B, steps, S) or
    None); stops when every row has written </s>."""
    B = memory[0].shape[0]
    y = np.full(B, BOS, dtype=np.int64)
    ids, weights, done = [], [], np.zeros(B, dtype=bool)
    for _ in range(max_steps):
        log_probs, state, w = model.step(y, state, memory)
        y = log_probs.argmax(axis=-1)
        ids.append(y)
        weights.append(w)
        done |= y == EOS
        if done.all():
            break
    return np.stack(ids, axis=1), None if weights[0] is None else np.stack(weights, axis=1)


@mg.no_grad()
def beam_decode(model, memory: tuple, state: tuple, max_steps: int, beam: int) -> np.ndarray:
    """Beam search: every sequence keeps its `beam` best partial outputs, scored by
    Σ_t log p(y_t | y_<t, x); a finished hypothesis is carried on unchanged and the best
    finished one wins (the best unfinished one if none finished). Returns ids (B, steps),
    0 after </s>."""
    B, K = memory[0].shape[0], beam
    rows = np.repeat(np.arange(B), K)                        # sequence of each hypothesis
    memory, state = _rows(memory, rows), _rows(state, rows)
    scores = np.full((B, K), -np.inf)
    scores[:, 0] = 0.0                                       # one live hypothesis to start
    finished = np.zeros((B, K), dtype=bool)
    history = np.zeros((B, K, 0), dtype=np.int64)
    y = np.full(B * K, BOS, dtype=np.int64)
    for _ in range(max_steps):
        log_probs, state, _ = model.step(y, state, memory)
        V = log_probs.shape[-1]
        log_probs = log_probs.reshape(B, K, V).astype(np.float64)
        log_probs[finished] = -np.inf                        # a finished hypothesis only
        log_probs[finished, PAD] = 0.0                       # continues with padding, free
        total = (scores[:, :, None] + log_probs).reshape(B, K * V)
        best = np.argsort(-total, axis=1, kind="stable")[:, :K]            # (B, K)
        parent, symbol = best // V, best % V
        scores = np.take_along_axis(total, best, axis=1)
        finished = np.take_along_axis(finished, parent, axis=1) | (symbol == EOS)
        history = np.concatenate([np.take_along_axis(history, parent[:, :, None], axis=1),
                                  symbol[:, :, None]], axis=2)
        state = _rows(state, (np.arange(B)[:, None] * K + parent).reshape(-1))
        y = symbol.reshape(-1)
        if finished.all():
            break
    choice = np.where(finished, scores, scores - 1e9).argmax(axis=1)
    return history[np.arange(B), choice]


def search(model, memory: tuple, state: tuple, max_steps: int, beam: int = 0) -> tuple:
    """Greedy decoding (beam 0) or beam search of width `beam`: (ids (B, steps), attention
    weights (B, steps, S) of greedy decoding, else None)."""
    if beam:
        return beam_decode(model, memory, state, max_steps, beam), None
    return greedy_decode(model, memory, state, max_steps)


def attention_figure(sources: list, outputs: list, weights, titles: list[str], path: Path,
                     **labels) -> Path:
    """Attention heat-maps, one panel per sequence: a row for each symbol written and for </s>
    (unless decoding stopped at its step limit first), a column for each source symbol; row t
    sums to 1. `weights[k]` (steps, S) may hold more steps (the rows after </s> are not
    shown). `labels`: xlabel, ylabel and suptitle of mg.viz.attention_map."""
    rows = [(list(out) + [SPECIALS[EOS]])[:len(w)] for out, w in zip(outputs, weights)]
    maps = [w[:len(row), :len(src)] for w, row, src in zip(weights, rows, sources)]
    figure = mg.viz.attention_map(maps, rows, [list(s) for s in sources], titles=titles,
                                  ncols=2, **labels)
    return save_figure(figure, path)
