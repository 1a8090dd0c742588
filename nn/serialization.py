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

Loading never unpickles, so a checkpoint cannot run code, and trusts nothing a file claims:
every .npy header must account for exactly the bytes its entry holds before an array is
allocated, entries must be stored uncompressed (as `numpy.savez` writes them) and add up to no
more than the file, and the manifest may nest at most MAX_DEPTH levels. A hostile or damaged
file is refused with a ValueError naming it, never a MemoryError or RecursionError. Writing goes
to a temporary file in the target directory, then `os.replace` puts it in place: a crash
mid-write leaves the old checkpoint intact.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import struct
import tempfile
import tokenize
import zipfile
from typing import Any

import numpy as np

import minigrad as mg

MANIFEST_KEY = "__minigrad__"
FORMAT_NAME = "minigrad.nn.checkpoint"
FORMAT_VERSION = 1
# How deeply dicts, lists and tuples may nest (a state dict needs 3 or 4 levels): save refuses
# deeper objects (a list that contains itself, say) and load refuses deeper manifests.
MAX_DEPTH = 100
# The JSON nesting of a tree MAX_DEPTH deep: the manifest object, then at most 3 JSON levels per
# container ({"dict": [[key, node], ...]}) and 1 for a leaf node.
_MAX_JSON_DEPTH = 3 * MAX_DEPTH + 5
_NPY_MAGIC = b"\x93NUMPY"
_STORED_KINDS = "biufcSU"      # the dtype kinds save accepts
_CHUNK = 1 << 20


def save(obj: Any, path: str | os.PathLike) -> None:
    """Write `obj` (nested dicts/lists/tuples of arrays, Tensors, numbers, strings, bools,
    None) to `path` as an .npz file, atomically."""
    arrays: dict[str, np.ndarray] = {}
    tree = _encode(obj, [], arrays)              # may raise: nothing is written yet
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
        os.chmod(tmp_path, 0o666 & ~_umask())   # mkstemp's 0600 → what open() would give
        os.replace(tmp_path, path)
    except BaseException:
        if os.path.exists(tmp_path):
            os.remove(tmp_path)
        raise


def _umask() -> int:
    """The process's umask (reading it means setting it: set it straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def load(path: str | os.PathLike) -> Any:
    """Read a checkpoint written by `save`. Arrays come back as NumPy arrays (Tensors too),
    tuples as tuples.

    A file that is not such a checkpoint (truncated, damaged, another format, an .npz without
    our manifest, compressed entries, pickled objects) raises ValueError naming the path. So
    does a hostile one: every entry's header is checked against the bytes the entry really
    holds before anything is allocated, so a header claiming terabytes is refused without
    allocating them, and a manifest nested more than MAX_DEPTH levels is refused before it is
    parsed. Loading only reads: a failed load changes nothing.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"nn.load: no such file: {path!r}")
    try:
        with open(path, "rb") as f:
            if f.read(len(_NPY_MAGIC)) == _NPY_MAGIC:
                raise ValueError("it holds a single .npy array, not an .npz archive")
            f.seek(0)
            with zipfile.ZipFile(f) as archive:
                return _read(archive, os.fstat(f.fileno()).st_size)
    except MemoryError as error:
        # only a checkpoint that checked out can get here: its arrays fit in the file, and
        # this machine lacks the memory for them
        raise RuntimeError(f"nn.load: not enough memory to read {path!r} "
                           f"({os.path.getsize(path)} bytes)") from None
    except RecursionError:
        raise _not_a_checkpoint(path, "its structure is nested too deeply") from None
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, OSError, EOFError,
            struct.error, zipfile.BadZipFile, zipfile.LargeZipFile) as error:
        raise _not_a_checkpoint(path, error) from error


def _not_a_checkpoint(path: str, reason) -> ValueError:
    return ValueError(f"nn.load: {path!r} is not a readable minigrad checkpoint: {reason}")


def _read(archive: zipfile.ZipFile, file_size: int) -> Any:
    """The tree stored in an open .npz archive of `file_size` bytes, after checking its
    entries and its manifest."""
    entries = _checked_entries(archive, file_size)
    manifest_entry = entries.get(MANIFEST_KEY + ".npy")
    if manifest_entry is None:
        raise ValueError(f"an .npz archive without the {MANIFEST_KEY!r} manifest (not written "
                         f"by nn.save)")
    raw = _read_npy(archive, manifest_entry)
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise ValueError(f"its manifest is a {raw.dtype} array of shape {raw.shape}, not bytes")
    text = raw.tobytes().decode("utf-8")
    _check_nesting(text, _MAX_JSON_DEPTH)
    manifest = json.loads(text)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise ValueError("its manifest is not a minigrad checkpoint manifest")
    if manifest.get("version") != FORMAT_VERSION:
        raise ValueError(f"checkpoint format version {manifest.get('version')!r}, this "
                         f"minigrad reads version {FORMAT_VERSION}")
    if "tree" not in manifest:
        raise ValueError("its manifest has no tree")

    def array(name) -> np.ndarray:
        entry = entries.get(name + ".npy") if isinstance(name, str) else None
        if entry is None:
            raise ValueError(f"the manifest names an entry {name!r} that the archive lacks")
        return _read_npy(archive, entry)

    return _decode(manifest["tree"], array, 0)


