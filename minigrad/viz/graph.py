"""Graph pictures: the autodiff graph behind a tensor, drawn with Graphviz.

    picture = minigrad.viz.draw(loss)                  # a graphviz.Digraph; inline in Jupyter
    picture.render(outfile="loss.svg", cleanup=True)   # loss.svg alone (no DOT text left)
    minigrad.viz.render(loss, "loss.png")               # one file, written atomically
    minigrad.viz.draw(loss, color_by_grad=True)         # after loss.backward(): gradient flow

A picture has one node per tensor and one per operation, with edges in data-flow order
(input tensor → operation → output tensor). Tensor nodes come in four styles:

    parameter      a leaf that requires grad          square blue box
    constant       a leaf that does not               grey box, dimmed text
    intermediate   made by an operation               rounded yellow box
    root           a result drawn from, that no       rounded green box, double border
                   operation of the picture uses

A root shows its name (or the word "root") above its shape. Operations are grey ellipses named
after their Function class ("MatMul", "Add"); a slice shows its index instead ("[:, 0:4]"),
and the tensor it cuts out shows its name when it has one (nn names a GRU's gates r, z, n and
attention's projections q, k, v). Operations recorded inside
`minigrad.name_scope("encoder.layer0")` are grouped into nested boxes (Graphviz clusters), and
`collapse=` folds whole scopes into single boxes.

The graph is walked iteratively from the root through `tensor._fn` and `fn.inputs`, so graphs
100 000 operations deep draw fine (laying such a picture out with `dot` is another matter:
collapse scopes first). A backward without `retain_graph` frees a graph's saved arrays but keeps
its structure, so a graph can be drawn after backward, which is when gradient norms exist.

`attention_map(weights, query_labels, key_labels)` draws attention weights (..., Lq, Lk) as
labelled heat maps with matplotlib (see minigrad/viz/attention.py).

Rendering needs Graphviz's `dot` program. Without it, `render`, `pipe` and `view` fail at once
with a message saying how to install it, while `.source` and `.save()` (the DOT text) still
work.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import tempfile
import warnings
from typing import Sequence, Union

import graphviz
import numpy as np

from .. import autograd
from ..gradients import SpentTensor
from ..backend import backend_of
from ..tensor import Tensor
from ..ops.indexing import GetItem
from .attention import attention_map  # noqa: F401  (minigrad.viz.attention_map before)

__all__ = ["draw", "render", "save", "GraphPicture", "GraphvizNotFoundError"]

Graph = Union[graphviz.Digraph, graphviz.Graph, graphviz.Source]

_FONT = "Helvetica,Arial,sans-serif"
_RANKDIRS = ("TB", "LR", "BT", "RL")
_SOURCE_FORMATS = ("gv", "dot")        # suffixes written as DOT text, no layout needed

# Node styles by kind. Shapes tell the kinds apart even when colour shows gradients instead.
_TENSOR_STYLE = {
    "parameter": dict(shape="box", style="filled", fillcolor="#cfe2ff", color="#3b6fb6",
                      penwidth="1.5"),
    "constant": dict(shape="box", style="filled", fillcolor="#f2f2f2", color="#a0a0a0",
                     fontcolor="#555555"),
    "intermediate": dict(shape="box", style="rounded,filled", fillcolor="#fff4d6",
                         color="#b59a4a"),
    "root": dict(shape="box", style="rounded,filled,bold", fillcolor="#c8efc0",
                 color="#2e7d32", penwidth="2", peripheries="2"),
}
_OP_STYLE = dict(shape="ellipse", style="filled", fillcolor="#e6e6e6", color="#6b6b6b")
_COLLAPSED_STYLE = dict(shape="box3d", style="filled", fillcolor="#e3dcf5", color="#5e4b9c")
_CLUSTER_FILLS = ("#f7f9fc", "#eef2f8")      # alternate by depth so nesting stays visible

# Gradient colouring: the norm on a linear light-to-dark blue ramp from 0 to the picture's
# largest norm (shade k of 8 covers [k/8, (k+1)/8) of it); red means "no gradient".
_RAMP = ("#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c",
         "#08306b")
_NO_GRAD_NODE = dict(fillcolor="#eeeeee", color="#d62728", fontcolor="#c62828")
_NO_GRAD_EDGE = dict(color="#9e9e9e", style="dashed")
_NOT_FINITE_NODE = dict(fillcolor="#ff8a80", color="#b71c1c")

_KIND_TOOLTIP = {
    "parameter": "parameter (leaf, requires grad)",
    "constant": "constant (leaf, no grad)",
    "intermediate": "intermediate (made by an operation)",
    "root": "root",
}


# ---------------------------------------------------------------------------------------------
# The picture: a Digraph that checks for Graphviz before it renders.

class GraphvizNotFoundError(graphviz.ExecutableNotFound):
    """Graphviz's layout program (`dot`) is not installed; a RuntimeError."""

    def __init__(self, program: str):
        RuntimeError.__init__(self, _missing_program_message(program))


