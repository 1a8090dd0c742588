"""Shape primitives on every device: reshape, transpose, swapaxes, squeeze, unsqueeze,
broadcast_to, sum_to, concat, stack, split. Forward against NumPy, backward against finite
differences."""

import numpy as np
import pytest

import minigrad as mg

from .primitive_checks import assert_forward, check_primitive, leaf


@pytest.mark.parametrize("shape, new_shape", [((2, 3), (3, 2)), ((2, 3), (6,)), ((2, 3), (-1,)),
                                              ((2, 3), (1, 2, 1, 3)), ((), (1, 1)), ((1,), ()),
                                              ((2, 3, 2), (2, -1))])
def test_reshape(shape, new_shape, device, rng):
    check_primitive(lambda t: t.reshape(new_shape), lambda v: v.reshape(new_shape),
                    [rng.standard_normal(shape)], device)
    x = leaf(rng.standard_normal(shape), device)
    np.testing.assert_array_equal(x.reshape(*new_shape).numpy(), mg.reshape(x, new_shape).numpy())


def test_reshape_to_a_wrong_size_names_the_op(device):
    with pytest.raises(ValueError, match=r"Reshape.*\(2, 3\)"):
        mg.ones(2, 3, device=device).reshape(4, 2)


@pytest.mark.parametrize("shape, axes", [((2, 3), ()), ((2, 3, 4), ()), ((2, 3, 4), (1, 2, 0)),
                                         ((2, 3, 4), (-1, 0, 1)), ((3,), ()), ((), ())])
def test_transpose(shape, axes, device, rng):
    check_primitive(lambda t: t.transpose(*axes), lambda v: v.transpose(*axes),
                    [rng.standard_normal(shape)], device)
    check_primitive(lambda t: mg.transpose(t, axes), lambda v: np.transpose(v, axes or None),
                    [rng.standard_normal(shape)], device)


def test_T_reverses_the_axes(device, rng):
    check_primitive(lambda t: t.T, lambda v: v.T, [rng.standard_normal((2, 3, 4))], device)


def test_transpose_rejects_a_non_permutation(device):
    with pytest.raises(ValueError, match="transpose: axes .* not a permutation"):
        mg.ones(2, 3, device=device).transpose(0, 0)


@pytest.mark.parametrize("a, b", [(0, 1), (-1, 0), (1, 1), (0, 2)])
def test_swapaxes(a, b, device, rng):
    check_primitive(lambda t: t.swapaxes(a, b), lambda v: np.swapaxes(v, a, b),
                    [rng.standard_normal((2, 3, 4))], device)
    check_primitive(lambda t: mg.swapaxes(t, a, b), lambda v: np.swapaxes(v, a, b),
                    [rng.standard_normal((2, 3, 4))], device)


@pytest.mark.parametrize("shape, axis", [((1, 3, 1), None), ((1, 3, 1), 0), ((1, 3, 1), -1),
                                         ((1, 3, 1), (0, 2)), ((1,), None), ((2, 3), None)])
def test_squeeze(shape, axis, device, rng):
    check_primitive(lambda t: mg.squeeze(t, axis), lambda v: np.squeeze(v, axis),
                    [rng.standard_normal(shape)], device)
    check_primitive(lambda t: t.squeeze(axis), lambda v: np.squeeze(v, axis),
                    [rng.standard_normal(shape)], device)


def test_squeeze_of_a_longer_axis_names_it(device):
    with pytest.raises(ValueError, match=r"squeeze: axis 1 of shape \(1, 3\) has size 3"):
        mg.ones(1, 3, device=device).squeeze(1)


@pytest.mark.parametrize("shape, axis", [((2, 3), 0), ((2, 3), 1), ((2, 3), 2), ((2, 3), -1),
                                         ((2, 3), -3), ((), 0)])
def test_unsqueeze(shape, axis, device, rng):
    check_primitive(lambda t: t.unsqueeze(axis), lambda v: np.expand_dims(v, axis),
                    [rng.standard_normal(shape)], device)
    check_primitive(lambda t: mg.unsqueeze(t, axis), lambda v: np.expand_dims(v, axis),
                    [rng.standard_normal(shape)], device)


def test_unsqueeze_out_of_range(device):
    with pytest.raises(ValueError, match="unsqueeze: axis 3 is out of range"):
        mg.ones(2, 3, device=device).unsqueeze(3)


@pytest.mark.parametrize("shape, target", [((3,), (2, 3)), ((3, 1), (3, 4)), ((), (2, 2)),
                                           ((1, 1), (2, 3, 4)), ((2, 1, 3), (4, 2, 5, 3))])
def test_broadcast_to(shape, target, device, rng):
    check_primitive(lambda t: t.broadcast_to(target), lambda v: np.broadcast_to(v, target),
                    [rng.standard_normal(shape)], device)
    check_primitive(lambda t: mg.broadcast_to(t, target), lambda v: np.broadcast_to(v, target),
                    [rng.standard_normal(shape)], device)


def test_broadcast_to_a_smaller_shape_fails(device):
    with pytest.raises(ValueError, match=r"broadcast_to: shape \(2, 3\) cannot be broadcast to "
                                         r"\(3, 3\)"):
        mg.ones(2, 3, device=device).broadcast_to((3, 3))


