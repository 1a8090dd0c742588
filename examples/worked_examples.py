"""The source texts' worked numbers, recomputed exactly with minigrad (the texts and the
claims C1, C3, C16, C17: see examples/README.md).

Each worked example in the texts (cosine-like dot products of unit vectors, a decoder step over
four encoder states, "I love pizza" with one and with two heads, the GRU unrolled into a sum of
candidates) is recomputed here in float64 with minigrad's `softmax` and `matmul`, and printed next
to the value the text gives. A verdict says whether the text's number is the exact value rounded
to the digits it shows, the exact value truncated, or wrong (and by how much):

    C3   keys at 0°, 45°, 90° and a query at 60°: qKᵀ and softmax(qKᵀ)
    C16  decoder state s1 = [2, 1] against h1..h4: scores, weights, context; the other softmaxes
    C17  "I love pizza": single head with Q = K = V = embeddings, then two heads, concatenated
    C1   the GRU's additive update unrolled: the text's index form against the exact one

Run:
    python3 examples/worked_examples.py               # prints the tables, writes the JSON
    python3 examples/worked_examples.py --out runs/worked_examples
"""

from __future__ import annotations

# _common first: it sets the BLAS thread count before NumPy loads
from _common import base_parser, parse_args, prepare_run, print_outputs, write_metrics

import math

import numpy as np

import minigrad as mg

F64 = "float64"


# -- exact values with minigrad -----------------------------------------------------------------

def t64(values, device: str = "cpu") -> mg.Tensor:
    """A float64 minigrad tensor (the worked numbers deserve more than float32)."""
    return mg.tensor(np.asarray(values, dtype=np.float64), dtype=F64, device=device)


def attend(query, keys, values, device: str = "cpu") -> tuple[np.ndarray, np.ndarray,
                                                               np.ndarray]:
    """Unscaled dot-product attention of one query, as the texts compute it by hand.

        s = q Kᵀ,  α = softmax(s),  c = α V

    query (D,), keys (L, D), values (L, Dv) -> scores (L,), weights (L,), context (Dv,).
    """
    q, k, v = t64(query, device), t64(keys, device), t64(values, device)
    scores = mg.matmul(k, q)                      # (L,)
    weights = mg.softmax(scores, axis=-1)         # (L,)
    context = mg.matmul(weights, v)               # (Dv,)
    return scores.numpy(), weights.numpy(), context.numpy()


def softmax(scores, device: str = "cpu") -> np.ndarray:
    return mg.softmax(t64(scores, device), axis=-1).numpy()


# -- comparing a text's number with the exact one -----------------------------------------------

def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _is_rounded(text_values: list[str], reference: np.ndarray) -> bool:
    """True when each text value is `reference` rounded to the digits the text shows."""
    return all(abs(float(s) - r) <= 0.5 * 10.0 ** -_decimals(s) + 1e-12
               for s, r in zip(text_values, reference))


def judge(text_values: list[str], exact: np.ndarray, from_text=None) -> dict:
    """Compare numbers as the text prints them (strings, to keep their digits) with exact values.

    "rounded":   every text value is the exact value rounded to the digits shown
    "truncated": some are the exact value cut off (not rounded) at the digits shown
    "carried":   off, but only because the text computed them from its own inexact numbers
                 (`from_text`: the same formula applied to the text's earlier values)
    "wrong":     off by more than the last digit shown allows, for no such reason
    """
    exact = np.atleast_1d(np.asarray(exact, dtype=np.float64))
    shown = np.array([float(s) for s in text_values])
    verdicts = []
    for s, value, e in zip(text_values, shown, exact):
        unit = 10.0 ** -_decimals(s)
        if _is_rounded([s], [e]):
            verdicts.append("rounded")
        elif abs(value - math.trunc(e / unit) * unit) <= 1e-9:
            verdicts.append("truncated")
        else:
            verdicts.append("wrong")
    verdict = ("wrong" if "wrong" in verdicts else
               "truncated" if "truncated" in verdicts else "rounded")
    if verdict == "wrong" and from_text is not None and _is_rounded(text_values, from_text):
        verdict = "carried"
    return {"text": shown.tolist(), "exact": exact.tolist(), "verdict": verdict,
            "max_abs_error": float(np.max(np.abs(shown - exact)))}


def report(label: str, text_values: list[str], exact: np.ndarray, results: dict,
           from_text=None) -> None:
    """Print the text's numbers, the exact ones and the verdict (see `judge`); store them."""
    entry = judge(text_values, exact, from_text)
    results[label] = entry
    exact_str = ", ".join(f"{v:.4f}" for v in entry["exact"])
    error = entry["max_abs_error"]
    flag = {"rounded": "ok (rounded)",
            "truncated": "TRUNCATED, not rounded",
            "carried": f"off by up to {error:.3g}, carried from the text's inexact numbers",
            "wrong": f"WRONG (off by up to {error:.3g})"}[entry["verdict"]]
    print(f"  {label:<34} text [{', '.join(text_values)}]")
    print(f"  {'':<34} exact [{exact_str}]  -> {flag}")


