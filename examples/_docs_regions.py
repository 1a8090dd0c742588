"""What the docs say about each example run, rendered from the committed results.

Each `region_<name>` function returns the Markdown of one marked region of a README (see
make_docs.py), built from `results`: {run name: the record in examples/results/<run>.json}. The
words around the numbers are written here; the numbers come only from the records.
"""

from __future__ import annotations

import math
import statistics

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


# -- formatting ----------------------------------------------------------------------------------

NBSP = "\u00a0"          # no-break space: "99.2 %" and "1 210 427" are never split by wrapping
THIN = "\u202f"          # narrow no-break space, between groups of digits


def pct(x: float, digits: int = 1) -> str:
    """0.9915 -> "99.2 %"."""
    return f"{100 * x:.{digits}f}{NBSP}%"


def fixed(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}f}"


def sci(x: float, digits: int = 1) -> str:
    """4.3e-09 -> "4·10⁻⁹" (one significant digit by default); 0 -> "0"."""
    if x == 0:
        return "0"
    exponent = math.floor(math.log10(abs(x)))
    mantissa = round(x / 10 ** exponent, digits - 1)
    if abs(mantissa) >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    text = f"{mantissa:.{digits - 1}f}" if digits > 1 else f"{mantissa:.0f}"
    power = "10" + str(exponent).translate(SUPERSCRIPT)
    return power if text == "1" else f"{text}·{power}"


def sup(n: int) -> str:
    """16 -> "¹⁶"."""
    return str(n).translate(SUPERSCRIPT)


def grouped(n: int) -> str:
    """1210427 -> "1 210 427" (narrow no-break spaces between groups of three digits)."""
    return f"{n:,}".replace(",", THIN)


def duration(seconds: float) -> str:
    """0.4 -> "< 1 s", 58 -> "58 s", 214 -> "3.6 min"."""
    if seconds < 1:
        return "< 1 s"
    if seconds < 100:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min"


def metrics(results: dict, run: str) -> dict:
    return results[run]["metrics"]


def wall(results: dict, run: str) -> float:
    return results[run]["process_wall_seconds"]


def arguments(results: dict, run: str) -> dict:
    return metrics(results, run)["run"]["arguments"]


def table(header: list[str], rows: list[list[str]], align: list[str] | None = None) -> str:
    """A Markdown table; a "|" inside a cell is escaped so that it does not split the cell."""
    def line(cells):
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
    align = align or ["---"] * len(header)
    return "\n".join([line(header), "|" + "|".join(align) + "|"] + [line(r) for r in rows])


def duration_range(values: list[float]) -> str:
    """[41, 66] -> "41–66 s"; durations of different units are written out."""
    low, high = duration(min(values)), duration(max(values))
    if low.endswith(" s") and high.endswith(" s") and "<" not in low:
        return f"{low[:-2]}–{high}"
    return f"{low} – {high}"


# -- the machine ---------------------------------------------------------------------------------

def region_machine(results: dict) -> str:
    records = list(results.values())
    first = records[0]["machine"]
    loads = [x for r in records for x in (r["load_average_before"][0],
                                          r["load_average_after"][0]) if x is not None]
    commits = sorted({r["commit"][:10] for r in records})
    dirty = any(r["uncommitted_changes"] for r in records)
    return (f"The numbers and times below are those of the runs recorded in "
            f"[`results/`](results) (one JSON file per run: its `metrics.json`, command, seed, "
            f"commit, machine and wall time), on {first['logical_cpus']} logical CPUs "
            f"({first['cpu']}, {first['system'].split('-with-')[0]}), Python "
            f"{first['python']}, NumPy {first['numpy']} with {first['blas']} on "
            f"{first['blas_threads']} thread, shared with other jobs: the one-minute load "
            f"average was {min(loads):.1f}–{max(loads):.1f} during the runs, which ran at "
            f"nice {records[0]['niceness']}, so the times are upper bounds. Code: commit "
            f"{', '.join(commits)}" + (" with uncommitted changes" if dirty else "") + ". "
            f"`_common.py` sets one BLAS thread (`OPENBLAS_NUM_THREADS=1` unless the "
            f"environment says otherwise): with several threads, small matrix products slow "
            f"down up to tenfold on a busy machine.")


# -- the overview table --------------------------------------------------------------------------

TRANSLATE_RUNS = ("additive", "dot", "general", "location", "none")


def _translate(results: dict, attention: str) -> dict:
    return metrics(results, f"translate-{attention}")


