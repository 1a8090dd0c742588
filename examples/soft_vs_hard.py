"""Soft attention learns where to look; hard lookups cannot (claim C18, text 004;
see examples/README.md).

A key–value retrieval task. Each example holds N random keys x_1..x_N (B, N, D) with random
values v_1..v_N (B, N, Dv); the query is a hidden fixed rotation A of one key plus noise,
x_q = A x_j + ε. The model must return v_j. In front of the lookup sit learned projections

    q = W_q x_q,   k_i = W_k x_i,   u_i = W_v v_i,   output = Σ_i α_i u_i,   L = ‖output − v_j‖²/Dv

and the lookup α is one of:
    soft       α = softmax(q·k_i / √d)                            (nn.DotProductAttention)
    nearest    α = one-hot of argmax_i q·k_i                      (nn.HardAttention("nearest"))
    exact      α = one-hot of the keys with k_i == q, else all 0  (nn.HardAttention("exact"))

The text's argument, run: the exact match finds nothing at initialisation, so it returns zeros
and no gradient reaches anything; the nearest key returns some value and the values' projection
W_v gets gradient, but nudging q or k does not change which key wins, so W_q and W_k get none;
the softmax-weighted average moves with q and k, so all three projections learn. The script
prints the gradient norms that reach W_q, W_k and W_v every few steps and plots them with the
learning curves and the retrieval accuracy (the largest weight sits on the right key).

Run:
    python3 examples/soft_vs_hard.py                 # 400 steps
    python3 examples/soft_vs_hard.py --quick         # a few seconds
    python3 examples/soft_vs_hard.py --resume        # continue from <out>/checkpoint.npz
"""

from __future__ import annotations

# _common first: it sets the BLAS thread count before NumPy loads
from _common import (CHECKPOINT_NAME, Checkpoint, LossBar, as_list, base_parser, parse_args,
                     positive_int, prepare_run, print_outputs, pyplot, save_figure,
                     write_metrics)


import numpy as np

import minigrad as mg
import nn

MODES = ("soft", "nearest", "exact")
METRICS = ("loss", "accuracy", "grad_query", "grad_key", "grad_value")


class Retriever(nn.Module):
    """Learned query, key and value projections in front of one attention lookup.

        q = W_q x_q,  k_i = W_k x_i,  u_i = W_v v_i,  output = Σ_i α_i(q, k) u_i
    """

    def __init__(self, attention: nn.Module, input_dim: int, attn_dim: int, value_dim: int):
        super().__init__()
        self.query_proj = nn.Linear(input_dim, attn_dim, bias=False)
        self.key_proj = nn.Linear(input_dim, attn_dim, bias=False)
        self.value_proj = nn.Linear(value_dim, value_dim, bias=False)
        self.attention = attention

    def forward(self, query: mg.Tensor, keys: mg.Tensor,
                values: mg.Tensor) -> tuple[mg.Tensor, mg.Tensor]:
        """query (B, D), keys (B, N, D), values (B, N, Dv) -> output (B, Dv), weights (B, N)."""
        q = self.query_proj(query).unsqueeze(1)           # (B, 1, d)
        k = self.key_proj(keys)                           # (B, N, d)
        u = self.value_proj(values)                       # (B, N, Dv)
        context, weights = self.attention(q, k, u)        # (B, 1, Dv), (B, 1, N)
        return context[:, 0], weights[:, 0]


class Contestants(nn.Module):
    """The same retriever three times, one per lookup, trained side by side on the same data."""

    def __init__(self, input_dim: int, attn_dim: int, value_dim: int):
        super().__init__()
        self.soft = Retriever(nn.DotProductAttention(scaled=True), input_dim, attn_dim, value_dim)
        self.nearest = Retriever(nn.HardAttention(mode="nearest"), input_dim, attn_dim, value_dim)
        self.exact = Retriever(nn.HardAttention(mode="exact"), input_dim, attn_dim, value_dim)


def hidden_rotation(dim: int, seed: int) -> np.ndarray:
    """The task's fixed random orthogonal map A (query = A · matching key + noise)."""
    rng = np.random.default_rng([seed, 12345])
    q, r = np.linalg.qr(rng.standard_normal((dim, dim)))
    return q * np.sign(np.diag(r))


