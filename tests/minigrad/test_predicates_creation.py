"""Predicates (isclose, allclose, isinf, isposinf, isneginf) and creation (linspace, logspace,
eye(n, m, k), tril/triu_indices, randint, randperm, multinomial, where with two numbers): against NumPy,
devices, dtypes, seeding, errors."""

import numpy as np
import pytest

import minigrad as mg


def test_isclose_and_allclose_match_numpy(device):
    a = np.array([[1.0, 1.0 + 1e-6, np.inf, np.nan], [0.0, 1e-9, -np.inf, 2.0]])
    b = np.array([1.0, 1.0, np.inf, np.nan])
    x = mg.tensor(a, device=device)
    for kwargs in ({}, dict(rtol=0.0, atol=1e-8), dict(equal_nan=True)):
        out = mg.isclose(x, mg.tensor(b, device=device), **kwargs)
        assert out.dtype == np.bool_ and out.device == device
        np.testing.assert_array_equal(out.numpy(), np.isclose(a, b, **kwargs))
    assert x.isclose(x, equal_nan=True).all().item()
    assert mg.allclose(mg.tensor([1.0, 2.0]), [1.0, 2.0 + 1e-7]) is True
    assert mg.tensor([1.0]).allclose(mg.tensor([1.1])) is False
    assert not mg.isclose(mg.tensor([1.0], requires_grad=True), 1.0).requires_grad


def test_infinity_predicates(device):
    a = np.array([np.inf, -np.inf, np.nan, 0.0])
    x = mg.tensor(a, device=device)
    np.testing.assert_array_equal(mg.isinf(x).numpy(), np.isinf(a))
    np.testing.assert_array_equal(mg.isposinf(x).numpy(), np.isposinf(a))
    np.testing.assert_array_equal(mg.isneginf(x).numpy(), np.isneginf(a))
    np.testing.assert_array_equal(x.isnan().numpy(), np.isnan(a))
    np.testing.assert_array_equal(x.isfinite().numpy(), np.isfinite(a))
    assert mg.isinf(mg.tensor(np.inf)).shape == ()


def test_ranges_and_identities_match_numpy(device):
    np.testing.assert_allclose(mg.linspace(-1, 2, 7, device=device).numpy(),
                               np.linspace(-1, 2, 7).astype(np.float32))
    np.testing.assert_allclose(mg.linspace(0, 1, steps=4, endpoint=False).numpy(),
                               np.linspace(0, 1, 4, endpoint=False).astype(np.float32))
    assert mg.linspace(0, 1, 3, dtype="float64").dtype == np.float64
    assert mg.linspace(0, 1).shape == (50,) and mg.linspace(0, 1, 0).shape == (0,)
    np.testing.assert_allclose(mg.logspace(0, 3, 4, base=2.0).numpy(), [1.0, 2.0, 4.0, 8.0])
    for args in ((3,), (2, 4), (4, 3, 1), (3, 3, -2)):
        out = mg.eye(*args, device=device)
        assert out.dtype == np.float32 and out.device == device
        np.testing.assert_array_equal(out.numpy(), np.eye(*args))
    for fn, reference in ((mg.tril_indices, np.tril_indices), (mg.triu_indices,
                                                               np.triu_indices)):
        for n, k, m in ((3, 0, None), (3, 1, None), (3, -1, 4), (1, 0, None)):
            rows, cols = fn(n, k=k, m=m, device=device)
            expected = reference(n, k, m)
            assert rows.dtype == np.int64 and rows.device == device
            np.testing.assert_array_equal(rows.numpy(), expected[0])
            np.testing.assert_array_equal(cols.numpy(), expected[1])


