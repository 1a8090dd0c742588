"""The op registry: every differentiable primitive of minigrad and nn, with what it takes to
test it (in the spirit of PyTorch's OpInfo database).

Each `OpInfo` (core.py) names the `Function` subclass it reaches and gives:

- `call`: a user-level way to reach it (`lambda a, b: a * b`, `nn.functional.linear`, ...),
  taking one Tensor per operand and the sample's options as keywords;
- `reference`: the same computation in plain NumPy, written from the math (never from the code
  under test), on arrays of any float dtype;
- `samples`: operand shapes and options, `()` and `(1,)` included, every broadcasting pair the
  fuzzer may combine; `checks` is the subset the per-op tests iterate;
- `domains`: where each operand's values may lie (log and sqrt positive, a divisor away from
  0, exp's argument moderate), and `valid`, which rejects inputs too close to a kink or a tie
  (relu, abs, max, clip, maximum) or too badly conditioned to difference;
- flags: `broadcasts`, `nonsmooth`, `second_order` (create_graph gives a correct second
  derivative), `random` (draws from minigrad's RNG: its reference replays the seeded draws);
- `edges`: the extreme values it accepts and its conventions there (edges.py draws them).

The entries live in one module per kind, as minigrad/ops does: elementwise, activations,
rounding, reduce, nn_ops, indexing, shape, linalg, and nn_functions for nn's Functions (compare
and sorting define no Function of their own). REGISTRY lists them in that order, each module's
in its own order. Several entries may reach one class (scalar and tensor exponents both reach
Pow). A Function subclass that no entry reaches makes tests/fuzz/test_registry.py fail, naming
it: adding a primitive means adding an entry to the module of its kind (see tests/README.md).
"""

from __future__ import annotations

import minigrad as mg
from minigrad.ops import activations as _activations
from minigrad.ops import elementwise as _elementwise
from minigrad.ops import reduce as _reduce
from minigrad.ops import rounding as _rounding

from . import (activations, elementwise, indexing, linalg, nn_functions, nn_ops, reduce,
               rounding, shape)
from .core import (CHECK_PAIRS, CHECK_SHAPES, KINK_MARGIN, MODERATE, NONZERO, PAIRS, POSITIVE,
                   REAL, SHAPES, UNIT, Domain, Edges, OpInfo, Sample, literal, other_device,
                   round_trip, scatter, seeded)

KINDS = (elementwise, activations, rounding, reduce, nn_ops, indexing, shape, linalg,
         nn_functions)

REGISTRY: list[OpInfo] = [op for kind in KINDS for op in kind.entries()]
BY_NAME: dict[str, OpInfo] = {op.name: op for op in REGISTRY}
assert len(BY_NAME) == len(REGISTRY), "registry names must be unique"
EDGES: dict[str, Edges] = {op.name: op.edges for op in REGISTRY if op.edges is not None}

# Function subclasses that are shared bases, never applied themselves
ABSTRACT = {_elementwise._Unary, _activations._Activation, _rounding._Step, _reduce._Reduction,
            mg.FusedFunction}


def all_function_classes() -> list[type]:
    """Every subclass of mg.Function defined by minigrad and nn (recursively), in a stable
    order; classes defined elsewhere (tests making their own) are left out."""
    found, stack = [], [mg.Function]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in found:
                found.append(sub)
                stack.append(sub)
    ours = [c for c in found if c.__module__.split(".")[0] in ("minigrad", "nn")]
    return sorted(ours, key=lambda c: (c.__module__, c.__qualname__))


def unregistered() -> list[type]:
    covered = {op.function for op in REGISTRY}
    return [c for c in all_function_classes() if c not in covered and c not in ABSTRACT]


__all__ = ["ABSTRACT", "BY_NAME", "CHECK_PAIRS", "CHECK_SHAPES", "EDGES", "KINDS", "KINK_MARGIN",
           "MODERATE", "NONZERO", "PAIRS", "POSITIVE", "REAL", "REGISTRY", "SHAPES", "UNIT",
           "Domain", "Edges", "OpInfo", "Sample", "all_function_classes", "literal",
           "other_device", "round_trip", "scatter", "seeded", "unregistered"]
