"""Optimizers (SGD, RMSprop, Adam, AdamW) and gradient clipping; the learning-rate schedules
live in nn/lr_scheduler.py and are also reached here (`nn.optim.StepLR`, and PyTorch's
`nn.optim.lr_scheduler.StepLR`), weight averaging in nn/swa_utils.py
(`nn.optim.swa_utils.AveragedModel`).

Updates follow PyTorch's formulas exactly, run under `no_grad`, work on each parameter's `.data`
with its own array module (`p.xp`, so any device), and keep the parameter's dtype. Parameters
whose `.grad` is None are skipped. `state_dict()` holds everything needed to resume training
exactly (per-parameter arrays keyed by parameter index, step counts, hyperparameters) and goes
through `nn.save`/`nn.load`.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

import minigrad as mg

from . import lr_scheduler, swa_utils
from .lr_scheduler import (ChainedScheduler, CosineAnnealingLR, ExponentialLR, LambdaLR,
                           LinearLR, LinearWarmupCosine, LRScheduler, MultiStepLR, NoamLR,
                           OneCycleLR, ReduceLROnPlateau, SequentialLR, StepLR)


class Optimizer:
    """Base class: parameter groups, per-parameter state, zero_grad and state_dict.

    `params` is an iterable of Parameters, or of dicts {"params": [...], "lr": ...} (parameter
    groups, each overriding the defaults).
    """

    def __init__(self, params: Iterable, defaults: dict[str, Any]):
        self.defaults = dict(defaults)
        self.param_groups: list[dict[str, Any]] = []
        self.state: dict[int, dict[str, Any]] = {}     # parameter index -> its state
        params = list(params)
        if not params:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add a group {"params": [...], "lr": ..., ...}; missing options take the defaults.
        A parameter may belong to one group only."""
        group = dict(group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, mg.Tensor) else list(params)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for p in group["params"]:
            if not isinstance(p, mg.Tensor):
                raise TypeError(f"{type(self).__name__}: parameters must be Tensors, got "
                                f"{type(p).__name__}")
            if id(p) in seen:
                raise ValueError(f"{type(self).__name__}: a parameter appears in more than one "
                                 f"group (or twice)")
            seen.add(id(p))
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self.param_groups.append(group)

    def _indexed_params(self):
        """(index, parameter, group) for every parameter, indexed across all groups."""
        index = 0
        for group in self.param_groups:
            for p in group["params"]:
                yield index, p, group
                index += 1

    @mg.compiler.disable
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter (to None, or to zeros). Inside a compiled
        step it runs live at every replay."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none or p.grad is None:
                    p.grad = None
                else:
                    p.grad = mg.zeros_like(p)

    @mg.compiler.disable
    @mg.no_grad()
    def step(self) -> None:
        """One update of every parameter that has a gradient. Inside a compiled step it runs
        live at every replay: it reads the learning rate, step counts and gradients then."""
        states = self.state
        modules = {}                       # array type -> array module, looked up once a step
        index = -1
        for group in self.param_groups:
            for p in group["params"]:
                index += 1
                if p.grad is None:
                    continue
                grad, data = p.grad.data, p.data
                if grad.shape != data.shape:
                    raise RuntimeError(f"{type(self).__name__}: parameter {index} has shape "
                                       f"{tuple(data.shape)} but its grad has "
                                       f"{tuple(grad.shape)}")
                state = states.get(index)
                if state is None:
                    state = states[index] = {}
                if grad.dtype != data.dtype:
                    grad = grad.astype(data.dtype)
                xp = modules.get(type(data))
                if xp is None:
                    xp = modules[type(data)] = p.xp
                self._update(p, grad, state, group, xp)

    def _update(self, p: mg.Tensor, g, state: dict, group: dict, xp) -> None:
        """Update parameter `p` in place (through its in-place methods, so that a graph that
        saved p refuses a backward afterwards) given its gradient array `g`."""
        raise NotImplementedError

    # -- saving and resuming -------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """{"state": {index: {name: array or number}}, "param_groups": [{hyperparameters,
        "params": [indices]}]}, with host NumPy copies of every array."""
        state = {}
        for index, entries in self.state.items():
            state[index] = {k: (np.array(_host(v), copy=True) if _is_array(v) else v)
                            for k, v in entries.items()}
        groups, start = [], 0
        for group in self.param_groups:
            saved = {k: (list(v) if isinstance(v, tuple) else v)
                     for k, v in group.items() if k != "params"}
            saved["params"] = list(range(start, start + len(group["params"])))
            start += len(group["params"])
            groups.append(saved)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore state and hyperparameters saved by `state_dict()` (possibly after
        `nn.save`/`nn.load`). Checked fully before anything changes."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(f"{type(self).__name__}.load_state_dict: the checkpoint has "
                             f"{len(groups)} parameter groups, this optimizer "
                             f"{len(self.param_groups)}")
        for i, (saved, group) in enumerate(zip(groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(f"{type(self).__name__}.load_state_dict: group {i} has "
                                 f"{len(saved['params'])} parameters in the checkpoint, "
                                 f"{len(group['params'])} here")
        params = {index: p for index, p, _ in self._indexed_params()}
        new_state: dict[int, dict[str, Any]] = {}
        for key, entries in state_dict["state"].items():
            index = int(key)
            if index not in params:
                raise ValueError(f"{type(self).__name__}.load_state_dict: state for parameter "
                                 f"{index}, but there are only {len(params)} parameters")
            p = params[index]
            restored = {}
            for name, value in entries.items():
                if _is_array(value) and np.ndim(_host(value)) > 0:
                    host = _host(value)
                    if host.shape != tuple(p.shape):
                        raise ValueError(f"{type(self).__name__}.load_state_dict: state "
                                         f"{name!r} of parameter {index} has shape "
                                         f"{host.shape}, the parameter {tuple(p.shape)}")
                    restored[name] = mg.tensor(host.astype(p.dtype), device=p.device).data
                else:
                    restored[name] = _scalar(value)
            new_state[index] = restored
        for saved, group in zip(groups, self.param_groups):
            for key, value in saved.items():
                if key != "params":
                    group[key] = tuple(value) if isinstance(group.get(key), tuple) else value
        self.state = new_state

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"


def _is_array(value) -> bool:
    return hasattr(value, "dtype") and hasattr(value, "shape")


def _host(value) -> np.ndarray:
    """A host NumPy copy of a Tensor or of an array on any device."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, mg.Tensor):
        return value.numpy()
    return mg.tensor(value).numpy()