def test_randint_and_randperm_are_seeded_and_in_range(device):
    mg.manual_seed(3)
    first = mg.randint(5, 9, (400,), device=device)
    mg.manual_seed(3)
    again = mg.randint(5, 9, (400,), device=device)
    np.testing.assert_array_equal(first.numpy(), again.numpy())
    values = first.numpy()
    assert first.dtype == np.int64 and first.device == device
    assert values.min() == 5 and values.max() == 8 and set(values.tolist()) == {5, 6, 7, 8}
    assert mg.randint(3, (2, 2)).shape == (2, 2)                     # PyTorch's (high, size)
    assert set(mg.randint(3, size=300).numpy().tolist()) == {0, 1, 2}    # NumPy's (high)
    assert mg.randint(0, 2, 3, dtype="int32").dtype == np.int32
    perm = mg.randperm(10, device=device)
    assert sorted(perm.numpy().tolist()) == list(range(10)) and perm.dtype == np.int64
    assert mg.randperm(0).shape == (0,)


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_frequencies_follow_the_weights(device, replacement):
    """Each row's first draw follows its normalised weights (a chi-square bound far from
    chance failure); weight 0 is never drawn; seeded draws repeat."""
    weights = np.array([[0.1, 0.0, 0.6, 0.3], [0.0, 0.0, 0.0, 2.0], [1.0, 1.0, 1.0, 1.0]])
    mg.manual_seed(11)
    drawn = mg.multinomial(mg.tensor(weights, device=device), 1, replacement=replacement)
    assert drawn.shape == (3, 1) and drawn.dtype == np.int64 and drawn.device == device
    n = 6000
    first = mg.multinomial(mg.tensor(np.repeat(weights, n, axis=0), device=device), 1,
                           replacement=replacement).numpy().reshape(3, n)
    for row, probabilities in zip(first, weights / weights.sum(axis=1, keepdims=True)):
        counts = np.bincount(row, minlength=4)
        assert counts[probabilities == 0].sum() == 0
        expected = n * probabilities[probabilities > 0]
        chi2 = ((counts[probabilities > 0] - expected) ** 2 / expected).sum()
        assert chi2 < 25.0, (counts, expected)               # df <= 3: p < 1e-4 by chance
    mg.manual_seed(11)
    again = mg.multinomial(mg.tensor(weights, device=device), 1, replacement=replacement)
    np.testing.assert_array_equal(again.numpy(), drawn.numpy())


def test_multinomial_without_replacement_draws_each_category_once(device):
    mg.manual_seed(12)
    weights = mg.tensor([[1.0, 2.0, 0.0, 3.0]] * 500, device=device)
    drawn = mg.multinomial(weights, 3).numpy()
    assert drawn.shape == (500, 3)
    assert all(sorted(row) == [0, 1, 3] for row in drawn.tolist())
    # the second draw: P(0) = P(1 first)/4 + P(3 first)/3 = 1/12 + 1/6 = 1/4 (of 500)
    assert 90 <= (drawn[:, 1] == 0).sum() <= 160
    single = mg.multinomial(mg.tensor([0.0, 5.0], device=device), 1)
    assert single.shape == (1,) and single.tolist() == [1]
    many = mg.multinomial(mg.tensor([0.2, 0.8]), 50, replacement=True)
    assert many.shape == (50,) and set(many.tolist()) <= {0, 1}


def test_multinomial_refuses_what_torch_refuses():
    with pytest.raises(ValueError, match=r"multinomial: input must be \(C,\) or \(B, C\)"):
        mg.multinomial(mg.ones(2, 2, 2), 1)
    with pytest.raises(ValueError, match="finite and >= 0"):
        mg.multinomial(mg.tensor([1.0, -1.0]), 1)
    with pytest.raises(ValueError, match="finite and >= 0"):
        mg.multinomial(mg.tensor([1.0, np.nan]), 1)
    with pytest.raises(ValueError, match="no positive weight"):
        mg.multinomial(mg.tensor([[1.0, 1.0], [0.0, 0.0]]), 1)
    with pytest.raises(ValueError, match="only 2 categories of positive weight"):
        mg.multinomial(mg.tensor([1.0, 0.0, 1.0]), 3)
    with pytest.raises(ValueError, match="num_samples must be a positive int"):
        mg.multinomial(mg.tensor([1.0, 1.0]), 0)


def test_where_with_two_numbers_makes_a_default_dtype_tensor(device):
    cond = mg.tensor([True, False, True], device=device)
    out = mg.where(cond, 1.5, 0.0)
    assert out.dtype == np.float32 and out.device == device and out.tolist() == [1.5, 0.0, 1.5]
    assert mg.where(cond, 2, 0).dtype == np.int64
    assert mg.where(np.array([False, True]), 1.0, 2).tolist() == [2.0, 1.0]


