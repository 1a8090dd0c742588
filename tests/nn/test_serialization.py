"""nn.save / nn.load: round trips, the file layout, atomic writes, damaged and foreign files."""

import os
import zipfile

import numpy as np
import pytest

import minigrad as mg
import nn


def test_nested_round_trip_keeps_values_types_and_key_types(tmp_path):
    obj = {
        "model": {"w": np.arange(6, dtype=np.float32).reshape(2, 3),
                  "b": np.array([1.5, -2.0]), "ids": np.array([3, 1], dtype=np.int64),
                  "mask": np.array([True, False])},
        "optim": {"state": {0: {"step": 3, "exp_avg": np.ones(2, dtype=np.float32)}},
                  "param_groups": [{"lr": 1e-3, "betas": [0.9, 0.999], "params": [0]}]},
        "step": 5, "name": "run/α", "ratio": 0.25, "flag": True, "nothing": None,
        "nan": float("nan"), "inf": float("-inf"), "pair": (1, "two"),
        "scalar": np.float32(2.5), "tensor": mg.tensor([1.0, 2.0]),
        "a/b%c": np.zeros(1), "empty": {}, "0": "string key zero", 0: "int key zero",
    }
    path = tmp_path / "ckpt.npz"
    nn.save(obj, path)
    back = nn.load(path)
    assert set(back) == set(obj)
    for key in ("w", "b", "ids", "mask"):
        np.testing.assert_array_equal(back["model"][key], obj["model"][key])
        assert back["model"][key].dtype == obj["model"][key].dtype
    assert back["optim"]["state"][0]["step"] == 3           # int key stays int
    np.testing.assert_array_equal(back["optim"]["state"][0]["exp_avg"], np.ones(2))
    assert back["optim"]["param_groups"] == obj["optim"]["param_groups"]
    assert back["step"] == 5 and back["name"] == "run/α" and back["ratio"] == 0.25
    assert back["flag"] is True and back["nothing"] is None
    assert np.isnan(back["nan"]) and back["inf"] == float("-inf")
    assert back["pair"] == (1, "two")
    assert back["scalar"] == np.float32(2.5) and back["scalar"].dtype == np.float32
    np.testing.assert_array_equal(back["tensor"], [1.0, 2.0])
    np.testing.assert_array_equal(back["a/b%c"], np.zeros(1))
    assert back["empty"] == {}
    assert back["0"] == "string key zero" and back[0] == "int key zero"


def test_file_is_a_plain_npz_with_readable_entry_names(tmp_path):
    model = nn.Sequential(nn.Linear(2, 3), nn.LayerNorm(3))
    path = tmp_path / "model.npz"
    nn.save({"model": model.state_dict()}, path)
    with np.load(path, allow_pickle=False) as archive:
        assert "model/0.weight" in archive.files and "__minigrad__" in archive.files
        np.testing.assert_array_equal(archive["model/0.weight"], model[0].weight.numpy())


def test_model_round_trip_through_a_file(tmp_path):
    mg.manual_seed(0)
    a = nn.Sequential(nn.Embedding(5, 4), nn.Linear(4, 2))
    b = nn.Sequential(nn.Embedding(5, 4), nn.Linear(4, 2))
    nn.save(a.state_dict(), tmp_path / "m.npz")
    b.load_state_dict(nn.load(tmp_path / "m.npz"))
    idx = np.array([[1, 4, 0]])
    np.testing.assert_array_equal(a(idx).numpy(), b(idx).numpy())


def test_save_leaves_no_temporary_files_and_overwrites(tmp_path):
    path = tmp_path / "c.npz"
    nn.save({"x": 1}, path)
    nn.save({"x": 2}, path)
    assert os.listdir(tmp_path) == ["c.npz"]
    assert nn.load(path)["x"] == 2


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_saved_file_has_the_permissions_the_umask_gives(tmp_path, umask):
    """A checkpoint is an ordinary file: 0666 less the umask, not mkstemp's private 0600."""
    old = os.umask(umask)
    try:
        nn.save({"x": 1}, tmp_path / "c.npz")
        (tmp_path / "plain").write_bytes(b"")                  # what open() makes, for reference
    finally:
        os.umask(old)
    mode = (tmp_path / "c.npz").stat().st_mode & 0o777
    assert mode == 0o666 & ~umask == (tmp_path / "plain").stat().st_mode & 0o777


