"""Optimizers against hand-computed updates, exact resume, clipping and schedules."""

import math

import numpy as np
import pytest

import minigrad as mg
import nn
from nn import optim

W0 = np.array([[0.5, -1.0], [2.0, 0.25]])
GRADS = [np.array([[0.1, -0.2], [0.3, 0.4]]), np.array([[-0.5, 0.1], [0.0, 0.2]]),
         np.array([[0.3, 0.3], [-0.1, -0.6]])]


def run(make_optimizer, dtype=np.float64):
    """Apply the three fixed gradients to a copy of W0 and return the weights after each."""
    p = nn.Parameter(W0.astype(dtype))
    opt = make_optimizer([p])
    history = []
    for g in GRADS:
        p.grad = mg.tensor(g.astype(dtype))
        opt.step()
        history.append(p.numpy().copy())
    return history


def sgd_reference(lr, momentum=0.0, weight_decay=0.0, nesterov=False):
    w, buf, out = W0.copy(), None, []
    for g in GRADS:
        d = g + weight_decay * w
        if momentum:
            buf = d.copy() if buf is None else momentum * buf + d
            d = d + momentum * buf if nesterov else buf
        w = w - lr * d
        out.append(w)
    return out


def adam_reference(lr, b1, b2, eps, weight_decay=0.0, decoupled=False, amsgrad=False,
                   maximize=False):
    w, m, v, out = W0.copy(), np.zeros_like(W0), np.zeros_like(W0), []
    largest = np.zeros_like(W0)
    for t, g in enumerate(GRADS, start=1):
        g = -g if maximize else g
        if decoupled:
            w = w - lr * weight_decay * w
        else:
            g = g + weight_decay * w
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        largest = np.maximum(largest, v)
        m_hat, v_hat = m / (1 - b1 ** t), (largest if amsgrad else v) / (1 - b2 ** t)
        w = w - lr * m_hat / (np.sqrt(v_hat) + eps)
        out.append(w)
    return out


@pytest.mark.parametrize("options", [dict(), dict(momentum=0.9), dict(weight_decay=0.1),
                                     dict(momentum=0.8, nesterov=True, weight_decay=0.05)])
def test_sgd_matches_hand_computed_steps(options):
    got = run(lambda ps: optim.SGD(ps, lr=0.1, **options))
    for a, e in zip(got, sgd_reference(0.1, **options)):
        np.testing.assert_allclose(a, e, rtol=1e-13)


@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_adam_matches_hand_computed_steps(weight_decay):
    got = run(lambda ps: optim.Adam(ps, lr=0.01, betas=(0.8, 0.9), eps=1e-6,
                                    weight_decay=weight_decay))
    expected = adam_reference(0.01, 0.8, 0.9, 1e-6, weight_decay)
    for a, e in zip(got, expected):
        np.testing.assert_allclose(a, e, rtol=1e-12)


@pytest.mark.parametrize("options", [dict(amsgrad=True), dict(maximize=True),
                                     dict(amsgrad=True, maximize=True, weight_decay=0.1)])
def test_adam_amsgrad_and_maximize_match_hand_computed_steps(options):
    got = run(lambda ps: optim.Adam(ps, lr=0.01, betas=(0.8, 0.9), eps=1e-6, **options))
    expected = adam_reference(0.01, 0.8, 0.9, 1e-6, **options)
    for a, e in zip(got, expected):
        np.testing.assert_allclose(a, e, rtol=1e-12)
    # the gradients above make v fall at some element, where amsgrad keeps the larger one
    if options == dict(amsgrad=True):
        plain = adam_reference(0.01, 0.8, 0.9, 1e-6, **{**options, "amsgrad": False})
        assert not np.allclose(expected[-1], plain[-1])


@pytest.mark.parametrize("kind", ["Adam", "AdamW"])
def test_amsgrad_and_maximize_match_live_torch(kind):
    torch = pytest.importorskip("torch")
    p = nn.Parameter(W0.copy())
    tp = torch.nn.Parameter(torch.from_numpy(W0.copy()))
    ours = getattr(optim, kind)([p], lr=0.05, weight_decay=0.1, amsgrad=True, maximize=True)
    theirs = getattr(torch.optim, kind)([tp], lr=0.05, weight_decay=0.1, amsgrad=True,
                                        maximize=True)
    for g in GRADS * 2:
        p.grad = mg.tensor(g)
        tp.grad = torch.from_numpy(g.copy())
        ours.step()
        theirs.step()
    np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-12)