def _sum_to_reference(v, shape):
    """Sum the leading extra axes away, then every axis where `shape` has 1 and v does not."""
    v = v.sum(axis=tuple(range(v.ndim - len(shape))))
    for i, n in enumerate(shape):
        if n == 1 and v.shape[i] != 1:
            v = v.sum(axis=i, keepdims=True)
    return v


@pytest.mark.parametrize("shape, target", [((2, 3), (3,)), ((3, 4), (3, 1)), ((2, 3), ()),
                                           ((4, 2, 3), (2, 1)), ((2, 3), (1, 3)), ((3,), (3,))])
def test_sum_to(shape, target, device, rng):
    check_primitive(lambda t: mg.sum_to(t, target), lambda v: _sum_to_reference(v, target),
                    [rng.standard_normal(shape)], device)


def test_sum_to_a_shape_it_does_not_broadcast_from(device):
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(2,\)"):
        mg.sum_to(mg.ones(2, 3, device=device), (2,))


# -- joining and splitting ---------------------------------------------------------------------

@pytest.mark.parametrize("shapes, axis", [([(2, 3), (1, 3), (3, 3)], 0), ([(2, 1), (2, 3)], 1),
                                          ([(2, 2, 1), (2, 2, 2)], -1), ([(3,)], 0),
                                          ([(2,), (2,)], 0)])
def test_concat(shapes, axis, device, rng):
    arrays = [rng.standard_normal(s) for s in shapes]
    check_primitive(lambda *ts: mg.concat(ts, axis=axis),
                    lambda *vs: np.concatenate(vs, axis=axis), arrays, device)


def test_concat_of_the_same_tensor_twice_adds_both_gradients(device):
    x = leaf([1.0, 2.0], device)
    (mg.concat([x, x]) * mg.tensor([1.0, 2.0, 3.0, 4.0], dtype=np.float64, device=device)
     ).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 6.0])


def test_concat_errors(device):
    with pytest.raises(ValueError, match=r"concat: shapes do not fit together along axis 0: "
                                         r"\(2, 3\), \(2, 4\)"):
        mg.concat([mg.ones(2, 3, device=device), mg.ones(2, 4, device=device)])
    with pytest.raises(ValueError, match="concat: needs at least one tensor"):
        mg.concat([])


@pytest.mark.parametrize("shape, n, axis", [((2, 3), 2, 0), ((2, 3), 3, 1), ((2, 3), 1, -1),
                                            ((), 3, 0), ((3,), 2, 1)])
def test_stack(shape, n, axis, device, rng):
    arrays = [rng.standard_normal(shape) for _ in range(n)]
    check_primitive(lambda *ts: mg.stack(ts, axis=axis), lambda *vs: np.stack(vs, axis=axis),
                    arrays, device)


def test_stack_errors(device):
    with pytest.raises(ValueError, match="stack: shapes do not fit together"):
        mg.stack([mg.ones(2, 3, device=device), mg.ones(3, 2, device=device)])
    with pytest.raises(ValueError, match="stack: axis 3 is out of range"):
        mg.stack([mg.ones(2, 3, device=device)], axis=3)


@pytest.mark.parametrize("sections, axis", [(3, 0), (2, 1), ([1, 3], 1), ([2], -1), ([0, 2], 0),
                                            (1, 0)])
def test_split(sections, axis, device, rng):
    x = rng.standard_normal((3, 4))
    expected = np.split(x, sections, axis=axis)
    parts = mg.split(leaf(x, device), sections, axis=axis)
    assert len(parts) == len(expected)
    for part, reference in zip(parts, expected):
        assert_forward(part, reference, device)
    # every part feeds the loss with its own weight, so each slice of the gradient is checked
    weights = [rng.standard_normal(p.shape) for p in expected]

    def weighted(t):
        return mg.stack([(p * mg.tensor(w, device=device)).sum()
                         for p, w in zip(mg.split(t, sections, axis=axis), weights)])
    assert mg.gradcheck(weighted, [leaf(x, device)])


def test_split_into_unequal_parts_fails(device):
    with pytest.raises(ValueError, match=r"split: axis 1 of shape \(3, 4\) does not divide "
                                         r"into 3 equal parts"):
        mg.split(mg.ones(3, 4, device=device), 3, axis=1)


@pytest.mark.parametrize("axis", [0, -1, (0,), None])
def test_squeeze_of_a_zero_d_tensor_accepts_axis_zero_and_minus_one(axis, device):
    x = leaf(np.float64(1.5), device)
    out = mg.squeeze(x, axis)
    assert out.shape == () and out.item() == 1.5
    assert mg.gradcheck(lambda t: mg.squeeze(t, axis) * 3.0, [x])
    assert mg.squeeze(leaf([2.5], device), axis if axis is not None else 0).shape == ()
    with pytest.raises(mg.AxisError, match="squeeze: axis 1 is out of range for a 0-d"):
        mg.squeeze(x, 1)


@pytest.mark.parametrize("axes", [(0, 0), (0, -1), (-1, -1)])
def test_swapaxes_of_a_0d_tensor_raises_axis_error(axes, device):
    """NumPy's rule: a 0-d array has no axis to exchange (an IndexError and a ValueError)."""
    with pytest.raises(mg.AxisError, match=r"swapaxes: .*0-d tensor"):
        mg.swapaxes(mg.tensor(1.0, device=device), *axes)
    with pytest.raises(IndexError):
        mg.tensor(1.0, device=device).swapaxes(*axes)