def _scalar(value):
    """Counters and flags come back from nn.load as NumPy scalars or 0-d arrays: use Python's."""
    if _is_array(value):
        value = _host(value)[()]
    return value.item() if isinstance(value, np.generic) else value


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, as PyTorch:

        g ← g + λ w                                  (weight_decay λ)
        b ← g on the first step, else μ b + (1 − dampening) g      (momentum μ > 0)
        g ← g + μ b (nesterov) or b
        w ← w − lr · g
    """

    def __init__(self, params: Iterable, lr: float, momentum: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, dampening: float = 0.0):
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"SGD: lr, momentum and weight_decay must be >= 0, got lr={lr}, "
                             f"momentum={momentum}, weight_decay={weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: nesterov momentum needs momentum > 0 and dampening = 0")
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay,
                                      nesterov=nesterov, dampening=dampening))

    def _update(self, p, g, state, group, xp):
        w = p.data
        if group["weight_decay"]:
            g = g + group["weight_decay"] * w
        momentum = group["momentum"]
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = g.copy()
            else:                                    # b ← μ b + (1 − dampening) g, in place
                buf *= momentum
                buf += (1.0 - group["dampening"]) * g
                state["momentum_buffer"] = buf
            g = g + momentum * buf if group["nesterov"] else buf
        p.sub_(group["lr"] * g)                      # in place, as PyTorch updates parameters


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture 6e), as PyTorch, with v the running mean of g²:

        g ← g + λ w                                  (weight_decay λ)
        v ← α v + (1 − α) g²
        d ← √(v − ḡ²) + eps, ḡ ← α ḡ + (1 − α) g    (centered)   else   d ← √v + eps
        b ← μ b + g / d,  w ← w − lr · b            (momentum μ > 0)  else  w ← w − lr · g / d
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False):
        if lr < 0 or eps < 0 or weight_decay < 0 or momentum < 0 or alpha < 0:
            raise ValueError(f"RMSprop: lr, alpha, eps, weight_decay and momentum must be >= 0, "
                             f"got lr={lr}, alpha={alpha}, eps={eps}, "
                             f"weight_decay={weight_decay}, momentum={momentum}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=bool(centered)))

    def _update(self, p, g, state, group, xp):
        w = p.data
        alpha, momentum = group["alpha"], group["momentum"]
        if group["weight_decay"]:
            g = g + group["weight_decay"] * w
        if "step" not in state:
            state["step"] = 0
            state["square_avg"] = xp.zeros_like(w)
            if momentum > 0:
                state["momentum_buffer"] = xp.zeros_like(w)
            if group["centered"]:
                state["grad_avg"] = xp.zeros_like(w)
        state["step"] += 1
        v = state["square_avg"]
        v *= alpha                                   # v ← α v + (1 − α) g², in place
        v += (1.0 - alpha) * (g * g)
        if group["centered"]:
            mean = state["grad_avg"]
            mean *= alpha
            mean += (1.0 - alpha) * g
            denom = xp.sqrt(v - mean * mean)
        else:
            denom = xp.sqrt(v)
        denom += group["eps"]
        if momentum > 0:
            buf = state["momentum_buffer"]
            buf *= momentum
            buf += g / denom
            p.sub_(group["lr"] * buf)
        else:
            p.sub_(group["lr"] * (g / denom))


class Adagrad(Optimizer):
    """Adagrad (Duchi, Hazan & Singer 2011), as PyTorch, with t the parameter's step count
    and s the sum of its squared gradients:

        g ← −g                                       (maximize)
        g ← g + λ w                                  (weight_decay λ)
        s ← s + g²                                   (s starts at initial_accumulator_value)
        w ← w − lr / (1 + (t − 1) · lr_decay) · g / (√s + eps)
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, *, maximize: bool = False):
        values = dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                      initial_accumulator_value=initial_accumulator_value, eps=eps)
        negative = {k: v for k, v in values.items() if v < 0}
        if negative:
            raise ValueError(f"Adagrad: {', '.join(negative)} must be >= 0, got "
                             + ", ".join(f"{k}={v}" for k, v in negative.items()))
        if not isinstance(maximize, bool):
            raise TypeError(f"Adagrad: maximize must be True or False, got {maximize!r}")
        super().__init__(params, dict(values, maximize=maximize))

    def _update(self, p, g, state, group, xp):
        w = p.data
        if group["maximize"]:
            g = -g
        if group["weight_decay"]:
            g = g + group["weight_decay"] * w
        if "step" not in state:
            state["step"] = 0
            state["sum"] = xp.full_like(w, group["initial_accumulator_value"])
        state["step"] += 1
        total = state["sum"]
        total += g * g                               # s ← s + g², in place
        rate = group["lr"] / (1.0 + (state["step"] - 1) * group["lr_decay"])
        p.sub_(rate * (g / (xp.sqrt(total) + group["eps"])))


