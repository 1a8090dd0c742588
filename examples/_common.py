"""Plumbing shared by the example scripts, so that each script shows only its idea.

Every example follows one pattern:

    parser = base_parser(__doc__, default_out="runs/translate")
    parser.add_argument("--steps", type=positive_int, default=300)
    args = parse_args(parser, argv, steps=20)    # --quick values; --quick runs in <out>-quick
    out = prepare_run(args)                      # seeds minigrad + NumPy, makes the folder
    ...
    with Checkpoint(out / CHECKPOINT_NAME, args, model, optimizer) as checkpoint, \
            LossBar(total=steps, desc="train") as bar:
        state = checkpoint.resume()              # {} unless --resume; restores everything
        for step in range(state.get("step", 0), args.steps):
            ...
            bar.update(loss.item())              # tqdm bar with the running loss
            checkpoint.step_end(due=(step + 1) % 100 == 0, step=step + 1)  # Ctrl-C stops here
    plt = pyplot()                               # matplotlib on the Agg backend
    save_figure(fig, out / "loss.png")
    write_metrics(out, metrics, args)            # metrics.json (atomic), with the run's
                                                 # seed, arguments and wall time
    print_outputs(out)

Flags given by `base_parser`: --seed, --device, --quick, --out, --resume.

Ctrl-C during training saves a checkpoint at the end of the current step and prints the command
that continues the run. A checkpoint holds the model, the optimizer, the scheduler, the random
states (minigrad's, NumPy's and the script's own generators), the script's position in its data
and the run's configuration, so the resumed run computes exactly what the uninterrupted one
would have; `--resume` refuses a checkpoint made with other settings and names them.
"""

from __future__ import annotations

import os

# One BLAS thread. The matrices of these examples are small (a GRU step multiplies (64, 128)
# by (128, 384)); several BLAS threads then spin-wait on each other, which is many times
# slower as soon as other processes share the cores. Takes effect when this module is
# imported before NumPy (scripts import it first); prepare_run() also applies it at run time
# when threadpoolctl is installed. An explicit setting in the environment wins.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import dataclasses  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import shlex  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Iterable  # noqa: E402

import numpy as np  # noqa: E402

try:
    import minigrad as mg
except ImportError:
    # a source checkout run as `python3 examples/<script>.py` without `pip install -e .`:
    # the packages sit one folder above this file
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import minigrad as mg

CHECKPOINT_NAME = "checkpoint.npz"


