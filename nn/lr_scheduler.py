"""Learning-rate schedules, with PyTorch's names and step-by-step values.

Every schedule is created after its optimizer and stepped once after each `optimizer.step()`
(ReduceLROnPlateau: once per evaluation, with the metric). On creation it sets each group's lr
to the value for step 0; after s calls of `step()` the lr is the value for step s. Where
PyTorch's `torch.optim.lr_scheduler` has the same class, the values agree with it step for step
(tests/nn/test_lr_scheduler.py holds PyTorch's sequences). `state_dict()` / `load_state_dict()`
resume a schedule exactly, through `nn.save` / `nn.load`.

Schedules here are written in closed form, lr(s) = base_lr · factor(s). Several schedules on
one optimizer chain as PyTorch's do: each group's lr is its `initial_lr` (the lr when the first
schedule was made, kept in the group as PyTorch keeps it) times the current factor of every
schedule made on the optimizer, ReduceLROnPlateau's cuts included, whichever is stepped last.
Where PyTorch's chaining is not such a product (LambdaLR and OneCycleLR set the lr outright,
CosineAnnealingLR with eta_min ≠ 0 moves it towards eta_min), stepping a schedule that shares
its optimizer with another raises ValueError instead. SequentialLR (one schedule after another)
and ChainedScheduler (several stepped as one) take schedules made on the optimizer, as PyTorch's.
"""

from __future__ import annotations

import bisect
import math
from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR", "LinearLR",
           "CosineAnnealingLR", "OneCycleLR", "ReduceLROnPlateau", "LinearWarmupCosine",
           "NoamLR", "SequentialLR", "ChainedScheduler"]


def _number(value):
    """Counters and rates come back from nn.load as NumPy scalars or 0-d arrays: use Python's."""
    value = np.asarray(value)[()] if hasattr(value, "shape") else value
    return value.item() if isinstance(value, np.generic) else value


def _chain(optimizer) -> list:
    """The schedules made on `optimizer`, oldest first (kept on the optimizer)."""
    chain = getattr(optimizer, "_lr_schedules", None)
    if chain is None:
        chain = optimizer._lr_schedules = []
    return chain


def _check_chain(schedule) -> None:
    """Raise (before a step changes anything) when the schedules on `schedule`'s optimizer do
    not chain as a product of factors: one of several sets the lr outright."""
    chain = _chain(schedule.optimizer)
    outright = [s for s in chain if not s.chainable]
    if len(chain) > 1 and outright:
        names = ", ".join(type(s).__name__ for s in chain)
        raise ValueError(
            f"{type(schedule).__name__}.step: the optimizer has several schedules ({names}), "
            f"and {type(outright[0]).__name__}{outright[0]._why_not_chainable()} does not "
            f"chain with others as a factor of the lr (PyTorch's result would depend on the "
            f"order of the step() calls); hand them to one SequentialLR, or fold them into one "
            f"LambdaLR of their product")


def _set_chained_lrs(optimizer) -> None:
    """Each group's lr = initial_lr · Π of every chained schedule's current factor."""
    chain = _chain(optimizer)
    for i, group in enumerate(optimizer.param_groups):
        lr = group["initial_lr"]
        for schedule in chain:
            lr *= schedule.group_factor(i)
        group["lr"] = lr


def _per_group(scheduler, saved) -> list[float]:
    """Saved per-group learning rates as floats, one for each of the optimizer's groups."""
    values = [float(_number(lr)) for lr in saved]
    groups = len(scheduler.optimizer.param_groups)
    if len(values) != groups:
        raise ValueError(f"{type(scheduler).__name__}.load_state_dict: the checkpoint has "
                         f"{len(values)} parameter groups, the optimizer {groups}")
    return values