def _overview_rows(results: dict) -> list[list[str]]:
    rows = []
    t = {a: _translate(results, a) for a in TRANSLATE_RUNS}
    attentive = [a for a in TRANSLATE_RUNS if a != "none"]
    by_score = {}
    for a in attentive:
        by_score.setdefault(pct(t[a]["greedy_exact_match"]), []).append(a)
    scores = ", ".join(f"{score} ({', '.join(names)})" for score, names in by_score.items())
    others = [wall(results, f"translate-{a}") for a in TRANSLATE_RUNS if a != "additive"]
    rows.append(["[`translate.py`](translate.py)", "C12, C13, C14",
                 "GRU encoder–decoder translation of an invented SVO language into an SOV one, "
                 "with `--attention none / dot / general / additive / location`; greedy and "
                 "beam-search decoding; attention heat-maps",
                 f"{duration(wall(results, 'translate-additive'))} (additive), "
                 f"{duration_range(others)} (others)",
                 f"held-out exact match {scores}, {pct(t['none']['greedy_exact_match'])} "
                 f"without attention"])
    b = metrics(results, "bottleneck")["runs"]
    longest = max(b["none-h32"]["by_length"], key=int)
    rows.append(["[`bottleneck.py`](bottleneck.py)", "C12",
                 "the same model with and without attention, H = 32 and 128: held-out exact "
                 "match against source length", duration(wall(results, "bottleneck")),
                 f"at {longest} words: {pct(b['none-h32']['by_length'][longest]['exact_match'])} "
                 f"(H = 32) and {pct(b['none-h128']['by_length'][longest]['exact_match'])} "
                 f"(H = 128, {b['none-h128']['epochs']} epochs) without attention, "
                 f"{pct(b['additive-h32']['by_length'][longest]['exact_match'])} (H = 32) and "
                 f"{pct(b['additive-h128']['by_length'][longest]['exact_match'])} (H = 128) with "
                 f"attention ({b['additive-h128']['epochs']} epochs)"])
    rows.append(["[`render_graph.py`](render_graph.py)", "C6, C18",
                 "compute graphs of a GRU step, a multi-head attention call, and soft vs hard "
                 "attention coloured by gradient, as DOT text and (with Graphviz's `dot`) SVG "
                 "and PNG; without `dot` it prints the commands that render the DOT files",
                 duration(wall(results, "render_graph")), "—"])
    s = metrics(results, "soft_vs_hard")
    f = s["final"]
    zero_steps = all(v == 0 for mode in ("nearest", "exact")
                     for key in ("grad_query", "grad_key") for v in s["history"][mode][key])
    rows.append(["[`soft_vs_hard.py`](soft_vs_hard.py)", "C18",
                 "key–value retrieval through learned query/key/value projections, with "
                 "softmax, `HardAttention(\"nearest\")` and `HardAttention(\"exact\")`: learning "
                 "curves, accuracy, and the gradient norms reaching W_q, W_k, W_v every step "
                 "(printed and plotted)",
                 f"{duration(wall(results, 'soft_vs_hard'))} ({s['steps']} steps)",
                 f"soft: loss {f['soft']['first_loss']:.2f} → {f['soft']['loss']:.3f}, retrieval "
                 f"accuracy {pct(f['soft']['accuracy'])}; nearest and exact: ‖∂L/∂W_q‖ = "
                 f"‖∂L/∂W_k‖ = 0 at {'all' if zero_steps else 'not all'} {s['steps']} steps, "
                 f"accuracy {pct(f['nearest']['accuracy'])} / {pct(f['exact']['accuracy'])} "
                 f"(chance {pct(s['chance_accuracy'])})"])
    g = metrics(results, "gru_to_attention")
    v = g["variants"]
    content_only = [v[k]["test_loss"] for k in ("free-cand", "qkv", "multi-head", "non-causal")]
    rows.append(["[`gru_to_attention.py`](gru_to_attention.py)", "C1, C2",
                 "the progression GRU → softmax weights over GRU candidates → f(x_i) candidates "
                 "→ separate Q/K/V → multi-head → non-causal → + positional encoding → + FFN (a "
                 "Transformer layer), each trained on one long-range recall task; a trained "
                 "GRU's implicit weights Π z_j (1 − z_i) next to causal attention's",
                 f"{duration(wall(results, 'gru_to_attention'))} ({len(v)} × "
                 f"{g['task']['steps']} steps)",
                 f"held-out loss (nats): GRU {fixed(v['gru']['test_loss'])}, Transformer layer "
                 f"{fixed(v['+ ffn']['test_loss'])}; content-only attention "
                 f"{min(content_only):.2f}–{max(content_only):.2f} vs an order-blind floor of "
                 f"{fixed(g['task']['order_blind_loss'])}"])
    w = metrics(results, "worked_examples")
    rows.append(["[`worked_examples.py`](worked_examples.py)", "C3, C16, C17, C1",
                 "every worked number of the texts beside the exact value minigrad computes, "
                 "with a verdict (rounded / truncated / carried / wrong)",
                 duration(wall(results, "worked_examples")),
                 f"{w['num_wrong']} numbers wrong beyond rounding, {len(w['carried'])} more off "
                 f"only because computed from those, {len(w['truncated'])} truncated"])
    p = metrics(results, "positional_encoding")
    r = p["rotation_max_error"]
    formula = max(c["formula_float64"] for c in r.values())
    module32 = max(c["module_float32"] for c in r.values())
    a = p["add_vs_concat"]
    rows.append(["[`positional_encoding.py`](positional_encoding.py)", "C8, C9, C20",
                 "the sinusoidal grid (bases 10⁴ and 10⁵); PE(t + φ) = R(φ) PE(t) checked for "
                 f"t < {arguments(results, 'positional_encoding')['check_length']}, |φ| ≤ "
                 f"{arguments(results, 'positional_encoding')['max_shift']}; one attention layer "
                 f"learning y_t = x_{{t−{p['task']['delay']}}} with the encoding added or "
                 "concatenated", duration(wall(results, "positional_encoding")),
                 f"max rotation error {sci(formula, 2)} (float64 formula), {sci(module32)} (nn "
                 f"module's float32 table); held-out accuracy {pct(a['add']['test_accuracy'])} "
                 f"(add) and {pct(a['concat']['test_accuracy'])} (concat), training loss < 0.1 "
                 f"after {a['add']['steps_to_loss_0.1']} / {a['concat']['steps_to_loss_0.1']} "
                 f"steps"])
    c = metrics(results, "scaling")
    sat, cost = c["saturation"], c["cost"]
    rows.append(["[`scaling.py`](scaling.py)", "C4, C15",
                 "softmax saturation and ‖∂L/∂scores‖ against d, with and without 1/√d; "
                 "forward + backward time and peak memory of a GRU layer and a self-attention "
                 f"layer for L = {cost['lengths'][0]} … {cost['lengths'][-1]}"
                 + ("; training with and without 1/√d, watched by `nn.Diagnostics`"
                    if "training" in c else ""),
                 duration(wall(results, "scaling")),
                 f"d = {sat['dims'][-1]}: ‖∂L/∂s‖ {sci(sat['unscaled']['grad_scores_norm'][-1])} "
                 f"unscaled vs {sat['scaled']['grad_scores_norm'][-1]:.2f} scaled; fitted slopes: "
                 f"attention time L^{cost['attention']['time_slope']:.2f}, memory "
                 f"L^{cost['attention']['memory_slope']:.2f}; GRU time "
                 f"L^{cost['gru']['time_slope']:.2f}, memory L^{cost['gru']['memory_slope']:.2f}"])
    tg = metrics(results, "tiny_gpt")
    cfg = tg["config"]
    rows.append(["[`tiny_gpt.py`](tiny_gpt.py)", "C21",
                 f"a decoder-only character-level Transformer (`nn.TransformerLM`, "
                 f"{cfg['layers']} pre-LN layers, d = {cfg['d_model']}, "
                 f"{round(tg['parameters'] / 1000)} k parameters) trained on "
                 f"{len(tg['corpus']['files'])} of Python's own standard-library modules "
                 f"({tg['corpus']['characters'] / 1e6:.1f} M characters); samples, checkpoint, "
                 f"`--resume`, `--time-budget`", duration(wall(results, "tiny_gpt")),
                 f"validation {fixed(tg['final_val_loss_nats_per_char'])} nats/char "
                 f"({tg['final_val_bits_per_char']:.2f} bits) after {grouped(tg['steps'])} "
                 f"steps"])
    return rows