class Adam(Optimizer):
    """Adam (Kingma & Ba 2015), as PyTorch, with t the parameter's step count:

        g ← −g                                       (maximize)
        g ← g + λ w                                  (weight_decay λ, added to the gradient)
        m ← β₁ m + (1 − β₁) g,   v ← β₂ v + (1 − β₂) g²
        v̂ ← max(v̂, v), then v̂ in v's place below   (amsgrad: the largest v so far)
        w ← w − lr · (m / (1 − β₁ᵗ)) / (√v / √(1 − β₂ᵗ) + eps)
    """

    decoupled_weight_decay = False

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, maximize: bool = False):
        beta1, beta2 = betas
        if lr < 0 or eps < 0 or weight_decay < 0:
            raise ValueError(f"{type(self).__name__}: lr, eps and weight_decay must be >= 0, "
                             f"got lr={lr}, eps={eps}, weight_decay={weight_decay}")
        if not (0.0 <= beta1 < 1.0 and 0.0 <= beta2 < 1.0):
            raise ValueError(f"{type(self).__name__}: betas must lie in [0, 1), got {betas}")
        for name, flag in (("amsgrad", amsgrad), ("maximize", maximize)):
            if not isinstance(flag, bool):
                raise TypeError(f"{type(self).__name__}: {name} must be True or False, got "
                                f"{flag!r}")
        super().__init__(params, dict(lr=lr, betas=(float(beta1), float(beta2)), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize))

    def _update(self, p, g, state, group, xp):
        w = p.data
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        if group.get("maximize"):
            g = -g
        decay = group["weight_decay"]
        if decay and self.decoupled_weight_decay:
            p.mul_(1.0 - lr * decay)                 # AdamW: shrink the weights first
        elif decay:
            g = g + decay * w
        if "step" not in state:
            state["step"] = 0
            state["exp_avg"] = xp.zeros_like(w)
            state["exp_avg_sq"] = xp.zeros_like(w)
        state["step"] += 1
        t = state["step"]
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m *= beta1                                   # m ← β₁ m + (1 − β₁) g, in place
        m += (1.0 - beta1) * g
        v *= beta2                                   # v ← β₂ v + (1 − β₂) g², in place
        v += (1.0 - beta2) * (g * g)
        state["exp_avg"], state["exp_avg_sq"] = m, v
        if group.get("amsgrad"):                     # the largest v so far, in place
            largest = state.get("max_exp_avg_sq")
            if largest is None:
                largest = state["max_exp_avg_sq"] = xp.zeros_like(w)
            largest[...] = xp.maximum(largest, v)
            v = largest
        step_size = lr / (1.0 - beta1 ** t)
        denom = xp.sqrt(v)
        denom /= math.sqrt(1.0 - beta2 ** t)
        denom += eps
        p.sub_(step_size * (m / denom))              # in place, as PyTorch updates parameters


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter 2019), as PyTorch:
    w ← w (1 − lr λ) first, then the Adam update without λ in the gradient."""

    decoupled_weight_decay = True

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


# ---------------------------------------------------------------------------------------------
# gradient clipping

def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False) -> float:
    """Scale all gradients together so their joint norm is at most `max_norm`.

    total = (Σ_p ‖g_p‖ⁿ)^(1/n) over every parameter with a gradient (n = norm_type, inf for the
    largest |g|); when total > max_norm each gradient is multiplied by max_norm / (total + 1e-6).
    Returns total, the norm before clipping, as a float. With `error_if_nonfinite`, a NaN or
    infinite total raises RuntimeError and leaves the gradients as they were. Inside a compiled
    step it runs live at every replay (its result may be returned by the step, not used in it).
    """
    return _clip_grad_norm(_parameters(parameters), max_norm, norm_type, error_if_nonfinite)


@mg.compiler.disable
def _clip_grad_norm(params: list, max_norm: float, norm_type: float,
                    error_if_nonfinite: bool) -> float:
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return 0.0
    norm_type = float(norm_type)
    if math.isinf(norm_type):
        total = max(float(g.xp.abs(g.data).max()) if g.data.size else 0.0 for g in grads)
    else:
        total = sum(float((g.xp.abs(g.data.astype(np.float64)) ** norm_type).sum())
                    for g in grads) ** (1.0 / norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"clip_grad_norm: the total norm of order {norm_type} of the "
                           f"gradients is {total}; pass error_if_nonfinite=False to scale "
                           f"anyway")
    coefficient = max_norm / (total + 1e-6)
    if coefficient < 1.0:
        with mg.no_grad():
            for p in params:
                if p.grad is not None:
                    p.grad = p.grad * coefficient
    return total


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False) -> mg.Tensor:
    """PyTorch's spelling of `clip_grad_norm`, with PyTorch's result: the total norm as a
    0-d Tensor of the gradients' dtype (`.item()` gives the number)."""
    return _clip_grad_norm_tensor(_parameters(parameters), max_norm, norm_type,
                                  error_if_nonfinite)


