"""median, nansum, nanmean, count_nonzero, diff, cdist and tensordot: against plain-NumPy
references written here, float64 gradchecks, shapes () and (1,), NaN, compiled replays, and
PyTorch's numbers when it is installed."""

import numpy as np
import pytest

import minigrad as mg


def f64(array, requires_grad=True):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


def lower_median(a, axis):
    """The smaller middle element of a sorted copy (NumPy's median averages the two)."""
    n = a.shape[axis]
    return np.take(np.sort(a, axis=axis), (n - 1) // 2, axis=axis)


# -- median ------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (1,), (5,), (4,), (2, 3), (3, 4), (2, 1, 3)])
def test_median_is_the_lower_middle_element(shape):
    rng = np.random.default_rng(sum(shape) + len(shape))
    a = rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float64)
    x = f64(a)
    np.testing.assert_array_equal(mg.median(x).numpy(), lower_median(a.reshape(-1), 0))
    for dim in range(-len(shape), len(shape)):
        for keepdim in (False, True):
            values, indices = mg.median(x, dim=dim, keepdim=keepdim)
            expected = lower_median(a, dim)
            if keepdim:
                expected = np.expand_dims(expected, dim)
            np.testing.assert_array_equal(values.numpy(), expected)
            picked = np.take_along_axis(a, indices.numpy() if keepdim else
                                        np.expand_dims(indices.numpy(), dim), dim)
            np.testing.assert_array_equal(picked.reshape(values.shape), values.numpy())
            assert indices.dtype == np.int64
    if not shape:
        values, indices = mg.median(x, dim=0)
        assert values.shape == indices.shape == () and values.item() == a.item()


def test_median_gradient_goes_to_the_chosen_element_and_nan_wins():
    x = f64([[4.0, 1.0, 3.0, 2.0], [0.5, -1.0, 7.0, 2.5]])
    assert mg.gradcheck(lambda x: mg.median(x, dim=1).values * mg.tensor([1.0, 2.0]), [x])
    mg.median(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0, 0, 1.0], [0, 0, 0, 0]])   # 2.0
    y = mg.tensor([[1.0, np.nan, 3.0, np.nan], [1.0, 2.0, 3.0, 4.0]])
    values, indices = mg.median(y, dim=1)
    assert np.isnan(values.numpy()[0]) and indices.tolist() == [1, 1]
    assert np.isnan(mg.median(y).item())
    with pytest.raises(ValueError, match=r"median: no elements along dim 1 of shape \(2, 0\)"):
        mg.median(mg.zeros(2, 0), dim=1)
    assert mg.median(mg.tensor([3, 1, 2, 7])).item() == 2          # integers: the element


# -- NaN-skipping reductions and counting --------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (1,), (4,), (2, 3), (3, 1, 2)])
def test_nansum_and_nanmean_skip_nan_and_give_it_no_gradient(shape):
    rng = np.random.default_rng(len(shape))
    a = rng.normal(size=shape)
    if a.size > 1:
        a.reshape(-1)[::2] = np.nan
    axes = [None] + list(range(len(shape)))
    for axis in axes:
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(mg.nansum(f64(a), axis=axis).numpy(),
                                       np.nansum(a, axis=axis), rtol=1e-12)
            expected = _nanmean(a, axis)
            np.testing.assert_allclose(mg.nanmean(f64(a), dim=axis).numpy(), expected,
                                       rtol=1e-12)
    x = f64(a)
    (mg.nansum(x) + mg.nanmean(x) * 3.0).backward()
    finite = ~np.isnan(a)
    count = max(finite.sum(), 1)
    np.testing.assert_allclose(x.grad.numpy(), np.where(finite, 1.0 + 3.0 / count, 0.0))
    clean = f64(rng.normal(size=shape))
    assert mg.gradcheck(lambda t: mg.nanmean(t, axis=-1 if shape else None), [clean])


def _nanmean(a, axis):
    """The mean of the non-NaN elements; NaN where there are none (without NumPy's warning)."""
    finite = ~np.isnan(a)
    total = np.where(finite, a, 0.0).sum(axis=axis)
    count = finite.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / count