def region_overview(results: dict) -> str:
    return table(["script", "claims", "what it shows", "default run", "measured"],
                 _overview_rows(results))


# -- translate.py --------------------------------------------------------------------------------

def region_translate_table(results: dict) -> str:
    rows = []
    for a in TRANSLATE_RUNS:
        m = _translate(results, a)
        rows.append([f"`{a}`", grouped(m["n_parameters"]), pct(m["greedy_exact_match"]),
                     pct(m["greedy_token_accuracy"], 2), pct(m["beam_exact_match"]),
                     duration(m["train_seconds"]), duration(wall(results, f"translate-{a}"))])
    m = _translate(results, "additive")
    lead = (f"Held-out results of the default runs (`--seed {m['run']['seed']}`, "
            f"{grouped(m['config']['n_test'])} sentences never seen in training; the numbers "
            f"are reproducible on one machine, the times are those of one run):\n\n")
    return lead + table(["`--attention`", "parameters", "exact match, greedy",
                         "token accuracy, greedy", f"exact match, beam {m['config']['beam']}",
                         "training", "whole run"], rows)


def _steps_to(curve: dict, level: float) -> tuple[int, float] | None:
    for step, value in zip(curve["step"], curve["exact_match"]):
        if value >= level:
            return step, value
    return None


