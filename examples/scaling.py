"""Two scaling laws of attention: the 1/√d in the scores, and the L² cost in sequence length.

(Claims C4 and C15: see examples/README.md.)

Part 1 (claim C4). For random q, k ~ N(0, I_d) the dot product q·k has variance d. Without the
1/√d factor the scores spread as √d, the softmax saturates (one weight → 1, the rest → 0) and
the gradient that reaches the scores,

    ∂L/∂s = α ⊙ (g − Σ_j g_j α_j)        for L = Σ_i g_i α_i, α = softmax(s),

shrinks towards zero as d grows. With s = q·k/√d the variance stays 1 at every d and so does the
gradient. Figure `softmax_saturation.png`: score std, largest weight and ‖∂L/∂s‖ against d.

Part 2 (claim C15). A GRU layer walks the sequence one step at a time with an (B, H) state; an
attention layer looks at all pairs of positions at once, with (B, heads, L, L) weights. Forward +
backward time (time.perf_counter) and peak traced memory (tracemalloc, which sees NumPy's
buffers; with --device cuda it sees host memory only) for both as L grows, on log-log axes with
fitted slopes. Figure `time_memory.png`.

Part 3 (C4 in training). One attention lookup, q = W_q x_q, k_i = W_k x_i, output Σ_i α_i v_i,
must return the average of the values whose keys lie in the query's group (about a quarter of
the keys): the right weights are soft, spread over several keys. W_q and W_k start with unit-
variance components (the assumption behind 1/√d), and the same model trains twice with SGD,
with and without the 1/√d. `nn.Diagnostics` watches both through forward and tensor hooks
(the model's code is unchanged): how many softmax rows have gone one-hot, the gradient reaching
q and k, the weights' gradient norms and update-to-data ratios. Figure `diagnostics.png`.

Run:
    python3 examples/scaling.py                  # d up to 4096, L up to 2048
    python3 examples/scaling.py --quick          # few small sizes, a few seconds
    python3 examples/scaling.py --lengths 64 256 1024 --dims 8 512
    python3 examples/scaling.py --train-dim 512          # part 3 with wider q and k
"""

from __future__ import annotations

# _common first: it sets the BLAS thread count before NumPy loads
from _common import (base_parser, parse_args, prepare_run, print_outputs, pyplot, save_figure,
                     write_metrics)

import time
import tracemalloc

import numpy as np
from tqdm.auto import tqdm

import minigrad as mg
import nn


# -- part 1: softmax saturation -----------------------------------------------------------------

def saturation_stats(d: int, num_keys: int, trials: int, scaled: bool,
                     device: str) -> dict[str, float]:
    """Statistics of softmax(q·k [/√d]) over `trials` random queries against `num_keys` keys.

    q: (trials, d), K: (trials, num_keys, d), all N(0, 1). Returns the std of the scores, the
    mean largest weight, and the median over trials of ‖∂L/∂s‖ and ‖∂L/∂q‖ for L = Σ g_i α_i
    with a random upstream gradient g ~ N(0, 1).
    """
    # float64: a saturated float32 softmax rounds its tiny gradients to exactly 0
    q = mg.randn(trials, 1, d, dtype="float64", device=device, requires_grad=True)  # (N, 1, d)
    keys = mg.randn(trials, num_keys, d, dtype="float64", device=device)          # (N, n, d)
    scores = mg.matmul(q, keys.swapaxes(-1, -2))                                # (N, 1, n)
    if scaled:
        scores = scores / float(np.sqrt(d))      # Var(q·k) = d, so divide by √d for variance 1
    weights = mg.softmax(scores, axis=-1)                                       # (N, 1, n)
    upstream = mg.randn(trials, 1, num_keys, dtype="float64", device=device)
    loss = (upstream * weights).sum()            # trials are independent: one backward for all
    grad_scores, grad_q = mg.grad(loss, [scores, q])
    s, w = scores.numpy(), weights.numpy()
    return {"score_std": float(s.std()),
            "max_weight": float(w.max(axis=-1).mean()),
            "grad_scores_norm": float(np.median(np.linalg.norm(grad_scores.numpy(), axis=-1))),
            "grad_query_norm": float(np.median(np.linalg.norm(grad_q.numpy(), axis=-1)))}