# -- command line ---------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line, without the usage block."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def fail(message: str) -> None:
    """Stop the script with one line on stderr and exit status 2, as argparse does."""
    print(f"{Path(sys.argv[0]).name}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def positive_int(text: str) -> int:
    """argparse type: an integer ≥ 1 (steps, epochs, batch sizes)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def base_parser(description: str | None, default_out: str) -> argparse.ArgumentParser:
    """An ArgumentParser with the flags every example shares.

    --seed INT      seeds minigrad's RNG and NumPy's (default 0)
    --device STR    "cpu" (default) or "cuda" / "cuda:N" (needs CuPy and a GPU)
    --quick         a smoke run of a few seconds (tiny data, few steps), in <default_out>-quick
    --out DIR       output folder for figures, metrics and checkpoints (default `default_out`)
    --resume [CKPT] continue from a checkpoint; without a path, <out>/checkpoint.npz

    The script's module docstring makes a good `description`. `default_out` may name
    arguments, e.g. "runs/translate-{attention}".
    """
    parser = _Parser(description=description,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.default_out = default_out
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument("--device", default="cpu",
                        help='"cpu" (default) or "cuda" / "cuda:N" (needs CuPy and a GPU)')
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: tiny data and few steps, a few seconds")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"output folder (default: {default_out}, with --quick "
                             f"{default_out}-quick)")
    parser.add_argument("--resume", nargs="?", const="", default=None, metavar="CKPT",
                        help=f"resume from CKPT (default: <out>/{CHECKPOINT_NAME})")
    return parser


def add_compile_flag(parser: argparse.ArgumentParser) -> None:
    """--no-compile: run every training step eagerly instead of through `mg.compile`
    (MINIGRAD_COMPILE=0 in the environment does the same)."""
    parser.add_argument("--no-compile", dest="compile", action="store_false",
                        help="run each training step eagerly, not captured and replayed by "
                             "mg.compile (same numbers, slower; MINIGRAD_COMPILE=0 does the "
                             "same)")


def training_step(step, args: argparse.Namespace | None, cache_size: int = 16):
    """`step` (forward, loss and backward; it returns the loss) as the script runs it:
    captured once and replayed by `mg.compile` (bit for bit the eager step's numbers), or as
    it is with --no-compile. The optimizer step and gradient clipping stay outside: they change
    parameters in place, which a compiled step refuses."""
    if args is not None and not getattr(args, "compile", True):
        return step
    return mg.compile(step, cache_size=cache_size)


def compile_summary(step) -> dict:
    """How the training steps ran: {"compiled": False} for an eager step, else the counts of
    eager calls, captures and replays of `mg.compile`, with the last reason it ran eagerly."""
    stats = getattr(step, "stats", None)
    if stats is None:
        return {"compiled": False}
    return {"compiled": getattr(step, "enabled", True), "eager_calls": stats.eager,
            "captures": stats.captures, "replays": stats.replays,
            "last_reason": stats.reasons[-1] if stats.reasons else None}


def prepare_run(args: argparse.Namespace) -> Path:
    """Seed the RNGs, check the device, keep freed memory for the next step (glibc), create
    the output folder; return the folder.

    After it, `args.resume` is None or the Path of the checkpoint to resume from, and
    `args.started` the time.perf_counter() at which the run started (for `write_metrics`).
    """
    args.started = time.perf_counter()
    seed_everything(args.seed)
    check_device(args.device)
    limit_blas_threads()
    mg.tune_malloc()
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        fail(f"--out {out}: a file is there; give a folder")
    out.mkdir(parents=True, exist_ok=True)
    if args.resume is not None:
        args.resume = Path(args.resume) if args.resume else out / CHECKPOINT_NAME
    return out


def seed_everything(seed: int) -> np.random.Generator:
    """Seed minigrad's RNG (initialisers, dropout) and NumPy's global RNG; return a Generator."""
    mg.manual_seed(seed)
    np.random.seed(seed)
    return np.random.default_rng(seed)


def limit_blas_threads(threads: int | None = None) -> None:
    """Limit BLAS to `threads` threads (default: $OPENBLAS_NUM_THREADS, else 1) through
    threadpoolctl when it is installed; without it, only the import-time setting applies."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    if threads is None:
        threads = int(os.environ.get("OPENBLAS_NUM_THREADS", "1") or 1)
    threadpool_limits(limits=threads, user_api="blas")


def check_device(device: str) -> None:
    """Exit early with status 2 (a usage error, as argparse's) and minigrad's one-line reason
    when `device` cannot be used: CuPy missing, no GPU, or an unknown device name."""
    try:
        mg.zeros(1, device=device)
    except (RuntimeError, ValueError) as error:
        fail(f"--device {device}: {error}")


# -- progress -------------------------------------------------------------------------------

class LossBar:
    """A tqdm progress bar that shows an exponential running mean of the loss.

        running ← β·running + (1 − β)·loss, debiased as in Adam: running / (1 − β^k)

    Use as a context manager; call `update(loss)` once per step. Extra keyword arguments to
    `update` are shown next to the loss (e.g. `acc=0.93`). `disable=True` hides the bar.
    """

    def __init__(self, total: int | None, desc: str = "train", smoothing: float = 0.9,
                 disable: bool = False, initial: int = 0):
        from tqdm.auto import tqdm
        self.beta = smoothing
        self._sum = 0.0
        self._steps = 0
        self.running_loss = math.nan
        self._bar = tqdm(total=total, desc=desc, initial=initial, disable=disable,
                         dynamic_ncols=True, mininterval=0.2, leave=True)

    def update(self, loss: float, n: int = 1, **extra: Any) -> float:
        """Advance by `n` steps and fold `loss` into the running mean; return the running mean."""
        self._steps += 1
        self._sum = self.beta * self._sum + (1.0 - self.beta) * float(loss)
        self.running_loss = self._sum / (1.0 - self.beta ** self._steps)
        postfix = {"loss": f"{self.running_loss:.4f}"}
        postfix.update({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in extra.items()})
        self._bar.set_postfix(postfix, refresh=False)
        self._bar.update(n)
        return self.running_loss

    def state_dict(self) -> dict:
        """The running mean's state, for a checkpoint (a resumed bar continues the mean)."""
        return {"sum": self._sum, "steps": self._steps}

    def load_state_dict(self, state: dict) -> None:
        self._sum, self._steps = float(state["sum"]), int(state["steps"])

    def write(self, message: str) -> None:
        """Print a line without breaking the bar."""
        self._bar.write(message)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> "LossBar":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- training -------------------------------------------------------------------------------

def optimizer_step(model, optimizer, run, tensors, clip: float, lr: float | None = None,
                   **options: Any) -> float:
    """One training step: zero the gradients, `run(*tensors, **options)` (forward, loss and
    backward; compiled or not: see `training_step`), clip the gradients' norm to `clip`, set
    the learning rate to `lr` (when given) and step. Returns the loss."""
    import nn
    optimizer.zero_grad()
    loss = run(*tensors, **options)
    nn.clip_grad_norm(model.parameters(), clip)
    if lr is not None:
        for group in optimizer.param_groups:
            group["lr"] = lr
    optimizer.step()
    return loss.item()


def budget_progress(steps: int, max_steps: int | None, seconds: float,
                    max_seconds: float | None) -> float:
    """How far a run with a step limit and a time budget is (1: done): steps / max_steps or
    seconds / max_seconds, whichever is further (a limit of 0 or None does not count)."""
    return max(steps / max_steps if max_steps else 0.0,
               seconds / max_seconds if max_seconds else 0.0)


def warmup_cosine(peak: float, warm: float, progress: float, floor: float) -> float:
    """A learning rate: `peak` times the warm-up factor `warm` (0 to 1) times a cosine from 1
    at progress 0 down to `floor` at progress 1 (and after):

        lr = peak · warm · (floor + (1 − floor) · ½ (1 + cos(π · min(progress, 1))))
    """
    cosine = 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))
    return peak * warm * (floor + (1.0 - floor) * cosine)


