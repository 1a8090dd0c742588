"""Random programs over the registry: generation, and evaluation in minigrad and in NumPy.

A program is a list of nodes. A leaf holds its values (float64 numbers, already rounded to the
leaf's dtype when that is float32), its dtype and whether it requires grad. A step applies a
registry entry to earlier nodes with fixed options. Some nodes are outputs, each with a fixed
float64 weight array: the program's loss is Σ_k Σ w_k ⊙ output_k.

Generation draws every structural choice from a `Chooser` (bytes hypothesis draws, or a seeded
NumPy generator in `SeededChooser`; values, dtypes and use quotas come from a generator seeded
by the first choice) and evaluates each new step in float64 NumPy as it goes, so that domains,
kinks, ties and magnitudes are judged on the real values: a step whose inputs are unsuitable or
whose result is not finite or exceeds BOUND is dropped and another drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import minigrad as mg

from .registry import BY_NAME, REGISTRY, REAL, OpInfo, Sample, literal

BOUND = 50.0            # |value| above this anywhere rejects a step: keeps float32 honest
MAX_STEPS = 8
START_SHAPES = [(), (), (), (1,), (2, 3), (3,), (2, 1), (1, 1)]
QUOTAS = [1, 2, 3, 3, 4, 5]      # how often a value is wanted: fan-out of 3 or more is common
MAX_USES = 5
# one in so many: a new operand made as a join of single-use leaves (a + b: one gradient array
# lands in both); a step that reads its focus at a repeated index (its gradient adds there);
# a step with its focus in every slot of that shape (x * x, x + x: two gradients at once)
JOIN_ODDS, REPEAT_ODDS, TWIN_ODDS = 2, 4, 8


class Chooser:
    """The source of every choice a program is made of."""

    def below(self, n: int) -> int:          # uniform in [0, n); 0 is the 'simplest' choice
        raise NotImplementedError


class SeededChooser(Chooser):
    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def below(self, n: int) -> int:
        return int(self.rng.integers(n))


class ByteChooser(Chooser):
    """Choices read from a byte string, as hypothesis draws one: one byte for a choice among
    up to 256, two for more, four for a seed. Hypothesis shrinks the bytes towards fewer and
    smaller ones, hence towards the first (simplest) choices, so a failing program shrinks.
    Once the bytes run out, choices come from a generator seeded by them."""

    def __init__(self, data: bytes):
        self.data, self.position = data, 0
        self.rng = np.random.default_rng(list(data[:32]) or [0])

    def below(self, n: int) -> int:
        if n <= 1:
            return 0
        width = 1 if n <= 256 else 2 if n <= 2 ** 16 else 4
        if self.position + width > len(self.data):
            return int(self.rng.integers(n))
        value = int.from_bytes(self.data[self.position:self.position + width], "big")
        self.position += width
        return value % n


@dataclass
class Leaf:
    value: np.ndarray              # float64, rounded to `dtype` already
    dtype: np.dtype
    requires_grad: bool


@dataclass
class Step:
    op: OpInfo
    operands: tuple
    options: dict


@dataclass
class Program:
    nodes: list
    outputs: list = field(default_factory=list)     # node indices (repeats allowed)
    weights: list = field(default_factory=list)     # one float64 array per output
    exact: list | None = field(default=None, repr=False, compare=False)   # float64 values

    def needed(self) -> list[bool]:
        """Per node: is it an output or an input (transitively) of one?"""
        needed = [False] * len(self.nodes)
        for i in self.outputs:
            needed[i] = True
        for i in range(len(self.nodes) - 1, -1, -1):
            if needed[i] and isinstance(self.nodes[i], Step):
                for j in self.nodes[i].operands:
                    needed[j] = True
        return needed

    # -- structure --------------------------------------------------------------------------
    def leaves(self) -> list[int]:
        return [i for i, n in enumerate(self.nodes) if isinstance(n, Leaf)]

    def requires_grad(self) -> list[bool]:
        """Per node: a leaf's flag; a step requires grad when any operand does (one read as a
        value only, by argmax, does not count)."""
        flags = []
        for node in self.nodes:
            if isinstance(node, Leaf):
                flags.append(node.requires_grad)
            else:                          # an operand read as a value only (argmax) gives none
                flags.append(any(flags[i] for k, i in enumerate(node.operands)
                                 if k not in node.op.value_operands))
        return flags

    def reaches_outputs(self) -> list[bool]:
        """Per node: does a gradient reach it from some output (through steps that require grad
        and pass gradient on)?"""
        flags = self.requires_grad()
        live = [False] * len(self.nodes)
        for i in self.outputs:
            live[i] = True
        for i in range(len(self.nodes) - 1, -1, -1):
            node = self.nodes[i]
            if live[i] and isinstance(node, Step) and node.op.passes_gradient:
                for k, j in enumerate(node.operands):
                    if flags[j] and k not in node.op.value_operands:
                        live[j] = True
        return live

    def uses(self, live_only: bool = False) -> list[int]:
        """Per node: how many operands of later steps it is (with `live_only`, of steps whose
        gradient reaches it: steps that lead to an output)."""
        live = self.reaches_outputs() if live_only else None
        counts = [0] * len(self.nodes)
        for i, node in enumerate(self.nodes):
            if isinstance(node, Step) and (live is None or live[i]):
                for j in node.operands:
                    counts[j] += 1
        return counts

    def ops(self) -> list[str]:
        return [n.op.name for n in self.nodes if isinstance(n, Step)]

    # -- text --------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"<program of {len(self.nodes)} nodes:\n{self.source()}\n>"

    def _repr_pretty_(self, printer, cycle) -> None:     # how hypothesis prints an example
        printer.text(repr(self))

    def source(self) -> str:
        """The program as Python that rebuilds it (run from the repository root)."""
        lines = ["import numpy as np", "import minigrad as mg", "import nn",
                 "from tests.fuzz.registry import round_trip, scatter, seeded"]
        for i, node in enumerate(self.nodes):
            if isinstance(node, Leaf):
                lines.append(f"v{i} = mg.tensor({literal(node.value)}, dtype={node.dtype.name!r}, "
                             f"requires_grad={node.requires_grad})")
            else:
                names = [f"v{j}" for j in node.operands]
                lines.append(f"v{i} = {node.op.spelled(names, node.options)}")
        outputs = ", ".join(f"v{i}" for i in self.outputs)
        weights = ", ".join(literal(w) for w in self.weights)
        lines.append(f"outputs, weights = [{outputs}], [{weights}]")
        return "\n".join(lines)

    def pruned(self, keep_outputs: list[int]) -> "Program":
        """The program with only the outputs at positions `keep_outputs` and the nodes they
        need (failing programs are shrunk this way before they are reported)."""
        outputs = [self.outputs[k] for k in keep_outputs]
        needed = Program(self.nodes, outputs).needed()
        new_index, nodes = {}, []
        for i, node in enumerate(self.nodes):
            if needed[i]:
                new_index[i] = len(nodes)
                if isinstance(node, Step):
                    node = Step(node.op, tuple(new_index[j] for j in node.operands), node.options)
                nodes.append(node)
        return Program(nodes, [new_index[i] for i in outputs],
                       [self.weights[k] for k in keep_outputs])


# ---------------------------------------------------------------------------------------------
# Evaluation.

def evaluate_numpy(program: Program, leaf_values: dict | None = None, exact: bool = True,
                   upto: int | None = None) -> list:
    """Every node's value by the registry's NumPy references. `exact`: all in float64 (the
    finite-difference oracle); otherwise each leaf in its own dtype, so the references' dtypes
    can be compared with minigrad's. `leaf_values` overrides some leaves' values."""
    values = []
    for i, node in enumerate(program.nodes[:upto]):
        if isinstance(node, Leaf):
            value = node.value if leaf_values is None else leaf_values.get(i, node.value)
            values.append(np.asarray(value, dtype=np.float64 if exact else node.dtype))
        else:
            options = node.options
            if exact and node.op.exact_options is not None:
                options = node.op.exact_options(options)
            out = node.op.reference(*(values[j] for j in node.operands), **options)
            values.append(np.asarray(out))
    return values


def loss_numpy(program: Program, leaf_values: dict) -> float:
    """Σ_k Σ w_k ⊙ output_k in float64 with some leaves' values replaced: only the steps that
    depend on those leaves and lead to an output are evaluated again."""
    if program.exact is None:
        program.exact = evaluate_numpy(program)
    values = list(program.exact)
    needed = program.needed()
    changed = [False] * len(values)
    for i, node in enumerate(program.nodes):
        if i in leaf_values:
            values[i], changed[i] = np.asarray(leaf_values[i], dtype=np.float64), True
        elif isinstance(node, Step) and needed[i] and any(changed[j] for j in node.operands):
            options = node.options
            if node.op.exact_options is not None:
                options = node.op.exact_options(options)
            values[i] = np.asarray(node.op.reference(*(values[j] for j in node.operands),
                                                     **options))
            changed[i] = True
    return float(sum(np.sum(w * values[i]) for i, w in zip(program.outputs, program.weights)))


def build(program: Program, device: str = "cpu") -> list:
    """The program run by minigrad on `device`: one Tensor per node."""
    tensors = []
    for node in program.nodes:
        if isinstance(node, Leaf):
            tensors.append(mg.tensor(node.value.astype(node.dtype), dtype=node.dtype,
                                     requires_grad=node.requires_grad, device=device))
        else:
            tensors.append(node.op.call(*(tensors[j] for j in node.operands), **node.options))
    return tensors


# ---------------------------------------------------------------------------------------------
# Generation.

_SLOTS: dict[str, dict] = {}


def _slots(op: OpInfo) -> dict:
    """shape -> [(sample, operand position)] over the op's samples."""
    found = _SLOTS.get(op.name)
    if found is None:
        found = _SLOTS[op.name] = {}
        for sample in op.samples:
            for k, shape in enumerate(sample.shapes):
                found.setdefault(shape, []).append((sample, k))
    return found