def test_adamw_decouples_weight_decay():
    got = run(lambda ps: optim.AdamW(ps, lr=0.01, weight_decay=0.5))
    expected = adam_reference(0.01, 0.9, 0.999, 1e-8, 0.5, decoupled=True)
    for a, e in zip(got, expected):
        np.testing.assert_allclose(a, e, rtol=1e-12)
    coupled = adam_reference(0.01, 0.9, 0.999, 1e-8, 0.5)
    assert not np.allclose(got[-1], coupled[-1])


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: optim.Adam(ps), lambda ps: optim.AdamW(ps)])
def test_updates_keep_float32(make):
    for w in run(make, dtype=np.float32):
        assert w.dtype == np.float32


def test_parameters_without_grad_are_skipped_and_zero_grad_resets():
    a, b = nn.Parameter(np.ones(2)), nn.Parameter(np.ones(2))
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = mg.tensor(np.array([1.0, -1.0]))
    opt.step()
    np.testing.assert_array_equal(b.numpy(), 1.0)
    assert not np.allclose(a.numpy(), 1.0)
    assert 1 not in opt.state
    opt.zero_grad()
    assert a.grad is None and b.grad is None


def test_param_groups_have_their_own_hyperparameters():
    a, b = nn.Parameter(np.zeros(1)), nn.Parameter(np.zeros(1))
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    a.grad = mg.tensor(np.ones(1))
    b.grad = mg.tensor(np.ones(1))
    opt.step()
    assert a.item() == pytest.approx(-0.1) and b.item() == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="more than one group"):
        optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1)


def test_bad_hyperparameters():
    p = [nn.Parameter(np.zeros(1))]
    with pytest.raises(ValueError, match="nesterov"):
        optim.SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="betas"):
        optim.Adam(p, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="empty"):
        optim.Adam([])


# -- exact resume -------------------------------------------------------------------------

def _model_and_batches():
    mg.manual_seed(11)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.LayerNorm(8), nn.Linear(8, 2))
    data = np.random.default_rng(3)
    batches = [(data.standard_normal((4, 3)).astype(np.float32), data.integers(0, 2, 4))
               for _ in range(10)]
    return model, batches


def _train(model, opt, batches, scheduler=None):
    for x, y in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(model(mg.tensor(x)), y).backward()
        nn.clip_grad_norm(model.parameters(), 1.0)
        opt.step()
        if scheduler is not None:
            scheduler.step()


@pytest.mark.parametrize("make", [lambda ps: optim.AdamW(ps, lr=0.01, weight_decay=0.1),
                                  lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9,
                                                       nesterov=True)])
def test_training_resumes_exactly_from_a_checkpoint(make, tmp_path):
    model, batches = _model_and_batches()
    opt = make(model.parameters())
    sched = optim.LinearWarmupCosine(opt, warmup_steps=3, total_steps=10)
    _train(model, opt, batches[:5], sched)
    path = tmp_path / "ckpt.npz"
    nn.save({"model": model.state_dict(), "optim": opt.state_dict(),
             "sched": sched.state_dict(), "step": 5}, path)
    _train(model, opt, batches[5:], sched)

    resumed, _ = _model_and_batches()                  # fresh weights, same architecture
    resumed_opt = make(resumed.parameters())
    resumed_sched = optim.LinearWarmupCosine(resumed_opt, warmup_steps=3, total_steps=10)
    checkpoint = nn.load(path)
    assert checkpoint["step"] == 5
    resumed.load_state_dict(checkpoint["model"])
    resumed_opt.load_state_dict(checkpoint["optim"])
    resumed_sched.load_state_dict(checkpoint["sched"])
    _train(resumed, resumed_opt, batches[5:], resumed_sched)
    for (name, a), (_, b) in zip(model.state_dict().items(), resumed.state_dict().items()):
        np.testing.assert_array_equal(a, b, err_msg=name)


def test_optimizer_load_state_dict_checks_before_changing():
    p = nn.Parameter(np.ones(3))
    opt = optim.Adam([p])
    p.grad = mg.tensor(np.ones(3))
    opt.step()
    sd = opt.state_dict()
    other = optim.Adam([nn.Parameter(np.ones(2))])
    with pytest.raises(ValueError, match="shape"):
        other.load_state_dict(sd)
    assert other.state == {}
    with pytest.raises(ValueError, match="groups"):
        optim.Adam([{"params": [p]}, {"params": [nn.Parameter(np.ones(1))]}]).load_state_dict(sd)


