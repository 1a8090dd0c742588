"""Reading and writing at positions: take_along_axis, gather, index_select, masked_select,
nonzero/argwhere, scatter, scatter_add, scatter_reduce. Forward against NumPy references written
from the definitions, float64 gradients against finite differences (0-d and size-1 included,
repeated positions included), PyTorch's conventions, errors."""

import numpy as np
import pytest

import minigrad as mg

from .primitive_checks import check_primitive, leaf


def _gather_numpy(a, axis, index):
    """out[p] = a[p with its `axis` coordinate replaced by index[p]], for every p of index."""
    out = np.empty(index.shape)
    for p in np.ndindex(*index.shape):
        q = list(p)
        q[axis] = index[p]
        out[p] = a[tuple(q)]
    return out


def _scatter_numpy(a, axis, index, src, reduce=None, include_self=True):
    """Each position of a collects the src elements index sends there (row-major), reduced."""
    groups = {}
    for p in np.ndindex(*index.shape):
        q = list(p)
        if a.ndim:                                  # a 0-d a has its one position
            q[axis] = index[p] % a.shape[axis]
        groups.setdefault(tuple(q), []).append(src[p])
    out = a.copy()
    for q, members in groups.items():
        if reduce is None:                          # scatter: the last write wins
            out[q] = members[-1]
            continue
        members = ([a[q]] if include_self else []) + members
        out[q] = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max,
                  "amin": np.min, "add": np.sum}[reduce](members)
    return out


INDEX = np.array([[2, 0, 1], [0, 0, 2]])      # repeated positions along axis 0 and 1


@pytest.mark.parametrize("shape, indices, axis", [
    ((3, 3), INDEX, 0), ((3, 4), np.array([[1], [0], [3]]), 1),
    ((2, 3, 2), np.array([[[1, 0], [0, 0], [2, 1]]]), 1), ((1,), np.array([0, 0, -1]), 0),
])
def test_take_along_axis(shape, indices, axis, device, rng):
    a = rng.standard_normal(shape)
    check_primitive(lambda x: mg.take_along_axis(x, indices, axis),
                    lambda v: np.take_along_axis(v, indices, axis), [a], device)


@pytest.mark.parametrize("shape, indices, axis", [
    ((3, 4), INDEX, 0), ((3, 4), INDEX[:, :2], 1), ((2, 3, 2), np.array([[[1], [0]]]), 1),
    ((1,), np.array([0, 0, -1]), 0), ((), np.array(0), 0),
])
def test_gather(shape, indices, axis, device, rng):
    """PyTorch's gather: the index may be smaller than x off `dim`, and does not broadcast."""
    a = rng.standard_normal(shape)
    reference = (lambda v: v) if not shape else (lambda v: _gather_numpy(v, axis, indices))
    check_primitive(lambda x: x.gather(axis, indices), reference, [a], device)


def test_take_along_axis_broadcasts_and_flattens(device, rng):
    a = rng.standard_normal((3, 4))
    order = np.array([[3, 0, 1, 2]])                  # one row of indices for every row
    check_primitive(lambda x: x.take_along_axis(order, 1),
                    lambda v: np.take_along_axis(v, order, 1), [a], device)
    flat = np.array([11, 0, 5])
    check_primitive(lambda x: mg.take_along_axis(x, flat, None),
                    lambda v: np.take_along_axis(v, flat, None), [a], device)


@pytest.mark.parametrize("shape, index, dim", [((3, 4), [2, 0, 2], 0), ((3, 4), [3], -1),
                                               ((1,), [0, 0], 0), ((2, 3), 1, 1), ((), [0], 0)])
def test_index_select(shape, index, dim, device, rng):
    a = rng.standard_normal(shape)
    expected = (lambda v: v) if not shape else \
        (lambda v: np.take(v, np.reshape(index, -1), axis=dim))
    check_primitive(lambda x: mg.index_select(x, dim, index), expected, [a], device)


@pytest.mark.parametrize("shape, mask", [((3, 4), np.arange(12).reshape(3, 4) % 3 == 0),
                                         ((3, 4), np.array([True, False, True, True])),
                                         ((1,), np.array([[True], [False], [True]])),
                                         ((), np.array(True))])
def test_masked_select(shape, mask, device, rng):
    a = rng.standard_normal(shape)
    full = np.broadcast_shapes(a.shape, mask.shape)
    check_primitive(lambda x: x.masked_select(mask),
                    lambda v: np.broadcast_to(v, full)[np.broadcast_to(mask, full)], [a], device)


