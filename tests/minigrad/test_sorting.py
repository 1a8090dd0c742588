"""argsort, sort, topk, kthvalue: against NumPy's stable sort, gradients against finite
differences (values flow back to the elements they came from), ties, 0-d and size-1 shapes,
errors."""

import numpy as np
import pytest

import minigrad as mg

from .primitive_checks import check_primitive, leaf

CASES = [((3, 4), -1), ((3, 4), 0), ((2, 1, 3), 1), ((1,), 0), ((), -1), ((2, 3), None)]


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("shape, axis", CASES)
def test_sort_and_argsort(shape, axis, descending, device, rng):
    a = rng.standard_normal(shape)

    def reference_order(v):
        if v.ndim == 0:                      # a 0-d tensor keeps its shape (PyTorch's rule)
            return np.zeros((), dtype=np.int64)
        if descending:                       # larger first, ties in their original order
            return np.argsort(-v, axis=axis, kind="stable")
        return np.argsort(v, axis=axis, kind="stable")

    def reference_values(v):
        if v.ndim == 0:
            return v
        flat, along = (v.reshape(-1), 0) if axis is None else (v, axis)
        return np.take_along_axis(flat, reference_order(v), along)
    check_primitive(lambda x: mg.sort(x, axis=axis, descending=descending), reference_values,
                    [a], device)
    order = mg.argsort(leaf(a, device), axis, descending=descending)
    np.testing.assert_array_equal(order.numpy(), reference_order(a))
    assert order.dtype == np.int64
    if axis is None:                         # PyTorch's sort takes no dim=None (flattening)
        return
    # PyTorch's spelling: the same values, with the positions they came from
    check_primitive(lambda x: mg.sort(x, dim=axis, descending=descending).values,
                    reference_values, [a], device)
    pair = leaf(a, device).sort(axis, descending=descending)
    assert isinstance(pair, mg.SortResult) and pair.indices.dtype == np.int64
    np.testing.assert_array_equal(pair.indices.numpy(), reference_order(a))


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("shape, k, dim", [((3, 5), 2, -1), ((4, 3), 4, 0), ((1,), 1, 0),
                                           ((), 1, 0), ((2, 3), 0, 1)])
def test_topk(shape, k, dim, largest, device, rng):
    a = rng.standard_normal(shape)

    def reference(v):
        order = np.argsort(-v if largest else v, axis=dim, kind="stable") if v.ndim else \
            np.zeros((), dtype=int)
        if not v.ndim:
            return v
        order = np.take(order, range(k), axis=dim)
        return np.take_along_axis(v, order, dim)
    check_primitive(lambda x: mg.topk(x, k, dim, largest)[0], reference, [a], device)


@pytest.mark.parametrize("shape, k, dim, keepdim", [((3, 5), 2, -1, False), ((4, 3), 4, 0, True),
                                                    ((1,), 1, 0, False), ((), 1, 0, False)])
def test_kthvalue(shape, k, dim, keepdim, device, rng):
    a = rng.standard_normal(shape)

    def reference(v):
        if not v.ndim:
            return v
        return np.take(np.sort(v, axis=dim), [k - 1] if keepdim else k - 1, axis=dim)
    check_primitive(lambda x: x.kthvalue(k, dim, keepdim)[0], reference, [a], device)


def test_ties_keep_their_order_and_each_value_gets_its_own_gradient():
    x = leaf([3.0, 1.0, 3.0, 2.0, 1.0], "cpu")
    values, indices = mg.topk(x, 3)
    assert values.tolist() == [3.0, 3.0, 2.0] and indices.tolist() == [0, 2, 3]   # as PyTorch
    assert mg.argsort(x, descending=True).tolist() == [0, 2, 3, 1, 4]
    value, index = mg.kthvalue(x, 2)
    assert value.item() == 1.0 and index.item() in (1, 4)
    (mg.sort(x, axis=-1) * mg.tensor(np.arange(5.0))).sum().backward()
    # sorted order is positions 1, 4, 3, 0, 2: each receives the weight of its sorted slot
    assert x.grad.tolist() == [3.0, 0.0, 4.0, 2.0, 1.0]


def test_the_spelling_decides_values_or_values_and_indices():
    """NumPy's sort gives the values, PyTorch's (values, indices): unpacking a tensor of two
    rows as `values, indices` would otherwise go through silently wrong."""
    x = mg.tensor([[2.0, 1.0], [0.0, 3.0]])
    for values in (mg.sort(x, axis=-1), x.sort(axis=1), mg.sort(x, axis=1, descending=False)):
        assert isinstance(values, mg.Tensor) and values.tolist() == [[1.0, 2.0], [0.0, 3.0]]
    for pair in (x.sort(dim=0), mg.sort(x, 0, descending=False), mg.sort(x, 0, stable=True)):
        values, indices = pair
        assert values.tolist() == [[0.0, 1.0], [2.0, 3.0]] and indices.tolist() == [[1, 0], [0, 1]]
    values, indices = x.sort(descending=True)          # torch.sort's default dim: the last
    assert values.tolist() == [[2.0, 1.0], [3.0, 0.0]] and indices.tolist() == [[0, 1], [1, 0]]
    with pytest.raises(TypeError, match=r"sort\(x\) is ambiguous.*axis=-1.*dim=-1"):
        x.sort()
    with pytest.raises(TypeError, match=r"sort\(x, 1\) is ambiguous.*axis=1.*dim=1"):
        mg.sort(x, 1)
    with pytest.raises(TypeError, match="axis=1 and dim=0"):
        mg.sort(x, axis=1, dim=0)
    with pytest.raises(TypeError, match="positionally and as axis="):
        mg.sort(x, 1, axis=1)


def test_bad_arguments():
    x = mg.ones(2, 3)
    with pytest.raises(ValueError, match=r"topk: k must be an int in \[0, 3\]"):
        mg.topk(x, 4)
    with pytest.raises(ValueError, match=r"kthvalue: k must be an int in \[1, 2\]"):
        mg.kthvalue(x, 0, dim=0)
    with pytest.raises(mg.AxisError, match="sort: axis 2"):
        mg.sort(x, axis=2)
    with pytest.raises(mg.AxisError, match="sort: axis 2"):
        mg.sort(x, dim=2)
    with pytest.raises(TypeError, match="argsort: got axis"):
        mg.argsort(x, axis=0, dim=1)
