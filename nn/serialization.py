"""nn.save / nn.load: checkpoints as NumPy .npz files, without pickle.

A checkpoint is a nested structure of dicts, lists and tuples whose leaves are arrays (NumPy,
CuPy or Tensors), numbers, strings, booleans or None, e.g.

    nn.save({"model": model.state_dict(), "optim": opt.state_dict(), "step": 5}, "ckpt.npz")

Layout of the file (a plain .npz, readable with numpy.load):
  - every array leaf is one entry, named by its path with "/" between keys
    ("model/encoder.layers.0.linear1.weight", "optim/state/0/exp_avg"); "%" and "/" inside a
    key are escaped as "%25" and "%2F";
  - the entry "__minigrad__" holds a JSON manifest (UTF-8 bytes): the format name and version
    and the whole tree, with array leaves pointing at their entries and every other leaf stored
    as JSON. Dict keys keep their type (str or int), so optimizer state keyed by parameter index
    comes back as it went in.

Loading never unpickles (`numpy.load(..., allow_pickle=False)`), so a checkpoint cannot run
code. Writing goes to a temporary file in the target directory, then `os.replace` puts it in
place: a crash mid-write leaves the old checkpoint intact.
"""

from __future__ import annotations

import json
import numbers
import os
import tempfile
import zipfile
from typing import Any

import numpy as np

import minigrad as mg

MANIFEST_KEY = "__minigrad__"
FORMAT_NAME = "minigrad.nn.checkpoint"
FORMAT_VERSION = 1


def save(obj: Any, path: str | os.PathLike) -> None:
    """Write `obj` (nested dicts/lists/tuples of arrays, Tensors, numbers, strings, bools,
    None) to `path` as an .npz file, atomically."""
    arrays: dict[str, np.ndarray] = {}
    tree = _encode(obj, [], arrays)
    manifest = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "tree": tree}
    manifest_bytes = json.dumps(manifest, allow_nan=True).encode("utf-8")
    arrays[MANIFEST_KEY] = np.frombuffer(manifest_bytes, dtype=np.uint8)
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp_path = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp_path, path)
    except BaseException:
        if os.path.exists(tmp_path):
            os.remove(tmp_path)
        raise


def load(path: str | os.PathLike) -> Any:
    """Read a checkpoint written by `save`. Arrays come back as NumPy arrays (Tensors too),
    tuples as tuples. A file that is not such a checkpoint (truncated, another format, an
    .npz without our manifest) raises ValueError naming the path."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"nn.load: no such file: {path!r}")
    try:
        archive = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
        raise _not_a_checkpoint(path, error) from error
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise _not_a_checkpoint(path, "it holds a single .npy array, not an .npz archive")
    with archive:
        try:
            return _read(archive)
        except (ValueError, TypeError, OSError, EOFError, KeyError, zipfile.BadZipFile,
                UnicodeDecodeError) as error:
            raise _not_a_checkpoint(path, error) from error


def _not_a_checkpoint(path: str, reason) -> ValueError:
    return ValueError(f"nn.load: {path!r} is not a readable minigrad checkpoint: {reason}")


def _read(archive) -> Any:
    """The tree stored in an open .npz archive, after checking its manifest."""
    names = list(archive.files)
    if MANIFEST_KEY not in names:
        raise ValueError(f"an .npz archive without the {MANIFEST_KEY!r} manifest (not written "
                         f"by nn.save)")
    manifest = json.loads(archive[MANIFEST_KEY].tobytes().decode("utf-8"))
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise ValueError("its manifest is not a minigrad checkpoint manifest")
    if manifest.get("version") != FORMAT_VERSION:
        raise ValueError(f"checkpoint format version {manifest.get('version')!r}, this "
                         f"minigrad reads version {FORMAT_VERSION}")
    arrays = {name: archive[name] for name in names if name != MANIFEST_KEY}
    return _decode(manifest["tree"], arrays)


# ---------------------------------------------------------------------------------------------
# The tree encoding. Nodes are JSON objects:
#   {"dict": [[key, node], ...]}   keys are str or int
#   {"list": [node, ...]}, {"tuple": [node, ...]}
#   {"array": entry}               an .npz entry; {"scalar": entry} for a NumPy scalar
#   {"value": v}                   a JSON number/string/bool/null; {"float": "nan"|"inf"|"-inf"}

def _escape(key: str) -> str:
    return key.replace("%", "%25").replace("/", "%2F")


def _entry_name(path: list, arrays: dict) -> str:
    name = "/".join(_escape(str(k)) for k in path) or "_"
    if name == MANIFEST_KEY or name in arrays:
        base, n = name, 1
        while f"{base}~{n}" in arrays:
            n += 1
        name = f"{base}~{n}"
    return name


def _encode(obj: Any, path: list, arrays: dict[str, np.ndarray]) -> dict:
    if isinstance(obj, dict):
        items = []
        for key, value in obj.items():
            if isinstance(key, bool) or not isinstance(key, (str, numbers.Integral)):
                raise TypeError(f"nn.save: dict keys must be str or int, got {key!r} at "
                                f"{_where(path)}")
            key = key if isinstance(key, str) else int(key)
            items.append([key, _encode(value, path + [key], arrays)])
        return {"dict": items}
    if isinstance(obj, (list, tuple)):
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {kind: [_encode(v, path + [i], arrays) for i, v in enumerate(obj)]}
    if isinstance(obj, mg.Tensor) or _is_device_array(obj):
        host = obj.numpy() if isinstance(obj, mg.Tensor) else mg.tensor(obj).numpy()
        return _encode(host, path, arrays)
    if isinstance(obj, np.ndarray) or isinstance(obj, np.generic):
        array = np.asarray(obj)
        if array.dtype.kind not in "biufcSU":
            raise TypeError(f"nn.save: cannot store an array of dtype {array.dtype} at "
                            f"{_where(path)} (object arrays would need pickle)")
        name = _entry_name(path, arrays)
        arrays[name] = array
        return {"scalar" if isinstance(obj, np.generic) else "array": name}
    if obj is None or isinstance(obj, (bool, str)):
        return {"value": obj}
    if isinstance(obj, numbers.Integral):
        return {"value": int(obj)}
    if isinstance(obj, numbers.Real):
        value = float(obj)
        if value != value or value in (float("inf"), float("-inf")):
            return {"float": repr(value)}
        return {"value": value}
    raise TypeError(f"nn.save: cannot store a {type(obj).__name__} at {_where(path)}; use "
                    f"dicts, lists, tuples, arrays, Tensors, numbers, strings, bools or None")


def _decode(node: Any, arrays: dict[str, np.ndarray]) -> Any:
    if not isinstance(node, dict) or len(node) != 1:
        raise ValueError(f"malformed manifest node {node!r}")
    (kind, body), = node.items()
    if kind == "dict":
        return {key: _decode(value, arrays) for key, value in body}
    if kind == "list":
        return [_decode(value, arrays) for value in body]
    if kind == "tuple":
        return tuple(_decode(value, arrays) for value in body)
    if kind == "array":
        return arrays[body]
    if kind == "scalar":
        return arrays[body][()]
    if kind == "value":
        return body
    if kind == "float":
        return float(body)
    raise ValueError(f"unknown manifest node kind {kind!r}")


def _is_device_array(obj) -> bool:
    """An array of a non-host device (CuPy, ...): array-like, but not NumPy."""
    return hasattr(obj, "dtype") and hasattr(obj, "shape") and \
        not isinstance(obj, (np.ndarray, np.generic))


def _where(path: list) -> str:
    return "/".join(str(k) for k in path) or "the top level"
