"""Module, Parameter and the containers Sequential, ModuleList, ModuleDict.

A Module owns Parameters (trainable tensors), buffers (non-trainable state saved with the model)
and child Modules, each registered simply by assigning it as an attribute:

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden = nn.Linear(4, 8)       # a child: its parameters are "hidden.weight", ...
            self.out = nn.Linear(8, 2)

        def forward(self, x):
            return self.out(self.hidden(x).relu())

Calling a module runs `forward` inside `minigrad.name_scope(<name>)`, where <name> is the
attribute under which its parent registered it ("self_attn"; "layers.0" for an element of the
ModuleList "layers"), and a module with no parent uses its class name. Scopes nest as the calls
do, so an operation inside that attention layer is tagged
"TransformerEncoder.layers.0.self_attn" and graph pictures can group operations by module.
A module registered in two places takes the name of its latest registration.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Iterable, Iterator, NamedTuple

import numpy as np

import minigrad as mg


def _names_dtype(value) -> bool:
    """Whether a positional argument of Module.to names a dtype ("float64" = mg.float64,
    np.float32) rather than a device ("cpu", "cuda:1", or a registered backend's name)."""
    if value is None or (isinstance(value, str) and value.split(":")[0] in ("cpu", "cuda")):
        return False
    try:
        np.dtype(value)
    except (TypeError, ValueError):
        return False
    return True


class Parameter(mg.Tensor):
    """A Tensor that a Module trains: it requires grad, and assigning it to a Module attribute
    registers it.

    `Parameter(data)` follows `minigrad.tensor`'s dtype rules: Python floats become float32,
    NumPy arrays keep their dtype (float64 stays float64). The data is copied. A Parameter is a
    Tensor everywhere: operators, methods and every minigrad function accept it.
    """

    __slots__ = ()

    def __init__(self, data=None, requires_grad: bool = True, device=None):
        if data is None:
            data = np.zeros((0,), dtype=mg.get_default_dtype())
        super().__init__(data, device=device)
        if requires_grad and self.data.dtype.kind in "fc":
            self.requires_grad = True

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class LoadResult(NamedTuple):
    """What `load_state_dict(..., strict=False)` skipped."""
    missing_keys: list[str]
    unexpected_keys: list[str]


class RemovableHandle:
    """What `register_forward_hook` and `register_forward_pre_hook` return: `remove()`
    unregisters the hook; as a context manager it removes the hook on exit."""

    def __init__(self, hooks: dict):
        self._hooks = hooks

    def remove(self) -> None:
        """Unregister the hook; removing it twice is harmless."""
        self._hooks.pop(self, None)

    def __enter__(self) -> "RemovableHandle":
        """The handle itself: `with module.register_forward_hook(f): ...`."""
        return self

    def __exit__(self, *exc) -> None:
        """Remove the hook when the block ends."""
        self.remove()


class Module:
    """Base class of every layer and model. Subclasses call `super().__init__()` first, assign
    Parameters and Modules as attributes, and implement `forward`."""

    # hooks as in PyTorch; class-level None until one is registered, so a call checks two
    # attributes and runs forward directly when there are none
    _forward_pre_hooks: dict | None = None
    _forward_hooks: dict | None = None

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_scope_name", None)
        object.__setattr__(self, "_scope", mg.name_scope(type(self).__name__))   # for calls
        object.__setattr__(self, "training", True)

    # -- registration ---------------------------------------------------------------------
    # Parameters, buffers and children live in their registries (the source of truth, in
    # order) and, for fast reads in forward, also in the instance dict under the same name:
    # `self.weight` is then a plain attribute read, not a __getattr__ call. Every change below
    # goes through `_register` or `_forget`, which keep the two in step.
    def _register(self, registry: dict, name: str, value) -> None:
        registry[name] = value
        self.__dict__[name] = value

    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}: call super().__init__() before "
                               f"assigning attributes (assigning {name!r})")
        params, buffers, modules = self._parameters, self._buffers, self._modules
        if isinstance(value, Parameter):
            self._forget(name)
            self._register(params, name, value)
        elif isinstance(value, Module):
            self._forget(name)
            self._register(modules, name, value)
            value._set_scope_name(name)
        elif name in params:
            if value is not None:
                raise TypeError(f"{type(self).__name__}.{name} is a Parameter; assign an "
                                f"nn.Parameter (or None), got {type(value).__name__}")
            self._register(params, name, None)
        elif name in buffers:
            if value is not None and not isinstance(value, mg.Tensor):
                raise TypeError(f"{type(self).__name__}.{name} is a buffer; assign a Tensor "
                                f"(or None), got {type(value).__name__}")
            self._register(buffers, name, value)
        elif name in modules:
            if value is not None:
                raise TypeError(f"{type(self).__name__}.{name} is a submodule; assign a Module "
                                f"(or None), got {type(value).__name__}")
            self._register(modules, name, None)
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # called only when normal lookup fails (a module whose instance dict lacks the copy,
        # e.g. one made before __init__ finished): read the registries
        d = self.__dict__
        params = d.get("_parameters")
        if params is not None:                               # else: before __init__ ran
            if name in params:
                return params[name]
            if name in d["_modules"]:
                return d["_modules"][name]
            if name in d["_buffers"]:
                return d["_buffers"][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                self._non_persistent.discard(name)
                self.__dict__.pop(name, None)
                return
        object.__delattr__(self, name)

    def _forget(self, name: str) -> None:
        """Drop `name` from every registry and the instance dict before it is re-registered."""
        for registry in (self._parameters, self._buffers, self._modules):
            registry.pop(name, None)
        self._non_persistent.discard(name)
        self.__dict__.pop(name, None)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register `param` as this module's parameter `name` (None reserves the name, as a
        layer without bias does); the same as assigning `self.name = param`."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter: {name!r} must be an nn.Parameter or None, "
                            f"got {type(param).__name__}")
        self._forget(name)
        self._register(self._parameters, name, param)

    def register_buffer(self, name: str, tensor: mg.Tensor | None,
                        persistent: bool = True) -> None:
        """Register state that is saved in `state_dict` (when persistent) and moved by `to`,
        but not trained (running statistics, fixed tables)."""
        if tensor is not None and not isinstance(tensor, mg.Tensor):
            raise TypeError(f"register_buffer: {name!r} must be a Tensor or None, got "
                            f"{type(tensor).__name__}")
        self._forget(name)
        self._register(self._buffers, name, tensor)
        if not persistent:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        """Register `module` as the submodule `name` (None reserves the name); the same as
        assigning `self.name = module`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {name!r} must be a Module or None, got "
                            f"{type(module).__name__}")
        if module is None:
            self._forget(name)
            self._register(self._modules, name, None)
        else:
            setattr(self, name, module)

    def _set_scope_name(self, name: str) -> None:
        object.__setattr__(self, "_scope_name", name)
        object.__setattr__(self, "_scope", mg.name_scope(self.scope_name))

    @property
    def scope_name(self) -> str:
        """The name_scope this module's calls run in: its attribute path, or its class name."""
        return self._scope_name or type(self).__name__

    # -- calling --------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        """The computation of this module; subclasses define it, and `module(...)` calls it."""
        raise NotImplementedError(f"{type(self).__name__} does not implement forward()")

    def __call__(self, *args, **kwargs):
        if self._forward_pre_hooks or self._forward_hooks:
            return self._call_with_hooks(args, kwargs)
        with self._scope:                    # mg.name_scope(self.scope_name), made once
            return self.forward(*args, **kwargs)

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        """forward between the hooks: pre-hooks may replace the arguments, forward hooks the
        output; each sees what the one before it returned. Hooks run outside the module's
        name scope (they are not part of its computation)."""
        for hook, with_kwargs in list((self._forward_pre_hooks or {}).values()):
            if with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"{type(self).__name__}: a forward pre-hook with "
                                           f"with_kwargs=True must return None or (args, "
                                           f"kwargs), got {type(result).__name__}")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        with self._scope:
            output = self.forward(*args, **kwargs)
        for hook, with_kwargs in list((self._forward_hooks or {}).values()):
            result = hook(self, args, kwargs, output) if with_kwargs else \
                hook(self, args, output)
            if result is not None:
                output = result
        return output

    def register_forward_pre_hook(self, hook: Callable, *,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call `hook(module, args)` before each `forward`, as PyTorch does; `args` is the tuple
        of positional arguments. A returned value replaces them (a non-tuple is wrapped in
        one). With `with_kwargs=True` the hook is `hook(module, args, kwargs)` and may return
        `(args, kwargs)`. Hooks run in the order registered; returns a handle whose `remove()`
        unregisters this one."""
        if self._forward_pre_hooks is None:
            object.__setattr__(self, "_forward_pre_hooks", {})
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle] = (hook, with_kwargs)
        return handle

    def register_forward_hook(self, hook: Callable, *,
                              with_kwargs: bool = False) -> RemovableHandle:
        """Call `hook(module, args, output)` after each `forward`, as PyTorch does (`args`: the
        positional arguments forward got). A returned value other than None replaces the
        output. With `with_kwargs=True` the hook is `hook(module, args, kwargs, output)`.
        Hooks run in the order registered, outside the module's name scope; returns a handle
        whose `remove()` unregisters this one. Recording statistics of every layer of a model
        this way needs no change to the model's code (see `nn.Diagnostics`)."""
        if self._forward_hooks is None:
            object.__setattr__(self, "_forward_hooks", {})
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle] = (hook, with_kwargs)
        return handle

    # -- traversal ------------------------------------------------------------------------
    def named_modules(self, prefix: str = "", remove_duplicate: bool = True,
                      _memo: set | None = None) -> Iterator[tuple[str, "Module"]]:
        """(dotted name, module) for this module (name "") and every descendant, each once."""
        memo = set() if _memo is None else _memo
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                child_prefix = f"{prefix}.{name}" if prefix else name
                yield from child.named_modules(child_prefix, remove_duplicate, memo)

    def modules(self) -> Iterator["Module"]:
        """This module first, then every descendant."""
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        """(name, module) for each direct submodule, in registration order, each once."""
        seen: set[int] = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator["Module"]:
        """The direct submodules, in registration order, each once."""
        for _, child in self.named_children():
            yield child

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs, e.g. ("encoder.layers.0.linear1.weight", W).

        A parameter shared by several modules is listed once (under its first name) unless
        `remove_duplicate=False`.
        """
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter of this module and (with `recurse`) of its submodules, each once."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, mg.Tensor]]:
        """(dotted name, tensor) for every buffer (saved state that is not a parameter)."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[mg.Tensor]:
        """Every buffer (saved state that is not a parameter) of this module and below."""
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def _named_members(self, registry: str, prefix: str, recurse: bool,
                       remove_duplicate: bool):
        seen: set[int] = set()
        modules = (self.named_modules(prefix, remove_duplicate) if recurse
                   else [(prefix, self)])
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def num_parameters(self) -> int:
        """Total number of trainable elements (shared parameters counted once)."""
        return sum(p.size for p in self.parameters())

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        """Call `fn` on every descendant, then on this module (children first, as PyTorch)."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # -- modes, devices, dtypes, gradients ------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        """Set training mode (dropout active) on this module and all descendants."""
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self) -> "Module":
        """Evaluation mode: `train(False)`."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Set `requires_grad` of every parameter (False freezes the module); returns self."""
        for param in self.parameters():
            param.requires_grad = requires_grad
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's `.grad` (gradients accumulate otherwise): to None, or with
        `set_to_none=False` to zeros (a parameter without a gradient keeps None), as PyTorch's
        Module.zero_grad and Optimizer.zero_grad."""
        for param in self.parameters():
            if set_to_none or param.grad is None:
                param.grad = None
            else:
                param.grad = mg.zeros_like(param)

    def to(self, *where, device=None, dtype=None) -> "Module":
        """Move every parameter, gradient and buffer to `device` ("cpu", "cuda", "cuda:1")
        and/or cast the floating-point ones to `dtype`, in place, as PyTorch's Module.to takes
        them: m.to("cuda"), m.to(mg.float64), m.to("cpu", mg.float64), m.to(t) (t's device
        and dtype), or by keyword. The Parameter objects stay the same, so optimizers keep
        working. `dtype` must be floating, as PyTorch requires; integer and bool buffers keep
        theirs."""
        for arg in where:
            if isinstance(arg, mg.Tensor):
                device, dtype = arg.device, arg.dtype
            elif _names_dtype(arg):
                dtype = arg
            else:
                device = arg
        if dtype is not None:
            dtype = np.dtype(dtype)
            if dtype.kind != "f":
                raise TypeError(f"Module.to: dtype must be a floating-point dtype (as in "
                                f"PyTorch), got {dtype}; integer and bool buffers keep theirs")
            self._convert(lambda t: t.data.astype(dtype) if t.dtype.kind == "f" else t.data)
        if device is not None:
            self._convert(lambda t: mg.tensor(t.data, device=device).data
                          if t.device != str(device) else t.data)
        return self

    def cpu(self) -> "Module":
        """Move every parameter and buffer to the host, in place; returns self."""
        return self.to("cpu")

    def cuda(self, index: int = 0) -> "Module":
        """Move every parameter and buffer to GPU `index` (needs CuPy), in place; returns
        self."""
        return self.to(f"cuda:{index}")

    def double(self) -> "Module":
        """Cast floating-point parameters and buffers to float64 (e.g. for gradcheck)."""
        return self.to(dtype=np.float64)

    def float(self) -> "Module":
        """Cast floating-point parameters and buffers to float32."""
        return self.to(dtype=np.float32)

    def _convert(self, convert: Callable[[mg.Tensor], Any]) -> "Module":
        with mg.no_grad():
            for tensor in list(self.parameters()) + list(self.buffers()):
                tensor.data = convert(tensor)
                if tensor.grad is not None:
                    tensor.grad = mg.tensor(convert(tensor.grad), device=tensor.device)
        return self

    # -- state ----------------------------------------------------------------------------
    def state_dict(self) -> "OrderedDict[str, np.ndarray]":
        """Every parameter and persistent buffer by dotted name, as host NumPy copies.

        Shared parameters appear under each of their names (as in PyTorch)."""
        out: OrderedDict[str, np.ndarray] = OrderedDict()
        for name, tensor in self._state_items():
            out[name] = np.array(tensor.numpy(), copy=True)
        return out

    def _state_items(self) -> list[tuple[str, mg.Tensor]]:
        items = []
        for prefix, module in self.named_modules(remove_duplicate=False):
            dot = f"{prefix}." if prefix else ""
            for name, param in module._parameters.items():
                if param is not None:
                    items.append((dot + name, param))
            for name, buffer in module._buffers.items():
                if buffer is not None and name not in module._non_persistent:
                    items.append((dot + name, buffer))
        return items

    def load_state_dict(self, state_dict: dict, strict: bool = True,
                        assign: bool = False) -> LoadResult:
        """Copy values from `state_dict` (name -> array or Tensor) into the parameters and
        buffers.

        Everything is checked before anything is written: with `strict`, missing and
        unexpected keys are errors; shape mismatches always are. The error lists all problems
        together, and the module is left unchanged. Values take each parameter's dtype and
        device, unless `assign=True`, when parameters take the dtype of the loaded values.
        Returns (missing_keys, unexpected_keys).
        """
        state_dict = dict(state_dict)
        for prefix, module in self.named_modules():
            module._load_aliases(f"{prefix}." if prefix else "", state_dict)
        own = self._state_items()
        own_names = {name for name, _ in own}
        missing = [name for name, _ in own if name not in state_dict]
        unexpected = [str(key) for key in state_dict if key not in own_names]
        mismatched, bad_values, staged = [], [], []
        for name, tensor in own:
            if name not in state_dict:
                continue
            value = state_dict[name]
            host = _host_array(value)
            if host is None or host.dtype.kind not in "biuf":
                bad_values.append(f"{name} ({type(value).__name__})")
            elif tuple(host.shape) != tuple(tensor.shape):
                mismatched.append(f"{name}: checkpoint {tuple(host.shape)}, model "
                                  f"{tuple(tensor.shape)}")
            else:
                dtype = host.dtype if assign and host.dtype.kind == "f" else tensor.dtype
                staged.append((tensor, host.astype(dtype, copy=False)))
        problems = []
        if strict and missing:
            problems.append("missing keys: " + ", ".join(missing))
        if strict and unexpected:
            problems.append("unexpected keys: " + ", ".join(unexpected))
        if mismatched:
            problems.append("shape mismatches: " + "; ".join(mismatched))
        if bad_values:
            problems.append("values that are not numeric arrays: " + ", ".join(bad_values))
        if problems:
            raise RuntimeError(f"load_state_dict: cannot load into {type(self).__name__} "
                               f"(nothing was changed):\n  " + "\n  ".join(problems))
        with mg.no_grad():
            for tensor, host in staged:
                tensor.data = mg.tensor(host, device=tensor.device).data
        return LoadResult(missing, unexpected)

    def _load_aliases(self, prefix: str, state_dict: dict) -> None:
        """Move values `state_dict` holds under other names this module accepts (PyTorch's,
        say) to its own names, in place, before `load_state_dict` checks them; `prefix` is this
        module's dotted name and a dot ("" for the root). None by default."""

    # -- printing -------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The arguments shown between the parentheses of this module's repr."""
        return ""

    def __repr__(self) -> str:
        count = self.num_parameters()
        note = f"  # {count:,} params" if count else ""
        children = [(name, child) for name, child in self._modules.items() if child is not None]
        extra = self.extra_repr()
        if not children:
            return f"{type(self).__name__}({extra}){note}"
        lines = [f"{type(self).__name__}({note}"]
        if extra:
            lines.append("  " + extra.replace("\n", "\n  "))
        for name, child in children:
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        lines.append(")")
        return "\n".join(lines)


