"""Training-step speed of examples/g2p.py's GRU + attention model on real CMUdict batches,
one BLAS thread, with each readout:

    linear   h̃_t = tanh(W_c [h_t; c_t])
    gru      h̃_t = GRU₂([h_t; c_t], h̃_{t−1}): a second decoder GRU, fused over the sequence

Each variant runs the same batches (the first of g2p.py's epoch plan, after 3 warm-up steps);
the median of `--repeats` timed passes is written to benchmarks/g2p_levers.json, with a
cProfile of the default model: the share of its time spent in each kind of work.

    python benchmarks/g2p_levers.py [--steps 30] [--repeats 3]
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import cProfile  # noqa: E402
import json  # noqa: E402
import pstats  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]

from benchmarks.run import cpu_model  # noqa: E402
import g2p  # noqa: E402
import _seq2seq as seq2seq  # noqa: E402
import minigrad as mg  # noqa: E402
import nn  # noqa: E402

VARIANTS = {"linear": {"readout": "linear"}, "gru": {"readout": "gru"}}


def time_variant(data: g2p.Data, changes: dict, steps: int, repeats: int) -> dict:
    config = replace(g2p.Config(), **changes)
    mg.manual_seed(0)
    model = g2p.GRUAttentionG2P(len(data.letters), len(data.phonemes), config)
    optimizer = nn.optim.Adam(model.parameters(), lr=1e-3)
    plan = seq2seq.same_length_batches([len(w) for w, _ in data.train_pairs],
                                        config.batch_size, np.random.default_rng(0))
    batches = [seq2seq.make_batch([data.train_pairs[i] for i in index], data.letters,
                              data.phonemes) for index in plan[:steps + 3]]
    for batch in batches[:3]:                                # warm-up: allocator, caches
        g2p.train_step(model, optimizer, (batch.src, batch.tgt_in, batch.tgt_out),
                       config.clip, "cpu", lr=1e-3)
    passes = []
    for _ in range(repeats):
        start = time.process_time()
        for batch in batches[3:]:
            g2p.train_step(model, optimizer, (batch.src, batch.tgt_in, batch.tgt_out),
                           config.clip, "cpu", lr=1e-3)
        passes.append(time.process_time() - start)
    seconds = float(np.median(passes))
    words = sum(len(b.src) for b in batches[3:])
    return {"steps_per_second": steps / seconds, "words_per_second": words / seconds,
            "cpu_seconds_per_pass": passes,
            "parameters": int(sum(p.data.size for p in model.parameters()))}


# where the time goes, by the function that spends it (its own time, callees excluded)
KINDS = {"nn/functional.py's fused primitives (Linear, cross-entropy), forward and backward":
         (("nn/layer_functions.py", "nn/losses.py"),
          ("forward", "backward", "array_backward", "_gradient_formula")),
         "GRU recurrence (GRUSequence), forward and backward": ("nn/recurrent.py",
                                                               ("forward", "array_backward")),
         "Adam update": ("nn/optim.py", None)}


def profile_shares(data: g2p.Data, steps: int) -> dict:
    """cProfile of `steps` training steps of the default model: each kind's share of the time."""
    config = g2p.Config()
    mg.manual_seed(0)
    model = g2p.GRUAttentionG2P(len(data.letters), len(data.phonemes), config)
    optimizer = nn.optim.Adam(model.parameters(), lr=1e-3)
    plan = seq2seq.same_length_batches([len(w) for w, _ in data.train_pairs],
                                        config.batch_size, np.random.default_rng(0))
    batches = [seq2seq.make_batch([data.train_pairs[i] for i in index], data.letters,
                              data.phonemes) for index in plan[:steps]]
    profiler = cProfile.Profile()
    profiler.enable()
    for batch in batches:
        g2p.train_step(model, optimizer, (batch.src, batch.tgt_in, batch.tgt_out),
                       config.clip, "cpu", lr=1e-3)
    profiler.disable()
    stats = pstats.Stats(profiler).stats
    total = sum(entry[2] for entry in stats.values())      # own time of every function
    shares = {kind: 0.0 for kind in KINDS}
    for (filename, _, function), entry in stats.items():
        for kind, (path, functions) in KINDS.items():
            if filename.endswith(path) and (functions is None or function in functions):
                shares[kind] += entry[2] / total
                break
    shares["everything else (graph, attention, dropout, loss, NumPy glue)"] = \
        1.0 - sum(shares.values())
    return shares


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "g2p_levers.json")
    args = parser.parse_args(argv)
    data = g2p.Data(*g2p.load_split())
    results = {"clock": "CPU time of the process (time.process_time), one BLAS thread",
               "steps": args.steps, "repeats": args.repeats, "batch_size": 128,
               "machine": cpu_model(),
               "numpy": np.__version__, "variants": {}}
    for name, changes in VARIANTS.items():
        results["variants"][name] = time_variant(data, changes, args.steps, args.repeats)
        r = results["variants"][name]
        print(f"{name:>14}: {r['steps_per_second']:.2f} steps/s, "
              f"{r['words_per_second']:.0f} words/s ({r['parameters']:,} parameters)")
    results["profile_shares"] = profile_shares(data, args.steps)
    for kind, share in results["profile_shares"].items():
        print(f"  {100 * share:5.1f} %  {kind}")
    linear, gru = (results["variants"][k]["steps_per_second"] for k in ("linear", "gru"))
    results["gru_over_linear_time"] = linear / gru
    print(f"a step with the second decoder GRU takes {linear / gru:.2f}× as long")
    tmp = args.out.with_suffix(".json.tmp")                 # atomic: write, then rename
    tmp.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, args.out)
    print(f"written to {args.out}")
    return results


if __name__ == "__main__":
    main()
