"""A tiny decoder-only Transformer that learns to write Python, one character at a time (claim
C21, see examples/README.md).

Decoder-only Transformers (masked self-attention only, the input and the output in one sequence)
became the default design. This script trains one (nn.TransformerLM: token and
learned position embeddings, pre-LN blocks of causal multi-head self-attention and a GELU
feed-forward net, a linear head) to predict the next character of Python source code. The text
ships with Python itself: a fixed list of standard-library modules, read from
`sysconfig.get_paths()["stdlib"]` and joined in that order (files missing from this Python are
skipped and listed; the few characters outside printable ASCII become "¤"). The first 90% of
the characters train, the last 10% validate.

Losses are in nats per character (divide by ln 2 for bits). Every `--eval-every` steps the
validation loss is measured on fixed windows of the held-out text; at the end the script writes
samples of generated code, a loss plot, a checkpoint and the metrics. `--time-budget S` stops
training after S seconds of wall time (the learning rate anneals over the budget or over
`--steps`, whichever ends first), e.g. to ask what ten minutes of CPU buy.

Run:
    python3 examples/tiny_gpt.py                        # 3000 steps, the documented run
    python3 examples/tiny_gpt.py --time-budget 600      # ten minutes of training
    python3 examples/tiny_gpt.py --quick                # a few seconds, a tiny model
    python3 examples/tiny_gpt.py --resume               # continue from <out>/checkpoint.npz
    python3 examples/tiny_gpt.py --sample-only --resume --prompt "def "   # just generate
"""

from __future__ import annotations

# _common first: it sets the BLAS thread count before NumPy loads
from _common import (CHECKPOINT_NAME, Checkpoint, LossBar, add_compile_flag, as_list,
                     base_parser, budget_progress, compile_summary, fail, training_step,
                     load_checkpoint, parse_args, positive_int, prepare_run, print_outputs,
                     pyplot, save_figure, warmup_cosine, write_metrics)

import math
import sysconfig
import time
from pathlib import Path

import numpy as np

import minigrad as mg
import nn
import nn.functional as F

# A fixed, ordered list of pure-Python standard-library modules (about 1.3 MB in Python 3.11).
STDLIB_FILES = (
    "abc.py", "bisect.py", "heapq.py", "copy.py", "fnmatch.py", "glob.py", "operator.py",
    "string.py", "textwrap.py", "shlex.py", "queue.py", "sched.py", "base64.py", "csv.py",
    "fractions.py", "random.py", "statistics.py", "functools.py", "contextlib.py", "pprint.py",
    "difflib.py", "calendar.py", "tokenize.py", "enum.py", "dataclasses.py", "ast.py",
    "argparse.py", "configparser.py", "tempfile.py", "shutil.py", "threading.py",
    "traceback.py", "weakref.py", "collections/__init__.py", "json/decoder.py",
    "json/encoder.py", "json/__init__.py", "selectors.py", "gettext.py", "cmd.py",
)


OTHER = "¤"
_ASCII = frozenset(chr(i) for i in range(32, 127)) | {"\n", "\t"}


# -- data ---------------------------------------------------------------------------------------