class LRScheduler:
    """Sets each group's lr to base_lr · factor(s), s = the number of `step()` calls so far
    (PyTorch's `last_epoch`), base_lr the group's `initial_lr`. The first optimizer step uses
    factor(0). With other schedules on the optimizer, their factors multiply in (see the
    module's docstring)."""

    chainable = True           # its lr is base_lr · factor(s): it chains as a product
    _driver = None             # the SequentialLR that steps it, once handed to one

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.last_step = 0
        _chain(optimizer).append(self)
        self.base_lrs = [group.setdefault("initial_lr", group["lr"])
                         for group in optimizer.param_groups]
        self._apply()

    def _why_not_chainable(self) -> str:
        return " (which sets the lr outright)"

    def group_factor(self, group: int) -> float:
        """This schedule's multiplier of group `group`'s initial_lr now."""
        return self.factor(self.last_step)

    @property
    def last_epoch(self) -> int:
        """PyTorch's name for the number of `step()` calls so far."""
        return self.last_step

    def factor(self, step: int) -> float:
        """The multiplier of base_lr after `step` calls of `step()` (0 for the first update)."""
        raise NotImplementedError

    def lrs(self, step: int) -> list[float]:
        """Each group's learning rate after `step` calls of `step()`."""
        f = self.factor(step)
        return [base * f for base in self.base_lrs]

    def _apply(self) -> None:
        chain = _chain(self.optimizer)
        if all(s.chainable for s in chain):
            _set_chained_lrs(self.optimizer)
        elif self.chainable:
            # made beside a schedule that sets the lr outright (before a SequentialLR takes
            # both; stepping them so raises): PyTorch's first value, the lr times factor(0)
            for group in self.optimizer.param_groups:
                group["lr"] *= self.factor(self.last_step)
        else:
            for group, lr in zip(self.optimizer.param_groups, self.lrs(self.last_step)):
                group["lr"] = lr

    def _check_step(self) -> None:
        """Raise, before anything changes, when one more `step()` cannot be taken."""
        if self._driver is not None:
            raise ValueError(f"{type(self).__name__}.step: this schedule was handed to "
                             f"{type(self._driver).__name__}; step that one")
        _check_chain(self)

    def step(self) -> None:
        """Advance the schedule by one and set each group's lr; call after optimizer.step()."""
        self._check_step()
        self.last_step += 1
        self._apply()

    def get_last_lr(self) -> list[float]:
        """The learning rate of each parameter group, as set now."""
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """The step count and base learning rates, to resume the schedule."""
        return {"last_step": self.last_step, "base_lrs": list(self.base_lrs)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Resume from `state_dict()`'s output, setting each group's lr to match."""
        base_lrs = _per_group(self, state_dict["base_lrs"])
        self.last_step = int(_number(state_dict["last_step"]))
        self.base_lrs = base_lrs
        self._apply()


def _check_positive_int(scheduler: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{scheduler}: {name} must be a positive int, got {value!r}")
    return int(value)


class LambdaLR(LRScheduler):
    """lr = base_lr · lr_lambda(s). The only schedule of its optimizer (PyTorch's LambdaLR
    sets the lr outright, so it does not chain)."""

    chainable = False

    def __init__(self, optimizer, lr_lambda: Callable[[int], float]):
        if not callable(lr_lambda):
            raise TypeError(f"LambdaLR: lr_lambda must be callable, got "
                            f"{type(lr_lambda).__name__} (one function for every group)")
        self.lr_lambda = lr_lambda
        super().__init__(optimizer)

    def factor(self, step: int) -> float:
        return float(self.lr_lambda(step))


class StepLR(LRScheduler):
    """lr = base_lr · γ^⌊s / step_size⌋: decay by γ every `step_size` steps."""

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1):
        self.step_size = _check_positive_int("StepLR", "step_size", step_size)
        self.gamma = float(gamma)
        super().__init__(optimizer)

    def factor(self, step: int) -> float:
        return self.gamma ** (step // self.step_size)


class MultiStepLR(LRScheduler):
    """lr = base_lr · γ^m, m = how many milestones are ≤ s."""

    def __init__(self, optimizer, milestones: Sequence[int], gamma: float = 0.1):
        self.milestones = sorted(int(m) for m in milestones)
        self.gamma = float(gamma)
        super().__init__(optimizer)

    def factor(self, step: int) -> float:
        return self.gamma ** bisect.bisect_right(self.milestones, step)


class ExponentialLR(LRScheduler):
    """lr = base_lr · γ^s."""

    def __init__(self, optimizer, gamma: float):
        self.gamma = float(gamma)
        super().__init__(optimizer)

    def factor(self, step: int) -> float:
        return self.gamma ** step


class LinearLR(LRScheduler):
    """Linear warm-up (or decay) of the factor from `start_factor` to `end_factor` over
    `total_iters` steps, then constant:

        factor(s) = start + (end − start) · min(s, total_iters) / total_iters
    """

    def __init__(self, optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5):
        if not (0.0 < start_factor <= 1.0 and 0.0 <= end_factor <= 1.0):
            raise ValueError(f"LinearLR: need 0 < start_factor <= 1 and 0 <= end_factor <= 1, "
                             f"got {start_factor} and {end_factor}")
        self.start_factor, self.end_factor = float(start_factor), float(end_factor)
        self.total_iters = _check_positive_int("LinearLR", "total_iters", total_iters)
        super().__init__(optimizer)

    def factor(self, step: int) -> float:
        progress = min(step, self.total_iters) / self.total_iters
        return self.start_factor + (self.end_factor - self.start_factor) * progress


class CosineAnnealingLR(LRScheduler):
    """lr = η_min + (base_lr − η_min) · ½(1 + cos(π s / T_max)); past T_max the cosine goes
    on (back up to base_lr at 2·T_max), as PyTorch's."""

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0):
        self.T_max = _check_positive_int("CosineAnnealingLR", "T_max", T_max)
        self.eta_min = float(eta_min)
        # with eta_min 0 the lr is base_lr · ½(1 + cos): a factor, which chains
        self.chainable = self.eta_min == 0.0
        super().__init__(optimizer)

    def _why_not_chainable(self) -> str:
        return f" with eta_min={self.eta_min} (which moves the lr towards eta_min)"

    def factor(self, step: int) -> float:
        return 0.5 * (1.0 + math.cos(math.pi * step / self.T_max))

    def lrs(self, step: int) -> list[float]:
        f = self.factor(step)
        return [self.eta_min + (base - self.eta_min) * f for base in self.base_lrs]

    def _check_step(self) -> None:
        super()._check_step()
        # past T_max PyTorch restarts a chained cosine by adding to the lr, not multiplying it
        if self.last_step + 1 > self.T_max and len(_chain(self.optimizer)) > 1:
            raise ValueError(f"CosineAnnealingLR: stepping past T_max={self.T_max} while other "
                             f"schedules share the optimizer; there PyTorch restarts the cosine "
                             f"by adding to the lr, which is no longer a product of the "
                             f"schedules' factors. Stop at T_max, or make T_max the run's length")