@pytest.mark.parametrize("shape", [(), (1,), (5,), (2, 3), (2, 2, 2)])
def test_count_nonzero_matches_numpy(shape):
    a = np.random.default_rng(3).integers(-1, 2, size=shape)
    x = mg.tensor(a)
    assert mg.count_nonzero(x).item() == np.count_nonzero(a)
    for axis in range(len(shape)):
        out = mg.count_nonzero(x, dim=axis)
        assert out.dtype == np.int64
        np.testing.assert_array_equal(out.numpy(), np.count_nonzero(a, axis=axis))
    if len(shape) == 3:
        np.testing.assert_array_equal(mg.count_nonzero(x, axis=(0, 2)).numpy(),
                                      np.count_nonzero(a, axis=(0, 2)))


# -- diff ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1,), (5,), (2, 4), (3, 2, 3)])
@pytest.mark.parametrize("n", [0, 1, 2])
def test_diff_matches_numpy_with_prepend_and_append(shape, n):
    rng = np.random.default_rng(n + len(shape))
    a = rng.normal(size=shape)
    for axis in range(-len(shape), len(shape)):
        np.testing.assert_allclose(mg.diff(f64(a), n, dim=axis).numpy(),
                                   np.diff(a, n, axis=axis), rtol=1e-12)
    edge_shape = shape[:-1] + (2,)
    before, after = rng.normal(size=edge_shape), rng.normal(size=edge_shape)
    got = mg.diff(f64(a), n, prepend=f64(before), append=f64(after))
    np.testing.assert_allclose(got.numpy(), np.diff(a, n, prepend=before, append=after),
                               rtol=1e-12)
    if n and np.diff(a, n).size:
        assert mg.gradcheck(lambda t, u: mg.diff(t, n, append=u),
                            [f64(a), f64(after)])


def test_diff_of_bools_and_bad_arguments():
    b = np.array([True, True, False, True])
    np.testing.assert_array_equal(mg.diff(mg.tensor(b)).numpy(), np.diff(b))
    with pytest.raises(ValueError, match="diff: needs at least one dimension"):
        mg.diff(mg.tensor(1.0))
    with pytest.raises(ValueError, match="diff: n must be a non-negative int"):
        mg.diff(mg.ones(3), -1)


# -- cdist and tensordot -------------------------------------------------------------------------

def cdist_numpy(a, b, p):
    difference = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == np.inf:
        return difference.max(axis=-1)
    if p == 0:
        return (difference != 0).sum(axis=-1).astype(a.dtype)
    return (difference ** p).sum(axis=-1) ** (1.0 / p)


@pytest.mark.parametrize("shapes", [((1, 1), (1, 1)), ((3, 2), (4, 2)), ((2, 3, 2), (2, 1, 2)),
                                    ((2, 3, 4), (5, 4))])
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, np.inf, 0.0])
def test_cdist_matches_numpy_and_gradchecks(shapes, p):
    rng = np.random.default_rng(int(p) if np.isfinite(p) else 9)
    a, b = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    np.testing.assert_allclose(mg.cdist(f64(a), f64(b), p).numpy(), cdist_numpy(a, b, p),
                               rtol=1e-12)
    if p in (1.0, 2.0, 3.0):
        assert mg.gradcheck(lambda x, y: mg.cdist(x, y, p), [f64(a), f64(b)])


def test_cdist_gradient_at_a_zero_distance_is_zero_and_shapes_are_checked():
    x = f64([[1.0, 2.0], [0.0, 0.0]])
    mg.cdist(x, mg.tensor([[1.0, 2.0]])).sum().backward()
    assert np.all(np.isfinite(x.grad.numpy())) and np.all(x.grad.numpy()[0] == 0.0)
    with pytest.raises(ValueError, match=r"cdist: .* same M, got shapes \(2, 3\) and \(2, 2\)"):
        mg.cdist(mg.ones(2, 3), mg.ones(2, 2))


@pytest.mark.parametrize("shapes, dims", [(((2, 3), (3, 4)), 1), (((2, 3, 4), (3, 4, 5)), 2),
                                          (((3,), (3,)), 1), (((), ()), 0), (((2,), (3,)), 0),
                                          (((2, 3, 4), (4, 2)), ([0, 2], [1, 0])),
                                          (((1, 3), (3, 1)), ([1], [0]))])
def test_tensordot_matches_numpy_and_gradchecks(shapes, dims):
    rng = np.random.default_rng(len(shapes[0]))
    a, b = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    got = mg.tensordot(f64(a), f64(b), dims)
    np.testing.assert_allclose(got.numpy(), np.tensordot(a, b, dims), rtol=1e-12)
    np.testing.assert_allclose(mg.tensordot(f64(a), f64(b), axes=dims).numpy(),
                               np.tensordot(a, b, dims), rtol=1e-12)
    assert mg.gradcheck(lambda x, y: mg.tensordot(x, y, dims), [f64(a), f64(b)])


