"""Run the learning path's lessons as plain scripts and report their checks.

    python -m learn.run                 # every step with YOUR code (learn/exercises/)
    python -m learn.run 3 5             # steps 3 and 5 only
    python -m learn.run --solutions     # every step with the worked solutions: all checks pass
    python -m learn.run --stubs         # for each exercise, the stub in place of its solution
                                        # (solutions elsewhere): its check must fail, naming it

Each lesson runs in its own process with a non-interactive matplotlib backend (figures are
saved with --figures DIR). With --solutions the run fails unless every exercise's check passed
and every step finished within --max-seconds, and it records each step's time in
learn/timings.json (and the line of step times in learn/README.md). With --stubs it fails
unless every exercise's check failed with the "not written yet" message naming that exercise,
and nothing crashed anywhere else. Exit status 0 means the run is what the mode promises.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import runpy
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MAX_SECONDS = 60.0                      # the path's promise: each step runs within a minute
TIMINGS = HERE / "timings.json"
README = HERE / "README.md"                 # its step times are written from TIMINGS
TIMES_BEGIN, TIMES_END = "<!-- times from timings.json -->", "<!-- /times -->"
# One BLAS thread: the lessons' matrices are small, and several BLAS threads spin-waiting on
# each other are many times slower once other processes share the cores. An explicit setting
# in the environment wins.
ONE_BLAS_THREAD = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                          "MKL_NUM_THREADS")}


def lessons() -> dict[int, Path]:
    """Step number -> lesson file (learn/NN_name.py)."""
    return {int(path.name[:2]): path for path in sorted(HERE.glob("[0-9][0-9]_*.py"))}


def module_name(lesson: Path) -> str:
    """The exercise/solution/check module name of a lesson: 03_gru.py -> step03_gru."""
    return f"step{lesson.stem}"


def exercises_of(lesson: Path) -> dict[str, tuple[str, ...]]:
    """Exercise number -> the names it asks for, from the step's check module."""
    checks = importlib.import_module(f"learn.checks.{module_name(lesson)}")
    return dict(checks.EXERCISES)


# -- the child process: one lesson, one substitution ------------------------------------------

def _substitute(mode: str, stub: str | None) -> None:
    """Load a fresh copy of every learn/exercises/stepNN_*.py as the module that the lessons
    and checks import, and in "solutions" mode set each exercise's names in it to the
    solution's, except those of exercise `stub`, which stay the stubs. The copy's own given
    code then calls the substituted names. "mine" leaves the learner's files as they are."""
    if mode == "mine":
        return
    package = importlib.import_module("learn.exercises")
    for lesson in lessons().values():
        name = module_name(lesson)
        full = f"learn.exercises.{name}"
        spec = importlib.util.spec_from_file_location(full, HERE / "exercises" / f"{name}.py")
        swapped = importlib.util.module_from_spec(spec)
        sys.modules[full] = swapped                     # solutions import given code from it
        setattr(package, name, swapped)
        spec.loader.exec_module(swapped)
        solution = importlib.import_module(f"learn.solutions.{name}")
        for number, names in exercises_of(lesson).items():
            if number != stub:
                for attribute in names:
                    setattr(swapped, attribute, getattr(solution, attribute))


def _child(lesson: Path, mode: str, stub: str | None, result_path: Path,
           figures: Path | None) -> None:
    """Run one lesson in this process and write what happened as JSON to `result_path`."""
    from learn.checks._core import PASSED, CheckFailed
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _substitute(mode, stub)
    result: dict = {"status": "ok"}
    start = time.perf_counter()
    try:
        runpy.run_path(str(lesson), run_name="__main__")
    except CheckFailed as failure:
        result = {"status": "check_failed", "exercise": failure.exercise,
                  "not_written": failure.not_written, "message": str(failure)}
    except BaseException as error:                      # a crash outside any check
        result = {"status": "crashed", "message": f"{type(error).__name__}: {error}",
                  "traceback": traceback.format_exc()}
    result["seconds"] = round(time.perf_counter() - start, 2)
    result["passed"] = list(PASSED)
    if figures is not None:
        figures.mkdir(parents=True, exist_ok=True)
        for index, number in enumerate(plt.get_fignums()):
            plt.figure(number).savefig(figures / f"{lesson.stem}_{index + 1}.png", dpi=80)
    result_path.write_text(json.dumps(result))


# -- the parent: one process per lesson run ----------------------------------------------------