class OneCycleLR(LRScheduler):
    """The one-cycle policy (Smith & Topin 2018), as PyTorch's: the lr rises from
    max_lr / div_factor to max_lr over the first pct_start of `total_steps`, then falls to
    max_lr / (div_factor · final_div_factor) at the last step (with `three_phase`, it first
    falls back to the start before the final descent). Each phase anneals by cosine
    (½(1 + cos πp) from start to end, p ∈ [0, 1] through the phase) or linearly. With
    `cycle_momentum` the momentum (SGD) or β₁ (Adam) moves the opposite way between
    max_momentum and base_momentum. The optimizer's own lr is ignored; stepping past
    `total_steps` raises. The only schedule of its optimizer (it sets the lr outright).
    """

    chainable = False

    def __init__(self, optimizer, max_lr: float | Sequence[float], total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum: float = 0.85,
                 max_momentum: float = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False):
        groups = optimizer.param_groups
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("OneCycleLR: give total_steps, or epochs and steps_per_epoch")
            total_steps = _check_positive_int("OneCycleLR", "epochs", epochs) * \
                _check_positive_int("OneCycleLR", "steps_per_epoch", steps_per_epoch)
        self.total_steps = _check_positive_int("OneCycleLR", "total_steps", total_steps)
        if not 0.0 <= pct_start <= 1.0:
            raise ValueError(f"OneCycleLR: pct_start must be in [0, 1], got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        max_lrs = list(max_lr) if isinstance(max_lr, (list, tuple)) else [max_lr] * len(groups)
        if len(max_lrs) != len(groups):
            raise ValueError(f"OneCycleLR: {len(max_lrs)} max_lr values for {len(groups)} "
                             f"parameter groups")
        self.anneal_strategy = anneal_strategy
        self.cycle_momentum = bool(cycle_momentum)
        if self.cycle_momentum and not all("momentum" in g or "betas" in g for g in groups):
            raise ValueError("OneCycleLR: cycle_momentum needs an optimizer with momentum or "
                             "betas (SGD, Adam, RMSprop); pass cycle_momentum=False")
        # (lr at the start, max, min) per group; phases as (last step, start key, end key)
        self.lr_points = [{"initial": m / div_factor, "max": float(m),
                           "min": m / div_factor / final_div_factor} for m in max_lrs]
        self.momentum_points = {"initial": float(max_momentum), "max": float(base_momentum),
                                "min": float(max_momentum)}
        rise_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self.phases = [(rise_end, "initial", "max"),
                           (float(2 * pct_start * self.total_steps) - 2, "max", "initial"),
                           (self.total_steps - 1, "initial", "min")]
        else:
            self.phases = [(rise_end, "initial", "max"), (self.total_steps - 1, "max", "min")]
        super().__init__(optimizer)

    def _anneal(self, start: float, end: float, progress: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * progress) + 1)
        return (end - start) * progress + start

    def _position(self, step: int) -> tuple[float, str, str]:
        """(progress through the phase that holds `step`, its start key, its end key)."""
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times; the schedule has "
                             f"total_steps={self.total_steps}")
        start_step = 0.0
        for i, (end_step, start, end) in enumerate(self.phases):
            if step <= end_step or i == len(self.phases) - 1:
                return (step - start_step) / (end_step - start_step), start, end
            start_step = end_step
        raise AssertionError("unreachable: the last phase always matches")

    def lrs(self, step: int) -> list[float]:
        progress, start, end = self._position(step)
        return [self._anneal(p[start], p[end], progress) for p in self.lr_points]

    def _apply(self) -> None:
        super()._apply()
        if not self.cycle_momentum:
            return
        progress, start, end = self._position(self.last_step)
        m = self.momentum_points
        momentum = self._anneal(m[start], m[end], progress)
        for group in self.optimizer.param_groups:
            if "betas" in group:
                group["betas"] = (momentum, group["betas"][1])
            else:
                group["momentum"] = momentum

    def _check_step(self) -> None:
        super()._check_step()
        self._position(self.last_step + 1)


