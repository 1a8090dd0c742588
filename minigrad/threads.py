"""How many threads the BLAS library under NumPy uses for matrix products.

minigrad's matrix products are mostly small (a GRU step is (32, 128) @ (128, 384)). A
multi-threaded BLAS wakes its threads for each of them, and on a machine whose cores are busy
with other work each product then waits for a core, many times per training step. So minigrad
uses **one BLAS thread by default**, set when it is imported, unless the BLAS's own variables
(OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS) were set before the program started,
which are then left to rule. For large matrices on idle cores, `set_num_threads(n)` gives the
BLAS n threads again.

The setting is made through the BLAS library's own call (`openblas_set_num_threads`,
`MKL_Set_Num_Threads`), found among the shared libraries the process has loaded. Where none can
be found (a BLAS without such a call, e.g. Apple's Accelerate), `set_num_threads` raises and
`get_num_threads` returns 1 only if nothing else is known.
"""

from __future__ import annotations

import ctypes
import numbers
import os
from pathlib import Path

import numpy as np

__all__ = ["get_num_threads", "set_num_threads"]

_BLAS_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _call_names() -> list[tuple[str, str]]:
    """(set, get) symbol pairs of the BLAS libraries NumPy is built with."""
    pairs = [(f"{prefix}_set_num_threads{suffix}", f"{prefix}_get_num_threads{suffix}")
             for prefix in ("openblas", "scipy_openblas") for suffix in ("", "64_", "_64")]
    return pairs + [("MKL_Set_Num_Threads", "MKL_Get_Max_Threads")]


def _loaded_libraries() -> list[str]:
    """Paths of the BLAS-like shared libraries in this process (Linux), else those shipped
    beside NumPy."""
    maps = Path("/proc/self/maps")
    paths: list[str] = []
    if maps.exists():
        for line in maps.read_text().splitlines():
            path = line.split()[-1]
            if path.startswith("/") and ("blas" in path.lower() or "mkl" in path.lower()):
                paths.append(path)
    if not paths:
        here = Path(np.__file__).parent
        for folder in (here.parent / "numpy.libs", here / ".dylibs"):
            if folder.is_dir():
                paths.extend(str(p) for p in sorted(folder.iterdir())
                             if "blas" in p.name.lower() or "mkl" in p.name.lower())
    return list(dict.fromkeys(paths))          # unique, in order


def _find_calls():
    """(set_num_threads, get_num_threads) as ctypes functions, or None when none is found."""
    for path in _loaded_libraries():
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in _call_names():
            setter = getattr(library, set_name, None)
            getter = getattr(library, get_name, None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], None
                getter.argtypes, getter.restype = [], ctypes.c_int
                return setter, getter
    return None


_CALLS = _find_calls()


def set_num_threads(n: int) -> None:
    """Let the BLAS library use `n` threads for matrix products (as torch.set_num_threads).
    Raises RuntimeError where the BLAS offers no such call."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"set_num_threads: n must be an int >= 1, got {n!r}")
    if _CALLS is None:
        raise RuntimeError("set_num_threads: no BLAS library with a thread setting "
                           "(OpenBLAS or MKL) is loaded by NumPy; set OMP_NUM_THREADS before "
                           "starting Python instead")
    _CALLS[0](int(n))


def get_num_threads() -> int:
    """The number of threads the BLAS library uses for matrix products (1 where unknown)."""
    return int(_CALLS[1]()) if _CALLS is not None else 1


def _use_one_thread_unless_configured() -> None:
    if _CALLS is not None and not any(os.environ.get(v) for v in _BLAS_VARIABLES):
        _CALLS[0](1)


_use_one_thread_unless_configured()