def _host_array(value) -> np.ndarray | None:
    """A checkpoint value (an array, a Tensor, a PyTorch tensor, ...) as a NumPy array, or None
    when it is not array-like."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, mg.Tensor):
        return value.numpy()
    if hasattr(value, "dtype") and hasattr(value, "shape"):   # an array on another device
        return mg.tensor(value).numpy()
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        return None
    return None if array.dtype == object else array


# ---------------------------------------------------------------------------------------------
# Containers

class Sequential(Module):
    """Modules applied in order: `Sequential(a, b, c)(x) = c(b(a(x)))`.

    Children are named "0", "1", ... or by the keys of an OrderedDict argument.
    """

    def __init__(self, *modules: Module):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], (dict, OrderedDict)):
            for name, module in modules[0].items():
                self.add_module(str(name), module)
        else:
            for i, module in enumerate(modules):
                self.add_module(str(i), module)

    def forward(self, x):
        """x through each module in turn; the last one's output (shapes as its layers')."""
        for module in self._modules.values():
            x = module(x)
        return x

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, index):
        modules = list(self._modules.items())
        if isinstance(index, slice):
            return _keeping_scope_names(lambda: Sequential(OrderedDict(modules[index])),
                                        [m for _, m in modules[index]])
        return modules[_list_index(index, len(modules), "Sequential")][1]

    def append(self, module: Module) -> "Sequential":
        """Add `module` at the end (named by its position); returns self."""
        self.add_module(str(len(self._modules)), module)
        return self


class _NamedContainer(Module):
    """A container that is never called itself: its children's name scopes carry its name
    ("layers.0" inside the list "layers"), so a parent that calls `self.layers[0]` directly
    still tags that layer's operations with the full path."""

    def _child_scope(self, name: str) -> str:
        return f"{self._scope_name}.{name}" if self._scope_name else name

    def _set_scope_name(self, name: str) -> None:
        super()._set_scope_name(name)
        for key, child in self._modules.items():
            if child is not None:
                child._set_scope_name(self._child_scope(key))

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if isinstance(value, Module):
            value._set_scope_name(self._child_scope(name))


