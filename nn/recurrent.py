"""Gated recurrent layers: GRU, the update-gate-only unit, and LSTM.

Every layer keeps PyTorch's parameter layout (gates stacked along the rows of `weight_ih`
and `weight_hh`), so state dicts load into torch.nn.GRU / torch.nn.LSTM and back.

A sequence layer computes the input projections of all T steps in one matmul before the
loop, x (B, T, I) @ W_ihᵀ -> (B, T, G·H), so each step adds only the recurrent matmul
h W_hhᵀ and the elementwise gates. The recurrence itself runs one of two ways:

- unrolled (LSTM, UpdateGateRNN, GRU with `return_gates=True`): each step's operations go into
  the graph, so backpropagation through time is just the engine's backward. The gradients of
  the per-step slices gx[:, t] add into one buffer of the projection's shape;
- fused (GRU otherwise): a layer's whole recurrence is one primitive, `GRUSequence`, with
  backpropagation through time written out by hand. Same numbers, without the bookkeeping
  of ~15 graph nodes per step.

With `bidirectional=True` each layer runs twice, forward in time and on the time-reversed
input, and concatenates the two outputs, as torch.nn.GRU / LSTM do (parameters of the reverse
direction end in `_reverse`).

As in PyTorch, cells accept an unbatched input (I,) and sequence layers an unbatched (T, I)
(whatever `batch_first` says), with states lacking the batch axis too. Sequence layers run a
batch of different lengths with `lengths=` or a PackedSequence (nn.utils.rnn): each sequence
stops at its own end, where its state is frozen (h_t = h_{t−1} at padded steps, outputs 0
there), and the reverse direction starts at each sequence's last real step.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import minigrad as mg
from minigrad import Tensor

import numpy as np

from . import functional as F
from . import init
from ._checks import check_flag, check_probability, check_size
from .module import Module, Parameter
from .utils.rnn import PackedSequence, checked_lengths, pack_padded_sequence, pad_packed_sequence

__all__ = ["GRUCell", "GRU", "GRUGates", "GRUSequence", "gru_sequence", "UpdateGateCell",
           "UpdateGateRNN", "UpdateGates", "LSTMCell", "LSTM", "LSTMGates", "RNNCell", "RNN"]


# ---------------------------------------------------------------------------------------------
# Shared helpers

def _reverse_time(seq: Tensor, lengths: np.ndarray | None = None) -> Tensor:
    """(B, T, D) -> the same steps in reverse order, (B, T, D). With `lengths`, each sequence's
    first lengths[b] steps are reversed and its padding stays where it is (its own inverse)."""
    if lengths is None:
        return seq[:, ::-1]
    B, T = seq.shape[0], seq.shape[1]
    t = np.arange(T)[None, :]
    order = np.where(t < lengths[:, None], lengths[:, None] - 1 - t, t)      # (B, T)
    return seq[np.arange(B)[:, None], order]


def _step_masks(lengths: np.ndarray | None, T: int, x: Tensor):
    """None, or (per step t a bool (B, 1) Tensor, True while t < lengths[b]; the same as a
    (B, T, 1) float mask that zeroes outputs at padded steps)."""
    if lengths is None:
        return None
    real = np.arange(T)[None, :] < lengths[:, None]                         # (B, T)
    steps = [mg.tensor(real[:, t:t + 1], device=x.device) for t in range(T)]
    return steps, mg.tensor(real[:, :, None], dtype=x.dtype, device=x.device)


def _frozen(mask_t: Tensor | None, new: Tensor, old: Tensor) -> Tensor:
    """The new state where the sequence goes on, the old one where it has ended."""
    return new if mask_t is None else mg.where(mask_t, new, old)


def _zeros_state(x: Tensor, batch: int, hidden_size: int) -> Tensor:
    return mg.zeros(batch, hidden_size, dtype=x.dtype, device=x.device)


def _check_cell_input(name: str, x: Tensor, input_size: int) -> None:
    if x.ndim not in (1, 2) or x.shape[-1] != input_size:
        raise ValueError(f"{name}: input must be (B, I = {input_size}) or unbatched "
                         f"(I = {input_size},), got shape {tuple(x.shape)}")


def _batched_state(name: str, what: str, h: Tensor | None, x: Tensor, unbatched: bool,
                   hidden_size: int) -> Tensor:
    """A cell's state as (B, H): zeros when None, (H,) -> (1, H) for an unbatched input."""
    if h is None:
        return _zeros_state(x, x.shape[0], hidden_size)
    if unbatched:
        _check_state(name, what, h, (hidden_size,))
        return h.unsqueeze(0)
    _check_state(name, what, h, (x.shape[0], hidden_size))
    return h


def _check_state(name: str, what: str, h: Tensor, shape: tuple[int, ...]) -> None:
    if tuple(h.shape) != tuple(shape):
        raise ValueError(f"{name}: {what} must have shape {tuple(shape)}, got "
                         f"{tuple(h.shape)}")


