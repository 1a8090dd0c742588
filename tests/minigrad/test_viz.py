"""Graph pictures: nodes, labels and edges of the DOT text, styles by kind, gradient colouring,
scopes (clusters and collapsing), deep graphs, rendering to files, and a missing `dot`.

The DOT text is read back with a small parser written here from the DOT grammar, and every
expected label, shape, norm and count comes from the graph each test builds, never from the
drawing code.
"""

import os
import re
import shutil
import xml.etree.ElementTree as ET

import graphviz
import numpy as np
import pytest

import minigrad as mg
from minigrad import viz

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' not installed")


# -- reading DOT text back --------------------------------------------------------------------

NODE = re.compile(r"^\s*(\w+) \[(.*)\]$")
EDGE = re.compile(r"^\s*(\w+) -> (\w+)(?: \[(.*)\])?$")
ATTRIBUTE = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s\]]+)')


def unquote(value: str) -> str:
    """A DOT value as text: quotes removed, \\" and \\\\ undone, the escString \\n a newline."""
    if not value.startswith('"'):
        return value
    out, chars = [], iter(value[1:-1])
    for c in chars:
        if c == "\\":
            nxt = next(chars)
            out.append("\n" if nxt == "n" else nxt)
        else:
            out.append(c)
    return "".join(out)


def attributes(text: str) -> dict:
    return {name: unquote(value) for name, value in ATTRIBUTE.findall(text or "")}


class Dot:
    """Nodes (id -> attributes, label as a list of lines, enclosing cluster labels) and edges."""

    def __init__(self, picture):
        self.nodes, self.edges, self.clusters = {}, [], []
        stack: list = []                  # labels of the enclosing clusters
        for line in picture.source.splitlines():
            stripped = line.strip()
            if stripped.startswith("subgraph "):
                assert stripped.split()[1].startswith("cluster")
                stack.append(None)
            elif stripped == "}":
                if stack:
                    stack.pop()
            elif stripped.startswith("graph ["):
                if stack:
                    stack[-1] = attributes(stripped[len("graph ["):-1]).get("label")
                    self.clusters.append(tuple(stack))
            elif (m := EDGE.match(line)):
                self.edges.append((m.group(1), m.group(2), attributes(m.group(3))))
            elif (m := NODE.match(line)) and m.group(1) not in ("graph", "node", "edge"):
                attrs = attributes(m.group(2))
                attrs["lines"] = attrs["label"].split("\n")
                attrs["clusters"] = tuple(stack)
                self.nodes[m.group(1)] = attrs

    def find(self, first_line: str) -> str:
        """The id of the one node whose label starts with `first_line`."""
        ids = [i for i, a in self.nodes.items() if a["lines"][0] == first_line]
        assert len(ids) == 1, (first_line, ids)
        return ids[0]

    def find_all(self, first_line: str) -> list:
        return [i for i, a in self.nodes.items() if a["lines"][0] == first_line]

    def named_edges(self) -> list:
        """Edges as (first label line of tail, of head)."""
        return sorted((self.nodes[a]["lines"][0], self.nodes[b]["lines"][0])
                      for a, b, _ in self.edges)


def leaf(values, name=None, dtype=np.float64, requires_grad=True) -> mg.Tensor:
    t = mg.tensor(np.asarray(values, dtype=dtype), requires_grad=requires_grad)
    t.name = name
    return t


def affine(rng):
    """h = x @ W + b with x (3, 4), W (4, 2), b (2,), all named."""
    x = leaf(rng.standard_normal((3, 4)), "x", np.float32)
    W = leaf(rng.standard_normal((4, 2)), "W", np.float32)
    b = leaf(rng.standard_normal(2), "b", np.float32)
    h = x @ W + b
    h.name = "h"
    return x, W, b, h


# -- nodes, labels, edges ---------------------------------------------------------------------

