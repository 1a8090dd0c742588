"""Weight averaging (nn.optim.swa_utils) against averages computed in plain NumPy."""

import numpy as np
import pytest

import minigrad as mg
import nn
from nn.swa_utils import (AveragedModel, get_ema_avg_fn, get_ema_multi_avg_fn,
                          get_swa_avg_fn, get_swa_multi_avg_fn)


class Odd(nn.Module):
    """Weights of shapes (), (1,) and (2, 3), and a buffer."""

    def __init__(self):
        super().__init__()
        self.scalar = nn.Parameter(np.array(0.5))
        self.one = nn.Parameter(np.array([-1.0]))
        self.matrix = nn.Parameter(np.arange(6.0).reshape(2, 3))
        self.register_buffer("running", mg.tensor(np.zeros(3)))

    def forward(self, x):
        return (x @ self.matrix.T) * self.scalar + self.one


def weights(module):
    return [p.numpy().copy() for p in module.parameters()]


def train(model, average, steps, rng):
    """Random in-place changes of the weights (and the buffer), one update of the average
    after each; returns the model's weights after every change."""
    seen = []
    for _ in range(steps):
        with mg.no_grad():
            for p in model.parameters():
                p.add_(rng.normal(size=p.shape))
            model.running.add_(1.0)
        average.update_parameters(model)
        seen.append(weights(model))
    return seen


@pytest.mark.parametrize("how", ["multi", "single"])
def test_ema_matches_numpy(rng, how):
    model = Odd()
    make = get_ema_multi_avg_fn if how == "multi" else get_ema_avg_fn
    average = AveragedModel(model, **{f"{'multi_' if how == 'multi' else ''}avg_fn": make(0.9)})
    seen = train(model, average, 5, rng)
    expected = [w.copy() for w in seen[0]]                  # the first update copies
    for step in seen[1:]:
        expected = [0.9 * e + 0.1 * w for e, w in zip(expected, step)]
    for got, want in zip(weights(average.module), expected):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert int(average.n_averaged.item()) == 5
    np.testing.assert_array_equal(average.module.running.numpy(), np.full(3, 5.0))


@pytest.mark.parametrize("avg", [{}, {"avg_fn": get_swa_avg_fn()},
                                 {"multi_avg_fn": get_swa_multi_avg_fn()}])
def test_equal_average_is_the_mean_of_the_weights_seen(rng, avg):
    model = Odd()
    average = AveragedModel(model, **avg)
    seen = train(model, average, 4, rng)
    for k, got in enumerate(weights(average.module)):
        np.testing.assert_allclose(got, np.mean([s[k] for s in seen], axis=0), rtol=1e-12)


def test_use_buffers_averages_the_buffers_too(rng):
    model = Odd()
    average = AveragedModel(model, use_buffers=True)
    train(model, average, 4, rng)                              # running: 1, 2, 3, 4
    np.testing.assert_allclose(average.module.running.numpy(), np.full(3, 2.5))


def test_the_copy_is_independent_and_runs_the_forward(rng):
    model = Odd()
    average = AveragedModel(model)
    x = mg.tensor(rng.normal(size=(4, 3)))
    np.testing.assert_array_equal(average(x).numpy(), model(x).numpy())
    with mg.no_grad():
        model.matrix.add_(1.0)
    assert average.module.matrix is not model.matrix
    np.testing.assert_array_equal(average.module.matrix.numpy(), np.arange(6.0).reshape(2, 3))
    assert len(list(average.parameters())) == len(list(model.parameters()))


def test_state_dict_round_trip_resumes_the_average(rng, tmp_path):
    model = Odd()
    average = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.5))
    train(model, average, 3, rng)
    assert {"n_averaged", "module.matrix", "module.running"} <= set(average.state_dict())
    nn.save(average.state_dict(), tmp_path / "avg.npz")
    resumed = AveragedModel(Odd(), multi_avg_fn=get_ema_multi_avg_fn(0.5))
    resumed.load_state_dict(nn.load(tmp_path / "avg.npz"))
    assert int(resumed.n_averaged.item()) == 3
    for other in (average, resumed):
        other.update_parameters(model)
    for a, b in zip(weights(average.module), weights(resumed.module)):
        np.testing.assert_array_equal(a, b)


def test_averaging_on_another_device(sim_device, rng):
    model = Odd().to(sim_device)
    average = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.75))
    assert average.module.matrix.device == sim_device
    before = average.module.matrix.numpy()
    average.update_parameters(model)                         # copies
    with mg.no_grad():
        model.matrix.add_(4.0)
    average.update_parameters(model)
    np.testing.assert_allclose(average.module.matrix.numpy(), before + 0.25 * 4.0)
    assert average.module.matrix.device == sim_device


def test_bad_arguments_are_refused_without_changing_the_average():
    with pytest.raises(ValueError, match="decay"):
        get_ema_multi_avg_fn(1.5)
    with pytest.raises(ValueError, match="not both"):
        AveragedModel(Odd(), avg_fn=get_swa_avg_fn(), multi_avg_fn=get_swa_multi_avg_fn())
    with pytest.raises(TypeError, match="nn.Module"):
        AveragedModel(lambda x: x)
    average = AveragedModel(nn.Linear(3, 2))
    with pytest.raises(ValueError, match=r"\(4, 3\).*do not match.*\(2, 3\)"):
        average.update_parameters(nn.Linear(3, 4))
    assert int(average.n_averaged.item()) == 0


def test_ema_matches_torch(rng):
    torch = pytest.importorskip("torch")
    from torch.optim.swa_utils import AveragedModel as TorchAveraged
    from torch.optim.swa_utils import get_ema_multi_avg_fn as torch_ema
    ours, theirs = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(ours.weight.numpy()))
        theirs.bias.copy_(torch.from_numpy(ours.bias.numpy()))
    a, b = AveragedModel(ours, multi_avg_fn=get_ema_multi_avg_fn(0.8)), TorchAveraged(
        theirs, multi_avg_fn=torch_ema(0.8))
    for _ in range(4):
        steps = [rng.normal(size=p.shape).astype(np.float32) for p in ours.parameters()]
        with mg.no_grad(), torch.no_grad():
            for p, q, d in zip(ours.parameters(), theirs.parameters(), steps):
                p.add_(d)
                q.add_(torch.from_numpy(d))
        a.update_parameters(ours)
        b.update_parameters(theirs)
    for p, q in zip(a.module.parameters(), b.module.parameters()):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_reached_where_pytorch_users_look():
    assert nn.optim.swa_utils.AveragedModel is AveragedModel
    assert nn.optim.swa_utils.get_ema_multi_avg_fn is get_ema_multi_avg_fn
