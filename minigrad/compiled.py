"""`minigrad.compile`: run a training step eagerly, capture it once, replay it as array code.

    @mg.compile
    def step(x, y):
        optimizer.zero_grad()                       # live: run again at every replay
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        nn.clip_grad_norm(model.parameters(), 1.0)  # live
        optimizer.step()                            # live
        return loss

    for x, y in batches:
        loss = step(x, y)           # call 1 eager, call 2 captured, then replayed
        scheduler.step()            # a new learning rate: read by the next replay's step

Call 1 runs the step eagerly. Call 2 runs it eagerly too, while the engine reports to a
recorder every Function it applies (class, options, which inputs are step arguments, tensors
from outside such as parameters, or earlier results), the backward walk (the order it visits
Functions, how each gradient was conformed to its input and accumulated) and where gradients
land in `.grad`. Calls 3+ replay that record: for each operation the Function's own `forward`
on arrays, then for each visited Function its own derivative on arrays: a Function that writes
its derivative as a `gradients` formula (the built-in elementwise, matmul, transpose, indexing
and activation primitives) gets the arrays the replay holds, as `values()` would give them;
any other its own `backward` (the `values()` path of the engine, with grad mode off); then the
recorded sum-to-shape, cast and accumulation steps. No Tensor per operation, no graph, no
heap: the derivative formulas stay in one place.

The record is written out once as the source of one straight-line Python function (`_Writer`;
a program's `source` shows it), one line per forward, backward, conform or accumulation, with
every decision the walk made fixed in the text: per operation a replay runs the Function's
own forward and derivative and a few assignments, nothing else. Two choices follow from the
capture and are tested: a built-in Function's forward result of one or more dimensions is an
array (only a 0-d result, which NumPy may give as a scalar, is checked), and a built-in
Function keeps state only through `save_for_backward` (so after a replay only those clear
`saved_tensors`; a Function of your own is put back to the state its constructor made).
CPython specialises the function's byte-code after its 8th call, so a replay is fastest from
the 9th on.

Why a record of the walk and not a second walk: the walk's order, its accumulation kinds ("set",
"copy" then add, "add" in place) and its conform steps are read from the engine while it runs,
so the replay does what the engine did, not what a second implementation thinks it would do.

The rules (each refused capture leaves the step eager; `step.stats` counts and says why):

- Guards before every replay: the structure of the arguments and, for each tensor among them,
  shape, dtype, device (array type) and requires_grad; Python numbers and other objects passed
  by value (numbers) or identity; which arguments are the same tensor; grad mode; anomaly mode
  (anomaly mode always runs eagerly); the default float dtype (`set_default_dtype`); the
  train/eval flag of every module found in the arguments, in the step's closure, in the
  globals it names and on its bound `self` (or given as `modules=`); for every tensor read
  from outside (parameters), its shape, dtype, device and requires_grad; for every leaf
  whose `.grad` the capture replaced, that it is None again. A new
  argument signature is captured anew (at most `cache_size` of them); a failed guard on a known
  signature captures again (at most `max_recaptures` times), and then the step stays eager.
- Live calls: a callable marked `mg.compiler.disable` (`nn`'s optimizers' `step` and
  `zero_grad`, `clip_grad_norm`, `clip_grad_value_`) is not captured: the capture records the
  call (the callable and its arguments as given, step arguments by position) and each replay
  makes it again at the same point, in the grad mode it was made in, so it reads the learning
  rate, step counts, optimizer state and the gradients just landed in `.grad` at that time.
  Inside a live call, in-place changes and value reads are its own business. Refused: a live
  call given a tensor the step computed, a `.grad` or an iterator (pass a list); a live call
  that changes the step's own tensors (other than views of parameters); a live call inside a
  backward; an operation of the step using a tensor a live call returned, a `.grad` set inside
  the step, or a number equal to one a live call returned (all would be frozen). A live call's
  result may be returned by the step (made again at each replay); a step that returns other
  numbers beside it is refused (they might be computed from it; Python arithmetic on such a
  number is not seen otherwise: do it outside). After a live call the replay reads every
  parameter's array again. A live call inside a live call is part of it; a compiled step
  inside one is a nested step (an error).
- Refused during capture: reading values (`.item()`, `float(t)`, `bool(t)`, `.numpy()`,
  `np.asarray(t)`, so also branching on values), in-place changes outside live calls (`add_`,
  `t[i] = v`, an optimizer step of your own: mark it `mg.compiler.disable`), writes through
  `.data` into an argument or a tensor from outside (`p.data -= lr * p.grad`: their arrays
  and values are compared at the end of the capture and before each live call; the tensors
  the previous call read are watched from the start) or into a value the step computed
  (`scores.data[mask] = 0`: each operation's result is copied as it is recorded and compared
  likewise, except views of arguments and parameters, which change with them; the copies
  cost one more set of the step's activations, during capture only), random numbers drawn
  other than by an operation or `mg.rand`/`mg.randn` (randint, randperm: pass them in),
  `manual_seed` inside the step, a value computed from a tensor's array outside any
  operation without a kernel to compute it again (positions `nonzero` and `argwhere` found:
  their count depends on the values; comparisons, argmax, isnan, any, all, one_hot, tril,
  integer-to-float casts and the like have kernels and are computed again at replay),
  `minigrad.grad` and
  `backward(create_graph=True)` inside the step, hooks and `retain_grad`, a backward that reaches
  operations made outside the step, an option array of an operation that shares memory with a
  tensor without being its array, `.grad` assigned inside the step other than cleared, nested
  compiled steps (an error on the first call).
- Threads: one thread captures at a time; a call that would capture while another thread
  captures runs eagerly and captures on a later call. A capture during which another thread
  used the engine is discarded and made again on a later call (at most `max_recaptures`
  times): what that thread did is never part of the program.
- Randomness is drawn again at every replay: dropout inside its operation, `mg.rand` and
  `mg.randn` where the step made them, from the same generator in the same order as eager, so
  a seeded replay equals a seeded eager run bit for bit. Comparisons (`x > 0`) are computed
  again too.
- An operation whose forward changes some inputs in place (`Function.updates`: a batch norm's
  running statistics and batch count) changes them again at every replay, as its forward runs
  again on their live arrays (and marks them changed, as eagerly); they must be tensors from
  outside the step (buffers). `check=True` puts them back between the replay and the eager run
  and compares them too.
- Parameters are read live: an optimizer's in-place update between calls is seen. Tensors made
  inside the step from Python data (`mg.zeros`, a number) are constants of the capture; data
  that changes from call to call must come in as an argument. Those constants and every
  operation's options are compared with the ones the previous call made (the first call runs
  under the recorder too): a difference means the step computed them from values it read
  outside any operation (through `.data`), and the capture is refused. Two first calls on
  equal inputs cannot tell (`check=True` can).
- The step returns fresh Tensors (without a graph: call `backward` inside the step).
- Learning rate and step count stay with the optimizer and are read by its live `step` at
  every replay, never frozen into the program.
- Gradients land in `.grad` as arrays the caller alone holds, as eagerly: a gradient the walk
  did not make itself is copied, except one the reference count shows nothing else holds (a
  weight gradient's fresh product), which is set as it is; adding to an existing `.grad`
  makes a new array. A `.grad` kept from an earlier call is never written.
- No buffer is reused from one replay to the next (NumPy allocates each result): simpler, and
  no replay can overwrite an array still in use or one handed out.
- Between replays a program keeps no array it computed or was given: at the end of each
  replay its holders are emptied and each Function goes back to the state its constructor
  made (saved values gone), so a cache of `cache_size` signatures holds parameters and
  constants only, and the outputs handed out belong to the caller alone.
- `MINIGRAD_COMPILE=0` in the environment when `compile` is called turns replay off.
- `check=True` runs the first `check` replays also eagerly (random state and gradients put back
  in between) and raises if any value or gradient differs in a single bit. A step that makes
  live calls cannot be checked so (its updates would run twice): the check raises; check it
  with the optimizer outside.
"""

from __future__ import annotations

import builtins
import copy
import functools
import os
import sys
import threading
from typing import Callable

import numpy as np

from . import anomaly, autograd, inplace, recording
from .backend import _BY_ARRAY_TYPE, DRAWS, backend_of
from .function import _FORMULA_BACKWARDS, Function
from .gradients import IndexedGradient, held_alone
from .ops.shape import sum_to_array
from .grad_mode import STATE as _GRAD_STATE
from .grad_mode import _GradMode
from .tensor import DEFAULTS, Tensor

_LOCAL = threading.local()          # the compiled step running in this thread, if any


class CaptureRefused(Exception):
    """Raised inside the recorder's checks; the step then stays eager."""


# ---------------------------------------------------------------------------------------------
# The public entry point.

def compile(fn: Callable | None = None, *, check: bool | int = False, modules=(),
            cache_size: int = 8, max_recaptures: int = 4):
    """`fn` as a compiled step (also `@compile` and `@compile(check=True)`): see the module's
    docstring for what is replayed and what is refused. Returns a `CompiledStep`."""
    if fn is None:
        return functools.partial(compile, check=check, modules=modules, cache_size=cache_size,
                                 max_recaptures=max_recaptures)
    return CompiledStep(fn, check=check, modules=modules, cache_size=cache_size,
                        max_recaptures=max_recaptures)