def test_one_node_per_tensor_and_operation_with_names_shapes_and_dtypes(rng):
    x, W, b, h = affine(rng)
    dot = Dot(viz.draw(h))
    assert len(dot.nodes) == 5 + 2                  # x, W, b, x@W, h; MatMul, Add
    assert dot.nodes[dot.find("x")]["lines"] == ["x", "(3, 4) float32"]
    assert dot.nodes[dot.find("W")]["lines"] == ["W", "(4, 2) float32"]
    assert dot.nodes[dot.find("b")]["lines"] == ["b", "(2,) float32"]
    assert dot.nodes[dot.find("h")]["lines"] == ["h", "(3, 2) float32"]
    assert dot.nodes[dot.find("(3, 2) float32")]["lines"] == ["(3, 2) float32"]   # x @ W
    dot.find("MatMul"), dot.find("Add")
    # data flow: inputs -> op -> output, one edge per input and one to the output
    assert dot.named_edges() == sorted([
        ("x", "MatMul"), ("W", "MatMul"), ("MatMul", "(3, 2) float32"),
        ("(3, 2) float32", "Add"), ("b", "Add"), ("Add", "h")])


def test_shapes_can_be_hidden_and_unnamed_tensors_then_say_what_they_are(rng):
    x, W, b, h = affine(rng)
    dot = Dot(viz.draw(h, show_shapes=False))
    assert dot.nodes[dot.find("x")]["lines"] == ["x"]
    assert dot.find_all("intermediate") and not any("(3, 4)" in a["label"]
                                                    for a in dot.nodes.values())


def test_an_input_used_twice_gets_two_edges():
    x = leaf([1.0, 2.0], "x")
    dot = Dot(viz.draw(x * x))
    mul = dot.find("Mul")
    assert [(a, b) for a, b, _ in dot.edges if b == mul] == [(dot.find("x"), mul)] * 2


@pytest.mark.parametrize("index, text", [
    ((slice(None), slice(1, 3)), "[:, 1:3]"),
    (0, "[0]"),
    ((Ellipsis, None, slice(None, None, 2)), "[..., None, ::2]"),
    ((slice(2, None), -1), "[2:, -1]"),
    (np.array([2, 0, 2]), "[[2, 0, 2]]"),
    (np.arange(12).reshape(3, 4) % 3, "[int64 (3, 4)]"),
    (np.array([True, False, True, True]), "[mask (4,)]"),
])
def test_a_slice_shows_its_index(index, text):
    x = leaf(np.arange(16.0).reshape(4, 4), "x")
    y = x[index]
    dot = Dot(viz.draw(y))
    op = next(h for t, h, _ in dot.edges if t == dot.find("x"))
    assert dot.nodes[op]["lines"] == [text]
    assert dot.nodes[op]["shape"] == "ellipse"


def test_slices_cut_from_a_gru_step_and_packed_attention_show_the_gates_they_cut():
    import nn
    cell = nn.GRUCell(3, 4)
    h = cell(mg.randn(2, 3), mg.randn(2, 4))
    dot = Dot(viz.draw(h))
    H = 4
    makers = {name: next(t for t, hd, _ in dot.edges if hd == dot.find(name))
              for name in ("r", "z", "n")}
    # r and z are the two halves of σ(..) over the first 2H columns; n comes out of tanh
    assert dot.nodes[makers["r"]]["lines"] == [f"[:, :{H}]"]
    assert dot.nodes[makers["z"]]["lines"] == [f"[:, {H}:]"]
    assert dot.nodes[makers["n"]]["lines"] == ["Tanh"]
    attention = nn.MultiHeadAttention(8, 2)
    x = mg.randn(1, 3, 8)
    out, _ = attention(x, x, x)                     # self-attention: one packed projection
    dot = Dot(viz.draw(out))
    for i, name in enumerate("qkv"):
        maker = next(t for t, hd, _ in dot.edges if hd == dot.find(name))
        assert dot.nodes[maker]["lines"] == [f"[{i}]"]
        assert dot.nodes[dot.find(name)]["lines"] == [name, "(1, 2, 3, 4) float32"]


