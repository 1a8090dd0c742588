"""Devices, array modules, random numbers and transfers.

A *backend* owns one device type ("cpu", "cuda", ...): its array module `xp` (NumPy, CuPy or
anything with NumPy's interface), the array type it produces, and the few operations where array
modules differ (scatter-add, random numbers, moving data). The engine never names NumPy on tensor
data; it asks the backend of the data for `xp`.

New device types plug in with `register_backend`, exactly as CuPy does below.
"""

from __future__ import annotations

import functools

import numpy as np

from ._erf import fast_erf, fast_erfc


_RNG_STATE_BYTES = 37          # PCG64: state and increment (16 bytes each), a flag, a uint32


class _Draws:
    """How many random arrays were drawn so far, on any device: `minigrad.compile` tells the
    draws of a step's operations from draws outside them."""

    count = 0


DRAWS = _Draws()


class Backend:
    """The NumPy backend, device "cpu". Subclasses override what differs on their device."""

    device_type = "cpu"
    multi_device = False          # True when one array type spans several devices (cuda:0, cuda:1)

    def __init__(self):
        self.xp = np
        self.array_types: tuple[type, ...] = (np.ndarray,)
        self._rng = np.random.default_rng()

    # -- availability and devices ---------------------------------------------------------
    def check_available(self, index: int | None) -> None:
        """Raise RuntimeError saying what is missing when the device cannot be used."""

    def device_of(self, array) -> str:
        """The device string of `array` ("cpu", "cuda:1", ...)."""
        return "cpu"

    def from_numpy(self, array: np.ndarray, index: int | None):
        """A copy of host `array` on this device."""
        return array

    def to_numpy(self, array) -> np.ndarray:
        """`array` as a host NumPy array (a copy when it lives elsewhere)."""
        return array

    def asarray(self, data, dtype=None, index: int | None = None):
        """`data` (numbers, lists, arrays) as an array of this device, of `dtype` if given."""
        return np.asarray(data, dtype=dtype)

    # -- operations that differ between array modules --------------------------------------
    def scatter_add(self, target, index, values) -> None:
        """target[index] += values, with repeated indices accumulating."""
        np.add.at(target, index, values)

    def erf(self, array):
        """The error function, elementwise (NumPy has none: SciPy's when present, else the
        piecewise polynomials of minigrad/_erf.py)."""
        return _host_erf(array)

    def erfc(self, array):
        """1 − erf, elementwise, accurate in the upper tail too (SciPy's when present, else
        minigrad/_erf.py's)."""
        erfc = _scipy_special("erfc")
        if erfc is None:
            return fast_erfc(np, array)
        return erfc(array).astype(array.dtype, copy=False)

    def seed(self, seed: int) -> None:
        """Restart this device's random numbers from `seed` (see `minigrad.manual_seed`)."""
        self._rng = np.random.default_rng(seed)

    def rng_state(self) -> np.ndarray:
        """The generator's whole state as bytes (uint8), for `set_rng_state`: PCG64's 128-bit
        state and increment, then its buffered 32-bit draw (a flag and the value)."""
        s = self._rng.bit_generator.state
        raw = (s["state"]["state"].to_bytes(16, "little") + s["state"]["inc"].to_bytes(16, "little")
               + bytes([s["has_uint32"]]) + int(s["uinteger"]).to_bytes(4, "little"))
        return np.frombuffer(raw, dtype=np.uint8).copy()

    def set_rng_state(self, state: np.ndarray) -> None:
        """Restore a state from `rng_state()`; a wrong one raises and changes nothing."""
        if state.dtype != np.uint8 or state.shape != (_RNG_STATE_BYTES,):
            raise ValueError(f"set_rng_state: expected the ({_RNG_STATE_BYTES},) uint8 state "
                             f"that get_rng_state returns, got {state.dtype} "
                             f"{tuple(state.shape)}")
        raw = state.tobytes()
        rng = np.random.default_rng()
        rng.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(raw[:16], "little"),
                      "inc": int.from_bytes(raw[16:32], "little")},
            "has_uint32": raw[32], "uinteger": int.from_bytes(raw[33:37], "little")}
        self._rng = rng

    def random(self, kind: str, shape: tuple[int, ...], dtype, index: int | None = None):
        """Random numbers of `kind` ("uniform" in [0, 1) or "normal") on this device."""
        DRAWS.count += 1
        if kind == "uniform":
            out = self._rng.random(shape, dtype=np.float64)
        else:
            out = self._rng.standard_normal(shape, dtype=np.float64)
        return self.from_numpy(out.astype(dtype, copy=False), index)