def test_bad_arguments():
    with pytest.raises(ValueError, match="randint: needs integers low < high"):
        mg.randint(5, 5)
    with pytest.raises(ValueError, match="randperm: n"):
        mg.randperm(-1)
    with pytest.raises(ValueError, match="linspace: the number"):
        mg.linspace(0, 1, -2)
    with pytest.raises(ValueError, match=r"isclose: shapes \(2,\) and \(3,\)"):
        mg.isclose(mg.ones(2), mg.ones(3))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_new_tensors_take_this_tensors_dtype_and_device(dtype, device):
    """PyTorch's new_zeros / new_ones / new_empty / new_full / new_tensor: fresh leaves of this
    tensor's dtype and device unless given, sizes as varargs or one tuple, () included."""
    x = mg.tensor(np.arange(6).reshape(2, 3).astype(dtype), device=device)
    for made, shape, value in [(x.new_zeros(2, 4), (2, 4), 0), (x.new_zeros((3,)), (3,), 0),
                               (x.new_ones(()), (), 1), (x.new_ones([1]), (1,), 1),
                               (x.new_empty(0, 2), (0, 2), 0), (x.new_full((2,), 7), (2,), 7),
                               (x.new_full(3, -2), (3,), -2)]:
        assert made.shape == shape and made.dtype == dtype and made.device == device
        np.testing.assert_array_equal(made.numpy(), np.full(shape, value, dtype=dtype))
        assert not made.requires_grad and made.grad_fn is None
    copied = x.new_tensor([[1.5, 2.5]])
    assert copied.dtype == dtype and copied.device == device
    np.testing.assert_array_equal(copied.numpy(), np.array([[1.5, 2.5]]).astype(dtype))
    source = np.zeros(2)
    x.new_tensor(source).numpy()[0] = 5.0 if dtype != np.int64 else 5
    assert source[0] == 0                                        # a copy, never shared
    assert x.new_zeros(2, dtype=np.float32).dtype == np.float32
    assert x.new_zeros(2, device="cpu").device == "cpu"
    if dtype != np.int64:
        leaf = x.new_ones(2, requires_grad=True)
        (leaf * 3).sum().backward()
        np.testing.assert_array_equal(leaf.grad.numpy(), [3, 3])


@pytest.mark.parametrize("size, error", [((-1,), ValueError), ((2.0,), TypeError),
                                         (((2, True),), TypeError)])
def test_new_zeros_refuses_bad_sizes(size, error):
    with pytest.raises(error, match="new_zeros: sizes must be"):
        mg.zeros(2).new_zeros(*size)


@pytest.mark.parametrize("name, check", [("randn_like", lambda a: abs(a.mean()) < 0.2),
                                         ("rand_like", lambda a: 0 <= a.min() and a.max() < 1)])
def test_random_likes_follow_the_tensor_and_the_seed(name, check, device):
    x = mg.zeros((40, 50), dtype=np.float64, device=device)
    mg.manual_seed(3)
    first = getattr(mg, name)(x)
    mg.manual_seed(3)
    again = getattr(mg, name)(x)
    assert first.shape == (40, 50) and first.dtype == np.float64 and first.device == device
    np.testing.assert_array_equal(first.numpy(), again.numpy())
    assert check(first.numpy()) and not first.requires_grad
    assert getattr(mg, name)(x, dtype=np.float32).dtype == np.float32
    assert getattr(mg, name)(x, requires_grad=True).requires_grad
    with pytest.raises(TypeError, match=f"{name}: t has dtype int64"):
        getattr(mg, name)(mg.zeros(2, dtype=np.int64, device=device))


def test_type_with_a_dtype_converts_and_without_one_raises():
    x = mg.tensor([1.5, -2.5])
    assert x.type(mg.float64).dtype == np.float64 and x.type("int64").tolist() == [1, -2]
    with pytest.raises(TypeError, match="type: minigrad has no tensor type names"):
        x.type()


@pytest.mark.parametrize("shape", [(), (1,), (3, 4)])
def test_bernoulli_and_normal_draw_as_stated(device, shape):
    mg.manual_seed(21)
    p = np.linspace(0.0, 1.0, int(np.prod(shape)) or 1).reshape(shape)
    drawn = mg.bernoulli(mg.tensor(p, device=device))
    assert drawn.shape == shape and drawn.dtype == np.float64 and drawn.device == device
    values = drawn.numpy()
    assert set(np.unique(values)) <= {0.0, 1.0}
    assert np.all(values[p == 0.0] == 0.0) and np.all(values[p == 1.0] == 1.0)
    many = mg.bernoulli(mg.full((20000,), 0.25, device=device)).numpy()
    assert abs(many.mean() - 0.25) < 0.015                     # 5 standard errors
    assert abs(mg.bernoulli(mg.zeros(20000, device=device), 0.75).numpy().mean() - 0.75) < 0.015
    mean = mg.tensor(np.full(shape, 2.0), device=device, requires_grad=True)
    sample = mg.normal(mean, 0.5)
    assert sample.shape == shape and not sample.requires_grad and sample.device == device
    wide = mg.normal(mg.full((20000,), 2.0, device=device), 0.5).numpy()
    assert abs(wide.mean() - 2.0) < 0.02 and abs(wide.std() - 0.5) < 0.02
    assert mg.normal(0.0, 1.0, size=(2, 3)).shape == (2, 3)
    assert mg.normal(mg.zeros(3, 1), mg.ones(1, 4)).shape == (3, 4)
    mg.manual_seed(21)
    np.testing.assert_array_equal(mg.bernoulli(mg.tensor(p, device=device)).numpy(), values)


