"""Variable-length batches for recurrent layers, with PyTorch's `torch.nn.utils.rnn` names.

A batch of sequences of different lengths is padded to the longest, (T, B, *) or (B, T, *).
`pack_padded_sequence` turns it into a PackedSequence: the steps that exist, time-major, in
order of decreasing length, exactly PyTorch's layout:

    data         (Σ lengths, *)   step 0 of every sequence, then step 1 of those that have one, …
    batch_sizes  (T,) int64       how many sequences have step t
    sorted_indices / unsorted_indices   the reordering by length and its inverse (None when
                                        the batch came sorted, enforce_sorted=True)

GRU, LSTM, RNN and UpdateGateRNN accept a PackedSequence (and return one); they also take
`lengths=` with a padded batch directly. Either way each sequence is run to its own length: the
state stops at its last real step, the reverse direction of a bidirectional layer starts at that
step, and padding never reaches a state that is used. Every function here is differentiable in
`data` / `input`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

import minigrad as mg
from minigrad import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "pack_sequence", "checked_lengths"]


class PackedSequence(NamedTuple):
    """The real steps of a variable-length batch, time-major (see the module docstring)."""
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None


def checked_lengths(op: str, lengths, batch: int, steps: int) -> np.ndarray:
    """`lengths` (a list, NumPy array or Tensor of B ints, each in 1 … T) as an int64 array."""
    host = lengths.numpy() if isinstance(lengths, Tensor) else np.asarray(lengths)
    if host.ndim != 1 or host.shape[0] != batch:
        raise ValueError(f"{op}: lengths must hold one length per sequence, shape ({batch},), "
                         f"got shape {host.shape}")
    if host.size and not np.issubdtype(host.dtype, np.integer):
        raise TypeError(f"{op}: lengths must be ints, got dtype {host.dtype}")
    if host.size and (host.min() < 1 or host.max() > steps):
        raise ValueError(f"{op}: every length must be in 1 … {steps} (the padded length), got "
                         f"{host.tolist()}")
    return host.astype(np.int64)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch, input (T, B, *) ((B, T, *) with batch_first), keeping each
    sequence's first lengths[b] steps. With `enforce_sorted` the lengths must decrease (as
    PyTorch requires); otherwise the batch is sorted by length here and the order recorded."""
    if input.ndim < 2:
        raise ValueError(f"pack_padded_sequence: input must be (T, B, *) or (B, T, *), got shape "
                         f"{tuple(input.shape)}")
    x = input.swapaxes(0, 1) if batch_first else input           # (T, B, *)
    host = checked_lengths("pack_padded_sequence", lengths, x.shape[1], x.shape[0])
    if enforce_sorted:
        if np.any(np.diff(host) > 0):
            raise ValueError(f"pack_padded_sequence: lengths must be in decreasing order with "
                             f"enforce_sorted=True, got {host.tolist()}; pass "
                             f"enforce_sorted=False to have them sorted")
        order = None
    else:
        order = np.argsort(-host, kind="stable")
        host, x = host[order], x[:, order]
    batch_sizes = np.array([(host > t).sum() for t in range(int(host.max()))], dtype=np.int64)
    data = mg.concat([x[t, :n] for t, n in enumerate(batch_sizes)], axis=0)
    if order is None:
        return PackedSequence(data, mg.tensor(batch_sizes))
    return PackedSequence(data, mg.tensor(batch_sizes), mg.tensor(order.astype(np.int64)),
                          mg.tensor(np.argsort(order).astype(np.int64)))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None
                        ) -> tuple[Tensor, Tensor]:
    """Undo pack_padded_sequence: (padded (T, B, *) or (B, T, *), lengths (B,) int64), in the
    batch's original order, padding_value after each sequence's end; T = total_length if
    given (at least the longest length), else the longest length."""
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"pad_packed_sequence: expected a PackedSequence, got "
                        f"{type(sequence).__name__}")
    data, sizes = sequence.data, sequence.batch_sizes.numpy().astype(np.int64)
    B, T = int(sizes[0]), len(sizes)
    if total_length is not None and total_length < T:
        raise ValueError(f"pad_packed_sequence: total_length={total_length} is shorter than the "
                         f"longest sequence ({T} steps)")
    steps, start = [], 0
    for n in sizes:                                               # step t: rows of data
        rows = data[start:start + n]                              # (n, *)
        start += n
        if n < B:
            fill = mg.full((B - n,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
                           device=data.device)
            rows = mg.concat([rows, fill], axis=0)
        steps.append(rows)
    padded = mg.stack(steps, axis=0)                              # (T, B, *), sorted order
    if total_length is not None and total_length > T:
        fill = mg.full((total_length - T, B) + tuple(data.shape[1:]), padding_value,
                       dtype=data.dtype, device=data.device)
        padded = mg.concat([padded, fill], axis=0)
    lengths = (sizes[None, :] > np.arange(B)[:, None]).sum(axis=1)   # (B,) sorted order
    if sequence.unsorted_indices is not None:
        unsort = sequence.unsorted_indices.numpy()
        padded, lengths = padded[:, unsort], lengths[unsort]
    padded = padded.swapaxes(0, 1) if batch_first else padded
    return padded, mg.tensor(lengths.astype(np.int64))


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0) -> Tensor:
    """Stack tensors of shapes (L_b, *) into (T, B, *) ((B, T, *) with batch_first), T the
    longest L_b, padding with padding_value."""
    sequences = list(sequences)
    if not sequences:
        raise ValueError("pad_sequence: got no sequences")
    T = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        if s.shape[1:] != sequences[0].shape[1:]:
            raise ValueError(f"pad_sequence: every sequence needs the trailing shape "
                             f"{tuple(sequences[0].shape[1:])}, got {tuple(s.shape)}")
        if s.shape[0] < T:
            fill = mg.full((T - s.shape[0],) + tuple(s.shape[1:]), padding_value,
                           dtype=s.dtype, device=s.device)
            s = mg.concat([s, fill], axis=0)
        padded.append(s)
    return mg.stack(padded, axis=0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """pack_padded_sequence(pad_sequence(sequences), their lengths)."""
    sequences = list(sequences)
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)