class _CellParameters(Module):
    """weight_ih (G·H, I), weight_hh (G·H, H), bias_ih (G·H), bias_hh (G·H) for G gates,
    all U(−1/√H, 1/√H) as in PyTorch."""

    num_gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True):
        super().__init__()
        name = type(self).__name__
        self.input_size = check_size(name, "input_size", input_size)
        self.hidden_size = check_size(name, "hidden_size", hidden_size)
        bias = check_flag(name, "bias", bias)
        rows = self.num_gates * self.hidden_size
        self.weight_ih = Parameter(mg.zeros(rows, self.input_size))
        self.weight_hh = Parameter(mg.zeros(rows, self.hidden_size))
        if bias:
            self.bias_ih = Parameter(mg.zeros(rows))
            self.bias_hh = Parameter(mg.zeros(rows))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every weight and bias again from U(−1/√H, 1/√H), as PyTorch does."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for param in self.parameters():
            init.uniform_(param, -bound, bound)

    def _checked_state(self, x: Tensor, h: Tensor | None) -> tuple[Tensor, Tensor, bool]:
        """Checks x: (B, I) or unbatched (I,), and h: (B, H) or (H,) to match. Returns
        (x (B, I), h (B, H) or zeros when None, whether the input was unbatched)."""
        name = type(self).__name__
        _check_cell_input(name, x, self.input_size)
        unbatched = x.ndim == 1
        x = x.unsqueeze(0) if unbatched else x
        return x, _batched_state(name, "h", h, x, unbatched, self.hidden_size), unbatched

    def extra_repr(self) -> str:
        return (f"{self.input_size}, {self.hidden_size}"
                + ("" if self.bias_ih is not None else ", bias=False"))