@contextlib.contextmanager
def eval_mode(model):
    """Inside the block the model is in eval mode (no dropout); after it, in its former mode."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


# -- files ----------------------------------------------------------------------------------

def _jsonable(value: Any) -> Any:
    """NumPy scalars and arrays, Paths and tuples as plain JSON values."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    return value


def write_json(path: str | Path, data: dict) -> Path:
    """Write `data` as indented JSON atomically (temp file in the same folder, then rename).

    NumPy scalars/arrays and Paths are converted; a reader never sees a half-written file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(_jsonable(data), f, indent=2)
            f.write("\n")
        os.chmod(tmp, 0o644)                     # mkstemp's files are private (0600)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def write_metrics(out: str | Path, metrics: dict, args: argparse.Namespace) -> Path:
    """Write `metrics` to <out>/metrics.json with a "run" entry: the seed, every argument and
    the wall time since `prepare_run` (the results under examples/results/ hold these files)."""
    arguments = {k: v for k, v in vars(args).items() if k not in ("started", "argv")}
    run = {"seed": args.seed, "quick": args.quick, "device": args.device,
           "arguments": arguments, "wall_seconds": round(time.perf_counter() - args.started, 2)}
    return write_json(Path(out) / "metrics.json", dict(metrics, run=run))


def print_outputs(out: str | Path, metrics: dict | None = None) -> None:
    """Print the metrics (if given) and the files written to the output folder."""
    out = Path(out)
    if metrics:
        for key, value in metrics.items():
            if not isinstance(value, (dict, list)):
                print(f"  {key}: {value}")
    print(f"outputs written to {out.resolve()}/")
    for path in sorted(out.iterdir()):
        if path.is_file():
            print(f"  {path.name}")


# -- figures --------------------------------------------------------------------------------

def pyplot():
    """matplotlib.pyplot on the non-interactive Agg backend (works with no display)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save_figure(fig, path: str | Path, dpi: int = 100) -> Path:
    """Save `fig` as PNG (or the format of `path`'s suffix) with a tight box, then close it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    pyplot().close(fig)
    return path


def plot_batch_losses(ax, steps, loss, window: int, ylabel: str) -> None:
    """The loss of every batch (faint) and its mean over `window` batches, drawn at the mean
    step of the window, on a log scale."""
    def mean(values):
        return np.convolve(np.asarray(values, dtype=float), np.ones(window) / window, "valid")
    ax.plot(steps, loss, color="tab:blue", alpha=0.3, lw=0.8, label="loss per batch")
    ax.plot(mean(steps), mean(loss), color="tab:blue", label=f"mean of {window} batches")
    ax.set(yscale="log", xlabel="training step (batch)", ylabel=ylabel)


# -- checkpoints ----------------------------------------------------------------------------

def _storable(value: Any) -> Any:
    """Lists/tuples of numbers become NumPy arrays (compact in the .npz); other lists stay
    lists of storable items; dict keys become strings."""
    if isinstance(value, dict):
        return {str(k): _storable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
               for v in value):
            return np.asarray(value)
        return [_storable(v) for v in value]
    return value


def save_checkpoint(path: str | Path, model, optimizer=None, **state: Any) -> Path:
    """Save model (and optimizer) state plus extra `state` with nn.save (atomic .npz).

    Layout: {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "state": state}.
    Lists of numbers in `state` (e.g. a loss history) are stored as NumPy arrays (read them
    back with `as_list`); dict keys are stored as strings.
    """
    import nn
    checkpoint = {"model": model.state_dict(), "state": _storable(state)}
    if optimizer is not None:
        checkpoint["optimizer"] = optimizer.state_dict()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nn.save(checkpoint, path)
    return path


def load_checkpoint(path: str | Path, model, optimizer=None) -> dict:
    """Load a checkpoint written by `save_checkpoint` into `model` (and `optimizer`).

    Returns the extra state dict (lists come back as NumPy arrays; numbers as numbers).
    Raises FileNotFoundError naming the path when there is no checkpoint.
    """
    import nn
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint to resume from at {path}")
    checkpoint = nn.load(path)
    model.load_state_dict(checkpoint["model"])
    if optimizer is not None and "optimizer" in checkpoint:
        optimizer.load_state_dict(checkpoint["optimizer"])
    return dict(checkpoint.get("state", {}))


# Arguments that do not change what a run computes: a checkpoint may resume under others.
# "compile": a compiled step computes exactly what the eager one does, so a run may resume
# with or without it
NOT_CONFIG = ("out", "resume", "device", "started", "argv", "compile")


def run_config(args: argparse.Namespace, ignore: Iterable[str] = ()) -> dict:
    """The arguments that decide what a run computes, as JSON values: what a checkpoint must
    agree with before a run resumes from it."""
    skip = set(NOT_CONFIG) | set(ignore)
    return json.loads(json.dumps(_jsonable({k: v for k, v in vars(args).items()
                                            if k not in skip})))


def resume_command(args: argparse.Namespace | None) -> str:
    """The command line that continues this run: the same arguments, with --resume (which
    finds the checkpoints in the run's --out folder)."""
    if args is None:
        return "the same command with --resume"
    kept, skip = [], False
    for token in args.argv:
        if skip and not token.startswith("-"):
            skip = False
            continue
        skip = token == "--resume"
        if not skip and not token.startswith("--resume="):
            kept.append(token)
    return shlex.join(["python3", sys.argv[0], *kept, "--resume"])


def _rng_states(generators: dict) -> str:
    """minigrad's, NumPy's global and each named Generator's random state, as JSON text."""
    name, keys, position, has_gauss, gauss = np.random.get_state()
    return json.dumps({"minigrad": mg.get_rng_state().numpy().tolist(),
                       "numpy": [name, keys.tolist(), position, has_gauss, gauss],
                       "generators": {k: g.bit_generator.state for k, g in generators.items()}})


def _set_rng_states(text: str, generators: dict) -> None:
    states = json.loads(text)
    mg.set_rng_state(np.array(states["minigrad"], dtype=np.uint8))
    name, keys, position, has_gauss, gauss = states["numpy"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), position, has_gauss, gauss))
    for key, generator in generators.items():
        generator.bit_generator.state = states["generators"][key]