class ReduceLROnPlateau:
    """Multiply each group's lr by `factor` when the metric has not improved for more than
    `patience` calls of `step(metric)`, as PyTorch's. Improvement ("min" mode, rel threshold):
    metric < best · (1 − threshold); "abs": metric < best − threshold ("max" mode mirrored).
    After a reduction, `cooldown` calls pass before bad steps count again; no lr goes below
    `min_lr`, and a change smaller than `eps` is skipped.
    """

    def __init__(self, optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr: float | Sequence[float] = 0.0, eps: float = 1e-8):
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got "
                             f"{threshold_mode!r}")
        if not factor < 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be < 1, got {factor}")
        groups = optimizer.param_groups
        min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else [min_lr] * len(groups)
        if len(min_lrs) != len(groups):
            raise ValueError(f"ReduceLROnPlateau: {len(min_lrs)} min_lr values for "
                             f"{len(groups)} parameter groups")
        self.optimizer = optimizer
        _chain(optimizer).append(self)
        for group in groups:
            group.setdefault("initial_lr", group["lr"])
        self.cuts = [1.0] * len(groups)                  # per group: Π of the cuts so far
        self.mode, self.threshold_mode = mode, threshold_mode
        self.factor, self.patience, self.cooldown = float(factor), int(patience), int(cooldown)
        self.threshold, self.eps = float(threshold), float(eps)
        self.min_lrs = [float(m) for m in min_lrs]
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0

    def _is_better(self, value: float) -> bool:
        if self.mode == "min":
            bar = self.best * (1 - self.threshold) if self.threshold_mode == "rel" \
                else self.best - self.threshold
            return value < bar
        bar = self.best * (1 + self.threshold) if self.threshold_mode == "rel" \
            else self.best + self.threshold
        return value > bar

    def step(self, metrics) -> None:
        """Record one evaluation's metric (a number or a one-element Tensor)."""
        value = float(metrics.item() if hasattr(metrics, "item") else metrics)
        _check_chain(self)
        self.last_epoch += 1
        if self._is_better(value):
            self.best, self.num_bad_epochs = value, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0                       # bad steps in cool-down do not count
        if self.num_bad_epochs > self.patience:
            groups = self.optimizer.param_groups
            for i, (group, min_lr) in enumerate(zip(groups, self.min_lrs)):
                new_lr = max(group["lr"] * self.factor, min_lr)
                if group["lr"] - new_lr > self.eps:
                    self.cuts[i] *= new_lr / group["lr"]  # the cut, kept as a factor
            _set_chained_lrs(self.optimizer)
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0

    chainable = True           # each cut multiplies the lr: it chains as a product

    def group_factor(self, group: int) -> float:
        """The product of the cuts made to group `group` so far."""
        return self.cuts[group]

    def get_last_lr(self) -> list[float]:
        """The learning rate of each parameter group, as set now."""
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """The counters, the best metric so far, each group's lr and the cuts made."""
        return {"best": self.best, "num_bad_epochs": self.num_bad_epochs,
                "cooldown_counter": self.cooldown_counter, "last_epoch": self.last_epoch,
                "lrs": self.get_last_lr(), "cuts": list(self.cuts)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Resume from `state_dict()`'s output."""
        lrs = _per_group(self, state_dict["lrs"])
        cuts = _per_group(self, state_dict["cuts"]) if "cuts" in state_dict else None
        self.best = float(_number(state_dict["best"]))
        for name in ("num_bad_epochs", "cooldown_counter", "last_epoch"):
            setattr(self, name, int(_number(state_dict[name])))
        for i, (group, lr) in enumerate(zip(self.optimizer.param_groups, lrs)):
            # a checkpoint without the cuts: the cut is what lies between the lr and initial_lr
            self.cuts[i] = cuts[i] if cuts is not None else lr / group["initial_lr"]
        _set_chained_lrs(self.optimizer)


class LinearWarmupCosine(LRScheduler):
    """Linear warm-up over `warmup_steps`, then cosine decay to min_ratio · base_lr at
    `total_steps`:

        factor(s) = (s + 1) / warmup_steps                                  s < warmup_steps
        factor(s) = r + (1 − r) · ½(1 + cos(π · min(1, (s − w) / (total − w))))  otherwise
    """

    def __init__(self, optimizer, warmup_steps: int, total_steps: int, min_ratio: float = 0.0):
        if warmup_steps < 0 or total_steps < warmup_steps:
            raise ValueError(f"LinearWarmupCosine: need 0 <= warmup_steps <= total_steps, got "
                             f"{warmup_steps} and {total_steps}")
        self.warmup_steps, self.total_steps = int(warmup_steps), int(total_steps)
        self.min_ratio = float(min_ratio)
        super().__init__(optimizer)

    def factor(self, step: int) -> float:
        if step < self.warmup_steps:
            return (step + 1) / self.warmup_steps
        span = max(1, self.total_steps - self.warmup_steps)
        progress = min(1.0, (step - self.warmup_steps) / span)
        return self.min_ratio + (1.0 - self.min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))


