"""nn.load against hostile and damaged files: headers that claim terabytes, manifests nested
thousands of levels deep, truncations and corrupted bytes. Each is refused with a ValueError
naming the file, without allocating more than the file holds, and changes nothing."""

import io
import json
import os
import struct
import tracemalloc
import warnings
import zipfile

import numpy as np
import pytest

import minigrad as mg
import nn
from nn import serialization

GiB = 1 << 30


def npy_entry(shape, descr="<f8", data=b"", fortran_order=False) -> bytes:
    """The bytes of a .npy file whose header says `shape` and `descr`, followed by `data`
    (which need not match the header)."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": descr, "fortran_order": fortran_order, "shape": tuple(shape)})
    return buffer.getvalue() + data


def manifest_entry(tree) -> bytes:
    return manifest_text_entry(json.dumps({"format": serialization.FORMAT_NAME,
                                           "version": serialization.FORMAT_VERSION,
                                           "tree": tree}))


def manifest_text_entry(text: str) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.frombuffer(text.encode("utf-8"), dtype=np.uint8))
    return buffer.getvalue()


def write_archive(path, entries: dict, compression=zipfile.ZIP_STORED) -> None:
    """A zip of `entries` (name without .npy -> bytes), as np.savez lays one out."""
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, data in entries.items():
            archive.writestr(name + ".npy", data)


def one_array_checkpoint(path, entry: bytes) -> None:
    write_archive(path, {"__minigrad__": manifest_entry({"dict": [["w", {"array": "w"}]]}),
                         "w": entry})


def load_refused(path, match: str, budget: int = 16 << 20) -> ValueError:
    """nn.load(path) raises ValueError naming the path and matching `match`, while tracing at
    most `budget` bytes of allocations (NumPy reports its array buffers to tracemalloc)."""
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=str(path.name)) as info:
            nn.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert match in str(info.value), str(info.value)
    assert peak < budget, f"nn.load allocated {peak} bytes for a {path.stat().st_size}-byte file"
    return info.value


# -- headers that claim more than the file holds ------------------------------------------

@pytest.mark.parametrize("shape, descr", [
    ((2 ** 33,), "<f8"),                 # 64 GiB
    ((2 ** 40,), "<f8"),                 # 8 TiB
    ((2 ** 20, 2 ** 20, 2 ** 10), "<f4"),  # 4 PiB over three axes
    ((2 ** 62,), "<c16"),                # more bytes than an int64 can count
    ((1024, 0, 2 ** 60), "<f8"),         # zero elements, but the data is not zero bytes
])
def test_a_header_claiming_a_huge_shape_is_refused_without_allocating_it(tmp_path, shape,
                                                                         descr):
    path = tmp_path / "huge.npz"
    one_array_checkpoint(path, npy_entry(shape, descr, data=b"\x00" * 16))
    error = load_refused(path, "claims shape")
    assert str(shape) in str(error) and "holds 16 bytes" in str(error)


def test_a_header_claiming_less_than_the_entry_holds_is_refused(tmp_path):
    path = tmp_path / "short.npz"
    one_array_checkpoint(path, npy_entry((2,), "<f8", data=b"\x00" * 64))
    load_refused(path, "claims shape (2,)")


def test_a_central_directory_claiming_more_bytes_than_the_file_is_refused(tmp_path):
    path = tmp_path / "sizes.npz"
    nn.save({"w": np.ones(1000)}, path)
    data = bytearray(path.read_bytes())
    at = data.find(b"PK\x01\x02")                    # the first central directory record
    struct.pack_into("<II", data, at + 20, 0xFFFFFFF0, 0xFFFFFFF0)   # compressed, full size
    path.write_bytes(bytes(data))
    load_refused(path, "but the file has")


@pytest.mark.parametrize("descr", ["|O", "|V16", "<M8[s]", [("a", "<f8"), ("b", "|O")]])
def test_dtypes_nn_save_never_writes_are_refused(tmp_path, descr):
    path = tmp_path / "dtype.npz"
    one_array_checkpoint(path, npy_entry((2,), descr, data=b"\x00" * 32))
    load_refused(path, "never writes")


@pytest.mark.parametrize("header", [b"not a header", b"\x93NUMPY\x09\x00\x10\x00{'descr': 1}",
                                    npy_entry((2,))[:12]])
def test_malformed_npy_headers_are_refused(tmp_path, header):
    path = tmp_path / "header.npz"
    one_array_checkpoint(path, header)
    load_refused(path, "no valid .npy header")


def test_compressed_entries_are_refused(tmp_path):
    path = tmp_path / "compressed.npz"
    entries = {"__minigrad__": manifest_entry({"dict": [["w", {"array": "w"}]]}),
               "w": npy_entry((4,), "<f8", data=np.zeros(4).tobytes())}
    write_archive(path, entries, compression=zipfile.ZIP_DEFLATED)
    load_refused(path, "compressed")


def test_an_entry_named_twice_is_refused(tmp_path):
    path = tmp_path / "twice.npz"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)          # zipfile warns of the duplicate
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("__minigrad__.npy",
                             manifest_entry({"dict": [["w", {"array": "w"}]]}))
            archive.writestr("w.npy", npy_entry((1,), "<f8", np.ones(1).tobytes()))
            archive.writestr("w.npy", npy_entry((1,), "<f8", np.zeros(1).tobytes()))
    load_refused(path, "appears twice")


def test_running_out_of_memory_on_a_valid_file_is_a_clear_error(tmp_path, monkeypatch):
    path = tmp_path / "fine.npz"
    nn.save({"w": np.ones(10)}, path)

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(np, "empty", no_memory)
    with pytest.raises(RuntimeError, match="not enough memory to read.*fine.npz"):
        nn.load(path)


# -- manifests -------------------------------------------------------------------------------

def deep_list_tree(levels: int) -> str:
    return '{"list": [' * levels + '{"value": 1}' + "]}" * levels


def deep_dict_tree(levels: int) -> str:
    return '{"dict": [["k", ' * levels + '{"value": 1}' + "]]}" * levels


@pytest.mark.parametrize("tree", [deep_list_tree(10_000), deep_dict_tree(10_000),
                                  "[" * 10_000 + "]" * 10_000, "{" * 100_000])
def test_a_manifest_nested_thousands_deep_is_refused(tmp_path, tree):
    path = tmp_path / "deep.npz"
    text = '{"format": "%s", "version": 1, "tree": %s}' % (serialization.FORMAT_NAME, tree)
    write_archive(path, {"__minigrad__": manifest_text_entry(text)})
    load_refused(path, "nested more than")


@pytest.mark.parametrize("make_tree", [deep_list_tree, deep_dict_tree])
def test_a_tree_deeper_than_max_depth_is_refused_and_max_depth_loads(tmp_path, make_tree):
    limit = serialization.MAX_DEPTH
    path = tmp_path / "tree.npz"
    for levels, accepted in ((limit, True), (limit + 1, False), (limit + 50, False)):
        text = '{"format": "%s", "version": 1, "tree": %s}' % (serialization.FORMAT_NAME,
                                                               make_tree(levels))
        write_archive(path, {"__minigrad__": manifest_text_entry(text)})
        if accepted:
            node = nn.load(path)
            for _ in range(levels):
                node = node[0] if isinstance(node, list) else node["k"]
            assert node == 1
        else:
            load_refused(path, "nested more than")


def test_save_refuses_nesting_beyond_max_depth_and_containers_holding_themselves(tmp_path):
    path = tmp_path / "c.npz"
    nn.save({"x": 1}, path)
    deep = "leaf"
    for _ in range(serialization.MAX_DEPTH):
        deep = [deep]
    nn.save({"ok": deep[0]}, tmp_path / "deepest.npz")                # MAX_DEPTH levels
    back = nn.load(tmp_path / "deepest.npz")["ok"]
    for _ in range(serialization.MAX_DEPTH - 1):
        back = back[0]
    assert back == "leaf"
    (tmp_path / "deepest.npz").unlink()
    with pytest.raises(ValueError, match="nested more than"):
        nn.save({"too": deep}, path)
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="hold itself"):
        nn.save({"loop": loop}, path)
    assert os.listdir(tmp_path) == ["c.npz"] and nn.load(path) == {"x": 1}


def test_brackets_and_escapes_inside_strings_are_not_nesting(tmp_path):
    tricky = "[" * 5000 + '\\"{' + "\\" + '"' + "{" * 5000
    obj = {tricky: [tricky, {"[": "]]]"}], "quote\"key\\": "\\\\"}
    nn.save(obj, tmp_path / "s.npz")
    assert nn.load(tmp_path / "s.npz") == obj


@pytest.mark.parametrize("tree, match", [
    ({"array": "missing"}, "lacks"),
    ({"array": ["w"]}, "lacks"),
    ({"dict": [["a"]]}, "malformed dict item"),
    ({"dict": [[["unhashable"], {"value": 1}]]}, "malformed dict item"),
    ({"dict": 5}, "malformed dict"),
    ({"list": {"a": 1}}, "malformed list"),
    ({"value": [1, 2]}, "malformed value"),
    ({"float": "1e999"}, "unknown manifest node"),
    ({"exec": "os.system('x')"}, "unknown manifest node"),
    ({"list": [], "tuple": []}, "malformed manifest node"),
    ([1, 2], "malformed manifest node"),
])
def test_malformed_manifest_trees_are_refused(tmp_path, tree, match):
    path = tmp_path / "tree.npz"
    write_archive(path, {"__minigrad__": manifest_entry(tree),
                         "w": npy_entry((1,), "<f8", np.ones(1).tobytes())})
    load_refused(path, match)


@pytest.mark.parametrize("text, match", [
    ('{"format": "other", "version": 1, "tree": {"value": 1}}', "not a minigrad"),
    ('{"format": "%s", "version": 99, "tree": {"value": 1}}' % serialization.FORMAT_NAME,
     "version 99"),
    ('{"format": "%s", "version": 1}' % serialization.FORMAT_NAME, "no tree"),
    ('{"format": "%s", "version": 1, "tree": ' % serialization.FORMAT_NAME, "Expecting value"),
    ('{"format": "%s", "version": 1, "tree": {"value": %s}}'
     % (serialization.FORMAT_NAME, "9" * 100_000), "digits"),
])
def test_malformed_manifests_are_refused(tmp_path, text, match):
    path = tmp_path / "manifest.npz"
    write_archive(path, {"__minigrad__": manifest_text_entry(text)})
    load_refused(path, match)


def test_a_manifest_that_is_not_utf8_bytes_is_refused(tmp_path):
    path = tmp_path / "bytes.npz"
    write_archive(path, {"__minigrad__": npy_entry((2,), "<f8", np.ones(2).tobytes())})
    load_refused(path, "not bytes")
    write_archive(path, {"__minigrad__": npy_entry((2,), "|u1", b"\xff\xfe")})
    load_refused(path, "utf-8")


# -- what a valid file written by other tools looks like ---------------------------------------

def test_a_checkpoint_written_by_hand_with_fortran_order_and_big_endian_loads(tmp_path):
    values = np.arange(6, dtype=">f4").reshape(2, 3)
    path = tmp_path / "hand.npz"
    write_archive(path, {
        "__minigrad__": manifest_entry({"dict": [["w", {"array": "w"}],
                                                 ["n", {"scalar": "n"}]]}),
        "w": npy_entry((2, 3), ">f4", values.T.tobytes(order="C"), fortran_order=True),
        "n": npy_entry((), "<i8", np.int64(7).tobytes())})
    back = nn.load(path)
    np.testing.assert_array_equal(back["w"], values)
    assert back["w"].dtype == np.dtype(">f4") and back["n"] == 7
    back["w"][0, 0] = 100.0                                   # a writable array of its own


# -- damage: truncation and corrupted bytes ----------------------------------------------------

def original_checkpoint():
    mg.manual_seed(3)
    model = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4))
    return {"model": model.state_dict(), "step": 7, "history": [0.5, 0.25],
            "ids": np.arange(5, dtype=np.int32)}


def assert_same(a, b):
    if isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            assert_same(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b


def test_every_truncation_is_refused(tmp_path):
    path = tmp_path / "cut.npz"
    nn.save(original_checkpoint(), path)
    data = path.read_bytes()
    for length in list(range(0, len(data), 37)) + [len(data) - 1]:
        path.write_bytes(data[:length])
        load_refused(path, "not a readable minigrad checkpoint")


def test_corrupted_bytes_are_refused_or_change_nothing(tmp_path):
    """A single changed byte anywhere either is caught (a CRC, a header, a size, the zip
    structure) or sits where it changes no value (a timestamp): never another exception,
    never wrong values."""
    original = original_checkpoint()
    path = tmp_path / "flip.npz"
    nn.save(original, path)
    data = path.read_bytes()
    rng = np.random.default_rng(0)
    positions = rng.choice(len(data), size=min(len(data), 400), replace=False)
    refused = 0
    for at in positions:
        damaged = bytearray(data)
        damaged[at] ^= 1 << int(rng.integers(8))
        path.write_bytes(bytes(damaged))
        try:
            back = nn.load(path)
        except ValueError as error:
            assert "flip.npz" in str(error)
            refused += 1
        else:
            assert_same(original, back)
    assert refused > len(positions) // 2


@pytest.mark.parametrize("content", [b"", b"\x00" * 100, b"PK\x05\x06" + b"\x00" * 18,
                                     b"PK\x03\x04" + os.urandom(200), b"\x1f\x8b\x08" * 50])
def test_foreign_bytes_are_refused(tmp_path, content):
    path = tmp_path / "foreign.bin"
    path.write_bytes(content)
    load_refused(path, "not a readable minigrad checkpoint")


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not a readable"):
        nn.load(tmp_path)


# -- a failed load changes nothing ---------------------------------------------------------

def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_a_failed_load_changes_nothing(tmp_path):
    path = tmp_path / "bad.npz"
    one_array_checkpoint(path, npy_entry((2 ** 40,), "<f8", data=b"\x00" * 16))
    before = path.read_bytes(), path.stat().st_mtime_ns, sorted(os.listdir(tmp_path))
    descriptors = open_descriptors()
    for _ in range(3):
        with pytest.raises(ValueError):
            nn.load(path)
    assert (path.read_bytes(), path.stat().st_mtime_ns, sorted(os.listdir(tmp_path))) == before
    assert open_descriptors() == descriptors                   # the file was closed