def test_failed_save_keeps_the_old_file_and_removes_the_temporary(tmp_path, monkeypatch):
    path = tmp_path / "c.npz"
    nn.save({"x": 1}, path)

    def broken_savez(file, **arrays):
        file.write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken_savez)
    with pytest.raises(OSError, match="disk full"):
        nn.save({"x": 2}, path)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["c.npz"]
    assert nn.load(path)["x"] == 1


def test_unsupported_leaves_are_rejected_with_their_path(tmp_path):
    with pytest.raises(TypeError, match="model/w"):
        nn.save({"model": {"w": object()}}, tmp_path / "bad.npz")
    with pytest.raises(TypeError, match="object arrays"):
        nn.save({"w": np.array([None, 1], dtype=object)}, tmp_path / "bad.npz")
    with pytest.raises(TypeError, match="keys"):
        nn.save({(1, 2): 3}, tmp_path / "bad.npz")
    assert os.listdir(tmp_path) == []


def test_truncated_file_raises_a_clear_error(tmp_path):
    path = tmp_path / "c.npz"
    nn.save({"w": np.ones((50, 50))}, path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="c.npz.*not a readable minigrad checkpoint"):
        nn.load(path)


@pytest.mark.parametrize("kind", ["text", "npy", "npz_without_manifest", "zip_of_other"])
def test_foreign_files_raise_a_clear_error(kind, tmp_path):
    path = tmp_path / f"foreign.{kind}"
    if kind == "text":
        path.write_text("hello")
    elif kind == "npy":
        with open(path, "wb") as f:
            np.save(f, np.ones(3))
    elif kind == "npz_without_manifest":
        with open(path, "wb") as f:
            np.savez(f, w=np.ones(3))
    else:
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("readme.txt", "not arrays")
    with pytest.raises(ValueError, match=f"foreign.{kind}"):
        nn.load(path)


def test_pickled_arrays_are_never_loaded(tmp_path):
    path = tmp_path / "pickled.npz"
    with open(path, "wb") as f:
        np.savez(f, __minigrad__=np.frombuffer(b"{}", dtype=np.uint8),
                 evil=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="pickled.npz"):
        nn.load(path)


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="nope.npz"):
        nn.load("/nonexistent/dir/nope.npz")


def test_failed_resume_leaves_model_and_optimizer_unchanged(tmp_path):
    """A damaged checkpoint, or one from another architecture, raises and changes nothing:
    the model and the optimizer keep training from where they were."""
    mg.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    opt = nn.optim.Adam(model.parameters(), lr=0.1)
    model(mg.randn(5, 3)).sum().backward()
    opt.step()
    model_before = model.state_dict()
    opt_before = opt.state_dict()

    damaged = tmp_path / "damaged.npz"
    nn.save({"model": model.state_dict(), "optim": opt.state_dict()}, damaged)
    damaged.write_bytes(damaged.read_bytes()[:-100])
    with pytest.raises(ValueError, match="damaged.npz"):
        nn.load(damaged)

    other = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 3))   # 3 outputs, not 2
    other_opt = nn.optim.Adam(other.parameters(), lr=0.5)
    other(mg.randn(5, 3)).sum().backward()
    other_opt.step()
    foreign = tmp_path / "other.npz"
    nn.save({"model": other.state_dict(), "optim": other_opt.state_dict()}, foreign)
    checkpoint = nn.load(foreign)
    with pytest.raises(RuntimeError, match=r"2.weight: checkpoint \(3, 4\), model \(2, 4\)"):
        model.load_state_dict(checkpoint["model"])
    with pytest.raises(ValueError, match="shape"):
        opt.load_state_dict(checkpoint["optim"])

    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(value, model_before[name], err_msg=name)
    assert opt.param_groups[0]["lr"] == 0.1
    for index, entries in opt.state_dict()["state"].items():
        for key, value in entries.items():
            np.testing.assert_array_equal(value, opt_before["state"][index][key])
