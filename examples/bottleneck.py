"""The encoder–decoder bottleneck (claim C12): accuracy against sentence length, with and
without attention.

Without attention the decoder starts from the encoder's last state and sees nothing else, so
the whole source sentence has to fit in that one H-dimensional vector. With attention the
decoder looks at every encoder state at every step. This script trains the same GRU
encoder–decoder of `translate.py` both ways (same sizes, data, epochs and seed), decodes the
same held-out sentences greedily, and plots exact match and token accuracy per source length:
the model without attention falls off as sentences grow, the attentive one does not.

Run (from the repository root):

    python3 examples/bottleneck.py                     # none vs additive attention
    python3 examples/bottleneck.py --attention dot     # none vs dot-product attention
    python3 examples/bottleneck.py --quick             # a few-second smoke run
    python3 examples/bottleneck.py --resume            # continue both runs from their checkpoints

Outputs in --out (default runs/bottleneck): bottleneck.png, metrics.json, and one sub-folder
per model with its checkpoint.
"""

from __future__ import annotations

# _common first: it sets the BLAS thread count before NumPy loads
from _common import base_parser, prepare_run, print_outputs, pyplot, save_figure, write_json

import time
from pathlib import Path

import numpy as np

from translate import ATTENTIONS, Config, train


def plot_by_length(results: dict[str, dict], title: str, path: Path) -> Path:
    """Exact match (solid) and token accuracy (dashed) per source length, one colour per model."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    colours = {"none": "tab:red"}
    for name, result in results.items():
        by_length = result["greedy"]["by_length"]
        lengths = sorted(by_length)
        colour = colours.get(name, "tab:blue")
        label = "no attention (one vector)" if name == "none" else f"{name} attention"
        ax.plot(lengths, [by_length[n]["exact_match"] for n in lengths], "o-", color=colour,
                label=f"{label}: exact match")
        ax.plot(lengths, [by_length[n]["token_accuracy"] for n in lengths], "s--",
                color=colour, alpha=0.6, label=f"{label}: token accuracy")
    ax.set_ylim(0, 1.03)
    ax.set_xlabel("source sentence length (words)")
    ax.set_ylabel("held-out accuracy (greedy decoding)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    return save_figure(fig, path)


def build_parser():
    parser = base_parser(__doc__, default_out="runs/bottleneck")
    parser.add_argument("--attention", choices=[a for a in ATTENTIONS if a != "none"],
                        default="additive", help="the attentive model to compare with "
                        "(default: additive)")
    parser.add_argument("--epochs", type=int, default=None, help="epochs per model (default 4)")
    parser.add_argument("--n-train", dest="n_train", type=int, default=None,
                        help="training sentences (default 12000)")
    parser.add_argument("--hidden-size", dest="hidden_size", type=int, default=None,
                        help="GRU hidden size H, the size of the bottleneck (default 128)")
    return parser


def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    out = prepare_run(args)
    results, summary = {}, {}
    start = time.perf_counter()
    for attention in ("none", args.attention):
        if args.quick:
            config = Config(attention=attention, embed_dim=16, hidden_size=32, n_train=384,
                            n_test=96, epochs=2, beam=0, max_len=8)
        else:
            config = Config(attention=attention, epochs=4, beam=0)
        for name in ("epochs", "n_train", "hidden_size"):
            if getattr(args, name) is not None:
                setattr(config, name, getattr(args, name))
        folder = out / attention
        folder.mkdir(exist_ok=True)
        resume = None
        if args.resume is not None and (folder / "checkpoint.npz").exists():
            resume = folder / "checkpoint.npz"
        print(f"training with attention = {attention}")
        # same seed: the same data and the same shuffles for both models
        _, result = train(config, folder, args.seed, args.device, resume)
        results[attention] = result
        history = result["history"]
        summary[attention] = {
            "exact_match": result["greedy"]["exact_match"],
            "token_accuracy": result["greedy"]["token_accuracy"],
            "by_length": result["greedy"]["by_length"],
            "first_loss": history["loss"][0],
            "final_loss": float(np.mean(history["loss"][-20:])),
            "train_seconds": round(history["train_seconds"], 2),
            "steps": result["steps"],
        }
    none, attentive = summary["none"], summary[args.attention]
    lengths = sorted(none["by_length"])
    gap = {n: attentive["by_length"][n]["exact_match"] - none["by_length"][n]["exact_match"]
           for n in lengths}
    plot_by_length(results, f"The bottleneck: held-out accuracy vs sentence length "
                   f"(H = {config.hidden_size}, {config.epochs} epochs)", out / "bottleneck.png")
    metrics = {"attention": args.attention, "seed": args.seed, "quick": args.quick,
               "hidden_size": config.hidden_size, "epochs": config.epochs,
               "n_train": results["none"]["n_train"], "n_test": results["none"]["n_test"],
               "models": summary, "exact_match_gap_by_length": gap,
               "total_seconds": round(time.perf_counter() - start, 2)}
    write_json(out / "metrics.json", metrics)
    print("source length | exact match: none  " + f"{args.attention:>9} | gap")
    for n in lengths:
        print(f"{n:>13} | {none['by_length'][n]['exact_match']:17.3f} "
              f"{attentive['by_length'][n]['exact_match']:9.3f} | {gap[n]:+.3f}")
    print(f"overall exact match: none {none['exact_match']:.3f}, {args.attention} "
          f"{attentive['exact_match']:.3f}")
    print_outputs(out)
    return metrics


if __name__ == "__main__":
    main()