class _StackedParameters(Module):
    """Per-layer parameters weight_ih_l{k} (G·H, I or D·H), weight_hh_l{k} (G·H, H),
    bias_ih_l{k}, bias_hh_l{k} (G·H), U(−1/√H, 1/√H), and the checks shared by the
    multi-layer sequence modules. D = 2 directions when `bidirectional` (the reverse
    direction's parameters end in `_reverse`, as in PyTorch), else 1."""

    num_gates = 1

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, *,
                 batch_first: bool = True, bias: bool = True, dropout: float = 0.0,
                 bidirectional: bool = False):
        super().__init__()
        name = type(self).__name__
        self.input_size = check_size(name, "input_size", input_size)
        self.hidden_size = check_size(name, "hidden_size", hidden_size)
        self.num_layers = check_size(name, "num_layers", num_layers)
        self.batch_first = check_flag(name, "batch_first", batch_first)
        self.bias = check_flag(name, "bias", bias)
        self.dropout = check_probability(name, "dropout", dropout)
        self.bidirectional = check_flag(name, "bidirectional", bidirectional)
        self.num_directions = 2 if self.bidirectional else 1
        rows = self.num_gates * self.hidden_size
        for k in range(self.num_layers):
            layer_input = self.input_size if k == 0 else self.num_directions * self.hidden_size
            for suffix in self._suffixes():
                setattr(self, f"weight_ih_l{k}{suffix}", Parameter(mg.zeros(rows, layer_input)))
                setattr(self, f"weight_hh_l{k}{suffix}",
                        Parameter(mg.zeros(rows, self.hidden_size)))
                if bias:
                    setattr(self, f"bias_ih_l{k}{suffix}", Parameter(mg.zeros(rows)))
                    setattr(self, f"bias_hh_l{k}{suffix}", Parameter(mg.zeros(rows)))
        self.reset_parameters()

    def _suffixes(self) -> tuple[str, ...]:
        """Parameter-name endings of the directions: forward, then reverse."""
        return ("", "_reverse") if self.bidirectional else ("",)

    def reset_parameters(self) -> None:
        """Draw every weight and bias again from U(−1/√H, 1/√H), as PyTorch does."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for param in self.parameters():
            init.uniform_(param, -bound, bound)

    def _layer_weights(self, k: int, suffix: str = ""
                       ) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        names = [f"{n}_l{k}{suffix}" for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        if self.bias:
            return tuple(getattr(self, name) for name in names)
        return getattr(self, names[0]), getattr(self, names[1]), None, None

    def _layers(self, x: Tensor, states: list, return_gates: bool,
                lengths: np.ndarray | None = None) -> tuple[Tensor, list, list]:
        """Run every layer, each in every direction, layer k's output feeding layer k + 1.

        `states` holds one initial state per layer and direction (index k·D + d). Direction 1
        reads the time-reversed input (each sequence reversed within its own length, when
        `lengths` is given); its output and gates are reversed back, and its final state is
        the one after t = 1. Returns (last layer's output (B, T, D·H), final states in the
        order of `states`, gates per layer and direction or [])."""
        D = self.num_directions
        masks = _step_masks(lengths, x.shape[1], x)
        layer_input, finals, gates = x, [], []
        for k in range(self.num_layers):
            outputs = []
            for d, suffix in enumerate(self._suffixes()):
                seq = layer_input if d == 0 else _reverse_time(layer_input, lengths)
                output, final, layer_gates = self._run_direction(
                    seq, k, suffix, states[k * D + d], return_gates,
                    None if masks is None else masks[0])
                if masks is not None:
                    output = output * masks[1]               # outputs are 0 at padded steps
                if d == 1:
                    output = _reverse_time(output, lengths)
                    if layer_gates is not None:
                        layer_gates = type(layer_gates)(*(_reverse_time(v, lengths)
                                                          for v in layer_gates))
                outputs.append(output)                       # (B, T, H)
                finals.append(final)
                if layer_gates is not None:
                    gates.append(layer_gates)
            # (B, T, D·H): [forward; reverse] along the features, as in PyTorch
            output = outputs[0] if D == 1 else mg.concat(outputs, axis=-1)
            layer_input = self._between_layers(output, k)
        return output, finals, gates

    def _run_direction(self, seq: Tensor, k: int, suffix: str, state, return_gates: bool,
                       masks: list[Tensor] | None = None):
        """Layer k's recurrence in one direction over seq (B, T, I); with `masks` (per step a
        bool (B, 1), False at padding) the state is frozen past each sequence's end. Returns
        (output (B, T, H), final state, gates or None)."""
        raise NotImplementedError

    def _prepared_input(self, x, lengths) -> tuple[Tensor, np.ndarray | None, bool]:
        """The input as (B, T, I), checked, with its lengths (from a PackedSequence or
        `lengths=`, else None) and whether it was unbatched (T, I)."""
        name = type(self).__name__
        packed = isinstance(x, PackedSequence)
        if packed:
            if lengths is not None:
                raise ValueError(f"{name}: a PackedSequence carries its lengths; pass no "
                                 f"lengths= with it")
            # unpacked straight to (B, T, I), whatever batch_first says: no swap below
            x, lengths = pad_packed_sequence(x, batch_first=True)
        if x.ndim not in (2, 3) or x.shape[-1] != self.input_size:
            layout = "(B, T, I)" if self.batch_first else "(T, B, I)"
            raise ValueError(f"{name}: input must be {layout} or unbatched (T, I) with I = "
                             f"{self.input_size}, got shape {tuple(x.shape)}")
        unbatched = x.ndim == 2
        if unbatched:
            x = x.unsqueeze(0)                               # (T, I) -> (1, T, I)
        elif not (self.batch_first or packed):
            x = x.swapaxes(0, 1)                             # (T, B, I) -> (B, T, I)
        if x.shape[1] == 0:
            raise ValueError(f"{name}: the input sequence is empty (T = 0)")
        if lengths is not None:
            if unbatched:
                raise ValueError(f"{name}: lengths= needs a batch; an unbatched (T, I) input "
                                 f"is one sequence of length T")
            lengths = checked_lengths(name, lengths, x.shape[0], x.shape[1])
        return x, lengths, unbatched

    def _initial_state(self, x: Tensor, state: Tensor | None, what: str,
                       unbatched: bool = False) -> list[Tensor]:
        """One (B, H) state per layer and direction, from `state` (num_layers·D, B, H) (or
        (num_layers·D, H) for an unbatched input) or zeros; entry k·D + d is layer k's
        direction d (0 forward, 1 reverse)."""
        B, n = x.shape[0], self.num_layers * self.num_directions
        if state is None:
            return [_zeros_state(x, B, self.hidden_size)] * n
        if unbatched:
            _check_state(type(self).__name__, what, state, (n, self.hidden_size))
            state = state.unsqueeze(1)
        _check_state(type(self).__name__, what, state, (n, B, self.hidden_size))
        return [state[k] for k in range(n)]

    def _finished(self, output: Tensor, finals, packed: PackedSequence | None,
                  lengths: np.ndarray | None, unbatched: bool):
        """The output in the caller's layout (a PackedSequence for a packed input) and each
        final state (num_layers·D, B, H), without the batch axis for an unbatched input."""
        if unbatched:
            return output[0], tuple(f[:, 0] for f in finals)
        if packed is not None:
            output = pack_padded_sequence(output, lengths, batch_first=True,
                                          enforce_sorted=packed.sorted_indices is None)
            return output, finals
        return self._time_layout(output), finals

    def _between_layers(self, output: Tensor, k: int) -> Tensor:
        """Dropout on each layer's output except the last (as in PyTorch)."""
        if self.dropout > 0.0 and k < self.num_layers - 1:
            return mg.dropout(output, self.dropout, self.training)
        return output

    def _forward_single_state(self, x, h0: Tensor | None, return_gates: bool, lengths):
        """forward() of the layers whose state is one tensor h (GRU, RNN, UpdateGateRNN)."""
        packed = x if isinstance(x, PackedSequence) else None
        x, lengths, unbatched = self._prepared_input(x, lengths)       # (B, T, I)
        states = self._initial_state(x, h0, "h0", unbatched)
        output, finals, gates = self._layers(x, states, return_gates, lengths)
        output, (h_n,) = self._finished(output, (mg.stack(finals, axis=0),), packed, lengths,
                                        unbatched)
        return (output, h_n, gates) if return_gates else (output, h_n)

    def _time_layout(self, output: Tensor) -> Tensor:
        return output if self.batch_first else output.swapaxes(0, 1)

    def extra_repr(self) -> str:
        parts = [f"{self.input_size}, {self.hidden_size}"]
        if self.num_layers != 1:
            parts.append(f"num_layers={self.num_layers}")
        if not self.batch_first:
            parts.append("batch_first=False")
        if not self.bias:
            parts.append("bias=False")
        if self.dropout:
            parts.append(f"dropout={self.dropout}")
        if self.bidirectional:
            parts.append("bidirectional=True")
        return ", ".join(parts)


