"""Training steps per second of translate.py, g2p.py and tiny_gpt.py, with the step compiled by
`mg.compile` (their default) and eagerly (--no-compile).

Each example's own model and its own `forward_backward` step, at its default sizes, on batches
of its shapes (translate: its corpus; g2p: made-up words of 6 to 9 letters, since the
dictionary may be absent; tiny_gpt: random characters). The optimizer step and clipping run
outside the compiled function, as in the scripts. Per mode: a few warm-up steps (the compiled
step captures there), then `--steps` timed steps; the two modes take turns for `--rounds`
rounds, and the best round counts (the machine is shared). Writes
benchmarks/compiled_examples.json.

    python3 benchmarks/compiled_examples.py              # ~2 minutes on 2 cores
    python3 benchmarks/compiled_examples.py --steps 5 --rounds 1 --out /tmp/x.json   # smoke
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "examples"), str(ROOT)]

import _common  # noqa: E402,F401  (first: one BLAS thread, as the examples run)
import numpy as np  # noqa: E402

from benchmarks.run import cpu_model  # noqa: E402
import minigrad as mg  # noqa: E402
import nn  # noqa: E402
import g2p  # noqa: E402
import _seq2seq  # noqa: E402
import tiny_gpt  # noqa: E402
import translate  # noqa: E402


def _translate():
    config = translate.Config()
    rng = np.random.default_rng(0)
    pairs, _ = translate.make_corpus(rng, 20 * config.batch_size, 1, config.min_len,
                                     config.max_len)
    src_vocab, tgt_vocab = translate.build_vocabs()
    model = translate.Seq2Seq(len(src_vocab), len(tgt_vocab), config.embed_dim,
                              config.hidden_size, config.attention, max_len=config.max_len)
    batches = [translate.make_batch(pairs[i:i + config.batch_size], src_vocab, tgt_vocab)
               for i in range(0, len(pairs), config.batch_size)]
    tensors = [tuple(mg.tensor(a) for a in (b.src, b.src_len, b.tgt_in, b.tgt_out))
               for b in batches]
    return model, nn.optim.Adam(model.parameters(), lr=config.lr), \
        functools.partial(_seq2seq.forward_backward, model), tensors, {}, config.clip


def _g2p():
    config = g2p.Config()
    rng = np.random.default_rng(0)
    n_letters, n_phonemes = 30, 45
    model = g2p.GRUAttentionG2P(n_letters, n_phonemes, config)
    tensors = []
    for length in (6, 7, 8, 9) * 2:               # one word length per batch, as g2p batches
        B, T = config.batch_size, length + 1
        letters = rng.integers(4, n_letters, (B, length))
        out = rng.integers(4, n_phonemes, (B, T))
        tgt_in = np.concatenate([np.full((B, 1), _seq2seq.BOS), out[:, :-1]], axis=1)
        tensors.append(tuple(mg.tensor(a) for a in (letters, tgt_in, out)))
    return model, nn.optim.Adam(model.parameters(), lr=config.lr), \
        functools.partial(_seq2seq.forward_backward, model), tensors, \
        {"label_smoothing": config.label_smoothing}, config.clip


def _tiny_gpt():
    vocab, batch, context, d_model, heads, layers = 96, 32, 64, 128, 4, 2
    model = nn.TransformerLM(vocab, d_model, heads, 4 * d_model, layers, max_len=context,
                             dropout=0.0, activation=tiny_gpt.gelu_tanh)
    rng = np.random.default_rng(0)
    data = rng.integers(0, vocab, 200_000)
    tensors = [tuple(mg.tensor(a) for a in tiny_gpt.random_windows(data, rng, batch, context))
               for _ in range(16)]

    def forward_backward(x, y):                   # tiny_gpt.main's step
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss

    return model, nn.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01), \
        forward_backward, tensors, {}, 1.0


EXAMPLES = {"translate": _translate, "g2p": _g2p, "tiny_gpt": _tiny_gpt}


def _steps_per_second(run, model, optimizer, batches, options, clip, steps: int,
                      start: int) -> float:
    tick = time.perf_counter()
    for i in range(start, start + steps):
        optimizer.zero_grad()
        run(*batches[i % len(batches)], **options)
        nn.clip_grad_norm(model.parameters(), clip)
        optimizer.step()
    return steps / (time.perf_counter() - tick)


def measure(name: str, steps: int, rounds: int) -> dict:
    mg.manual_seed(0)
    model, optimizer, step, batches, options, clip = EXAMPLES[name]()
    runs = {"compiled": mg.compile(step, cache_size=32), "eager": step}
    best = {mode: 0.0 for mode in runs}
    position = 0
    # warm-up: every batch shape seen twice by the compiled step (so each is captured)
    _steps_per_second(runs["compiled"], model, optimizer, batches, options, clip,
                      2 * len(batches), 0)
    _steps_per_second(step, model, optimizer, batches, options, clip, 2, 0)
    for _ in range(rounds):
        for mode, run in runs.items():
            rate = _steps_per_second(run, model, optimizer, batches, options, clip, steps,
                                     position)
            position += steps
            best[mode] = max(best[mode], rate)
    stats = runs["compiled"].stats
    return {"steps_per_second_compiled": round(best["compiled"], 3),
            "steps_per_second_eager": round(best["eager"], 3),
            "speedup": round(best["compiled"] / best["eager"], 3),
            "compiled_calls": {"eager": stats.eager, "captures": stats.captures,
                               "replays": stats.replays,
                               "last_reason": stats.reasons[-1] if stats.reasons else None}}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20, help="timed steps per mode and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", default=",".join(EXAMPLES))
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "compiled_examples.json")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    results = {}
    for name in args.only.split(","):
        results[name] = measure(name, args.steps, args.rounds)
        print(name, json.dumps(results[name]), flush=True)
    record = {"command": " ".join(["python3", "benchmarks/compiled_examples.py",
                                   *(argv if argv is not None else sys.argv[1:])]),
              "cpu": cpu_model(), "logical_cpus": os.cpu_count(),
              "python": platform.python_version(), "numpy": np.__version__,
              "load_average_before": [round(x, 2) for x in load_before],
              "load_average_after": [round(x, 2) for x in os.getloadavg()],
              "steps": args.steps, "rounds": args.rounds, "examples": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=args.out.parent, delete=False,
                                     suffix=".tmp") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    os.replace(f.name, args.out)                  # atomically
    return record


if __name__ == "__main__":
    main()