def disable(fn: Callable) -> Callable:
    """`fn` runs live, not captured, inside a compiled step (PyTorch's `torch.compiler.disable`;
    also a decorator of methods): a capture records the call itself (the callable and its
    arguments as given) where the step made it, and every replay calls it again at that point,
    so it reads what it reads then (an optimizer's learning rate and step count, the gradients
    the replay just landed in `.grad`). Outside a capture it is `fn`, called as it is. Its
    in-place changes (an optimizer step) and value reads (a gradient norm) are allowed, within
    the rules of the module's docstring; a call made inside another live call is part of it."""

    @functools.wraps(fn)
    def live(*args, **kwargs):
        recorder = recording.recorder()
        if recorder is None:
            return fn(*args, **kwargs)
        return recorder.live_call(fn, args, kwargs)

    return live


class Stats:
    """What a compiled step did: calls run eagerly, captures, replays, and why each eager call
    or capture happened (`reasons`, newest last, at most 50)."""

    def __init__(self):
        self.eager = self.captures = self.replays = self.checked = 0
        self.reasons: list[str] = []

    def note(self, reason: str) -> None:
        self.reasons.append(reason)
        del self.reasons[:-50]

    def __repr__(self) -> str:
        last = f", last reason: {self.reasons[-1]!r}" if self.reasons else ""
        return (f"Stats(eager={self.eager}, captures={self.captures}, replays={self.replays}"
                f"{last})")


class _Signature:
    """What is known about one argument signature: calls seen, its program or why it stays
    eager."""

    def __init__(self):
        self.calls = 0
        self.program: _Program | None = None
        self.landed: list = []          # tensors from outside whose .grad the last call set
        self.recaptures = 0
        self.eager_reason: str | None = None
        self.fixed: list | None = None  # what the last capture took as fixed (_Recorder.fixed)
        self.outside: list = []         # the tensors from outside the last capture read


class CompiledStep:
    """A step function run eagerly once, captured on its second call, replayed after that."""

    def __init__(self, fn: Callable, check: bool | int = False, modules=(), cache_size: int = 8,
                 max_recaptures: int = 4):
        self.fn = fn
        self.check = 2 if check is True else int(check)
        self.cache_size, self.max_recaptures = cache_size, max_recaptures
        self.enabled = os.environ.get("MINIGRAD_COMPILE", "1") != "0"
        self.stats = Stats()
        self._signatures: dict = {}
        self._modules = _module_roots(fn, modules)
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        if getattr(_LOCAL, "active", None) is not None:
            raise RuntimeError(f"minigrad.compile: {_name(self.fn)} was called inside the "
                               f"compiled step {_name(_LOCAL.active.fn)}; nested compiled steps "
                               f"are not supported (compile the outer step only)")
        _LOCAL.active = self
        try:
            return self._call(args, kwargs)
        finally:
            _LOCAL.active = None

    def _eager(self, args, kwargs, reason: str | None):
        self.stats.eager += 1
        if reason:
            self.stats.note(reason)
        return self.fn(*args, **kwargs)

    def _call(self, args, kwargs):
        if not self.enabled:
            return self._eager(args, kwargs, None)
        tensors, key = _flatten(args, kwargs)
        key = (key, _GRAD_STATE.grad_enabled, anomaly.STATE.enabled, DEFAULTS.float,
               self._training_flags())
        if anomaly.STATE.enabled:
            return self._eager(args, kwargs, "anomaly mode is on: every operation is checked "
                                             "eagerly")
        signature = self._signatures.get(key)
        if signature is None:
            if len(self._signatures) >= self.cache_size:
                return self._eager(args, kwargs, f"cache full: {self.cache_size} argument "
                                                 f"signatures captured already")
            signature = self._signatures[key] = _Signature()
        signature.calls += 1
        if signature.eager_reason is not None:
            return self._eager(args, kwargs, signature.eager_reason)
        program = signature.program
        if program is not None:
            failed = program.failed_guard(tensors)
            if failed is None:
                return self._replay(program, tensors, args, kwargs)
            if signature.recaptures >= self.max_recaptures:
                signature.eager_reason = (f"guard failed after {signature.recaptures} "
                                          f"recaptures: {failed}")
                signature.program = None
                return self._eager(args, kwargs, signature.eager_reason)
            signature.recaptures += 1
            self.stats.note(f"recapture: {failed}")
        return self._capture(signature, tensors, args, kwargs, keep=signature.calls > 1)

    def _capture(self, signature: _Signature, tensors, args, kwargs, keep: bool):
        """Run the step eagerly under the recorder; keep the program when `keep` (call 1 only
        learns which leaves get gradients)."""
        recorder = _Recorder(tensors, signature.landed, signature.outside)
        if not recording.claim(recorder):
            signature.calls -= 1                       # this call does not count: try again
            return self._eager(args, kwargs, "another thread is capturing a step: this call "
                                             "runs eagerly")
        draws, generators = DRAWS.count, _generators()
        try:
            result = self.fn(*args, **kwargs)
        finally:
            recording.release()
        if keep:
            self.stats.captures += 1
        else:
            self.stats.eager += 1
        if recorder.disturbed:
            return self._disturbed(signature, result)
        try:
            if inplace.STATE.last != recorder.stamp:
                raise CaptureRefused("an in-place change inside the step (add_, t[i] = v, an "
                                     "optimizer step of its own): make it outside the compiled "
                                     "step, or in a function marked mg.compiler.disable")
            now = _generators()
            if len(now) != len(generators) or any(a is not b for a, b in zip(now, generators)):
                raise CaptureRefused("manual_seed inside the step: seed outside it")
            if DRAWS.count - draws != recorder.draws_inside:
                raise CaptureRefused("random numbers drawn outside an operation (mg.randn, "
                                     "mg.rand, ...): pass them in as arguments")
            program = recorder.finish(result)
            previous, signature.fixed = signature.fixed, recorder.fixed()
            changed = None if previous is None else _first_change(previous, signature.fixed)
            if changed is not None:
                raise CaptureRefused(f"{changed} differs from the previous call's: it depends "
                                     f"on values the step read outside any operation (through "
                                     f".data?) and would be frozen")
        except CaptureRefused as refusal:
            signature.eager_reason = f"capture refused: {refusal}"
            signature.program = None
            self.stats.note(signature.eager_reason)
            return result
        signature.landed = program.landed_leaves()
        signature.outside = recorder.read_from_outside()
        if keep:
            signature.program = program
        return result

    def _disturbed(self, signature: _Signature, result):
        """Another thread used the engine during the capture: discard it (what that thread did
        could pass for the step's own doing) and capture on a later call, a bounded number of
        times."""
        reason = "another thread used the engine while the step was captured"
        signature.program = None
        if signature.recaptures >= self.max_recaptures:
            signature.eager_reason = f"capture refused after {signature.recaptures} tries: {reason}"
            self.stats.note(signature.eager_reason)
            return result
        signature.recaptures += 1
        signature.calls -= 1                           # this call does not count: try again
        self.stats.note(f"capture discarded: {reason}")
        return result

    def _replay(self, program: _Program, tensors, args, kwargs):
        if self.stats.checked < self.check:
            self.stats.checked += 1
            return self._checked_replay(program, tensors, args, kwargs)
        self.stats.replays += 1
        return program.run(tensors)

    def _checked_replay(self, program: _Program, tensors, args, kwargs):
        """Replay, then put random state and gradients back, run eagerly, compare exactly."""
        if program.lives:
            raise RuntimeError(f"minigrad.compile(check=True): {_name(self.fn)} makes live calls "
                               f"({', '.join(_name(live[0]) for live in program.lives)}); a "
                               f"check would run their updates twice: check the step with them "
                               f"outside it")
        leaves = program.leaves(tensors)
        before_grads = [t.grad for t in leaves]
        updated = program.updated
        before_updates = [t.data.copy() for t in updated]
        rng = _rng_states()
        replayed = program.run(tensors)
        replay_grads = [t.grad for t in leaves]
        replay_updates = [t.data.copy() for t in updated]
        rng_after = _rng_states()
        for t, g in zip(leaves, before_grads):
            t.grad = g
        for t, values in zip(updated, before_updates):
            t.data[...] = values                    # the running statistics as they were
        _set_rng_states(rng)
        self.stats.replays += 1
        expected = self.fn(*args, **kwargs)
        problems = _differences("output", replayed, expected)
        for i, (t, g) in enumerate(zip(leaves, replay_grads)):
            problems += _differences(f".grad of leaf {i} {tuple(t.shape)}", g, t.grad)
        for t, values in zip(updated, replay_updates):
            if not _same_constant(values, t.data):
                problems.append(f"the tensor {tuple(t.shape)} an operation changes in place "
                                f"differs")
        if problems:
            raise RuntimeError(f"minigrad.compile(check=True): the replay of {_name(self.fn)} "
                               f"differs from the eager step: " + "; ".join(problems[:5]))
        _set_rng_states(rng_after)      # the same state as eager left, which equals it
        return expected

    def _training_flags(self) -> tuple:
        """The train/eval flag of every module the step may use, in order."""
        return tuple([module.training for root in self._modules for module in root.modules()])


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


# ---------------------------------------------------------------------------------------------
# Arguments: tensors in order, and a key of everything else.