def load_corpus(max_chars: int | None = None) -> tuple[str, list[str], list[str]]:
    """The listed stdlib files joined in order; returns (text, files used, files missing)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    parts, used, missing = [], [], []
    for name in STDLIB_FILES:
        path = root / name
        if path.is_file():
            parts.append(f"# ---- {name} ----\n" + path.read_text(encoding="utf-8"))
            used.append(name)
        else:
            missing.append(name)
    if not parts:
        raise RuntimeError(f"tiny_gpt: none of the listed standard-library files exist under "
                           f"{root}")
    text = "\n".join(parts)
    # the ~70 characters outside printable ASCII (names in comments, test strings) share one
    # symbol, so the vocabulary holds only characters the model sees often enough to learn
    text = "".join(c if c in _ASCII else OTHER for c in text)
    return (text[:max_chars] if max_chars else text), used, missing


class CharCodec:
    """Characters <-> integer ids; the vocabulary is the sorted set of characters seen."""

    def __init__(self, vocab: str):
        self.vocab = vocab
        self.index = {c: i for i, c in enumerate(vocab)}

    @classmethod
    def from_text(cls, text: str) -> "CharCodec":
        return cls("".join(sorted(set(text))))

    def encode(self, text: str) -> np.ndarray:
        unknown = self.index.get(" ", 0)                    # a prompt may hold unseen chars
        return np.array([self.index.get(c, unknown) for c in text], dtype=np.int64)

    def decode(self, ids) -> str:
        return "".join(self.vocab[int(i)] for i in ids)


def random_windows(data: np.ndarray, rng: np.random.Generator, batch: int,
                   context: int) -> tuple[np.ndarray, np.ndarray]:
    """`batch` random windows: inputs (B, T) and next-character targets (B, T)."""
    starts = rng.integers(0, len(data) - context - 1, size=batch)
    x = np.stack([data[s:s + context] for s in starts])
    y = np.stack([data[s + 1:s + context + 1] for s in starts])
    return x, y


def fixed_windows(data: np.ndarray, count: int, context: int) -> tuple[np.ndarray, np.ndarray]:
    """`count` evenly spaced windows over `data` (the same ones every evaluation)."""
    starts = np.linspace(0, len(data) - context - 1, num=count).astype(np.int64)
    x = np.stack([data[s:s + context] for s in starts])
    y = np.stack([data[s + 1:s + context + 1] for s in starts])
    return x, y


def gelu_tanh(x: mg.Tensor) -> mg.Tensor:
    """GPT-2's GELU, the tanh approximation: ½x(1 + tanh(√(2/π)(x + 0.044715x³)))."""
    return mg.gelu(x, approximate="tanh")


# -- training -----------------------------------------------------------------------------------

def evaluate(model: nn.TransformerLM, windows, batch: int, device: str) -> float:
    """Mean next-character cross-entropy (nats per character) over fixed windows."""
    x, y = windows
    model.eval()
    total, count = 0.0, 0
    with mg.no_grad():
        for i in range(0, len(x), batch):
            logits = model(mg.tensor(x[i:i + batch], device=device))            # (B, T, V)
            loss = F.cross_entropy(logits, mg.tensor(y[i:i + batch], device=device),
                                   reduction="sum", axis=-1)
            total += loss.item()
            count += y[i:i + batch].size
    model.train()
    return total / count


def learning_rate(args, step: int, elapsed: float) -> float:
    """Linear warm-up, then cosine decay to 10% over the run: progress is the larger of the
    fraction of steps done and the fraction of the time budget used."""
    progress = budget_progress(step, args.steps, elapsed, args.time_budget)
    return warmup_cosine(args.lr, min(1.0, (step + 1) / args.warmup), progress, floor=0.1)


def generate_samples(model: nn.TransformerLM, codec: CharCodec, prompts: list[str],
                     length: int, temperature: float, device: str) -> list[str]:
    samples = []
    for prompt in prompts:
        ids = codec.encode(prompt)[None]                                         # (1, T0)
        out = model.generate(mg.tensor(ids, device=device), length, temperature=temperature)
        samples.append(codec.decode(out.numpy()[0]))
    return samples