def make_batch(step: int, seed: int, batch: int, num_keys: int, dim: int, value_dim: int,
               rotation: np.ndarray, noise: float):
    """One batch, a pure function of (seed, step), so a resumed run sees the same data.

    Returns query (B, D), keys (B, N, D), values (B, N, Dv), target index (B,).
    """
    rng = np.random.default_rng([seed, step])
    keys = rng.standard_normal((batch, num_keys, dim)).astype(np.float32)
    values = rng.standard_normal((batch, num_keys, value_dim)).astype(np.float32)
    target = rng.integers(0, num_keys, size=batch)
    matching = keys[np.arange(batch), target]                       # (B, D)
    query = matching @ rotation.T + noise * rng.standard_normal((batch, dim))
    return query.astype(np.float32), keys, values, target


def grad_norm(param: nn.Parameter) -> float:
    """‖∂L/∂param‖ (Frobenius); 0.0 when no gradient reached the parameter at all (grad None)."""
    if param.grad is None:
        return 0.0
    return float(np.sqrt((param.grad.numpy().astype(np.float64) ** 2).sum()))


def train_step(models: Contestants, optimizer, step: int, args, rotation) -> dict:
    """One Adam step on all three retrievers (their losses share no parameter, so one backward
    of the sum gives each its own gradient). Returns each one's loss, accuracy, gradient norms."""
    query, keys, values, target = make_batch(step, args.seed, args.batch, args.num_keys,
                                             args.dim, args.value_dim, rotation, args.noise)
    q, k, v = (mg.tensor(a, device=args.device) for a in (query, keys, values))
    wanted = v[mg.arange(args.batch, device=args.device),
               mg.tensor(target, device=args.device)]              # (B, Dv)
    optimizer.zero_grad()
    losses, accuracy = {}, {}
    for mode in MODES:
        output, weights = getattr(models, mode)(q, k, v)            # (B, Dv), (B, N)
        losses[mode] = ((output - wanted) ** 2).mean()              # per-coordinate MSE
        w = weights.numpy()
        hit = (w.argmax(axis=-1) == target) & (w.max(axis=-1) > 0)  # all-zero weights miss
        accuracy[mode] = float(hit.mean())
    sum(losses.values()).backward()
    record = {}
    for mode in MODES:
        model = getattr(models, mode)
        record[mode] = {"loss": losses[mode].item(), "accuracy": accuracy[mode],
                        "grad_query": grad_norm(model.query_proj.weight),
                        "grad_key": grad_norm(model.key_proj.weight),
                        "grad_value": grad_norm(model.value_proj.weight)}
    optimizer.step()
    return record


COLORS = {"soft": "tab:blue", "nearest": "tab:orange", "exact": "tab:red"}
LABELS = {"soft": "soft (softmax)", "nearest": 'hard "nearest"', "exact": 'hard "exact"'}


def plot(history: dict, args, path) -> None:
    plt = pyplot()
    fig = plt.figure(figsize=(12, 9.5))
    grid = fig.add_gridspec(2, 2, height_ratios=(1, 1.25), hspace=0.35, wspace=0.25)
    steps = np.arange(1, len(history["soft"]["loss"]) + 1)
    ax = fig.add_subplot(grid[0, 0])
    for mode in MODES:
        ax.plot(steps, history[mode]["loss"], color=COLORS[mode], alpha=0.25, lw=0.8)
        ax.plot(steps, _smooth(history[mode]["loss"]), color=COLORS[mode], label=LABELS[mode])
    ax.axhline(1.0, color="gray", ls=":", label="output 0 (loss 1)")
    ax.set(title="learning curves", xlabel="step", ylabel="MSE per value coordinate")
    ax.set_yscale("log")
    ax.legend()
    ax = fig.add_subplot(grid[0, 1])
    for mode in MODES:
        ax.plot(steps, history[mode]["accuracy"], color=COLORS[mode], alpha=0.25, lw=0.8)
        ax.plot(steps, _smooth(history[mode]["accuracy"]), color=COLORS[mode],
                label=LABELS[mode])
    ax.axhline(1.0 / args.num_keys, color="gray", ls=":", label=f"chance 1/{args.num_keys}")
    ax.set(title="retrieval accuracy (largest weight on the right key)", xlabel="step",
           ylabel="accuracy", ylim=(-0.03, 1.03))
    ax.legend()
    query_key = [(f"{LABELS[mode]}: {name}", history[mode][key], COLORS[mode], style)
                 for mode in MODES
                 for key, name, style in (("grad_query", "W_q", "-"), ("grad_key", "W_k", "--"))]
    plot_norms_with_zero_strip(fig, grid[1, 0], steps, query_key,
                               "gradient reaching the query and key projections",
                               r"$\|\partial L/\partial W\|$")
    value = [(LABELS[mode], history[mode]["grad_value"], COLORS[mode], "-") for mode in MODES]
    plot_norms_with_zero_strip(fig, grid[1, 1], steps, value,
                               "gradient reaching the value projection $W_v$",
                               r"$\|\partial L/\partial W_v\|$")
    fig.suptitle(f"Retrieval of 1 of {args.num_keys} values through a learned query/key "
                 f"projection (D={args.dim}, batch {args.batch})", y=0.95)
    save_figure(fig, path)


