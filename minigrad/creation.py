"""Making tensors: from data, filled, ranges and random numbers."""

from __future__ import annotations

import numbers

import numpy as np

from .backend import CPU, parse_device
from .recording import made_from_data
from .recording import recorder as _recorder
from .tensor import DEFAULTS, Tensor


def tensor(data, dtype=None, requires_grad: bool = False, device="cpu") -> Tensor:
    """A new leaf tensor holding a copy of `data` (lists, numbers, NumPy/CuPy arrays, Tensors).

    Python floats become float32, NumPy arrays keep their dtype unless `dtype` is given, integer
    and bool data keep their kind (and cannot require grad).
    """
    return Tensor(data, dtype=dtype, requires_grad=requires_grad, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """torch.from_numpy: a tensor that SHARES the NumPy array's memory (a change through either
    shows in the other), with its dtype; no copy, no gradient."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    return made_from_data(Tensor._from_array(array))


def _shape(op: str, shape) -> tuple[int, ...]:
    """`shape` as given to zeros(2, 3) or zeros((2, 3)), checked: every size a
    non-negative int."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, np.ndarray)):
        shape = tuple(shape[0])
    for n in shape:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral):
            raise TypeError(f"{op}: sizes must be ints, got {n!r} in shape "
                            f"{tuple(shape)!r}")
        if n < 0:
            raise ValueError(f"{op}: sizes must be >= 0, got shape {tuple(shape)!r}")
    return tuple(int(n) for n in shape)


def _filled(fill, shape, dtype, requires_grad, device) -> Tensor:
    backend, index = parse_device(device)
    dtype = np.dtype(DEFAULTS.float if dtype is None else dtype)
    array = backend.xp.full(shape, fill, dtype=dtype) if index is None else \
        backend.from_numpy(np.full(shape, fill, dtype=dtype), index)
    t = Tensor._from_array(array)
    if requires_grad:
        t.requires_grad = True
    return made_from_data(t)


def zeros(*shape, dtype=None, requires_grad: bool = False, device="cpu") -> Tensor:
    """A tensor of zeros; `shape` as `zeros(2, 3)` or `zeros((2, 3))`; float32 by default."""
    return _filled(0, _shape("zeros", shape), dtype, requires_grad, device)


def ones(*shape, dtype=None, requires_grad: bool = False, device="cpu") -> Tensor:
    """A tensor of ones; `shape` as `ones(2, 3)` or `ones((2, 3))`; float32 by default."""
    return _filled(1, _shape("ones", shape), dtype, requires_grad, device)


def full(shape, fill_value, dtype=None, requires_grad: bool = False, device="cpu") -> Tensor:
    """A tensor of `shape` (an int or a tuple) filled with `fill_value`. Without `dtype`, the
    fill's kind decides, as in NumPy and PyTorch: bool for True/False, int64 for an int,
    float32 for a float (minigrad's default float, as PyTorch's)."""
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    if dtype is None:
        kind = np.asarray(fill_value.data if isinstance(fill_value, Tensor) else fill_value)
        dtype = {"b": np.bool_, "i": np.int64, "u": np.int64}.get(kind.dtype.kind)
    return _filled(fill_value, shape, dtype, requires_grad, device)


def empty(*shape, dtype=None, requires_grad: bool = False, device="cpu") -> Tensor:
    """Like zeros: minigrad never hands out uninitialised memory."""
    return _filled(0, _shape("empty", shape), dtype, requires_grad, device)