@mg.compiler.disable
def _clip_grad_norm_tensor(params: list, max_norm: float, norm_type: float,
                           error_if_nonfinite: bool) -> mg.Tensor:
    dtypes = [p.grad.dtype for p in params if p.grad is not None]
    total = _clip_grad_norm(params, max_norm, norm_type, error_if_nonfinite)
    return mg.tensor(total, dtype=dtypes[0] if dtypes else mg.get_default_dtype())


def clip_grad_value_(parameters, clip_value: float) -> None:
    """Clamp every gradient elementwise to [−clip_value, clip_value], as PyTorch's (live inside
    a compiled step)."""
    clip_value = float(clip_value)
    if not clip_value >= 0:
        raise ValueError(f"clip_grad_value_: clip_value must be >= 0, got {clip_value}")
    _clip_grad_value(_parameters(parameters), clip_value)


@mg.compiler.disable
@mg.no_grad()
def _clip_grad_value(params: list, clip_value: float) -> None:
    for p in params:
        if p.grad is not None:
            p.grad = mg.clip(p.grad, -clip_value, clip_value)


def _parameters(parameters) -> list[mg.Tensor]:
    """A parameter or an iterable of them, as a list."""
    return [parameters] if isinstance(parameters, mg.Tensor) else list(parameters)
