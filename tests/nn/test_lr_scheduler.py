"""Learning-rate schedules against PyTorch's values, step by step.

The expected sequences were printed by torch 2.x's `torch.optim.lr_scheduler` (an SGD optimizer
with lr 0.5, momentum 0.9; the lr read before each optimizer step); where torch is installed the
same schedules are also run live.
"""

import math

import numpy as np
import pytest

import minigrad as mg
import nn
from nn import optim
from nn.optim import lr_scheduler as L

TORCH_LRS = {
    "StepLR": [0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125, 0.125, 0.125, 0.0625, 0.0625, 0.0625],
    "MultiStepLR": [0.5, 0.5, 0.15, 0.15, 0.15, 0.0135, 0.0135, 0.0135, 0.0135, 0.00405,
                    0.00405, 0.00405],
    "ExponentialLR": [0.5, 0.4, 0.32000000000000006, 0.25600000000000006, 0.20480000000000007,
                      0.16384000000000007, 0.13107200000000005, 0.10485760000000005,
                      0.08388608000000004, 0.06710886400000003, 0.05368709120000003,
                      0.042949672960000025],
    "CosineAnnealingLR": [0.5, 0.45320916362186214, 0.33070916362186215, 0.1792908363781379,
                          0.0567908363781379, 0.01, 0.05679083637813787, 0.17929083637813795,
                          0.33070916362186226, 0.45320916362186237, 0.5000000000000002,
                          0.4532091636218625],
    "LinearLR": [0.125, 0.21875, 0.3125, 0.40625, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
    "LambdaLR": [0.5, 0.25, 0.16666666666666666, 0.125, 0.1, 0.08333333333333333,
                 0.07142857142857142, 0.0625, 0.05555555555555555, 0.05, 0.045454545454545456,
                 0.041666666666666664],
    "OneCycleLR": [0.08000000000000007, 0.6995793084391662, 1.7585703182442574,
                   1.9888308709018234, 1.8660259396828234, 1.623491307899526,
                   1.2947579953902066, 0.9252742053339501, 0.5661219964173985,
                   0.2669550603776612, 0.06913397485079044, 8e-06],
    "OneCycleLR_linear3": [0.08, 1.04, 2.0, 1.04, 0.08000000000000007, 0.06857257142857143,
                           0.05714514285714286, 0.045717714285714285, 0.03429028571428572,
                           0.022862857142857136, 0.011435428571428569, 7.999999999994123e-06],
}
# momentum (SGD) and β₁ (Adam) under OneCycleLR(max_lr=2.0, total_steps=12)
TORCH_ONE_CYCLE_MOMENTUM = [0.95, 0.9177302443521267, 0.8625744625914449, 0.8505584586887436,
                            0.856698729810778, 0.8688255099070633, 0.8852622412794547,
                            0.9037365046793212, 0.9216941869558779, 0.9366525935914912,
                            0.9465436874322102, 0.95]
PLATEAU_METRICS = [5, 4, 4.5, 4.2, 4.1, 4.0, 4.0, 3.9995, 4.3, 4.4, 4.4, 2.0, 2.1, 2.2, 2.3]
TORCH_PLATEAU = {
    "min_rel": [0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125, 0.125, 0.125, 0.0625, 0.0625,
                0.0625, 0.0625, 0.05],
    "max_abs": [0.5, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625,
                0.001953125, 0.0009765625, 0.00048828125, 0.000244140625, 0.0001220703125,
                6.103515625e-05],
}
SCHEDULES = {   # the same arguments in both libraries
    "StepLR": ("StepLR", dict(step_size=3, gamma=0.5)),
    "MultiStepLR": ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.3)),
    "ExponentialLR": ("ExponentialLR", dict(gamma=0.8)),
    "CosineAnnealingLR": ("CosineAnnealingLR", dict(T_max=5, eta_min=0.01)),
    "LinearLR": ("LinearLR", dict(start_factor=0.25, total_iters=4)),
    "LambdaLR": ("LambdaLR", dict(lr_lambda=lambda s: 1 / (1 + s))),
    "OneCycleLR": ("OneCycleLR", dict(max_lr=2.0, total_steps=12)),
    "OneCycleLR_linear3": ("OneCycleLR", dict(max_lr=2.0, total_steps=12,
                                              anneal_strategy="linear", three_phase=True,
                                              pct_start=0.25)),
}
PLATEAUS = {"min_rel": dict(patience=1, factor=0.5, cooldown=1, min_lr=0.05),
            "max_abs": dict(mode="max", threshold_mode="abs", threshold=0.1, patience=0,
                            factor=0.5)}