def _missing_program_message(program: str) -> str:
    return (f"cannot render the graph picture: Graphviz's '{program}' program is not on PATH. "
            f"Install Graphviz itself (the 'graphviz' Python package only writes DOT text):\n"
            f"  Debian/Ubuntu:  sudo apt-get install graphviz\n"
            f"  macOS:          brew install graphviz\n"
            f"  conda:          conda install graphviz\n"
            f"The DOT text works without it: picture.source, picture.save('graph.gv').")


def _require_program(program: str) -> None:
    if shutil.which(program) is None:
        raise GraphvizNotFoundError(program)


class GraphPicture(graphviz.Digraph):
    """The `graphviz.Digraph` that `draw` returns.

    Everything a Digraph does works (`.source`, `.save()`, `.render()`, `.pipe()`, inline
    display in Jupyter); `render`, `pipe` and `view` first check that the layout program is
    installed and raise `GraphvizNotFoundError` (a RuntimeError) saying how to install it.
    """

    def render(self, *args, **kwargs) -> str:
        _require_program(kwargs.get("engine") or self.engine)
        return super().render(*args, **kwargs)

    def pipe(self, *args, **kwargs):
        _require_program(kwargs.get("engine") or self.engine)
        return super().pipe(*args, **kwargs)

    def view(self, *args, **kwargs) -> str:
        _require_program(self.engine)
        return super().view(*args, **kwargs)

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        # In a notebook, a missing `dot` shows the install hint rather than a traceback.
        if shutil.which(self.engine) is None:
            return {"text/plain": _missing_program_message(self.engine)}
        return super()._repr_mimebundle_(include, exclude, **kwargs)


# ---------------------------------------------------------------------------------------------
# draw

