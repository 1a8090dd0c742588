"""Attention maps: weights of shape (..., Lq, Lk) drawn as labelled heat maps, one panel each.

    figure = minigrad.viz.attention_map(weights[0], query_labels=words, key_labels=words)
    figure.savefig("attention.png")                 # a matplotlib Figure; inline in Jupyter

Row t of a panel is query t, column i is key i, and the colour is the weight α_{t,i} (rows of
softmax weights sum to 1). Leading axes become panels: (heads, Lq, Lk) gives one panel per
head, (layers, heads, Lq, Lk) a grid with one row per layer. matplotlib is needed only here,
and imported only when a map is drawn.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..tensor import Tensor

__all__ = ["attention_map"]

_MAX_TICK_LABELS = 40            # beyond this, every k-th token is labelled


def attention_map(weights, query_labels: Sequence | None = None,
                  key_labels: Sequence | None = None, *, titles: Sequence[str] | None = None,
                  axis_names: Sequence[str] | None = None, ncols: int | None = None,
                  annotate: bool = False, vmax: float | None = None, cmap: str = "viridis",
                  xlabel: str = "key (attended to)", ylabel: str = "query",
                  colorbar_label: str = "attention weight", suptitle: str | None = None,
                  axes: Sequence | None = None):
    """Draw attention weights as heat maps with token labels, one panel per leading index.

    Args:
        weights: a Tensor or array (NumPy or CuPy) of shape (..., Lq, Lk), or a list of 2-D
            maps of different sizes (e.g. one per sentence). Leading axes become panels: none
            gives one panel, one axis (heads) a row of panels wrapped at `ncols`, two axes
            (layers, heads) a grid of rows × columns; more are flattened.
        query_labels, key_labels: the Lq row and Lk column labels (tokens), shared by every
            panel; with a list of maps, a list holding one sequence per map. None: positions.
        titles: one title per panel; by default each panel is named by its leading indices
            with `axis_names` (default "head" for 3-D weights, "layer", "head" for 4-D).
            Without labels the axes show a few integer positions.
        ncols: panels per row when there is one leading axis (default: all, at most 4).
        annotate: write each weight in its cell (for small maps).
        vmax: top of the colour scale (default: the largest weight of all panels); the
            bottom is 0, so equal colours are equal weights in every panel.
        axes: draw into these matplotlib Axes (one per panel) instead of a new figure.

    Returns:
        the matplotlib Figure (a new one, or the one `axes` belong to); one colour bar is
        shared by its panels.

    Raises ImportError (saying how to install it) when matplotlib is missing, and ValueError
    for weights of fewer than 2 dimensions or labels whose count is not Lq / Lk.
    """
    plt_figure = _matplotlib_figure()
    maps, default_titles, grid = _panels(weights, axis_names)
    queries, keys = _labels_per_panel(query_labels, len(maps), "query_labels"), \
        _labels_per_panel(key_labels, len(maps), "key_labels")
    for k, w in enumerate(maps):
        _check_labels(queries[k], w.shape[0], "query_labels", "Lq", w.shape)
        _check_labels(keys[k], w.shape[1], "key_labels", "Lk", w.shape)
    if titles is not None and len(titles) != len(maps):
        raise ValueError(f"attention_map: got {len(titles)} titles for {len(maps)} panels")
    titles = list(titles) if titles is not None else default_titles
    top = float(max(np.max(w) if w.size else 0.0 for w in maps)) if vmax is None else vmax
    top = max(top, 1e-12)

    if axes is None:
        rows, cols = grid if ncols is None else (math.ceil(len(maps) / ncols), ncols)
        width = max(_panel_width(w) for w in maps)
        height = max(_panel_height(w) for w in maps)
        figure = plt_figure(figsize=(width * cols + 1.0, height * rows + 0.6),
                            layout="constrained")
        grid_axes = figure.subplots(rows, cols, squeeze=False)
        panel_axes = [grid_axes[k // cols][k % cols] for k in range(len(maps))]
        for k in range(len(maps), rows * cols):
            grid_axes[k // cols][k % cols].set_axis_off()
    else:
        panel_axes = list(axes) if isinstance(axes, (list, tuple, np.ndarray)) else [axes]
        panel_axes = list(np.ravel(np.asarray(panel_axes, dtype=object)))
        if len(panel_axes) != len(maps):
            raise ValueError(f"attention_map: got {len(panel_axes)} axes for {len(maps)} "
                             f"panels")
        figure = panel_axes[0].figure

    image = None
    for ax, w, title, q_labels, k_labels in zip(panel_axes, maps, titles, queries, keys):
        image = ax.imshow(w, cmap=cmap, vmin=0.0, vmax=top, aspect="auto",
                          interpolation="nearest")
        _set_ticks(ax.xaxis, k_labels, w.shape[1], rotate=True)
        _set_ticks(ax.yaxis, q_labels, w.shape[0], rotate=False)
        if annotate:
            for (t, i), value in np.ndenumerate(w):
                ax.text(i, t, f"{value:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if value < 0.6 * top else "black")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
    if image is not None:
        figure.colorbar(image, ax=panel_axes, label=colorbar_label, shrink=0.9)
    if suptitle is not None:
        figure.suptitle(suptitle)
    return figure


def _matplotlib_figure():
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError("minigrad.viz.attention_map draws with matplotlib, which is not "
                          "installed: pip install matplotlib (or pip install -e "
                          "\".[examples]\")") from error
    return Figure


def _host_array(weights) -> np.ndarray:
    """A NumPy float64 copy of a Tensor or a NumPy/CuPy array."""
    if not isinstance(weights, Tensor):
        weights = Tensor(weights)
    return weights.numpy().astype(np.float64)


def _panels(weights, axis_names) -> tuple[list[np.ndarray], list[str], tuple[int, int]]:
    """The 2-D maps, their default titles, and the (rows, columns) grid they fill."""
    if isinstance(weights, (list, tuple)):
        maps = [_host_array(w) for w in weights]
        for k, w in enumerate(maps):
            if w.ndim != 2:
                raise ValueError(f"attention_map: map {k} of the list has shape {w.shape}; "
                                 f"each must be 2-D (Lq, Lk)")
        if not maps:
            raise ValueError("attention_map: got an empty list of maps")
        cols = min(len(maps), 4)
        return maps, ["" for _ in maps], (math.ceil(len(maps) / cols), cols)
    array = _host_array(weights)
    if array.ndim < 2:
        raise ValueError(f"attention_map: weights must have shape (..., Lq, Lk), got shape "
                         f"{array.shape}")
    leading = array.shape[:-2]
    if axis_names is None:
        axis_names = {0: (), 1: ("head",), 2: ("layer", "head")}.get(
            len(leading), tuple(f"axis {a}" for a in range(len(leading))))
    if len(axis_names) != len(leading):
        raise ValueError(f"attention_map: {len(axis_names)} axis_names for {len(leading)} "
                         f"leading axes of shape {array.shape}")
    maps, titles = [], []
    for index in np.ndindex(*leading):
        maps.append(array[index])
        titles.append(", ".join(f"{name} {i}" for name, i in zip(axis_names, index)))
    if len(leading) == 2:
        grid = leading
    else:
        cols = min(len(maps), 4)
        grid = (math.ceil(len(maps) / cols), cols)
    return maps, titles, grid


def _labels_per_panel(labels, n_panels: int, what: str) -> list:
    """One label sequence (or None) per panel."""
    if labels is None:
        return [None] * n_panels
    labels = list(labels)
    if labels and all(isinstance(x, (list, tuple, np.ndarray)) for x in labels):
        if len(labels) != n_panels:
            raise ValueError(f"attention_map: {what} holds {len(labels)} sequences for "
                             f"{n_panels} panels")
        return [[str(x) for x in seq] for seq in labels]
    return [[str(x) for x in labels]] * n_panels


def _check_labels(labels, size: int, what: str, letter: str, shape) -> None:
    if labels is not None and len(labels) != size:
        raise ValueError(f"attention_map: {len(labels)} {what} for {letter} = {size} "
                         f"(a map of shape {tuple(shape)})")


def _set_ticks(axis, labels, size: int, rotate: bool) -> None:
    """Token labels on every position (every k-th beyond _MAX_TICK_LABELS); without labels,
    a few integer positions."""
    from matplotlib.ticker import MaxNLocator
    if labels is None:
        axis.set_major_locator(MaxNLocator(nbins=8, integer=True))
        return
    step = max(1, math.ceil(size / _MAX_TICK_LABELS))
    positions = list(range(0, size, step))
    axis.set_ticks(positions)
    if rotate:
        axis.set_ticklabels([labels[p] for p in positions], rotation=60, ha="right",
                            rotation_mode="anchor")
    else:
        axis.set_ticklabels([labels[p] for p in positions])


def _panel_width(w: np.ndarray) -> float:
    return float(np.clip(0.32 * w.shape[1] + 1.6, 3.0, 8.0))


def _panel_height(w: np.ndarray) -> float:
    return float(np.clip(0.28 * w.shape[0] + 1.4, 2.6, 7.0))