def test_nonzero_in_numpys_and_pytorchs_forms(device):
    x = mg.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], device=device)
    rows, cols = mg.nonzero(x, as_tuple=True)
    assert rows.tolist() == [0, 1, 1] and cols.tolist() == [1, 0, 2] and rows.dtype == np.int64
    assert x.nonzero(as_tuple=False).tolist() == [[0, 1], [1, 0], [1, 2]]
    assert mg.argwhere(x).device == device and mg.argwhere(x).shape == (3, 2)
    assert mg.argwhere(mg.tensor(3.0)).shape == (1, 0)
    with pytest.raises(ValueError, match="nonzero: a 0-d tensor"):
        mg.nonzero(mg.tensor(3.0), as_tuple=True)
    assert mg.nonzero(mg.tensor(3.0), as_tuple=False).shape == (1, 0)   # as torch.nonzero
    with pytest.raises(TypeError, match=r"nonzero: nonzero\(x\) is a tuple .* as_tuple=True"):
        x.nonzero()                                       # NumPy's and PyTorch's results differ


SCATTERS = [((3, 4), INDEX, 0), ((3, 4), INDEX[:, :2], 1), ((4,), np.array([1, 3, 1, -1]), 0),
            ((1,), np.array([0, 0]), 0), ((), np.array(0), 0)]