def draw(tensor: Tensor | Sequence[Tensor], show_shapes: bool = True, show_values: bool = False,
         color_by_grad: bool = False, group_scopes: bool = True,
         collapse: Sequence[str] | int | None = None, rankdir: str = "TB",
         max_value_elements: int = 16, compute_grads: bool = False) -> GraphPicture:
    """The graph that computed `tensor`, as a Graphviz picture.

    Nodes: one per tensor (its `name` if set; shape and dtype; `grad norm ‖g‖₂` once a gradient
    is known; values with `show_values`) and one per operation (the Function's class name).
    Edges run input tensor → operation → output tensor; an operation with k inputs has k + 1
    edges (x * x draws two from x).

    Args:
        tensor: the root, or a sequence of roots drawn into one picture. Several roots show
            parts that are not connected to the first: `draw([loss, scores])` when `scores`
            reaches the loss only through a hard `argmax`, which records no graph.
        show_shapes: shape and dtype (and device when not "cpu") in tensor labels.
        show_values: values of tensors with at most `max_value_elements` elements, the range
            [min, max] of bigger ones. Single-element constants (the 2 in `x * 2`) always show
            their value.
        color_by_grad: fill tensors and colour edges by the gradient norm ‖g‖₂ on a linear
            scale from 0 (lightest) to the largest norm in the picture (darkest), so equal
            colours mean similar norms and a norm half the largest is drawn half-way; a legend
            shows the scale with its ends. A tensor that requires grad but gets none (gradient
            None or exactly zero) is grey with a red border and a "no gradient" label, and its
            edges are grey and dashed. Gradients are read from
            `.grad` (leaves after backward; intermediates that called `retain_grad()`), or
            computed with `compute_grads`. Intermediates whose gradient is unknown keep their
            usual style. Without any gradient in the graph a warning says so.
        group_scopes: draw operations of each `minigrad.name_scope` inside a labelled box,
            nested as the dotted scopes nest. A leaf goes into the innermost scope holding all
            the operations that use it; a tensor goes where the operation that made it is.
        collapse: scope names (["encoder.layer0"]) or a depth (2 folds every scope to its first
            two dotted parts) whose operations are drawn as one box labelled with the scope and
            its counts of operations and parameters. Tensors inside are hidden, except those
            used outside the scope and constant inputs of more than one element (data, masks);
            edges run from the tensors it uses to the box and from the box to the tensors it
            hands out.
        rankdir: layout direction, "TB" (top to bottom), "LR", "BT" or "RL".
        max_value_elements: largest tensor whose values `show_values` prints in full.
        compute_grads: compute the gradient of the first root with respect to every tensor of
            the graph that requires grad, intermediates included, by one extra backward pass:
            `minigrad.grad(root, tensors, retain_graph=True, allow_unused=True)`. The root must
            be a single-element tensor (a loss) whose graph has not been freed, i.e. draw before
            `backward()` or after `backward(retain_graph=True)`. `.grad` attributes are left
            untouched; hooks registered on tensors run once more. These gradients label and
            colour the picture in place of `.grad`.

    Returns:
        a `GraphPicture` (a `graphviz.Digraph`): displays inline in Jupyter;
        `.render(outfile="graph.svg", cleanup=True)` or `minigrad.viz.render(tensor,
        "graph.svg")` write the picture alone (Graphviz's `.render("graph", format="svg")`
        also leaves the DOT text in a file named `graph`).
    """
    roots = _as_roots(tensor)
    if rankdir not in _RANKDIRS:
        raise ValueError(f"draw: rankdir must be one of {', '.join(_RANKDIRS)}, got {rankdir!r}")
    if isinstance(max_value_elements, bool) or not isinstance(max_value_elements, int) \
            or max_value_elements < 0:
        raise ValueError(f"draw: max_value_elements must be an int >= 0, got "
                         f"{max_value_elements!r}")
    graph = _Graph(roots)
    if compute_grads:
        norms = _computed_grad_norms(graph)
    else:
        norms = _attribute_grad_norms(graph)
        if not any(v is not None for v in norms.values()):
            # no backward has reached this graph yet: "no gradient" would be premature
            if color_by_grad:
                warnings.warn("draw(color_by_grad=True): no tensor in the graph has a gradient "
                              "yet; call backward() on the loss first (retain_grad() keeps "
                              "those of intermediates) or pass compute_grads=True",
                              stacklevel=2)
            norms = {}
    folding = _Folding(graph, collapse)

    picture = GraphPicture(
        name="minigrad",
        graph_attr=dict(rankdir=rankdir, fontname=_FONT, fontsize="11", nodesep="0.3",
                        ranksep="0.35"),
        node_attr=dict(fontname=_FONT, fontsize="11", margin="0.12,0.05", height="0.3"),
        edge_attr=dict(fontname=_FONT, fontsize="9", arrowsize="0.7", color="#555555"),
    )
    # the colour scale spans the tensors on show, not those hidden in collapsed scopes
    ramp = _GradRamp({id(t): norms[id(t)] for t in graph.order
                      if id(t) in norms and not folding.is_hidden(t)}) if color_by_grad else None
    labels = _Labeller(show_shapes, show_values, max_value_elements, norms)
    clusters = _Clusters(picture, group_scopes)
    edges: list[tuple[str, str, dict]] = []
    root_ids = graph.result_ids()

    for t in graph.order:
        if folding.is_hidden(t):
            continue
        kind = _kind(t, root_ids)
        attrs = dict(_TENSOR_STYLE[kind], tooltip=_KIND_TOOLTIP[kind])
        if ramp is not None:
            attrs.update(ramp.node_style(t, attrs))
        clusters.add_node(folding.tensor_scope(t), _tensor_id(t), labels.tensor(t, kind), attrs)

    for t in graph.order:
        fn = t._fn
        if fn is None:
            continue
        box = folding.box_of(fn)
        if box is None:
            tooltip = f"{type(fn).__name__} in scope {fn.scope}" if fn.scope else \
                type(fn).__name__
            clusters.add_node(fn.scope, _op_id(fn), _escape(_op_label(fn)),
                              dict(_OP_STYLE, tooltip=_escape(tooltip)))
            for x in _inputs(fn):
                edges.append((_tensor_id(x), _op_id(fn), _edge_style(ramp, x)))
            edges.append((_op_id(fn), _tensor_id(t), _edge_style(ramp, t)))
        else:
            for x in _inputs(fn):
                if folding.is_input_of(box, x) and folding.add_box_input(box, x):
                    edges.append((_tensor_id(x), folding.box_id(box), _edge_style(ramp, x)))
            if not folding.is_hidden(t):
                edges.append((folding.box_id(box), _tensor_id(t), _edge_style(ramp, t)))

    for box in folding.boxes():
        clusters.add_node(_parent_scope(box), folding.box_id(box), folding.box_label(box),
                          dict(_COLLAPSED_STYLE, tooltip=_escape(f"collapsed scope {box}")))
    clusters.close()
    picture.body.extend(clusters.lines.edge(tail, head, attrs) for tail, head, attrs in edges)
    if ramp is not None and ramp.has_range:
        picture.body.append(clusters.lines.node("legend", ramp.legend(), dict(
            shape="plaintext", fontsize="9"), html=True))
    return picture


