"""`minigrad.tune_malloc()` keeps freed array memory in the process (glibc): allocating the
same arrays again after freeing them touches no new pages; importing minigrad alone changes
nothing. Each case runs in a fresh interpreter,
since the thresholds are process-wide and glibc moves them by itself once large blocks are freed."""

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="the allocator thresholds are glibc's")

# 400 arrays of 48 KiB (a GRU's (32, 384) float32 pre-activations): 19 MiB, 4,800 pages, all of
# it at the top of the heap once freed
SCRIPT = """
import json, resource
import numpy as np
import minigrad
from minigrad import _malloc
if TUNE:
    minigrad.tune_malloc()

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

arrays = [np.ones(12288, np.float32) for _ in range(400)]
del arrays
before = faults()
arrays = [np.ones(12288, np.float32) for _ in range(400)]
print(json.dumps({"tuned": _malloc.tuned, "faults": faults() - before}))
"""
PAGES = 400 * 12288 * 4 // 4096


def run(tune: bool = True, **env_changes) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    env.update(env_changes)
    script = f"TUNE = {tune}\n" + SCRIPT
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def test_freed_arrays_are_reused_without_new_pages():
    measured = run()
    assert measured["tuned"]
    assert measured["faults"] < PAGES // 10, measured


def test_without_the_call_the_same_arrays_fault_their_pages_in_again():
    # the control: proves the first test measures what it claims, and that import alone
    # leaves malloc as it is
    measured = run(tune=False)
    assert not measured["tuned"]
    assert measured["faults"] > PAGES // 2, measured


@pytest.mark.parametrize("env", [{"MALLOC_TRIM_THRESHOLD_": "131072"},
                                 {"MALLOC_MMAP_THRESHOLD_": "131072"},
                                 {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=131072"}])
def test_thresholds_the_process_sets_itself_are_left_alone(env):
    measured = run(**env)
    assert not measured["tuned"]
    assert measured["faults"] > PAGES // 2, measured
