"""examples/g2p.py's recorded runs and the README text made from them.

    python examples/_g2p_report.py run NAME [g2p.py flags]   # train, keep the result as
                                                             # examples/results/NAME.json
    python examples/_g2p_report.py resume NAME               # go on with a run that stopped
                                                             # (its checkpoint), then keep it
    python examples/_g2p_report.py ship NAME                 # its best-on-dev weights, float16,
                                                             # as examples/data/g2p-model.npz,
                                                             # and its figures
    python examples/_g2p_report.py fit [FOLDER ...]          # each recorded run's kept
                                                             # weights (FOLDER/NAME/best.npz,
                                                             # default runs/docs) scored on a
                                                             # fixed sample of training words
    python examples/_g2p_report.py docs [--check]            # rewrite (or check) the g2p
                                                             # regions of examples/README.md

Recorded runs live in examples/results/g2p/, the published rows in
examples/results/published.json. Every g2p number in the README sits between
`<!-- g2p: KEY -->` and `<!-- /g2p -->` and is rendered here from the results files;
`--check` exits 1 when the README and the data differ.
Uncertainty: the standard error of a WER, √(p(1 − p)/n); a claim that run A beats run B rests
on the same words scored by both (`per_word` in the results): a paired bootstrap 95 % interval
of the WER difference and McNemar's exact test on the words where exactly one run is right.
"""

from __future__ import annotations

import _common  # noqa: F401  (makes the source checkout importable)

import datetime
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from dataclasses import fields
from pathlib import Path

import numpy as np

import g2p
import nn

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "examples" / "results" / "g2p"    # one file per recorded g2p.py run
README = ROOT / "examples" / "README.md"
SHIPPED = ROOT / "examples" / "data" / "g2p-model.npz"
FIGURES = ROOT / "examples" / "figures"
GOLDEN = ROOT / "tests" / "examples" / "golden" / "g2p_torch_trajectory.npz"
LEVERS = ("g2p-linear", "g2p-gru2", "g2p-lr1e-3", "g2p-dropout3", "g2p-dropout0",  # 30 min
          "g2p-hidden192", "g2p-batch64", "g2p-ema", "g2p-ls0", "g2p-transformer",  # each
          "g2p-additive", "g2p-locked", "g2p-batch256", "g2p-b256-lr5e-3",
          "g2p-location-aware", "g2p-ls2", "g2p-la-hidden192", "g2p-la-enc1",
          "g2p-la-wd5e-2", "g2p-la-first", "g2p-la-ema", "g2p-la-fed",
          "g2p-la-ls2", "g2p-la-lr2e-3", "g2p-la-embed128", "g2p-la-enc3",
          "g2p-la-wd1", "g2p-la-swa")
# runs with a longer budget: {run: the 30-minute run it is compared with}
LONGER = {"g2p-long": "g2p-linear", "g2p-long-dropout2": "g2p-additive",
          "g2p-la-long": "g2p-location-aware", "g2p-la-long-wd1": "g2p-la-wd1",
          "g2p-la-3h": "g2p-la-swa"}
SEEDS = {"g2p-linear-seed1": "g2p-linear",        # the same recipe and budget, another seed
         "g2p-dropout0-seed1": "g2p-dropout0", "g2p-additive-seed1": "g2p-additive",
         "g2p-location-aware-seed1": "g2p-location-aware",
         "g2p-location-aware-rerun": "g2p-location-aware",   # the same seed, run again
         "g2p-location-aware-seed1-rerun": "g2p-location-aware-seed1",
         "g2p-location-aware-xeon": "g2p-location-aware",    # the same seed, another machine
         "g2p-la-swa-seed1": "g2p-la-swa"}
# settings added after runs were recorded whose effect, absent from a record, was not today's
# default: {setting: the value the older runs had}
BEFORE_THE_SETTING = {"average_from": 0.0}
SCHEDULE = ("g2p-lr1e-3", "g2p-linear")      # two peak learning rates, the same budget
# runs of one budget that differ in a regulariser: (with it, or more of it; the run it is set
# against)
REGULARISED = (("g2p-la-long-wd1", "g2p-la-long"), ("g2p-la-long-wd2", "g2p-la-long"),
               ("g2p-la-long-wd2", "g2p-la-long-wd1"),
               ("g2p-la-swa", "g2p-location-aware-xeon"),    # the weights' mean, one machine
               ("g2p-la-swa", "g2p-la-swa-off"))

PUBLISHED = ROOT / "examples" / "results" / "published.json"   # numbers of others, with sources
FIT = RESULTS / "fit" / "training_words.json"   # each run's kept weights on training words
FIT_WORDS = 5000                                       # the fixed sample of training words
RUNS = ROOT / "runs" / "docs"      # the recorded runs' folders (weights, logs, figures)
STARTED = "started.json"            # in a run's folder: its record as known at the start