def _flatten(args, kwargs) -> tuple[list, tuple]:
    """The tensors among the arguments (nested in lists, tuples and dicts), and a hashable key
    of the structure, of each tensor's shape, dtype, array type and requires_grad, of which
    arguments are the same tensor or array, and of every other value (numbers by value, other
    objects by identity)."""
    tensors: list = []
    first: dict[int, int] = {}
    key = (_key_of(args, tensors, first), _key_of(kwargs, tensors, first))
    return tensors, key


def _key_of(x, tensors: list, first: dict):
    """`_flatten`'s key of one argument, its tensors appended to `tensors` (a function of the
    module, not a closure: a closure that calls itself is a reference cycle, left at every call
    for the garbage collector)."""
    if isinstance(x, Tensor):
        data = x.data
        same = first.setdefault(id(x), len(tensors))
        same_array = first.setdefault(-id(data) - 1, len(tensors))
        tensors.append(x)
        return ("T", data.shape, data.dtype, type(data), x._requires_grad, same, same_array)
    if isinstance(x, (list, tuple)):
        parts = [type(x).__name__]          # loops: a comprehension is a function made per call
        for v in x:
            parts.append(_key_of(v, tensors, first))
        return tuple(parts)
    if isinstance(x, dict):
        parts = ["dict"]
        for k, v in x.items():
            parts.append((k, _key_of(v, tensors, first)))
        return tuple(parts)
    if x is None or isinstance(x, (bool, int, float, complex, str, bytes)):
        return ("=", type(x).__name__, x)
    if type(x) in _BY_ARRAY_TYPE:
        raise TypeError("minigrad.compile: pass arrays as Tensors (minigrad.tensor(a)), "
                        "so that the step reads them rather than freezing them")
    return ("id", id(x))


def _module_roots(fn, given) -> list:
    """Objects with a train/eval flag the step may use: given, bound by functools.partial, on
    a bound self (and its attributes), in the closure, and in the globals the code names."""
    candidates = list(given)
    while isinstance(fn, functools.partial):       # the arguments bound to it, then its function
        candidates.extend(fn.args)
        candidates.extend(fn.keywords.values())
        fn = fn.func
    owner = getattr(fn, "__self__", None)
    if owner is not None:
        candidates.append(owner)
        candidates.extend(vars(owner).values() if hasattr(owner, "__dict__") else ())
    code = getattr(fn, "__code__", None)
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            candidates.append(cell.cell_contents)
        except ValueError:                 # an empty cell
            pass
    if code is not None:
        names = getattr(fn, "__globals__", {})
        candidates.extend(names[n] for n in code.co_names if n in names)
    roots, seen = [], set()
    for c in candidates:
        if hasattr(c, "training") and callable(getattr(c, "modules", None)) and \
                id(c) not in seen:
            seen.add(id(c))
            roots.append(c)
    return roots


# ---------------------------------------------------------------------------------------------
# The recorder: what the engine reports while the step runs.

class _Entry:
    """One Function application: class, options, array module, input and output values."""

    __slots__ = ("cls", "options", "xp", "inputs", "output", "array_options", "fn", "state",
                 "bare", "updates")

    def __init__(self, cls, options, xp, inputs, output, array_options, updates=()):
        self.cls, self.options, self.xp = cls, options, xp
        self.inputs, self.output, self.array_options = inputs, output, array_options
        self.updates = updates               # positions of the inputs forward changes in place
        self.fn = None


class _Walk:
    """One backward: its root, where its gradient comes from, the visits and the landings."""

    def __init__(self, root: int, seed):
        self.root, self.seed = root, seed            # seed: None (ones) or a value index
        self.visits: list = []                       # [entry index, [(input, target, conform,
        self.landings: list = []                     #   kind)]] ; (value, kind, copy)