def _as_roots(tensor) -> list[Tensor]:
    if isinstance(tensor, Tensor):
        return [tensor]
    if isinstance(tensor, (list, tuple)) and tensor and \
            all(isinstance(t, Tensor) for t in tensor):
        return list(tensor)
    kind = type(tensor).__name__
    if isinstance(tensor, (list, tuple)):
        kind += " of " + ", ".join(sorted({type(t).__name__ for t in tensor})) if tensor \
            else " (empty)"
    raise TypeError(f"draw: expected a Tensor or a non-empty sequence of Tensors, got {kind}")


def _kind(t: Tensor, root_ids: set[int]) -> str:
    if id(t) in root_ids:
        return "root"
    if t._fn is not None:
        return "intermediate"
    return "parameter" if t._requires_grad else "constant"


def _op_label(fn) -> str:
    """An operation's class name; for a slice, its index as written: "[:, 0:4]"."""
    if isinstance(fn, GetItem):
        return _index_text(fn.index)
    return type(fn).__name__


def _index_text(index) -> str:
    """x[index] as Python would print the brackets: [:, 0:4], [0], [..., None, 2:8:2]."""
    parts = index if isinstance(index, tuple) else (index,)
    return "[" + ", ".join(_index_part_text(part) for part in parts) + "]"


def _index_part_text(part) -> str:
    if isinstance(part, slice):
        text = ("" if part.start is None else str(part.start)) + ":" + \
            ("" if part.stop is None else str(part.stop))
        return text + ("" if part.step is None else f":{part.step}")
    if part is Ellipsis:
        return "..."
    if part is None:
        return "None"
    if isinstance(part, Tensor):
        part = part.data
    if hasattr(part, "shape") and hasattr(part, "dtype"):      # an index array (NumPy, CuPy)
        shape = tuple(int(n) for n in part.shape)
        if part.dtype.kind == "b":
            return f"mask {shape}"
        if part.ndim <= 1 and part.size <= 6:
            values = Tensor._from_array(part, backend_of(part).xp).tolist()
            return str(values if part.ndim else int(values))
        return f"{part.dtype} {shape}"
    return str(part)


def _tensor_id(t: Tensor) -> str:
    return f"t{id(t)}"


def _op_id(fn) -> str:
    return f"op{id(fn)}"


def _literal(text) -> str:
    """Text shown as written: Graphviz would read a backslash as an escape (\\N = node name)."""
    return str(text).replace("\\", "\\\\").replace("\n", "\\n")


def _escape(text) -> str:
    """User text as a literal Graphviz label, never taken for an HTML label '<...>'."""
    return graphviz.nohtml(_literal(text))


def _join_lines(lines: list) -> str:
    """Label lines joined by Graphviz's centred line break `\\n`, each line taken literally."""
    return graphviz.nohtml("\\n".join(_literal(line) for line in lines))


# DOT lines are written directly (graphviz's node()/edge() quote every attribute on every call,
# which dominates the time for graphs of 100 000 nodes). Node ids are plain identifiers; every
# label and attribute value is quoted, and label text has its backslashes already doubled.

def _quoted(text: str) -> str:
    return '"' + str(text).replace('"', '\\"') + '"'


class _Lines:
    """Formats node and edge statements, quoting each distinct attribute set once."""

    def __init__(self):
        self._attribute_text: dict[tuple, str] = {}

    def attributes(self, attrs: dict) -> str:
        key = tuple(sorted(attrs.items()))
        if key not in self._attribute_text:
            self._attribute_text[key] = " ".join(f"{name}={_quoted(value)}"
                                                 for name, value in key)
        return self._attribute_text[key]

    def node(self, node_id: str, label: str, attrs: dict, html: bool = False) -> str:
        """`html`: the label is Graphviz's HTML-like `<...>`, written unquoted (only for text
        made here, never for user text)."""
        text = label if html else _quoted(label)
        return f"\t{node_id} [label={text} {self.attributes(attrs)}]\n"

    def edge(self, tail: str, head: str, attrs: dict) -> str:
        if not attrs:
            return f"\t{tail} -> {head}\n"
        return f"\t{tail} -> {head} [{self.attributes(attrs)}]\n"


def _parent_scope(scope: str) -> str:
    return scope.rpartition(".")[0]


# ---------------------------------------------------------------------------------------------
# The graph: tensors in data-flow order and who uses each.

def _inputs(fn) -> list:
    """fn's inputs, each a live tensor where one exists: after a backward without retain_graph
    the graph keeps a SpentTensor (shape, dtype, name, no values) for a tensor nobody holds."""
    inputs = []
    for x in fn.inputs:
        if isinstance(x, SpentTensor) and x.tensor is not None:
            x = x.tensor
        inputs.append(x)
    return inputs