# ---------------------------------------------------------------------------------------------
# GRU

class GRUGates(NamedTuple):
    """Per-step gate values of one GRU layer, each (B, T, H): reset r, update z, candidate n."""
    r: Tensor
    z: Tensor
    n: Tensor


def _gru_step(gx: Tensor, h: Tensor, weight_hh: Tensor,
              bias_hh: Tensor | None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """One GRU step from gx = W_ih x + b_ih (B, 3H) and h (B, H). Returns (h', r, z, n)."""
    H = h.shape[-1]
    gh = F.linear(h, weight_hh, bias_hh)                     # (B, 3H) = W_hh h + b_hh
    rz = mg.sigmoid(gx[:, :2 * H] + gh[:, :2 * H])          # (B, 2H): r and z in one op
    r, z = rz[:, :H], rz[:, H:]                              # 2 × (B, H)
    n = mg.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])          # (B, H)
    r.name, z.name, n.name = "r", "z", "n"                   # labels in graph pictures
    # h' = (1 − z) ⊙ n + z ⊙ h, written as n + z ⊙ (h − n): one op fewer per step
    return n + z * (h - n), r, z, n


def _gru_unrolled(gx: Tensor, h: Tensor, weight_hh: Tensor, bias_hh: Tensor | None = None,
                  gates: list | None = None, masks: list[Tensor] | None = None) -> Tensor:
    """The GRU recurrence unrolled into the graph: gx (B, T, 3H), h (B, H) -> (B, T, H).
    With a `gates` list, appends GRUGates(r, z, n) (each (B, T, H)) to it; with `masks`, each
    sequence's state is frozen past its end."""
    hs, rs, zs, ns = [], [], [], []
    for t in range(gx.shape[1]):
        h_new, r, z, n = _gru_step(gx[:, t], h, weight_hh, bias_hh)
        h = _frozen(None if masks is None else masks[t], h_new, h)
        hs.append(h)
        if gates is not None:
            rs.append(r)
            zs.append(z)
            ns.append(n)
    if gates is not None:
        gates.append(GRUGates(mg.stack(rs, axis=1), mg.stack(zs, axis=1), mg.stack(ns, axis=1)))
    return mg.stack(hs, axis=1)                              # (B, T, H)