# -- clipping -------------------------------------------------------------------------------

def test_clip_grad_norm(rng):
    params = [nn.Parameter(np.zeros((2, 3))), nn.Parameter(np.zeros(4)),
              nn.Parameter(np.zeros(1))]
    grads = [rng.standard_normal((2, 3)), rng.standard_normal(4)]
    for p, g in zip(params, grads):
        p.grad = mg.tensor(g)
    total = math.sqrt(sum((g ** 2).sum() for g in grads))
    returned = nn.clip_grad_norm(params, max_norm=0.5)
    assert isinstance(returned, float) and returned == pytest.approx(total, rel=1e-12)
    clipped = math.sqrt(sum((p.grad.numpy() ** 2).sum() for p in params[:2]))
    assert clipped == pytest.approx(0.5, rel=1e-5)
    np.testing.assert_allclose(params[0].grad.numpy(), grads[0] * 0.5 / (total + 1e-6))
    assert params[2].grad is None
    # below the limit: untouched
    before = params[0].grad.numpy().copy()
    assert nn.clip_grad_norm(params, max_norm=10.0) == pytest.approx(0.5, rel=1e-5)
    np.testing.assert_array_equal(params[0].grad.numpy(), before)
    largest = max(np.abs(p.grad.numpy()).max() for p in params[:2])
    assert nn.clip_grad_norm(params, 10.0, norm_type=float("inf")) == pytest.approx(largest)


# -- schedules ----------------------------------------------------------------------------

def test_linear_warmup_cosine_schedule():
    p = nn.Parameter(np.zeros(1))
    opt = optim.SGD([p], lr=2.0)
    sched = optim.LinearWarmupCosine(opt, warmup_steps=4, total_steps=12, min_ratio=0.1)
    lrs = []
    for _ in range(14):
        lrs.append(opt.param_groups[0]["lr"])
        sched.step()
    expected = [2.0 * (s + 1) / 4 for s in range(4)]
    for s in range(4, 14):
        progress = min(1.0, (s - 4) / 8)
        expected.append(2.0 * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))))
    np.testing.assert_allclose(lrs, expected, rtol=1e-12)


def test_noam_schedule_and_resume():
    p = nn.Parameter(np.zeros(1))
    opt = optim.Adam([p], lr=1.0)
    sched = optim.NoamLR(opt, d_model=64, warmup_steps=10)
    lrs = []
    for _ in range(30):
        lrs.append(sched.get_last_lr()[0])
        sched.step()
    expected = [64 ** -0.5 * min(n ** -0.5, n * 10 ** -1.5) for n in range(1, 31)]
    np.testing.assert_allclose(lrs, expected, rtol=1e-12)
    assert int(np.argmax(lrs)) == 9                        # peak at the end of warm-up
    fresh_opt = optim.Adam([p], lr=1.0)
    fresh = optim.NoamLR(fresh_opt, d_model=64, warmup_steps=10)
    fresh.load_state_dict(sched.state_dict())
    assert fresh_opt.param_groups[0]["lr"] == opt.param_groups[0]["lr"]


def test_adam_matches_torch():
    torch = pytest.importorskip("torch")
    p = nn.Parameter(W0.copy())
    tp = torch.nn.Parameter(torch.from_numpy(W0.copy()))
    ours = optim.AdamW([p], lr=0.05, weight_decay=0.1)
    theirs = torch.optim.AdamW([tp], lr=0.05, weight_decay=0.1)
    for g in GRADS:
        p.grad = mg.tensor(g)
        tp.grad = torch.from_numpy(g.copy())
        ours.step()
        theirs.step()
    np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-12)


# -- RMSprop and SGD's variants against PyTorch's numbers -------------------------------------

# w after 6 steps on L = Σ w³/3 + c·w (g = w² + c), from w = [0.5, -1.5, 2.0], c = [1, -2, 0.5],
# as torch 2.x's optimizers give them (float64)
TORCH_FINAL_WEIGHTS = {
    "rmsprop": [-1.5075892561988717, -4.083684632401117, 0.70944468025004],
    "rmsprop_centered_momentum_wd": [-0.5918616218264895, -2.979031673242845,
                                     0.9797659453925324],
    "sgd_nesterov": [-0.7373755570548136, -2.0854471646115, -0.5179696290212343],
    "sgd_dampening": [-0.2991534388141125, -1.7518103108258707, -0.12350783549531381],
}
OPTIMIZERS = {
    "rmsprop": lambda ps: optim.RMSprop(ps, lr=0.05),
    "rmsprop_centered_momentum_wd": lambda ps: optim.RMSprop(
        ps, lr=0.03, alpha=0.9, momentum=0.8, centered=True, weight_decay=0.1),
    "sgd_nesterov": lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True,
                                         weight_decay=0.01),
    "sgd_dampening": lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9, dampening=0.3),
}