class _Graph:
    """Every tensor the roots depend on, each listed after its inputs, found without recursion
    (a GRU unrolled over a long sequence is tens of thousands of operations deep)."""

    def __init__(self, roots: list[Tensor]):
        self.roots = roots
        self.order: list[Tensor] = []
        self.consumers: dict[int, list] = {}        # id(tensor) -> Functions that take it
        seen: set[int] = set()                      # ids, since Tensor.__eq__ is elementwise
        stack = [(root, False) for root in reversed(roots)]
        while stack:
            node, inputs_done = stack.pop()
            if inputs_done:
                self.order.append(node)
            elif id(node) not in seen:
                seen.add(id(node))
                stack.append((node, True))          # come back once its inputs are listed
                fn = node._fn
                if fn is not None:
                    stack.extend((x, False) for x in reversed(_inputs(fn)))
        for t in self.order:
            if t._fn is not None:
                for x in _inputs(t._fn):
                    self.consumers.setdefault(id(x), []).append(t._fn)

    def result_ids(self) -> set[int]:
        """The roots that are results: made by an operation and used by none in the picture
        (a leaf passed as a root, or a root another root uses, keeps its own style)."""
        return {id(r) for r in self.roots if r._fn is not None and id(r) not in self.consumers}

    def home_scope(self, t: Tensor) -> str:
        """The scope a tensor is drawn in: its maker's, or for a leaf the innermost scope
        holding every operation that uses it."""
        if t._fn is not None:
            return t._fn.scope
        users = self.consumers.get(id(t), [])
        if not users:
            return ""
        common = users[0].scope.split(".") if users[0].scope else []
        for fn in users[1:]:
            parts = fn.scope.split(".") if fn.scope else []
            n = 0
            while n < len(common) and n < len(parts) and common[n] == parts[n]:
                n += 1
            del common[n:]
        return ".".join(common)


# ---------------------------------------------------------------------------------------------
# Gradients: read from .grad, or computed.

def _grad_norm(g) -> float:
    """‖g‖₂ = √(Σ g²), summed in float64 on g's device (float32 squares overflow sooner)."""
    array = g.data if isinstance(g, Tensor) else g
    if array.dtype.kind != "f":
        return 0.0
    xp = backend_of(array).xp
    values = array.astype(np.float64)
    total = (values * values).sum()
    return math.sqrt(Tensor._from_array(total, xp).item())


def _attribute_grad_norms(graph: _Graph) -> dict[int, float | None]:
    """{id(tensor): ‖.grad‖ or None} for tensors whose gradient is known from `.grad`: any
    tensor holding one, and leaves (or retain_grad tensors) that require grad but hold none.
    Tensors whose gradient is unknown (intermediates that did not retain it) are absent."""
    norms: dict[int, float | None] = {}
    for t in graph.order:
        if t.grad is not None:
            norms[id(t)] = _grad_norm(t.grad)
        elif t._requires_grad and (t._fn is None or t._retains_grad):
            norms[id(t)] = None
    return norms


def _computed_grad_norms(graph: _Graph) -> dict[int, float | None]:
    """{id(tensor): ‖∂root/∂tensor‖ or None} for every tensor that requires grad."""
    root = graph.roots[0]
    if not root._requires_grad or root.data.size != 1:
        raise ValueError(f"draw(compute_grads=True): the first root must be a single-element "
                         f"tensor that requires grad (a loss), got shape {tuple(root.shape)} "
                         f"with requires_grad={root.requires_grad}")
    freed = _freed_function(root)
    if freed is not None:
        raise RuntimeError(f"draw(compute_grads=True): the graph was freed by a backward "
                           f"without retain_graph=True ({type(freed).__name__} has released "
                           f"its saved values); draw before backward, use "
                           f"backward(retain_graph=True), or read .grad with "
                           f"color_by_grad=True and compute_grads=False")
    tensors = [t for t in graph.order if t._requires_grad]
    grads = autograd.grad(root, tensors, retain_graph=True, allow_unused=True)
    return {id(t): (None if g is None else _grad_norm(g)) for t, g in zip(tensors, grads)}