# -- recording -------------------------------------------------------------------------------

def _git(*args) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def record(name: str, arguments: list[str]) -> Path:
    """Run `python examples/g2p.py ARGUMENTS` into runs/docs/NAME (output in run.log) and keep
    its metrics with the command, commit, machine and load in examples/results/NAME.json.
    What is known at the start is kept in runs/docs/NAME/started.json, for `resume`."""
    out, result = start(name, arguments)
    return _train(out, result, arguments, "w")


def start(name: str, arguments: list[str]) -> tuple[Path, dict]:
    """A fresh folder RUNS/NAME holding started.json: the record as known before training."""
    out = RUNS / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    result = {"run": name, "command": " ".join(["python3", "examples/g2p.py", *arguments]),
              **_revision(), "machine": _machine(), "niceness": os.nice(0),
              "load_average_before": [round(x, 2) for x in os.getloadavg()]}
    _write(out / STARTED, json.dumps({**result, "arguments": arguments}, indent=1) + "\n")
    return out, result


def resume(name: str) -> Path:
    """Go on with the recorded run runs/docs/NAME that stopped before its end (a killed
    process, a machine that went down): g2p.py with the run's own flags and --resume from its
    checkpoint, which restores the weights, optimizer, weight mean, history and place in the
    epoch, so the run ends as it would have without the stop. The result says when and at
    which commit it went on."""
    out = RUNS / name
    if not (out / STARTED).is_file() or not (out / g2p.CHECKPOINT_NAME).is_file():
        raise SystemExit(f"_g2p_report.py resume: {out} holds no run started by "
                         f"`_g2p_report.py run {name}` with a checkpoint to go on from")
    started = json.loads((out / STARTED).read_text(encoding="utf-8"))
    arguments = started.pop("arguments")
    resumed = started.setdefault("resumed", [])
    resumed.append({"date": _now(), **_revision(), "machine": _machine()})
    _write(out / STARTED, json.dumps({**started, "arguments": arguments}, indent=1) + "\n")
    return _train(out, started, [*arguments, "--resume", str(out / g2p.CHECKPOINT_NAME)], "a")