def region_translate_training(results: dict) -> str:
    t = {a: _translate(results, a) for a in TRANSLATE_RUNS}
    first = [m["first_loss"] for m in t.values()]
    attentive = [t[a]["final_loss"] for a in TRANSLATE_RUNS if a != "none"]
    vocab_note = "ln 58 ≈ 4.06: a uniform guess over the 58 output classes"
    reached = []
    for a in TRANSLATE_RUNS:
        if a == "none":
            continue
        hit = _steps_to(t[a]["curve"], 0.95)
        reached.append(f"{hit[0]} steps with `{a}` ({pct(hit[1])})" if hit else
                       f"never with `{a}`")
    n_curve = t["additive"]["config"]["n_test"]
    b = metrics(results, "bottleneck")["runs"]["none-h128"]
    longest = max(b["by_length"], key=int)
    return (f"The training loss falls from {min(first):.2f}–{max(first):.2f} ({vocab_note}) to "
            f"{_short(min(attentive))}–{_short(max(attentive))} with attention and to "
            f"{t['none']['final_loss']:.2f} without (mean of the last 20 batches). On 200 "
            f"held-out sentences, exact match passes 95 % after " + ", ".join(reached) + ". "
            f"Without attention the same {t['none']['epochs']} epochs reach "
            f"{pct(t['none']['greedy_exact_match'])}; trained for {b['epochs']} epochs instead "
            f"it reaches {pct(b['exact_match'])} overall, but still only "
            f"{pct(b['by_length'][longest]['exact_match'])} on {longest}-word sentences (see "
            f"`bottleneck.py`).")


def _short(x: float) -> str:
    """A small positive number to two significant digits: 0.00071 -> "0.0007"."""
    return f"{x:.2g}" if x >= 0.001 else f"{x:.1g}"


# -- bottleneck.py -------------------------------------------------------------------------------

BOTTLENECK_COLUMNS = (("none-h32", None), ("additive-h32", None), ("none-h128", "equal"),
                      ("none-h128", None), ("additive-h128", None))


def _bottleneck_cell(run: dict, length: str | None, equal: bool) -> float:
    if equal:
        entry = run["at_equal_epochs"]
        return entry["exact_match"] if length is None else entry["by_length"][length]
    return run["exact_match"] if length is None else run["by_length"][length]["exact_match"]


def region_bottleneck_table(results: dict) -> str:
    runs = metrics(results, "bottleneck")["runs"]
    header = ["source words (sentences)"]
    for name, mode in BOTTLENECK_COLUMNS:
        run = runs[name]
        epochs = run["at_equal_epochs"]["epochs"] if mode == "equal" else run["epochs"]
        header.append(f"{run['attention']}, H = {run['hidden_size']}, {epochs} epochs")
    lengths = sorted(runs["none-h32"]["by_length"], key=int)
    rows = []
    for n in lengths:
        count = runs["none-h32"]["by_length"][n]["count"]
        rows.append([f"{n} ({count})"] + [pct(_bottleneck_cell(runs[name], n, mode == "equal"))
                                         for name, mode in BOTTLENECK_COLUMNS])
    total = runs["none-h32"]["n_test"]
    rows.append([f"all ({grouped(total)})"] +
                [f"**{pct(_bottleneck_cell(runs[name], None, mode == 'equal'))}**"
                 for name, mode in BOTTLENECK_COLUMNS])
    return table(header, rows)


def region_bottleneck_summary(results: dict) -> str:
    runs = metrics(results, "bottleneck")["runs"]
    small, large = runs["none-h32"], runs["none-h128"]
    lengths = sorted(small["by_length"], key=int)
    longest = lengths[-1]

    def solved(run, level=0.95):
        return [n for n in lengths if run["by_length"][n]["exact_match"] >= level]
    small_ok, large_ok = solved(small, 0.5), solved(large)
    tail = [n for n in lengths if n not in large_ok]
    attentive_all = all(runs[f"additive-h{h}"]["by_length"][n]["exact_match"] == 1.0
                        for h in (32, 128) for n in lengths)
    return (f"Without attention, quality falls with sentence length, and where it falls "
            f"depends on the size of the vector: with H = 32 only "
            f"{_span(small_ok)}-word sentences come through at least half the time "
            f"({pct(small['by_length'][longest]['token_accuracy'])} of the words are right at "
            f"{longest} words), with H = 128 every length up to {_span(large_ok).split('–')[-1]} "
            f"words reaches 95 %, then "
            + " → ".join(pct(large["by_length"][n]["exact_match"]) for n in tail)
            + f" exact match at {', '.join(tail)} words even after {large['epochs']} epochs "
            f"({pct(large['at_equal_epochs']['exact_match'])} overall and "
            f"{pct(large['at_equal_epochs']['by_length'][longest])} at {longest} words after "
            f"{large['at_equal_epochs']['epochs']}). With attention the decoder reads every "
            f"encoder state, and both sizes "
            + ("translate every held-out sentence of every length"
               if attentive_all else "translate nearly every held-out sentence")
            + f" after {runs['additive-h32']['epochs']} epochs: the small state is no longer "
            f"the bottleneck.")


def _span(lengths: list[str]) -> str:
    if not lengths:
        return "no"
    return lengths[0] if len(lengths) == 1 else f"{lengths[0]}–{lengths[-1]}"


# -- soft_vs_hard.py -----------------------------------------------------------------------------

