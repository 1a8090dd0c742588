"""Training runs survive Ctrl-C: the checkpoint saved on interruption resumes to exactly the
parameters of an uninterrupted run (dropout included), `--resume` refuses a checkpoint made with
other settings or a missing one in one line, and --quick runs keep to their own folder."""

import importlib
import signal
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def examples(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    return importlib.import_module


def interrupt_at_update(monkeypatch, common, count):
    """Send this process SIGINT (what Ctrl-C sends) during the `count`-th progress update."""
    original, calls = common.LossBar.update, []

    def update(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == count:
            signal.raise_signal(signal.SIGINT)
        return original(self, *args, **kwargs)
    monkeypatch.setattr(common.LossBar, "update", update)


def leaves(tree, prefix=""):
    """{path: array} of every array in a loaded checkpoint (model and optimizer)."""
    if isinstance(tree, dict):
        items = tree.items()
    elif isinstance(tree, (list, tuple)):
        items = enumerate(tree)
    else:
        return {prefix: np.asarray(tree)}
    return {k: v for key, sub in items for k, v in leaves(sub, f"{prefix}/{key}").items()}


@pytest.mark.parametrize("name, arguments", [
    ("soft_vs_hard", ["--steps", "16", "--checkpoint-every", "100"]),
    ("tiny_gpt", ["--steps", "8", "--dropout", "0.2", "--sample-length", "2",
                  "--final-eval-windows", "8", "--eval-every", "3"]),
])
def test_interrupted_and_resumed_equals_straight(examples, monkeypatch, tmp_path, capsys, name,
                                                 arguments):
    import nn
    script, common = examples(name), examples("_common")
    straight = script.main(["--quick", *arguments, "--out", str(tmp_path / "straight")])

    half = int(arguments[1]) // 2
    interrupt_at_update(monkeypatch, common, half)
    argv = ["--quick", *arguments, "--out", str(tmp_path / "stopped")]
    with pytest.raises(SystemExit) as stop:
        script.main(argv)
    assert stop.value.code == 130
    err = capsys.readouterr().err
    command = f"{' '.join(argv)} --resume"
    assert "checkpoint saved to" in err and command in err
    assert nn.load(tmp_path / "stopped" / "checkpoint.npz")["state"]["step"] == half
    monkeypatch.undo()

    resumed = script.main(argv + ["--resume"])
    final = [nn.load(tmp_path / run / "checkpoint.npz") for run in ("straight", "stopped")]
    for part in ("model", "optimizer"):
        a, b = leaves(final[0][part]), leaves(final[1][part])
        assert a.keys() == b.keys()
        for key in a:                                     # bit for bit, not approximately
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    timing = {"elapsed"}                                   # wall-clock times differ, of course
    assert ({k: v for k, v in resumed["history"].items() if k not in timing}
            == {k: v for k, v in straight["history"].items() if k not in timing})


def test_resume_refuses_other_settings_and_a_missing_checkpoint(examples, monkeypatch, tmp_path,
                                                                capsys):
    script, common = examples("soft_vs_hard"), examples("_common")
    out = ["--quick", "--steps", "2", "--out", str(tmp_path)]
    interrupt_at_update(monkeypatch, common, 1)     # the checkpoint Ctrl-C saves after step 1
    with pytest.raises(SystemExit) as stop:
        script.main(out)
    assert stop.value.code == 130 and (tmp_path / "checkpoint.npz").exists()
    monkeypatch.undo()
    capsys.readouterr()
    with pytest.raises(SystemExit) as refused:
        script.main(out + ["--lr", "0.5", "--resume"])
    err = capsys.readouterr().err.strip()
    assert refused.value.code == 2 and "\n" not in err
    assert "--lr: 0.01 in the checkpoint, 0.5 now" in err and "another --out" in err
    with pytest.raises(SystemExit) as missing:
        script.main(["--quick", "--resume", "--out", str(tmp_path / "empty")])
    err = capsys.readouterr().err.strip()
    assert missing.value.code == 2 and "\n" not in err
    assert f"no checkpoint at {tmp_path / 'empty'}" in err and "without --resume" in err


def test_quick_runs_default_to_their_own_folder(examples):
    common = examples("_common")
    parser = common.base_parser(None, default_out="runs/translate-{attention}")
    parser.add_argument("--attention", default="dot")
    assert common.parse_args(parser, []).out == Path("runs/translate-dot")
    assert common.parse_args(parser, ["--quick"]).out == Path("runs/translate-dot-quick")
    assert common.parse_args(parser, ["--quick", "--out", "x"]).out == Path("x")


@pytest.mark.parametrize("argv, message", [
    (["--steps", "-1"], "argument --steps: must be at least 1, got -1"),
    (["--steps", "two"], "argument --steps: expected a whole number, got 'two'"),
])
def test_bad_counts_are_one_line(examples, capsys, argv, message):
    script = examples("soft_vs_hard")
    with pytest.raises(SystemExit) as error:
        script.main(argv)
    err = capsys.readouterr().err.strip()
    assert error.value.code == 2 and "\n" not in err and message in err


def test_out_naming_a_file_is_one_line(examples, tmp_path, capsys):
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit) as error:
        examples("soft_vs_hard").main(["--quick", "--out", str(tmp_path / "file")])
    err = capsys.readouterr().err.strip()
    assert error.value.code == 2 and "\n" not in err and "a file is there" in err