def _train(out: Path, result: dict, arguments: list[str], mode: str) -> Path:
    start = time.perf_counter()
    with open(out / "run.log", mode, encoding="utf-8") as log:
        subprocess.run([sys.executable, str(ROOT / "examples" / "g2p.py"), *arguments, "--out",
                        str(out)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    # of this process only, when the run was resumed (the history has the whole run's)
    result.update(date=_now(), process_wall_seconds=round(time.perf_counter() - start, 1),
                  load_average_after=[round(x, 2) for x in os.getloadavg()],
                  metrics=json.loads((out / "metrics.json").read_text(encoding="utf-8")))
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{result['run']}.json"
    _write(path, json.dumps(result, indent=1) + "\n")
    return path


def _revision() -> dict:
    return {"commit": _git("rev-parse", "HEAD"),
            "uncommitted_changes": bool(_git("status", "--porcelain", "--", "minigrad", "nn",
                                             "examples/g2p.py", "examples/_common.py"))}


def _machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    return {"cpu": cpu, "logical_cpus": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "1")}


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def ship(name: str) -> Path:
    """The recorded run's best-on-dev weights as float16, for `g2p.py --say` after install, and
    its figures as examples/figures/g2p_*.png."""
    run = RUNS / name
    for figure in ("curves", "attention"):
        shutil.copyfile(run / f"{figure}.png", FIGURES / f"g2p_{figure}.png")
    saved = nn.load(run / "best.npz")
    saved["model"] = {k: np.asarray(v, dtype=np.float16) for k, v in saved["model"].items()}
    saved["state"]["run"] = name
    tmp = SHIPPED.with_name(SHIPPED.stem + ".tmp.npz")
    nn.save(saved, tmp)
    tmp.replace(SHIPPED)
    return SHIPPED


def fit(folders: list[Path]) -> Path:
    """Greedy WER of each recorded run's best-on-dev weights on FIT_WORDS training words (one
    fixed random sample, the same for every run), beside its dev WER: how well the model fits
    the words it trained on, against the words it did not see. Runs whose folder is not found
    keep their earlier entry."""
    lexicon, parts = g2p.load_split()
    sample = sorted(np.random.default_rng(0).choice(parts["train"], FIT_WORDS, replace=False))
    scores = json.loads(FIT.read_text(encoding="utf-8")) if FIT.exists() else {}
    for name, run in load_runs().items():
        path = next((Path(f) / name / g2p.BEST_NAME for f in folders
                     if (Path(f) / name / g2p.BEST_NAME).exists()), None)
        if path is None:
            continue
        saved = nn.load(path)
        config = g2p.Config(**{k: v for k, v in saved["state"]["config"].items()
                               if k in {f.name for f in fields(g2p.Config)}})
        letters, phonemes = (g2p.Vocab(str(s) for s in saved["state"][k])
                             for k in ("letters", "phonemes"))
        model = g2p.build_model(config, len(letters), len(phonemes))
        model.load_state_dict({k: np.asarray(v, dtype=np.float32)
                               for k, v in saved["model"].items()})
        train = g2p.evaluate(g2p.pronounce(model, sample, letters, phonemes)[0], lexicon)
        scores[name] = {"train_sample_wer": train["wer"], "train_sample_per": train["per"],
                        "train_sample_words": len(sample), "step": int(saved["state"]["step"])}
        print(f"{name}: training words WER {pct(train['wer'])}, dev WER "
              f"{pct(run['metrics']['dev_greedy']['wer'])}")
    FIT.parent.mkdir(parents=True, exist_ok=True)
    _write(FIT, json.dumps(dict(sorted(scores.items())), indent=1) + "\n")
    return FIT


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


# -- statistics ------------------------------------------------------------------------------

def standard_error(p: float, n: int) -> float:
    """Standard error of a proportion over n independent words: √(p(1 − p)/n)."""
    return math.sqrt(p * (1.0 - p) / n)


def paired(a: str, b: str, resamples: int = 10000, seed: int = 0) -> dict:
    """Runs A and B scored on the same words (`per_word` strings, "1" = correct).

    difference = WER(A) − WER(B); ci95: the 2.5 and 97.5 percentiles of that difference over
    `resamples` bootstrap samples of the words (drawn with replacement: only how many words of
    each kind — A alone wrong, B alone wrong, other — are drawn matters, a multinomial draw);
    mcnemar_p: two-sided exact binomial test that the a_only_wrong and b_only_wrong counts
    come from a fair coin.
    """
    if len(a) != len(b):
        raise ValueError(f"paired: the runs scored different word lists ({len(a)} and "
                         f"{len(b)} words)")
    x, y = np.frombuffer(a.encode(), np.uint8) == 49, np.frombuffer(b.encode(), np.uint8) == 49
    n, a_only, b_only = len(x), int(np.sum(~x & y)), int(np.sum(x & ~y))
    draws = np.random.default_rng(seed).multinomial(
        n, [a_only / n, b_only / n, 1 - (a_only + b_only) / n], size=resamples)
    differences = (draws[:, 0] - draws[:, 1]) / n
    k, m = min(a_only, b_only), a_only + b_only
    tail = sum(math.comb(m, i) for i in range(k + 1)) / 2 ** m if m else 1.0
    return {"difference": (a_only - b_only) / n, "a_only_wrong": a_only, "b_only_wrong": b_only,
            "ci95": [float(v) for v in np.percentile(differences, [2.5, 97.5])],
            "mcnemar_p": min(1.0, 2 * tail)}


# -- rendering -------------------------------------------------------------------------------

def default_run(runs: dict) -> str:
    """The lever run with the lowest dev WER: the default recipe (test plays no part)."""
    return min((name for name in LEVERS if name in runs),
               key=lambda name: runs[name]["metrics"]["dev_greedy"]["wer"])


def load_runs() -> dict:
    """{name: results record} of every recorded g2p run."""
    return {p.stem: json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(RESULTS.glob("*.json"))}


def pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def wer_se(scores: dict) -> str:
    return f"{pct(scores['wer'])} ± {100 * standard_error(scores['wer'], scores['words']):.2f}"


def describe(c: dict) -> str:
    extra = (f", dropout {c['dropout']:g}, batch {c['batch_size']}"
             + (", locked dropout" if c.get("dropout_kind") == "locked" else "")
             + (f", weights averaged (EMA {c['ema']:g})" if c.get("ema") else "")
             + (f", weights averaged from {100 * c['average_from']:g} % of the run"
                if c.get("average_from") else "")
             + (f", weight decay {c['weight_decay']:g} (AdamW)" if c.get("weight_decay") else "")
             + (", one pronunciation per word" if c.get("pronunciations") == "first" else ""))
    if c.get("model") == "transformer":
        return (f"Transformer (pre-LN) {c['layers']} + {c['layers']} layers × {c['d_model']}, "
                f"{c['heads']} heads, FFN {c['ff_dim']}" + extra)
    readout = "second decoder GRU" if c["readout"] == "gru" else "tanh(W_c [h; c])"
    fed = " fed h̃_{t−1}" if c.get("decoder_input") == "fed" else ""
    return (f"BiGRU {c['enc_layers']}×{c['enc_hidden']}, GRU {c['dec_hidden']}{fed}, "
            f"{c['attention']} attention, readout {readout}" + extra)


def published() -> dict:
    return json.loads(PUBLISHED.read_text(encoding="utf-8"))["g2p"]


def _recorded_names(seeds: bool = True) -> list[str]:
    """Every run the lists above name, each once: levers, longer and regularised runs, and
    (with `seeds`) the runs of other seeds."""
    names = [*LEVERS, *LONGER, *(run for pair in REGULARISED for run in pair)]
    return list(dict.fromkeys(names + (list(SEEDS) if seeds else [])))


def region_table(runs: dict) -> str:
    lines = ["| system | model | test WER | test PER | training cost |", "|---|---|---|---|---|"]
    lines += [f"| {r['system']} | {r['model']} | {pct(r['wer'])} | — | not stated |"
              for r in published()["references"]]
    for name in _recorded_names(seeds=False):
        if name not in runs:
            continue
        m = runs[name]["metrics"]
        beam = m["test_beam"]
        lines.append(f"| minigrad `{name}`{' (default)' if name == default_run(runs) else ''} | "
                     f"{describe(m['config'])}; beam {m['config']['beam']} | {wer_se(beam)} | "
                     f"{pct(beam['per'])} | {m['train_seconds'] / 60:.0f} CPU-minutes, one "
                     f"core ({m['steps']:,} steps) |")
    return "\n".join(lines)


def region_levers(runs: dict) -> str:
    lines = ["| run | change from the default | parameters | steps | training loss, last 50 "
             "steps | best step | dev WER (greedy) | test WER greedy | test WER beam | test PER "
             "beam | wall time |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in LEVERS:
        if name not in runs:
            continue
        r, m = runs[name], runs[name]["metrics"]
        change = _differences(m["config"]) or "(defaults)"
        lines.append(f"| `{name}` | `{change}` | {m['n_parameters']:,} | {m['steps']:,} | "
                     f"{m['final_loss']:.3f} | {m['best_step']:,} | {pct(m['dev_greedy']['wer'])} | "
                     f"{wer_se(m['test_greedy'])} | {wer_se(m['test_beam'])} | "
                     f"{pct(m['test_beam']['per'])} | {r['process_wall_seconds'] / 60:.0f} min |")
    return "\n".join(lines)


def _differences(config: dict) -> str:
    """g2p.py's flags that turn today's defaults (the model's own) into `config` (a setting
    newer than the run had its default then)."""
    return " ".join(_flags(config))


def _flags(config: dict) -> list[str]:
    """`config`'s settings that differ from today's defaults, each as its flag."""
    default = g2p.Config(**(g2p.TRANSFORMER_DEFAULTS if config.get("model") == "transformer"
                            else {}))
    flags = []
    for f in fields(g2p.Config):
        value = config.get(f.name, BEFORE_THE_SETTING.get(f.name, getattr(default, f.name)))
        if value != getattr(default, f.name):
            flags.append(_flag(f.name, value))
    return flags


def _flag(name: str, value) -> str:
    return f"--{name.replace('_', '-')} {value:g}" if isinstance(value, float) else \
        f"--{name.replace('_', '-')} {value}"


def _changed_flags(config: dict, reference: dict) -> str:
    """The flags, besides the budget and how often dev is scored, that turn the recipe of
    `reference` into that of `config`. A setting a run's record lacks (recorded before the
    setting existed) had the effect BEFORE_THE_SETTING gives, else its default's."""
    return " ".join(_flag(f.name, config[f.name]) for f in fields(g2p.Config)
                    if f.name in config and config[f.name] != reference.get(
                        f.name, BEFORE_THE_SETTING.get(f.name, f.default))
                    and f.name not in ("minutes", "eval_every"))


def _paired_cells(runs: dict, a: str, b: str) -> list[str]:
    """Table cells of run A against run B, on dev (greedy) and on test (beam): WER(A) − WER(B)
    in points with its paired 95 % bootstrap interval, and McNemar's p."""
    cells = []
    for key in ("dev_greedy", "test_beam"):
        p = paired(runs[a]["metrics"][key]["per_word"], runs[b]["metrics"][key]["per_word"])
        lo, hi = p["ci95"]
        cells += [f"{100 * p['difference']:+.2f} [{100 * lo:+.2f}, {100 * hi:+.2f}]",
                  f"{p['mcnemar_p']:.2g}"]
    return cells


def _paired_table(runs: dict, pairs: list, second: str) -> str:
    """A table of run A against run B for each (A, B) in `pairs` (`second` names column B),
    with `_paired_cells`."""
    lines = [f"| run | {second} | dev (greedy): difference [95 % interval] | McNemar p | "
             "test (beam): difference [95 % interval] | McNemar p |", "|---|---|---|---|---|---|"]
    lines += [f"| `{a}` | `{b}` | " + " | ".join(_paired_cells(runs, a, b)) + " |"
              for a, b in pairs]
    return "\n".join(lines)


def region_verdict(runs: dict) -> str:
    recorded = [name for name in LEVERS if name in runs]
    chosen = default_run(runs)
    m = runs[chosen]["metrics"]
    beam = m["test_beam"]
    blstm = published()["blstm_standard_split_wer"]
    target = "below" if beam["wer"] < blstm else "not below"
    text = (f"The default is the run with the lowest dev WER, `{chosen}`"
            + (" (the only lever recorded so far)." if len(recorded) == 1 else "."))
    text += (f" Its test WER with beam {m['config']['beam']}, {wer_se(beam)} (± one standard "
             f"error), is {target} the {pct(blstm)} of Yao & Zweig's BiLSTM.")
    others = [other for other in recorded if other != chosen]
    if others:
        text += (f" Against each other lever, on the same words: the WER difference "
                 f"`{chosen}` − lever in points, with its 95 % paired bootstrap interval, and "
                 f"McNemar's p (negative: `{chosen}` makes fewer errors).\n\n"
                 "| lever | dev (greedy): difference [95 % interval] | McNemar p | "
                 "test (beam): difference [95 % interval] | McNemar p |\n"
                 "|---|---|---|---|---|")
        for other in others:
            text += f"\n| `{other}` | " + " | ".join(_paired_cells(runs, chosen, other)) + " |"
    seeds = [(a, b) for a, b in SEEDS.items() if a in runs and b in runs]
    if seeds:
        text += ("\n\nHow far a run moves with nothing but its seed, or with nothing changed "
                 "(the CPU-time budget lands the schedule elsewhere): a difference between "
                 "levers smaller than these is no evidence for either, since the paired tests "
                 "cover the choice of words, not of seed or run.\n\n"
                 "| run | repeats | with | dev WER difference |\n|---|---|---|---|")
        for other, first in seeds:
            gap = abs(runs[other]["metrics"]["dev_greedy"]["wer"]
                      - runs[first]["metrics"]["dev_greedy"]["wer"])
            text += (f"\n| `{other}` | `{first}` | {_repeat_kind(runs, other, first)} | "
                     f"{100 * gap:.2f} points |")
    return text


def _repeat_kind(runs: dict, name: str, first: str, seed: bool = False) -> str:
    """How run `name` repeats run `first`: the same seed or another (`seed`: which), and on
    which machine when it is not the first run's."""
    a, b = runs[name], runs[first]
    same = a["metrics"]["run"]["seed"] == b["metrics"]["run"]["seed"]
    how = ("the same seed" if same else f"seed {a['metrics']['run']['seed']}" if seed
           else "another seed")
    cpu = a["machine"]["cpu"]
    return how if cpu == b["machine"]["cpu"] else f"{how}, on another machine ({cpu})"


def region_longer(runs: dict) -> str:
    """Each longer run against the 30-minute run of the same recipe: its budget and steps, dev
    along the way, the end on dev and test, and the two paired."""
    rows, pairs, row = [], [], next(r for r in published()["references"]
                                    if r["system"].startswith("g2p-seq2seq"))
    for name, short in LONGER.items():
        if name not in runs or short not in runs:
            continue
        long_m, short_m = runs[name]["metrics"], runs[short]["metrics"]
        at_30 = [wer for seconds, wer in zip(long_m["curve"]["eval_seconds"],
                                             long_m["curve"]["dev_wer"])
                 if seconds <= short_m["train_seconds"] + 1]
        changed = _changed_flags(long_m["config"], short_m["config"])
        halfway = (f"{pct(at_30[-1])} (learning rate "
                   f"{100 * _lr_share(long_m, short_m['train_seconds']):.0f} % of the peak)"
                   if at_30 else "—")
        gap = long_m["test_beam"]["wer"] - row["wer"]
        rows.append(
            f"| `{name}` | `{short}`" + (f" with `{changed}`" if changed else "")
            + f" | {long_m['train_seconds'] / 60:.0f} CPU-min | {long_m['steps']:,} "
            f"({long_m['epochs']:.1f}) against {short_m['steps']:,} ({short_m['epochs']:.1f}) | "
            f"{halfway} | {pct(long_m['dev_greedy']['wer'])} at step "
            f"{long_m['best_step']:,} against {pct(short_m['dev_greedy']['wer'])} | "
            f"{wer_se(long_m['test_beam'])} against {wer_se(short_m['test_beam'])} | "
            f"{long_m['final_loss']:.3f} against {short_m['final_loss']:.3f} | "
            f"{abs(100 * gap):.2f} points {'behind' if gap > 0 else 'ahead'} |")
        pairs.append((name, short))
    if not rows:
        return "(no longer run recorded yet)"
    return ("Each longer run trains the recipe of a 30-minute run for a longer budget of CPU "
            "time; its learning rate follows the same warm-up and cosine decay stretched over "
            "that budget. The last column is the distance of its test WER from the g2p-seq2seq "
            f"Transformer's published {pct(row['wer'])} (whose training time is not stated).\n\n"
            "| run | recipe | budget | steps (epochs) | dev WER after the shorter run's budget | "
            "dev WER (greedy), kept | test WER (beam) | training loss, last 50 steps | "
            "test against g2p-seq2seq |\n|---|---|---|---|---|---|---|---|---|\n"
            + "\n".join(rows)
            + "\n\nPaired, longer run − 30-minute run, in points on the same words:\n\n"
            + _paired_table(runs, pairs, "against"))


def region_seeds(runs: dict) -> str:
    """Each repeat of a recipe (another seed, or the same one run again) against its first
    run: how far apart chance alone puts two runs, beside the other differences measured."""
    rows, pairs = [], []
    for name, first in SEEDS.items():
        if name not in runs or first not in runs:
            continue
        a, b = runs[name]["metrics"], runs[first]["metrics"]
        how = _repeat_kind(runs, name, first, seed=True)
        rows.append(f"| `{name}` | `{first}` | {how} | {a['steps']:,} against {b['steps']:,} | "
                    f"{pct(a['dev_greedy']['wer'])} against {pct(b['dev_greedy']['wer'])} | "
                    f"{wer_se(a['test_beam'])} against {wer_se(b['test_beam'])} |")
        pairs.append((name, first))
    if not rows:
        return "(no second seed recorded yet)"
    return ("A repeat with another seed draws another initialisation, dropout masks and batch "
            "order; a repeat with the same seed draws the same ones, but the budget is CPU time, "
            "so the steps' speed moves the learning-rate schedule and the last step; on another "
            "machine the same CPU-minutes hold another number of steps.\n\n"
            "| run | repeats | with | steps | dev WER (greedy) | test WER (beam) |\n"
            "|---|---|---|---|---|---|\n" + "\n".join(rows)
            + "\n\nPaired, repeat − first run, in points on the same words:\n\n"
            + _paired_table(runs, pairs, "first run"))


def region_regularised(runs: dict) -> str:
    """Runs of one budget with and without a regulariser (or with more and less of it), side by
    side and paired."""
    pairs = [(a, b) for a, b in REGULARISED if a in runs and b in runs]
    if not pairs:
        return "(no regularised longer run recorded yet)"
    rows = []
    fit = json.loads(FIT.read_text(encoding="utf-8")) if FIT.exists() else {}
    for a, b in pairs:
        m, n = runs[a]["metrics"], runs[b]["metrics"]
        fitted = [pct(fit[r]["train_sample_wer"]) if r in fit else "—" for r in (a, b)]
        rows.append(f"| `{a}` | `{b}` | `{_changed_flags(m['config'], n['config'])}` | "
                    f"{m['train_seconds'] / 60:.0f} CPU-min | {m['steps']:,} against "
                    f"{n['steps']:,} | {fitted[0]} against {fitted[1]} | "
                    f"{pct(m['dev_greedy']['wer'])} against {pct(n['dev_greedy']['wer'])} | "
                    f"{wer_se(m['test_beam'])} against {wer_se(n['test_beam'])} |")
    return ("| run | against | change | budget | steps | training words wrong (sample) | "
            "dev WER (greedy) | test WER (beam) |\n|---|---|---|---|---|---|---|---|\n"
            + "\n".join(rows) + "\n\nPaired, each run − the one it is set against, in points "
            "on the same words:\n\n" + _paired_table(runs, pairs, "against"))


def region_schedule(runs: dict) -> str:
    """Two peak learning rates side by side: dev WER halfway and at the end."""
    low, high = SCHEDULE
    if low not in runs or high not in runs:
        return "(no second learning rate recorded yet)"
    a, b = runs[low]["metrics"], runs[high]["metrics"]
    half = min(a["curve"]["eval_step"][-1], b["curve"]["eval_step"][-1]) // 2

    def dev_at(m: dict, step: int) -> tuple[int, float]:
        curve = m["curve"]
        k = min(range(len(curve["eval_step"])), key=lambda i: abs(curve["eval_step"][i] - step))
        return curve["eval_step"][k], curve["dev_wer"][k]
    (sa, wa), (sb, wb) = dev_at(a, half), dev_at(b, half)
    return (f"`{low}` (peak {a['config']['lr']:g}) against `{high}` (peak "
            f"{b['config']['lr']:g}): dev WER (greedy) {pct(wa)} against {pct(wb)} halfway "
            f"(steps {sa:,} and {sb:,}), {pct(a['dev_greedy']['wer'])} against "
            f"{pct(b['dev_greedy']['wer'])} at the kept steps; training loss of the last 50 "
            f"steps {a['final_loss']:.3f} against {b['final_loss']:.3f}.")


def _lr_share(metrics: dict, seconds: float) -> float:
    """The run's learning rate after `seconds` of training, as a share of its peak."""
    config = g2p.Config(**{**metrics["config"], "lr": 1.0})
    return g2p.learning_rate(config, g2p.run_progress(config, 0, seconds))


def region_model(runs: dict) -> str:
    """The default run's model and recipe, from its recorded configuration."""
    c = runs[default_run(runs)]["metrics"]["config"]
    readout = ("`h̃_t = tanh(W_c [h_t; c_t])`" if c["readout"] == "linear" else
               "a second decoder GRU over `[h_t; c_t]`, which gives the decoder a memory of "
               "where it attended")
    attention = {"dot": "dot attention `(h_t · W_k s_j)/√H`",
                 "additive": f"additive attention (width {c['attention_dim']})",
                 "location-aware": f"location-aware attention (`nn.LocationAwareAttention`: "
                                   f"additive, width {c['attention_dim']}, whose scores also "
                                   f"see {c.get('location_filters')} filters of width "
                                   f"{c.get('location_width')} slid over the previous "
                                   f"phoneme's weights)"}[c["attention"]]
    locked = (" (locked: one draw per word and feature)" if c.get("dropout_kind") == "locked"
              else "")
    reads = ("the previous phoneme and the previous step's readout `h̃_{t−1}` (input feeding, "
             "`--decoder-input fed`; it then runs one step at a time)"
             if c.get("decoder_input") == "fed" else "the previous phoneme")
    return (f"letter embeddings ({c['embed_dim']}) → {c['enc_layers']}-layer bidirectional "
            f"`nn.GRU` ({c['enc_hidden']} per direction) → a GRU decoder ({c['dec_hidden']}) "
            f"started from `tanh(W [→s_S; ←s_1])` that reads {reads}; "
            f"{attention} over the encoder states; then the readout {readout} "
            f"(`--readout {c['readout']}`); `softmax(W_o h̃_t)`. Cross-entropy with label "
            f"smoothing {c['label_smoothing']:g}, dropout {c['dropout']:g}"
            f"{locked}"
            f", Adam with a "
            f"{100 * c['warmup']:g} % warm-up and cosine decay to 5 % of the peak {c['lr']:g}, "
            f"gradient norm clipped at {c['clip']:g}, batches of {c['batch_size']} words of one "
            f"exact length (no source padding)"
            + (f"; the weights scored and kept are the mean of those after each step from "
               f"{100 * c['average_from']:g} % of the run on" if c.get("average_from") else ""))


def region_curve(runs: dict) -> str:
    m = runs[default_run(runs)]["metrics"]
    c = m["curve"]
    lines = ["| step | training (CPU min) | dev WER | dev PER |", "|---|---|---|---|"]
    for step, seconds, wer, per in zip(c["eval_step"], c["eval_seconds"], c["dev_wer"],
                                       c["dev_per"]):
        best = " (kept)" if step == m["best_step"] else ""
        lines.append(f"| {step:,}{best} | {seconds / 60:.1f} | {pct(wer)} | {pct(per)} |")
    return "\n".join(lines)


def region_errors(runs: dict) -> str:
    lines = ["| word | model output (greedy) | reference(s) | edit distance |",
             "|---|---|---|---|"]
    for e in runs[default_run(runs)]["metrics"]["hardest_errors"][:12]:
        lines.append(f"| {e['word']} | {e['output']} | {' / '.join(e['references'])} | "
                     f"{e['distance']} |")
    return "\n".join(lines)


def region_figures(runs: dict) -> str:
    """The default run's figures, once `ship` has copied them."""
    shown = [f"![{text}](figures/g2p_{name}.png)" for name, text in (
        ("curves", "training loss and dev error of the default run"),
        ("attention", "the default model's attention on four words"))
        if (FIGURES / f"g2p_{name}.png").exists()]
    return "\n\n".join(shown) or "(figures appear with `_g2p_report.py ship`)"


def region_split(runs: dict) -> str:
    m = runs[default_run(runs)]["metrics"]
    w = m["words"]
    return (f"train {w['train']:,} words ({m['train_pronunciations']:,} pronunciations), dev "
            f"{w['dev']:,} words, test {w['test']:,} words")


def region_overview(runs: dict) -> str:
    chosen = default_run(runs)
    m = runs[chosen]["metrics"]
    return (f"[`g2p.py`](g2p.py): spelling to pronunciation on the CMU Pronouncing Dictionary's "
            f"standard split (shipped): a bidirectional `nn.GRU` encoder, a GRU decoder with "
            f"attention, choices made on dev, test scored once; {m['train_seconds'] / 60:.0f} "
            f"CPU-minutes of training ({runs[chosen]['process_wall_seconds'] / 60:.0f} min in "
            f"all on the shared machine): test WER {wer_se(m['test_beam'])} with beam "
            f"{m['config']['beam']}, {pct(m['test_greedy']['wer'])} greedy (PER "
            f"{pct(m['test_beam']['per'])}); Yao & Zweig's BiLSTM: "
            f"{pct(published()['blstm_standard_split_wer'])}.")


def region_parity(runs: dict) -> str:
    """The stored PyTorch trajectory against minigrad's (written by g2p_torch_parity.py)."""
    lines = ["| attention | parameters | loss at step 1 → 20 (PyTorch) | largest relative "
             "difference, minigrad vs PyTorch |", "|---|---|---|---|"]
    for attention, run in nn.load(GOLDEN).items():
        ours, theirs = np.asarray(run["minigrad_losses"]), np.asarray(run["torch_losses"])
        size = sum(np.asarray(w).size for w in run["weights"].values())
        lines.append(f"| {attention} | {size:,} | {theirs[0]:.4f} → {theirs[-1]:.4f} | "
                     f"{np.max(np.abs(ours - theirs) / np.abs(theirs)):.1e} |")
    return "\n".join(lines)


def region_fit(runs: dict) -> str:
    """Training-word WER against dev WER of each run `fit` scored."""
    scores = json.loads(FIT.read_text(encoding="utf-8")) if FIT.exists() else {}
    lines = ["| run | training words WER (greedy, sample) | dev WER (greedy) | gap | training "
             "loss, last 50 steps |", "|---|---|---|---|---|"]
    for name in [*LEVERS, *LONGER, *SEEDS]:
        if name in scores and name in runs:
            m, f = runs[name]["metrics"], scores[name]
            lines.append(f"| `{name}` | {pct(f['train_sample_wer'])} | "
                         f"{pct(m['dev_greedy']['wer'])} | "
                         f"{100 * (m['dev_greedy']['wer'] - f['train_sample_wer']):.1f} points | "
                         f"{m['final_loss']:.3f} |")
    return "\n".join(lines) if len(lines) > 2 else "(no run scored on training words yet)"


def region_commands(runs: dict) -> str:
    """The command that records each run again with today's g2p.py: its settings that differ
    from today's defaults, and its seed."""
    default = default_run(runs)
    lines = ["```bash"]
    for name in _recorded_names():
        if name not in runs:
            continue
        m = runs[name]["metrics"]
        seed = m["run"]["seed"]
        words = ["nice -n 10 python3 examples/_g2p_report.py run", name, *_flags(m["config"]),
                 *([f"--seed {seed}"] if seed else [])]
        lines.append(" ".join(words) + ("   # the default" if name == default else ""))
    return "\n".join(lines + ["```"])


def shipped_run() -> str | None:
    """The recorded run the shipped model's weights come from (None: nothing shipped)."""
    return nn.load(SHIPPED)["state"]["run"] if SHIPPED.exists() else None


def region_finish(runs: dict) -> str:
    """The commands that turn recorded runs into the fit table, the shipped model (from the
    run it was made from) and these docs."""
    shipped = shipped_run() or default_run(runs)
    ship = f"python3 examples/_g2p_report.py ship {shipped}"
    return "\n".join([
        "```bash",
        "python3 examples/_g2p_report.py fit              # kept weights on training words "
        "(results/g2p/fit/)",
        f"{ship:<48} # its best-on-dev weights, float16, ≤ 10 MB",
        "python3 examples/_g2p_report.py docs             # the tables of this section from "
        "the results",
        "```"])


REGIONS = {"overview": region_overview, "fit": region_fit, "parity": region_parity,
           "table": region_table, "levers": region_levers, "verdict": region_verdict,
           "curve": region_curve, "errors": region_errors, "split": region_split,
           "figures": region_figures, "longer": region_longer, "model": region_model,
           "seeds": region_seeds, "schedule": region_schedule, "regularised": region_regularised,
           "commands": region_commands, "finish": region_finish}
REGION = re.compile(r"(<!-- g2p: (\S+) -->\n)(.*?)(<!-- /g2p -->)", re.S)


def render(text: str, runs: dict) -> str:
    """`text` with every g2p region rendered again from `runs`."""
    def body(key: str) -> str:
        if key not in ("table", "parity") and not any(name in runs for name in LEVERS):
            return "(no g2p run recorded yet)"
        return REGIONS[key](runs)
    return REGION.sub(lambda m: m.group(1) + body(m.group(2)).rstrip("\n") + "\n"
                      + m.group(4), text)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"] and len(argv) > 1:
        print(record(argv[1], argv[2:]))
    elif argv[:1] == ["resume"] and len(argv) == 2:
        print(resume(argv[1]))
    elif argv[:1] == ["fit"]:
        print(fit([Path(f) for f in argv[1:]] or [RUNS]))
    elif argv[:1] == ["ship"] and len(argv) == 2:
        print(ship(argv[1]))
    elif argv[:1] == ["docs"]:
        text = README.read_text(encoding="utf-8")
        new = render(text, load_runs())
        if "--check" in argv:
            if new != text:
                print(f"{README}: g2p regions out of date with examples/results/g2p/")
                return 1
        elif new != text:
            _write(README, new)
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