def _run_cubic(make, steps=6):
    w = nn.Parameter(np.array([0.5, -1.5, 2.0]))
    c = np.array([1.0, -2.0, 0.5])
    opt = make([w])
    for _ in range(steps):
        opt.zero_grad()
        ((w ** 3).sum() / 3 + (mg.tensor(c) * w).sum()).backward()
        opt.step()
    return w.numpy()


@pytest.mark.parametrize("case", sorted(OPTIMIZERS))
def test_optimizer_matches_torch_numbers(case):
    np.testing.assert_allclose(_run_cubic(OPTIMIZERS[case]), TORCH_FINAL_WEIGHTS[case],
                               rtol=1e-12, atol=1e-14)


def test_rmsprop_first_step_from_its_equation():
    w = nn.Parameter(np.array([1.0, -2.0]))
    opt = optim.RMSprop([w], lr=0.1, alpha=0.9, eps=1e-8)
    w.grad = mg.tensor(np.array([0.5, 3.0]))
    opt.step()
    g = np.array([0.5, 3.0])
    v = 0.1 * g * g                          # α·0 + (1 − α) g²
    np.testing.assert_allclose(w.numpy(), [1.0, -2.0] - 0.1 * g / (np.sqrt(v) + 1e-8))
    assert opt.state[0]["step"] == 1


def _resumes_exactly(make, tmp_path):
    """Training 5 batches, saving, 5 more equals loading the save and training those 5."""
    model, batches = _model_and_batches()
    opt = make(model.parameters())
    _train(model, opt, batches[:5])
    nn.save({"model": model.state_dict(), "optim": opt.state_dict()}, tmp_path / "c.npz")
    _train(model, opt, batches[5:])
    resumed, _ = _model_and_batches()
    resumed_opt = make(resumed.parameters())
    checkpoint = nn.load(tmp_path / "c.npz")
    resumed.load_state_dict(checkpoint["model"])
    resumed_opt.load_state_dict(checkpoint["optim"])
    _train(resumed, resumed_opt, batches[5:])
    for (name, a), (_, b) in zip(model.state_dict().items(), resumed.state_dict().items()):
        np.testing.assert_array_equal(a, b, err_msg=name)


def test_rmsprop_resumes_exactly(tmp_path):
    _resumes_exactly(lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True), tmp_path)


def _run_cubic_torch(torch, make, steps=6):
    """_run_cubic with PyTorch's optimizer `make(params)`."""
    w = torch.nn.Parameter(torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64))
    c = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    topt = make([w])
    for _ in range(steps):
        topt.zero_grad()
        ((w ** 3).sum() / 3 + (c * w).sum()).backward()
        topt.step()
    return w.detach().numpy()


@pytest.mark.parametrize("case", sorted(OPTIMIZERS))
def test_optimizer_matches_live_torch(case):
    torch = pytest.importorskip("torch")
    kinds = {"rmsprop": torch.optim.RMSprop, "sgd": torch.optim.SGD}
    ours = OPTIMIZERS[case]([nn.Parameter(np.zeros(1))])
    options = {k: v for k, v in ours.param_groups[0].items() if k != "params"}
    theirs = _run_cubic_torch(torch, lambda ps: kinds[case.split("_")[0]](ps, **options))
    np.testing.assert_allclose(_run_cubic(OPTIMIZERS[case]), theirs, rtol=1e-12)


# -- Adagrad: against its equations in NumPy, and PyTorch's where it is installed ------------

ADAGRAD = {"defaults": dict(lr=0.1), "maximize": dict(lr=0.05, maximize=True),
           "decay_and_accumulator": dict(lr=0.2, lr_decay=0.3, weight_decay=0.1,
                                         initial_accumulator_value=0.5, eps=1e-6)}


def _adagrad_reference(w, c, steps, lr, lr_decay=0.0, weight_decay=0.0,
                       initial_accumulator_value=0.0, eps=1e-10, maximize=False):
    """Adagrad's equations on the cubic of _run_cubic, written out in NumPy."""
    s = np.full_like(w, initial_accumulator_value)
    for t in range(1, steps + 1):
        g = (-1.0 if maximize else 1.0) * (w * w + c) + weight_decay * w
        s = s + g * g
        w = w - lr / (1.0 + (t - 1) * lr_decay) * g / (np.sqrt(s) + eps)
    return w