class NoamLR(LRScheduler):
    """The Transformer schedule (Vaswani et al. 2017, §5.3), with n = s + 1 the step number:

        factor(s) = d_model^(−½) · min(n^(−½), n · warmup_steps^(−3/2))

    i.e. linear warm-up, then inverse-square-root decay. Use base lr 1.0 (times a scale) for the
    paper's values.
    """

    def __init__(self, optimizer, d_model: int, warmup_steps: int = 4000):
        if warmup_steps <= 0:
            raise ValueError(f"NoamLR: warmup_steps must be positive, got {warmup_steps}")
        self.d_model, self.warmup_steps = int(d_model), int(warmup_steps)
        super().__init__(optimizer)

    def factor(self, step: int) -> float:
        n = step + 1
        return self.d_model ** -0.5 * min(n ** -0.5, n * self.warmup_steps ** -1.5)


class SequentialLR(LRScheduler):
    """PyTorch's SequentialLR: `schedulers[0]` sets the lr until step `milestones[0]`, then
    `schedulers[1]`, started at its own step 0, until `milestones[1]`, and so on:

        lr(s) = schedulers[i]'s lr at step s − milestones[i − 1],  i = #{milestones ≤ s}

    The schedules are made on the optimizer first, as in PyTorch; once handed over they are
    stepped through this one only (stepping one of them raises).
    """

    chainable = False

    def __init__(self, optimizer, schedulers: Sequence[LRScheduler], milestones: Sequence[int],
                 last_epoch: int = -1):
        schedulers, milestones = list(schedulers), [int(m) for m in milestones]
        if not schedulers:
            raise ValueError("SequentialLR: needs at least one schedule")
        for s in schedulers:
            if not isinstance(s, LRScheduler) or isinstance(s, SequentialLR):
                raise TypeError(f"SequentialLR: {type(s).__name__} cannot be sequenced; the "
                                f"schedules are step-count schedules (not ReduceLROnPlateau)")
            if s.optimizer is not optimizer:
                raise ValueError(f"SequentialLR: {type(s).__name__} was made on another "
                                 f"optimizer")
            if s._driver is not None:
                raise ValueError(f"SequentialLR: {type(s).__name__} is already driven by "
                                 f"{type(s._driver).__name__}")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR: {len(schedulers)} schedules need "
                             f"{len(schedulers) - 1} milestones, got {len(milestones)}")
        if any(b <= a for a, b in zip([0] + milestones, milestones)):
            raise ValueError(f"SequentialLR: milestones must be positive and increasing, got "
                             f"{milestones}")
        if last_epoch != -1:
            raise ValueError("SequentialLR: last_epoch other than -1 is not supported; resume "
                             "with load_state_dict")
        self.schedulers, self.milestones = schedulers, milestones
        chain = _chain(optimizer)
        chain[:] = [s for s in chain if all(s is not t for t in schedulers)]
        for s in schedulers:
            s._driver = self
        super().__init__(optimizer)

    def _why_not_chainable(self) -> str:
        return " (which sets the lr to its current schedule's)"

    def _current(self, step: int) -> tuple[LRScheduler, int]:
        """The schedule that holds step `step`, and that step counted from its milestone."""
        i = bisect.bisect_right(self.milestones, step)
        return self.schedulers[i], step - (self.milestones[i - 1] if i else 0)

    def factor(self, step: int) -> float:
        schedule, local = self._current(step)
        return schedule.factor(local)

    def lrs(self, step: int) -> list[float]:
        schedule, local = self._current(step)
        return schedule.lrs(local)

    def _check_step(self) -> None:
        super()._check_step()
        schedule, local = self._current(self.last_step + 1)
        if isinstance(schedule, OneCycleLR):
            schedule._position(local)                 # past its total_steps: refuse