def region_soft_vs_hard_setup(results: dict) -> str:
    a = arguments(results, "soft_vs_hard")
    return (f"Each example holds {a['num_keys']} random keys x_i ∈ ℝ{sup(a['dim'])} with random "
            f"values v_i ∈ ℝ{sup(a['value_dim'])}; the query is a hidden fixed rotation of one key "
            f"plus noise (std {a['noise']}), so identity projections cannot find it. The model "
            f"`output = Σ_i α_i W_v v_i` with `q = W_q x_q`, `k_i = W_k x_i` must return the "
            f"matching value (MSE per coordinate; returning 0 costs 1). The same model is "
            f"trained three times on the same batches (Adam, lr {a['lr']:g}, batch "
            f"{a['batch']}, {a['steps']} steps), once per lookup:")


def _median_nonzero_text(values: list[float]) -> str:
    if all(v == 0 for v in values):
        return "0 at every step"
    median = statistics.median(values)
    return f"{median:.3f}"


def region_soft_vs_hard_table(results: dict) -> str:
    s = metrics(results, "soft_vs_hard")
    names = {"soft": "softmax (`nn.DotProductAttention`)", "nearest": '`HardAttention("nearest")`',
             "exact": '`HardAttention("exact")`'}
    rows = []
    for mode in ("soft", "nearest", "exact"):
        f, h = s["final"][mode], s["history"][mode]
        if all(v == 0 for v in h["grad_query"] + h["grad_key"]):
            qk = "0, 0 at every step"
        else:
            smallest = min(min(h["grad_query"]), min(h["grad_key"]))
            qk = (f"{statistics.median(h['grad_query']):.3f}, "
                  f"{statistics.median(h['grad_key']):.3f} "
                  + (f"(never 0; smallest {sci(smallest)})" if smallest > 0 else
                     "(0 at some steps)"))
        rows.append([names[mode], f"{f['first_loss']:.3f} → {f['loss']:.3f}",
                     pct(f["accuracy"]), qk, _median_nonzero_text(h["grad_value"])])
    return table(["lookup", "loss, first step → mean of the last 20", "retrieval accuracy "
                  "(last 20 steps)", "‖∂L/∂W_q‖, ‖∂L/∂W_k‖ (median over steps)",
                  "‖∂L/∂W_v‖ (median)"], rows)


# -- gru_to_attention.py -------------------------------------------------------------------------

GRU_ROWS = (("gru", "GRU"),
            ("gru-softmax", "GRU candidates h̃_i, softmax weights α_i ∝ exp(ATT(h̃_i, x_t)) "
                            "(causal)"),
            ("free-cand", "f(x_i) as key, query and value (causal)"),
            ("qkv", "separate Q/K/V, 1 head (causal)"),
            ("multi-head", "{heads} heads (causal)"),
            ("non-causal", "{heads} heads, all positions (non-causal)"),
            ("+ position", "+ sinusoidal positional encoding"),
            ("+ ffn", "+ feed-forward, residuals, LayerNorm = `nn.TransformerEncoderLayer`"))


def region_gru_to_attention_setup(results: dict) -> str:
    g = metrics(results, "gru_to_attention")
    a, task = arguments(results, "gru_to_attention"), g["task"]
    return (f"One task for every step of the derivation: {task['pairs']} (key, value) tokens "
            f"with {task['keys']} keys and {task['values']} values (keys repeat), then "
            f"{task['queries']} queries \"?k\" asking for the value *most recently* stored "
            f"under k, up to {task['length'] - 1} positions back. Each model: embedding "
            f"(E = {a['dim']}) → the step's sequence mixer → linear readout; Adam (lr "
            f"{a['lr']:g}), batch {a['batch']}, {grouped(task['steps'])} steps, gradient norm "
            f"clipped at 1; loss on the query positions of {a['test_size']} held-out "
            f"sequences. Chance is ln {task['values']} = {fixed(task['chance_loss'])} nats; a "
            f"model that knows which values were stored under the key but not their order can "
            f"at best reach {fixed(task['order_blind_loss'])}.")


def region_gru_to_attention_table(results: dict) -> str:
    g = metrics(results, "gru_to_attention")
    heads = arguments(results, "gru_to_attention")["heads"]
    rows = [[label.format(heads=heads), fixed(g["variants"][k]["test_loss"]),
             pct(g["variants"][k]["test_accuracy"]), grouped(g["variants"][k]["parameters"])]
            for k, label in GRU_ROWS]
    return table(["step of the derivation", "held-out loss (nats)", "accuracy", "parameters"],
                 rows)


def region_gru_to_attention_summary(results: dict) -> str:
    g = metrics(results, "gru_to_attention")
    v, floor = g["variants"], g["task"]["order_blind_loss"]
    content_only = ("free-cand", "qkv", "multi-head", "non-causal")
    above = all(v[k]["test_loss"] > floor for k in content_only)
    gru_candidates_below = v["gru-softmax"]["test_loss"] < floor
    positional_below = v["+ position"]["test_loss"] < floor and v["+ ffn"]["test_loss"] < floor
    sentences = [("Attention without positions stays above the order-blind floor: it finds the "
                  "asked key at any distance but cannot tell which of its values came last."
                  if above else "Attention without positions comes close to the order-blind "
                  "floor (some runs dip below it by chance).")]
    if gru_candidates_below:
        sentences.append("The GRU-candidate variant sits below the floor because its "
                         "candidates carry order")
    if positional_below:
        sentences[-1] += (", and positional encodings take attention below it."
                          if gru_candidates_below else
                          "Positional encodings take attention below the floor.")
    elif gru_candidates_below:
        sentences[-1] += "."
    return " ".join(sentences)


