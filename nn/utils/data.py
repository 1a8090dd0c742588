"""Datasets and batches, with PyTorch's `torch.utils.data` names.

    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True, drop_last=True)
    for xb, yb in loader:               # Tensors (32, ...) each
        ...

A Dataset is anything with `__getitem__(i)` and `__len__()`. The DataLoader draws the indices
of an epoch (shuffled: a new permutation each epoch, from `generator` — a NumPy Generator — or
else from minigrad's RNG, so `mg.manual_seed` makes it reproducible), cuts them into batches
and collates each batch's samples: NumPy arrays and Tensors are stacked into one Tensor (dtypes
kept), Python ints become int64 and floats float64 (as PyTorch's default_collate), and tuples,
lists and dicts are collated field by field.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

import minigrad as mg
from minigrad import Tensor

__all__ = ["Dataset", "TensorDataset", "DataLoader", "default_collate"]


class Dataset:
    """A map-style dataset: subclasses define `__getitem__(index)` and `__len__()`."""

    def __getitem__(self, index: int):
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class TensorDataset(Dataset):
    """Samples (a[i], b[i], …) of arrays or Tensors that share their first dimension."""

    def __init__(self, *arrays):
        if not arrays:
            raise ValueError("TensorDataset: needs at least one array")
        sizes = [len(a) for a in arrays]
        if len(set(sizes)) != 1:
            raise ValueError(f"TensorDataset: every array needs the same first dimension, got "
                             f"{sizes}")
        self.arrays = arrays

    def __getitem__(self, index: int):
        return tuple(a[index] for a in self.arrays)

    def __len__(self) -> int:
        return len(self.arrays[0])


def default_collate(batch: Sequence[Any]):
    """Stack a list of samples into a batch (see the module docstring)."""
    first = batch[0]
    if isinstance(first, Tensor):
        return mg.stack(list(batch), axis=0)
    if isinstance(first, (np.ndarray, np.generic)):
        return mg.tensor(np.stack([np.asarray(b) for b in batch]))
    if isinstance(first, bool):
        return mg.tensor(np.array(batch, dtype=bool))
    if isinstance(first, numbers.Integral):
        return mg.tensor(np.array(batch, dtype=np.int64))
    if isinstance(first, numbers.Real):
        return mg.tensor(np.array(batch, dtype=np.float64))
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, (tuple, list)):
        if any(len(sample) != len(first) for sample in batch):
            raise ValueError(f"default_collate: every sample needs {len(first)} fields, got "
                             f"{sorted({len(sample) for sample in batch})}")
        fields = [default_collate(list(values)) for values in zip(*batch)]
        return tuple(fields) if isinstance(first, tuple) else fields
    raise TypeError(f"default_collate: cannot batch samples of type {type(first).__name__}; "
                    f"pass collate_fn")


class DataLoader:
    """Iterate over a dataset in batches (see the module docstring). `len(loader)` is the number
    of batches per epoch: ⌊n / batch_size⌋ with drop_last, else ⌈n / batch_size⌉."""

    def __init__(self, dataset, batch_size: int = 1, shuffle: bool = False,
                 drop_last: bool = False, collate_fn: Callable | None = None,
                 generator: np.random.Generator | None = None):
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) \
                or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be an int >= 1, got {batch_size!r}")
        for name, value in (("shuffle", shuffle), ("drop_last", drop_last)):
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"DataLoader: {name} must be a bool, got {value!r}")
        if generator is not None and not isinstance(generator, np.random.Generator):
            raise TypeError(f"DataLoader: generator must be a numpy.random.Generator (e.g. "
                            f"numpy.random.default_rng(seed)) or None, got "
                            f"{type(generator).__name__}")
        self.dataset, self.batch_size = dataset, int(batch_size)
        self.shuffle, self.drop_last = bool(shuffle), bool(drop_last)
        self.collate_fn = default_collate if collate_fn is None else collate_fn
        self.generator = generator

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def _order(self) -> np.ndarray:
        n = len(self.dataset)
        if not self.shuffle:
            return np.arange(n)
        if self.generator is not None:
            return self.generator.permutation(n)
        return mg.randperm(n).numpy()

    def __iter__(self) -> Iterator:
        order = self._order()
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            indices = order[start:start + self.batch_size]
            yield self.collate_fn([self.dataset[int(i)] for i in indices])
