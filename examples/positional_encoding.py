"""Sinusoidal positional encoding: the grid, the shift-is-a-rotation property, add vs concat.

Claims C8, C9, C20 (examples/README.md lists the claims and the texts). The encoding (texts
001, 002; the base is a parameter, 002 uses 10⁴ and 001 writes 10⁵):

    PE(t, 2i) = sin(t ω_i),   PE(t, 2i+1) = cos(t ω_i),   ω_i = base^(−2i/D)

1. `pe_grid.png`: PE as an image, positions × dimensions, for both bases.
2. A shift of position is a rotation that does not depend on t (text 004):

       PE(t + φ) = R(φ) PE(t),   R(φ) = diag over i of [[cos φω_i, sin φω_i], [−sin φω_i, cos φω_i]]

   (each (sin, cos) pair turns by the angle φω_i). The script builds R(φ) and prints the largest
   |PE(t + φ) − R(φ) PE(t)| over many t and φ, for the formula in float64 and for
   nn.SinusoidalPositionalEncoding. Hence PE(t)·PE(t + φ) = Σ_i cos(φ ω_i) depends on φ only:
   `pe_similarity.png` shows the dot-product matrix and its rows.
3. Add or concatenate (text 004: "concatenating the positional encoding to the key vector"):
   a one-layer attention model learns y_t = x_{t−k} (copy the token k steps back, which only
   position can find) with the encoding added to a D-wide token embedding, or concatenated to a
   D/2-wide one (same width D into the attention either way). `add_vs_concat.png`: both
   learning curves.

Run:
    python3 examples/positional_encoding.py              # seconds
    python3 examples/positional_encoding.py --quick      # a few seconds
    python3 examples/positional_encoding.py --resume     # continue the add/concat training
"""

from __future__ import annotations

# _common first: it sets the BLAS thread count before NumPy loads
from _common import (Checkpoint, LossBar, as_list, base_parser, parse_args, positive_int,
                     prepare_run, print_outputs, pyplot, resume_source, save_figure,
                     write_metrics)


import numpy as np

import minigrad as mg
import nn
import nn.functional as F

MODES = ("add", "concat")


# -- the encoding and its rotation ---------------------------------------------------------------

