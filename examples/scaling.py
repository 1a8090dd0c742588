"""Two scaling laws of attention: the 1/√d in the scores, and the L² cost in sequence length.

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

Run:
    python3 examples/scaling.py                  # d up to 4096, L up to 2048
    python3 examples/scaling.py --quick          # few small sizes, a few seconds
    python3 examples/scaling.py --lengths 64 256 1024 --dims 8 512
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
    args = parse_args(parser, argv, dims=[2, 16, 128, 1024], trials=64,
                                     lengths=[8, 16, 32], repeats=1)
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

    metrics = {"saturation": saturation, "cost": cost,
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
