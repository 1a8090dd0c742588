"""Draw the autodiff graphs that minigrad records, with `minigrad.viz.draw`.

Three pictures, each written as SVG and PNG:

    gru_step         one nn.GRUCell step, h' = GRUCell(x_t, h_{t−1}): the two input
                     projections, the split into the r, z, n gates, and the blend
                     h' = (1 − z) ⊙ n + z ⊙ h
    multihead        one nn.MultiHeadAttention call (self-attention, 2 heads): the q/k/v
                     projections, the head split, scaled dot-product attention, the merge and
                     the output projection, each module in its own labelled box
    soft_vs_hard     the same lookup done with soft attention (softmax of q·k) and with hard
                     attention (one-hot of the best key), after backward, coloured by gradient
                     norm on a scale from 0: in the hard lookup the query and the keys get
                     no gradient at all, only the values do (claim C18, see examples/README.md)

Tensor nodes show names, shapes and dtypes; operations are named after their Function class.
Nothing is trained, so this runs in seconds; --quick is accepted like in every example
and changes nothing.

Run (from the repository root):

    python3 examples/render_graph.py
    python3 examples/render_graph.py --out runs/graphs --rankdir LR

Outputs in --out (default runs/graphs): gru_step.dot/.svg/.png, multihead.dot/.svg/.png,
soft_vs_hard.dot/.svg/.png, and metrics.json with the node counts of each picture. The .dot
files (Graphviz's text format) are always written; the SVG and PNG need Graphviz's `dot`
program. Without it the script writes the .dot files, prints the commands that render them
once Graphviz is installed, and succeeds.
"""

from __future__ import annotations

# _common first: it sets the BLAS thread count before NumPy loads
from _common import base_parser, parse_args, prepare_run, print_outputs, write_metrics

import shutil
from pathlib import Path

import minigrad as mg
import nn


def _name_parameters(module: nn.Module, prefix: str = "") -> None:
    """Label each parameter's node with its attribute path (e.g. q_proj.weight)."""
    for name, parameter in module.named_parameters():
        parameter.name = prefix + name


def gru_step_graph(input_size: int = 3, hidden_size: int = 4):
    """One GRUCell step; returns h' (B, H) with its recorded graph."""
    cell = nn.GRUCell(input_size, hidden_size)
    _name_parameters(cell)
    x = mg.randn(2, input_size)
    x.name = "x_t"
    h = mg.randn(2, hidden_size)
    h.name = "h_{t-1}"
    h_next = cell(x, h)
    h_next.name = "h_t"
    return h_next


def multihead_graph(embed_dim: int = 8, num_heads: int = 2, length: int = 3):
    """Self-attention of a (1, L, E) sequence with nn.MultiHeadAttention. Returns the picture's
    roots: the output, and the attention weights, which the output does not pass through (the
    fused AttendValues differentiates softmax(q kᵀ/√d) v straight to q, k and v), so they are
    drawn as their own branch from q and k."""
    attention = nn.MultiHeadAttention(embed_dim, num_heads)
    _name_parameters(attention)
    x = mg.randn(1, length, embed_dim)
    x.name = "x"
    out, weights = attention(x, x, x)
    out.name = "attention output"
    weights.name = "attention weights"
    return [out, weights]


def soft_vs_hard_graph(length: int = 4, dim: int = 3):
    """The same lookup with soft and with hard attention, each followed by a squared-error
    loss and backward. Returns the picture's roots: the two losses, and the soft lookup's
    weights, which its loss does not pass through (the fused AttendValues differentiates
    softmax(q kᵀ/√d) v straight to q, k and v). The hard lookup's weights lie on its loss's
    path, made from q and k by a recorded choice that hands them no gradient."""
    target = mg.randn(1, 1, dim)
    target.name = "target"
    data = {"query": mg.randn(1, 1, dim), "keys": mg.randn(1, length, dim),
            "values": mg.randn(1, length, dim)}
    roots = []
    for kind, layer in (("soft", nn.DotProductAttention()),
                        ("hard", nn.HardAttention("nearest"))):
        with mg.name_scope(f"{kind} attention"):
            q, k, v = (mg.tensor(t.data, requires_grad=True) for t in data.values())
            for tensor, name in zip((q, k, v), data):
                tensor.name = f"{name} ({kind})"
            context, weights = layer(q, k, v)
            context.name, weights.name = f"context ({kind})", f"weights ({kind})"
            loss = ((context - target) ** 2).sum()
            loss.name = f"loss ({kind})"
        loss.backward()
        roots.append(loss)
        if kind == "soft":
            roots.append(weights)
    return roots


RENDERED_FORMATS = ("svg", "png")


def write_picture(picture, path: Path, can_render: bool) -> list[Path]:
    """Write `picture` as <path>.dot, and as <path>.svg and <path>.png when Graphviz's `dot`
    program is there to lay it out (each file atomically, via minigrad.viz)."""
    written = [Path(mg.viz.save(picture, path.with_suffix(".dot")))]
    if can_render:
        for suffix in RENDERED_FORMATS:
            written.append(Path(mg.viz.render(picture, path.with_suffix(f".{suffix}"))))
    return written


def render_commands(paths: list[Path]) -> list[str]:
    """The shell commands that turn the .dot files into the pictures this script makes."""
    return [f"dot -T{fmt} {path} -o {path.with_suffix('.' + fmt)}"
            for path in paths for fmt in RENDERED_FORMATS]


def main(argv: list[str] | None = None) -> dict:
    parser = base_parser(__doc__, default_out="runs/graphs")
    parser.add_argument("--rankdir", choices=("TB", "LR"), default="TB",
                        help="layout direction: top to bottom (default) or left to right")
    args = parse_args(parser, argv)
    out = prepare_run(args)
    pictures = {
        "gru_step": mg.viz.draw(gru_step_graph(), show_shapes=True, rankdir=args.rankdir),
        "multihead": mg.viz.draw(multihead_graph(), show_shapes=True, rankdir=args.rankdir),
        "soft_vs_hard": mg.viz.draw(soft_vs_hard_graph(), show_shapes=True, color_by_grad=True,
                                    rankdir=args.rankdir),
    }
    can_render = shutil.which("dot") is not None
    metrics = {"rendered": can_render}
    for name, picture in pictures.items():
        write_picture(picture, out / name, can_render)
        source = picture.source
        metrics[name] = {"nodes": source.count("label="), "edges": source.count("->"),
                         "dot_chars": len(source)}
    write_metrics(out, metrics, args)
    for name in pictures:
        print(f"{name}: {metrics[name]['nodes']} labelled nodes, {metrics[name]['edges']} edges")
    if not can_render:
        print("Graphviz's `dot` program is not on PATH, so only the DOT text was written. "
              "Install Graphviz (Debian/Ubuntu: sudo apt-get install graphviz; macOS: brew "
              "install graphviz) and render the pictures with:")
        for command in render_commands([out / f"{name}.dot" for name in pictures]):
            print("  " + command)
    print_outputs(out)
    return metrics


if __name__ == "__main__":
    main()