class CupyBackend(Backend):
    """CuPy arrays on "cuda" / "cuda:N". Imported lazily: CuPy is an optional extra."""

    device_type = "cuda"
    multi_device = True

    def __init__(self):
        self._cupy = None
        self.xp = None
        self.array_types = ()
        self._seed = None

    def _load(self):
        if self._cupy is None:
            try:
                import cupy
            except ImportError as error:
                raise RuntimeError(
                    "device 'cuda' needs CuPy, which is not installed: "
                    "pip install cupy-cuda12x (the [cuda] extra of this project)") from error
            self._cupy = cupy
            self.xp = cupy
            self.array_types = (cupy.ndarray,)
        return self._cupy

    def check_available(self, index: int | None) -> None:
        cupy = self._load()
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as error:  # CUDA driver missing or broken: say so, keep the cause
            raise RuntimeError(f"device 'cuda' needs a GPU: CuPy is installed but CUDA reports "
                               f"no usable device ({error})") from error
        if count == 0:
            raise RuntimeError("device 'cuda' needs a GPU: CuPy is installed but no GPU is present")
        if index is not None and index >= count:
            raise RuntimeError(f"device 'cuda:{index}' does not exist: {count} GPU(s) present")

    def device_of(self, array) -> str:
        return f"cuda:{array.device.id}"

    def from_numpy(self, array, index):
        cupy = self._load()
        with cupy.cuda.Device(index or 0):
            return cupy.asarray(array)

    def to_numpy(self, array):
        return array.get()

    def asarray(self, data, dtype=None, index=None):
        cupy = self._load()
        with cupy.cuda.Device(index or 0):
            return cupy.asarray(data, dtype=dtype)

    def scatter_add(self, target, index, values):
        self._load().add.at(target, index, values)

    def erf(self, array):
        from cupyx.scipy.special import erf
        return erf(array)

    def erfc(self, array):
        from cupyx.scipy.special import erfc
        return erfc(array)

    def seed(self, seed):
        self._seed = seed
        if self._cupy is not None:
            self._cupy.random.seed(seed)

    def rng_state(self):
        raise NotImplementedError("get_rng_state: CuPy's generators expose no state; only "
                                  "manual_seed restarts the GPU's random numbers")

    def set_rng_state(self, state) -> None:
        raise NotImplementedError("set_rng_state: CuPy's generators expose no state; only "
                                  "manual_seed restarts the GPU's random numbers")

    def random(self, kind, shape, dtype, index=None):
        DRAWS.count += 1
        cupy = self._load()
        with cupy.cuda.Device(index or 0):
            if kind == "uniform":
                return cupy.random.random(shape, dtype=np.float64).astype(dtype, copy=False)
            return cupy.random.standard_normal(shape, dtype=np.float64).astype(dtype, copy=False)


def _host_erf(array: np.ndarray) -> np.ndarray:
    erf = _scipy_special("erf")
    if erf is None:
        return fast_erf(np, array)
    return erf(array).astype(array.dtype, copy=False)


@functools.lru_cache(maxsize=2)
def _scipy_special(name: str):
    """SciPy's special function `name` when SciPy is installed, else None (looked up once,
    not at every call)."""
    try:
        from scipy import special
    except ImportError:
        return None
    return getattr(special, name)


_BACKENDS: dict[str, Backend] = {}
_BY_ARRAY_TYPE: dict[type, Backend] = {}