class ChainedScheduler:
    """PyTorch's ChainedScheduler: `step()` steps every schedule in the list, in order (their
    factors multiply, as any schedules sharing an optimizer do). Checked for every schedule
    before any of them moves."""

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer=None):
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError("ChainedScheduler: needs at least one schedule")
        optimizer = optimizer if optimizer is not None else schedulers[0].optimizer
        for s in schedulers:
            if not isinstance(s, LRScheduler):
                raise TypeError(f"ChainedScheduler: {type(s).__name__} is not a step-count "
                                f"schedule (ReduceLROnPlateau needs its metric: step it apart)")
            if s.optimizer is not optimizer:
                raise ValueError(f"ChainedScheduler: {type(s).__name__} was made on another "
                                 f"optimizer")
        self.optimizer, self._schedules = optimizer, schedulers

    def step(self) -> None:
        """Step each schedule in turn; call after optimizer.step()."""
        for s in self._schedules:
            s._check_step()
        for s in self._schedules:
            s.step()

    def get_last_lr(self) -> list[float]:
        """The learning rate of each parameter group, as set now."""
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """Each schedule's state, in order."""
        return {"schedules": [s.state_dict() for s in self._schedules]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Resume from `state_dict()`'s output."""
        saved = list(state_dict["schedules"])
        if len(saved) != len(self._schedules):
            raise ValueError(f"ChainedScheduler.load_state_dict: the checkpoint has "
                             f"{len(saved)} schedules, this one {len(self._schedules)}")
        for s, state in zip(self._schedules, saved):
            s.load_state_dict(state)
