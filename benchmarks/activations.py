"""Does a fused activation pay? Each activation that minigrad implements as one primitive,
timed against the same function composed from minigrad's other primitives.

    python benchmarks/activations.py              # writes benchmarks/activations.json
    python benchmarks/activations.py --rounds 9 --repeats 20

One timed sample is `repeats` forward + backward passes (y = f(x), y.backward(G)) on float32
arrays of two sizes: 64 elements, where the cost per graph node dominates, and 256 × 1024,
where memory traffic does. The fused and the composed version take turns within every round,
so a busy machine slows both alike; the clock is the process's CPU time and one BLAS thread.
The JSON holds, per activation and size, the median time of each version, the ratio
composed ÷ fused for every round, and their median, minimum and maximum: a fused primitive
pays when even the smallest ratio is above 1.

Before timing, both versions are checked to agree (forward and gradient) on inputs away from
the kinks and from the overflow range: a composition that is wrong somewhere else (an inf · 0
in the branch not taken, a kink's one-sided derivative) is exactly why some primitives exist,
and the `why` column says which.
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import minigrad as mg  # noqa: E402

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)

# name -> (fused, composed from other primitives, why it is one primitive besides speed)
CASES = {
    "silu": (mg.silu, lambda x: x * mg.sigmoid(x), "speed only"),
    "softplus": (mg.softplus,
                 lambda x: mg.where(x > 20.0, x, mg.log1p(mg.exp(mg.minimum(x, 20.0)))),
                 "the branch not taken must not overflow"),
    "elu": (mg.elu, lambda x: mg.where(x > 0, x, mg.exp(mg.minimum(x, 0.0)) - 1.0),
            "the branch not taken must not overflow"),
    "leaky_relu": (mg.leaky_relu, lambda x: mg.where(x > 0, x, 0.01 * x),
                   "PyTorch's slope at 0"),
    "hardtanh": (mg.hardtanh, lambda x: mg.clip(x, -1.0, 1.0), "gradient 0 at the bounds"),
    "hardsigmoid": (mg.hardsigmoid, lambda x: mg.clip(x / 6.0 + 0.5, 0.0, 1.0),
                    "gradient 0 at the bounds"),
    "hardswish": (mg.hardswish, lambda x: x * mg.clip(x + 3.0, 0.0, 6.0) / 6.0,
                  "PyTorch's slopes at ±3"),
    "mish": (mg.mish, lambda x: x * mg.tanh(mg.softplus(x)), "speed only"),
    "logsigmoid": (mg.logsigmoid, lambda x: -mg.softplus(-x), "speed only"),
    "gelu": (mg.gelu, lambda x: 0.5 * x * (1.0 + mg.erf(x / math.sqrt(2.0))), "speed only"),
    "gelu_tanh": (lambda x: mg.gelu(x, approximate="tanh"),
                  lambda x: 0.5 * x * (1.0 + mg.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x ** 3))),
                  "speed only"),
}

SIZES = {"64": (64,), "256x1024": (256, 1024)}


def pass_once(fn, x_data: np.ndarray, seed: np.ndarray) -> np.ndarray:
    x = mg.tensor(x_data, requires_grad=True)
    fn(x).backward(mg.tensor(seed))
    return x.grad


def check_agreement(name: str, fused, composed) -> None:
    """Both versions give the same values and gradients away from kinks and overflow."""
    rng = np.random.default_rng(1)
    x = rng.uniform(-5.0, 5.0, size=200)
    x = x[np.min(np.abs(x[:, None] - np.array([-3.0, -1.0, 0.0, 1.0, 3.0])), axis=1) > 1e-3]
    seed = rng.standard_normal(x.shape)
    for fn_a, fn_b in ((fused, composed),):
        a = fn_a(mg.tensor(x)).numpy()
        b = fn_b(mg.tensor(x)).numpy()
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9, err_msg=f"{name}: forward")
        np.testing.assert_allclose(pass_once(fn_a, x, seed), pass_once(fn_b, x, seed),
                                   rtol=1e-6, atol=1e-9, err_msg=f"{name}: gradient")


def time_block(fn, x_data, seed, repeats: int) -> float:
    start = time.process_time()
    for _ in range(repeats):
        pass_once(fn, x_data, seed)
    return (time.process_time() - start) / repeats


def measure(rounds: int, repeats: int) -> dict:
    rng = np.random.default_rng(0)
    results = {}
    for name, (fused, composed, why) in CASES.items():
        check_agreement(name, fused, composed)
        results[name] = {"why": why, "sizes": {}}
        for label, shape in SIZES.items():
            x = rng.uniform(-4.0, 4.0, size=shape).astype(np.float32)
            seed = rng.standard_normal(shape).astype(np.float32)
            n = repeats * (50 if x.size < 1000 else 1)       # small arrays: more passes a sample
            for fn in (fused, composed):                      # warm-up
                time_block(fn, x, seed, 2)
            fused_t, composed_t = [], []
            for _ in range(rounds):
                fused_t.append(time_block(fused, x, seed, n))
                composed_t.append(time_block(composed, x, seed, n))
            ratios = [c / f for f, c in zip(fused_t, composed_t)]
            results[name]["sizes"][label] = {
                "fused_us": round(1e6 * float(np.median(fused_t)), 2),
                "composed_us": round(1e6 * float(np.median(composed_t)), 2),
                "ratio_median": round(float(np.median(ratios)), 3),
                "ratio_min": round(min(ratios), 3),
                "ratio_max": round(max(ratios), 3),
            }
            row = results[name]["sizes"][label]
            print(f"{name:12s} {label:>9s}  fused {row['fused_us']:9.1f} µs  composed "
                  f"{row['composed_us']:9.1f} µs  composed/fused {row['ratio_median']:.2f} "
                  f"({row['ratio_min']:.2f}–{row['ratio_max']:.2f})", flush=True)
    return results


def markdown(results: dict) -> str:
    """The table RESULTS.md shows, from the JSON."""
    lines = ["| activation | why one primitive | composed ÷ fused, 64 elements | "
             "composed ÷ fused, 256×1024 |", "|---|---|---|---|"]
    for name, entry in results.items():
        cells = [f"{s['ratio_median']:.2f} ({s['ratio_min']:.2f}–{s['ratio_max']:.2f})"
                 for s in entry["sizes"].values()]
        lines.append(f"| {name} | {entry['why']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds (default 7)")
    parser.add_argument("--repeats", type=int, default=10,
                        help="passes a sample on 256×1024 (×50 on 64 elements; default 10)")
    parser.add_argument("--out", type=Path, default=HERE / "activations.json")
    args = parser.parse_args(argv)
    results = measure(args.rounds, args.repeats)
    record = {"machine": {"python": platform.python_version(), "numpy": np.__version__,
                          "processor": platform.processor() or platform.machine(),
                          "load_average": list(os.getloadavg())},
              "rounds": args.rounds, "repeats": args.repeats, "clock": "process CPU time",
              "results": results}
    tmp = args.out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    os.replace(tmp, args.out)
    print(f"\nwrote {args.out}\n\n{markdown(results)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