def test_a_root_shows_its_name_or_says_root_above_its_shape(rng):
    x, W, b, h = affine(rng)
    loss = h.sum()
    dot = Dot(viz.draw(loss))
    assert dot.nodes[dot.find("root")]["lines"] == ["root", "() float32"]
    loss.name = "loss"
    dot = Dot(viz.draw(loss))
    assert dot.nodes[dot.find("loss")]["lines"] == ["loss", "() float32"]
    assert not dot.find_all("root")


def test_only_results_that_nothing_uses_get_the_root_style(rng):
    x, W, b, h = affine(rng)
    loss = h.sum()
    loss.name = "loss"
    dot = Dot(viz.draw([loss, h, W]))               # h feeds loss; W is a leaf
    look = {name: (dot.nodes[dot.find(name)]["fillcolor"],
                   dot.nodes[dot.find(name)].get("peripheries")) for name in ("loss", "h", "W")}
    assert look["loss"][1] == "2"                   # double border: the result
    assert look["h"][1] is None and look["W"][1] is None
    assert look["h"] == (dot.nodes[dot.find("(3, 2) float32")]["fillcolor"], None)  # x @ W
    assert look["W"] == (dot.nodes[dot.find("x")]["fillcolor"], None)              # a leaf
    assert dot.nodes[dot.find("h")]["tooltip"].startswith("intermediate")


def test_the_hard_lookups_query_and_keys_sit_in_its_box_marked_no_gradient(rng):
    import nn
    q, k, v = (leaf(rng.standard_normal(shape), name) for shape, name in
               (((1, 1, 3), "q"), ((1, 4, 3), "k"), ((1, 4, 2), "v")))
    context, weights = nn.HardAttention("nearest")(q, k, v)
    loss = context.sum()
    loss.backward()
    dot = Dot(viz.draw(loss, color_by_grad=True))
    for name in ("q", "k"):
        assert no_gradient_marks(dot, name) == (True, True)
        assert dot.nodes[dot.find(name)]["clusters"] == ("HardAttention",)
    assert dot.nodes[dot.find("v")]["lines"][-1].startswith("grad norm")
    assert q.grad is None and k.grad is None


def test_node_kinds_are_styled_differently(rng):
    w = leaf(rng.standard_normal(3), "w")                        # parameter
    c = leaf(rng.standard_normal(3), "c", requires_grad=False)   # constant
    mid = w * c
    mid.name = "mid"                                              # intermediate
    y = mid.sum()
    y.name = "y"                                                  # root
    dot = Dot(viz.draw(y))
    looks = {name: tuple(dot.nodes[dot.find(name)].get(k) for k in
                         ("shape", "style", "fillcolor", "color", "peripheries"))
             for name in ("w", "c", "mid", "y")}
    assert len(set(looks.values())) == 4, looks
    assert dot.nodes[dot.find("Sum")]["shape"] not in {v[0] for v in looks.values()}


def test_values_are_shown_when_asked_and_small(rng):
    small = leaf([1.5, -2.25], "small")
    big = leaf(np.arange(40.0) - 7.0, "big")
    y = (small.sum() + big.sum()) * 3.0
    dot = Dot(viz.draw(y, show_values=True, max_value_elements=4))
    assert "1.5" in dot.nodes[dot.find("small")]["label"]
    assert "-2.25" in dot.nodes[dot.find("small")]["label"]
    assert "[-7, 32]" in dot.nodes[dot.find("big")]["label"]        # range of arange(40) - 7
    plain = Dot(viz.draw(y))
    assert "1.5" not in plain.nodes[plain.find("small")]["label"]
    # a Python number in an expression is a single-element constant: its value always shows
    mul = plain.find("Mul")
    heads = {h for _, h, _ in plain.edges}
    constants = [t for t, h, _ in plain.edges if h == mul and t not in heads]   # leaves into Mul
    assert [plain.nodes[t]["lines"] for t in constants] == [["() float64", "3"]]