def run_lesson(lesson: Path, mode: str, stub: str | None = None,
               figures: Path | None = None, timeout: float = 300.0) -> dict:
    """Run `lesson` in a fresh process; returns the child's result (status, passed, seconds)."""
    with tempfile.TemporaryDirectory() as folder:
        result_path = Path(folder) / "result.json"
        command = [sys.executable, "-m", "learn.run", "--child", str(lesson), "--mode", mode,
                   "--result", str(result_path)]
        if stub:
            command += ["--stub", stub]
        if figures:
            command += ["--figures", str(figures)]
        env = dict(ONE_BLAS_THREAD, **os.environ)
        env.update(MPLBACKEND="Agg",
                   PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        try:
            completed = subprocess.run(command, cwd=ROOT, env=env, timeout=timeout,
                                       capture_output=True, text=True)
        except subprocess.TimeoutExpired:
            return {"status": "crashed", "message": f"timed out after {timeout:.0f} s",
                    "passed": [], "output": ""}
        if not result_path.exists():
            return {"status": "crashed", "message": f"exit status {completed.returncode}",
                    "passed": [], "output": completed.stdout + completed.stderr}
        result = json.loads(result_path.read_text())
        result["output"] = completed.stdout + completed.stderr
        return result


def _show(result: dict, verbose: bool) -> None:
    if verbose or result["status"] == "crashed":
        print("    " + result.get("output", "").replace("\n", "\n    ").rstrip())
    if result["status"] == "crashed":
        print("    " + result.get("traceback", result["message"]).replace("\n", "\n    "))


def run_mine(steps: dict[int, Path], figures: Path | None, verbose: bool) -> bool:
    """Your code: each lesson runs until its first failing check."""
    all_passed = True
    for number, lesson in steps.items():
        result = run_lesson(lesson, "mine", figures=figures)
        wanted = list(exercises_of(lesson))
        if result["status"] == "ok" and set(wanted) <= set(result["passed"]):
            print(f"step {number:2d} {lesson.stem}: all {len(wanted)} exercises pass "
                  f"({result['seconds']:.1f} s)")
        else:
            all_passed = False
            print(f"step {number:2d} {lesson.stem}: {result['message']}")
        _show(result, verbose)
    return all_passed


def run_solutions(steps: dict[int, Path], figures: Path | None, verbose: bool,
                  max_seconds: float) -> bool:
    """The solutions: every exercise's check passes, each step within `max_seconds`."""
    good, timings = True, {}
    for number, lesson in steps.items():
        result = run_lesson(lesson, "solutions", figures=figures)
        wanted = list(exercises_of(lesson))
        missing = [n for n in wanted if n not in result["passed"]]
        problems = []
        if result["status"] != "ok":
            problems.append(result["message"])
        if missing:
            problems.append(f"no passing check for exercise(s) {', '.join(missing)}")
        if result["seconds"] > max_seconds:
            problems.append(f"took {result['seconds']:.1f} s, over the {max_seconds:.0f} s bound")
        verdict = "; ".join(problems) or f"all {len(wanted)} exercises pass"
        print(f"step {number:2d} {lesson.stem}: {verdict} ({result['seconds']:.1f} s)")
        _show(result, verbose)
        good = good and not problems
        timings[lesson.stem] = result["seconds"]
    _record_timings(timings, max_seconds)
    return good


def run_stubs(steps: dict[int, Path], verbose: bool) -> bool:
    """Each exercise's stub alone in place: its check must fail, naming it, and nothing else."""
    good = True
    for number, lesson in steps.items():
        for exercise in exercises_of(lesson):
            result = run_lesson(lesson, "solutions", stub=exercise)
            fine = (result["status"] == "check_failed" and result["exercise"] == exercise
                    and result["not_written"])
            verdict = "fails cleanly" if fine else "DID NOT fail as expected"
            print(f"step {number:2d} exercise {exercise}: {verdict}: "
                  f"{result.get('message', '').splitlines()[0] if result.get('message') else ''}")
            if not fine:
                _show(result, True)
            elif verbose:
                _show(result, verbose)
            good = good and fine
    return good


def _record_timings(timings: dict[str, float], max_seconds: float) -> None:
    """Merge this run's step times into learn/timings.json (written atomically)."""
    recorded = json.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
    steps = dict(recorded.get("seconds", {}))
    steps.update(timings)
    data = {"what": "seconds each lesson took with the solutions (python -m learn.run "
                    "--solutions), on the machine that last ran it",
            "max_seconds": max_seconds, "cpu_count": os.cpu_count(),
            "seconds": dict(sorted(steps.items()))}
    temporary = TIMINGS.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(data, indent=2) + "\n")
    temporary.replace(TIMINGS)
    _write_times_into(README, data)


def times_line(data: dict) -> str:
    """The recorded step times as one line of markdown."""
    steps = " · ".join(f"{int(stem[:2])}: {seconds:.1f} s" for stem, seconds in
                       data["seconds"].items())
    return (f"Step times in the last `--solutions` run ({data['cpu_count']} CPUs): {steps}; "
            f"{sum(data['seconds'].values()):.0f} s in all.")


def _write_times_into(path: Path, data: dict) -> None:
    """Put `times_line` between the TIMES markers of `path` (atomically), if it has them."""
    text = path.read_text(encoding="utf-8")
    start, end = text.find(TIMES_BEGIN), text.find(TIMES_END)
    if start < 0 or end < start:
        return
    text = text[:start + len(TIMES_BEGIN)] + "\n" + times_line(data) + "\n" + text[end:]
    temporary = path.with_suffix(".md.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("steps", nargs="*", type=int, help="step numbers (default: all)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--solutions", action="store_true", help="run with the solutions")
    which.add_argument("--stubs", action="store_true", help="check that every stub fails cleanly")
    parser.add_argument("--figures", type=Path, help="save every figure as PNG in this folder")
    parser.add_argument("--max-seconds", type=float, default=MAX_SECONDS)
    parser.add_argument("-v", "--verbose", action="store_true", help="show each lesson's output")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="mine", help=argparse.SUPPRESS)
    parser.add_argument("--stub", help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child, args.mode, args.stub, args.result, args.figures)
        return 0
    known = lessons()
    unknown = [n for n in args.steps if n not in known]
    if unknown:
        parser.error(f"no step {unknown}; the steps are {sorted(known)}")
    steps = {n: known[n] for n in (args.steps or sorted(known))}
    start = time.perf_counter()
    if args.solutions:
        good = run_solutions(steps, args.figures, args.verbose, args.max_seconds)
    elif args.stubs:
        good = run_stubs(steps, args.verbose)
    else:
        good = run_mine(steps, args.figures, args.verbose)
    print(f"{'OK' if good else 'FAILED'} in {time.perf_counter() - start:.0f} s")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