def zeros_like(t: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    """Zeros with t's shape, dtype and device (a new leaf, whatever t's graph)."""
    return _filled(0, t.shape, dtype or t.dtype, requires_grad, t.device)


def ones_like(t: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    """Ones with t's shape, dtype and device (a new leaf, whatever t's graph)."""
    return _filled(1, t.shape, dtype or t.dtype, requires_grad, t.device)


def full_like(t: Tensor, fill_value, dtype=None, requires_grad: bool = False) -> Tensor:
    """`fill_value` everywhere, with t's shape, dtype (unless `dtype`) and device, as
    torch.full_like and numpy.full_like (a new leaf, whatever t's graph)."""
    return _filled(fill_value, t.shape, dtype or t.dtype, requires_grad, t.device)


def arange(start, stop=None, step=1, dtype=None, device="cpu") -> Tensor:
    """Evenly spaced values in [start, stop), as numpy.arange (int64 for integer arguments)."""
    host = np.arange(start, stop, step) if stop is not None else np.arange(start)
    if dtype is None and host.dtype.kind == "f":
        dtype = DEFAULTS.float
    return Tensor(host if dtype is None else host.astype(dtype), device=device)


def eye(n: int, m: int | None = None, k: int = 0, dtype=None, device="cpu") -> Tensor:
    """The n × m matrix (m = n by default) with ones on diagonal k (0: the main one, as
    numpy.eye; torch.eye(n, m) is the same), float32 by default."""
    return Tensor(np.eye(n, m, k, dtype=np.dtype(DEFAULTS.float if dtype is None else dtype)),
                  device=device)


def linspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, device="cpu", *,
             steps: int | None = None) -> Tensor:
    """`num` evenly spaced values from start to stop (included unless endpoint=False), as
    numpy.linspace; PyTorch's `steps=` is num. float32 by default."""
    num = num if steps is None else steps
    if not isinstance(num, numbers.Integral) or num < 0:
        raise ValueError(f"linspace: the number of values must be a non-negative int, got "
                         f"{num!r}")
    host = np.linspace(start, stop, int(num), endpoint=endpoint)
    return Tensor(host.astype(np.dtype(DEFAULTS.float if dtype is None else dtype)),
                  device=device)


def logspace(start, stop, num: int = 50, endpoint: bool = True, base: float = 10.0, dtype=None,
             device="cpu", *, steps: int | None = None) -> Tensor:
    """base ** linspace(start, stop, num), as numpy.logspace (PyTorch's `steps=` is num);
    float32 by default."""
    exponents = linspace(start, stop, num, endpoint, np.float64, steps=steps).numpy()
    host = np.power(float(base), exponents)
    return Tensor(host.astype(np.dtype(DEFAULTS.float if dtype is None else dtype)),
                  device=device)


def tril_indices(n: int, *args, k: int = 0, m: int | None = None,
                 device="cpu") -> tuple[Tensor, Tensor]:
    """(rows, cols) of the lower triangle of an n × m matrix (on and below diagonal k), as
    numpy.tril_indices: two int64 tensors. torch.tril_indices(n, m, k) is their stack. `k` and
    `m` are keywords: a second positional int is NumPy's k and PyTorch's column count, so it
    raises."""
    _one_spelling("tril_indices", n, args)
    rows, cols = np.tril_indices(n, k, m)
    return (Tensor(rows.astype(np.int64), device=device),
            Tensor(cols.astype(np.int64), device=device))


def triu_indices(n: int, *args, k: int = 0, m: int | None = None,
                 device="cpu") -> tuple[Tensor, Tensor]:
    """(rows, cols) of the upper triangle of an n × m matrix (on and above diagonal k), as
    numpy.triu_indices; `k` and `m` are keywords, as in `tril_indices`."""
    _one_spelling("triu_indices", n, args)
    rows, cols = np.triu_indices(n, k, m)
    return (Tensor(rows.astype(np.int64), device=device),
            Tensor(cols.astype(np.int64), device=device))


def _one_spelling(op: str, n, args) -> None:
    """tril/triu_indices(n, a, b): NumPy reads (n, k, m), PyTorch (rows, cols, offset) and
    returns one (2, N) tensor; refuse the call, saying what to write for each."""
    if args:
        given = ", ".join(map(repr, (n, *args)))
        raise TypeError(f"{op}: {op}({given}) is NumPy's (n, k, m) and PyTorch's (rows, cols, "
                        f"offset), which differ: write {op}(n, k=..., m=...) for NumPy's pair "
                        f"of tensors, or mg.stack({op}(rows, k=offset, m=cols)) for PyTorch's "
                        f"(2, N) tensor")


def _random(kind, shape, dtype, requires_grad, device) -> Tensor:
    backend, index = parse_device(device)
    dtype = np.dtype(DEFAULTS.float if dtype is None else dtype)
    shape = _shape("randn" if kind == "normal" else "rand", shape)
    t = Tensor._from_array(backend.random(kind, shape, dtype, index))
    recorder = _recorder()
    if recorder is not None:                  # drawn again at every replay of a compiled step
        recorder.random_tensor(t, kind, backend, index, requires_grad)
    if requires_grad:
        t.requires_grad = True
    return t


def randn(*shape, dtype=None, requires_grad: bool = False, device="cpu") -> Tensor:
    """Standard normal samples, from minigrad's RNG (see manual_seed)."""
    return _random("normal", shape, dtype, requires_grad, device)


def rand(*shape, dtype=None, requires_grad: bool = False, device="cpu") -> Tensor:
    """Uniform samples in [0, 1), from minigrad's RNG (see manual_seed)."""
    return _random("uniform", shape, dtype, requires_grad, device)


def randn_like(t: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples with t's shape, dtype (unless `dtype`) and device, as
    torch.randn_like (a new leaf, whatever t's graph)."""
    return _random("normal", t.shape, dtype or _floating(t, "randn_like"), requires_grad,
                   t.device)


def rand_like(t: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1) with t's shape, dtype (unless `dtype`) and device, as
    torch.rand_like (a new leaf, whatever t's graph)."""
    return _random("uniform", t.shape, dtype or _floating(t, "rand_like"), requires_grad,
                   t.device)


def _floating(t: Tensor, op: str):
    """t's dtype, which must be floating for random floats (PyTorch refuses an integer one)."""
    if t.dtype.kind != "f":
        raise TypeError(f"{op}: t has dtype {t.dtype}; random floats need a floating dtype "
                        f"(pass dtype=)")
    return t.dtype


def randint(low, high=None, size=(), *, dtype="int64", device="cpu") -> Tensor:
    """Integers drawn uniformly from [low, high) ([0, low) when high is None), from minigrad's
    RNG (see manual_seed). NumPy's `randint(low, high, size)` and PyTorch's `randint(high,
    size)` / `randint(low, high, size)` are both understood."""
    if isinstance(high, (tuple, list)):              # PyTorch's randint(high, size)
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if not isinstance(low, numbers.Integral) or not isinstance(high, numbers.Integral) or \
            high <= low:
        raise ValueError(f"randint: needs integers low < high, got low={low!r}, high={high!r}")
    size = (size,) if isinstance(size, numbers.Integral) else tuple(size)
    backend, index = parse_device(device)
    u = backend.random("uniform", size, np.float64, index)     # [0, 1): floor lands in range
    return Tensor._from_array((u * (high - low)).astype(np.int64) + int(low)).astype(dtype)


def randperm(n: int, *, dtype="int64", device="cpu") -> Tensor:
    """A random permutation of 0 … n − 1, from minigrad's RNG (see manual_seed)."""
    if not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"randperm: n must be a non-negative int, got {n!r}")
    backend, index = parse_device(device)
    keys = backend.random("uniform", (int(n),), np.float64, index)
    return Tensor._from_array(backend.xp.argsort(keys).astype(np.int64)).astype(dtype)


def bernoulli(input, p: float | None = None) -> Tensor:
    """1 with probability p, else 0, in input's shape, dtype and device, as torch.bernoulli:
    p the elements of `input` (in [0, 1]) unless given. Drawn from minigrad's RNG (uniform u,
    1 where u < p); no gradient flows (PyTorch's is zero)."""
    t = input if isinstance(input, Tensor) else Tensor(input)
    if t.dtype.kind != "f":
        raise TypeError(f"bernoulli: needs floating probabilities, got dtype {t.dtype}")
    probability = t.detach() if p is None else float(p)
    if p is None and t.numel() and not bool(((t.data >= 0) & (t.data <= 1)).all()):
        raise ValueError(f"bernoulli: probabilities must lie in [0, 1] (input shape "
                         f"{tuple(t.shape)})")
    if p is not None and not 0 <= probability <= 1:
        raise ValueError(f"bernoulli: probabilities must lie in [0, 1], got p={p!r}")
    u = _random("uniform", t.shape, t.dtype, False, t.device)
    return (u < probability).astype(t.dtype)


def normal(mean, std=1.0, size=None, *, dtype=None, device=None) -> Tensor:
    """Samples of N(mean, std²), as torch.normal: mean and std numbers or tensors (broadcast
    together), or two numbers and a `size`. From minigrad's RNG; no gradient flows to mean or
    std (PyTorch's is zero: write mean + std * mg.randn_like(mean) for one that does)."""
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    if tensors:
        if size is not None:
            raise TypeError("normal: size goes with numbers for mean and std, not tensors")
        like = tensors[0]
        mean, std = (v.detach() if isinstance(v, Tensor) else v for v in (mean, std))
        shape = tuple(np.broadcast_shapes(*(tuple(v.shape) for v in (mean, std)
                                            if isinstance(v, Tensor))))
        dtype, device = dtype or like.dtype, device or like.device
    else:
        if size is None:
            raise TypeError("normal: with numbers for mean and std, give size")
        shape = (size,) if isinstance(size, numbers.Integral) else tuple(size)
        device = device or "cpu"
    if np.dtype(dtype or DEFAULTS.float).kind != "f":
        raise TypeError(f"normal: needs a floating dtype, got {dtype}")
    if bool((std.data < 0).any()) if isinstance(std, Tensor) else std < 0:
        raise ValueError("normal: std must be >= 0")
    z = _random("normal", shape, dtype or DEFAULTS.float, False, device)
    return (z * std + mean).detach()


def multinomial(input, num_samples: int, replacement: bool = False) -> Tensor:
    """Category indices drawn with the probabilities in each row of `input` (1-D (C,) or 2-D
    (B, C) weights: finite, non-negative, each row with a positive sum; they need not sum to
    one), as torch.multinomial. Each draw inverts the row's cumulative weights at a uniform
    number from minigrad's RNG (see manual_seed); without replacement a category drawn is not
    drawn again, so a row needs num_samples categories of positive weight. Returns int64
    (num_samples,) or (B, num_samples) on input's device; no gradient flows."""
    t = input if isinstance(input, Tensor) else Tensor(input)
    if t.ndim not in (1, 2) or t.shape[-1] == 0:
        raise ValueError(f"multinomial: input must be (C,) or (B, C) weights with C >= 1, got "
                         f"shape {tuple(t.shape)}")
    if isinstance(num_samples, bool) or not isinstance(num_samples, numbers.Integral) or \
            num_samples < 1:
        raise ValueError(f"multinomial: num_samples must be a positive int, got "
                         f"{num_samples!r}")
    backend, index = parse_device(t.device)
    xp = backend.xp
    weights = t.data.reshape(-1, t.shape[-1]).astype(np.float64)          # (B, C), a copy
    if not bool(xp.isfinite(weights).all()) or bool((weights < 0).any()):
        raise ValueError(f"multinomial: weights must be finite and >= 0 (input shape "
                         f"{tuple(t.shape)})")
    positive = (weights > 0).sum(axis=1)
    if bool((positive == 0).any()):
        raise ValueError(f"multinomial: a row of input (shape {tuple(t.shape)}) has no "
                         f"positive weight")
    if not replacement and num_samples > int(positive.min()):
        raise ValueError(f"multinomial: {num_samples} samples without replacement, but a row "
                         f"of input (shape {tuple(t.shape)}) has only {int(positive.min())} "
                         f"categories of positive weight")
    rows, categories = weights.shape
    # the last category of positive weight: where a draw rounding up to the total lands
    last = categories - 1 - (weights[:, ::-1] > 0).argmax(axis=1)
    picked = xp.empty((rows, int(num_samples)), dtype=np.int64)
    for k in range(int(num_samples)):
        cumulative = xp.cumsum(weights, axis=1)                             # (B, C)
        u = backend.random("uniform", (rows, 1), np.float64, index) * cumulative[:, -1:]
        # the first category whose cumulative weight exceeds u (one of weight 0 never does)
        drawn = xp.minimum((cumulative <= u).sum(axis=1), last)
        picked[:, k] = drawn
        if not replacement:
            weights[xp.arange(rows), drawn] = 0.0
            last = categories - 1 - (weights[:, ::-1] > 0).argmax(axis=1)
    return Tensor._from_array(picked.reshape(tuple(t.shape[:-1]) + (int(num_samples),)))


def get_rng_state(device="cpu") -> Tensor:
    """The state of minigrad's random numbers on `device` (randn, rand, dropout, initialisers)
    as a uint8 tensor, as torch.get_rng_state; save it with a checkpoint and give it back to
    `set_rng_state` to continue the same stream of numbers."""
    backend, _ = parse_device(device)
    return Tensor(backend.rng_state())


def set_rng_state(state, device="cpu") -> None:
    """Restore `device`'s random numbers from `get_rng_state()`'s tensor (or its NumPy array,
    as `nn.load` returns it). A state of the wrong size or dtype raises and changes nothing."""
    backend, _ = parse_device(device)
    array = state.numpy() if isinstance(state, Tensor) else np.asarray(state)
    backend.set_rng_state(array)