class _Recorder:
    def __init__(self, arg_tensors: list, landed_before: list, outside_before: list = ()):
        self.thread = threading.get_ident()
        self.tensors: list = []            # value index -> Tensor (held while capturing)
        self.index: dict[int, int] = {}    # id(tensor) -> value index
        self.source: list = []             # value index -> ("arg", k) / ("ext",) / ("out", e)
        self.by_array: dict[int, int] = {} # id(array) -> value index, for option arrays
        self.entries: list[_Entry] = []
        self.entry_of_fn: dict[int, int] = {}
        self.events: list = []             # ("forward", e) and ("backward", _Walk) in order
        self.draws_inside = 0
        self.walk: _Walk | None = None
        self.pending_root = None
        self.refusal: str | None = None
        self.disturbed = False             # another thread used the engine meanwhile
        self.grad_at_start: dict[int, object] = {}   # id(leaf) -> its .grad when the call began
        for k, t in enumerate(arg_tensors):
            if id(t) not in self.index:
                self._add(t, ("arg", k))
        for t in list(arg_tensors) + [t for t in landed_before]:
            self.grad_at_start.setdefault(id(t), (t, t.grad))
        self.landed_objects: set[int] = set()
        self.landed_grads: list = []
        self.derived: dict[int, object] = {}   # id(array) -> tensor computed outside operations
        self.landed: dict[int, object] = {}
        self.stamp = inplace.STATE.last        # the newest in-place stamp the step may have made
        self.lives: list = []                  # (callable, args, kwargs, grad mode) in order
        self.live_results: dict[int, tuple] = {}   # id(object a live call returned) -> (call,
        self.live_kept: list = []                  #   path); the objects, so ids stay unique
        self.live_numbers: list = []               # numbers live calls returned
        self.made: list = []       # tensors made inside the step from data (mg.tensor, ...)
        # id(tensor) -> (tensor, its array, a copy of the values): the arguments and tensors
        # from outside, to find writes through .data that a replay would not make
        self.watched: dict[int, tuple] = {}
        for t in list(arg_tensors) + list(outside_before):
            self._watch(t)
        # (tensor, its array, a copy of the values) for each value the step computed (an
        # operation's result, a comparison, a random draw), to find writes through .data
        self.computed: list = []

    def refuse(self, reason: str) -> None:
        if self.refusal is None:
            self.refusal = reason

    def _add(self, t, source) -> int:
        k = len(self.tensors)
        self.tensors.append(t)
        self.index[id(t)] = k
        self.source.append(source)
        self.by_array.setdefault(id(t.data), k)
        if source[0] not in ("arg", "ext"):
            self.computed.append((t, t.data, t.data.copy()))
        return k

    def _value(self, t) -> int:
        k = self.index.get(id(t))
        if k is None:
            self._check_not_derived(t.data)
            self._check_not_live(t)
            self._watch(t)
            k = self._add(t, ("ext",))
        return k

    def _watch(self, t) -> None:
        if id(t) not in self.watched:
            self.watched[id(t)] = (t, t.data, t.data.copy())

    def _check_not_written(self, when: str) -> None:
        """Refuse when an argument or a tensor from outside was given another array, or its
        array other values, since it was watched: `w.data = ...` or `w.data -= ...` inside
        the step, which no replay would repeat."""
        for t, array, values in self.watched.values():
            if t.data is not array or not _same_constant(array, values):
                how = "assigned" if t.data is not array else "written into"
                self.refuse(f"the .data of a tensor {tuple(t.shape)} from outside the step (an "
                            f"argument or parameter) was {how} {when}, which a replay would not "
                            f"do: update it with in-place operations in a function marked "
                            f"mg.compiler.disable, or outside the step")
                return
        # a view of an argument or parameter changes with it (a live call's update): not here
        watched = {id(_owner(a)) for t, a, _ in self.watched.values()} | {
            id(_owner(t.data)) for t, _, _ in self.watched.values()}
        for t, array, values in self.computed:
            if id(_owner(array)) in watched:
                continue
            if t.data is not array or not _same_constant(array, values):
                how = "assigned" if t.data is not array else "written into"
                self.refuse(f"the .data of a tensor {tuple(t.shape)} the step computed was "
                            f"{how} {when}, which a replay would not do: change values with "
                            f"operations (mg.where, masked_fill, ...)")
                return

    def read_from_outside(self) -> list:
        """The tensors from outside the step (parameters, constants) its operations read."""
        return [t for k, t in enumerate(self.tensors) if self.source[k][0] == "ext"]

    def _check_not_live(self, t) -> None:
        """A tensor from outside must not be one the step itself set: a .grad (it is new at
        every call) or a live call's result (it is made again at every replay)."""
        if id(t) in self.live_results:
            self.refuse(f"an operation of the step uses a tensor {tuple(t.shape)} that a live "
                        f"call ({_name(self.lives[self.live_results[id(t)][0]][0])}) returned: "
                        f"it would be frozen; use it outside the compiled step")
        elif id(t) in self.landed_objects:
            self.refuse(f"an operation of the step reads a .grad {tuple(t.shape)} set inside "
                        f"the step: it would be frozen; read gradients in a live call "
                        f"(mg.compiler.disable) or outside the compiled step")
        elif self.live_numbers and t.data.ndim == 0 and any(
                t.data == n for n in self.live_numbers):
            self.refuse(f"an operation of the step uses a number equal to one a live call "
                        f"returned: it would be frozen; use it outside the compiled step")

    def _check_not_derived(self, array) -> None:
        t = self.derived.get(id(array))
        if t is not None:
            self.refuse(f"an operation reads a tensor {tuple(t.shape)} {t.dtype} computed from "
                        f"values outside any operation without a kernel to compute it again "
                        f"(positions nonzero or argwhere found, ...): it would be frozen at its "
                        f"captured value")

    # -- forward ------------------------------------------------------------------------
    def apply(self, cls, inputs, options):
        """Function.apply while capturing: run it eagerly, then record it."""
        updates = (cls(**options) if options else cls()).updates if self.walk is None else ()
        stamp = inplace.STATE.last
        recording.pause()
        try:
            before = DRAWS.count
            out = cls.apply(*inputs, **options)
            drawn = DRAWS.count - before
        finally:
            recording.resume(self)
        self.draws_inside += drawn
        if self.walk is not None:          # an operation of a backward formula
            return out
        ins = [self._value(t) for t in inputs]
        if updates:
            self._updated_by(cls, inputs, ins, updates, stamp)
        if self.live_numbers:
            self._check_options_not_live(cls, options)
        array_options = self._array_options(cls, options)
        entry = _Entry(cls, dict(options), backend_of(out.data).xp, ins,
                       self._add(out, ("out", len(self.entries))), array_options, updates)
        if out._fn is not None:
            self.entry_of_fn[id(out._fn)] = len(self.entries)
        self.events.append(("forward", len(self.entries)))
        self.entries.append(entry)
        return out

    def _updated_by(self, cls, inputs, ins, updates, before: int) -> None:
        """The operation just changed some inputs in place (its `updates`, a batch norm's
        running statistics): a replay runs its forward again on their live arrays, so they
        must be tensors from outside the step; their new values are the watched ones, and its
        in-place stamps are the step's own."""
        if before != self.stamp:                  # a change of the step's own came first
            self.refuse("an in-place change inside the step outside a live call (add_, "
                        "t[i] = v): make it outside the compiled step")
        for position in updates:
            t = inputs[position]
            if self.source[ins[position]][0] != "ext":
                self.refuse(f"{cls.__name__} changes its input {position} {tuple(t.shape)} in "
                            f"place, which is not a tensor from outside the step (a buffer)")
            self.watched[id(t)] = (t, t.data, t.data.copy())
        self.stamp = inplace.STATE.last

    def _check_options_not_live(self, cls, options) -> None:
        for name, value in options.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and any(
                    value is n or value == n for n in self.live_numbers):
                self.refuse(f"{cls.__name__}'s option {name!r} is a number a live call "
                            f"returned: it would be frozen; use it outside the compiled step")

    def _array_options(self, cls, options) -> dict:
        """Options holding arrays that are some tensor's array (or a reshaped view of one):
        {name: plan}, read again at every replay. Any other array shares no memory with a
        tensor (else capture is refused) and is a constant of the capture."""
        plans = {}
        for name, value in options.items():
            plan = self._array_plan(cls, name, value)
            if plan is not None:
                plans[name] = plan
        return plans

    def _array_plan(self, cls, name, value):
        if isinstance(value, (tuple, list)):
            parts = [self._array_plan(cls, name, v) for v in value]
            if any(p is not None for p in parts):
                return ("seq", type(value), [p if p is not None else ("const", v)
                                             for p, v in zip(parts, value)])
            return None
        if type(value) not in _BY_ARRAY_TYPE:
            return None
        self._check_not_derived(value)
        k = self.by_array.get(id(value))
        if k is not None:
            return ("array", k)
        for k, t in enumerate(self.tensors):
            if _same_view(value, t.data):
                return ("array", k)
        base = value.base
        if base is not None:
            k = self.by_array.get(id(base))
            if k is not None and _is_reshape(value, self.tensors[k].data):
                return ("reshape", k, value.shape)
        for t in self.tensors:
            if type(t.data) is np.ndarray and type(value) is np.ndarray and \
                    np.may_share_memory(t.data, value):
                self.refuse(f"{cls.__name__}'s option {name!r} is an array that shares memory "
                            f"with a tensor of shape {tuple(t.shape)} without being its array")
                return None
        return None

    def random_tensor(self, t, kind: str, backend, index, requires_grad: bool) -> None:
        """mg.rand / mg.randn inside the step: drawn again, in the same place, at every
        replay."""
        self.draws_inside += 1
        if requires_grad:
            self.refuse("a random tensor that requires grad made inside the step")
            return
        data = t.data
        k = self._add(t, ("random", kind, data.shape, data.dtype, backend, index))
        self.events.append(("random", k))

    def constant(self, t, inputs, kernel) -> None:
        """A tensor an operation computed from others' arrays outside a Function (a
        comparison, argmax, a cast): computed again at replay when its kernel is known, else
        refused if the step's operations use it (it would be frozen)."""
        if self.walk is not None:
            return
        if kernel is None:
            self.derived[id(t.data)] = t
            return
        ins = [self._value(x) for x in inputs]
        k = self._add(t, ("kernel", kernel, ins))
        self.events.append(("kernel", k))

    def made_from_data(self, t) -> None:
        """A tensor made inside the step from data (mg.tensor, Tensor(...), from_numpy,
        mg.zeros, mg.full, ...): a constant of the capture, compared with the previous call's
        (see `fixed`)."""
        if self.walk is None:
            self.made.append(t)

    def fixed(self) -> list:
        """What a replay takes as fixed beyond its guards, in the order the step made it:
        each operation's class and options (an option that is a tensor's array by where it is
        read from), and the values of the tensors made inside the step from data that
        operations read. Data that a step reads from its inputs outside any operation (through
        `.data`: `mg.tensor(x.data * 2)`, `x[: int(x.data.sum())]`) lands here, so it differs
        from one call to the next, and a capture whose fixed parts differ from the previous
        call's is refused."""
        parts = [("op", entry.cls, [(name, entry.array_options.get(name, value))
                                    for name, value in entry.options.items()])
                 for entry in self.entries]
        parts += [("made", t.data.copy()) for t in self.made if id(t) in self.index]
        return parts

    def read_values(self, tensor, how: str) -> None:
        self.refuse(f"the step reads a tensor's values ({how}, .item(), float(t), bool(t) or "
                    f"a branch on values) of shape {tuple(tensor.shape)}")

    # -- live calls (mg.compiler.disable) ------------------------------------------------
    def live_call(self, fn, args, kwargs):
        """A callable marked to run live: run it now with the recorder off (a live call inside
        it is part of it) and record the call, to be made again at the same point of every
        replay; refused where a replay could not make it the same way."""
        if self.walk is not None:
            self.refuse(f"a live call ({_name(fn)}) inside a backward (a hook or a backward "
                        f"formula)")
        if inplace.STATE.last != self.stamp:
            self.refuse("an in-place change inside the step outside a live call (add_, "
                        "t[i] = v): make it outside the compiled step")
        self._check_live_arguments(fn, (args, kwargs))
        self._check_not_written(f"before the live call {_name(fn)}")
        values = [(t, t._version, t.data) for k, t in enumerate(self.tensors)
                  if self.source[k][0] != "ext"]
        grad_mode = _GRAD_STATE.grad_enabled
        recording.pause()
        try:
            before = DRAWS.count
            result = fn(*args, **kwargs)
            self.draws_inside += DRAWS.count - before
        finally:
            recording.resume(self)
        stamp, self.stamp = self.stamp, inplace.STATE.last
        for key, (t, _, _) in self.watched.items():        # a live call may change them
            self.watched[key] = (t, t.data, t.data.copy())
        live_memory = {id(_owner(t.data)) for k, t in enumerate(self.tensors)
                       if self.source[k][0] == "ext"}
        for t, version, data in values:
            if t._version != version or t.data is not data or (
                    inplace.changes_after(data, stamp) and
                    id(_owner(data)) not in live_memory):      # not a view of a parameter
                self.refuse(f"a live call ({_name(fn)}) changed a tensor {tuple(t.shape)} of "
                            f"the step (an argument or a value it computed); a live call may "
                            f"change only what it reads live: parameters, .grad, its own state")
                break
        call = len(self.lives)
        self.lives.append((fn, args, kwargs, grad_mode))
        self.events.append(("live", call))
        self._note_live_result(result, call, ())
        for t in self._known_leaves():            # .grad a live call set: the step's own
            if t.grad is not None and id(t.grad) not in self.landed_objects:
                self.landed_objects.add(id(t.grad))
                self.landed_grads.append(t.grad)
        return result

    def _known_leaves(self) -> list:
        found = [t for k, t in enumerate(self.tensors) if self.source[k][0] in ("arg", "ext")]
        return found + [t for t, _ in self.grad_at_start.values()]

    def _check_live_arguments(self, fn, x) -> None:
        """A live call's arguments are made again at every replay from what the capture saw:
        objects from outside the step (read when the call is made) and the step's arguments;
        not tensors the step computed, not a .grad, not an iterator (it would be spent)."""
        if isinstance(x, Tensor):
            k = self.index.get(id(x))
            if k is not None and self.source[k][0] not in ("arg", "ext"):
                self.refuse(f"a live call ({_name(fn)}) is given a tensor {tuple(x.shape)} the "
                            f"step computed; give it only objects from outside the step and "
                            f"the step's arguments")
            elif k is None:
                self._check_not_live(x)
        elif isinstance(x, (list, tuple)):
            for v in x:
                self._check_live_arguments(fn, v)
        elif isinstance(x, dict):
            for v in x.values():
                self._check_live_arguments(fn, v)
        elif hasattr(x, "__next__"):
            self.refuse(f"a live call ({_name(fn)}) is given an iterator "
                        f"({type(x).__name__}), which a replay would find spent: pass a list")
        elif type(x) in _BY_ARRAY_TYPE:
            self.refuse(f"a live call ({_name(fn)}) is given an array; give it Tensors")

    def _note_live_result(self, result, call: int, path: tuple) -> None:
        """What a live call returned, so that the step may hand it out (made again at every
        replay) but no operation of the step reads it (it would be frozen)."""
        if isinstance(result, (list, tuple)):
            for i, v in enumerate(result):
                self._note_live_result(v, call, path + (i,))
            return
        if result is None or isinstance(result, (bool, str)):
            return
        self.live_results[id(result)] = (call, path)
        self.live_kept.append(result)
        if isinstance(result, (int, float)):
            self.live_numbers.append(result)

    # -- backward -----------------------------------------------------------------------
    def backward_root(self, tensor, grad, root_grad, create_graph: bool) -> None:
        if create_graph:
            self.refuse("backward(create_graph=True) inside the step")
        if grad is None:
            self.pending_root = (tensor, None)
            return
        k = self.by_array.get(id(root_grad))
        if k is None and isinstance(grad, Tensor) and grad.data is root_grad:
            k = self._value(grad)                    # a tensor from outside, read live
        if k is None:
            self.refuse("backward(grad) with a gradient that is not a Tensor")
        self.pending_root = (tensor, k)

    def walk_begin(self, roots) -> None:
        if self.pending_root is None or self.pending_root[0] is not roots[0]:
            self.refuse("minigrad.grad inside the step (use loss.backward())")
            self.walk = _Walk(-1, None)
            return
        tensor, seed = self.pending_root
        self.pending_root = None
        root = self.index.get(id(tensor))
        if root is None:
            self.refuse("backward of a tensor made outside the step")
            root = -1
        self.walk = _Walk(root, seed)
        self.events.append(("backward", self.walk))

    def visit(self, fn, input_grads) -> None:
        e = self.entry_of_fn.get(id(fn))
        if e is None:
            self.refuse(f"the backward reaches {type(fn).__name__}, an operation made outside "
                        f"the step")
            return
        out = self.tensors[self.entries[e].output]
        if out._hooks or out._retains_grad:
            self.refuse("hooks or retain_grad on a tensor of the step")
        self.walk.visits.append([e, []])
        self._visit_state = (fn.inputs, input_grads, -1)

    def edge(self, x, kind: str) -> None:
        """The walk passed the visited Function's next gradient to its input x and kept or
        accumulated it as `kind`; how it conformed the gradient follows from the gradient the
        backward returned (the walk's own fit test)."""
        if self.refusal is not None or not self.walk.visits:
            return
        inputs, input_grads, i = self._visit_state
        i += 1
        while input_grads[i] is None or not inputs[i]._requires_grad:   # skipped by the walk
            i += 1
        self._visit_state = (inputs, input_grads, i)
        raw, data = input_grads[i], x.data
        if type(raw) is IndexedGradient:
            conform = ("indexed", data.dtype)
        elif type(raw) is type(data) and raw.shape == data.shape and raw.dtype == data.dtype:
            conform = None
        else:
            shape = data.shape if tuple(raw.shape) != data.shape else None
            conform = (shape, data.dtype if raw.dtype != data.dtype else None)
        self.walk.visits[-1][1].append((i, self._value(x), conform, kind))

    def landings(self, results: dict) -> None:
        """The walk's gradients about to land in the leaves' .grad."""
        for t, _, is_owned in results.values():
            self._land(t, is_owned)

    def _land(self, t, is_owned: bool) -> None:
        """A leaf's gradient about to land in .grad (set when None, else added)."""
        k = self.index.get(id(t))
        if k is None:
            self.refuse("a gradient lands in a tensor the step never read")
            return
        if t._hooks:
            self.refuse("hooks on a leaf of the step")
        current = t.grad
        if current is None:
            kind = "set"
        else:
            start = self.grad_at_start.get(id(t))
            if id(current) not in self.landed_objects and (start is None or
                                                           start[1] is not current):
                self.refuse(f".grad of a leaf {tuple(t.shape)} was assigned inside the step "
                            f"(clear it with zero_grad(), to None)")
            kind = "add"
        self.walk.landings.append((k, kind, not is_owned))
        self.landed[id(t)] = t

    def walk_end(self) -> None:
        """The backward's gradients have landed: later operations are the step's again."""
        self.walk = None
        for t in self.landed.values():
            if t.grad is not None:
                self.landed_objects.add(id(t.grad))
                self.landed_grads.append(t.grad)       # held, so that ids stay unique

    def check_grads_at_end(self) -> None:
        """Every .grad the capture knew at the start is as the step left it: the same object,
        cleared to None (replayed as a clear), or what a backward landed."""
        self.clears = []
        for t, start in self.grad_at_start.values():
            now = t.grad
            if now is start or (now is not None and id(now) in self.landed_objects):
                continue
            if now is None:
                if id(t) not in self.landed:
                    self.clears.append(t)
                continue
            self.refuse(f".grad of a tensor {tuple(t.shape)} was assigned inside the step "
                        f"(clear it with zero_grad(), to None)")

    # -- the program ----------------------------------------------------------------------
    def finish(self, result) -> "_Program":
        if self.walk is not None:
            self.refuse("a backward walk that did not finish (minigrad.grad inside the step)")
        self.check_grads_at_end()
        self._check_not_written("inside the step")
        if self.refusal is not None:
            raise CaptureRefused(self.refusal)
        outputs = _output_plan(result, self.index, self.source, self.by_array,
                               self.live_results)
        if self.live_numbers and _returns_numbers(outputs):
            raise CaptureRefused("the step returns a number, and a live call returned one: "
                                 "return the live call's result as it is, or tensors")
        return _Program(self, outputs)