def plot_losses(history: dict, final_val: float, args, path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    minutes = np.asarray(history["elapsed"]) / 60.0
    for ax, x, label in ((axes[0], history["step"], "step"), (axes[1], minutes,
                                                              "wall time (minutes)")):
        ax.plot(x, history["train"], label="train (running mean)")
        ax.plot(x, history["val"], "o-", ms=3, label="validation")
        ax.set(xlabel=label, ylabel="nats per character")
        ax.grid(alpha=0.3)
        ax.legend()
    axes[0].set_title(f"character-level LM on Python's own source: final validation "
                      f"{final_val:.3f}\n(on {args.final_eval_windows:,} fixed windows; the "
                      f"curve: {args.eval_windows} windows every {args.eval_every} steps)",
                      fontsize=10)
    axes[1].set_title("the same against wall-clock time (machine-dependent)", fontsize=10)
    save_figure(fig, path)



def main(argv: list[str] | None = None) -> dict:
    parser = base_parser(__doc__, default_out="runs/tiny_gpt")
    add_compile_flag(parser)
    parser.add_argument("--steps", type=positive_int, default=3000, help="maximum training steps")
    parser.add_argument("--time-budget", type=float, default=None, metavar="SECONDS",
                        help="stop this run's training after this many seconds of wall time")
    parser.add_argument("--batch", type=positive_int, default=32)
    parser.add_argument("--context", type=int, default=64, help="characters per window T")
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--ff", type=int, default=None, help="feed-forward width (4·d_model)")
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--lr", type=float, default=2e-3, help="peak Adam learning rate")
    parser.add_argument("--warmup", type=int, default=100, help="warm-up steps")
    parser.add_argument("--eval-every", type=positive_int, default=100)
    parser.add_argument("--eval-windows", type=int, default=128,
                        help="fixed validation windows per evaluation")
    parser.add_argument("--final-eval-windows", type=int, default=1024,
                        help="validation windows for the final number")
    parser.add_argument("--checkpoint-every", type=positive_int, default=250)
    parser.add_argument("--prompt", action="append", default=None,
                        help='prompt for the samples (repeatable; default "def ", "class ", '
                             '"import ")')
    parser.add_argument("--sample-length", type=int, default=400)
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--sample-only", action="store_true",
                        help="no training: generate from the checkpoint (with --resume)")
    args = parse_args(parser, argv, steps=30, batch=8, context=32, d_model=32,
                                     heads=2, layers=1, eval_every=10, eval_windows=16,
                                     final_eval_windows=32, sample_length=60, warmup=5)
    args.ff = args.ff or 4 * args.d_model
    prompts = args.prompt or ["def ", "class ", "import "]
    out = prepare_run(args)

    text, used, missing = load_corpus(max_chars=200_000 if args.quick else None)
    codec = CharCodec.from_text(text)
    data = codec.encode(text)
    split = int(0.9 * len(data))
    train_data, val_data = data[:split], data[split:]
    print(f"corpus: {len(used)} stdlib files, {len(data):,} characters, vocabulary "
          f"{len(codec.vocab)}; train {len(train_data):,}, validation {len(val_data):,}"
          + (f"; missing here: {', '.join(missing)}" if missing else ""))

    model = nn.TransformerLM(len(codec.vocab), args.d_model, args.heads, args.ff, args.layers,
                             max_len=args.context, dropout=args.dropout,
                             activation=gelu_tanh).to(args.device)
    optimizer = nn.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    num_params = sum(p.size for p in model.parameters())
    print(f"model: {args.layers} layers, d_model {args.d_model}, {args.heads} heads, ff "
          f"{args.ff}, context {args.context}: {num_params:,} parameters")
    history = {"step": [], "train": [], "val": [], "elapsed": []}

    def forward_backward(x, y):
        """Forward, loss and backward: the part of a step that mg.compile replays."""
        loss = F.cross_entropy(model(x), y, axis=-1)                      # logits (B, T, V)
        loss.backward()
        return loss

    run_step = training_step(forward_backward, args)
    val_windows = fixed_windows(val_data, args.eval_windows, args.context)
    eval_batch = max(args.batch, 32)
    start, cpu_start = time.perf_counter(), time.process_time()
    stopped_by = "steps"
    if args.sample_only:                       # the model of a finished or interrupted run
        path = args.resume or out / CHECKPOINT_NAME
        if not path.is_file():
            fail(f"--sample-only: no checkpoint at {path}; train first")
        state = load_checkpoint(path, model)
        step, history = int(state["step"]), {k: as_list(state["history"][k]) for k in history}
    else:
        with Checkpoint(out / CHECKPOINT_NAME, args, model, optimizer,
                        config={"vocabulary": codec.vocab},
                        ignore=("sample_only", "prompt", "sample_length", "temperature",
                                "final_eval_windows")) as checkpoint:
            state = checkpoint.resume()
            step, elapsed_before = int(state.get("step", 0)), float(state.get("elapsed", 0.0))
            if state:
                history = {k: as_list(state["history"][k]) for k in history}
            with LossBar(total=args.steps, desc="train", initial=step) as bar:
                if state:
                    bar.load_state_dict(state["bar"])
                while step < args.steps:
                    elapsed = time.perf_counter() - start
                    if args.time_budget is not None and elapsed >= args.time_budget:
                        stopped_by = "time budget"
                        break
                    for group in optimizer.param_groups:
                        group["lr"] = learning_rate(args, step, elapsed)
                    x, y = random_windows(train_data, np.random.default_rng([args.seed, step]),
                                          args.batch, args.context)
                    optimizer.zero_grad()
                    loss = run_step(mg.tensor(x, device=args.device),
                                    mg.tensor(y, device=args.device))
                    nn.clip_grad_norm(model.parameters(), 1.0)
                    optimizer.step()
                    step += 1
                    running = bar.update(loss.item())
                    if step % args.eval_every == 0 or step == args.steps:
                        val = evaluate(model, val_windows, eval_batch, args.device)
                        history["step"].append(step)
                        history["train"].append(running)
                        history["val"].append(val)
                        history["elapsed"].append(elapsed_before + time.perf_counter() - start)
                        bar.write(f"step {step:5d}  train {running:.4f}  val {val:.4f} "
                                  f"nats/char  ({history['elapsed'][-1] / 60:.1f} min)")
                    checkpoint.step_end(
                        due=step % args.checkpoint_every == 0 or step == args.steps,
                        step=step, elapsed=elapsed_before + time.perf_counter() - start,
                        history=history, bar=bar.state_dict())
            if stopped_by == "time budget":
                checkpoint.save(step=step, elapsed=elapsed_before + time.perf_counter() - start,
                                history=history, bar=bar.state_dict())
    train_seconds = time.perf_counter() - start
    train_cpu_seconds = time.process_time() - cpu_start       # all threads of this process

    final_val = evaluate(model, fixed_windows(val_data, args.final_eval_windows, args.context),
                         eval_batch, args.device)
    samples = generate_samples(model, codec, prompts, args.sample_length, args.temperature,
                               args.device)
    with open(out / "samples.txt", "w", encoding="utf-8") as f:
        for prompt, sample in zip(prompts, samples):
            f.write(f"==== prompt {prompt!r}, temperature {args.temperature} ====\n{sample}\n\n")
    for prompt, sample in zip(prompts, samples):
        print(f"\n---- sample from {prompt!r} ----\n{sample}")
    if history["step"]:
        plot_losses(history, final_val, args, out / "loss.png")

    metrics = {"final_val_loss_nats_per_char": final_val,
               "final_val_bits_per_char": final_val / math.log(2),
               "final_train_loss_nats_per_char": history["train"][-1] if history["train"] else None,
               "steps": step, "stopped_by": stopped_by,
               "training_step": compile_summary(run_step),
               "train_seconds_this_run": train_seconds,
               "train_cpu_seconds_this_run": train_cpu_seconds,
               "elapsed_seconds_total": history["elapsed"][-1] if history["elapsed"] else 0.0,
               "characters_seen": step * args.batch * args.context,
               "parameters": num_params,
               "config": {k: getattr(args, k) for k in ("batch", "context", "d_model", "heads",
                                                        "layers", "ff", "lr", "dropout",
                                                        "time_budget", "seed")},
               "corpus": {"files": used, "missing": missing, "characters": len(data),
                          "vocabulary": len(codec.vocab), "train_characters": len(train_data),
                          "val_characters": len(val_data)},
               "uniform_baseline_nats": math.log(len(codec.vocab)),
               "samples": dict(zip(prompts, samples)),
               "history": history}
    write_metrics(out, metrics, args)
    print_outputs(out, {"final validation loss (nats/char)": round(final_val, 4),
                        "steps": step, "stopped by": stopped_by})
    return metrics


if __name__ == "__main__":
    main()