def _checked_entries(archive: zipfile.ZipFile, file_size: int) -> dict[str, zipfile.ZipInfo]:
    """The archive's entries by name, once each is known to be what nn.save writes: stored
    (not compressed), unencrypted, named once, and all of them together no larger than the
    file. Reading them then never makes more bytes than the file has, however they overlap."""
    entries: dict[str, zipfile.ZipInfo] = {}
    total = 0
    for info in archive.infolist():
        name = info.filename
        if name in entries:
            raise ValueError(f"the entry {name!r} appears twice")
        if info.flag_bits & 0x1:
            raise ValueError(f"the entry {name!r} is encrypted")
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            raise ValueError(f"the entry {name!r} is compressed (method {info.compress_type}); "
                             f"nn.save writes uncompressed entries")
        total += info.file_size
        if total > file_size:
            raise ValueError(f"its entries claim {total} bytes or more, but the file has "
                             f"{file_size}")
        entries[name] = info
    return entries


def _read_npy(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    """One .npy entry as an array. The header's shape and dtype must account for exactly the
    bytes the entry holds, so the array allocated (after the check) is never larger than the
    entry; object dtypes, which only pickle could fill, are refused."""
    name = info.filename
    with archive.open(info) as f:
        try:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise ValueError(f".npy format version {version}")
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError,
                tokenize.TokenError) as error:
            # NumPy's message may quote the file's raw bytes: keep it to one readable line
            reason = str(error) if str(error).isprintable() and "\\x" not in str(error) \
                else "not a NumPy array header"
            raise ValueError(f"the entry {name!r} has no valid .npy header "
                             f"({reason[:200]})") from None
        if dtype.hasobject or dtype.kind not in _STORED_KINDS or dtype.itemsize == 0:
            raise ValueError(f"the entry {name!r} holds dtype {dtype}, which nn.save never "
                             f"writes (object arrays would need pickle)")
        if any(n < 0 for n in shape):
            raise ValueError(f"the entry {name!r} claims a negative shape {shape}")
        claimed = math.prod(shape) * dtype.itemsize           # Python ints: no overflow
        held = info.file_size - f.tell()
        if claimed != held:
            raise ValueError(f"the entry {name!r} claims shape {shape} of {dtype} "
                             f"({claimed} bytes) but holds {held} bytes of data")
        array = np.empty(math.prod(shape), dtype=dtype)       # ≤ the entry's own size
        _read_into(f, memoryview(array.view(np.uint8)), name)
    if fortran_order:
        return array.reshape(shape[::-1]).transpose()
    return array.reshape(shape)


def _read_into(f, buffer: memoryview, name: str) -> None:
    """Fill `buffer` from `f` in chunks (no second full-size copy). The zip layer checks the
    entry's CRC once its last byte is read."""
    position, size = 0, len(buffer)
    while position < size:
        chunk = f.read(min(_CHUNK, size - position))
        if not chunk:
            raise ValueError(f"the entry {name!r} ends after {position} of {size} data bytes")
        buffer[position:position + len(chunk)] = chunk
        position += len(chunk)


_JSON_SYNTAX = re.compile(r'[\\"\[\]{}]')


def _check_nesting(text: str, limit: int) -> None:
    """Refuse JSON nested deeper than `limit` before parsing it, in one linear pass over the
    characters that matter (quotes, backslashes, brackets)."""
    depth, in_string, escaped_at = 0, False, -1
    for match in _JSON_SYNTAX.finditer(text):
        at, char = match.start(), match.group()
        if at == escaped_at:                   # the character after a backslash in a string
            continue
        if in_string:
            if char == "\\":
                escaped_at = at + 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                raise ValueError(f"its manifest is nested more than {limit} levels deep")
        else:
            depth -= 1


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
    if isinstance(obj, (dict, list, tuple)) and len(path) >= MAX_DEPTH:
        raise ValueError(f"nn.save: containers nested more than {MAX_DEPTH} levels deep at "
                         f"{_where(path[:8])}/... (does a container hold itself?)")
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
        if array.dtype.kind not in _STORED_KINDS or array.dtype.itemsize == 0:
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


def _decode(node: Any, array, depth: int) -> Any:
    """The object a manifest node stands for; `array(name)` reads an entry."""
    if not isinstance(node, dict) or len(node) != 1:
        raise ValueError(f"malformed manifest node {_short(node)}")
    (kind, body), = node.items()
    if kind in ("dict", "list", "tuple"):
        if depth >= MAX_DEPTH:
            raise ValueError(f"its tree is nested more than {MAX_DEPTH} levels deep")
        if not isinstance(body, list):
            raise ValueError(f"malformed {kind} node {_short(node)}")
    if kind == "dict":
        out = {}
        for pair in body:
            if not (isinstance(pair, list) and len(pair) == 2 and not isinstance(pair[0], bool)
                    and isinstance(pair[0], (str, int))):
                raise ValueError(f"malformed dict item {_short(pair)}")
            out[pair[0]] = _decode(pair[1], array, depth + 1)
        return out
    if kind == "list":
        return [_decode(value, array, depth + 1) for value in body]
    if kind == "tuple":
        return tuple(_decode(value, array, depth + 1) for value in body)
    if kind == "array":
        return array(body)
    if kind == "scalar":
        return array(body)[()]
    if kind == "value":
        if isinstance(body, (list, dict)):
            raise ValueError(f"malformed value node {_short(node)}")
        return body
    if kind == "float" and body in ("nan", "inf", "-inf"):
        return float(body)
    raise ValueError(f"unknown manifest node {_short(node)}")


def _short(node: Any) -> str:
    text = repr(node)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_device_array(obj) -> bool:
    """An array of a non-host device (CuPy, ...): array-like, but not NumPy."""
    return hasattr(obj, "dtype") and hasattr(obj, "shape") and \
        not isinstance(obj, (np.ndarray, np.generic))


def _where(path: list) -> str:
    return "/".join(str(k) for k in path) or "the top level"