def test_names_with_quotes_colons_angle_brackets_and_backslashes_survive():
    names = ['say "hi"', "enc:layer<0>", "<b>", "back\\slash", "two\\nchars", 'end\\']
    tensors = [leaf([1.0], n) for n in names]
    y = tensors[0]
    for t in tensors[1:]:
        y = y + t
    picture = viz.draw(y)
    dot = Dot(picture)
    for n in names:
        dot.find(n)                                 # the label reads back exactly
    assert "label=<" not in picture.source          # never taken for an HTML label


@needs_dot
def test_escaped_names_render_literally_in_svg():
    names = ['say "hi"', "enc:layer<0>", "<b>", "back\\slash", "two\\nchars"]
    tensors = [leaf([1.0], n) for n in names]
    y = tensors[0]
    for t in tensors[1:]:
        y = y * t
    svg = viz.draw(y).pipe(format="svg")
    texts = {e.text for e in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")}
    assert set(names) <= texts


# -- gradients --------------------------------------------------------------------------------

def test_grad_norm_appears_after_backward_and_matches_numpy(rng):
    x_np, W_np = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    x, W = leaf(x_np, "x"), leaf(W_np, "W")
    hidden = (x @ W).tanh()
    hidden.name = "hidden"
    hidden.retain_grad()
    loss = hidden.sum()
    before = Dot(viz.draw(loss))
    assert not any("grad" in a["label"] for a in before.nodes.values())
    loss.backward()                                 # frees the graph; drawing still works
    after = Dot(viz.draw(loss))
    # L = Σ tanh(xW): ∂L/∂(xW) = 1 − tanh², ∂L/∂W = xᵀ(1 − tanh²), ∂L/∂x = (1 − tanh²)Wᵀ
    d_pre = 1 - np.tanh(x_np @ W_np) ** 2
    expected = {"W": np.linalg.norm(x_np.T @ d_pre), "x": np.linalg.norm(d_pre @ W_np.T),
                "hidden": np.linalg.norm(np.ones((3, 2)))}
    for name, norm in expected.items():
        line = after.nodes[after.find(name)]["lines"][-1]
        assert line.startswith("grad norm ")
        assert float(line.split()[-1]) == pytest.approx(norm, rel=5e-3)
    # the intermediate x @ W did not retain its gradient: nothing is claimed about it
    assert "grad" not in after.nodes[after.find("(3, 2) float64")]["label"]


def hard_and_soft_attention(rng, hard: bool):
    """out = weights @ v with weights = one_hot(argmax(q kᵀ)) (hard) or softmax(q kᵀ)."""
    q = leaf(rng.standard_normal((2, 3)), "q")
    k = leaf(rng.standard_normal((4, 3)), "k")
    v = leaf(rng.standard_normal((4, 3)), "v")
    scores = q @ k.T
    scores.name = "scores"
    weights = mg.one_hot(mg.argmax(scores, axis=-1), 4) if hard else mg.softmax(scores)
    loss = (weights @ v).sum()
    return q, k, v, scores, loss


def no_gradient_marks(dot: Dot, name: str) -> tuple[bool, bool]:
    """(node says "no gradient", every edge touching it is dashed)."""
    node = dot.find(name)
    edges = [a for t, h, a in dot.edges if node in (t, h)]
    return "no gradient" in dot.nodes[node]["label"], all(a.get("style") == "dashed"
                                                          for a in edges)


def test_color_by_grad_marks_queries_and_keys_behind_a_hard_lookup(rng):
    q, k, v, scores, loss = hard_and_soft_attention(rng, hard=True)
    loss.backward()
    # argmax records no graph, so q and k are not below the loss: draw both roots
    dot = Dot(viz.draw([loss, scores], color_by_grad=True))
    assert no_gradient_marks(dot, "q") == (True, True)
    assert no_gradient_marks(dot, "k") == (True, True)
    assert no_gradient_marks(dot, "v") == (False, False)
    assert dot.nodes[dot.find("q")]["fillcolor"] != dot.nodes[dot.find("v")]["fillcolor"]
    # ∂L/∂v = weightsᵀ 1 with weights the one-hot rows of argmax(q kᵀ)
    q_np, k_np = q.numpy(), k.numpy()
    weights = np.eye(4)[np.argmax(q_np @ k_np.T, axis=-1)]
    norm = np.linalg.norm(weights.T @ np.ones((2, 3)))
    assert float(dot.nodes[dot.find("v")]["lines"][-1].split()[-1]) == pytest.approx(norm,
                                                                                      rel=5e-3)


def test_color_by_grad_marks_nothing_on_the_soft_path(rng):
    q, k, v, scores, loss = hard_and_soft_attention(rng, hard=False)
    loss.backward()
    dot = Dot(viz.draw(loss, color_by_grad=True))
    for name in ("q", "k", "v"):
        assert no_gradient_marks(dot, name)[0] is False
    assert not any(a.get("style") == "dashed" for _, _, a in dot.edges)
    assert not any("no gradient" in a["lines"] for a in dot.nodes.values())


def test_compute_grads_colours_intermediates_without_backward_or_retain_grad(rng):
    q, k, v, scores, loss = hard_and_soft_attention(rng, hard=True)
    dot = Dot(viz.draw([loss, scores], color_by_grad=True, compute_grads=True))
    assert "no gradient" in dot.nodes[dot.find("scores")]["label"]      # cut by argmax
    assert no_gradient_marks(dot, "q")[0] and no_gradient_marks(dot, "k")[0]
    assert "grad norm" in dot.nodes[dot.find("v")]["label"]
    assert q.grad is None and v.grad is None                            # .grad untouched
    loss.backward()                                                     # graph still usable


def test_an_exactly_zero_gradient_counts_as_none():
    dead = leaf([-1.0, -2.0], "dead")          # relu is flat here: ∂L/∂dead = 0
    live = leaf([1.0, 2.0], "live")
    loss = dead.relu().sum() + live.sum()
    loss.backward()
    dot = Dot(viz.draw(loss, color_by_grad=True))
    assert dot.nodes[dot.find("dead")]["lines"][-1] == "no gradient (grad = 0)"
    assert no_gradient_marks(dot, "dead")[1]
    assert dot.nodes[dot.find("live")]["lines"][-1].startswith("grad norm")


def luminance(colour: str) -> float:
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_larger_gradients_are_drawn_darker():
    small, large = leaf([1.0, 1.0], "small"), leaf([1.0, 1.0], "large")
    loss = (small * 1e-3).sum() + (large * 1e3).sum()   # gradient norms √2·10⁻³ and √2·10³
    loss.backward()
    dot = Dot(viz.draw(loss, color_by_grad=True))
    fill = {n: dot.nodes[dot.find(n)]["fillcolor"] for n in ("small", "large")}
    assert luminance(fill["large"]) < luminance(fill["small"])
    edge = {n: next(a for t, _, a in dot.edges if t == dot.find(n)) for n in fill}
    assert float(edge["large"]["penwidth"]) > float(edge["small"]["penwidth"])


def gradient_of_norms(norms: list) -> tuple[list, "mg.Tensor"]:
    """Leaves g0, g1, ... and a loss Σ_i c_i Σ leaf_i whose gradients have norms `norms`
    (leaf i holds 4 ones, so ∂L/∂leaf_i = c_i·1 with norm 2 c_i)."""
    leaves = [leaf(np.ones(4), f"g{i}") for i in range(len(norms))]
    loss = sum(((norm / 2.0) * t).sum() for norm, t in zip(norms, leaves))
    loss.backward()
    return leaves, loss


def test_gradient_colours_are_linear_from_zero_not_stretched_between_min_and_max():
    # 0.389 and 0.479 are 81 % and 100 % of the largest norm: both dark, not light and dark;
    # 0.004 and 0.02 are both under 1/8 of it: the same lightest shade, however far apart
    # their logarithms are
    norms = [0.004, 0.02, 0.389, 0.479]
    _, loss = gradient_of_norms(norms)
    dot = Dot(viz.draw(loss, color_by_grad=True))
    fill = [dot.nodes[dot.find(f"g{i}")]["fillcolor"] for i in range(4)]
    assert fill[0] == fill[1]
    assert luminance(fill[3]) < luminance(fill[2]) < luminance(fill[1])
    shades = viz._RAMP
    # the ramp's 8 shades cover [k/8, (k+1)/8) of the largest norm each
    assert [shades.index(f) for f in fill] == [int(8 * n / 0.479) if n < 0.479 else 7
                                               for n in norms] == [0, 0, 6, 7]
    # and an edge's width grows in proportion to its tensor's norm
    width = [float(next(a for t, _, a in dot.edges if t == dot.find(f"g{i}"))["penwidth"])
             for i in range(4)]
    np.testing.assert_allclose(np.diff(width) / np.diff(norms), (width[3] - width[0]) /
                               (norms[3] - norms[0]), rtol=0.05)


def test_the_gradient_legend_shows_the_scale_from_zero_to_the_largest_norm():
    _, loss = gradient_of_norms([0.389, 0.479])
    source = viz.draw(loss, color_by_grad=True).source
    legend = next(line for line in source.splitlines() if line.strip().startswith("legend "))
    assert "label=<<TABLE" in legend                # an HTML-like label, written unquoted
    cells = re.findall(r"<TD([^>]*)>(.*?)</TD>", legend)
    texts = [text for _, text in cells]
    assert "0" in texts and "0.479" in texts and f"{0.479 / 2:.3g}" in texts
    assert sum('BGCOLOR="#' in attrs and text == "" for attrs, text in cells) == 8
    assert any("no gradient" in text for text in texts)


@needs_dot
def test_the_legend_renders(tmp_path):
    _, loss = gradient_of_norms([0.389, 0.479])
    svg = viz.draw(loss, color_by_grad=True).pipe(format="svg")
    texts = {e.text for e in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")}
    assert {"0", "0.479", "gradient norm, linear scale from 0"} <= texts


def test_color_by_grad_before_any_backward_warns_and_claims_nothing(rng):
    x, W, b, h = affine(rng)
    with pytest.warns(UserWarning, match="no tensor in the graph has a gradient"):
        dot = Dot(viz.draw(h.sum(), color_by_grad=True))
    assert not any("gradient" in a["label"] for a in dot.nodes.values())


def test_compute_grads_needs_a_scalar_root_and_an_unfreed_graph(rng):
    x, W, b, h = affine(rng)
    with pytest.raises(ValueError, match="single-element"):
        viz.draw(h, compute_grads=True)
    loss = h.sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="freed"):
        viz.draw(loss, compute_grads=True)


# -- scopes -----------------------------------------------------------------------------------

def encoder(rng):
    """Two layers h ← tanh(h W_i + b_i) in scopes encoder.layer0 / encoder.layer1, then a head."""
    x = leaf(rng.standard_normal((2, 3)), "x", requires_grad=False)
    params = [(leaf(rng.standard_normal((3, 3)), f"W{i}"), leaf(rng.standard_normal(3), f"b{i}"))
              for i in range(2)]
    h = x
    with mg.name_scope("encoder"):
        for i, (W, b) in enumerate(params):
            with mg.name_scope(f"layer{i}"):
                h = (h @ W + b).tanh()
                h.name = f"h{i}"
    with mg.name_scope("head"):
        loss = h.sum()
    return params, loss


def test_scopes_become_nested_labelled_clusters(rng):
    params, loss = encoder(rng)
    dot = Dot(viz.draw(loss))
    assert set(dot.clusters) == {("encoder",), ("encoder", "encoder.layer0"),
                                 ("encoder", "encoder.layer1"), ("head",)}
    matmuls = sorted(dot.nodes[i]["clusters"] for i in dot.find_all("MatMul"))
    assert matmuls == [("encoder", "encoder.layer0"), ("encoder", "encoder.layer1")]
    # a parameter sits in the scope that uses it; the constant input is used in layer0 only
    assert dot.nodes[dot.find("W1")]["clusters"] == ("encoder", "encoder.layer1")
    assert dot.nodes[dot.find("x")]["clusters"] == ("encoder", "encoder.layer0")
    assert dot.nodes[dot.find("Sum")]["clusters"] == ("head",)
    flat = viz.draw(loss, group_scopes=False)
    assert "subgraph" not in flat.source and len(Dot(flat).nodes) == len(dot.nodes)


def test_collapse_folds_a_scope_into_one_box(rng):
    params, loss = encoder(rng)
    full = Dot(viz.draw(loss))
    dot = Dot(viz.draw(loss, collapse=["encoder.layer0"]))
    box = dot.find("encoder.layer0")
    # layer0 held MatMul, Add, Tanh and the parameters W0 (3×3) and b0 (3)
    assert dot.nodes[box]["lines"][1:] == ["3 ops", "2 parameters (12 values)"]
    assert dot.nodes[box]["shape"] not in {dot.nodes[dot.find("Sum")]["shape"], "box"}
    for hidden in ("W0", "b0"):
        assert not dot.find_all(hidden)
    assert len(dot.find_all("MatMul")) == 1                     # only layer1's is left
    assert len(dot.nodes) == len(full.nodes) - 7 + 1            # 3 ops, 4 tensors -> 1 box
    assert dot.named_edges().count(("x", "encoder.layer0")) == 1
    assert ("encoder.layer0", "h0") in dot.named_edges()        # h0 is used by layer1
    assert not [e for e in dot.named_edges() if e[1] == "encoder.layer0" and e[0] != "x"]
    assert dot.nodes[box]["clusters"] == ("encoder",)


def test_collapse_by_depth(rng):
    params, loss = encoder(rng)
    layers = Dot(viz.draw(loss, collapse=2))
    assert {layers.nodes[i]["lines"][0] for i in layers.find_all("encoder.layer0") +
            layers.find_all("encoder.layer1")} == {"encoder.layer0", "encoder.layer1"}
    assert not layers.find_all("MatMul")
    top = Dot(viz.draw(loss, collapse=1))
    assert top.nodes[top.find("encoder")]["lines"][1:] == ["6 ops", "4 parameters (24 values)"]
    assert top.nodes[top.find("head")]["lines"][1] == "1 op"
    assert top.named_edges() == sorted([("x", "encoder"), ("encoder", "h1"), ("h1", "head"),
                                        ("head", "root")])


def test_collapse_rejects_unknown_scopes_and_bad_depths(rng):
    params, loss = encoder(rng)
    with pytest.raises(ValueError, match="collapse.*'encodr'.*encoder.layer0"):
        viz.draw(loss, collapse=["encodr"])
    with pytest.raises(ValueError, match="collapse depth"):
        viz.draw(loss, collapse=0)
    with pytest.raises(TypeError, match="collapse"):
        viz.draw(loss, collapse="encoder")


def test_bad_arguments_raise_clear_errors():
    x = leaf([1.0], "x")
    with pytest.raises(ValueError, match="rankdir"):
        viz.draw(x, rankdir="XY")
    with pytest.raises(TypeError, match="draw: expected a Tensor"):
        viz.draw(np.ones(3))
    with pytest.raises(TypeError, match="draw: expected a Tensor"):
        viz.draw([])
    assert 'rankdir="LR"' in viz.draw(x * 2, rankdir="LR").source or \
        "rankdir=LR" in viz.draw(x * 2, rankdir="LR").source


def test_works_on_a_device_that_refuses_implicit_numpy(sim_device):
    x = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True, device=sim_device)
    x.name = "x"
    loss = (x * x).sum()
    loss.backward()
    dot = Dot(viz.draw(loss, show_values=True, color_by_grad=True))
    lines = dot.nodes[dot.find("x")]["lines"]
    assert lines[1] == "(2, 3) float64 sim"
    # ∂Σx²/∂x = 2x
    assert float(lines[-1].split()[-1]) == pytest.approx(np.linalg.norm(2 * np.arange(6.0)),
                                                         rel=5e-3)