# -- the worked examples ------------------------------------------------------------------------

def c3_angles(device: str) -> dict:
    """C3 (text 001): unit keys at 0°, 45°, 90°, unit query at 60°."""
    print("\nC3  dot-product similarity of unit vectors (text 001)")
    angles = np.deg2rad([0.0, 45.0, 90.0])
    keys = np.stack([np.cos(angles), np.sin(angles)], axis=1)        # (3, 2)
    query = np.array([np.cos(np.deg2rad(60.0)), np.sin(np.deg2rad(60.0))])
    scores, weights, _ = attend(query, keys, keys, device)
    results: dict = {}
    report("qK^T = cos(60° − angle)", ["0.5", "0.96", "0.86"], scores, results)
    report("softmax(qK^T)", ["0.24", "0.39", "0.35"], weights, results)
    print("  (the text cuts the digits off; the values it means are "
          f"[{', '.join(f'{w:.3f}' for w in weights)}])")
    return results


def c16_decoder_step(device: str) -> dict:
    """C16 (text 003): one decoder step of dot-product attention over four encoder states."""
    print("\nC16 decoder step over encoder states h1..h4 (text 003)")
    encoder = np.array([[1.0, 1.0], [3.0, 2.0], [2.0, 4.0], [1.0, 5.0]])     # (4, 2)
    s1 = np.array([2.0, 1.0])
    scores, weights, context = attend(s1, encoder, encoder, device)
    results: dict = {}
    report("scores s1·h_i", ["3", "8", "8", "7"], scores, results)
    report("weights softmax([3,8,8,7])", ["0.003", "0.45", "0.45", "0.097"], weights, results)
    # the text's context follows from its own (wrong) weights: [2.350, 3.188]
    carried = np.array([0.003, 0.45, 0.45, 0.097]) @ encoder
    report("context A1 = Σ α_i h_i", ["2.35", "3.19"], context, results, from_text=carried)
    report("[s1; c1]", ["2", "1", "2.35", "3.19"], np.concatenate([s1, context]), results,
           from_text=np.concatenate([s1, carried]))
    print("  (the weights are the error: exp(7)/exp(8) = 0.368, so p4 must be 0.368·p2 = 0.155, "
          "not 0.097, and p1..p4 then sum to 1 only with p2 = p3 = 0.421)")
    print("  the text's other softmaxes:")
    others = [("timestep 2: softmax([2,9,6,1])", [2, 9, 6, 1], ["0.001", "0.90", "0.09", "0.009"]),
              ("timestep 3: softmax([1,2,10,3])", [1, 2, 10, 3],
               ["0.001", "0.01", "0.97", "0.019"]),
              ("token 1: softmax([2,8,4])", [2, 8, 4], ["0.002", "0.98", "0.018"]),
              ("token 2: softmax([5,2,9])", [5, 2, 9], ["0.1", "0.02", "0.88"])]
    for label, scores_, text in others:
        report(label, text, softmax(scores_, device), results)
    return results


def c17_pizza(device: str) -> dict:
    """C17 (text 003): "I love pizza", the token "love" attending with one head and with two."""
    print('\nC17 "I love pizza", query = "love" (text 003)')
    embeddings = np.array([[1.0, 0.0], [2.0, 1.0], [0.0, 2.0]])    # I, love, pizza
    results: dict = {}
    # single head, Q = K = V = embeddings
    scores, weights, out = attend(embeddings[1], embeddings, embeddings, device)
    report("single head: scores", ["2", "5", "2"], scores, results)
    report("single head: weights", ["0.045", "0.91", "0.045"], weights, results)
    report("single head: output", ["1.87", "1.00"], out, results,
           from_text=np.array([0.045, 0.91, 0.045]) @ embeddings)
    # head 1: the text gives q and the scores; keys are the ones its products spell out
    q1 = np.array([1.0, 1.0])
    k1 = np.array([[1.0, 1.0], [1.0, 2.0], [0.0, 1.0]])
    v1 = np.array([[1.0, 0.0], [2.0, 1.0], [0.0, 1.0]])
    scores1, weights1, out1 = attend(q1, k1, v1, device)
    report("head 1: scores", ["2", "3", "1"], scores1, results)
    report("head 1: weights", ["0.24", "0.66", "0.10"], weights1, results)
    report("head 1: output a1", ["1.56", "0.76"], out1, results,
           from_text=np.array([0.24, 0.66, 0.10]) @ v1)
    q2 = np.array([1.0, 3.0])
    k2 = np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 3.0]])
    v2 = np.array([[1.0, 1.0], [2.0, 0.0], [5.0, 5.0]])
    scores2, weights2, out2 = attend(q2, k2, v2, device)
    report("head 2: scores", ["3", "4", "10"], scores2, results)
    report("head 2: weights", ["0.001", "0.002", "0.997"], weights2, results)
    report("head 2: output a2", ["4.99", "4.99"], out2, results,
           from_text=np.array([0.001, 0.002, 0.997]) @ v2)
    concat = mg.concat([t64(out1, device), t64(out2, device)], axis=0).numpy()
    report("concat [a1; a2]", ["1.56", "0.76", "4.99", "4.99"], concat, results,
           from_text=np.array([1.56, 0.76, 4.99, 4.99]))
    return results