class GRUSequence(mg.FusedFunction):
    """One GRU layer over a whole sequence as a single primitive:

        gh_t = W_hh h_{t−1} + b_hh,  [r_t, z_t] = σ(gx_t[:2H] + gh_t[:2H])
        n_t = tanh(gx_t[2H:] + r_t ⊙ gh_t[2H:]),  h_t = n_t + z_t ⊙ (h_{t−1} − n_t)

    Inputs gx (B, T, 3H) = x W_ihᵀ + b_ih, h0 (B, H), W_hh (3H, H) and optionally b_hh (3H);
    output (h_1 .. h_T) (B, T, H).

    Backward runs through time from t = T to 1 with g_t = ∂L/∂h_t (its own gradient plus what
    flows back from h_{t+1}):

        ∂n = g (1 − z),  ∂a_n = ∂n (1 − n²)                    (a_n: the tanh's argument)
        ∂a_r = ∂a_n ⊙ gh_n ⊙ r(1 − r),  ∂a_z = g ⊙ (h_{t−1} − n) ⊙ z(1 − z)
        ∂gx_t = [∂a_r, ∂a_z, ∂a_n],  ∂gh_t = [∂a_r, ∂a_z, ∂a_n ⊙ r]
        g_{t−1} += g ⊙ z + ∂gh_t W_hh

    then ∂W_hh = Σ_t ∂gh_tᵀ h_{t−1} and ∂b_hh = Σ_t ∂gh_t, each one matmul or sum over all
    steps (`array_backward`). When a graph of the backward is recorded (create_graph=True),
    `recorded_backward` instead rebuilds the unrolled graph from the inputs and differentiates that,
    so higher derivatives are exact too.
    """

    def forward(self, gx, h0, weight_hh, bias_hh=None):
        xp = self.xp
        B, T, G = gx.shape
        H = G // 3
        # mixed dtypes promote as in any other op (a float64 h0 makes the sequence float64)
        dtype = xp.result_type(*(a for a in (gx, h0, weight_hh, bias_hh) if a is not None))
        out = xp.empty((B, T, H), dtype=dtype)
        h_prev = xp.empty((T, B, H), dtype=dtype)            # h_{t−1} for every t
        rz_all = xp.empty((T, B, 2 * H), dtype=dtype)
        n_all = xp.empty((T, B, H), dtype=dtype)
        gh_n_all = xp.empty((T, B, H), dtype=dtype)
        w_hh_t = weight_hh.T
        h = h0
        for t in range(T):
            h_prev[t] = h
            gh = h @ w_hh_t                                  # (B, 3H)
            if bias_hh is not None:
                gh += bias_hh
            # σ(a) = (1 + tanh(a/2))/2: no overflow for large |a|
            rz = 0.5 * (1.0 + xp.tanh(0.5 * (gx[:, t, :2 * H] + gh[:, :2 * H])))
            n = xp.tanh(gx[:, t, 2 * H:] + rz[:, :H] * gh[:, 2 * H:])
            h = n + rz[:, H:] * (h - n)
            out[:, t] = h
            rz_all[t], n_all[t], gh_n_all[t] = rz, n, gh[:, 2 * H:]
        self.save_for_backward(h_prev, rz_all, n_all, gh_n_all)
        return out

    def array_backward(self, grad):
        """Backpropagation through time on arrays (grad: ∂L/∂output, (B, T, H))."""
        xp = self.xp
        h_prev, rz_all, n_all, gh_n_all = self.saved_tensors
        g_out, w_hh = grad, self.inputs[2].data
        T, B, H = n_all.shape
        grad_gx = xp.empty((B, T, 3 * H), dtype=g_out.dtype)
        grad_gh = xp.empty((T, B, 3 * H), dtype=g_out.dtype)
        g = xp.zeros((B, H), dtype=g_out.dtype)
        for t in reversed(range(T)):
            rz, n = rz_all[t], n_all[t]
            r, z = rz[:, :H], rz[:, H:]
            g = g + g_out[:, t]                              # ∂L/∂h_t
            grad_an = g * (1 - z) * (1 - n * n)              # through tanh: 1 − n²
            block = grad_gh[t]                               # (B, 3H) = ∂gh_t, filled in place
            block[:, :H] = grad_an * gh_n_all[t]             # ∂r, from r ⊙ gh_n
            block[:, H:2 * H] = g * (h_prev[t] - n)          # ∂z
            block[:, :2 * H] *= rz * (1 - rz)                # through σ: σ' = σ(1 − σ)
            block[:, 2 * H:] = grad_an * r
            grad_gx[:, t, :2 * H] = block[:, :2 * H]
            grad_gx[:, t, 2 * H:] = grad_an
            g = g * z + block @ w_hh                         # ∂L/∂h_{t−1}
        flat_gh = grad_gh.reshape(T * B, 3 * H)
        grads = [grad_gx, g, flat_gh.T @ h_prev.reshape(T * B, H)]
        if len(self.inputs) == 4:
            grads.append(flat_gh.sum(axis=0))
        return tuple(grads)

    def recorded_backward(self, grad):
        """The differentiable backward, used when create_graph records it: unroll the
        recurrence with minigrad ops and take that graph's vector-Jacobian product."""
        return self.recorded_gradients(_gru_unrolled, grad, range(len(self.inputs)))


def gru_sequence(gx: Tensor, h0: Tensor, weight_hh: Tensor,
                 bias_hh: Tensor | None = None) -> Tensor:
    """The GRU recurrence as one primitive (see GRUSequence): gx (B, T, 3H) = x W_ihᵀ + b_ih,
    h0 (B, H) -> (h_1 .. h_T) (B, T, H)."""
    inputs = (gx, h0, weight_hh) if bias_hh is None else (gx, h0, weight_hh, bias_hh)
    return GRUSequence.apply(*inputs)


class GRUCell(_CellParameters):
    """One GRU step, gates stacked in the order r, z, n:

        r  = σ(W_ir x + b_ir + W_hr h + b_hr)
        z  = σ(W_iz x + b_iz + W_hz h + b_hz)
        n  = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
        h' = (1 − z) ⊙ n + z ⊙ h

    weight_ih (3H, I), weight_hh (3H, H), bias_ih (3H), bias_hh (3H), U(−1/√H, 1/√H).
    """

    num_gates = 3

    def forward(self, x: Tensor, h: Tensor | None = None) -> Tensor:
        """x: (B, I) or unbatched (I,); h: (B, H) or (H,), zeros when None. Returns h' of h's
        shape."""
        x, h, unbatched = self._checked_state(x, h)
        gx = F.linear(x, self.weight_ih, self.bias_ih)      # (B, 3H)
        h = _gru_step(gx, h, self.weight_hh, self.bias_hh)[0]
        return h[0] if unbatched else h