def _freed_function(root: Tensor):
    """The first Function below `root` whose saved values a backward has freed, or None."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        fn = stack.pop()._fn
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        if fn._freed:
            return fn
        stack.extend(x for x in _inputs(fn) if x._requires_grad)
    return None


class _GradRamp:
    """Colours by ‖g‖ on a linear scale from 0 to the largest finite norm of the picture."""

    def __init__(self, norms: dict[int, float | None]):
        self.norms = norms
        finite = [v for v in norms.values() if v is not None and v > 0 and math.isfinite(v)]
        self.has_range = bool(finite) or any(v is None or v == 0 for v in norms.values())
        self.hi = max(finite) if finite else 0.0

    def status(self, t: Tensor) -> str:
        if id(t) not in self.norms:
            return "unknown"
        norm = self.norms[id(t)]
        if norm is None or norm == 0:
            return "none"
        return "finite" if math.isfinite(norm) else "not finite"

    def fraction(self, norm: float) -> float:
        """norm / largest norm: 0 for a vanishing gradient, 1 for the picture's largest."""
        return norm / self.hi

    def colour(self, norm: float, ramp: Sequence[str] = _RAMP) -> str:
        return ramp[min(int(self.fraction(norm) * len(ramp)), len(ramp) - 1)]

    def node_style(self, t: Tensor, attrs: dict) -> dict:
        status = self.status(t)
        if status == "none":
            return dict(_NO_GRAD_NODE, style=attrs["style"] + ",dashed")
        if status == "not finite":
            return dict(_NOT_FINITE_NODE)
        if status == "finite":
            norm = self.norms[id(t)]
            dark = self.fraction(norm) > 0.6
            return dict(fillcolor=self.colour(norm), fontcolor="#ffffff" if dark else "#000000")
        return {}

    def edge_style(self, t: Tensor) -> dict:
        status = self.status(t)
        if status == "none":
            return dict(_NO_GRAD_EDGE)
        if status == "not finite":
            return dict(color=_NOT_FINITE_NODE["color"], penwidth="2.5")
        if status == "finite":
            norm = self.norms[id(t)]
            # edges skip the palest shades, which vanish on a white page
            width = 1.0 + 2.5 * self.fraction(norm)
            return dict(color=self.colour(norm, _RAMP[3:]), penwidth=f"{width:.2f}")
        return {}

    def legend(self) -> str:
        """An HTML-like Graphviz label: the ramp as a bar of swatches from 0 to the largest
        norm, with the value at each end and the middle, and the "no gradient" swatch."""
        n = len(_RAMP)
        cells = "".join(f'<TD BGCOLOR="{c}" WIDTH="16" HEIGHT="12"></TD>' for c in _RAMP)
        left, middle = n // 2 - 1, 2
        ticks = (f'<TD COLSPAN="{left}" ALIGN="LEFT">0</TD>'
                 f'<TD COLSPAN="{middle}">{self.hi / 2:.3g}</TD>'
                 f'<TD COLSPAN="{n - left - middle}" ALIGN="RIGHT">{self.hi:.3g}</TD>')
        if self.hi == 0:
            ticks = f'<TD COLSPAN="{n}">no tensor got a nonzero gradient</TD>'
        no_grad = (f'<TD COLSPAN="{n}" BGCOLOR="{_NO_GRAD_NODE["fillcolor"]}" '
                   f'COLOR="{_NO_GRAD_NODE["color"]}" BORDER="1">'
                   f'<FONT COLOR="{_NO_GRAD_NODE["fontcolor"]}">no gradient '
                   f'(None or exactly 0)</FONT></TD>')
        return (f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2">'
                f'<TR><TD COLSPAN="{n}">gradient norm, linear scale from 0</TD></TR>'
                f'<TR>{cells}</TR><TR>{ticks}</TR><TR><TD COLSPAN="{n}"></TD></TR>'
                f'<TR>{no_grad}</TR></TABLE>>')


def _edge_style(ramp: _GradRamp | None, t: Tensor) -> dict:
    """An edge takes the colour of the gradient of the tensor at its end."""
    return {} if ramp is None else ramp.edge_style(t)


# ---------------------------------------------------------------------------------------------
# Labels

class _Labeller:
    def __init__(self, show_shapes: bool, show_values: bool, max_value_elements: int,
                 norms: dict[int, float | None]):
        self.show_shapes = show_shapes
        self.show_values = show_values
        self.max_value_elements = max_value_elements
        self.norms = norms
        self._dtype_names: dict = {}               # str(dtype) is slow; graphs repeat dtypes

    def tensor(self, t: Tensor, kind: str) -> str:
        lines: list[str] = []
        if t.name is not None:
            lines.append(str(t.name))
        elif kind == "root":
            lines.append("root")                    # a result says so even when unnamed
        if self.show_shapes:
            dtype = t.dtype
            if dtype not in self._dtype_names:
                self._dtype_names[dtype] = str(dtype)
            device = t.device
            lines.append(f"{tuple(t.shape)} {self._dtype_names[dtype]}" +
                         ("" if device == "cpu" else f" {device}"))
        if isinstance(t, SpentTensor):
            pass                                   # freed by backward: no values to show
        elif self.show_values or (kind == "constant" and t.data.size == 1):
            lines.extend(self._values(t))
        if id(t) in self.norms:
            lines.append(_grad_text(self.norms[id(t)]))
        return _join_lines(lines or [kind])

    def _values(self, t: Tensor) -> list[str]:
        values = t.numpy()
        if values.ndim == 0 and values.dtype.kind in "fiu":
            return [f"{values.item():.4g}"]
        if values.size <= self.max_value_elements:
            text = np.array2string(values, precision=4, separator=", ", suppress_small=True,
                                   max_line_width=60, threshold=self.max_value_elements)
            return text.split("\n")
        if values.dtype.kind == "b":
            return [f"{int(values.sum())} of {values.size} True"]
        return [f"values in [{values.min():.4g}, {values.max():.4g}]"]


