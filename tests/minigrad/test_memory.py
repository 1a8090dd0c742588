"""Graphs free themselves: Functions hold their outputs weakly, nothing makes a reference cycle,
and a training loop keeps memory flat."""

import ast
import functools
import gc
import os
import tracemalloc
import weakref
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg


@pytest.fixture
def gc_disabled():
    """Only reference counting frees objects inside the test: a cycle would leak."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    yield
    if was_enabled:
        gc.enable()


def _graph(x: mg.Tensor):
    hidden = mg.tanh(x @ x.T)
    probs = mg.softmax(hidden, axis=-1)
    loss = (probs * hidden).sum() + mg.dropout(hidden, 0.5).mean()
    return hidden, loss


@pytest.mark.parametrize("run_backward", ["none", "backward", "retain_graph", "create_graph"])
def test_deleting_the_loss_frees_the_graph_without_gc(gc_disabled, run_backward):
    x = mg.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    hidden, loss = _graph(x)
    refs = [weakref.ref(hidden), weakref.ref(hidden.grad_fn), weakref.ref(loss.grad_fn)]
    if run_backward == "backward":
        loss.backward()
    elif run_backward == "retain_graph":
        loss.backward(retain_graph=True)
    elif run_backward == "create_graph":
        mg.grad(loss, x, create_graph=True)                # the returned graph is dropped
    del hidden
    # a backward without retain_graph frees the activations even while the loss is kept
    assert (refs[0]() is None) == (run_backward == "backward")
    del loss
    assert [r() for r in refs] == [None, None, None]
    if run_backward in ("backward", "retain_graph"):
        assert x.grad is not None and x.grad.grad_fn is None   # a plain value, no graph


def test_a_function_does_not_keep_its_output_alive(gc_disabled):
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = mg.exp(x)
    fn = y.grad_fn
    assert fn.output is y
    ref = weakref.ref(y)
    del y
    assert ref() is None
    assert fn.output is None


def test_resetting_a_recorded_leaf_gradient_frees_its_graph():
    """backward(create_graph=True) stores a recorded gradient in x.grad; resetting it frees
    that graph by reference counting alone."""
    gc.collect()
    gc.disable()
    try:
        x = mg.tensor([0.5, 1.5], requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        ref = weakref.ref(x.grad.grad_fn)
        x.grad = None
        assert ref() is None
    finally:
        gc.enable()


# -- a training loop keeps memory flat --------------------------------------------------------

def _mlp_problem(rng):
    """A 32-64-10 MLP and a batch labelled by a random linear teacher."""
    x = mg.tensor(rng.standard_normal((64, 32)).astype(np.float32))
    labels = (rng.standard_normal((32, 10)).astype(np.float32).T @ x.numpy().T).argmax(axis=0)
    targets = mg.one_hot(mg.tensor(labels), 10)            # (64, 10)
    params = [
        mg.tensor(rng.standard_normal((32, 64)).astype(np.float32) * np.float32(0.18),
                  requires_grad=True),
        mg.zeros(64, requires_grad=True),
        mg.tensor(rng.standard_normal((64, 10)).astype(np.float32) * np.float32(0.12),
                  requires_grad=True),
        mg.zeros(10, requires_grad=True),
    ]
    return x, targets, params


def _train_step(x, targets, params, lr=0.5):
    w1, b1, w2, b2 = params
    logits = mg.relu(x @ w1 + b1) @ w2 + b2                # (64, 10)
    loss = -(mg.log_softmax(logits, axis=-1) * targets).sum(axis=-1).mean()
    loss.backward()
    with mg.no_grad():                                     # plain SGD: p ← p − lr ∂L/∂p
        new_params = [(p - lr * p.grad).requires_grad_() for p in params]
    return new_params, loss.item()


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _live_tensors() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, mg.Tensor))


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)")
def test_one_thousand_training_steps_keep_memory_flat(rng):
    x, targets, params = _mlp_problem(rng)
    losses = []
    for step in range(1, 1001):
        params, loss = _train_step(x, targets, params)
        losses.append(loss)
        if step == 100:
            gc.collect()
            rss_100, tensors_100 = _resident_bytes(), _live_tensors()
    gc.collect()
    rss_1000, tensors_1000 = _resident_bytes(), _live_tensors()
    assert all(np.isfinite(losses))
    assert losses[-1] < 0.3 * losses[0]                    # it trains
    assert tensors_1000 == tensors_100                     # no tensor outlives its step
    # a leaked graph per step would be ≈ 60 KB × 900 steps ≈ 50 MB
    assert rss_1000 - rss_100 < 4 * 2 ** 20, (rss_100, rss_1000)


def test_training_steps_allocate_nothing_that_stays(rng):
    x, targets, params = _mlp_problem(rng)
    for _ in range(20):                                    # warm up caches
        params, _ = _train_step(x, targets, params)
    tracemalloc.start()
    try:
        for _ in range(30):
            params, _ = _train_step(x, targets, params)
        gc.collect()
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(200):
            params, _ = _train_step(x, targets, params)
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # one step's activations and gradients alone are ≈ 60 KB
    assert after - before < 64 * 2 ** 10, (before, after)


def _functions(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _functions(sub)


@functools.lru_cache(maxsize=None)
def _class_sources(path: str) -> dict[str, str]:
    """{qualified name: source} of every class defined in the file at `path`, which is parsed
    once (inspect.getsource parses the whole file again for each class)."""
    text = Path(path).read_text(encoding="utf-8")
    sources = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                sources[prefix + child.name] = ast.get_source_segment(text, child)
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, f"{prefix}{child.name}.<locals>.")
            else:
                visit(child, prefix)
    visit(ast.parse(text), "")
    return sources


def test_functions_that_do_not_keep_their_output_never_read_it():
    """A class with needs_output = False gets no weak reference to its output: its backward
    (and everything else in its body) must not read self.output."""
    import inspect

    import nn  # noqa: F401  (its fused primitives are Functions too)
    lean = [cls for cls in set(_functions(mg.Function)) if not cls.needs_output]
    assert {"Add", "Mul", "MatMul", "GetItem", "Affine"} <= {cls.__name__ for cls in lean}
    for cls in lean:
        body = _class_sources(inspect.getsourcefile(cls))[cls.__qualname__]
        assert "self.output" not in body and "_output_ref" not in body, cls.__name__
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Mul.output: not kept"):
        (x * x).grad_fn.output