def _first_change(before: list, now: list) -> str | None:
    """Where two captures' fixed parts (_Recorder.fixed) first differ, in words, or None."""
    if len(before) != len(now):
        return "the number of operations and tensors made from data"
    made = 0
    for (kind, *a), (other_kind, *b) in zip(before, now):
        if kind != other_kind:
            return "the sequence of operations and tensors made from data"
        if kind == "made":
            made += 1
            if not _same_constant(a[0], b[0]):
                return (f"tensor {made} of those made inside the step from data (shape "
                        f"{tuple(b[0].shape)})")
        elif a[0] is not b[0] or len(a[1]) != len(b[1]):
            return "the sequence of operations"
        else:
            for (name, x), (other, y) in zip(a[1], b[1]):
                if name != other or not _same_constant(x, y):
                    return f"{b[0].__name__}'s option {other!r}"
    return None


def _same_constant(a, b, depth: int = 0) -> bool:
    """Equal values: arrays in shape, dtype and every element (NaN equal to NaN), tensors by
    their arrays, sequences and dicts item by item, functions by code and closure, objects of
    classes without an == of their own by their attributes, anything else by ==."""
    if a is b:
        return True
    if type(a) is not type(b) or depth > 8:
        return False
    if isinstance(a, Tensor):
        a, b = a.data, b.data
    if type(a) in _BY_ARRAY_TYPE:
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        backend = backend_of(a)
        a, b = backend.to_numpy(a), backend.to_numpy(b)
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same_constant(x, y, depth + 1) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_constant(a[k], b[k], depth + 1) for k in a)
    if isinstance(a, float) and a != a:
        return b != b                                   # NaN
    if callable(a) and hasattr(a, "__code__"):         # a function made anew at each call
        cells = [[c.cell_contents for c in f.__closure__ or ()] for f in (a, b)]
        return a.__code__ is b.__code__ and _same_constant(*cells, depth + 1)
    if type(a).__eq__ is object.__eq__:                # compared by identity: by attributes
        return _same_constant(_attributes(a), _attributes(b), depth + 1)
    try:
        return bool(a == b)
    except Exception:                                   # no equality that answers one bool
        return False


def _attributes(x) -> dict:
    """An object's attributes: its __dict__, else those of its __slots__ that are set."""
    if hasattr(x, "__dict__"):
        return vars(x)
    return {k: getattr(x, k) for k in getattr(type(x), "__slots__", ()) if hasattr(x, k)}


def _same_view(a, b) -> bool:
    """Do arrays a and b read the same memory in the same layout?"""
    return (type(a) is type(b) and a.shape == b.shape and a.strides == b.strides and
            a.dtype == b.dtype and
            a.__array_interface__["data"][0] == b.__array_interface__["data"][0]) \
        if type(a) is np.ndarray else False


def _is_reshape(view, array) -> bool:
    """Is `view` array's memory read in row-major order under another shape?"""
    return (view.size == array.size and view.flags.c_contiguous and array.flags.c_contiguous
            and view.dtype == array.dtype and
            view.__array_interface__["data"][0] == array.__array_interface__["data"][0])


