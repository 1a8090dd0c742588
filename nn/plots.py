"""Plots of what a model did: attention maps and the figures of recorded diagnostics, drawn
with matplotlib, which is imported only when a figure is drawn.

    figure = nn.plots.attention_map(weights[0], query_labels=words, key_labels=words)
    figure = nn.plot_diagnostics({"lr 1e-3": diagnostics})

`attention_map` is minigrad's (`minigrad.viz.attention_map`, see minigrad/viz/attention.py);
the diagnostics are recorded by `nn.Diagnostics` (diagnostics.py).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from minigrad.viz import attention_map  # noqa: F401  (one name for every plot of nn)

__all__ = ["attention_map", "plot_diagnostics"]


def plot_diagnostics(runs: dict, title: str | None = None,
                     parameters: Sequence[str] | None = None, losses: dict | None = None):
    """Figures of one or several recorded runs ({label: Diagnostics}), a line style per run
    and a colour per layer: activation std, saturated fraction, std of the gradient reaching
    each output, parameter gradient norms, log10 update-to-data ratios (with the 10⁻³ guide)
    and each layer's activation histogram at the last recorded step. `parameters`: which
    parameters to show (default: every weight matrix, i.e. those of 2 or more dimensions).
    `losses` ({label: loss per step}) adds a panel with the training losses. Needs matplotlib
    (ImportError with the install command otherwise)."""
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError("nn.plot_diagnostics draws with matplotlib, which is not installed: "
                          "pip install matplotlib (or pip install -e \".[examples]\")") from error
    styles = ("-", "--", ":", "-.")
    if losses is None:
        figure = Figure(figsize=(15, 8.5), layout="constrained")
        axes = figure.subplots(2, 3)
    else:                                    # a first panel with the losses; one left empty
        figure = Figure(figsize=(19, 8.5), layout="constrained")
        grid = figure.subplots(2, 4)
        loss_ax, axes = grid[0, 0], np.array([list(grid[0, 1:]), list(grid[1, :3])])
        key = grid[1, 3]                     # the empty slot explains the lines
        key.set_axis_off()
        for k, run in enumerate(runs):
            key.plot([], [], styles[k % len(styles)], color="black", label=f"run: {run}")
        key.legend(loc="center", title="line style = run, colour = layer or parameter",
                   fontsize=9, title_fontsize=9, frameon=False)
        for k, (run, values) in enumerate(losses.items()):
            loss_ax.plot(np.arange(len(values)), values, styles[k % len(styles)],
                         color="black", label=run)
        loss_ax.set_yscale("log")
        loss_ax.set_title("training loss", fontsize=10)
        loss_ax.set(xlabel="step", ylabel="loss (log scale)")
        loss_ax.grid(alpha=0.3)
        loss_ax.legend(fontsize=8)
    layer_names = list(dict.fromkeys(n for d in runs.values() for n in d.modules))
    colours = {n: f"C{i % 10}" for i, n in enumerate(layer_names)}
    if parameters is None:
        parameters = list(dict.fromkeys(n for d in runs.values() for n, p in d.parameters
                                        if p.ndim >= 2))
    param_colours = {n: f"C{i % 10}" for i, n in enumerate(parameters)}

    def label(run: str, name: str) -> str:
        return f"{name} ({run})" if run else name

    for k, (run, d) in enumerate(runs.items()):
        style = styles[k % len(styles)]
        panels = ((axes[0, 0], "activations", "std", colours, False),
                  (axes[0, 1], "activations", "saturated", colours, False),
                  (axes[0, 2], "gradients", "std", colours, True),
                  (axes[1, 0], "parameters", "grad_norm", param_colours, True))
        for ax, section, statistic, palette, log in panels:
            for name, (steps, values) in d.series(section, statistic).items():
                if name not in palette:
                    continue
                if statistic == "saturated":
                    values = 100 * values
                ax.plot(steps, values, style, color=palette[name], label=label(run, name))
            if log:
                ax.set_yscale("log")
        for name, (steps, values) in d.series("parameters", "update_to_data").items():
            if name in param_colours:
                axes[1, 1].plot(steps, np.log10(np.maximum(values, 1e-300)), style,
                                color=param_colours[name], label=label(run, name))
        if d.records:
            last = d.records[-1]
            for name, entry in last["activations"].items():
                counts, edges = (np.asarray(x, float) for x in entry["histogram"])
                centres = (edges[:-1] + edges[1:]) / 2
                axes[1, 2].plot(centres, counts / max(counts.sum(), 1), style,
                                color=colours.get(name), label=label(run, name))
    axes[1, 1].axhline(-3, color="gray", ls=":", lw=1, label="10⁻³")
    thresholds = sorted({d.saturation for d in runs.values()})
    threshold = "/".join(f"{t:g}" for t in thresholds) or "?"
    titles = (("activation std", "std of the layer's output"),
              (f"saturated outputs (%), threshold s = {threshold}",
               "tanh/sigmoid |y| > s, attention rows max α > s"),
              ("gradient reaching each output y", "std of ∂L/∂y, L the loss (log scale)"),
              ("parameter gradients", "‖∂L/∂w‖ per weight w (log scale)"),
              ("update-to-data ratio", "log10 std(Δw) / std(w), Δw one step's change"),
              ("activations at the last recorded step", "fraction of values"))
    for ax, (heading, ylabel) in zip(axes.ravel(), titles):
        ax.set_title(heading, fontsize=10)
        ax.set_ylabel(ylabel)
        ax.set_xlabel("step" if ax is not axes[1, 2] else "value")
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7)
    if title:
        figure.suptitle(title)
    return figure
