"""The layout's rules, checked on the source: every module of minigrad and nn imports on its own
in a fresh interpreter, imports run one way (no module assigns into another, no import at the
bottom of a file but tensor.py's one late binding, no import of minigrad or nn inside a
function), and a public primitive is complete (class and wrapper, a name in ops.__all__, a
registry entry)."""

from __future__ import annotations

import ast
import functools
import inspect
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import minigrad as mg
import minigrad.ops as ops
import nn

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("minigrad", "nn")
LATE_BINDING = {"minigrad/tensor.py"}          # the one documented import at the bottom
# the functions behind Python's operators and conversions (a + b, x[i], x.astype): called by
# Tensor's methods, not public names of minigrad
HELPERS = {"common", "sum_to_array"}  # ops/common.py's helpers; sum_to's array form (the walk)
TENSOR_OPERATORS = {"getitem", "astype", "to_device", "equal", "bitwise_and", "bitwise_or",
                    "bitwise_xor", "bitwise_not"}


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        names.append(package)
        path = [str(ROOT / package)]
        names += [info.name for info in pkgutil.walk_packages(path, prefix=f"{package}.")]
    return sorted(names)


def _sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


@functools.lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


_ALONE = """
import importlib, os, sys
import numpy                      # shared by every child: not part of what is checked
names, failures = sys.argv[1:], []
def alone(name):
    # a child that has imported nothing of minigrad or nn imports `name`; returns the names
    # of the list it had imported by then
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            importlib.import_module(name)
        except BaseException as error:
            print(f"{name}: {type(error).__name__}: {error}", flush=True)
            os._exit(1)
        bad = [m for m in ("graphviz", "matplotlib") if m in sys.modules
               and name != "minigrad.viz.graph"]
        bad += ["nn"] if name.startswith("minigrad") and "nn" in sys.modules else []
        if bad:                   # its modules are then each tried alone, and named
            print(f"{name}: imports {', '.join(bad)}", flush=True)
            os._exit(1)
        os.write(write, " ".join(n for n in names if n in sys.modules).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        loaded = set(pipe.read().split())
    if os.waitpid(pid, 0)[1]:
        failures.append(name)
    return loaded
# `import minigrad.x.y` imports minigrad first, whole: where that alone imported minigrad.x.y
# too, importing minigrad.x.y alone is the same import and is not made again
loaded = {name: alone(name) for name in names if "." not in name}
for name in names:
    if "." in name and name not in loaded.get(name.split(".")[0], ()):
        alone(name)
sys.exit(1 if failures else 0)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_every_module_imports_alone_in_a_fresh_interpreter():
    """`import M` alone for each module M, in a new interpreter (one process that has
    imported only NumPy forks a child per package, and one per module its package does not
    import): it succeeds, minigrad's modules never pull in nn, and neither graphviz nor
    matplotlib is imported before a picture is drawn."""
    modules = _modules()
    assert len(modules) > 40
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, "-c", _ALONE, *modules], capture_output=True,
                            text=True, cwd=ROOT, env=env, timeout=120)
    assert result.returncode == 0, "modules that fail alone:\n" + result.stdout + result.stderr


def _module_level(tree: ast.Module):
    """Module-level statements, looking into if/try blocks but not into defs and classes."""
    stack = list(tree.body)
    while stack:
        node = stack.pop(0)
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            stack[:0] = [*node.body, *node.orelse, *getattr(node, "finalbody", []),
                         *[s for h in getattr(node, "handlers", []) for s in h.body]]


def test_no_module_assigns_into_another_module():
    """`other._x = ...` at module level is wiring by side effect: what `other._x` is would
    depend on import order. Attributes are set inside functions and methods only."""
    found = []
    for path in _sources():
        tree = _tree(path)
        for node in _module_level(tree):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
                    getattr(node.value.func, "id", None) == "setattr":
                found.append(f"{_relative(path)}:{node.lineno} setattr")
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, (ast.Attribute, ast.Subscript)):
                        found.append(f"{_relative(path)}:{node.lineno} {ast.unparse(target)}")
                        break
    assert not found, "module-level assignments into other objects:\n" + "\n".join(found)


def test_imports_sit_at_the_top_and_wire_nothing_at_call_time():
    """Imports come before the first definition (tensor.py's late binding excepted), and no
    function imports minigrad or nn: an import inside a function is only for an optional
    library (cupy, scipy, matplotlib, graphviz) loaded when first needed."""
    bottom, inside = [], []
    for path in _sources():
        tree = _tree(path)
        seen_definition = False
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                seen_definition = True
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and seen_definition and \
                    _relative(path) not in LATE_BINDING:
                bottom.append(f"{_relative(path)}:{node.lineno}")
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom):
                    names = [inner.module or ""] if not inner.level else ["."]
                elif isinstance(inner, ast.Import):
                    names = [alias.name for alias in inner.names]
                else:
                    continue
                if any(n == "." or n.split(".")[0] in PACKAGES for n in names):
                    inside.append(f"{_relative(path)}:{inner.lineno}")
    assert not bottom, "imports after the first definition:\n" + "\n".join(bottom)
    assert not inside, "imports of minigrad or nn inside functions:\n" + "\n".join(inside)


def _ops_modules():
    return [importlib_module for importlib_module in
            (sys.modules[f"minigrad.ops.{info.name}"] for info in
             pkgutil.iter_modules(ops.__path__))]


def test_every_public_operation_is_in_ops_all_and_in_minigrad():
    """A public function of ops/ (no leading underscore) is a name in `ops.__all__` (or
    stands behind a Python operator), and minigrad exports exactly those names."""
    missing = []
    for module in _ops_modules():
        if module.__name__.rsplit(".", 1)[1] in HELPERS:
            continue
        for name, value in vars(module).items():
            if name in HELPERS:
                continue
            if inspect.isfunction(value) and value.__module__ == module.__name__ and \
                    not name.startswith("_") and name not in ops.__all__ and \
                    name not in TENSOR_OPERATORS:
                missing.append(f"{module.__name__}.{name}")
    assert not missing, "public functions missing from ops.__all__: " + ", ".join(missing)
    assert len(set(ops.__all__)) == len(ops.__all__)
    for name in ops.__all__:
        assert name in mg.__all__ and getattr(mg, name) is getattr(ops, name), name
    for name in TENSOR_OPERATORS:
        assert callable(getattr(ops, name)) and name not in mg.__all__, name


def test_every_primitive_has_its_wrapper_and_a_registry_entry():
    """Each Function class of ops/ is applied by a function of its module, and the registry
    has an entry for it (so the fuzzer draws it)."""
    from .fuzz.registry import ABSTRACT, REGISTRY
    registered = {op.function for op in REGISTRY}
    problems = []
    for module in _ops_modules():
        source = inspect.getsource(module)
        for name, cls in vars(module).items():
            if not (inspect.isclass(cls) and issubclass(cls, mg.Function)) or \
                    cls.__module__ != module.__name__ or cls in ABSTRACT:
                continue
            if f"{name}.apply(" not in source and f", {name})" not in source:
                problems.append(f"{module.__name__}.{name}: no function applies it")
            if cls not in registered:
                problems.append(f"{module.__name__}.{name}: no registry entry")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", ["Linear", "Affine"])
def test_old_import_paths_keep_working(name):
    """Names that moved stay importable where a user could have found them."""
    import nn.functional as F
    import nn.layers
    from minigrad import autograd
    assert getattr(F, name) is F.Affine
    assert nn.layers.ReLU is nn.ReLU and nn.layers.CrossEntropyLoss is nn.CrossEntropyLoss
    assert autograd.Function is mg.Function
    from nn.diagnostics import plot_diagnostics
    assert plot_diagnostics is nn.plot_diagnostics
    assert mg.viz.attention_map is nn.plots.attention_map