# -- deep graphs ------------------------------------------------------------------------------

def test_a_chain_20000_operations_deep_draws_without_recursion():
    x = leaf([1.0, 2.0], "x")
    y = x
    depth = 20_000                                   # far beyond Python's recursion limit
    for _ in range(depth):
        y = -y
    y.sum().backward()
    dot = viz.draw(y, color_by_grad=True)
    body = "".join(dot.body)
    assert body.count("[label=\"Neg\"") == depth
    assert body.count(" -> ") == 2 * depth
    assert body.count("grad norm") == 1              # only x keeps its gradient


# -- rendering --------------------------------------------------------------------------------

@needs_dot
def test_renders_svg_and_png(rng, tmp_path):
    x, W, b, h = affine(rng)
    written = viz.draw(h).render(tmp_path / "graph", format="svg")
    text = open(written, encoding="utf-8").read()
    assert text.startswith("<?xml") or "<svg" in text
    assert ">MatMul<" in text
    png = viz.render(h, tmp_path / "graph.png")
    with open(png, "rb") as file:
        assert file.read(8) == b"\x89PNG\r\n\x1a\n"
    assert sorted(os.listdir(tmp_path)) == ["graph", "graph.png", "graph.svg"]
    assert "<svg" in viz.draw(h)._repr_mimebundle_()["image/svg+xml"]