class GRU(_StackedParameters):
    """A multi-layer GRU: GRUCell's equations over time, layer k's outputs feeding layer k + 1.

    Each layer's recurrence runs as one primitive (GRUSequence, backpropagation through time
    by hand); with `return_gates=True` it is unrolled into the graph instead, step by step,
    so that the gates come out as differentiable tensors. Both give the same numbers.

    Parameters per layer k: weight_ih_l{k} (3H, I for k = 0 else D·H), weight_hh_l{k}
    (3H, H), bias_ih_l{k}, bias_hh_l{k} (3H); gates r, z, n as in GRUCell; U(−1/√H, 1/√H).
    With `bidirectional=True` (D = 2) every layer also runs from t = T down to 1 with its own
    weight_ih_l{k}_reverse, ... and the two directions' h_t are concatenated, [forward;
    reverse] (PyTorch's semantics). `dropout` applies to every layer's output except the
    last, in training mode.
    """

    num_gates = 3

    def forward(self, x, h0: Tensor | None = None, return_gates: bool = False,
                lengths=None):
        """x: (B, T, I) ((T, B, I) when batch_first=False), unbatched (T, I), or a
        PackedSequence; h0: (num_layers·D, B, H) ((num_layers·D, H) unbatched) or None
        (zeros), D = 2 when bidirectional else 1. `lengths` (B ints): run each sequence of a
        padded batch to its own length (see the module docstring).

        Returns (output (B, T, D·H), h_n (num_layers·D, B, H)): output holds the last layer's
        h_t for every t, h_n every layer's final state, ordered layer by layer, forward
        before reverse (the reverse direction ends at t = 1). A packed input gives a packed
        output. With `return_gates=True` a third item lists, per layer and direction,
        GRUGates(r, z, n), each (B, T, H) in input time order and differentiable.
        """
        return self._forward_single_state(x, h0, return_gates, lengths)

    def _run_direction(self, seq, k, suffix, h, return_gates, masks=None):
        weight_ih, weight_hh, bias_ih, bias_hh = self._layer_weights(k, suffix)
        gx = F.linear(seq, weight_ih, bias_ih)              # (B, T, 3H): all steps at once
        if return_gates or masks is not None:                # unrolled: gates, frozen states
            found: list[GRUGates] = []
            output = _gru_unrolled(gx, h, weight_hh, bias_hh, found if return_gates else None,
                                   masks)
            final = output[:, -1]                            # frozen: each sequence's last
            return output, final, found[0] if return_gates else None
        output = gru_sequence(gx, h, weight_hh, bias_hh)    # (B, T, H)
        return output, output[:, -1], None                   # h_T (B, H)


# ---------------------------------------------------------------------------------------------
# The update-gate-only unit

class UpdateGates(NamedTuple):
    """Per-step values of one UpdateGateRNN layer, each (B, T, H): update gate u and
    candidate c (= h̃)."""
    u: Tensor
    c: Tensor


