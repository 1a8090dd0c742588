"""Plumbing shared by the example scripts, so that each script shows only its idea.

Every example follows one pattern:

    parser = base_parser(__doc__, default_out="runs/translate")
    parser.add_argument("--epochs", type=int, default=30)
    args = parser.parse_args(argv)
    out = prepare_run(args)                      # seeds minigrad + NumPy, makes the folder
    ...
    with LossBar(total=steps, desc="train") as bar:
        for ...:
            bar.update(loss.item())              # tqdm bar with the running loss
    save_checkpoint(out / "checkpoint.npz", model, optimizer, epoch=e)
    plt = pyplot()                               # matplotlib on the Agg backend
    save_figure(fig, out / "loss.png")
    write_metrics(out, metrics, args)            # metrics.json (atomic), with the run's
                                                 # seed, arguments and wall time
    print_outputs(out)

Flags given by `base_parser`: --seed, --device, --quick, --out, --resume.
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
import json  # noqa: E402
import math  # noqa: E402
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

def base_parser(description: str | None, default_out: str) -> argparse.ArgumentParser:
    """An ArgumentParser with the flags every example shares.

    --seed INT      seeds minigrad's RNG and NumPy's (default 0)
    --device STR    "cpu" (default) or "cuda" / "cuda:N" (needs CuPy and a GPU)
    --quick         a smoke run of a few seconds (tiny data, few steps)
    --out DIR       output folder for figures, metrics and checkpoints (default `default_out`)
    --resume [CKPT] continue from a checkpoint; without a path, <out>/checkpoint.npz

    The script's module docstring makes a good `description`.
    """
    parser = argparse.ArgumentParser(description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument("--device", default="cpu",
                        help='"cpu" (default) or "cuda" / "cuda:N" (needs CuPy and a GPU)')
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: tiny data and few steps, a few seconds")
    parser.add_argument("--out", type=Path, default=Path(default_out),
                        help=f"output folder (default: {default_out})")
    parser.add_argument("--resume", nargs="?", const="", default=None, metavar="CKPT",
                        help=f"resume from CKPT (default: <out>/{CHECKPOINT_NAME})")
    return parser


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
        print(f"{Path(sys.argv[0]).name}: error: --device {device}: {error}", file=sys.stderr)
        raise SystemExit(2) from None


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

    def write(self, message: str) -> None:
        """Print a line without breaking the bar."""
        self._bar.write(message)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> "LossBar":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


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
    arguments = {k: v for k, v in vars(args).items() if k != "started"}
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


def as_list(values: Iterable) -> list[float]:
    """A loss history restored from a checkpoint (array, list or scalar) as a list of floats."""
    return [float(v) for v in np.atleast_1d(np.asarray(values))] if values is not None else []


def parse_args(parser: argparse.ArgumentParser, argv: list[str] | None,
               **quick) -> argparse.Namespace:
    """Parse `argv`; with --quick, the `quick` values replace the defaults (flags given on the
    command line still win)."""
    args = parser.parse_args(argv)
    if args.quick:
        parser.set_defaults(**quick)
        args = parser.parse_args(argv)
    return args
