"""The encoder–decoder bottleneck (claim C12, see examples/README.md): accuracy against
sentence length, with and without attention, for two sizes of the one vector.

Without attention the decoder starts from the encoder's last state and sees nothing else, so
the whole source sentence has to fit in that one H-dimensional vector. With attention the
decoder looks at every encoder state at every step. This script trains the GRU encoder–decoder
of `translate.py` both ways at two hidden sizes (default H = 32 and 128; same data and seed),
decodes the same held-out sentences greedily and plots exact match per source length.

The models without attention get more training than the attentive ones (default 10 epochs
against 3), so what remains of the gap is not a matter of training time; their scores after
the attentive models' 3 epochs are reported too (metrics.json, `at_equal_epochs`).

Run (from the repository root):

    python3 examples/bottleneck.py                          # H = 32 and 128, additive attention
    python3 examples/bottleneck.py --attention dot --hidden-sizes 64
    python3 examples/bottleneck.py --quick                  # a few-second smoke run
    python3 examples/bottleneck.py --resume                 # continue every run from its checkpoint

Outputs in --out (default runs/bottleneck): bottleneck.png, metrics.json, and one sub-folder
per model (none-h32, additive-h32, ...) with its checkpoint.
"""

from __future__ import annotations

# _common first: it sets the BLAS thread count before NumPy loads
from _common import (CHECKPOINT_NAME, base_parser, fail, parse_args, positive_int, prepare_run,
                     print_outputs, pyplot, save_figure, seed_everything, write_metrics)

import time
from pathlib import Path

import numpy as np

from translate import ATTENTIONS, Config, train


def plot_by_length(runs: dict[str, dict], title: str, path: Path) -> Path:
    """Held-out exact match per source length, one line per model; red without attention,
    blue with it, darker for the larger H."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    sizes = sorted({run["hidden_size"] for run in runs.values()})
    for name, run in runs.items():
        by_length = run["by_length"]
        lengths = sorted(by_length, key=int)
        shade = 0.45 + 0.55 * sizes.index(run["hidden_size"]) / max(1, len(sizes) - 1)
        colour = plt.get_cmap("Reds" if run["attention"] == "none" else "Blues")(shade)
        marker = "o" if run["attention"] == "none" else "s"
        # larger hollow markers for the smaller H, so lines that coincide stay visible
        hollow = sizes.index(run["hidden_size"]) == 0 and len(sizes) > 1
        label = (f"no attention, H = {run['hidden_size']}, {run['epochs']} epochs"
                 if run["attention"] == "none" else
                 f"{run['attention']} attention, H = {run['hidden_size']}, "
                 f"{run['epochs']} epochs")
        ax.plot([int(n) for n in lengths], [by_length[n]["exact_match"] for n in lengths],
                marker=marker, ls="-", color=colour, label=label, markersize=10 if hollow else 6,
                markerfacecolor="none" if hollow else colour, markeredgewidth=1.5)
    ax.set_ylim(-0.02, 1.03)
    n_test = next(iter(runs.values()))["n_test"]
    ax.set_xlabel(f"source sentence length (words); {n_test} held-out sentences in all")
    ax.set_ylabel("held-out exact match (greedy decoding)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2,
              frameon=False)
    return save_figure(fig, path)


def build_parser():
    parser = base_parser(__doc__, default_out="runs/bottleneck")
    parser.add_argument("--attention", choices=[a for a in ATTENTIONS if a != "none"],
                        default="additive", help="the attentive model (default: additive)")
    parser.add_argument("--hidden-sizes", dest="hidden_sizes", default=None,
                        help="comma-separated GRU hidden sizes H, the size of the one vector "
                        "(default 32,128)")
    parser.add_argument("--epochs", type=positive_int, default=None,
                        help="epochs of the attentive models (default 3)")
    parser.add_argument("--none-epochs", dest="none_epochs", type=positive_int, default=None,
                        help="epochs of the models without attention (default 10)")
    parser.add_argument("--n-train", dest="n_train", type=positive_int, default=None,
                        help="training sentences (default 12000)")
    return parser


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(build_parser(), argv)
    out = prepare_run(args)
    if args.resume is not None and not any(out.glob(f"*/{CHECKPOINT_NAME}")):
        fail(f"--resume: no checkpoint in {out}/*/; run without --resume to start training")
    if args.quick:
        base = dict(embed_dim=16, n_train=384, n_test=96, beam=0, max_len=8)
        sizes, epochs, none_epochs = [16, 32], 2, 3
    else:
        base = dict(beam=0)                                 # otherwise translate.py's defaults
        sizes, epochs, none_epochs = [32, 128], 3, 10
    if args.hidden_sizes:
        sizes = [int(h) for h in args.hidden_sizes.split(",")]
    epochs = args.epochs or epochs
    none_epochs = args.none_epochs or none_epochs
    if args.n_train:
        base["n_train"] = args.n_train
    start = time.perf_counter()
    runs = {}
    for hidden_size in sizes:
        for attention, n_epochs in (("none", none_epochs), (args.attention, epochs)):
            name = f"{attention}-h{hidden_size}"
            config = Config(attention=attention, hidden_size=hidden_size, epochs=n_epochs,
                            **base)
            folder = out / name
            folder.mkdir(exist_ok=True)
            checkpoint = folder / CHECKPOINT_NAME
            resume = checkpoint if args.resume is not None and checkpoint.exists() else None
            print(f"training {name}: attention = {attention}, H = {hidden_size}, "
                  f"{n_epochs} epochs")
            # the same seed for every run: the same data and shuffles, and each model
            # initialised as `translate.py --attention <it> --hidden-size <H>` initialises it
            seed_everything(args.seed)
            _, result = train(config, folder, args.seed, args.device, resume, args=args)
            history = result["history"]
            equal = min(epochs, len(history["epoch_exact"])) - 1
            runs[name] = {
                "attention": attention, "hidden_size": hidden_size, "epochs": n_epochs,
                "exact_match": result["greedy"]["exact_match"],
                "token_accuracy": result["greedy"]["token_accuracy"],
                "by_length": {str(n): entry for n, entry in result["greedy"]["by_length"].items()},
                "at_equal_epochs": {"epochs": equal + 1,
                                    "exact_match": history["epoch_exact"][equal],
                                    "by_length": history["epoch_by_length"][equal]},
                "first_loss": history["loss"][0],
                "final_loss": float(np.mean(history["loss"][-20:])),
                "train_seconds": round(history["train_seconds"], 2),
                "steps": result["steps"], "n_test": result["n_test"],
                "n_train": result["n_train"],
            }
    plot_by_length(runs, "The bottleneck: held-out exact match against sentence length",
                   out / "bottleneck.png")
    metrics = {"attention": args.attention, "seed": args.seed, "quick": args.quick,
               "hidden_sizes": sizes, "epochs": epochs, "none_epochs": none_epochs,
               "runs": runs, "total_seconds": round(time.perf_counter() - start, 2)}
    write_metrics(out, metrics, args)
    _print_table(runs)
    print_outputs(out)
    return metrics


def _print_table(runs: dict[str, dict]) -> None:
    """Exact match per source length, one column per model."""
    names = list(runs)
    print("\nheld-out exact match by source length")
    print("length " + " ".join(f"{name:>14}" for name in names))
    for n in sorted(next(iter(runs.values()))["by_length"], key=int):
        print(f"{n:>6} " + " ".join(f"{runs[name]['by_length'][n]['exact_match']:14.3f}"
                                    for name in names))
    print("   all " + " ".join(f"{runs[name]['exact_match']:14.3f}" for name in names))


if __name__ == "__main__":
    main()