@pytest.mark.parametrize("case", sorted(ADAGRAD))
def test_adagrad_follows_its_equations(case):
    expected = _adagrad_reference(np.array([0.5, -1.5, 2.0]), np.array([1.0, -2.0, 0.5]), 6,
                                  **ADAGRAD[case])
    got = _run_cubic(lambda ps: optim.Adagrad(ps, **ADAGRAD[case]))
    np.testing.assert_allclose(got, expected, rtol=1e-13)


@pytest.mark.parametrize("case", sorted(ADAGRAD))
def test_adagrad_matches_live_torch(case):
    torch = pytest.importorskip("torch")
    theirs = _run_cubic_torch(torch, lambda ps: torch.optim.Adagrad(ps, **ADAGRAD[case]))
    np.testing.assert_allclose(_run_cubic(lambda ps: optim.Adagrad(ps, **ADAGRAD[case])),
                               theirs, rtol=1e-12)


@pytest.mark.parametrize("shape", [(), (1,)])
def test_adagrad_steps_zero_d_and_one_element_parameters(shape):
    w = nn.Parameter(np.full(shape, 2.0))
    opt = optim.Adagrad([w], lr=0.5, initial_accumulator_value=1.0)
    for _ in range(2):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    s, expected = 1.0, 2.0
    for _ in range(2):
        g = 2 * expected
        s += g * g
        expected -= 0.5 * g / (np.sqrt(s) + 1e-10)
    assert w.shape == shape and opt.state[0]["sum"].shape == shape
    np.testing.assert_allclose(w.numpy(), np.full(shape, expected), rtol=1e-14)


def test_adagrad_refuses_negative_settings_and_resumes_exactly(tmp_path):
    with pytest.raises(ValueError, match="Adagrad: lr_decay, eps must be >= 0"):
        optim.Adagrad([nn.Parameter(np.zeros(2))], lr_decay=-0.1, eps=-1.0)
    with pytest.raises(TypeError, match="maximize"):
        optim.Adagrad([nn.Parameter(np.zeros(2))], maximize=1)
    _resumes_exactly(lambda ps: optim.Adagrad(ps, lr=0.05, lr_decay=0.01, weight_decay=0.01),
                     tmp_path)


def test_clip_grad_norm_underscore_returns_a_tensor_and_clip_grad_value():
    p = nn.Parameter(np.zeros(3))
    p.grad = mg.tensor(np.array([3.0, -4.0, 0.0]))
    total = nn.utils.clip_grad_norm_([p], max_norm=1.0)
    assert isinstance(total, mg.Tensor) and total.shape == () and total.dtype == np.float64
    assert total.item() == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.numpy(), np.array([3.0, -4.0, 0.0]) / (5.0 + 1e-6))
    q = nn.Parameter(np.zeros(4))
    q.grad = mg.tensor(np.array([0.5, -2.0, 3.0, -0.1]))
    nn.utils.clip_grad_value_(q, 1.0)
    np.testing.assert_array_equal(q.grad.numpy(), [0.5, -1.0, 1.0, -0.1])
    with pytest.raises(ValueError, match="clip_value"):
        nn.utils.clip_grad_value_(q, -1.0)


def test_clip_grad_norm_error_if_nonfinite_keeps_the_gradients():
    p = nn.Parameter(np.zeros(2))
    p.grad = mg.tensor(np.array([np.inf, 1.0]))
    with pytest.raises(RuntimeError, match="clip_grad_norm.*inf"):
        nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    np.testing.assert_array_equal(p.grad.numpy(), [np.inf, 1.0])


def test_adagrad_on_another_device_matches_the_host(sim_device):
    """The update runs on the parameter's device through its array module (the simulated
    device refuses NumPy), with the host's numbers."""
    results = []
    for device in ("cpu", sim_device):
        w = nn.Parameter(mg.tensor(np.array([0.5, -1.5, 2.0]), device=device))
        opt = optim.Adagrad([w], lr=0.1, lr_decay=0.1, initial_accumulator_value=0.2)
        for _ in range(3):
            opt.zero_grad()
            (w ** 3).sum().backward()
            opt.step()
        assert w.device == ("cpu" if device == "cpu" else "sim")
        results.append(w.numpy())
    np.testing.assert_array_equal(*results)