# -- worked_examples.py --------------------------------------------------------------------------

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


def _vector(values: list[float], digits: int) -> str:
    return "[" + ", ".join(f"{v:.{digits}f}" for v in values) + "]"


def _text_vector(values: list[float]) -> str:
    return "[" + ", ".join(f"{v:g}" for v in values) + "]"


def region_worked_examples_table(results: dict) -> str:
    w = metrics(results, "worked_examples")["results"]
    rows = []
    for claim, key, label in WORKED_ROWS:
        entry = w[claim][key]
        digits = 4 if max(abs(x) for x in entry["exact"]) <= 1 else 3
        rows.append([label, _text_vector(entry["text"]), _vector(entry["exact"], digits),
                     entry["verdict"]])
    c1 = w["C1"]
    rows.append(["GRU unrolled, Σ_i Π_{j=1..t−i+1} u_j Π_{k<i}(1 − u_k) h̃_i (000)",
                 "equals the recurrence",
                 f"off by {c1['max_error_text_form']:.2f} (exact form: "
                 f"{sci(c1['max_error_exact_form'])})", c1["verdict"]])
    return table(["example (text)", "the text says", "exact", "verdict"], rows)


# -- positional_encoding.py ----------------------------------------------------------------------

def region_positional_rotation(results: dict) -> str:
    p = metrics(results, "positional_encoding")
    a = arguments(results, "positional_encoding")
    r = p["rotation_max_error"]
    formula = max(c["formula_float64"] for c in r.values())
    module32 = max(c["module_float32"] for c in r.values())
    table32 = max(c.get("module_vs_formula_float32", c["module_vs_formula_float64"])
                  for c in r.values())
    return (f"Shifting the position is a rotation of each (sin, cos) pair by φω_i, the same for "
            f"every t. With R(φ) built block by block, max |PE(t + φ) − R(φ) PE(t)| over t < "
            f"{a['check_length']}, |φ| ≤ {a['max_shift']}, D = {a['grid_dim']} is "
            f"{sci(formula, 2)} for the formula in float64 and {sci(module32)} for "
            f"`nn.SinusoidalPositionalEncoding`'s float32 table, for base 10⁴ and 10⁵ alike "
            f"(the module's float64 table matches the formula to {sci(table32)}). Hence "
            f"PE(s)·PE(t) depends on t − s only (`pe_similarity.png` in the output folder).")


def region_positional_add_concat(results: dict) -> str:
    p = metrics(results, "positional_encoding")
    task, res = p["task"], p["add_vs_concat"]
    add, concat = res["add"], res["concat"]
    if add["steps_to_loss_0.1"] is not None and concat["steps_to_loss_0.1"] is not None:
        faster = "concatenated" if concat["steps_to_loss_0.1"] < add["steps_to_loss_0.1"] \
            else "added"
        speed = (f"the {faster} version gets its training loss below 0.1 sooner "
                 f"({concat['steps_to_loss_0.1']} steps concatenated, "
                 f"{add['steps_to_loss_0.1']} added)")
    else:
        speed = "not both get their training loss below 0.1"
    return (f"Added or concatenated: one attention layer (width {task['width']}, one head, no "
            f"residual) learns y_t = x_{{t−{task['delay']}}} over {task['vocab']} tokens, which "
            f"only position can solve. Adding the encoding to a {task['width']}-wide embedding "
            f"reaches {pct(add['test_accuracy'])} held-out accuracy and concatenating it to a "
            f"{task['width'] // 2}-wide one {pct(concat['test_accuracy'])}; {speed}.")


# -- scaling.py ----------------------------------------------------------------------------------

def region_scaling_saturation(results: dict) -> str:
    c = metrics(results, "scaling")
    sat = c["saturation"]
    dims, u, s = sat["dims"], sat["unscaled"], sat["scaled"]
    small = [g for d, g in zip(dims, u["grad_scores_norm"]) if d <= 16]
    return (f"Random q, k ~ N(0, I_d), {sat['num_keys']} keys, {sat['trials']} trials per d. "
            f"Unscaled scores have standard deviation √d ({u['score_std'][-1]:.1f} at d = "
            f"{dims[-1]}), the largest softmax weight goes to {u['max_weight'][-1]:.2f} and the "
            f"gradient reaching the scores falls from {min(small):.2f}–{max(small):.2f} "
            f"(d ≤ 16) to {sci(u['grad_scores_norm'][-1])}; divided by √d the scores keep std "
            f"{min(s['score_std']):.2f}–{max(s['score_std']):.2f} and the gradient stays at "
            f"{min(s['grad_scores_norm']):.2f}–{max(s['grad_scores_norm']):.2f} for every d "
            f"from {dims[0]} to {dims[-1]}.")