def _update_gate_step(gx: Tensor, h: Tensor, weight_hh: Tensor,
                      bias_hh: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """One step from gx = W_ih x + b_ih (B, 2H) and h (B, H). Returns (h', u, h̃)."""
    H = h.shape[-1]
    pre = gx + F.linear(h, weight_hh, bias_hh)              # (B, 2H): both gates are additive
    u = mg.sigmoid(pre[:, :H])                               # (B, H)
    c = mg.tanh(pre[:, H:])                                  # (B, H): the candidate h̃
    u.name, c.name = "u", "h̃"                                # labels in graph pictures
    # h' = u ⊙ h + (1 − u) ⊙ h̃ = h̃ + u ⊙ (h − h̃)
    return c + u * (h - c), u, c


class UpdateGateCell(_CellParameters):
    """A gated unit with an update gate only (a GRU without its reset gate):

        u  = σ(W_u x + b_iu + U_u h + b_hu)
        h̃  = tanh(W x + b_ic + U h + b_hc)
        h' = u ⊙ h + (1 − u) ⊙ h̃

    With u ≈ 1 the state is copied (h' = h), with u ≈ 0 it is replaced by the candidate.
    weight_ih (2H, I) and weight_hh (2H, H) stack the rows of (u, h̃); bias_ih, bias_hh (2H).
    """

    num_gates = 2

    def forward(self, x: Tensor, h: Tensor | None = None) -> Tensor:
        """x: (B, I) or unbatched (I,); h: (B, H) or (H,), zeros when None. Returns h' of h's
        shape."""
        x, h, unbatched = self._checked_state(x, h)
        gx = F.linear(x, self.weight_ih, self.bias_ih)      # (B, 2H)
        h = _update_gate_step(gx, h, self.weight_hh, self.bias_hh)[0]
        return h[0] if unbatched else h


class UpdateGateRNN(_StackedParameters):
    """UpdateGateCell unrolled over time, in layers (same interface as GRU).

    Parameters per layer k: weight_ih_l{k} (2H, ·), weight_hh_l{k} (2H, H), bias_ih_l{k},
    bias_hh_l{k} (2H), rows stacked (u, h̃).
    """

    num_gates = 2

    def forward(self, x, h0: Tensor | None = None, return_gates: bool = False,
                lengths=None):
        """As GRU.forward: x (B, T, I), (T, I) or a PackedSequence; h0 (num_layers·D, B, H)
        or None; `lengths` for a padded batch.

        Returns (output (B, T, D·H), h_n (num_layers·D, B, H)), and with `return_gates=True`
        a list with one UpdateGates(u, c) per layer and direction, each (B, T, H).
        """
        return self._forward_single_state(x, h0, return_gates, lengths)

    def _run_direction(self, seq, k, suffix, h, return_gates, masks=None):
        weight_ih, weight_hh, bias_ih, bias_hh = self._layer_weights(k, suffix)
        gx = F.linear(seq, weight_ih, bias_ih)              # (B, T, 2H)
        hs, us, cs = [], [], []
        for t in range(gx.shape[1]):
            h_new, u, c = _update_gate_step(gx[:, t], h, weight_hh, bias_hh)
            h = _frozen(None if masks is None else masks[t], h_new, h)
            hs.append(h)
            if return_gates:
                us.append(u)
                cs.append(c)
        gates = UpdateGates(mg.stack(us, axis=1), mg.stack(cs, axis=1)) if return_gates \
            else None
        return mg.stack(hs, axis=1), h, gates                # (B, T, H), h_T (B, H)


# ---------------------------------------------------------------------------------------------
# LSTM

class LSTMGates(NamedTuple):
    """Per-step gate values of one LSTM layer, each (B, T, H): input i, forget f, cell
    candidate g, output o, and the cell state c."""
    i: Tensor
    f: Tensor
    g: Tensor
    o: Tensor
    c: Tensor


def _lstm_step(gx: Tensor, h: Tensor, c: Tensor, weight_hh: Tensor, bias_hh: Tensor | None):
    """One LSTM step from gx = W_ih x + b_ih (B, 4H), h and c (B, H).
    Returns (h', c', i, f, g, o)."""
    H = h.shape[-1]
    pre = gx + F.linear(h, weight_hh, bias_hh)              # (B, 4H), rows i, f, g, o
    if_gates = mg.sigmoid(pre[:, :2 * H])                   # (B, 2H): i and f in one op
    i, f = if_gates[:, :H], if_gates[:, H:]
    g = mg.tanh(pre[:, 2 * H:3 * H])
    o = mg.sigmoid(pre[:, 3 * H:])
    i.name, f.name, g.name, o.name = "i", "f", "g", "o"      # labels in graph pictures
    c_new = f * c + i * g
    return o * mg.tanh(c_new), c_new, i, f, g, o


class LSTMCell(_CellParameters):
    """One LSTM step, gates stacked in the order i, f, g, o (PyTorch's layout):

        i  = σ(W_ii x + b_ii + W_hi h + b_hi)
        f  = σ(W_if x + b_if + W_hf h + b_hf)
        g  = tanh(W_ig x + b_ig + W_hg h + b_hg)
        o  = σ(W_io x + b_io + W_ho h + b_ho)
        c' = f ⊙ c + i ⊙ g
        h' = o ⊙ tanh(c')

    weight_ih (4H, I), weight_hh (4H, H), bias_ih (4H), bias_hh (4H), U(−1/√H, 1/√H).
    """

    num_gates = 4

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, Tensor]:
        """x: (B, I) or unbatched (I,); state: (h, c), each (B, H) ((H,) unbatched), zeros
        when None. Returns (h', c'), each of h's shape."""
        x, h, unbatched = self._checked_state(x, None if state is None else state[0])
        c = _batched_state("LSTMCell", "c", None if state is None else state[1], x, unbatched,
                           self.hidden_size)
        gx = F.linear(x, self.weight_ih, self.bias_ih)      # (B, 4H)
        h, c = _lstm_step(gx, h, c, self.weight_hh, self.bias_hh)[:2]
        return (h[0], c[0]) if unbatched else (h, c)


class LSTM(_StackedParameters):
    """A multi-layer LSTM: LSTMCell's equations unrolled over time, in layers.

    Parameters per layer k: weight_ih_l{k} (4H, I for k = 0 else D·H), weight_hh_l{k}
    (4H, H), bias_ih_l{k}, bias_hh_l{k} (4H), gates i, f, g, o as in LSTMCell; with
    `bidirectional=True` (D = 2) also weight_ih_l{k}_reverse, ..., as in GRU.
    """

    num_gates = 4

    def forward(self, x, state: tuple[Tensor, Tensor] | None = None,
                return_gates: bool = False, lengths=None):
        """x: (B, T, I) ((T, B, I) when batch_first=False), unbatched (T, I), or a
        PackedSequence; state: (h0, c0), each (num_layers·D, B, H) ((num_layers·D, H)
        unbatched), or None (zeros); `lengths` as in GRU.forward.

        Returns (output (B, T, D·H), (h_n, c_n)), each of h_n, c_n (num_layers·D, B, H) in
        GRU's order; with `return_gates=True` a third item lists LSTMGates(i, f, g, o, c) per
        layer and direction.
        """
        packed = x if isinstance(x, PackedSequence) else None
        x, lengths, unbatched = self._prepared_input(x, lengths)       # (B, T, I)
        if state is None:
            hs0 = cs0 = self._initial_state(x, None, "h0")
        else:
            hs0 = self._initial_state(x, state[0], "h0", unbatched)
            cs0 = self._initial_state(x, state[1], "c0", unbatched)
        output, finals, gates = self._layers(x, list(zip(hs0, cs0)), return_gates, lengths)
        output, final_states = self._finished(
            output, (mg.stack([h for h, _ in finals], axis=0),
                     mg.stack([c for _, c in finals], axis=0)), packed, lengths, unbatched)
        return (output, final_states, gates) if return_gates else (output, final_states)

    def _run_direction(self, seq, k, suffix, state, return_gates, masks=None):
        weight_ih, weight_hh, bias_ih, bias_hh = self._layer_weights(k, suffix)
        gx = F.linear(seq, weight_ih, bias_ih)              # (B, T, 4H)
        h, c = state
        hs, record = [], ([], [], [], [], [])
        for t in range(gx.shape[1]):
            h_new, c_new, i, f, g, o = _lstm_step(gx[:, t], h, c, weight_hh, bias_hh)
            mask_t = None if masks is None else masks[t]
            h, c = _frozen(mask_t, h_new, h), _frozen(mask_t, c_new, c)
            hs.append(h)
            if return_gates:
                for values, v in zip(record, (i, f, g, o, c)):
                    values.append(v)
        gates = LSTMGates(*(mg.stack(values, axis=1) for values in record)) if return_gates \
            else None
        return mg.stack(hs, axis=1), (h, c), gates           # (B, T, H), (h_T, c_T)