def run_saturation(dims: list[int], num_keys: int, trials: int, device: str) -> dict:
    results: dict = {"dims": dims, "num_keys": num_keys, "trials": trials}
    for scaled in (False, True):
        rows = [saturation_stats(d, num_keys, trials, scaled, device) for d in dims]
        results["scaled" if scaled else "unscaled"] = {k: [r[k] for r in rows] for k in rows[0]}
    return results


def plot_saturation(results: dict, path) -> None:
    plt = pyplot()
    dims = results["dims"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), layout="constrained")
    panels = [("score_std", "std of the scores", "log"),
              ("max_weight", "mean largest softmax weight", "linear"),
              ("grad_scores_norm", "median ‖∂L/∂scores‖", "log")]
    for ax, (key, label, yscale) in zip(axes, panels):
        for name, style in (("unscaled", "o-"), ("scaled", "s-")):
            tag = "q·k" if name == "unscaled" else "q·k / √d"
            ax.plot(dims, results[name][key], style, label=tag)
        ax.set_xscale("log", base=2)
        ax.set_yscale(yscale)
        ax.set_xlabel("dimension d of q and k")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    axes[0].set_title("unscaled scores spread as √d")
    axes[1].set_title(f"softmax over {results['num_keys']} keys saturates")
    axes[2].set_title("…and its gradient vanishes")
    fig.suptitle(f"Softmax saturation, random q, k ~ N(0, I), {results['trials']} trials per d")
    save_figure(fig, path)


# -- part 3: training with and without 1/√d, watched by nn.Diagnostics ---------------------------

class GroupLookup(nn.Module):
    """q = W_q x_q, k_i = W_k x_i, output = Σ_i α_i v_i with α = softmax(q·k [/√d])."""

    def __init__(self, input_dim: int, attn_dim: int, scaled: bool):
        super().__init__()
        self.q_proj = nn.Linear(input_dim, attn_dim, bias=False)
        self.k_proj = nn.Linear(input_dim, attn_dim, bias=False)
        self.attention = nn.DotProductAttention(scaled=scaled)
        for weight in (self.q_proj.weight, self.k_proj.weight):
            # unit-variance q and k components for unit-variance inputs: Var(q·k) = d
            nn.init.normal_(weight, std=input_dim ** -0.5)

    def forward(self, query: mg.Tensor, keys: mg.Tensor, values: mg.Tensor) -> mg.Tensor:
        """query (B, D), keys (B, N, D), values (B, N, Dv) -> (B, Dv)."""
        q = self.q_proj(query).unsqueeze(1)                   # (B, 1, d)
        k = self.k_proj(keys)                                 # (B, N, d)
        context, _ = self.attention(q, k, values)             # (B, 1, Dv)
        return context[:, 0]


def group_batch(step: int, seed: int, batch: int, num_keys: int, groups: int, dim: int,
                value_dim: int, rotation: np.ndarray):
    """Keys scattered around `groups` random centres; the query is a hidden rotation of one
    centre plus noise; the target is the mean value of that centre's keys. A pure function of
    (seed, step). Returns query (B, D), keys (B, N, D), values (B, N, Dv), target (B, Dv)."""
    rng = np.random.default_rng([seed, 777, step])
    centres = rng.standard_normal((batch, groups, dim))
    group = rng.integers(0, groups, size=(batch, num_keys))
    rows = np.arange(batch)
    keys = centres[rows[:, None], group] + 0.3 * rng.standard_normal((batch, num_keys, dim))
    values = rng.standard_normal((batch, num_keys, value_dim))
    asked = rng.integers(0, groups, size=batch)
    member = (group == asked[:, None]).astype(np.float64)
    member[member.sum(axis=1) == 0] = 1.0          # an empty group: the mean of all values
    target = (member[..., None] * values).sum(axis=1) / member.sum(axis=1)[:, None]
    query = centres[rows, asked] @ rotation.T + 0.3 * rng.standard_normal((batch, dim))
    return tuple(a.astype(np.float32) for a in (query, keys, values, target))