def _output_plan(result, index: dict, sources: list, by_array: dict, live: dict):
    """How to rebuild the step's return value: tensors by value index, what a live call
    returned from that call's result, the rest as it was."""
    if id(result) in live:
        return ("live",) + live[id(result)]
    if isinstance(result, Tensor):
        k = index.get(id(result))
        if k is None and result._fn is None and not result._requires_grad:
            k = by_array.get(id(result.data))        # a detached result: its array
            if k is not None:
                return ("T", k, False, None)
        if k is None:
            raise CaptureRefused(f"the step returns a tensor {tuple(result.shape)} made outside "
                                 f"any operation")
        outside = sources[k][0] == "ext"
        return ("T", k, outside, result if outside else None)
    if isinstance(result, (list, tuple)):
        return ("seq", type(result), [_output_plan(r, index, sources, by_array, live)
                                      for r in result])
    if isinstance(result, dict):
        return ("dict", [(key, _output_plan(v, index, sources, by_array, live))
                         for key, v in result.items()])
    if result is None or isinstance(result, (bool, int, float, str)):
        return ("const", result)
    raise CaptureRefused(f"the step returns a {type(result).__name__}; return tensors, "
                         f"numbers or structures of them")


def _returns_numbers(plan) -> bool:
    """Does the plan hand out a number fixed at capture?"""
    if plan[0] == "const":
        return isinstance(plan[1], (int, float)) and not isinstance(plan[1], bool)
    if plan[0] == "seq":
        return any(_returns_numbers(q) for q in plan[2])
    if plan[0] == "dict":
        return any(_returns_numbers(q) for _, q in plan[1])
    return False


# ---------------------------------------------------------------------------------------------
# The program: replayed with no graph.

class _Program:
    """The straight-line program of one capture."""

    def __init__(self, recorder: _Recorder, outputs):
        self.outputs = outputs
        n = len(recorder.tensors)
        sources = recorder.source
        # the Tensors backward formulas see as their inputs and outputs: for outside tensors
        # the tensors themselves (read live), else one holder per value, refilled each replay
        self.holders: list = []
        self.arg_holders: list = []                       # (holder, argument position)
        self.externals: list = []                         # (tensor, guard)
        self.leaf_objects: dict = {}                      # value index -> tensor from outside
        self.owned: list = []                             # the holders of the program's values
        self.shapes = [tuple(t.shape) for t in recorder.tensors]
        for k in range(n):
            t = recorder.tensors[k]
            if sources[k][0] == "ext":
                self.holders.append(_external(t))
                self.externals.append((t, _guard_of(t)))
                self.leaf_objects[k] = t
            else:                          # empty between replays (see `_drop`)
                holder = Tensor._from_array(t.data)
                holder._requires_grad = t._requires_grad
                self.holders.append(holder)
                self.owned.append(holder)
                if sources[k][0] == "arg":
                    self.arg_holders.append((holder, sources[k][1]))
        self.sources = sources
        self.arg_of_value = {k: s[1] for k, s in enumerate(sources) if s[0] == "arg"}
        self.entries = recorder.entries
        for entry in self.entries:
            entry.fn = self._function(entry)
            # the Function as made, before any forward, for `_reset` (built-ins need none, and
            # an instance whose __dict__ was never read keeps CPython's faster attribute reads)
            entry.state = None if _built_in(entry.cls) else dict(vars(entry.fn))
            entry.bare = entry.fn
            for name in entry.array_options:     # read live at each replay: not kept here
                entry.options[name] = None
        self.events = recorder.events
        self.must_be_none: list = []                      # leaves whose grad must be None
        for kind, walk in self.events:
            if kind != "backward":
                continue
            for k, landing, _ in walk.landings:
                t = recorder.tensors[k]
                start = recorder.grad_at_start.get(id(t))
                if landing == "set" and (start is None or start[1] is None):
                    self.must_be_none.append(k)
        self.ext_values = {id(t): k for k, t in enumerate(recorder.tensors)
                           if sources[k][0] == "ext"}
        self.clears = [("arg", recorder.source[recorder.index[id(t)]][1])
                       if id(t) in recorder.index and
                       recorder.source[recorder.index[id(t)]][0] == "arg" else ("obj", t)
                       for t in recorder.clears]
        for holder in self.owned:                         # the capture's arrays: not kept
            holder.data = None
        self.array_types = [type(t.data) for t in recorder.tensors]
        arg_of = {id(recorder.tensors[k]): s[1] for k, s in enumerate(sources) if s[0] == "arg"}
        # the tensors from outside that operations change in place (running statistics), each
        # once
        self.updated = list({id(t): t for t in (self.holders[entry.inputs[p]]
                                                for entry in self.entries
                                                for p in entry.updates)}.values())
        self.lives = [(fn, _template(args, arg_of), _template(kwargs, arg_of), mode)
                      for fn, args, kwargs, mode in recorder.lives]
        self.source, self.run = _Writer(self).function()

    def _function(self, entry: _Entry):
        """A Function of the entry's class wired to the holders, to run forward and backward
        on arrays."""
        fn = entry.cls(**entry.options) if not entry.array_options else Function()
        return _wired(fn, entry.xp, tuple(self.holders[k] for k in entry.inputs),
                      self.holders[entry.output])

    def landed_leaves(self) -> list:
        """The tensors from outside whose .grad the step sets."""
        return [self.leaf_objects[k] for kind, walk in self.events if kind == "backward"
                for k, _, _ in walk.landings if k not in self.arg_of_value]

    # -- guards ---------------------------------------------------------------------------
    def failed_guard(self, tensors) -> str | None:
        """Why this program cannot replay now, or None."""
        for t, (array_type, shape, dtype, requires_grad) in self.externals:
            data = t.data                # _guard_of(t), compared without making its tuple
            if type(data) is not array_type or data.shape != shape or data.dtype != dtype or \
                    t._requires_grad != requires_grad:
                return (f"a tensor read from outside the step changed: "
                        f"{(array_type, shape, dtype, requires_grad)} -> {_guard_of(t)}")
        for k in self.must_be_none:
            if self._leaf(k, tensors).grad is not None:
                return (f"a leaf {self.shapes[k]} has a .grad now, and had none "
                        f"when captured (the replay would replace it)")
        for t in tensors:
            if id(t) in self.ext_values:
                return "a tensor read from outside the step is also passed as an argument"
        return None

    def _leaf(self, k: int, tensors):
        position = self.arg_of_value.get(k)
        return self.leaf_objects[k] if position is None else tensors[position]

    def leaves(self, tensors) -> list:
        found, seen = [], set()
        for kind, walk in self.events:
            if kind == "backward":
                for k, _, _ in walk.landings:
                    t = self._leaf(k, tensors)
                    if id(t) not in seen:
                        seen.add(id(t))
                        found.append(t)
        return found

    # -- replay: `run(tensors)` is written by `_Writer` ---------------------------------------
    def _with_live_options(self, entry: _Entry):
        """The entry's Function made with its array options read now (they are some tensor's
        array at this replay)."""
        options = dict(entry.options)
        for name, plan in entry.array_options.items():
            options[name] = _live_option(plan, self.holders)
        return _wired(entry.cls(**options), entry.xp, entry.bare.inputs,
                      self.holders[entry.output])