def _grad_text(norm: float | None) -> str:
    if norm is None:
        return "no gradient"
    if norm == 0:
        return "no gradient (grad = 0)"
    return f"grad norm {norm:.3g}"


# ---------------------------------------------------------------------------------------------
# Scopes: nested clusters, and collapsing.

class _Clusters:
    """Puts each node into the Graphviz cluster of its scope ("a.b" inside "a")."""

    def __init__(self, picture: GraphPicture, enabled: bool):
        self.picture = picture
        self.enabled = enabled
        self.graphs: dict[str, graphviz.Digraph] = {}
        self.lines = _Lines()

    def add_node(self, scope: str, node_id: str, label: str, attrs: dict) -> None:
        target = self._graph(scope) if self.enabled and scope else self.picture
        target.body.append(self.lines.node(node_id, label, attrs))

    def _graph(self, scope: str) -> graphviz.Digraph:
        parts = scope.split(".")
        for depth in range(len(parts)):             # outer scopes first: "a", then "a.b"
            prefix = ".".join(parts[:depth + 1])
            if prefix not in self.graphs:
                self.graphs[prefix] = graphviz.Digraph(
                    name=f"cluster_{len(self.graphs)}",   # "cluster..." makes Graphviz box it
                    graph_attr=dict(label=_escape(prefix), style="rounded,filled",
                                    fillcolor=_CLUSTER_FILLS[depth % 2], color="#9aa7b8",
                                    fontcolor="#34495e", labeljust="l", fontsize="10"))
        return self.graphs[scope]

    def close(self) -> None:
        """Nest the clusters into each other and into the picture, deepest first (a subgraph is
        copied into its parent when added, so children go in before their parent does)."""
        scopes = sorted(self.graphs, key=lambda s: -s.count("."))
        for scope in scopes:
            parent = _parent_scope(scope)
            target = self.graphs[parent] if parent else self.picture
            target.subgraph(self.graphs[scope])


class _Folding:
    """Which operations `collapse` folds into which scope box, and which tensors it hides."""

    def __init__(self, graph: _Graph, collapse):
        self.graph = graph
        self.prefixes: list[str] | None = None
        self.depth: int | None = None
        if collapse is None:
            pass
        elif isinstance(collapse, int) and not isinstance(collapse, bool):
            if collapse < 1:
                raise ValueError(f"draw: collapse depth must be >= 1, got {collapse}")
            self.depth = collapse
        elif isinstance(collapse, str):
            raise TypeError(f"draw: collapse takes a list of scope names, got the string "
                            f"{collapse!r}; write collapse=[{collapse!r}]")
        else:
            self.prefixes = sorted((str(p) for p in collapse), key=len)   # outer scopes win
            self._check_prefixes()
        self._key_of_scope: dict[str, str | None] = {}
        self._ops: dict[str, int] = {}              # box -> number of operations folded in
        self._ids: dict[str, str] = {}
        self._inputs: set[tuple[str, int]] = set()
        for t in graph.order:
            if t._fn is not None:
                box = self.box_of(t._fn)
                if box is not None:
                    self._ops[box] = self._ops.get(box, 0) + 1
                    self._ids.setdefault(box, f"scope{len(self._ids)}")
        self._params: dict[str, list[Tensor]] = {}  # box -> parameters hidden inside
        if self._ops:
            for t in graph.order:
                if t._fn is None and t._requires_grad and self.is_hidden(t):
                    self._params.setdefault(self.box_of_tensor(t), []).append(t)

    def _check_prefixes(self) -> None:
        scopes = sorted({t._fn.scope for t in self.graph.order if t._fn is not None})
        for prefix in self.prefixes:
            if not prefix:
                raise ValueError("draw: collapse got an empty scope name")
            if not any(s == prefix or s.startswith(prefix + ".") for s in scopes):
                known = ", ".join(repr(s) for s in scopes if s) or "none"
                raise ValueError(f"draw: collapse names scope {prefix!r}, but no operation of "
                                 f"the graph is in it; scopes in this graph: {known}")

    def _key(self, scope: str) -> str | None:
        if scope not in self._key_of_scope:
            key = None
            if scope and self.depth is not None:
                parts = scope.split(".")
                if len(parts) >= self.depth:
                    key = ".".join(parts[:self.depth])
            elif scope and self.prefixes is not None:
                for prefix in self.prefixes:
                    if scope == prefix or scope.startswith(prefix + "."):
                        key = prefix
                        break
            self._key_of_scope[scope] = key
        return self._key_of_scope[scope]

    def box_of(self, fn) -> str | None:
        """The collapsed scope an operation is folded into, or None."""
        return self._key(fn.scope)

    def box_of_tensor(self, t: Tensor) -> str | None:
        """The collapsed scope a tensor lives in (made there, or a leaf used only there)."""
        return self._key(self.graph.home_scope(t))

    def is_hidden(self, t: Tensor) -> bool:
        """Inside a collapsed scope and neither a root nor used outside it. Constant leaves of
        more than one element (input data, masks) stay visible as inputs of the box."""
        box = self.box_of_tensor(t)
        if box is None or any(t is r for r in self.graph.roots):
            return False
        if t._fn is None and not t._requires_grad and math.prod(t.shape) > 1:
            return False
        return all(self.box_of(fn) == box for fn in self.graph.consumers.get(id(t), []))

    def is_input_of(self, box: str, t: Tensor) -> bool:
        """Does `t`, used inside `box`, come from outside it (so an edge leads into the box)?"""
        made_inside = t._fn is not None and self.box_of(t._fn) == box
        return not made_inside and not self.is_hidden(t)

    def tensor_scope(self, t: Tensor) -> str:
        """Where a visible tensor is drawn: its home scope, or beside its collapsed box."""
        box = self.box_of_tensor(t)
        return _parent_scope(box) if box is not None else self.graph.home_scope(t)

    def add_box_input(self, box: str, t: Tensor) -> bool:
        """Record that `box` uses `t`; True the first time (one edge per outside input)."""
        key = (box, id(t))
        if key in self._inputs:
            return False
        self._inputs.add(key)
        return True

    def boxes(self) -> list[str]:
        return list(self._ops)

    def box_id(self, box: str) -> str:
        return self._ids[box]

    def box_label(self, box: str) -> str:
        n_ops = self._ops[box]
        lines = [box, f"{n_ops} op{'s' if n_ops != 1 else ''}"]
        params = self._params.get(box, [])
        if params:
            n_values = sum(int(t.data.size) for t in params)
            lines.append(f"{len(params)} parameter{'s' if len(params) != 1 else ''} "
                         f"({n_values:,} values)")
        return _join_lines(lines)