_REPEATING: dict[str, dict] = {}


def _reads_twice(sample: Sample) -> bool:
    """Does the sample's fixed `index` read some element of its first operand more than once
    (an advanced index with a repeated position, whose gradient adds up there)?"""
    options = sample.options if isinstance(sample.options, dict) else {}
    index = options.get("index")
    if index is None or "shape" in options or not sample.shapes:   # (index_add writes there)
        return False
    count = np.zeros(sample.shapes[0])
    try:
        np.add.at(count, index, 1)
    except (IndexError, TypeError, ValueError):
        return False
    return bool(count.max(initial=0) > 1)


def _repeating(op: OpInfo) -> dict:
    """shape -> [(sample, 0)] over the op's samples that read their first operand at a
    repeated index."""
    found = _REPEATING.get(op.name)
    if found is None:
        found = _REPEATING[op.name] = {}
        for sample in op.samples:
            if _reads_twice(sample):
                found.setdefault(sample.shapes[0], []).append((sample, 0))
    return found


class _Draft:
    """A program being generated, with each node's float64 value and how often it is used."""

    def __init__(self, choose: Chooser, rng: np.random.Generator, ops: list[OpInfo]):
        self.choose, self.rng, self.ops = choose, rng, ops
        self.nodes, self.values, self.uses, self.quota, self.grad = [], [], [], [], []
        self.typed = []          # each value in the dtypes minigrad will compute it in
        self.ancestry = []       # per node: itself and every node it is computed from
        self.once = set()        # leaves of joins, which no later step reads

    def leaf(self, shape, domain=REAL, dtype=None, single_use: bool = False) -> int:
        """A new leaf; `single_use`: one that requires grad and is wanted once only."""
        if dtype is None:
            dtype = self.dtype()
        requires_grad = single_use or not self.nodes or self.rng.random() < 5 / 6
        value = np.asarray(domain.draw(self.rng, shape), dtype=np.float64)
        value = value.astype(dtype).astype(np.float64)
        self._add(Leaf(value, dtype, requires_grad), value, value.astype(dtype), requires_grad)
        if single_use:
            self.quota[-1] = 1
            self.once.add(len(self.nodes) - 1)
        return len(self.nodes) - 1

    def dtype(self) -> np.dtype:
        return np.dtype(np.float32 if self.rng.random() < 1 / 3 else np.float64)

    def join(self, shape, domain, nested: bool = False) -> int | None:
        """A new value of that shape in the domain made of leaves wanted once each, through
        operands that pass their gradient on as it is (a + b, (a + b) − c, clone(a + b)): the
        one gradient array the join gets lands in several leaves, which must each get their
        own. None when no entry at hand joins that shape or the value leaves the domain."""
        places = [(op, sample) for op in self.ops if op.passes_through
                  for sample in op.samples if all(s == shape for s in sample.shapes)]
        if not places:
            return None
        op, sample = places[self.choose.below(len(places))]
        start, dtype = len(self.nodes), self.dtype()
        operands = []
        for k, s in enumerate(sample.shapes):
            if k not in op.passes_through:
                operands.append(self.operand(s, op.domain(k)))
                continue
            inner = None if nested or self.choose.below(3) else self.join(s, domain, True)
            operands.append(inner if inner is not None else
                            self.leaf(s, domain if op.domain(k) is REAL else op.domain(k),
                                      dtype, single_use=True))
        if self.apply(op, tuple(operands), sample.make_options(self.rng), domain):
            return len(self.nodes) - 1
        self.truncate(start)
        return None

    def _add(self, node, value, typed, requires_grad):
        self.nodes.append(node)
        self.values.append(value)
        self.typed.append(typed)
        self.ancestry.append(frozenset((len(self.ancestry),)))
        self.uses.append(0)
        self.quota.append(QUOTAS[int(self.rng.integers(len(QUOTAS)))])
        self.grad.append(requires_grad)

    def truncate(self, n: int) -> None:
        for attribute in (self.nodes, self.values, self.typed, self.ancestry, self.uses,
                          self.quota, self.grad):
            del attribute[n:]
        self.once = {i for i in self.once if i < n}

    def operand(self, shape, domain) -> int:
        """An existing value of that shape in the domain (most often one still short of its
        quota of uses), else a new leaf, or sometimes a join of new leaves."""
        pool = [i for i, v in enumerate(self.values) if v.shape == shape and
                self.uses[i] < MAX_USES and i not in self.once and domain.holds(v)]
        if pool and self.choose.below(6) != 5:
            wanting = [i for i in pool if self.uses[i] < self.quota[i]]
            group = wanting if wanting and self.rng.random() < 0.9 else pool
            return group[self.choose.below(len(group))]
        joined = self.join(shape, domain) if self.choose.below(JOIN_ODDS) == 0 else None
        return self.leaf(shape, domain) if joined is None else joined

    def try_step(self) -> bool:
        """One more step, most often built around a value still short of its quota of uses
        (so fan-out of 3–5 is common): an op and sample with a slot of that value's shape;
        sometimes one that reads the value at a repeated index, or has it in every slot of
        its shape."""
        # the values short of their quota, those already used most first (0-d ones counted
        # as used once more): a value is used again and again until its quota is met,
        # rather than all values once, and 0-d values are the ones most often fanned out
        wanting = sorted((i for i, (u, q) in enumerate(zip(self.uses, self.quota)) if u < q),
                         key=lambda i: (-self.uses[i] - (self.values[i].ndim == 0), -i))
        ops = self.ops
        focus, slot, twin = None, None, False
        if wanting and self.rng.random() < 0.9:
            focus = wanting[self.choose.below(min(2, len(wanting)))]
            shape = self.values[focus].shape
            usable = [op for op in ops if shape in _slots(op)]
            repeating = [op for op in usable if shape in _repeating(op)]
            if repeating and self.choose.below(REPEAT_ODDS) == 0:
                op = repeating[self.choose.below(len(repeating))]
                places = _repeating(op)[shape]
            elif usable:
                op = usable[self.choose.below(len(usable))]
                places = _slots(op)[shape]
            if usable:
                sample, slot = places[self.choose.below(len(places))]
                twin = self.choose.below(TWIN_ODDS) == 0
        if slot is None:
            op = ops[self.choose.below(len(ops))]
            sample = op.samples[self.choose.below(len(op.samples))]
        start = len(self.nodes)
        operands = tuple(
            focus if (k == slot or (twin and s == sample.shapes[slot])) and
            op.domain(k).holds(self.values[focus])
            else self.operand(s, op.domain(k)) for k, s in enumerate(sample.shapes))
        if not self.apply(op, operands, sample.make_options(self.rng)):
            self.truncate(start)                          # forget the leaves it made
            return False
        return True

    def apply(self, op: OpInfo, operands: tuple, options: dict, domain=REAL) -> bool:
        """The step op(operands) added, unless its inputs are unsuitable or its value is not
        finite, exceeds BOUND or lies outside `domain`."""
        arrays = [self.values[i] for i in operands]
        # the operands as minigrad holds them (each in its dtype): a kink or tie that float64
        # meets exactly may lie an ulp off in float32, where the jump is then crossed
        held = [np.asarray(self.typed[i], dtype=np.float64) for i in operands]
        try:
            with np.errstate(all="ignore"):
                ok = op.accepts(arrays, options) and op.accepts(held, options) and not (
                    op.known_bug is not None and
                    op.known_bug([self.ancestry[i] for i in operands],
                                 [self.typed[i].dtype for i in operands]))
                exact = options if op.exact_options is None else op.exact_options(options)
                value = np.asarray(op.reference(*arrays, **exact), dtype=np.float64)
                typed = np.asarray(op.reference(*(self.typed[i] for i in operands), **options))
        except (ValueError, IndexError, TypeError):       # a sample that does not apply
            ok = False
        overused = any(self.uses[i] + operands.count(i) > MAX_USES for i in operands)
        if not ok or overused or not np.all(np.isfinite(value)) or \
                np.abs(value).max(initial=0) > BOUND or not domain.holds(value):
            return False
        for i in operands:
            self.uses[i] += 1
        self._add(Step(op, operands, options), value, typed,
                  any(self.grad[i] for k, i in enumerate(operands) if k not in op.value_operands))
        self.ancestry[-1] = self.ancestry[-1].union(*(self.ancestry[i] for i in operands))
        return True


