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


@pytest.mark.parametrize("situation", list(STAND_INS))
def test_cuda_without_cupy_or_gpu_is_one_line_and_status_2(situation, tmp_path):
    stand_in = tmp_path / "site" / "cupy"
    stand_in.mkdir(parents=True)
    (stand_in / "__init__.py").write_text(STAND_INS[situation])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), str(ROOT)]))
    runs = {}
    for script in SCRIPTS:                   # all at once: each is mostly interpreter start-up
        out = tmp_path / "out" / script
        runs[script] = (out, subprocess.Popen(
            [sys.executable, str(ROOT / "examples" / script), "--quick", "--device", "cuda",
             "--out", str(out)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True))
    for script, (out, process) in runs.items():
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 2, (script, stderr[-2000:])
        assert "Traceback" not in stderr, (script, stderr)
        lines = stderr.strip().splitlines()
        assert len(lines) == 1, (script, stderr)
        assert lines[0].startswith(f"{script}: error: --device cuda: "), lines[0]
        assert REASONS[situation] in lines[0], lines[0]
        assert stdout == "" and not out.exists(), script


def test_an_unknown_device_is_refused_the_same_way(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "worked_examples.py"),
                             "--device", "tpu", "--out", str(tmp_path / "out")],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == ("worked_examples.py: error: --device tpu: unknown device "
                                     "'tpu': expected one of 'cpu', 'cuda' (optionally with "
                                     "':N')")