@pytest.mark.parametrize("shape", [(), (1,), (3, 4)])
def test_the_tensor_methods_bernoulli_and_bernoulli_draw_as_mg_bernoulli(device, shape):
    p = mg.tensor(np.linspace(0.0, 1.0, int(np.prod(shape))).reshape(shape), device=device)
    mg.manual_seed(5)
    expected = mg.bernoulli(p).numpy()
    mg.manual_seed(5)
    drawn = p.bernoulli()
    assert drawn.dtype == p.dtype and drawn.device == device and drawn.shape == shape
    np.testing.assert_array_equal(drawn.numpy(), expected)
    mg.manual_seed(5)
    expected = mg.bernoulli(p, 0.4).numpy()
    mg.manual_seed(5)
    np.testing.assert_array_equal(p.bernoulli(0.4).numpy(), expected)
    # in place, with a number or with one probability per element; the same draws
    target = mg.full(shape, 7.0, device=device)
    mg.manual_seed(5)
    assert target.bernoulli_(0.4) is target
    np.testing.assert_array_equal(target.numpy(), expected)
    mg.manual_seed(5)
    expected = mg.bernoulli(p).numpy()
    mg.manual_seed(5)
    np.testing.assert_array_equal(target.bernoulli_(p).numpy(), expected)
    assert target.device == device and target.dtype == np.float32
    ones = mg.zeros(shape, device=device).bernoulli_(1.0).numpy()
    assert np.all(ones == 1.0)
    assert abs(mg.zeros(20000).bernoulli_(0.25).numpy().mean() - 0.25) < 0.015


def test_bernoulli_in_place_refuses_what_pytorch_refuses_and_changes_nothing():
    w = mg.tensor([0.5, 0.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="bernoulli_: in-place change of a tensor that "
                                           "requires grad"):
        w.bernoulli_(0.5)
    t = mg.tensor([0.25, 0.5])
    with pytest.raises(RuntimeError, match=r"bernoulli_: probabilities of shape \(3,\) for a "
                                           r"tensor of shape \(2,\)"):
        t.bernoulli_(mg.tensor([0.1, 0.2, 0.3]))
    with pytest.raises(ValueError, match=r"bernoulli: probabilities must lie in \[0, 1\]"):
        t.bernoulli_(1.5)
    with pytest.raises(ValueError, match=r"bernoulli: probabilities must lie in \[0, 1\]"):
        mg.tensor([0.5, 1.5]).bernoulli()
    np.testing.assert_array_equal(t.numpy(), [0.25, 0.5])
    assert w.grad is None and t._version == 0


def test_bernoulli_and_normal_refuse_bad_arguments():
    with pytest.raises(ValueError, match=r"bernoulli: probabilities must lie in \[0, 1\]"):
        mg.bernoulli(mg.tensor([0.5, 1.5]))
    with pytest.raises(TypeError, match="bernoulli: needs floating probabilities"):
        mg.bernoulli(mg.tensor([0, 1]))
    with pytest.raises(ValueError, match="normal: std must be >= 0"):
        mg.normal(mg.zeros(2), -1.0)
    with pytest.raises(TypeError, match="normal: with numbers for mean and std, give size"):
        mg.normal(0.0, 1.0)


def test_bernoulli_draws_again_at_every_replay():
    w = mg.tensor(np.ones(4), requires_grad=True)

    @mg.compile
    def step(p):
        loss = (mg.bernoulli(p) * w).sum()
        loss.backward()
        return loss

    mg.manual_seed(3)
    replayed = [step(mg.full((4,), 0.5)).item() for _ in range(6)]
    assert step.stats.replays == 4
    mg.manual_seed(3)
    eager = [(mg.bernoulli(mg.full((4,), 0.5)) * w).sum().item() for _ in range(6)]
    assert replayed == eager