@pytest.mark.parametrize("reduce", [None, "add", "sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("shape, index, axis", SCATTERS)
def test_scatters(shape, index, axis, reduce, include_self, device, rng):
    if reduce in (None, "add") and not include_self:
        return                                        # scatter and scatter_add have no option
    a = rng.standard_normal(shape)
    src = rng.standard_normal(tuple(n + 1 for n in index.shape))    # larger than index: cropped
    if reduce in ("amax", "amin"):
        src = np.asarray(src.round(0))                  # ties, among themselves and with x
        a = np.asarray(a.round(0))

    def fn(x, s):
        if reduce is None:
            return mg.scatter(x, axis, index, s)
        if reduce == "add":
            return x.scatter_add(axis, index, s)
        return mg.scatter_reduce(x, axis, index, s, reduce, include_self=include_self)

    def reference(x, s):
        block = s[tuple(slice(0, n) for n in index.shape)]
        return _scatter_numpy(x, axis, index, block, reduce, include_self)
    if reduce in ("amax", "amin"):                      # ties: finite differences are one-sided
        out = fn(leaf(a, device), leaf(src, device))
        np.testing.assert_allclose(out.numpy(), reference(a, src))
        a, src = rng.standard_normal(shape), rng.standard_normal(src.shape)    # no ties
    check_primitive(fn, reference, [a, src], device)


def test_scatter_reduce_extremes_split_ties_evenly():
    """PyTorch's rule: the gradient of a position's max goes in equal shares to every element
    equal to it, x's own value included when include_self."""
    x = leaf([1.0, 5.0, 2.0], "cpu")
    src = leaf([5.0, 3.0, 5.0, 0.0], "cpu")
    out = mg.scatter_reduce(x, 0, [1, 0, 1, 2], src, "amax")
    assert out.tolist() == [3.0, 5.0, 2.0]
    gx, gs = mg.grad(out.sum(), [x, src])
    np.testing.assert_allclose(gx.numpy(), [0, 1 / 3, 1])
    np.testing.assert_allclose(gs.numpy(), [1 / 3, 1, 1 / 3, 0])
    out = mg.scatter_reduce(x, 0, [1, 0, 1, 2], src, "amin", include_self=False)
    gx, gs = mg.grad(out.sum(), [x, src])           # x gets nothing where something wrote
    np.testing.assert_allclose(gx.numpy(), [0, 0, 0])
    np.testing.assert_allclose(gs.numpy(), [0.5, 1, 0.5, 1])


def test_scatter_product_with_zeros_and_second_derivative():
    x = leaf([2.0, 0.0, 3.0], "cpu")
    src = leaf([0.0, 4.0, 5.0, 2.0], "cpu")
    fn = lambda a, b: mg.scatter_reduce(a, 0, [1, 1, 0, 1], b, "prod")   # noqa: E731
    assert mg.gradcheck(fn, [x, src])
    assert mg.gradcheck(lambda a, b: mg.grad((fn(a, b) ** 2).sum(), [a, b],
                                             create_graph=True)[0], [x, src])


def test_scatter_last_write_wins_and_alone_gets_the_gradient():
    x = leaf([1.0, 5.0, 2.0], "cpu")
    src = leaf([7.0, 3.0], "cpu")
    out = mg.scatter(x, 0, [1, 1], src)
    assert out.tolist() == [1.0, 3.0, 2.0]
    gx, gs = mg.grad(out.sum(), [x, src])
    assert gx.tolist() == [1.0, 0.0, 1.0] and gs.tolist() == [0.0, 1.0]
    assert mg.scatter(x, 0, [0, 2], value=-1.0).tolist() == [-1.0, 5.0, -1.0]


def test_integer_scatter_mean_rounds_down():
    out = mg.scatter_reduce(mg.tensor([3, 4]), 0, [0, 0], mg.tensor([2, 2]), "mean")
    assert out.tolist() == [2, 4] and out.dtype == np.int64


BAD = [
    (lambda x: mg.gather(x, 2, [[0]]), mg.AxisError, "gather: axis 2"),
    (lambda x: mg.gather(x, 0, [0, 1]), ValueError, r"gather: index of shape \(2,\)"),
    (lambda x: mg.gather(x, 0, [[3, 0]]), IndexError, "index 3 is out of range for axis 0"),
    (lambda x: mg.gather(x, 0, [[0.5]]), TypeError, "integers"),
    (lambda x: mg.take_along_axis(x, [0], 0), ValueError, "as many axes"),
    (lambda x: mg.take_along_axis(x, [[0], [1], [0]], 1), ValueError, "broadcast"),
    (lambda x: mg.index_select(x, 0, [[0]]), ValueError, "0-d or 1-D"),
    (lambda x: mg.index_select(x, 1, [-4]), IndexError, "index -4"),
    (lambda x: mg.masked_select(x, [True, False]), ValueError, r"masked_select.*\(2,\)"),
    (lambda x: mg.masked_select(x, [1, 0, 1]), TypeError, "bool"),
    (lambda x: mg.scatter(x, 0, [[0, 1]], mg.ones(1, 1)), ValueError, "src of shape"),
    (lambda x: mg.scatter(x, 0, [[0]]), TypeError, "exactly one of src and value"),
    (lambda x: mg.scatter_reduce(x, 0, [[0]], mg.ones(1, 1), "max"), ValueError, "'amax'"),
    (lambda x: mg.scatter_add(x, 1, [[5]], mg.ones(1, 1)), IndexError, "index 5"),
]


@pytest.mark.parametrize("call, error, match", BAD)
def test_bad_input_raises_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call(mg.ones(2, 3))


def _scatter_combine_numpy(a, index, src, combine):
    """a copy of a with out[index[p]][p₁…] = combine(out[…], src[p]) for every position p of
    index (dim 0), in order."""
    out = a.copy()
    for p in np.ndindex(*index.shape):
        target = (index[p],) + p[1:]
        out[target] = combine(out[target], src[p])
    return out


@pytest.mark.parametrize("reduce, combine", [("add", np.add), ("multiply", np.multiply)])
@pytest.mark.parametrize("shape, index", [((3, 4), [[0, 1, 0, 2], [0, 1, 2, 2]]),
                                          ((1,), [0, 0])])
def test_scatter_reduce_argument_combines_with_x(reduce, combine, shape, index, rng):
    index = np.array(index).reshape(-1, *shape[1:])
    a, src = rng.standard_normal(shape), rng.standard_normal(index.shape)
    x, s = leaf(a, "cpu"), leaf(src, "cpu")
    out = mg.scatter(x, 0, mg.tensor(index), s, reduce=reduce)
    np.testing.assert_allclose(out.numpy(), _scatter_combine_numpy(a, index, src, combine))
    assert mg.gradcheck(lambda t, u: mg.scatter(t, 0, mg.tensor(index), u, reduce=reduce), [x, s])
    by_value = x.scatter(0, mg.tensor(index), value=2.5, reduce=reduce)
    np.testing.assert_allclose(by_value.numpy(),
                               _scatter_combine_numpy(a, index, np.full(index.shape, 2.5),
                                                      combine))
    with pytest.raises(ValueError, match="scatter: reduce must be 'add' or 'multiply'"):
        mg.scatter(x, 0, mg.tensor(index), s, reduce="sum")