def run_training(args) -> tuple[dict, dict]:
    """Train GroupLookup with and without 1/√d on the same batches. Returns the Diagnostics of
    both runs and their loss curves, keyed "q·k/√d" and "q·k"."""
    rotation = np.linalg.qr(np.random.default_rng([args.seed, 778]).standard_normal(
        (args.train_input_dim, args.train_input_dim)))[0]
    diagnostics, losses = {}, {}
    for scaled in (True, False):
        label = "q·k/√d" if scaled else "q·k"
        mg.manual_seed(args.seed)                              # the same initial weights
        model = GroupLookup(args.train_input_dim, args.train_dim, scaled).to(args.device)
        optimizer = nn.optim.SGD(model.parameters(), lr=args.train_lr, momentum=0.9)
        watch = nn.Diagnostics(model, every=args.diagnose_every)
        losses[label] = []
        for step in tqdm(range(args.train_steps), desc=f"train {label}", dynamic_ncols=True):
            query, keys, values, target = group_batch(
                step, args.seed, args.batch_train, args.train_keys, args.train_groups,
                args.train_input_dim, 8, rotation)
            output = model(*(mg.tensor(a, device=args.device) for a in (query, keys, values)))
            loss = ((output - mg.tensor(target, device=args.device)) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            watch.step(optimizer)                              # in place of optimizer.step()
            losses[label].append(loss.item())
        watch.remove()
        diagnostics[label] = watch
    return diagnostics, losses


def training_summary(diagnostics: dict, losses: dict) -> dict:
    """Per run: first and last (mean of the last tenth) loss, and the recorded statistics at
    the first and the last recorded step."""
    summary = {}
    for label, watch in diagnostics.items():
        curve = losses[label]
        tail = max(1, len(curve) // 10)
        saturated = watch.series("activations", "saturated")["attention"][1]
        q_grad = watch.series("gradients", "std")["q_proj"][1]
        update = watch.series("parameters", "update_to_data")["q_proj.weight"][1]
        grad_norm = watch.series("parameters", "grad_norm")["q_proj.weight"][1]
        summary[label] = {"first_loss": curve[0], "final_loss": float(np.mean(curve[-tail:])),
                          "saturated_first": float(saturated[0]),
                          "saturated_last": float(saturated[-1]),
                          "q_grad_std_first": float(q_grad[0]),
                          "q_grad_std_last": float(q_grad[-1]),
                          "q_weight_grad_norm_first": float(grad_norm[0]),
                          "q_update_to_data_median": float(np.median(update)),
                          "last_record": watch.summary()}
    return summary


# -- part 2: time and memory against sequence length --------------------------------------------

def _gru_step(layer: nn.Module, x: mg.Tensor) -> None:
    output, _ = layer(x)                          # (B, L, H)
    output.sum().backward()


def _attention_step(layer: nn.Module, x: mg.Tensor) -> None:
    output, _ = layer(x, x, x)                    # (B, L, E); weights (B, heads, L, L)
    output.sum().backward()


def measure(step, layer: nn.Module, x: mg.Tensor, repeats: int) -> tuple[float, float]:
    """Best-of-`repeats` wall time of one forward + backward, and its peak traced memory (MiB).

    Time and memory are measured in separate runs: tracemalloc slows every allocation down.
    """
    times = []
    for _ in range(repeats):
        layer.zero_grad()
        start = time.perf_counter()
        step(layer, x)
        times.append(time.perf_counter() - start)
    layer.zero_grad()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    step(layer, x)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    layer.zero_grad()
    return min(times), (peak - base) / 2**20


def run_cost(lengths: list[int], batch: int, embed: int, heads: int, repeats: int,
             device: str) -> dict:
    gru = nn.GRU(embed, embed, batch_first=True).to(device)
    attention = nn.MultiHeadAttention(embed, heads).to(device)
    results: dict = {"lengths": lengths, "batch": batch, "embed_dim": embed, "heads": heads,
                     "device": device,
                     "gru": {"seconds": [], "mib": []}, "attention": {"seconds": [], "mib": []}}
    with tqdm(total=len(lengths), desc="lengths", dynamic_ncols=True) as bar:
        for length in lengths:
            x = mg.randn(batch, length, embed, device=device)
            for name, layer, step in (("gru", gru, _gru_step),
                                      ("attention", attention, _attention_step)):
                seconds, mib = measure(step, layer, x, repeats)
                results[name]["seconds"].append(seconds)
                results[name]["mib"].append(mib)
            bar.update(1)
            bar.write(f"  L={length:5d}  GRU {results['gru']['seconds'][-1]*1e3:9.1f} ms "
                      f"{results['gru']['mib'][-1]:8.2f} MiB   attention "
                      f"{results['attention']['seconds'][-1]*1e3:9.1f} ms "
                      f"{results['attention']['mib'][-1]:8.2f} MiB")
    for name in ("gru", "attention"):
        results[name]["time_slope"] = loglog_slope(lengths, results[name]["seconds"])
        results[name]["memory_slope"] = loglog_slope(lengths, results[name]["mib"])
    return results


def loglog_slope(xs: list[int], ys: list[float]) -> float:
    """Slope of log y against log x over the upper half of the points (the asymptotic regime)."""
    n = max(2, len(xs) // 2)
    x, y = np.log(np.asarray(xs[-n:], float)), np.log(np.maximum(np.asarray(ys[-n:]), 1e-12))
    return float(np.polyfit(x, y, 1)[0])


def plot_cost(results: dict, path) -> None:
    plt = pyplot()
    lengths = results["lengths"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), layout="constrained")
    for ax, key, label in ((axes[0], "seconds", "forward + backward time (s)"),
                           (axes[1], "mib", "peak traced memory (MiB)")):
        slope_key = "time_slope" if key == "seconds" else "memory_slope"
        for name, style, title in (("gru", "o-", "GRU layer"),
                                   ("attention", "s-", "self-attention layer")):
            ax.plot(lengths, results[name][key], style,
                    label=f"{title} (slope {results[name][slope_key]:.2f})")
        ref = np.asarray(lengths, float)
        top = results["attention"][key][-1]
        ax.plot(ref, top * (ref / ref[-1]) ** 2, ":", color="gray", label="∝ L²")
        ax.plot(ref, top * (ref / ref[-1]), "--", color="gray", label="∝ L")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length L")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_title("time: GRU is sequential, attention is all-pairs")
    axes[1].set_title("memory: attention keeps (B, heads, L, L) weights")
    fig.suptitle(f"One layer, forward + backward, B={results['batch']}, "
                 f"E=H={results['embed_dim']}, heads={results['heads']}, on {results['device']}")
    save_figure(fig, path)



def main(argv: list[str] | None = None) -> dict:
    parser = base_parser(__doc__, default_out="runs/scaling")
    parser.add_argument("--dims", type=int, nargs="+",
                        default=[2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096],
                        help="dimensions d for the saturation study")
    parser.add_argument("--num-keys", type=int, default=32, help="keys per query")
    parser.add_argument("--trials", type=int, default=256, help="random queries per d")
    parser.add_argument("--lengths", type=int, nargs="+",
                        default=[16, 32, 64, 128, 256, 512, 1024, 2048],
                        help="sequence lengths L for the time and memory study")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--embed-dim", type=int, default=32)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3, help="timing runs per point (best)")
    parser.add_argument("--train-dim", type=int, default=256, help="part 3: width d of q, k")
    parser.add_argument("--train-input-dim", type=int, default=32, help="part 3: input width D")
    parser.add_argument("--train-keys", type=int, default=16, help="part 3: keys per example")
    parser.add_argument("--train-groups", type=int, default=4, help="part 3: key groups")
    parser.add_argument("--train-steps", type=int, default=300, help="part 3: SGD steps")
    parser.add_argument("--train-lr", type=float, default=0.1, help="part 3: SGD learning rate")
    parser.add_argument("--batch-train", type=int, default=64, help="part 3: batch size")
    parser.add_argument("--diagnose-every", type=int, default=5,
                        help="part 3: record the diagnostics every k steps")
    args = parse_args(parser, argv, dims=[2, 16, 128, 1024], trials=64,
                      lengths=[8, 16, 32], repeats=1, train_dim=64, train_steps=20,
                      diagnose_every=5)
    out = prepare_run(args)

    saturation = run_saturation(args.dims, args.num_keys, args.trials, args.device)
    print(f"{'d':>6} | {'std unscaled':>12} {'std scaled':>10} | {'max α unsc.':>11} "
          f"{'max α sc.':>9} | {'‖∂L/∂s‖ unsc.':>13} {'‖∂L/∂s‖ sc.':>11}")
    for i, d in enumerate(args.dims):
        u, s = saturation["unscaled"], saturation["scaled"]
        print(f"{d:>6} | {u['score_std'][i]:12.3f} {s['score_std'][i]:10.3f} | "
              f"{u['max_weight'][i]:11.3f} {s['max_weight'][i]:9.3f} | "
              f"{u['grad_scores_norm'][i]:13.2e} {s['grad_scores_norm'][i]:11.2e}")
    plot_saturation(saturation, out / "softmax_saturation.png")

    cost = run_cost(args.lengths, args.batch, args.embed_dim, args.heads, args.repeats,
                    args.device)
    for name in ("gru", "attention"):
        print(f"{name:>9}: time ∝ L^{cost[name]['time_slope']:.2f}, "
              f"memory ∝ L^{cost[name]['memory_slope']:.2f} (fitted on the largest lengths)")
    plot_cost(cost, out / "time_memory.png")

    diagnostics, losses = run_training(args)
    training = training_summary(diagnostics, losses)
    for label, entry in training.items():
        print(f"  {label:>7}: loss {entry['first_loss']:.3f} -> {entry['final_loss']:.4f}; "
              f"one-hot softmax rows {100 * entry['saturated_first']:.0f} % -> "
              f"{100 * entry['saturated_last']:.0f} %; median update/data of W_q "
              f"{entry['q_update_to_data_median']:.1e}")
    figure = nn.plot_diagnostics(
        diagnostics, losses=losses, parameters=["q_proj.weight", "k_proj.weight"],
        title=f"One attention lookup trained with and without 1/√d (d = {args.train_dim}, "
              f"SGD lr {args.train_lr:g}): the target is an average over a group of keys")
    save_figure(figure, out / "diagnostics.png")

    metrics = {"saturation": saturation, "cost": cost,
               "training": {"summary": training, "losses": losses,
                            "task": {"dim": args.train_dim, "input_dim": args.train_input_dim,
                                     "keys": args.train_keys, "groups": args.train_groups,
                                     "steps": args.train_steps, "lr": args.train_lr,
                                     "batch": args.batch_train}},
               "score_std_at_max_d": {"unscaled": saturation["unscaled"]["score_std"][-1],
                                      "scaled": saturation["scaled"]["score_std"][-1]},
               "grad_ratio_scaled_over_unscaled_at_max_d":
                   saturation["scaled"]["grad_scores_norm"][-1]
                   / max(saturation["unscaled"]["grad_scores_norm"][-1], 1e-300)}
    write_metrics(out, metrics, args)
    print_outputs(out, {"gru_time_slope": cost["gru"]["time_slope"],
                        "attention_time_slope": cost["attention"]["time_slope"],
                        "gru_memory_slope": cost["gru"]["memory_slope"],
                        "attention_memory_slope": cost["attention"]["memory_slope"]})
    return metrics


if __name__ == "__main__":
    main()