def plot_norms_with_zero_strip(fig, cell, steps, series, title: str, ylabel: str) -> None:
    """Gradient norms on a log axis, with a strip below it holding one row per series that
    marks the steps where the norm was exactly 0 (no gradient), which a log axis cannot show
    and where lines of several series would hide each other.

    series: (label, norms per step, colour, line style) tuples.
    """
    top, strip = cell.subgridspec(2, 1, height_ratios=(3, 0.25 + 0.22 * len(series)),
                                  hspace=0.3).subplots(sharex=True)
    for label, norms, colour, style in series:
        norms = np.asarray(norms, dtype=float)
        if np.any(norms > 0):
            if style != "-":                  # a darker shade, so close curves stay apart
                colour = tuple(0.55 * c for c in matplotlib_rgb(colour))
            shown = np.where(norms > 0, norms, np.nan)
            top.plot(steps, shown, color=colour, lw=0.7, alpha=0.3)
            top.plot(steps, np.exp(_smooth(np.log(np.where(norms > 0, norms, 1e-300)))),
                     style, color=colour, lw=1.6, label=f"{label} (10-step mean of log)")
    top.set_yscale("log")
    top.set(title=title, ylabel=f"{ylabel} (log scale)")
    top.grid(alpha=0.3, which="both")
    if top.lines:
        top.legend(fontsize=8, loc="lower left")
    for row, (label, norms, colour, style) in enumerate(series):
        zero = np.asarray(norms, dtype=float) == 0
        edges = np.flatnonzero(np.diff(np.concatenate(([0], zero.astype(int), [0]))))
        for start, stop in zip(edges[::2], edges[1::2]):       # runs of zero steps
            strip.hlines(row, steps[start] - 0.5, steps[stop - 1] + 0.5, color=colour, lw=5,
                         linestyles="solid" if style == "-" else (0, (2, 1)))
    strip.set_yticks(range(len(series)), [label for label, *_ in series], fontsize=8)
    strip.set_ylim(len(series) - 0.5, -0.5)
    strip.set_xlabel("step")
    strip.set_title("steps where the norm is exactly 0 (no gradient at all)", fontsize=9,
                    loc="left")
    strip.grid(alpha=0.3, axis="x")
    top.tick_params(labelbottom=False)


def matplotlib_rgb(colour: str) -> tuple:
    from matplotlib.colors import to_rgb
    return to_rgb(colour)


def _smooth(values, width: int = 10) -> np.ndarray:
    """Trailing moving average (shorter at the start), the same length as `values`."""
    values = np.asarray(values, dtype=float)
    sums = np.cumsum(np.insert(values, 0, 0.0))
    starts = np.maximum(np.arange(1, len(values) + 1) - width, 0)
    return (sums[1:] - sums[starts]) / (np.arange(1, len(values) + 1) - starts)