class _Writer:
    """A program's replay written as one straight-line Python function, so that nothing but
    the step's own arithmetic runs per operation: no loop over a plan, no dispatch on event
    kinds, the walk's recorded decisions (where each gradient goes, whether it is conformed,
    how it is accumulated) fixed in the text. Each line still calls the Function's own
    `forward` and its `gradients` formula (given the arrays held in local names) or its
    `backward`, so every derivative stays written once. For W0's first pair:

        v0 = p0.data                         # a tensor from outside, read live
        v1 = p1.data
        v2 = op0.forward(v0, v1)             # Mul
        v3 = op1.forward(v2, v1)             # Add
        ...
        g3 = v6.astype(v3.dtype)             # backward from v3, with the gradient given
        g2, g1 = op1.gradients(g3)           # Add: "set", each gradient as it is
        del g3
        g0, r1 = op0.gradients(g2, v0, v1)   # Mul
        del g2
        g1 = _owned_copy(g1)                 # "copy": the walk's own buffer, then added
        g1 += r1
        _land(p1, g1, "set", False)          # into .grad

    Names: vK the array of value K, hK its holder (the Tensor a `backward` method reads as
    `self.inputs`/`self.output`; filled only when some backward, conform or option reads it,
    emptied at the end), pK a tensor from outside, gK its gradient, rI a gradient to be
    conformed or added, opE the Function of operation E.
    The program's `source` holds the text."""

    def __init__(self, program: _Program):
        self.program = program
        self.names: dict = {"_GradMode": _GradMode, "_conform": _conform, "_land": _land,
                            "_owned_copy": _owned_copy, "_ones": _ones, "_as_array": _as_array,
                            "_wrap": Tensor._from_array, "_reset": _reset}
        self.lines: list[str] = []
        self.read = self._values_read_through_holders()

    def _values_read_through_holders(self) -> set:
        """Values whose holder must hold their array: inputs and outputs of the operations a
        backward visits, and arrays an operation's options read."""
        p, read = self.program, set()
        for kind, walk in p.events:
            if kind == "backward":
                for e, edges in walk.visits:
                    entry = p.entries[e]
                    read.update(target for _, target, conform, _ in edges
                                if conform is not None)          # `_conform` reads its input
                    if _formula(entry.cls) is not None:          # given the arrays themselves
                        continue
                    read.update(entry.inputs)
                    if entry.cls.needs_output:
                        read.add(entry.output)
        for entry in p.entries:
            for plan in entry.array_options.values():
                read.update(_values_of_plan(plan))
        return {k for k in read if p.sources[k][0] != "ext"}

    def name(self, name: str, value) -> str:
        self.names[name] = value
        return name

    def holder(self, k: int) -> str:
        p = self.program
        if p.sources[k][0] == "ext":
            return f"p{k}"
        return self.name(f"h{k}", p.holders[k])

    def emit(self, line: str, indent: int = 2) -> None:
        self.lines.append("    " * indent + line)

    def function(self):
        """(source, the replay function)."""
        p = self.program
        self.lines.append("def replay(tensors):")
        for k, source in enumerate(p.sources):
            if source[0] == "arg":
                self.emit(f"v{k} = tensors[{source[1]}].data", 1)
                if k in self.read:
                    self.emit(f"{self.holder(k)}.data = v{k}", 1)
            elif source[0] == "ext":
                self.name(f"p{k}", p.holders[k])
                self.emit(f"v{k} = p{k}.data                  # read live", 1)
        for i, (kind, t) in enumerate(p.clears):          # zero_grad() inside the step
            target = f"tensors[{t}]" if kind == "arg" else self.name(f"cleared{i}", t)
            self.emit(f"{target}.grad = None", 1)
        self.emit("try:", 1)
        self.emit("with _GradMode(False):", 2)
        for kind, event in p.events:
            if kind == "forward":
                self._operation(event)
            elif kind == "backward":
                self._walk(event)
            elif kind == "live":
                self._live(event)
            else:
                self._made(event)
        self.emit(f"result = {self._output(p.outputs)}", 3)
        self.emit("finally:", 1)
        for k in sorted(self.read):
            self.emit(f"h{k}.data = None", 2)
        resets = [self._reset(e, entry) for e, entry in enumerate(p.entries)]
        for line in filter(None, resets):
            self.emit(line, 2)
        if not self.read and not any(resets):
            self.emit("pass", 2)
        self.emit("return result", 1)
        source = "\n".join(self.lines) + "\n"
        code = builtins.compile(source, f"<replay of {len(p.entries)} operations>", "exec")
        exec(code, self.names)
        return source, self.names["replay"]

    def _operation(self, e: int) -> None:
        """Operation e: its Function's forward on the input arrays."""
        p = self.program
        entry = p.entries[e]
        k = entry.output
        if entry.array_options:          # a Function made now, with its options read live
            self.name(f"live{e}", functools.partial(p._with_live_options, entry))
            self.emit(f"op{e} = live{e}()", 3)
        else:
            self.name(f"op{e}", entry.fn)
        arguments = ", ".join(f"v{i}" for i in entry.inputs)
        self.emit(f"v{k} = op{e}.forward({arguments})  # {entry.cls.__name__}", 3)
        for position in entry.updates:        # changed in place: as eagerly, a new version
            self.name("_mark_changed", inplace.mark_changed)
            self.emit(f"_mark_changed(p{entry.inputs[position]})", 3)
        array_type = p.array_types[k]
        if not (_built_in(entry.cls) and p.shapes[k]):   # NumPy gives 0-d results as scalars
            self.name(_type_name(array_type), array_type)
            self.emit(f"if type(v{k}) is not {_type_name(array_type)}:", 3)
            self.emit(f"v{k} = _as_array(v{k}, op{e}.xp)", 4)
        self._keep(k)

    def _keep(self, k: int) -> None:
        """Value k's array into its holder, when something reads it there."""
        if k in self.read:
            self.emit(f"{self.holder(k)}.data = v{k}", 3)

    def _made(self, k: int) -> None:
        """A random tensor drawn again, or a tensor computed outside a Function again."""
        source = self.program.sources[k]
        if source[0] == "random":
            _, kind, shape, dtype, backend, index = source
            self.name(f"random{k}", functools.partial(backend.random, kind, shape, dtype, index))
            self.emit(f"v{k} = random{k}()", 3)
        else:
            _, (function, *leading), ins = source
            self.name(f"kernel{k}", functools.partial(function, *leading))
            self.emit(f"v{k} = kernel{k}({', '.join(f'v{i}' for i in ins)})", 3)
        self._keep(k)

    def _live(self, call: int) -> None:
        """A live call made again, in the grad mode it was made in, with the step's arguments
        of this call; then every tensor from outside read again (the call may have given one
        a new array)."""
        p = self.program
        fn, args, kwargs, mode = p.lives[call]
        if _has_arguments((args, kwargs)):
            self.name(f"call{call}", functools.partial(_call_live, fn, args, kwargs))
            line = f"returned_by{call} = call{call}(tensors)  # {_name(fn)}, live"
        else:
            self.name(f"call{call}", functools.partial(fn, *args, **kwargs))
            line = f"returned_by{call} = call{call}()  # {_name(fn)}, live"
        if mode:
            self.emit("with _GradMode(True):", 3)
            self.emit(line, 4)
        else:
            self.emit(line, 3)
        for k, source in enumerate(p.sources):
            if source[0] == "ext":
                self.emit(f"v{k} = p{k}.data", 3)

    def _walk(self, walk: _Walk) -> None:
        """One backward as the engine walked it: each visited Function's own derivative, each
        gradient conformed and kept or accumulated as recorded, then the landings."""
        p = self.program
        root = walk.root
        if walk.seed is None:
            self.emit(f"g{root} = _ones(v{root})               # backward from v{root}", 3)
        else:
            self.emit(f"g{root} = v{walk.seed}.astype(v{root}.dtype)  # backward from v{root}", 3)
        indexed: set = set()                  # gradients held as an IndexedGradient now
        for e, edges in walk.visits:
            entry = p.entries[e]
            k = entry.output
            if k in indexed:
                self.emit(f"g{k} = g{k}.dense()", 3)
            grad = f"g{k}" if entry.cls.array_grad else f"_wrap(g{k})"
            # each input's gradient straight into its gradient's name where it is kept as
            # returned, else into rI to be conformed or added; `_` for inputs that get none
            plain = {i: target for i, target, conform, kind in edges
                     if kind == "set" and conform is None}
            got = [f"g{plain[i]}" if i in plain else f"r{i}"
                   if any(edge[0] == i for edge in edges) else "_"
                   for i in range(len(entry.inputs))]
            formula = _formula(entry.cls)
            if formula is not None:    # the backward's own formula, on the arrays held here
                values = ", ".join(self._formula_values(entry, formula))
                call = f"op{e}.gradients({values})  # {entry.cls.__name__}"
            else:
                call = f"op{e}.backward({grad})  # {entry.cls.__name__}"
            if len(got) == 1:                    # one input: a tuple of one or the gradient
                self.emit(f"{got[0]} = {call}", 3)
                self.emit(f"if type({got[0]}) is tuple:", 3)
                self.emit(f"({got[0]},) = {got[0]}", 4)
            else:
                self.emit(f"{', '.join(got)} = {call}", 3)
            self.emit(f"del g{k}", 3)
            for i, target, conform, kind in edges:
                is_indexed = conform is not None and conform[0] == "indexed"
                if i in plain:
                    indexed.discard(target)
                    continue
                gx = f"r{i}"
                if conform is not None:
                    gx = (f"_conform({gx}, {self.name(f'conform{e}_{i}', conform)}, "
                          f"{self.holder(target)}, {entry.cls.__name__!r})")
                if kind == "set":
                    self.emit(f"g{target} = {gx}", 3)
                    if is_indexed:
                        indexed.add(target)
                    else:
                        indexed.discard(target)
                    continue
                if kind == "copy":
                    self.emit(f"g{target} = _owned_copy(g{target})", 3)
                    indexed.discard(target)
                if is_indexed:
                    self.emit(f"{gx}.add_into(g{target})", 3)
                else:
                    self.emit(f"g{target} += {gx}", 3)
        for k, kind, copy_it in walk.landings:
            self.emit(f"_land({self._leaf(k)}, g{k}, {kind!r}, {copy_it})", 3)

    def _formula_values(self, entry: _Entry, formula: tuple) -> list[str]:
        """What `values` gives a `gradients` formula, as the replay's names: the gradient, the
        inputs' arrays, the output's array (each as the class asks)."""
        needs_inputs, needs_output = formula
        k = entry.output
        values = [f"g{k}"]
        if needs_inputs:
            values.extend(f"v{i}" for i in entry.inputs)
        if needs_output:
            values.append(f"v{k}")
        return values

    def _leaf(self, k: int) -> str:
        position = self.program.arg_of_value.get(k)
        return f"p{k}" if position is None else f"tensors[{position}]"

    def _output(self, plan) -> str:
        """The expression that rebuilds the step's return value."""
        kind = plan[0]
        if kind == "T":
            k = plan[1]
            if k in self.program.arg_of_value:
                return f"tensors[{self.program.arg_of_value[k]}]"
            if plan[2]:                          # a tensor from outside: the tensor itself
                return self.name(f"returned{k}", plan[3])
            return f"_wrap(v{k})"
        if kind == "seq":
            parts = [self._output(q) for q in plan[2]]
            if plan[1] is list:
                return "[" + ", ".join(parts) + "]"
            if plan[1] is tuple:
                return "(" + "".join(part + ", " for part in parts) + ")"
            n = len(self.names)
            return f"{self.name(f'sequence{n}', plan[1])}([{', '.join(parts)}])"
        if kind == "dict":
            items = []
            for key, q in plan[1]:
                n = len(self.names)
                items.append(f"{self.name(f'key{n}', key)}: {self._output(q)}")
            return "{" + ", ".join(items) + "}"
        if kind == "live":
            return f"returned_by{plan[1]}" + "".join(f"[{i}]" for i in plan[2])
        n = len(self.names)
        return self.name(f"constant{n}", plan[1])

    def _reset(self, e: int, entry: _Entry) -> str | None:
        """The line that puts operation e's Function back as its constructor made it, after
        the replay: its saved values let go (a built-in Function keeps state only through
        save_for_backward, see tests), anything another Function set on itself removed."""
        if entry.array_options:
            return None                  # made anew at each replay, and dropped with it
        if _built_in(entry.cls):
            if "save_for_backward" in entry.cls.forward.__code__.co_names:
                return f"op{e}.saved_tensors = ()"
            return None
        self.name(f"state{e}", entry.state)
        return f"_reset(op{e}, state{e})"