class Checkpoint:
    """One training run's checkpoint: saving it (when due, and on Ctrl-C) and resuming from it.

        with Checkpoint(out / CHECKPOINT_NAME, args, model, optimizer, scheduler) as checkpoint:
            state = checkpoint.resume()          # {} on a fresh start
            for step in range(state.get("step", 0), args.steps):
                ...one training step...
                checkpoint.step_end(due=(step + 1) % args.checkpoint_every == 0,
                                    step=step + 1, history=history)

    A checkpoint holds the model, optimizer and scheduler, the random states (minigrad's,
    NumPy's global one and the `generators` given by name), `run_config(args)` (less the
    arguments named in `ignore`) plus `config`, and the keyword `state` of `save`/`step_end`
    (the position in the data, the histories).
    Inside the `with`, Ctrl-C only asks to stop: the next `step_end` saves, prints the command
    that resumes, and exits with status 130; a second Ctrl-C stops at once, without saving.

    `resume_from`: the checkpoint to resume from (default: args.resume, None for a fresh run).
    `args` None (a script's training function called from Python): only `config` is checked.
    A missing checkpoint, or one whose configuration differs from this run's, stops the script
    with one line saying what differs and what to do.
    """

    def __init__(self, path: str | Path, args: argparse.Namespace | None, model, optimizer=None,
                 scheduler=None, generators: dict | None = None, config: dict | None = None,
                 ignore: Iterable[str] = (), resume_from: str | Path | None = "args"):
        self.path = Path(path)
        self.args = args
        self.model, self.optimizer, self.scheduler = model, optimizer, scheduler
        self.generators = generators or {}
        self.config = dict(run_config(args, ignore) if args else {}, **_jsonable(config or {}))
        self.resume_from = getattr(args, "resume", None) if resume_from == "args" else resume_from
        self.stop_requested = False
        self._previous_handler = None
        self._stop = SystemExit(130)             # raised by step_end after Ctrl-C

    # -- Ctrl-C ---------------------------------------------------------------------------
    def __enter__(self) -> "Checkpoint":
        try:
            self._previous_handler = signal.signal(signal.SIGINT, self._on_interrupt)
        except ValueError:                     # not the main thread: Ctrl-C stays as it was
            self._previous_handler = None
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        if self._previous_handler is not None:
            signal.signal(signal.SIGINT, self._previous_handler)
        if exc is self._stop:                    # after the progress bars have closed
            print(f"\ninterrupted: checkpoint saved to {self.path}; continue with:\n"
                  f"  {resume_command(self.args)}", file=sys.stderr, flush=True)
        elif self.stop_requested and exc_type is None:
            print("Ctrl-C came after the last training step: finishing the run (Ctrl-C again "
                  "stops it)", file=sys.stderr, flush=True)

    def _on_interrupt(self, signum, frame) -> None:
        if self.stop_requested:
            raise KeyboardInterrupt
        self.stop_requested = True
        print("\nCtrl-C: stopping at the end of this step to save a checkpoint (Ctrl-C again "
              "stops at once, without saving)", file=sys.stderr, flush=True)

    # -- saving and resuming --------------------------------------------------------------
    def save(self, **state: Any) -> Path:
        """Write the checkpoint now (atomically), with `state` beside the rest."""
        extra = {"scheduler": self.scheduler.state_dict()} if self.scheduler else {}
        return save_checkpoint(self.path, self.model, self.optimizer, **extra, **state,
                               run_config=json.dumps(self.config, sort_keys=True),
                               rng=_rng_states(self.generators))

    def step_end(self, due: bool, **state: Any) -> None:
        """Call between steps: saves when `due` or when Ctrl-C was pressed; after Ctrl-C,
        prints the resume command and exits."""
        if due or self.stop_requested:
            self.save(**state)
        if self.stop_requested:
            raise self._stop

    def resume(self) -> dict:
        """Restore everything from `resume_from` and return the saved `state` ({} when not
        resuming). Stops the script with one line when there is no checkpoint or its
        configuration differs from this run's."""
        if self.resume_from is None:
            return {}
        path = Path(self.resume_from)
        if not path.is_file():
            fail(f"--resume: no checkpoint at {path}; run without --resume to start training "
                 f"(or give --out the folder of the run to continue)")
        import nn
        saved = nn.load(path)["state"]
        if "run_config" not in saved:
            fail(f"--resume: {path} was written by an older version of this script (it has no "
                 f"configuration to check); start afresh without --resume")
        differences = _differences(json.loads(str(saved["run_config"])), self.config)
        if differences:
            fail(f"--resume: {path} was made with other settings ({'; '.join(differences)}); "
                 f"rerun with the checkpoint's settings, or start afresh in another --out")
        state = load_checkpoint(path, self.model, self.optimizer)
        if self.scheduler is not None:
            self.scheduler.load_state_dict(state["scheduler"])
        _set_rng_states(str(state.pop("rng")), self.generators)
        state.pop("run_config")
        print(f"resumed from {path}")
        return state


