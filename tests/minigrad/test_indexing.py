"""Indexing on every device: basic and advanced getitem (its gradient scatter-adds, repeated
indices accumulate), one_hot. Forward against NumPy, backward against finite differences and
against numpy.add.at."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad as mg

from .primitive_checks import assert_forward, check_primitive, leaf

X_SHAPE = (3, 4, 2)

BASIC = {
    "int": 1,
    "negative int": -1,
    "slice": (slice(None), slice(1, 3)),
    "step slice": (slice(None, None, 2), slice(None, None, -1)),
    "ellipsis": (Ellipsis, 0),
    "None": (None, 1, slice(None), None),
    "mixed": (1, None, slice(None, None, 3), Ellipsis),
    "empty tuple": (),
    "all ints": (2, 3, 1),
}

ADVANCED = {  # host index data, turned into an index on the device by `_on_device` below
    "ints with repeats": np.array([0, 2, 0, 0]),
    "2-d ints": np.array([[1, 1], [0, 2]]),
    "negative ints": np.array([-1, -3, -1]),
    "ints on axis 1": (slice(None), np.array([3, 3, 0])),
    "two int arrays": (np.array([0, 1, 1]), np.array([2, 2, 2])),
    "broadcast int arrays": (np.array([[0], [2]]), slice(None), np.array([1, 0, 1])),
    "bool mask of rows": np.array([True, False, True]),
    "bool mask of 2 axes": np.arange(12).reshape(3, 4) % 3 == 0,
    "bool mask after ellipsis": (Ellipsis, np.array([False, True])),
    "list": [2, 2, 1],
}


def _on_device(index, device, kind):
    """The index with its arrays as NumPy arrays ("host"), or as Tensors on `device`."""
    if isinstance(index, tuple):
        return tuple(_on_device(part, device, kind) for part in index)
    if isinstance(index, np.ndarray) and kind == "tensor":
        return mg.tensor(index, device=device)
    return index


@pytest.mark.parametrize("name", list(BASIC))
def test_getitem_basic(name, device, rng):
    index = BASIC[name]
    check_primitive(lambda t: t[index], lambda v: np.asarray(v[index]),
                    [rng.standard_normal(X_SHAPE)], device)


def test_getitem_of_a_0d_tensor(device, rng):
    check_primitive(lambda t: t[()], lambda v: np.asarray(v[()]), [rng.standard_normal(())],
                    device)
    check_primitive(lambda t: t[None], lambda v: v[None], [rng.standard_normal(())], device)


@pytest.mark.parametrize("kind", ["host", "tensor"])
@pytest.mark.parametrize("name", list(ADVANCED))
def test_getitem_advanced(name, kind, device, rng):
    index = ADVANCED[name]
    check_primitive(lambda t: t[_on_device(index, device, kind)], lambda v: v[index],
                    [rng.standard_normal(X_SHAPE)], device)


def test_getitem_with_a_mask_made_from_the_tensor(device, rng):
    x = rng.standard_normal((3, 4))
    check_primitive(lambda t: t[t > 0], lambda v: v[v > 0], [x], device)


def test_repeated_indices_accumulate(device):
    x = leaf([10.0, 20.0, 30.0], device)
    x[np.array([2, 0, 2, 2])].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 3.0])


def test_slices_elements_and_masks_of_one_tensor_add_up(device, rng):
    """Gradients read at several indices of one tensor (overlapping slices, single elements,
    a mask, the whole tensor) all arrive in its gradient, in any order of arrival."""
    values = rng.standard_normal((3, 4))
    x = leaf(values, device)
    w = rng.standard_normal((3, 2))
    mask = values > 0
    y = ((x[:, 1:3] * mg.tensor(w, device=device)).sum() + x[0, 1] * 2.0 + x[2, 3] +
         x[0, 1] + x[mg.tensor(mask, device=device)].sum() + (x * x).sum() + x[1].sum())
    y.backward()
    expected = 2 * values + mask
    expected[:, 1:3] += w
    expected[0, 1] += 3.0
    expected[2, 3] += 1.0
    expected[1] += 1.0
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_getitem_gradient_of_the_gradient(device):
    """getitem's backward is itself differentiable. With L = Σ_k w_k x[i_k]², ∂L/∂x_j =
    2 x_j Σ_{k: i_k = j} w_k, and d/dx of Σ (∂L/∂x)² follows from that closed form."""
    x = leaf([1.0, 2.0, 3.0], device)
    index = np.array([1, 1, 2])
    w = mg.tensor([1.0, 2.0, 3.0], dtype=np.float64, device=device)
    (g,) = mg.grad((x[index] ** 2 * w).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), [0.0, 2 * 2.0 * 3, 2 * 3.0 * 3])
    (gg,) = mg.grad((g ** 2).sum(), x)
    # ∂L/∂x₁ = 2·x₁·(1 + 2) = 6x₁, ∂L/∂x₂ = 2·x₂·3 = 6x₂; d(Σ g²)/dx = 2 g · 6
    np.testing.assert_allclose(gg.numpy(), [0.0, 2 * 12.0 * 6, 2 * 18.0 * 6])


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_getitem_gradient_is_numpy_add_at(data, device):
    """For random integer indices (repeats likely), ∂L/∂x equals numpy.add.at of the upstream
    gradient: each use of x[i] adds its share."""
    n, m = data.draw(st.integers(1, 5), "n"), data.draw(st.integers(1, 3), "m")
    index_shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=2), "shape"))
    index = np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(index_shape)),
                                        max_size=int(np.prod(index_shape))), "index"))
    index = index.reshape(index_shape)
    seed = data.draw(st.integers(0, 2 ** 16), "seed")
    upstream = np.random.default_rng(seed).standard_normal(index_shape + (m,))
    x = leaf(np.zeros((n, m)), device)
    x[mg.tensor(index, device=device)].backward(mg.tensor(upstream, device=device))
    expected = np.zeros((n, m))
    np.add.at(expected, index, upstream)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_getitem_errors(device):
    x = mg.ones(3, 4, device=device)
    with pytest.raises(TypeError, match="getitem: index of type float"):
        x[1.5]
    with pytest.raises(TypeError, match="getitem: index arrays must be integer or bool"):
        x[np.array([0.0, 1.0])]
    with pytest.raises(IndexError, match="GetItem"):
        x[np.array([0, 3])]
    if x.requires_grad:
        with pytest.raises(RuntimeError, match="__setitem__: in-place change of a tensor that "
                                               "requires grad"):
            x[0] = 1.0


# -- one_hot: no gradient ----------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (4,), (2, 3)])
def test_one_hot(shape, device, rng):
    indices = rng.integers(0, 5, size=shape)
    out = mg.one_hot(mg.tensor(indices, device=device), 5)
    assert_forward(out, np.eye(5, dtype=np.float32)[indices], device)
    assert not out.requires_grad


def test_one_hot_of_lists_and_raw_arrays_and_its_dtype(device):
    expected = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    assert_forward(mg.one_hot([2, 0], 3, dtype=np.float64), expected, "cpu")
    raw = mg.tensor([2, 0], device=device).data          # the device's own array type
    assert_forward(mg.one_hot(raw, 3, dtype=np.float64), expected, device)


def test_one_hot_errors(device):
    with pytest.raises(ValueError, match=r"one_hot: indices must lie in \[0, 3\), got values "
                                         r"from 0 to 3"):
        mg.one_hot(mg.tensor([0, 3], device=device), 3)
    with pytest.raises(ValueError, match="one_hot: indices must lie in"):
        mg.one_hot(mg.tensor([-1], device=device), 3)
    with pytest.raises(TypeError, match="one_hot: indices must be integers, got dtype float"):
        mg.one_hot(mg.tensor([0.0, 1.0], device=device), 3)


def test_mixed_basic_and_advanced_indexing_places_axes_as_numpy_does(device, rng):
    """x[0, :, [0, 1]]: NumPy counts the int as an advanced index next to the list, separated
    by a slice, so the indexed axis goes first: (2, 3). PyTorch applies the int first and gives
    (3, 2); minigrad follows NumPy."""
    a = rng.standard_normal((2, 3, 4))
    x = mg.tensor(a, requires_grad=True, device=device)
    out = x[0, :, [0, 1]]
    assert out.shape == (2, 3)
    np.testing.assert_array_equal(out.numpy(), a[0, :, [0, 1]])
    weights = rng.standard_normal((2, 3))
    (out * mg.tensor(weights, device=device)).sum().backward()
    expected = np.zeros_like(a)
    expected[0, :, [0, 1]] = weights
    np.testing.assert_allclose(x.grad.numpy(), expected)


@pytest.mark.parametrize("shape, index", [
    ((2, 3, 4), ((0,),)), ((2, 3, 4), ((1, 0), slice(None))), ((2, 3, 4), ((0,), (2, 1))),
    ((2, 3, 4), (((0,),),)), ((2, 3, 4), (slice(None), (1, 1, 0))),
    ((1,), ((0, 0),)), ((3,), ((2, -1, 0),)),
])
def test_a_tuple_inside_the_index_is_a_sequence_of_positions(shape, index, device, rng):
    # NumPy (and PyTorch) read a tuple inside the index as a list; repeats accumulate gradient
    check_primitive(lambda t: t[index], lambda v: v[index], [rng.standard_normal(shape)], device)