# ---------------------------------------------------------------------------------------------
# Elman RNN

_NONLINEARITIES = {"tanh": mg.tanh, "relu": mg.relu}


def _check_nonlinearity(name: str, nonlinearity) -> str:
    if nonlinearity not in _NONLINEARITIES:
        raise ValueError(f"{name}: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
    return nonlinearity


class RNNCell(_CellParameters):
    """One step of an Elman RNN, as torch.nn.RNNCell:

        h' = act(W_ih x + b_ih + W_hh h + b_hh),   act = tanh or relu

    weight_ih (H, I), weight_hh (H, H), bias_ih (H), bias_hh (H), U(−1/√H, 1/√H).
    """

    num_gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh"):
        nonlinearity = _check_nonlinearity("RNNCell", nonlinearity)
        super().__init__(input_size, hidden_size, bias)
        self.nonlinearity = nonlinearity

    def forward(self, x: Tensor, h: Tensor | None = None) -> Tensor:
        """x: (B, I) or unbatched (I,); h: (B, H) or (H,), zeros when None. Returns h' of h's
        shape."""
        x, h, unbatched = self._checked_state(x, h)
        pre = F.linear(x, self.weight_ih, self.bias_ih) + F.linear(h, self.weight_hh,
                                                                   self.bias_hh)   # (B, H)
        h = _NONLINEARITIES[self.nonlinearity](pre)
        return h[0] if unbatched else h

    def extra_repr(self) -> str:
        extra = "" if self.nonlinearity == "tanh" else f", nonlinearity={self.nonlinearity!r}"
        return super().extra_repr() + extra


class RNN(_StackedParameters):
    """A multi-layer Elman RNN, as torch.nn.RNN: RNNCell's equation over time, in layers.

    Parameters per layer k: weight_ih_l{k} (H, I for k = 0 else D·H), weight_hh_l{k} (H, H),
    bias_ih_l{k}, bias_hh_l{k} (H), and `_reverse` ones when bidirectional. The fourth
    positional argument is `nonlinearity` as in PyTorch; the others are keywords (note
    minigrad's batch_first=True default).
    """

    num_gates = 1

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", *, batch_first: bool = True, bias: bool = True,
                 dropout: float = 0.0, bidirectional: bool = False):
        nonlinearity = _check_nonlinearity("RNN", nonlinearity)
        super().__init__(input_size, hidden_size, num_layers, batch_first=batch_first,
                         bias=bias, dropout=dropout, bidirectional=bidirectional)
        self.nonlinearity = nonlinearity

    def forward(self, x, h0: Tensor | None = None, lengths=None):
        """As GRU.forward: x (B, T, I), (T, I) or a PackedSequence; h0 (num_layers·D, B, H)
        or None; `lengths` for a padded batch. Returns (output (B, T, D·H), h_n)."""
        return self._forward_single_state(x, h0, False, lengths)

    def _run_direction(self, seq, k, suffix, h, return_gates, masks=None):
        weight_ih, weight_hh, bias_ih, bias_hh = self._layer_weights(k, suffix)
        gx = F.linear(seq, weight_ih, bias_ih)              # (B, T, H): all steps at once
        act = _NONLINEARITIES[self.nonlinearity]
        hs = []
        for t in range(gx.shape[1]):
            h_new = act(gx[:, t] + F.linear(h, weight_hh, bias_hh))      # (B, H)
            h = _frozen(None if masks is None else masks[t], h_new, h)
            hs.append(h)
        return mg.stack(hs, axis=1), h, None                  # (B, T, H), h_T (B, H)

    def extra_repr(self) -> str:
        extra = "" if self.nonlinearity == "tanh" else f", nonlinearity={self.nonlinearity!r}"
        return super().extra_repr() + extra