# ---------------------------------------------------------------------------------------------
# Writing files

def render(graph: Tensor | Sequence[Tensor] | Graph, path: str | os.PathLike,
           format: str | None = None, **draw_options) -> str:
    """Draw `graph` (a tensor, roots, or a picture from `draw`) into one file at `path`.

    The format comes from `format` or else the suffix of `path` ("svg", "png", "pdf", ...);
    ".gv" and ".dot" write the DOT text and need no Graphviz program. The file is written
    atomically: the picture is laid out in memory, written to a temporary file beside `path`
    and renamed over it, so a failure leaves no half-written file (and an old file intact).
    `draw_options` go to `draw` when `graph` is a tensor. Returns the path written.
    """
    picture = _as_picture(graph, draw_options, "render")
    path = os.fspath(path)
    fmt = (format or os.path.splitext(path)[1].lstrip(".")).lower()
    if not fmt:
        raise ValueError(f"render: cannot tell the format of {path!r}; give it a suffix such "
                         f"as .svg or .png, or pass format=")
    if fmt in _SOURCE_FORMATS:
        data = picture.source.encode(picture.encoding or "utf-8")
    else:
        _require_program(picture.engine)
        data = picture.pipe(format=fmt)
    _write_atomically(path, data)
    return path


def save(graph: Tensor | Sequence[Tensor] | Graph, path: str | os.PathLike,
         **draw_options) -> str:
    """Write the DOT text of `graph` (a tensor, roots, or a picture) to `path`, atomically.

    Needs no Graphviz program; `dot -Tsvg path > graph.svg` renders it later. Returns the path.
    """
    picture = _as_picture(graph, draw_options, "save")
    path = os.fspath(path)
    _write_atomically(path, picture.source.encode(picture.encoding or "utf-8"))
    return path


def _as_picture(graph, draw_options: dict, op: str):
    if isinstance(graph, (graphviz.Digraph, graphviz.Graph, graphviz.Source)):
        if draw_options:
            raise TypeError(f"{op}: draw options ({', '.join(draw_options)}) apply to tensors, "
                            f"not to a picture that is already drawn")
        return graph
    return draw(graph, **draw_options)


def _write_atomically(path: str, data: bytes) -> None:
    """Write to a temporary file in the target's directory, then rename it over the target."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.",
                                     suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        # mkstemp makes the file private (0600); give it the mode a new file normally gets
        mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else 0o644
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)
        raise
