"""Weight averaging: a copy of a model whose weights are an average of the trained model's
over the steps, PyTorch's `torch.optim.swa_utils` (reached here as `nn.optim.swa_utils`).

    average = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
    for batch in data:
        loss = ...; loss.backward(); optimizer.step(); optimizer.zero_grad()
        average.update_parameters(model)        # after each optimizer step
    evaluate(average.module)                    # or average(x): the averaged model's forward

The first `update_parameters` copies the model's weights; each later one, with n the number of
updates so far (`n_averaged`):

    equal average (SWA, the default):  w̄ ← w̄ + (w − w̄) / (n + 1)
    exponential (EMA, decay β):        w̄ ← w̄ + (1 − β)(w − w̄)

Buffers (running statistics) are copied from the model at every update, unless
`use_buffers=True`, which averages them with the parameters, as PyTorch does.
"""

from __future__ import annotations

import copy
import itertools
from typing import Callable

import numpy as np

import minigrad as mg

from .module import Module


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """An update of lists of averaged and current weights: w̄ ← w̄ + (1 − decay)(w − w̄)."""
    _check_decay(decay)

    def ema_update(averaged: list, current: list, num_averaged) -> None:
        for a, w in zip(averaged, current):
            a.add_(w - a, alpha=1.0 - decay)
    return ema_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """One averaged weight from the last one and the current: decay·w̄ + (1 − decay)·w."""
    _check_decay(decay)

    def ema(averaged, current, num_averaged):
        return decay * averaged + (1.0 - decay) * current
    return ema


def get_swa_multi_avg_fn() -> Callable:
    """An update of lists of weights to their equal average: w̄ ← w̄ + (w − w̄) / (n + 1)."""
    def swa_update(averaged: list, current: list, num_averaged) -> None:
        n = float(num_averaged)
        for a, w in zip(averaged, current):
            a.add_(w - a, alpha=1.0 / (n + 1.0))
    return swa_update


def get_swa_avg_fn() -> Callable:
    """One weight of the equal average: w̄ + (w − w̄) / (n + 1)."""
    def swa(averaged, current, num_averaged):
        return averaged + (current - averaged) / (float(num_averaged) + 1.0)
    return swa


def _check_decay(decay: float) -> None:
    if not 0.0 <= decay <= 1.0:
        raise ValueError(f"EMA: decay must lie in [0, 1], got {decay}")


class AveragedModel(Module):
    """A deep copy of `model` (`.module`) that holds the average of its weights over the calls
    of `update_parameters(model)`; calling it runs the copy's forward.

    avg_fn(averaged, current, num_averaged) -> the new average of one weight (Tensors);
    multi_avg_fn(averaged_list, current_list, num_averaged) updates lists in place. Neither:
    the equal average. `n_averaged` (a buffer, saved in `state_dict`) counts the updates.
    """

    def __init__(self, model: Module, device=None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False):
        super().__init__()
        if not isinstance(model, Module):
            raise TypeError(f"AveragedModel: model must be an nn.Module, got "
                            f"{type(model).__name__}")
        if avg_fn is not None and multi_avg_fn is not None:
            raise ValueError("AveragedModel: give avg_fn or multi_avg_fn, not both")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module.to(device)
        self.register_buffer("n_averaged", mg.tensor(np.array(0, dtype=np.int64)))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _weights(self, model: Module) -> list[mg.Tensor]:
        return list(itertools.chain(model.parameters(), model.buffers()) if self.use_buffers
                    else model.parameters())

    @mg.no_grad()
    def update_parameters(self, model: Module) -> None:
        """Fold `model`'s current weights into the average (the first call copies them)."""
        averaged, current = self._weights(self.module), self._weights(model)
        if len(averaged) != len(current) or any(
                a.shape != w.shape for a, w in zip(averaged, current)):
            raise ValueError(
                f"AveragedModel.update_parameters: the model's weights "
                f"{[tuple(w.shape) for w in current]} do not match the averaged copy's "
                f"{[tuple(a.shape) for a in averaged]}")
        current = [w.detach().to(a.device) for a, w in zip(averaged, current)]
        n = int(self.n_averaged.item())
        if n == 0:
            for a, w in zip(averaged, current):
                a.copy_(w)
        elif self.avg_fn is not None:
            for a, w in zip(averaged, current):
                a.copy_(self.avg_fn(a.detach(), w, n))
        else:
            (self.multi_avg_fn or get_swa_multi_avg_fn())(averaged, current, n)
        if not self.use_buffers:            # running statistics follow the model
            for a, w in zip(self.module.buffers(), model.buffers()):
                a.copy_(w.detach().to(a.device))
        self.n_averaged.add_(1)