def resume_source(args: argparse.Namespace, path: Path) -> Path | None:
    """For scripts that keep one checkpoint per model beside each other: with --resume, `path`
    when it exists (a model not reached yet starts afresh); None without --resume. --resume
    with no checkpoint at all in the folder stops the script with one line."""
    if args.resume is None:
        return None
    if not any(Path(path).parent.glob("checkpoint*.npz")):
        fail(f"--resume: no checkpoint in {Path(path).parent}; run without --resume to start "
             f"training (or give --out the folder of the run to continue)")
    return path if Path(path).exists() else None


def _differences(saved: dict, current: dict) -> list[str]:
    """["--lr: 0.01 in the checkpoint, 0.001 now", ...] for every setting that differs."""
    lines = []
    for key in sorted(set(saved) | set(current)):
        if saved.get(key) != current.get(key):
            flag = "--" + key.replace("_", "-")
            lines.append(f"{flag}: {saved.get(key, 'unset')} in the checkpoint, "
                         f"{current.get(key, 'unset')} now")
    return lines


def as_list(values: Iterable) -> list[float]:
    """A loss history restored from a checkpoint (array, list or scalar) as a list of floats."""
    return [float(v) for v in np.atleast_1d(np.asarray(values))] if values is not None else []


def restore_history(template: dict, saved: dict | None = None) -> dict:
    """A training history shaped like `template` (lists and numbers): a fresh copy of it, or
    the values `saved` in a checkpoint, as the template's types (lists of numbers come back
    from the checkpoint as arrays)."""
    def restored(value, like):
        if isinstance(like, list):
            return as_list(value) if isinstance(value, np.ndarray) else list(value)
        return type(like)(value)
    if not saved:
        return {k: list(v) if isinstance(v, list) else v for k, v in template.items()}
    return {k: restored(saved[k], v) for k, v in template.items()}