def region_scaling_cost(results: dict) -> str:
    cost = metrics(results, "scaling")["cost"]
    g, a, lengths = cost["gru"], cost["attention"], cost["lengths"]
    faster = [L for L, tg, ta in zip(lengths, g["seconds"], a["seconds"]) if ta < tg]
    crossover = max(faster) if faster else None
    return (f"One layer, forward + backward, B = {cost['batch']}, E = H = {cost['embed_dim']}, "
            f"{cost['heads']} heads, on the CPU; slopes fitted on log-log axes over the upper "
            f"half of the lengths. The GRU's time and memory grow linearly (slopes "
            f"{g['time_slope']:.2f} and {g['memory_slope']:.2f}); the self-attention layer's "
            f"time grows as L^{a['time_slope']:.2f} and its memory as L^{a['memory_slope']:.2f}: "
            f"the (B, heads, L, L) weights it returns are quadratic, but at L ≥ 512 it runs in "
            f"blocks of query rows, so the lengths fitted include lower-order terms. "
            + (f"Attention is faster up to L = {crossover} (all positions in a few large "
               f"matrix products, against L small sequential steps); "
               if crossover else "")
            + f"at L = {lengths[-1]} it takes {1e3 * a['seconds'][-1]:.0f} ms and "
            f"{a['mib'][-1]:.0f} MiB against the GRU's {1e3 * g['seconds'][-1]:.0f} ms and "
            f"{g['mib'][-1]:.1f} MiB. Times come from one run on a shared machine and move "
            f"between runs; the memory (traced NumPy buffers) does not.")


# -- tiny_gpt.py ---------------------------------------------------------------------------------

def region_tiny_gpt_setup(results: dict) -> str:
    t = metrics(results, "tiny_gpt")
    cfg, corpus = t["config"], t["corpus"]
    files = corpus["files"]
    python = results["tiny_gpt"]["machine"]["python"]
    return (f"The corpus is {len(files)} pure-Python standard-library modules in a fixed order "
            f"(`{files[0]}` … `{files[-1]}`, {grouped(corpus['characters'])} characters in "
            f"Python {python}; non-ASCII characters become `¤`, {corpus['vocabulary']} symbols "
            f"in all); the first 90 % trains, the last 10 % validates. `nn.TransformerLM` with "
            f"{cfg['layers']} pre-LN blocks, d_model {cfg['d_model']}, {cfg['heads']} heads, "
            f"feed-forward {cfg['ff']} (GELU, tanh form), learned positions, context "
            f"{cfg['context']} characters ({grouped(t['parameters'])} parameters); AdamW (lr "
            f"{cfg['lr']:g}, weight decay 0.01, warm-up, cosine decay over the steps), batch "
            f"{cfg['batch']}, gradient norm clipped at 1.")


def region_tiny_gpt_result(results: dict) -> str:
    t = metrics(results, "tiny_gpt")
    a = arguments(results, "tiny_gpt")
    return (f"Measured with `{results['tiny_gpt']['command']}`: {grouped(t['steps'])} steps "
            f"({t['characters_seen'] / 1e6:.1f} M characters seen) in "
            f"{duration(t['train_seconds_this_run'])} of training "
            f"({duration(wall(results, 'tiny_gpt'))} in all), validation loss "
            f"**{fixed(t['final_val_loss_nats_per_char'])} nats/char "
            f"({t['final_val_bits_per_char']:.2f} bits/char)** on {grouped(a['final_eval_windows'])} "
            f"fixed held-out windows, training loss "
            f"{t['final_train_loss_nats_per_char']:.2f} (uniform guessing: "
            f"{t['uniform_baseline_nats']:.2f}). With `--time-budget S` the run stops after S "
            f"seconds instead, and the schedule anneals over the budget: the result then "
            f"depends on the machine's speed.")


def region_tiny_gpt_sample(results: dict) -> str:
    t = metrics(results, "tiny_gpt")
    samples = t.get("samples", {})
    prompt = "class " if "class " in samples else next(iter(samples), None)
    if prompt is None:
        return "(no sample recorded)"
    a = arguments(results, "tiny_gpt")
    lines = samples[prompt].splitlines()[:8]
    return (f"A sample after training (prompt `{prompt}`, temperature {a['temperature']}), the "
            f"first lines:\n\n" + "\n".join("    " + line for line in lines))


# -- the root README ------------------------------------------------------------------------------

def region_root_quickstart(results: dict) -> str:
    m = _translate(results, "additive")
    return (f"Both work in a fresh virtual environment (`python3 -m venv .venv && . "
            f".venv/bin/activate`) with Python ≥ 3.10. The translation model trained in "
            f"{duration(m['train_seconds'])} to {pct(m['greedy_exact_match'])} exact match on "
            f"held-out sentences ({duration(wall(results, 'translate-additive'))} in all, on "
            f"{results['translate-additive']['machine']['logical_cpus']} shared cores; "
            f"[`examples/results/`](examples/results) records the machine).")


# -- the run list --------------------------------------------------------------------------------

