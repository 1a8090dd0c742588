"""Pictures: the autodiff graph behind a tensor (graph.py, drawn with Graphviz), and attention
weights as labelled heat maps (attention.py, drawn with matplotlib).

    picture = minigrad.viz.draw(loss)                  # a graphviz.Digraph; inline in Jupyter
    minigrad.viz.render(loss, "loss.png")               # one file, written atomically
    figure = minigrad.viz.attention_map(weights[0], query_labels=words, key_labels=words)

`import minigrad` imports neither library: graph.py, and with it the graphviz package, is
imported on the first use of one of its names (`draw`, `render`, `save`, `GraphPicture`,
`GraphvizNotFoundError`; see graph.py for them), matplotlib on the first attention map.
"""

import importlib

from .attention import attention_map

__all__ = ["draw", "render", "save", "GraphPicture", "GraphvizNotFoundError", "attention_map"]


def __getattr__(name: str):
    """The names of graph.py, found there on first use: importing it imports graphviz."""
    if name.startswith("__"):                  # the import machinery asks for these
        raise AttributeError(name)
    return getattr(importlib.import_module(".graph", __name__), name)