def register_backend(backend: Backend) -> None:
    """Make `backend.device_type` usable as a device string ("name" or "name:N")."""
    _BACKENDS[backend.device_type] = backend
    for array_type in backend.array_types:
        _BY_ARRAY_TYPE[array_type] = backend


def unregister_backend(device_type: str) -> None:
    """Remove the backend registered for `device_type` (the undo of `register_backend`)."""
    backend = _BACKENDS.pop(device_type)
    for array_type in [t for t, b in _BY_ARRAY_TYPE.items() if b is backend]:
        del _BY_ARRAY_TYPE[array_type]


register_backend(Backend())
register_backend(CupyBackend())
CPU = _BACKENDS["cpu"]


def parse_device(device) -> tuple[Backend, int | None]:
    """"cpu" -> (NumPy backend, None); "cuda:1" -> (CuPy backend, 1). Checks availability."""
    name = str(device)
    device_type, _, index_text = name.partition(":")
    backend = _BACKENDS.get(device_type)
    if backend is None:
        raise ValueError(f"unknown device {name!r}: expected one of "
                         f"{', '.join(repr(k) for k in _BACKENDS)} (optionally with ':N')")
    index = None
    if index_text:
        if not index_text.isdigit():
            raise ValueError(f"bad device {name!r}: the index after ':' must be a number")
        index = int(index_text)
    if backend is not CPU:
        backend.check_available(index)
        # a lazily loaded backend (CuPy) knows its array type only now
        for array_type in backend.array_types:
            _BY_ARRAY_TYPE.setdefault(array_type, backend)
    return backend, index


def backend_of(array) -> Backend:
    """The backend whose array type `array` is; NumPy scalars count as host data."""
    backend = _BY_ARRAY_TYPE.get(type(array))
    if backend is None:
        for array_type, candidate in _BY_ARRAY_TYPE.items():
            if isinstance(array, array_type):
                return candidate
        if isinstance(array, np.generic):        # a NumPy scalar (0-d reductions give them)
            return CPU
        raise TypeError(f"minigrad cannot hold data of type {type(array).__name__}")
    return backend


def is_array(data) -> bool:
    return type(data) in _BY_ARRAY_TYPE or any(isinstance(data, t) for t in _BY_ARRAY_TYPE)


def cuda_available() -> bool:
    """True when CuPy imports and reports at least one GPU."""
    try:
        _BACKENDS["cuda"].check_available(None)
    except RuntimeError:
        return False
    return True


def manual_seed(seed: int) -> None:
    """Seed every backend's random numbers (dropout, initialisers, randn/rand)."""
    for backend in _BACKENDS.values():
        backend.seed(seed)


def backend_of_inputs(op: str, tensors) -> Backend:
    """The backend that all of an operation's input tensors live on, or a clear error naming
    the operation (and the devices, when they differ)."""
    try:
        kind = type(tensors[0].data)
        backend = _BY_ARRAY_TYPE[kind]
    except (AttributeError, IndexError, KeyError):
        if not tensors:
            raise TypeError(f"{op}.apply: needs at least one input Tensor") from None
        for t in tensors:
            if not hasattr(t, "_requires_grad"):
                raise TypeError(f"{op}.apply: inputs must be Tensors, got {type(t).__name__}; "
                                f"wrap arrays with minigrad.tensor()") from None
        backend = backend_of(tensors[0].data)
        kind = type(tensors[0].data)
    for t in tensors:
        if type(getattr(t, "data", None)) is not kind or backend.multi_device:
            if not all(hasattr(t, "_requires_grad") for t in tensors):
                kinds = ", ".join(type(t).__name__ for t in tensors)
                raise TypeError(f"{op}.apply: inputs must be Tensors, got {kinds}; wrap "
                                f"arrays with minigrad.tensor()")
            if len({t.device for t in tensors}) > 1:
                devices = ", ".join(f"{t.device} {tuple(t.shape)}" for t in tensors)
                raise RuntimeError(f"{op}: all inputs must be on one device, got {devices}; "
                                   f"move them with .to(device)")
            break
    return backend