def _lrs(scheduler, opt, n=12, metrics=None, read=lambda g: g["lr"]):
    out = []
    for i in range(n):
        out.append(read(opt.param_groups[0]))
        if metrics is None:
            scheduler.step()
        else:
            scheduler.step(metrics[i])
    return out


def _sgd():
    return optim.SGD([nn.Parameter(np.zeros(1))], lr=0.5, momentum=0.9)


@pytest.mark.parametrize("case", sorted(SCHEDULES))
def test_schedule_matches_torch_sequence(case):
    name, kwargs = SCHEDULES[case]
    opt = _sgd()
    np.testing.assert_allclose(_lrs(getattr(L, name)(opt, **kwargs), opt), TORCH_LRS[case],
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("case", sorted(PLATEAUS))
def test_reduce_on_plateau_matches_torch_sequence(case):
    opt = _sgd()
    sched = optim.ReduceLROnPlateau(opt, **PLATEAUS[case])
    got = _lrs(sched, opt, n=15, metrics=[mg.tensor(m) for m in PLATEAU_METRICS])
    np.testing.assert_allclose(got, TORCH_PLATEAU[case], rtol=1e-12)


def test_one_cycle_cycles_sgd_momentum_and_adam_beta1():
    opt = _sgd()
    got = _lrs(L.OneCycleLR(opt, max_lr=2.0, total_steps=12), opt, read=lambda g: g["momentum"])
    np.testing.assert_allclose(got, TORCH_ONE_CYCLE_MOMENTUM, rtol=1e-12)
    adam = optim.Adam([nn.Parameter(np.zeros(1))], lr=0.5, betas=(0.9, 0.98))
    sched = L.OneCycleLR(adam, max_lr=2.0, total_steps=12)
    got = _lrs(sched, adam, read=lambda g: g["betas"])
    np.testing.assert_allclose([b[0] for b in got], TORCH_ONE_CYCLE_MOMENTUM, rtol=1e-12)
    assert all(b[1] == 0.98 for b in got)


def test_one_cycle_refuses_to_step_past_the_end_and_changes_nothing():
    opt = _sgd()
    sched = L.OneCycleLR(opt, max_lr=1.0, epochs=2, steps_per_epoch=3)
    for _ in range(6):
        sched.step()
    lr = opt.param_groups[0]["lr"]
    with pytest.raises(ValueError, match="OneCycleLR.*total_steps=6"):
        sched.step()
    assert opt.param_groups[0]["lr"] == lr and sched.last_epoch == 6
    with pytest.raises(ValueError, match="cycle_momentum"):
        L.OneCycleLR(_NoMomentum(), max_lr=1.0, total_steps=4)


class _NoMomentum:
    param_groups = [{"lr": 0.1}]


@pytest.mark.parametrize("case", sorted(SCHEDULES))
def test_schedule_resumes_exactly(case, tmp_path):
    name, kwargs = SCHEDULES[case]
    opt = _sgd()
    sched = getattr(L, name)(opt, **kwargs)
    for _ in range(5):
        sched.step()
    nn.save({"sched": sched.state_dict()}, tmp_path / "s.npz")
    rest = _lrs(sched, opt, n=6)
    fresh_opt = _sgd()
    fresh = getattr(L, name)(fresh_opt, **kwargs)
    fresh.load_state_dict(nn.load(tmp_path / "s.npz")["sched"])
    assert _lrs(fresh, fresh_opt, n=6) == rest


def test_reduce_on_plateau_resumes_exactly(tmp_path):
    opt = _sgd()
    sched = optim.ReduceLROnPlateau(opt, **PLATEAUS["min_rel"])
    _lrs(sched, opt, n=6, metrics=PLATEAU_METRICS)
    nn.save({"sched": sched.state_dict()}, tmp_path / "s.npz")
    rest = _lrs(sched, opt, n=9, metrics=PLATEAU_METRICS[6:])
    fresh_opt = _sgd()
    fresh = optim.ReduceLROnPlateau(fresh_opt, **PLATEAUS["min_rel"])
    fresh.load_state_dict(nn.load(tmp_path / "s.npz")["sched"])
    assert _lrs(fresh, fresh_opt, n=9, metrics=PLATEAU_METRICS[6:]) == rest
    np.testing.assert_allclose(rest, TORCH_PLATEAU["min_rel"][6:], rtol=1e-12)


def test_closed_forms_against_their_equations():
    opt = _sgd()
    sched = L.CosineAnnealingLR(opt, T_max=7, eta_min=0.1)
    expected = [0.1 + 0.4 * 0.5 * (1 + math.cos(math.pi * s / 7)) for s in range(12)]
    np.testing.assert_allclose(_lrs(sched, opt), expected, rtol=1e-12)
    opt = _sgd()
    sched = L.MultiStepLR(opt, milestones=[4, 1], gamma=0.5)   # unsorted milestones
    assert _lrs(sched, opt, n=6) == [0.5, 0.25, 0.25, 0.25, 0.125, 0.125]


@pytest.mark.parametrize("bad, match", [
    (lambda o: L.StepLR(o, step_size=0), "step_size"),
    (lambda o: L.StepLR(o, step_size=2.5), "step_size"),
    (lambda o: L.CosineAnnealingLR(o, T_max=0), "T_max"),
    (lambda o: L.LinearLR(o, start_factor=0.0), "start_factor"),
    (lambda o: L.OneCycleLR(o, max_lr=1.0), "total_steps"),
    (lambda o: L.OneCycleLR(o, max_lr=1.0, total_steps=5, anneal_strategy="cosine"), "cos"),
    (lambda o: L.ReduceLROnPlateau(o, mode="minimum"), "mode"),
    (lambda o: L.ReduceLROnPlateau(o, factor=1.0), "factor"),
    (lambda o: L.LambdaLR(o, 0.5), "callable"),
])
def test_bad_arguments_raise_and_leave_the_lr_alone(bad, match):
    opt = _sgd()
    with pytest.raises((ValueError, TypeError), match=match):
        bad(opt)
    assert opt.param_groups[0]["lr"] == 0.5


CHAINS = {   # schedules sharing one optimizer, each stepped after every optimizer step
    "step+exponential": [("StepLR", dict(step_size=3, gamma=0.5)),
                         ("ExponentialLR", dict(gamma=0.9))],
    "warm-up+cosine": [("LinearLR", dict(start_factor=0.25, total_iters=4)),
                       ("CosineAnnealingLR", dict(T_max=12))],
    "multistep+plateau": [("MultiStepLR", dict(milestones=[2, 5, 9], gamma=0.3)),
                          ("ReduceLROnPlateau", dict(patience=1, factor=0.5))],
    "exponential+plateau at min_lr": [("ExponentialLR", dict(gamma=0.8)),
                                      ("ReduceLROnPlateau",
                                       dict(patience=0, factor=0.5, min_lr=0.05))],
}


def _chained_lrs(library, optimizer, chain, n=12):
    schedules = [getattr(library, name)(optimizer, **kwargs) for name, kwargs in chain]
    out = []
    for i in range(n):
        out.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        for schedule in schedules:
            if type(schedule).__name__ == "ReduceLROnPlateau":
                schedule.step(PLATEAU_METRICS[i])
            else:
                schedule.step()
    return out


def test_chained_schedules_multiply_their_factors():
    """lr = initial_lr · Π factors, whichever schedule steps last (the closed forms)."""
    got = _chained_lrs(L, _sgd(), CHAINS["step+exponential"])
    np.testing.assert_allclose(got, [0.5 * 0.5 ** (s // 3) * 0.9 ** s for s in range(12)],
                               rtol=1e-12)
    got = _chained_lrs(L, _sgd(), CHAINS["warm-up+cosine"])
    warm = [0.25 + 0.75 * min(s, 4) / 4 for s in range(12)]
    cosine = [0.5 * (1 + math.cos(math.pi * s / 12)) for s in range(12)]
    np.testing.assert_allclose(got, [0.5 * w * c for w, c in zip(warm, cosine)], rtol=1e-12)
    # the plateau's cuts multiply in too: patience 1 is exceeded by the metrics 4.5, 4.2
    # (after 5), 4.1, 4.0 (after 4) and 4.3, 4.4 (after 3.9995), so the lr falls by half
    # from steps 4, 6 and 10 on
    got = _chained_lrs(L, _sgd(), CHAINS["multistep+plateau"])
    steps = [0.3 ** sum(s >= m for m in (2, 5, 9)) for s in range(12)]
    cuts = [0.5 ** sum(s >= c for c in (4, 6, 10)) for s in range(12)]
    np.testing.assert_allclose(got, [0.5 * a * b for a, b in zip(steps, cuts)], rtol=1e-12)


@pytest.mark.parametrize("case", sorted(CHAINS))
def test_chained_schedules_match_live_torch(case):
    torch = pytest.importorskip("torch")
    topt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.5, momentum=0.9)
    expected = _chained_lrs(torch.optim.lr_scheduler, topt, CHAINS[case])
    np.testing.assert_allclose(_chained_lrs(L, _sgd(), CHAINS[case]), expected, rtol=1e-12)


@pytest.mark.parametrize("first, second", [
    (lambda o: L.LambdaLR(o, lambda s: 0.5), lambda o: L.StepLR(o, step_size=2)),
    (lambda o: L.ExponentialLR(o, gamma=0.9), lambda o: L.LambdaLR(o, lambda s: 0.5)),
    (lambda o: L.ExponentialLR(o, gamma=0.9), lambda o: L.OneCycleLR(o, 1.0, total_steps=4)),
    (lambda o: L.CosineAnnealingLR(o, T_max=4, eta_min=0.01), lambda o: L.ExponentialLR(o, 0.9)),
])
def test_a_schedule_that_sets_the_lr_outright_does_not_chain(first, second):
    """Making both is fine (a SequentialLR may take them); stepping either raises and changes
    nothing."""
    opt = _sgd()
    one = first(opt)
    one.step()
    two = second(opt)
    lr = opt.param_groups[0]["lr"]
    for schedule in (one, two):
        with pytest.raises(ValueError, match=r"\.step: the optimizer has several schedules.*"
                                             r"does not chain"):
            schedule.step()
    assert opt.param_groups[0]["lr"] == lr and (one.last_epoch, two.last_epoch) == (1, 0)


SEQUENCES = {   # (schedules made on the optimizer, milestones): each one after the last
    "warm-up, cosine to eta_min": ([("LinearLR", dict(start_factor=0.1, total_iters=3)),
                                    ("CosineAnnealingLR", dict(T_max=8, eta_min=0.01))], [3]),
    "lambda, step, exponential": ([("LambdaLR", dict(lr_lambda=lambda s: 1 / (1 + s))),
                                   ("StepLR", dict(step_size=2, gamma=0.5)),
                                   ("ExponentialLR", dict(gamma=0.9))], [4, 8]),
}


def _sequence_lrs(library, optimizer, case, n=14):
    made, milestones = SEQUENCES[case]
    schedules = [getattr(library, name)(optimizer, **kwargs) for name, kwargs in made]
    sequence = library.SequentialLR(optimizer, schedules, milestones)
    out = []
    for _ in range(n):
        out.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        sequence.step()
    return out


def test_sequential_lr_runs_each_schedule_from_its_own_step_zero():
    got = _sequence_lrs(L, _sgd(), "warm-up, cosine to eta_min")
    warm = [0.5 * (0.1 + 0.9 * s / 3) for s in range(3)]
    cosine = [0.01 + 0.49 * 0.5 * (1 + math.cos(math.pi * s / 8)) for s in range(11)]
    np.testing.assert_allclose(got, warm + cosine, rtol=1e-12)
    got = _sequence_lrs(L, _sgd(), "lambda, step, exponential")
    expected = ([0.5 / (1 + s) for s in range(4)] + [0.5 * 0.5 ** (s // 2) for s in range(4)]
                + [0.5 * 0.9 ** s for s in range(6)])
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("case", sorted(SEQUENCES))
def test_sequential_lr_matches_live_torch(case):
    torch = pytest.importorskip("torch")
    topt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.5, momentum=0.9)
    expected = _sequence_lrs(torch.optim.lr_scheduler, topt, case)
    np.testing.assert_allclose(_sequence_lrs(L, _sgd(), case), expected, rtol=1e-12)


def test_sequential_lr_owns_its_schedules_and_resumes(tmp_path):
    opt = _sgd()
    warm, decay = L.LinearLR(opt, start_factor=0.5, total_iters=2), L.ExponentialLR(opt, 0.9)
    sequence = L.SequentialLR(opt, [warm, decay], milestones=[2])
    with pytest.raises(ValueError, match="LinearLR.step: this schedule was handed to "
                                         "SequentialLR; step that one"):
        warm.step()
    for _ in range(3):
        sequence.step()
    nn.save({"s": sequence.state_dict()}, tmp_path / "s.npz")
    rest = _lrs(sequence, opt, n=4)
    fresh_opt = _sgd()
    fresh = L.SequentialLR(fresh_opt, [L.LinearLR(fresh_opt, start_factor=0.5, total_iters=2),
                                       L.ExponentialLR(fresh_opt, 0.9)], milestones=[2])
    fresh.load_state_dict(nn.load(tmp_path / "s.npz")["s"])
    assert _lrs(fresh, fresh_opt, n=4) == rest


@pytest.mark.parametrize("bad, match", [
    (lambda o: L.SequentialLR(o, [L.StepLR(o, 2)], milestones=[3]), "need 0 milestones"),
    (lambda o: L.SequentialLR(o, [L.StepLR(o, 2), L.StepLR(o, 3)], milestones=[0]),
     "positive and increasing"),
    (lambda o: L.SequentialLR(o, [L.StepLR(o, 2), L.StepLR(_sgd(), 3)], milestones=[2]),
     "another optimizer"),
    (lambda o: L.SequentialLR(o, [L.ReduceLROnPlateau(o)], milestones=[]), "cannot be sequenced"),
    (lambda o: L.ChainedScheduler([L.StepLR(o, 2), L.ReduceLROnPlateau(o)]),
     "not a step-count schedule"),
])
def test_sequential_and_chained_refuse_what_they_cannot_run(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        bad(_sgd())


def test_chained_scheduler_steps_all_or_none():
    opt = _sgd()
    chained = L.ChainedScheduler([L.ExponentialLR(opt, gamma=0.9), L.StepLR(opt, 3, gamma=0.5)])
    np.testing.assert_allclose(_lrs(chained, opt),
                               [0.5 * 0.9 ** s * 0.5 ** (s // 3) for s in range(12)], rtol=1e-12)
    opt = _sgd()
    first, last = L.ExponentialLR(opt, gamma=0.9), L.OneCycleLR(opt, 1.0, total_steps=2)
    with pytest.raises(ValueError, match="several schedules"):
        L.ChainedScheduler([first, last]).step()
    assert first.last_epoch == 0 and last.last_epoch == 0


def test_a_chained_cosine_stops_at_T_max():
    opt = _sgd()
    cosine, decay = L.CosineAnnealingLR(opt, T_max=2), L.ExponentialLR(opt, gamma=0.9)
    for _ in range(2):
        cosine.step()
        decay.step()
    lr = opt.param_groups[0]["lr"]
    with pytest.raises(ValueError, match="CosineAnnealingLR: stepping past T_max=2"):
        cosine.step()
    assert opt.param_groups[0]["lr"] == lr and cosine.last_epoch == 2


@pytest.mark.parametrize("case", sorted(SCHEDULES))
def test_schedule_matches_live_torch(case):
    torch = pytest.importorskip("torch")
    name, kwargs = SCHEDULES[case]
    param = torch.nn.Parameter(torch.zeros(1))
    topt = torch.optim.SGD([param], lr=0.5, momentum=0.9)
    tsched = getattr(torch.optim.lr_scheduler, name)(topt, **kwargs)
    expected = []
    for _ in range(12):
        expected.append(topt.param_groups[0]["lr"])
        topt.step()
        tsched.step()
    opt = _sgd()
    np.testing.assert_allclose(_lrs(getattr(L, name)(opt, **kwargs), opt), expected,
                               rtol=1e-12, atol=1e-15)