class ModuleList(_NamedContainer):
    """A list of Modules whose parameters are registered ("0.weight", "1.weight", ...).

    It has no forward: index it and call its elements.
    """

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, index):
        modules = list(self._modules.values())
        if isinstance(index, slice):
            return _keeping_scope_names(lambda: ModuleList(modules[index]), modules[index])
        return modules[_list_index(index, len(modules), "ModuleList")]

    def __setitem__(self, index: int, module: Module) -> None:
        index = _list_index(index, len(self), "ModuleList")
        self.add_module(str(index), module)

    def __delitem__(self, index) -> None:
        modules = list(self._modules.values())
        del modules[index]
        self._modules.clear()
        self.extend(modules)

    def append(self, module: Module) -> "ModuleList":
        """Add `module` at the end (named by its position); returns self."""
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        """Append each of `modules`; returns self."""
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Put `module` before position `index`; later modules are renamed by position."""
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        self.extend(modules)


class _Entries:
    """A dict's reading side over one of a Module's registries (`_entries` names it:
    "_modules" or "_parameters"): ModuleDict's and ParameterDict's, in insertion order."""

    _entries = "_modules"

    def _registry(self) -> dict:
        return getattr(self, self._entries)

    def __getitem__(self, key: str):
        return self._registry()[key]

    def __delitem__(self, key: str) -> None:
        del self._registry()[key]

    def __contains__(self, key: str) -> bool:
        return key in self._registry()

    def __len__(self) -> int:
        return len(self._registry())

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry())

    def keys(self):
        """The names, in insertion order."""
        return self._registry().keys()

    def values(self):
        """The entries, in insertion order."""
        return self._registry().values()

    def items(self):
        """(name, entry) pairs, in insertion order."""
        return self._registry().items()

    def update(self, entries) -> None:
        """Add or replace entries from a dict or from (name, entry) pairs."""
        items = entries.items() if hasattr(entries, "items") else entries
        for key, value in items:
            self[key] = value


class ModuleDict(_Entries, _NamedContainer):
    """A dict of Modules, registered under their keys ("encoder.weight", ...)."""

    def __init__(self, modules: dict[str, Module] | None = None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    _entries = "_modules"

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def pop(self, key: str) -> Module:
        """Remove the submodule `key` and return it."""
        return self._modules.pop(key)


class ParameterList(Module):
    """A list of Parameters registered as "0", "1", ... (PyTorch's ParameterList): a Tensor
    given is wrapped as a Parameter, as PyTorch does. It has no forward."""

    def __init__(self, values: Iterable | None = None):
        super().__init__()
        if values is not None:
            self.extend(values)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def __getitem__(self, index):
        values = list(self._parameters.values())
        if isinstance(index, slice):
            return ParameterList(values[index])
        return values[_list_index(index, len(values), "ParameterList")]

    def __setitem__(self, index: int, value) -> None:
        index = _list_index(index, len(self), "ParameterList")
        self.register_parameter(str(index), _as_parameter(value, "ParameterList"))

    def append(self, value) -> "ParameterList":
        """Add a Parameter (or a Tensor, wrapped) at the end; returns self."""
        self.register_parameter(str(len(self._parameters)), _as_parameter(value, "ParameterList"))
        return self

    def extend(self, values: Iterable) -> "ParameterList":
        """Append each of `values`; returns self."""
        for value in values:
            self.append(value)
        return self


class ParameterDict(_Entries, Module):
    """A dict of Parameters registered under their keys (PyTorch's ParameterDict): a Tensor
    given is wrapped as a Parameter. It has no forward."""

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self.update(values)

    _entries = "_parameters"

    def __setitem__(self, key: str, value) -> None:
        self.register_parameter(key, _as_parameter(value, "ParameterDict"))


def _as_parameter(value, owner: str) -> Parameter:
    if isinstance(value, Parameter):
        return value
    if isinstance(value, mg.Tensor):
        return Parameter(value)
    raise TypeError(f"{owner}: holds Parameters (or Tensors, wrapped), got "
                    f"{type(value).__name__}")


def _keeping_scope_names(build: Callable[[], Module], modules: list[Module]) -> Module:
    """Build a container around `modules` (a slice) without renaming them: their name scopes
    keep the paths of the model they belong to."""
    names = [m._scope_name for m in modules]
    container = build()
    for module, name in zip(modules, names):
        if name is None:
            object.__setattr__(module, "_scope_name", None)
        else:
            module._set_scope_name(name)
    return container


def _list_index(index, length: int, owner: str) -> int:
    if not isinstance(index, (int, np.integer)):
        raise TypeError(f"{owner} indices must be integers or slices, got "
                        f"{type(index).__name__}")
    if not -length <= index < length:
        raise IndexError(f"{owner} index {index} is out of range for length {length}")
    return int(index) % length