def parse_args(parser: argparse.ArgumentParser, argv: list[str] | None,
               **quick) -> argparse.Namespace:
    """Parse `argv`; with --quick, the `quick` values replace the defaults (flags given on the
    command line still win) and the default folder is <default_out>-quick, so a smoke run never
    meets a full run's checkpoint. `args.argv` keeps the arguments (for the resume command)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    if args.quick:
        parser.set_defaults(**quick)
        args = parser.parse_args(argv)
    if args.out is None:
        default = getattr(parser, "default_out", "runs/example").format(**vars(args))
        args.out = Path(default + ("-quick" if args.quick else ""))
    args.argv = argv
    return args


def setting(default, help: str | None = None, kind=None):
    """A field of a script's Config dataclass. With a `help` text it is a command-line flag
    too (see `add_config_flags`), of type `kind`: the default's type unless given; a tuple of
    strings: the choices."""
    metadata = {} if help is None else {"help": help, "kind": kind or type(default)}
    return dataclasses.field(default=default, metadata=metadata)


def add_config_flags(parser: argparse.ArgumentParser, config_class) -> None:
    """For each field of the dataclass `config_class` made by `setting` with a help text: the
    flag --name (with dashes), its default named in the help. The flags default to None, so
    that `apply_flags` sets only the ones given."""
    for field in dataclasses.fields(config_class):
        if "help" in field.metadata:
            kind = field.metadata["kind"]
            choices = kind if isinstance(kind, tuple) else None
            parser.add_argument("--" + field.name.replace("_", "-"), dest=field.name,
                                default=None, type=str if choices else kind, choices=choices,
                                help=f"{field.metadata['help']} (default {field.default})")


def check_choices(config, where: str) -> None:
    """Raise ValueError naming `where` if a field of the dataclass `config` holds a value that
    is not one of the choices its `setting` lists (a flag checks its own; a checkpoint's value
    or a caller's does not pass through one)."""
    for field in dataclasses.fields(config):
        choices, value = field.metadata.get("kind"), getattr(config, field.name)
        if isinstance(choices, tuple) and value not in choices:
            raise ValueError(f"{where}: {field.name} must be {' or '.join(map(repr, choices))}, "
                             f"got {value!r}")


def make_config(config_class, args: argparse.Namespace | None, defaults: dict | None = None,
                saved: dict | None = None):
    """A run's Config: the dataclass's defaults, then `defaults` (--quick's, a model's own),
    then the values `saved` in a checkpoint (the fields it has), then the flags given."""
    config = config_class(**(defaults or {}))
    for key, value in (saved or {}).items():
        if hasattr(config, key):
            setattr(config, key, type(getattr(config, key))(value))
    return apply_flags(config, args)


def apply_flags(config, args: argparse.Namespace):
    """Set every field of the dataclass `config` whose flag was given (is not None in `args`)
    to the flag's value; return `config`."""
    for field in dataclasses.fields(config):
        value = getattr(args, field.name, None)
        if value is not None:
            setattr(config, field.name, value)
    return config