def region_runs(results: dict) -> str:
    from make_docs import RUNS
    rows = []
    for run in RUNS:
        figures = ", ".join(f"`{name}`" for name in run.figures.values()) or "—"
        record = results.get(run.name)
        rows.append([f"`{run.name}`", f"`{' '.join(run.command())}`", figures,
                     duration(record["process_wall_seconds"]) if record else "not run"])
    return table(["run", "command", "figures", "time"], rows)


def render_region(name: str, results: dict) -> str:
    """The Markdown of region `name`."""
    function = globals().get("region_" + name.replace("-", "_"))
    if function is None:
        raise KeyError(f"make_docs: no renderer for region {name!r} (add region_"
                       f"{name.replace('-', '_')} to _docs_regions.py)")
    return function(results)


# -- set-ups of translate.py and bottleneck.py (their configuration, as the runs recorded it) ----

def region_translate_data(results: dict) -> str:
    c = _translate(results, "additive")["config"]
    return (f"Sentences have {c['min_len']}–{c['max_len']} source words; the grammar generates "
            f"them, the script draws {grouped(c['n_test'])} held-out and then "
            f"{grouped(c['n_train'])} distinct training sentences (never a held-out one).")


def region_translate_model(results: dict) -> str:
    m = _translate(results, "additive")
    c = m["config"]
    return (f"Model: word embeddings (E = {c['embed_dim']}), a GRU encoder and a GRU decoder "
            f"(H = {c['hidden_size']}); with `dot`, `general` (bilinear) or `additive` "
            f"attention the decoder state h_t attends over all encoder states and "
            f"`tanh(W_c [h_t; c_t])` feeds the output layer; `location` is the PyTorch seq2seq "
            f"tutorial's decoder (weights from `W_a [h_{{t−1}}; x̃_t]` over the L_max = "
            f"{c['max_len']} positions, claim C13); `none` only starts the decoder from the "
            f"encoder's last state. Batches of {c['batch_size']} are padded; padded source "
            f"positions are masked out of the attention and padded target positions are "
            f"ignored by the cross-entropy. Adam, lr {sci(c['lr'])} decayed by {c['lr_decay']} "
            f"per epoch, gradient norm clipped at {c['clip']:g}, {c['epochs']} epochs "
            f"({m['steps']} steps).")


def region_bottleneck_setup(results: dict) -> str:
    b = metrics(results, "bottleneck")
    sizes = " and ".join(str(h) for h in b["hidden_sizes"])
    return (f"The model of `translate.py` without attention and with {b['attention']} "
            f"attention, at H = {sizes} (the size of the one vector that has to carry the "
            f"sentence), on the same data and seed. The models without attention train for "
            f"{b['none_epochs']} epochs, the attentive ones for {b['epochs']}:")


def region_scaling_training(results: dict) -> str:
    c = metrics(results, "scaling")
    if "training" not in c:
        return "(not run)"
    t = c["training"]
    task, s = t["task"], t["summary"]
    scaled, unscaled = s["q·k/√d"], s["q·k"]
    return (f"And in training: one attention lookup (q = W_q x_q and k_i = W_k x_i of width "
            f"d = {task['dim']} from inputs of width {task['input_dim']}, {task['keys']} keys "
            f"in {task['groups']} groups) must return the mean value of the keys in the "
            f"query's group, so the right weights are soft. W_q and W_k start with "
            f"unit-variance components, as the 1/√d argument assumes, and the same model "
            f"trains twice on the same batches (SGD with momentum 0.9, lr {task['lr']:g}, "
            f"batch {task['batch']}, {task['steps']} steps), watched by `nn.Diagnostics` "
            f"through forward and tensor hooks, with no change to the model's code. With "
            f"1/√d the loss falls from {scaled['first_loss']:.2f} to "
            f"{scaled['final_loss']:.3f} and {pct(scaled['saturated_first'], 0)} → "
            f"{pct(scaled['saturated_last'], 0)} of the softmax rows are one-hot (largest "
            f"weight > 0.97); without it {pct(unscaled['saturated_first'], 0)} of the rows "
            f"are one-hot from the first step and {pct(unscaled['saturated_last'], 0)} at the "
            f"end, and the loss stalls at {unscaled['final_loss']:.2f} (from "
            f"{unscaled['first_loss']:.2f}): a one-hot row returns one value, not the "
            f"group's mean, and passes no gradient back to its scores. The scores are √d = "
            f"{math.sqrt(task['dim']):g} times larger, and through the rows that are not "
            f"saturated the gradients are larger too (‖∂L/∂W_q‖ = "
            f"{unscaled['q_weight_grad_norm_first']:.2f} against "
            f"{scaled['q_weight_grad_norm_first']:.2f} at the first step): W_q's median "
            f"update-to-data ratio is "
            f"{sci(unscaled['q_update_to_data_median'])} per step against "
            f"{sci(scaled['q_update_to_data_median'])} with 1/√d (about 10⁻³ is the usual "
            f"healthy value), so the steps overshoot instead of settling.")