def generate(choose: Chooser, ops: list[OpInfo] | None = None) -> Program:
    """A random program: 1–3 starting leaves, 2–8 steps drawn from `ops` (default: the whole
    registry) whose operands are earlier values (or new leaves), then its outputs."""
    ops = REGISTRY if ops is None else ops
    rng = np.random.default_rng(choose.below(2 ** 32))
    draft = _Draft(choose, rng, ops)
    for _ in range(1 + choose.below(3)):
        shape = START_SHAPES[choose.below(len(START_SHAPES))]
        if not shape or choose.below(JOIN_ODDS) or draft.join(shape, REAL) is None:
            draft.leaf(shape)
    wanted = 2 + choose.below(MAX_STEPS - 1)
    steps = attempts = 0
    while steps < wanted and attempts < 6 * wanted:
        attempts += 1
        steps += draft.try_step()
    program = Program(draft.nodes)
    candidates = [i for i, n in enumerate(draft.nodes) if draft.grad[i] and isinstance(n, Step)]
    if not candidates:
        candidates = [i for i in range(len(draft.nodes)) if draft.grad[i]]
    # most often every value nothing reads is an output, so no use is wasted on dead code;
    # sometimes one is left out (a value that reaches no output gets no gradient), sometimes
    # a value that is read is an output as well
    outputs = [i for i in candidates if draft.uses[i] == 0] or candidates[-1:]
    if len(outputs) > 1 and choose.below(4) == 0:
        del outputs[choose.below(len(outputs))]
    if choose.below(4) == 0:
        outputs.append(candidates[choose.below(len(candidates))])
    program.outputs = outputs
    program.weights = [rng.standard_normal(draft.values[i].shape) for i in outputs]
    return program


class ProgramBuilder:
    """A program written by hand, node by node, for the oracles to check:

        b = ProgramBuilder()
        x = b.leaf(2.0)                      # a 0-d float64 leaf requiring grad
        y = b.step("mul", b.step("mul", x, x), x)
        problems = check_program(b.program([y]))
    """

    def __init__(self):
        self.nodes = []

    def leaf(self, value, dtype=np.float64, requires_grad: bool = True) -> int:
        value = np.asarray(value, dtype=dtype).astype(np.float64)
        self.nodes.append(Leaf(value, np.dtype(dtype), requires_grad))
        return len(self.nodes) - 1

    def step(self, name: str, *operands: int, **options) -> int:
        self.nodes.append(Step(BY_NAME[name], operands, options))
        return len(self.nodes) - 1

    def program(self, outputs: list[int], weights=None) -> Program:
        program = Program(list(self.nodes), list(outputs))
        shapes = [v.shape for v in evaluate_numpy(program)]
        program.weights = weights or [np.ones(shapes[i]) for i in outputs]
        return program


def ops_named(names) -> list[OpInfo]:
    return [BY_NAME[n] for n in names]