def test_render_to_dot_text_needs_no_graphviz(rng, tmp_path, monkeypatch):
    x, W, b, h = affine(rng)
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    path = viz.render(h, tmp_path / "graph.gv", rankdir="LR")
    assert open(path, encoding="utf-8").read() == viz.draw(h, rankdir="LR").source
    assert viz.save(h, tmp_path / "again.dot") == str(tmp_path / "again.dot")


def test_missing_dot_fails_early_with_install_hints(rng, tmp_path, monkeypatch):
    x, W, b, h = affine(rng)
    picture = viz.draw(h)
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    out = tmp_path / "out"
    out.mkdir()
    for attempt in (lambda: picture.render(out / "graph", format="svg"),
                    lambda: picture.pipe(format="png"),
                    lambda: viz.render(h, out / "graph.svg")):
        with pytest.raises(RuntimeError, match="apt-get install graphviz") as error:
            attempt()
        assert isinstance(error.value, graphviz.ExecutableNotFound)
        assert "brew install graphviz" in str(error.value)
        assert "conda install graphviz" in str(error.value)
    assert os.listdir(out) == []                        # failed before writing anything
    assert "MatMul" in picture.source
    saved = picture.save(out / "graph.gv")
    assert open(saved, encoding="utf-8").read() == picture.source
    assert "apt-get install graphviz" in picture._repr_mimebundle_()["text/plain"]


@needs_dot
def test_a_failed_render_leaves_no_partial_file(rng, tmp_path, monkeypatch):
    x, W, b, h = affine(rng)
    target = tmp_path / "graph.svg"
    target.write_text("old picture")
    broken = viz.draw(h)
    broken.body.append("\tthis is { not DOT\n")
    with pytest.raises(graphviz.CalledProcessError):
        viz.render(broken, target)
    assert os.listdir(tmp_path) == ["graph.svg"] and target.read_text() == "old picture"

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        viz.render(h, target)
    assert os.listdir(tmp_path) == ["graph.svg"] and target.read_text() == "old picture"
    monkeypatch.undo()
    viz.render(h, target)
    assert "<svg" in target.read_text()


def test_render_needs_a_format(rng, tmp_path):
    x, W, b, h = affine(rng)
    with pytest.raises(ValueError, match="format"):
        viz.render(h, tmp_path / "graph")
    with pytest.raises(TypeError, match="draw options"):
        viz.render(viz.draw(h), tmp_path / "graph.gv", rankdir="LR")
