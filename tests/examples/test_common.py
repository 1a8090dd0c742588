"""examples/_common.py's training pieces that g2p.py, translate.py and tiny_gpt.py share: the
learning-rate schedule, the step/time budget, eval mode for a block, the flags made from a
Config dataclass and a history restored from a checkpoint."""

import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import _common  # noqa: E402

import nn  # noqa: E402


@pytest.mark.parametrize("floor", [0.05, 0.1])
def test_warmup_cosine_runs_from_peak_to_floor(floor):
    peak, warm = 3e-3, 0.5
    assert _common.warmup_cosine(peak, warm, 0.0, floor) == pytest.approx(peak * warm)
    assert _common.warmup_cosine(peak, warm, 0.5, floor) == pytest.approx(
        peak * warm * (floor + (1 - floor) / 2))
    for past in (1.0, 1.5):                       # the floor at the end, and after it
        assert _common.warmup_cosine(peak, warm, past, floor) == pytest.approx(
            peak * warm * floor)
    # written out independently: a quarter of the way down the cosine
    expected = peak * warm * (floor + (1 - floor) * (1 + math.cos(math.pi / 4)) / 2)
    assert _common.warmup_cosine(peak, warm, 0.25, floor) == pytest.approx(expected, rel=1e-15)


def test_budget_progress_is_the_further_of_steps_and_time():
    assert _common.budget_progress(30, 60, 10.0, 60.0) == 0.5          # steps further
    assert _common.budget_progress(30, 60, 45.0, 60.0) == 0.75         # time further
    assert _common.budget_progress(30, 0, 45.0, 60.0) == 0.75          # no step limit
    assert _common.budget_progress(30, 60, 45.0, None) == 0.5          # no time budget
    assert _common.budget_progress(90, 60, 0.0, 0.0) == 1.5            # past the end
    assert _common.budget_progress(5, 0, 5.0, 0) == 0.0                # no limit at all


def test_eval_mode_restores_the_former_mode_even_after_an_error():
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    with _common.eval_mode(model) as inside:
        assert inside is model and not model.training and not model[1].training
    assert model.training and model[1].training
    with pytest.raises(KeyError):
        with _common.eval_mode(model):
            raise KeyError("stop")
    assert model.training
    model.eval()
    with _common.eval_mode(model):
        pass
    assert not model.training                     # a model in eval mode stays so


@dataclass
class _Config:
    lr: float = _common.setting(3e-3, "learning rate")
    clock: str = _common.setting("cpu", "clock", ("cpu", "wall"))
    steps: int = _common.setting(0, "steps", _common.positive_int)
    clip: float = 1.0                             # no help text: no flag


def _parser():
    parser = _common.base_parser(None, default_out="runs/x")
    _common.add_config_flags(parser, _Config)
    return parser


def test_config_flags_set_only_the_fields_given():
    args = _parser().parse_args(["--clock", "wall", "--steps", "7"])
    config = _common.apply_flags(_Config(), args)
    assert config == _Config(lr=3e-3, clock="wall", steps=7)
    assert _common.apply_flags(_Config(), _parser().parse_args([])) == _Config()
    text = _parser().format_help()
    assert "learning rate (default 0.003)" in text and "{cpu,wall}" in text
    assert "--clip" not in text
    assert isinstance(_common.apply_flags(_Config(), _parser().parse_args(["--lr", "1"])).lr,
                      float)


def test_config_from_defaults_a_checkpoint_and_flags_in_that_order():
    args = _parser().parse_args(["--steps", "9"])
    saved = {"lr": "0.5", "steps": 4, "unknown": 1}     # a checkpoint's values, as stored
    config = _common.make_config(_Config, args, dict(clock="wall", steps=2), saved)
    assert config == _Config(lr=0.5, clock="wall", steps=9, clip=1.0)
    assert _common.make_config(_Config, None) == _Config()


def test_history_restored_in_the_template_types():
    template = {"loss": [], "rows": [], "seconds": 0.0, "epoch": 0}
    fresh = _common.restore_history(template)
    assert fresh == template and fresh["loss"] is not template["loss"]
    saved = {"loss": np.array([1.5, 2.0]), "rows": [{"a": 1}], "seconds": np.float64(3),
             "epoch": np.int64(2), "other": 7}
    restored = _common.restore_history(template, saved)
    assert restored == {"loss": [1.5, 2.0], "rows": [{"a": 1}], "seconds": 3.0, "epoch": 2}
    assert type(restored["loss"]) is list and type(restored["epoch"]) is int


def test_config_flags_refuse_a_value_outside_the_choices(capsys):
    with pytest.raises(SystemExit) as stop:
        _parser().parse_args(["--clock", "sundial"])
    assert stop.value.code == 2 and "invalid choice: 'sundial'" in capsys.readouterr().err


def test_check_choices_refuses_a_value_that_came_round_the_flags():
    _common.check_choices(_Config(clock="wall", steps=-3), "x")      # only choices are checked
    config = _common.make_config(_Config, None, None, {"clock": "sundial"})   # a checkpoint's
    with pytest.raises(ValueError, match=r"^model x: clock must be 'cpu' or 'wall', got "
                                         r"'sundial'$"):
        _common.check_choices(config, "model x")