def c1_gru_unrolled(device: str, steps: int = 8, seed: int = 0) -> dict:
    """C1 (text 000): h_t = u_t h_{t−1} + (1 − u_t) h̃_t with h_0 = 0, unrolled two ways.

        text:  h_t = Σ_i [Π_{j=1..t−i+1} u_j] [Π_{k=1..i−1} (1 − u_k)] h̃_i
        exact: h_t = Σ_i [Π_{j=i+1..t} u_j] (1 − u_i) h̃_i
    """
    print("\nC1  the GRU update unrolled into a weighted sum of candidates (text 000)")
    rng = np.random.default_rng(seed)
    u = t64(rng.uniform(0.05, 0.95, size=(steps, 4)), device)          # (T, H) update gates
    cand = t64(rng.standard_normal((steps, 4)), device)                  # (T, H) candidates h̃
    h = mg.zeros(4, dtype=F64, device=device)
    for t in range(steps):                                               # the recurrence
        h = u[t] * h + (1 - u[t]) * cand[t]

    def product(rows) -> mg.Tensor:
        out = mg.ones(4, dtype=F64, device=device)
        for r in rows:
            out = out * r
        return out

    T = steps
    exact = sum(product(u[j] for j in range(i + 1, T)) * (1 - u[i]) * cand[i] for i in range(T))
    text = sum(product(u[j] for j in range(0, T - i)) * product(1 - u[k] for k in range(0, i))
               * cand[i] for i in range(T))      # 0-based: Π_{j=1..t−i+1} u_j, Π_{k=1..i−1}
    err_exact = float(np.max(np.abs((exact - h).numpy())))
    err_text = float(np.max(np.abs((text - h).numpy())))
    print(f"  recurrence vs exact unrolled form:  max |difference| = {err_exact:.2e}")
    print(f"  recurrence vs the text's form:      max |difference| = {err_text:.2e}  -> "
          + ("WRONG" if err_text > 1e-6 else "ok"))
    print("  (weight of h̃_i in h_t is Π_{j=i+1..t} u_j · (1 − u_i): the gates after i keep it, "
          "its own gate lets it in)")
    return {"steps": steps, "max_error_exact_form": err_exact,
            "max_error_text_form": err_text,
            "verdict": "wrong" if err_text > 1e-6 else "rounded"}


def main(argv: list[str] | None = None) -> dict:
    parser = base_parser(__doc__, default_out="runs/worked_examples")
    args = parse_args(parser, argv)
    out = prepare_run(args)
    results = {"C3": c3_angles(args.device), "C16": c16_decoder_step(args.device),
               "C17": c17_pizza(args.device), "C1": c1_gru_unrolled(args.device, seed=args.seed)}
    verdicts: dict[str, list[str]] = {"wrong": [], "carried": [], "truncated": []}
    for claim, entries in results.items():
        if claim == "C1":
            continue
        for label, entry in entries.items():
            verdicts.get(entry["verdict"], []).append(f"{claim}: {label}")
    if results["C1"]["verdict"] == "wrong":
        verdicts["wrong"].append("C1: the text's unrolled index form")
    print(f"\nwrong beyond rounding ({len(verdicts['wrong'])}):")
    for line in verdicts["wrong"]:
        print(f"  {line}")
    print(f"off only because computed from the text's inexact numbers "
          f"({len(verdicts['carried'])}): {'; '.join(verdicts['carried'])}")
    print(f"truncated instead of rounded ({len(verdicts['truncated'])}): "
          f"{'; '.join(verdicts['truncated'])}")
    metrics = {"results": results, "wrong": verdicts["wrong"], "carried": verdicts["carried"],
               "truncated": verdicts["truncated"], "num_wrong": len(verdicts["wrong"])}
    write_metrics(out, metrics, args)
    print_outputs(out, {"num_wrong": len(verdicts["wrong"])})
    return metrics


if __name__ == "__main__":
    main()
