"""The tables (and the one code block) that make_docs.py writes into the pages, and the number
formats that the pages' placeholders name.

Each `table_<name>(results)` returns the Markdown of the region `<!-- make_docs: <name> -->`;
`results` is {run name: the record in examples/results/<run>.json}. Words live in the pages.
"""

from __future__ import annotations

import math
import statistics

NBSP = "\u00a0"          # no-break space: "99.2 %" is never split by wrapping
THIN = "\u202f"          # narrow no-break space, between groups of digits
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


# -- formats -------------------------------------------------------------------------------------

def pct(x: float, digits: int = 1) -> str:
    """0.9915 -> "99.2 %"."""
    return f"{100 * x:.{digits}f}{NBSP}%"


def grouped(n: int) -> str:
    """1210427 -> "1 210 427"."""
    return f"{n:,}".replace(",", THIN)


def duration(seconds: float) -> str:
    """0.4 -> "< 1 s", 58 -> "58 s", 214 -> "3.6 min"."""
    if seconds < 1:
        return "< 1 s"
    return f"{seconds:.0f} s" if seconds < 100 else f"{seconds / 60:.1f} min"


def sci(x: float, digits: int = 1) -> str:
    """4.3e-09 -> "4·10⁻⁹" (`digits` significant digits); 0 -> "0"."""
    if x == 0:
        return "0"
    exponent = math.floor(math.log10(abs(x)))
    mantissa = round(x / 10 ** exponent, digits - 1)
    if abs(mantissa) >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    text = f"{mantissa:.{digits - 1}f}"
    power = "10" + str(exponent).translate(SUPERSCRIPT)
    return power if text == "1" else f"{text}·{power}"


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table; a "|" inside a cell is escaped."""
    def line(cells):
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"
    return "\n".join([line(header), "|" + "---|" * len(header)] + [line(r) for r in rows])


def metrics(results: dict, run: str) -> dict:
    return results[run]["metrics"]


# -- translate.py, bottleneck.py -----------------------------------------------------------------

def table_translate(results: dict) -> str:
    rows = []
    for attention in ("additive", "dot", "general", "location", "none"):
        record = results[f"translate-{attention}"]
        m = record["metrics"]
        rows.append([f"`{attention}`", grouped(m["n_parameters"]), pct(m["greedy_exact_match"]),
                     pct(m["greedy_token_accuracy"], 2), pct(m["beam_exact_match"]),
                     duration(m["train_seconds"]), duration(record["process_wall_seconds"])])
    beam = metrics(results, "translate-additive")["config"]["beam"]
    return table(["`--attention`", "parameters", "exact match, greedy", "token accuracy, greedy",
                  f"exact match, beam {beam}", "training", "whole run"], rows)


def table_bottleneck(results: dict) -> str:
    runs = metrics(results, "bottleneck")["runs"]
    columns = [("none-h32", False), ("additive-h32", False), ("none-h128", True),
               ("none-h128", False), ("additive-h128", False)]

    def cell(run: dict, length: str | None, equal: bool) -> float:
        if equal:                              # after as many epochs as the attentive models
            entry = run["at_equal_epochs"]
            return entry["exact_match"] if length is None else entry["by_length"][length]
        return run["exact_match"] if length is None else run["by_length"][length]["exact_match"]
    header = ["source words (sentences)"] + [
        f"{runs[name]['attention']}, H = {runs[name]['hidden_size']}, "
        f"{runs[name]['at_equal_epochs']['epochs'] if equal else runs[name]['epochs']} epochs"
        for name, equal in columns]
    lengths = runs["none-h32"]["by_length"]
    rows = [[f"{n} ({lengths[n]['count']})"] + [pct(cell(runs[name], n, equal))
                                                for name, equal in columns]
            for n in sorted(lengths, key=int)]
    rows.append([f"all ({grouped(runs['none-h32']['n_test'])})"] +
                [f"**{pct(cell(runs[name], None, equal))}**" for name, equal in columns])
    return table(header, rows)


# -- soft_vs_hard.py, gru_to_attention.py, worked_examples.py ------------------------------------

def table_soft_vs_hard(results: dict) -> str:
    s = metrics(results, "soft_vs_hard")
    names = {"soft": "softmax (`nn.DotProductAttention`)", "nearest": '`HardAttention("nearest")`',
             "exact": '`HardAttention("exact")`'}
    rows = []
    for mode, name in names.items():
        f, h = s["final"][mode], s["history"][mode]
        if not any(h["grad_query"] + h["grad_key"]):
            query_key = "0, 0 at every step"
        else:
            smallest = min(h["grad_query"] + h["grad_key"])
            query_key = (f"{statistics.median(h['grad_query']):.3f}, "
                         f"{statistics.median(h['grad_key']):.3f} " +
                         (f"(never 0; smallest {sci(smallest)})" if smallest > 0 else
                          "(0 at some steps)"))
        value = (f"{statistics.median(h['grad_value']):.3f}" if any(h["grad_value"])
                 else "0 at every step")
        rows.append([name, f"{f['first_loss']:.3f} → {f['loss']:.3f}", pct(f["accuracy"]),
                     query_key, value])
    return table(["lookup", "loss, first step → mean of the last 20",
                  "retrieval accuracy (last 20 steps)",
                  "‖∂L/∂W_q‖, ‖∂L/∂W_k‖ (median over steps)", "‖∂L/∂W_v‖ (median)"], rows)


GRU_ROWS = {"gru": "GRU",
            "gru-softmax": "GRU candidates h̃_i, softmax weights α_i ∝ exp(ATT(h̃_i, x_t)) (causal)",
            "free-cand": "f(x_i) as key, query and value (causal)",
            "qkv": "separate Q/K/V, 1 head (causal)", "multi-head": "{heads} heads (causal)",
            "non-causal": "{heads} heads, all positions (non-causal)",
            "+ position": "+ sinusoidal positional encoding",
            "+ ffn": "+ feed-forward, residuals, LayerNorm = `nn.TransformerEncoderLayer`"}


def table_gru_to_attention(results: dict) -> str:
    g = metrics(results, "gru_to_attention")
    heads = g["run"]["arguments"]["heads"]
    rows = [[label.format(heads=heads), f"{g['variants'][k]['test_loss']:.3f}",
             pct(g["variants"][k]["test_accuracy"]), grouped(g["variants"][k]["parameters"])]
            for k, label in GRU_ROWS.items()]
    return table(["step of the derivation", "held-out loss (nats)", "accuracy", "parameters"],
                 rows)


WORKED_ROWS = (
    ("C3", "qK^T = cos(60° − angle)", "keys at 0°, 45°, 90°, query at 60° (001): qKᵀ"),
    ("C3", "softmax(qK^T)", "… and its weights (001)"),
    ("C16", "weights softmax([3,8,8,7])", "decoder step, scores [3, 8, 8, 7] (003)"),
    ("C16", "context A1 = Σ α_i h_i", "its context vector (003)"),
    ("C16", "timestep 2: softmax([2,9,6,1])", "softmax([2, 9, 6, 1]) (003)"),
    ("C16", "timestep 3: softmax([1,2,10,3])", "softmax([1, 2, 10, 3]) (003)"),
    ("C16", "token 2: softmax([5,2,9])", "softmax([5, 2, 9]) (003)"),
    ("C17", "single head: weights", "\"I love pizza\", one head: weights (003)"),
    ("C17", "single head: output", "… its output (003)"),
    ("C17", "head 1: weights", "two heads: head 1 weights (003)"),
    ("C17", "concat [a1; a2]", "two heads, concatenated output (003)"),
)


def table_worked_examples(results: dict) -> str:
    w = metrics(results, "worked_examples")["results"]
    rows = []
    for claim, key, label in WORKED_ROWS:
        entry = w[claim][key]
        digits = 4 if max(abs(x) for x in entry["exact"]) <= 1 else 3
        rows.append([label, "[" + ", ".join(f"{v:g}" for v in entry["text"]) + "]",
                     "[" + ", ".join(f"{v:.{digits}f}" for v in entry["exact"]) + "]",
                     entry["verdict"]])
    c1 = w["C1"]
    rows.append(["GRU unrolled, Σ_i Π_{j=1..t−i+1} u_j Π_{k<i}(1 − u_k) h̃_i (000)",
                 "equals the recurrence", f"off by {c1['max_error_text_form']:.2f} (exact form: "
                 f"{sci(c1['max_error_exact_form'])})", c1["verdict"]])
    return table(["example (text)", "the text says", "exact", "verdict"], rows)


# -- tiny_gpt.py, the run list -------------------------------------------------------------------

def table_tiny_gpt_sample(results: dict) -> str:
    """Not a table: the first lines of the recorded sample, as a code block."""
    samples = metrics(results, "tiny_gpt").get("samples", {})
    prompt = "class " if "class " in samples else next(iter(samples), None)
    if prompt is None:
        return "(no sample recorded)"
    return "\n".join("    " + line for line in samples[prompt].splitlines()[:8])


def table_runs(results: dict) -> str:
    from make_docs import RUNS
    rows = [[f"`{run.name}`", f"`{' '.join(run.command())}`",
             ", ".join(f"`{name}`" for name in run.figures.values()) or "—",
             duration(results[run.name]["process_wall_seconds"]) if run.name in results
             else "not run"] for run in RUNS]
    return table(["run", "command", "figures", "time"], rows)
