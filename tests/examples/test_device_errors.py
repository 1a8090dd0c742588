"""Every example script, asked for `--device cuda` where it cannot have it, prints one line
saying why and exits with status 2: no traceback, no output folder. CuPy's absence and a CuPy
that finds no GPU are both simulated by a stand-in `cupy` package put first on the path, so
the test means the same on machines with and without a GPU."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p.name for p in (ROOT / "examples").glob("[a-z]*.py")
                 if p.name != "make_docs.py")      # not an example: it runs them

STAND_INS = {
    # `import cupy` fails as it does where CuPy is not installed
    "no CuPy": "raise ImportError('No module named cupy')\n",
    # CuPy imports, and CUDA reports no device
    "no GPU": ("class _Runtime:\n"
               "    @staticmethod\n"
               "    def getDeviceCount():\n"
               "        return 0\n"
               "class cuda:\n"
               "    runtime = _Runtime\n"
               "class ndarray:\n"
               "    pass\n"),
}
REASONS = {"no CuPy": "needs CuPy, which is not installed", "no GPU": "no GPU is present"}


def test_every_script_is_covered():
    assert len(SCRIPTS) >= 9 and "translate.py" in SCRIPTS


# One interpreter that has imported only NumPy forks a child per script, which runs it as
# `python SCRIPT --quick --device cuda --out OUT` would: the script's folder first on the path,
# its arguments in sys.argv, run as __main__, stdout and stderr into files, the exit status
# what the interpreter would give (an uncaught exception: its traceback and 1).
_EACH_SCRIPT = """
import os, runpy, sys, traceback
import numpy                      # shared by every child: not part of what is checked
examples, runs, scripts = sys.argv[1], sys.argv[2], sys.argv[3:]
children = {}
for script in scripts:
    pid = os.fork()
    if pid == 0:                  # a child that has imported nothing of minigrad, nn or cupy
        code = 1
        try:
            for fd, stream in ((1, "stdout"), (2, "stderr")):
                os.dup2(os.open(os.path.join(runs, script + "." + stream),
                                os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
            path = os.path.join(examples, script)
            sys.argv = [path, "--quick", "--device", "cuda", "--out",
                        os.path.join(runs, "out", script)]
            sys.path[0] = examples
            runpy.run_path(path, run_name="__main__")
            code = 0
        except SystemExit as exit:
            code = 0 if exit.code is None else exit.code
            if not isinstance(code, int):
                print(code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    children[pid] = script
statuses = {}
while children:
    pid, status = os.wait()
    statuses[children.pop(pid)] = os.waitstatus_to_exitcode(status)
print(" ".join(f"{script}={statuses[script]}" for script in scripts))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("situation", list(STAND_INS))
def test_cuda_without_cupy_or_gpu_is_one_line_and_status_2(situation, tmp_path):
    stand_in = tmp_path / "site" / "cupy"
    stand_in.mkdir(parents=True)
    (stand_in / "__init__.py").write_text(STAND_INS[situation])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), str(ROOT)]))
    runs = tmp_path / "runs"
    runs.mkdir()
    result = subprocess.run([sys.executable, "-c", _EACH_SCRIPT, str(ROOT / "examples"),
                             str(runs), *SCRIPTS], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    statuses = dict(item.split("=") for item in result.stdout.split())
    assert sorted(statuses) == SCRIPTS, result.stdout
    for script in SCRIPTS:
        stdout, stderr = ((runs / f"{script}.{stream}").read_text() for stream in
                          ("stdout", "stderr"))
        assert statuses[script] == "2", (script, stderr[-2000:])
        assert "Traceback" not in stderr, (script, stderr)
        lines = stderr.strip().splitlines()
        assert len(lines) == 1, (script, stderr)
        assert lines[0].startswith(f"{script}: error: --device cuda: "), lines[0]
        assert REASONS[situation] in lines[0], lines[0]
        assert stdout == "" and not (runs / "out" / script).exists(), script


def test_an_unknown_device_is_refused_the_same_way(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "worked_examples.py"),
                             "--device", "tpu", "--out", str(tmp_path / "out")],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == ("worked_examples.py: error: --device tpu: unknown device "
                                     "'tpu': expected one of 'cpu', 'cuda' (optionally with "
                                     "':N')")