def sinusoid_table(length: int, dim: int, base: float = 10000.0) -> np.ndarray:
    """PE (length, dim) in float64 straight from the formula (the reference for the checks)."""
    t = np.arange(length, dtype=np.float64)[:, None]                 # (T, 1)
    omega = base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)  # (D/2,) = base^(−2i/D)
    table = np.zeros((length, dim))
    table[:, 0::2] = np.sin(t * omega)
    table[:, 1::2] = np.cos(t * omega)[:, : dim // 2]
    return table


def rotation(phi: float, dim: int, base: float = 10000.0) -> np.ndarray:
    """R(φ) (D, D): block-diagonal, each 2×2 block turns (sin tω, cos tω) into the same at t + φ.

        sin((t+φ)ω) =  cos(φω) sin(tω) + sin(φω) cos(tω)
        cos((t+φ)ω) = −sin(φω) sin(tω) + cos(φω) cos(tω)
    """
    omega = base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    R = np.zeros((dim, dim))
    for i, w in enumerate(omega):
        c, s = np.cos(phi * w), np.sin(phi * w)
        R[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    return R


def module_table(length: int, dim: int, base: float, dtype: str, device: str) -> np.ndarray:
    """PE as nn.SinusoidalPositionalEncoding adds it: the module applied to zeros."""
    pe = nn.SinusoidalPositionalEncoding(dim, max_len=length, base=base).to(device)
    with mg.no_grad():
        return pe(mg.zeros(1, length, dim, dtype=dtype, device=device)).numpy()[0]


def rotation_errors(table: np.ndarray, shifts: np.ndarray, base: float) -> np.ndarray:
    """max_t |PE(t + φ) − R(φ) PE(t)| for each φ in `shifts` (over all t with t + φ in range)."""
    length, dim = table.shape
    errors = []
    for phi in shifts:
        R = rotation(float(phi), dim, base)
        lo, hi = max(0, -phi), min(length, length - phi)
        moved = table[lo:hi] @ R.T                                   # rows R(φ) PE(t)
        errors.append(np.abs(table[lo + phi:hi + phi] - moved).max())
    return np.asarray(errors)


def plot_grid(args, path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.0), layout="constrained")
    for ax, base, source in ((axes[0], 1e4, "the original Transformer (Vaswani et al. 2017)"),
                             (axes[1], 1e5, "ten times longer top wavelength")):
        table = module_table(args.grid_length, args.grid_dim, base, "float32", args.device)
        image = ax.imshow(table, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto",
                          interpolation="nearest")
        exponent = int(round(np.log10(base)))
        ax.set(title=f"base $10^{exponent}$: {source}",
               xlabel="dimension (even: sin, odd: cos)", ylabel="position t")
        fig.colorbar(image, ax=ax, label="PE(t, dimension)")
    fig.suptitle(f"Sinusoidal positional encoding, {args.grid_length} positions × "
                 f"{args.grid_dim} dimensions: wavelengths from 2π up to 2π·base")
    save_figure(fig, path)


def plot_similarity(table: np.ndarray, path) -> None:
    plt = pyplot()
    gram = table @ table.T                                           # (T, T), PE(s)·PE(t)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    image = axes[0].imshow(gram, cmap="viridis", aspect="equal")
    axes[0].set(title="PE(s)·PE(t): constant along diagonals", xlabel="position t",
                ylabel="position s")
    fig.colorbar(image, ax=axes[0], label="dot product")
    T = len(table)
    for s in (0, T // 4, T // 2):
        axes[1].plot(np.arange(T) - s, gram[s], label=f"s = {s}")
    axes[1].set(title="each row against the offset t − s: the curves coincide",
                xlabel="offset φ = t − s", ylabel="PE(s)·PE(s + φ)")
    axes[1].legend()
    axes[1].grid(alpha=0.3)
    save_figure(fig, path)


# -- add vs concatenate --------------------------------------------------------------------------

class DelayCopy(nn.Module):
    """Embedding ⊕ or + positional encoding → one attention layer (1 head) → readout.

        add:    h_t = E[x_t] + PE(t),     E: V × D
        concat: h_t = [E[x_t]; PE(t)],    E: V × D/2, PE of width D/2
    No residual around the attention: the answer x_{t−k} must come through the weights.
    """

    def __init__(self, mode: str, vocab: int, width: int, max_len: int):
        super().__init__()
        self.mode = mode
        token_dim = width if mode == "add" else width // 2
        self.embed = nn.Embedding(vocab, token_dim)
        pe_dim = width if mode == "add" else width - token_dim
        self.position = nn.SinusoidalPositionalEncoding(pe_dim, max_len=max_len, mode=mode)
        self.attention = nn.MultiHeadAttention(width, 1)
        self.readout = nn.Linear(width, vocab)

    def forward(self, tokens: mg.Tensor) -> tuple[mg.Tensor, mg.Tensor]:
        """tokens (B, T) -> logits (B, T, V), weights (B, T, T)."""
        h = self.position(self.embed(tokens))                        # (B, T, D)
        out, weights = self.attention(h, h, h)                        # (B, T, D), (B, 1, T, T)
        return self.readout(out), weights[:, 0]


def copy_batch(rng: np.random.Generator, batch: int, length: int, vocab: int,
               delay: int) -> tuple[np.ndarray, np.ndarray]:
    """tokens (B, T); targets (B, T) = tokens shifted right by `delay`, −1 where undefined."""
    tokens = rng.integers(0, vocab, size=(batch, length))
    targets = np.full_like(tokens, -1)
    targets[:, delay:] = tokens[:, :-delay]
    return tokens, targets


def train_mode(mode: str, args, out) -> tuple[DelayCopy, dict]:
    mg.manual_seed(args.seed)
    model = DelayCopy(mode, args.vocab, args.width, args.length).to(args.device)
    optimizer = nn.optim.Adam(model.parameters(), lr=args.lr)
    path = out / f"checkpoint_{mode}.npz"
    history = {"loss": [], "accuracy": []}
    with Checkpoint(path, args, model, optimizer, resume_from=resume_source(args, path),
                    config={"mode": mode}) as checkpoint:
        state = checkpoint.resume()
        start = int(state.get("step", 0))
        if state:
            history = {k: as_list(state["history"][k]) for k in history}
        train_steps(model, optimizer, history, start, args, checkpoint)
    return model, history


def train_steps(model: DelayCopy, optimizer, history: dict, start: int, args,
                checkpoint: Checkpoint) -> None:
    """Steps `start` .. args.steps − 1, each on its own batch (a function of seed and step)."""
    with LossBar(total=args.steps, desc=f"{model.mode:>6}", initial=start) as bar:
        for step in range(start, args.steps):
            tokens, targets = copy_batch(np.random.default_rng([args.seed, step]), args.batch,
                                         args.length, args.vocab, args.delay)
            logits, _ = model(mg.tensor(tokens, device=args.device))
            loss = F.cross_entropy(logits, mg.tensor(targets, device=args.device),
                                   ignore_index=-1)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            asked = targets >= 0
            accuracy = float((logits.numpy().argmax(-1)[asked] == targets[asked]).mean())
            history["loss"].append(loss.item())
            history["accuracy"].append(accuracy)
            bar.update(history["loss"][-1], acc=accuracy)
            checkpoint.step_end(due=(step + 1) % args.checkpoint_every == 0
                                or step == args.steps - 1, step=step + 1, history=history)


def plot_add_vs_concat(histories: dict, weights: dict, args, path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(12, 9.5), gridspec_kw={"hspace": 0.35})
    for mode, style in zip(MODES, ("-", "--")):
        axes[0, 0].plot(histories[mode]["loss"], style, label=mode)
        axes[0, 1].plot(histories[mode]["accuracy"], style, label=mode)
    axes[0, 0].axhline(np.log(args.vocab), color="gray", ls=":", label=f"chance ln {args.vocab}")
    axes[0, 0].set(title="training loss", xlabel="step", ylabel="cross-entropy (nats)")
    axes[0, 1].set(title=f"accuracy of $y_t = x_{{t-{args.delay}}}$", xlabel="step",
                   ylabel="accuracy", ylim=(-0.03, 1.03))
    for ax in axes[0]:
        ax.legend()
        ax.grid(alpha=0.3)
    mg.viz.attention_map([weights[mode] for mode in MODES], axes=axes[1], vmax=1.0,
                         titles=[f"{mode}: weights of one held-out sequence" for mode in MODES],
                         xlabel="key position i", ylabel="query position t")
    fig.suptitle(f"Positional encoding added to a {args.width}-wide embedding vs concatenated "
                 f"to a {args.width // 2}-wide one\n(one attention layer of width {args.width}, "
                 f"no residual: the answer must come from position t − {args.delay})")
    save_figure(fig, path)


def steps_to(losses: list[float], threshold: float, window: int = 10) -> int | None:
    """First step at which the mean of the last `window` losses is below `threshold`."""
    for step in range(window, len(losses) + 1):
        if np.mean(losses[step - window:step]) < threshold:
            return step
    return None



def main(argv: list[str] | None = None) -> dict:
    parser = base_parser(__doc__, default_out="runs/positional_encoding")
    parser.add_argument("--grid-length", type=int, default=128, help="positions in the image")
    parser.add_argument("--grid-dim", type=int, default=64, help="dimensions in the image")
    parser.add_argument("--check-length", type=int, default=1000,
                        help="positions t for the rotation check")
    parser.add_argument("--max-shift", type=int, default=200, help="shifts φ in [−max, max]")
    parser.add_argument("--steps", type=positive_int, default=500, help="training steps per mode")
    parser.add_argument("--batch", type=positive_int, default=32)
    parser.add_argument("--length", type=int, default=24, help="training sequence length")
    parser.add_argument("--vocab", type=int, default=10)
    parser.add_argument("--delay", type=int, default=5, help="k in y_t = x_(t−k)")
    parser.add_argument("--width", type=int, default=32, help="attention width D")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--checkpoint-every", type=positive_int, default=250)
    args = parse_args(parser, argv, steps=40, check_length=200, max_shift=50)
    out = prepare_run(args)

    # 1. the grid
    plot_grid(args, out / "pe_grid.png")

    # 2. shift = rotation
    shifts = np.arange(-args.max_shift, args.max_shift + 1)
    checks = {}
    for base in (1e4, 1e5):
        reference = sinusoid_table(args.check_length, args.grid_dim, base)
        module64 = module_table(args.check_length, args.grid_dim, base, "float64", args.device)
        module32 = module_table(args.check_length, args.grid_dim, base, "float32", args.device)
        checks[f"base_{base:.0e}"] = {
            "formula_float64": float(rotation_errors(reference, shifts, base).max()),
            "module_float64": float(rotation_errors(module64, shifts, base).max()),
            "module_float32": float(rotation_errors(module32.astype(np.float64), shifts,
                                                    base).max()),
            "module_vs_formula_float64": float(np.abs(module64 - reference).max()),
        }
    print(f"PE(t + φ) = R(φ) PE(t), D = {args.grid_dim}, t in [0, {args.check_length}), "
          f"φ in [−{args.max_shift}, {args.max_shift}]: max |error|")
    for name, c in checks.items():
        print(f"  {name}: formula float64 {c['formula_float64']:.2e}, "
              f"nn module float64 {c['module_float64']:.2e}, "
              f"nn module float32 {c['module_float32']:.2e}; "
              f"module vs formula (float64) {c['module_vs_formula_float64']:.2e}")
    plot_similarity(sinusoid_table(args.grid_length, args.grid_dim), out / "pe_similarity.png")

    # 3. add vs concatenate
    x = mg.zeros(2, 5, args.width, device=args.device)
    x_half = mg.zeros(2, 5, args.width // 2, device=args.device)
    shapes = {
        "add": [list(x.shape), list(nn.SinusoidalPositionalEncoding(
            args.width, mode="add").to(args.device)(x).shape)],
        "concat": [list(x_half.shape), list(nn.SinusoidalPositionalEncoding(
            args.width // 2, mode="concat").to(args.device)(x_half).shape)]}
    print(f"shapes: add {shapes['add'][0]} -> {shapes['add'][1]}, "
          f"concat {shapes['concat'][0]} -> {shapes['concat'][1]}")
    histories, weights, results = {}, {}, {}
    test_tokens, test_targets = copy_batch(np.random.default_rng([args.seed, 10**9]), 256,
                                           args.length, args.vocab, args.delay)
    for mode in MODES:
        model, histories[mode] = train_mode(mode, args, out)
        model.eval()
        with mg.no_grad():
            logits, w = model(mg.tensor(test_tokens, device=args.device))
            loss = F.cross_entropy(logits, mg.tensor(test_targets, device=args.device),
                                   ignore_index=-1).item()
        asked = test_targets >= 0
        accuracy = float((logits.numpy().argmax(-1)[asked] == test_targets[asked]).mean())
        weights[mode] = w.numpy()[0]
        results[mode] = {"test_loss": loss, "test_accuracy": accuracy,
                         "steps_to_loss_0.1": steps_to(histories[mode]["loss"], 0.1),
                         "first_train_loss": histories[mode]["loss"][0],
                         "final_train_loss": float(np.mean(histories[mode]["loss"][-10:])),
                         "parameters": sum(p.size for p in model.parameters())}
        print(f"  {mode:>6}: held-out loss {loss:.4f} nats, accuracy {accuracy:.3f}, "
              f"training loss below 0.1 after {results[mode]['steps_to_loss_0.1']} steps "
              f"({results[mode]['parameters']} parameters)")
    plot_add_vs_concat(histories, weights, args, out / "add_vs_concat.png")

    metrics = {"rotation_max_error": checks, "shapes": shapes, "add_vs_concat": results,
               "task": {"delay": args.delay, "length": args.length, "vocab": args.vocab,
                        "width": args.width, "steps": args.steps},
               "histories": histories}
    write_metrics(out, metrics, args)
    print_outputs(out)
    return metrics


if __name__ == "__main__":
    main()