def main(argv: list[str] | None = None) -> dict:
    parser = base_parser(__doc__, default_out="runs/soft_vs_hard")
    parser.add_argument("--steps", type=positive_int, default=400, help="training steps")
    parser.add_argument("--batch", type=positive_int, default=64)
    parser.add_argument("--num-keys", type=int, default=8, help="key-value pairs per example")
    parser.add_argument("--dim", type=int, default=16, help="key and query dimension D")
    parser.add_argument("--value-dim", type=int, default=8, help="value dimension Dv")
    parser.add_argument("--noise", type=float, default=0.1, help="query noise std")
    parser.add_argument("--lr", type=float, default=1e-2, help="Adam learning rate")
    parser.add_argument("--print-every", type=int, default=25, help="print gradient norms every k")
    parser.add_argument("--checkpoint-every", type=positive_int, default=100)
    args = parse_args(parser, argv, steps=60, batch=32, print_every=10)
    out = prepare_run(args)

    rotation = hidden_rotation(args.dim, args.seed)
    models = Contestants(args.dim, args.dim, args.value_dim).to(args.device)
    optimizer = nn.optim.Adam(models.parameters(), lr=args.lr)
    history = {mode: {m: [] for m in METRICS} for mode in MODES}
    with Checkpoint(out / CHECKPOINT_NAME, args, models, optimizer) as checkpoint:
        state = checkpoint.resume()
        if state:
            history = {mode: {m: as_list(state["history"][mode][m]) for m in METRICS}
                       for mode in MODES}
        start = int(state.get("step", 0))
        print(f"{'step':>5} | {'loss soft/nearest/exact':^26} | "
              f"{'‖∂L/∂W_q‖ soft/nearest/exact':^32} | {'‖∂L/∂W_k‖ soft/nearest/exact':^32}")
        with LossBar(total=args.steps, desc="train", initial=start) as bar:
            for step in range(start, args.steps):
                record = train_step(models, optimizer, step, args, rotation)
                for mode in MODES:
                    for m in METRICS:
                        history[mode][m].append(record[mode][m])
                bar.update(record["soft"]["loss"], nearest=record["nearest"]["loss"],
                           exact=record["exact"]["loss"])
                if step % args.print_every == 0 or step == args.steps - 1:
                    r = record
                    bar.write(f"{step:5d} | " + " ".join(f"{r[m]['loss']:8.4f}" for m in MODES)
                              + " | " + " ".join(f"{r[m]['grad_query']:10.3e}" for m in MODES)
                              + " | " + " ".join(f"{r[m]['grad_key']:10.3e}" for m in MODES))
                checkpoint.step_end(due=(step + 1) % args.checkpoint_every == 0
                                    or step == args.steps - 1, step=step + 1, history=history)

    plot(history, args, out / "soft_vs_hard.png")
    tail = max(1, min(20, len(history["soft"]["loss"]) // 5))     # average the last steps
    final = {mode: {"loss": float(np.mean(history[mode]["loss"][-tail:])),
                    "accuracy": float(np.mean(history[mode]["accuracy"][-tail:])),
                    "first_loss": history[mode]["loss"][0],
                    "max_grad_query": float(np.max(history[mode]["grad_query"])),
                    "max_grad_key": float(np.max(history[mode]["grad_key"])),
                    "max_grad_value": float(np.max(history[mode]["grad_value"])),
                    "mean_grad_query": float(np.mean(history[mode]["grad_query"])),
                    "mean_grad_key": float(np.mean(history[mode]["grad_key"]))}
             for mode in MODES}
    print("\nfinal (mean of the last steps):")
    for mode in MODES:
        f = final[mode]
        print(f"  {mode:>8}: loss {f['first_loss']:.4f} -> {f['loss']:.4f}, accuracy "
              f"{f['accuracy']:.3f} (chance {1 / args.num_keys:.3f}); largest ‖∂L/∂W_q‖ "
              f"{f['max_grad_query']:.3e}, ‖∂L/∂W_k‖ {f['max_grad_key']:.3e}, "
              f"‖∂L/∂W_v‖ {f['max_grad_value']:.3e}")
    metrics = {"steps": len(history["soft"]["loss"]), "num_keys": args.num_keys,
               "chance_accuracy": 1.0 / args.num_keys, "final": final, "history": history}
    write_metrics(out, metrics, args)
    print_outputs(out)
    return metrics


if __name__ == "__main__":
    main()
