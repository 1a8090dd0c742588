"""Every public name of minigrad and nn has a docstring: what `help()` shows a user.

Walked: minigrad's `__all__`, every public method and property of `Tensor` and of the other
public classes, and the public names of nn, nn.functional, nn.optim, nn.init and
nn.serialization (their `__all__` where they have one), with the public methods of their
classes. A plain data attribute cannot carry a docstring; Tensor's are named in its class
docstring instead. The test fails listing every name without one.
"""

import inspect
import pydoc

import pytest

import minigrad as mg
import nn
import nn.functional
import nn.init
import nn.optim
import nn.serialization

# names whose value is data (a dtype name), which has no docstring of its own
DATA_NAMES = {"float32", "float64"}


def _own_doc(obj) -> str:
    """The docstring written on obj itself (not inherited from a base class or from int)."""
    doc = obj.__dict__.get("__doc__") if isinstance(obj, type) else getattr(obj, "__doc__", None)
    return (doc or "").strip()


def _public_names(module) -> list[str]:
    """The module's `__all__`, or else its public classes and functions from its own package
    (not what it imports from NumPy or, for nn, from minigrad)."""
    names = getattr(module, "__all__", None)
    if names is None:
        package = module.__name__.split(".")[0]
        names = [n for n, v in vars(module).items() if not n.startswith("_")
                 and (inspect.isclass(v) or inspect.isfunction(v))
                 and v.__module__.split(".")[0] == package]
    return [n for n in names if n not in DATA_NAMES]


def _members(cls):
    """(name, object) of the public methods and properties defined on cls or its bases
    within minigrad and nn (not those of object, int or Exception)."""
    for klass in cls.__mro__:
        if not klass.__module__.split(".")[0] in ("minigrad", "nn"):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_"):
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property) or inspect.isfunction(value):
                yield f"{klass.__qualname__}.{name}", value


def _member_documented(name: str, obj) -> bool:
    """A method overriding a documented one shows the base's docstring in help() (as
    `extra_repr` does), which is enough, except for a module's `forward`, which states its own
    shapes."""
    if _own_doc(obj):
        return True
    return not name.endswith(".forward") and bool(inspect.getdoc(obj))


def _undocumented(module) -> list[str]:
    missing = []
    for name in _public_names(module):
        value = getattr(module, name)
        label = f"{module.__name__}.{name}"
        if not _own_doc(value):
            missing.append(label)
        if isinstance(value, type):
            missing += [f"{module.__name__}.{member}" for member, obj in _members(value)
                        if not _member_documented(member, obj)]
    return missing


def test_every_public_name_of_minigrad_has_a_docstring():
    missing = _undocumented(mg)
    assert not missing, "no docstring: " + ", ".join(sorted(set(missing)))


def test_every_public_name_of_nn_has_a_docstring():
    missing = []
    for module in (nn, nn.functional, nn.optim, nn.init, nn.serialization):
        missing += _undocumented(module)
    assert not missing, "no docstring: " + ", ".join(sorted(set(missing)))


def test_the_engine_names_have_docstrings():
    values = {f"Function.{n}": vars(mg.Function)[n] for n in
              ("apply", "forward", "backward", "save_for_backward", "output")}
    missing = [name for name, value in values.items() if not _own_doc(value)]
    assert not missing, "no docstring: " + ", ".join(missing)


def test_every_tensor_method_and_property_has_a_docstring():
    missing = [name for name, obj in _members(mg.Tensor) if not _own_doc(obj)]
    assert not missing, "no docstring: " + ", ".join(missing)


def test_tensor_data_attributes_are_named_in_its_docstring():
    doc = mg.Tensor.__doc__
    data = [name for name in dir(mg.Tensor) if not name.startswith("_")
            and not callable(getattr(mg.Tensor, name, None))
            and not isinstance(inspect.getattr_static(mg.Tensor, name), property)]
    assert {"data", "grad", "name"} <= set(data)
    missing = [name for name in data if f"`{name}`" not in doc]
    assert not missing, "not named in Tensor's docstring: " + ", ".join(missing)


def test_help_on_tensor_shows_no_source_comments():
    """pydoc shows the comment lines right above a function that has no docstring."""
    text = pydoc.render_doc(mg.Tensor, renderer=pydoc.plaintext)
    lines = [line.lstrip(" |") for line in text.splitlines()]    # pydoc indents with " |"
    leaked = [line for line in lines if line.startswith("#")]
    assert not leaked, leaked[:5]
