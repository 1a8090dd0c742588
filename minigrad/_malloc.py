"""Keep freed memory for the next step instead of handing it back to the OS (glibc only).

NumPy allocates its arrays with the C library's malloc. glibc's malloc gives the memory at the
top of its heap back to the OS as soon as more than M_TRIM_THRESHOLD of it is free (128 KiB in a
fresh process; glibc raises it by itself, to at most 64 MiB, only after the process has freed
one large block). A recorded graph frees all its arrays together — when its loss is dropped —
and the next forward pass takes the same amount of memory again, page by page: each new page is
a page fault, a few microseconds on a virtual machine. A GRU of 50 steps written from primitives
touched 3,400–6,500 new pages per step this way: about 40 % of its step time.

`minigrad.tune_malloc()` sets glibc's two thresholds to the values glibc itself reaches in a process
that has freed a 32 MiB block: blocks under 32 MiB come from the heap (above it, mmap, as
before) and up to 64 MiB of free heap stays with the process for reuse. Nothing else changes;
memory is still returned to the OS beyond that. Importing minigrad changes nothing: the call is
explicit (the examples and benchmarks make it). It does nothing when the process sets the
thresholds itself (glibc's MALLOC_TRIM_THRESHOLD_ or MALLOC_MMAP_THRESHOLD_, or the same in
GLIBC_TUNABLES), or off glibc (macOS, Windows, musl).
"""

from __future__ import annotations

import ctypes
import os
import sys

# glibc's mallopt parameters (<malloc.h>)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

MMAP_THRESHOLD = 32 * 2 ** 20      # glibc's ceiling for its own dynamic mmap threshold
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD

_GLIBC_VARIABLES = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")
_GLIBC_TUNABLES = ("glibc.malloc.trim_threshold", "glibc.malloc.mmap_threshold")

tuned = False                        # did the thresholds get set in this process?


def tune_malloc() -> bool:
    """Keep up to 64 MiB of freed array memory for the next training step instead of handing
    it back to the OS (glibc's malloc only; see minigrad/_malloc.py). Returns True when the
    thresholds are set, False where nothing was changed (not glibc, or the process set them)."""
    global tuned
    if tuned:
        return True
    if not sys.platform.startswith("linux"):
        return False
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if any(name in os.environ for name in _GLIBC_VARIABLES) or \
            any(name in tunables for name in _GLIBC_TUNABLES):
        return False                 # the process chose its own thresholds
    try:
        libc = ctypes.CDLL(None)                        # the C library this process runs on
        libc.gnu_get_libc_version                       # present on glibc only
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # mmap first: setting either one turns off glibc's dynamic adjustment of both
    tuned = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return tuned