def test_tensordot_refuses_mismatched_axes():
    with pytest.raises(ValueError, match=r"tensordot: the paired axes \[1\] of \(2, 3\)"):
        mg.tensordot(mg.ones(2, 3), mg.ones(4, 2), dims=([1], [0]))
    with pytest.raises(ValueError, match="tensordot: dims=3"):
        mg.tensordot(mg.ones(2, 3), mg.ones(3, 2), dims=3)


def test_permute_of_a_matrix_in_its_own_order_is_no_change():
    x = mg.ones(2, 3)
    assert x.permute(0, 1).shape == (2, 3) and mg.permute(x, (1, 0)).shape == (3, 2)


# -- compiled replays and PyTorch ----------------------------------------------------------------

def test_compiled_steps_compute_them_again_at_every_replay():
    w = mg.tensor(np.linspace(0.5, 1.5, 4), requires_grad=True)

    def step(x):
        h = x * w
        loss = (mg.median(h, dim=1).values.sum() + mg.nanmean(h) +
                mg.count_nonzero(h > 1.0, dim=1).sum() * mg.diff(h).sum())
        loss.backward()
        return loss

    compiled = mg.compile(step)
    rng = np.random.default_rng(12)
    for _ in range(6):
        x = mg.tensor(rng.uniform(0, 2, (3, 4)))
        w.grad = None
        loss, grad = compiled(x).numpy(), w.grad.numpy()
        w.grad = None
        np.testing.assert_array_equal(loss, step(x).numpy())
        np.testing.assert_array_equal(grad, w.grad.numpy())
    assert compiled.stats.replays == 4, compiled.stats


def test_against_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(13)
    a = rng.normal(size=(3, 5))
    values, indices = mg.median(f64(a), dim=1)
    expected = torch.median(torch.tensor(a), dim=1)
    np.testing.assert_array_equal(values.numpy(), expected.values.numpy())
    np.testing.assert_array_equal(indices.numpy(), expected.indices.numpy())
    assert mg.median(f64(a[:, :4])).item() == torch.median(torch.tensor(a[:, :4])).item()
    b = rng.normal(size=(4, 5))
    for p in (1.0, 2.0, np.inf):
        x, t = f64(a), torch.tensor(a, requires_grad=True)
        mg.cdist(x, f64(b, False), p).sum().backward()
        torch.cdist(t, torch.tensor(b), p).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10)
    nan = a.copy()
    nan[0, 1] = np.nan
    np.testing.assert_allclose(mg.nanmean(f64(nan), dim=1).numpy(),
                               torch.nanmean(torch.tensor(nan), dim=1).numpy(), rtol=1e-12)
    np.testing.assert_array_equal(mg.diff(f64(a), 2, dim=0).numpy(),
                                  torch.diff(torch.tensor(a), 2, dim=0).numpy())
    np.testing.assert_allclose(mg.tensordot(f64(a), f64(b.T), 1).numpy(),
                               torch.tensordot(torch.tensor(a), torch.tensor(b.T), 1).numpy(),
                               rtol=1e-12)


def test_on_a_device_that_refuses_implicit_conversion_as_on_the_host(device):
    """Every function above on the simulated device (arrays that refuse implicit conversion to
    NumPy, as CuPy's do): the host's numbers and gradients."""
    rng = np.random.default_rng(16)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(5, 4))
    a[0, 1] = np.nan
    results = []
    for where in ("cpu", device):
        x = mg.tensor(a, device=where, requires_grad=True)
        y = mg.tensor(b, device=where)
        clean = mg.nan_to_num(x)
        outputs = [mg.median(x, dim=1).values, mg.median(clean), mg.nanmean(x, dim=1),
                   mg.nansum(x), mg.count_nonzero(clean > 0, dim=0).astype("float64"),
                   mg.diff(clean, 2, dim=1).sum(), mg.cdist(clean, y).sum(),
                   mg.tensordot(clean, y, ([1], [1])).sum(),
                   mg.index_fill(clean, 1, mg.tensor([0, 3], device=where), 2.0).sum()]
        total = sum((o * (k + 1.0)).sum() for k, o in enumerate(outputs))
        total.backward()
        results.append([o.numpy() for o in outputs] + [x.grad.numpy()])
    for host, other in zip(*results):
        np.testing.assert_allclose(other, host, rtol=1e-12, atol=1e-12)