class _Argument:
    """In a live call's recorded arguments: the step's tensor argument at this position, the
    one of the call being replayed."""

    __slots__ = ("position",)

    def __init__(self, position: int):
        self.position = position


def _template(x, arg_of: dict):
    """A live call's arguments with the step's tensor arguments marked by position."""
    if isinstance(x, Tensor) and id(x) in arg_of:
        return _Argument(arg_of[id(x)])
    if isinstance(x, (list, tuple)):
        return _rebuilt(x, [_template(v, arg_of) for v in x])
    if isinstance(x, dict):
        return {key: _template(v, arg_of) for key, v in x.items()}
    return x


def _rebuilt(x, items: list):
    """A list or tuple (a named tuple too) of x's type holding items."""
    return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)


def _has_arguments(x) -> bool:
    if isinstance(x, _Argument):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_arguments(v) for v in x)
    if isinstance(x, dict):
        return any(_has_arguments(v) for v in x.values())
    return False


def _filled(x, tensors):
    if isinstance(x, _Argument):
        return tensors[x.position]
    if isinstance(x, (list, tuple)) and _has_arguments(x):
        return _rebuilt(x, [_filled(v, tensors) for v in x])
    if isinstance(x, dict) and _has_arguments(x):
        return {key: _filled(v, tensors) for key, v in x.items()}
    return x


def _call_live(fn, args, kwargs, tensors):
    """A live call whose arguments include the step's: made with this call's tensors."""
    return fn(*_filled(args, tensors), **_filled(kwargs, tensors))


def _wired(fn, xp, inputs: tuple, output):
    """fn given its array module, its inputs' holders and its output's, as attributes an eager
    node of its class has too (the array module only when not the class's own, the output only
    when the class reads it): CPython 3.11 keeps an instance's attributes in its class's shared
    layout, where its methods and attributes are read fastest, only while they are names that
    the class's instances have set before."""
    if fn.xp is not xp:
        fn.xp = xp
    fn.inputs = inputs
    if fn.needs_output:
        fn._output_ref = lambda: output
    return fn


def _owner(array):
    """The array whose memory `array` reads (itself, or the base of a view)."""
    base = getattr(array, "base", None)
    return array if base is None else base


def _built_in(cls) -> bool:
    """Is cls one of minigrad's own Functions (whose forward keeps state only through
    save_for_backward and returns an array for every result of one element or more)?"""
    return cls.__module__.startswith("minigrad.")


def _formula(cls) -> tuple | None:
    """(needs_inputs, needs_output) when cls's backward is its `gradients` formula on `values`
    of the gradient, the inputs and the output (see function.py): a replay then calls that
    formula with its arrays, which is what `values` gives when no graph of the backward is
    recorded. None when cls writes its own backward."""
    return _FORMULA_VALUES.get(cls.backward)


_FORMULA_VALUES = {backward: needs for needs, backward in _FORMULA_BACKWARDS.items()}


def _type_name(array_type) -> str:
    return "ndarray" if array_type is np.ndarray else f"array_type_{id(array_type)}"


def _values_of_plan(plan) -> list:
    if plan[0] in ("array", "reshape"):
        return [plan[1]]
    if plan[0] == "seq":
        return [k for q in plan[2] for k in _values_of_plan(q)]
    return []


def _ones(root):
    """The gradient a backward without an explicit one starts from: ∂root/∂root."""
    return backend_of(root).xp.ones(root.shape, dtype=root.dtype)


def _as_array(result, xp):
    """A forward's result as an array (NumPy returns scalars from 0-d operands)."""
    return result if type(result) in _BY_ARRAY_TYPE else xp.asarray(result)


def _owned_copy(g):
    """A value's second gradient arrived: the walk's own buffer, which the first (that may be
    shared: Add hands one array to both inputs) is copied into and the rest are added to."""
    return autograd._dense(g, copy=True)


def _land(t, g, kind: str, copy_it: bool) -> None:
    """A leaf's complete gradient into its .grad, as the walk landed it: set, or added to the
    .grad it already had into a new array (a .grad the caller kept is never written). A
    gradient the walk did not own is set as a copy, unless `held_alone` says the copy would
    change nothing but the time it takes."""
    if kind == "add" and t.grad is not None:          # a new array: g is not copied first
        t.grad = Tensor._from_array(t.grad.data + (g.dense() if type(g) is IndexedGradient
                                                   else g))
    elif type(g) is IndexedGradient:
        t.grad = Tensor._from_array(g.dense())          # a new array
    elif copy_it and not held_alone(g, _HELD_BY_A_NAME):
        t.grad = Tensor._from_array(g.copy())
    else:
        t.grad = Tensor._from_array(g)


def _held_by_a_name_alone() -> int:
    """What `held_alone` reads in `_land` for an array that only one local name of the replay
    holds (that name, two arguments: 4 on CPython 3.11). Measured as `_land` calls it, not
    assumed, so that a Python that counts fewer references on its stack does not take an array
    someone else holds for one nobody does."""
    def land(g):
        return _count(g)

    def _count(g):
        return sys.getrefcount(g)

    g = np.empty(1)
    return land(g)


_HELD_BY_A_NAME = _held_by_a_name_alone()


def _reset(fn, state: dict) -> None:
    """A Function back to its state when made."""
    now = vars(fn)
    now.clear()
    now.update(state)


def _external(t):
    """The tensor a replay reads for a tensor from outside the step: that tensor itself, so
    that its array is read live (an optimizer's update between calls is seen)."""
    return t


def _conform(g, conform, x, name: str):
    """What the walk did to gradient g for input x: dense arrays summed back to x's shape and
    cast to its dtype; an IndexedGradient's values cast."""
    if type(g) is IndexedGradient:
        if g.values.dtype != x.data.dtype:
            g.values = g.values.astype(x.data.dtype)
        return g
    if type(g) is Tensor:
        g = g.data
    if conform is not None:
        shape, dtype = conform
        if shape is not None:
            g = sum_to_array(g, shape, name)
        if dtype is not None:
            g = g.astype(dtype)
    if type(g) not in _BY_ARRAY_TYPE:
        g = backend_of(x.data).xp.asarray(g)
    return g


def _live_option(plan, holders):
    kind = plan[0]
    if kind == "array":
        return holders[plan[1]].data
    if kind == "reshape":
        return holders[plan[1]].data.reshape(plan[2])
    if kind == "const":
        return plan[1]
    return plan[1](_live_option(p, holders) for p in plan[2])


def _guard_of(t) -> tuple:
    data = t.data
    return (type(data), data.shape, data.dtype, t._requires_grad)


# ---------------------------------------------------------------------------------------------
# check=True: random state saved and restored, results compared bit for bit.

def _generators() -> list:
    """Each device's random generator (manual_seed makes a new one). The objects themselves,
    not their id()s: held, an old generator cannot be freed and its address given to the one
    a manual_seed inside the step makes, which would then look unchanged."""
    return [getattr(b, "_rng", None) for b in _backends()]


def _backends() -> list:
    found = []
    for b in _BY_ARRAY_TYPE.values():
        if b not in found:
            found.append(b)
    return found


def _rng_states() -> list:
    return [(b, copy.deepcopy(getattr(b, "_rng", None))) for b in _backends()]


def _set_rng_states(states) -> None:
    for backend, rng in states:
        if rng is not None:
            backend._rng = copy.deepcopy(rng)


def _differences(what: str, a, b) -> list[str]:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            return [f"{what}: {type(a).__name__} vs {type(b).__name__}"]
        x, y = a.data, b.data
        if x.shape != y.shape or x.dtype != y.dtype:
            return [f"{what}: {x.dtype} {x.shape} vs {y.dtype} {y.shape}"]
        xh, yh = backend_of(x).to_numpy(x), backend_of(y).to_numpy(y)
        if not np.array_equal(xh, yh, equal_nan=xh.dtype.kind in "fc"):
            return [f"{what} differs"]
        return []
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        return [p for i, (x, y) in enumerate(zip(a, b))
                for p in _differences(f"{what}[{i}]", x, y)]
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return [p for key in a for p in _differences(f"{what}[{key!r}]", a[key], b[key])]
    return [] if a == b or (a is None and b is None) else [f"{what}: {a!r} vs {b!r}"]
