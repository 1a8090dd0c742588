"""The extreme-values arm (edges.py): every registry entry that declares `edges` is run at
±1e20 (±3e7 in float32), exact zeros, empty axes, ±inf and NaN, and exact kinks, as it
declares, against float64 NumPy. Each entry's check is a fraction of a second; the fuzzer's
long mode (MINIGRAD_FUZZ_EXAMPLES=100000, see test_fuzz.py) repeats it with more draws."""

from __future__ import annotations

import os

import numpy as np
import pytest

from .edges import edge_problems
from .registry import EDGES, REGISTRY

ROUNDS = max(1, int(os.environ.get("MINIGRAD_FUZZ_EXAMPLES", "2000")) // 2000)
EDGED = [op for op in REGISTRY if op.edges is not None]


def test_every_declared_entry_exists():
    assert {op.name for op in EDGED} == set(EDGES)


@pytest.mark.parametrize("op", EDGED, ids=[op.name for op in EDGED])
def test_entries_at_their_edges(op):
    for round_ in range(ROUNDS):
        problems = edge_problems(op, np.random.default_rng([7, round_]))
        assert not problems, "\n".join(problems[:8])
