"""A single-element tensor stands for its number (float, int, bool, index, format, math), and
np.asarray of a tensor that requires grad cannot be written through."""

import math
import operator
import re

import numpy as np
import pytest

import minigrad as mg

SINGLE_SHAPES = [(), (1,), (1, 1)]


@pytest.mark.parametrize("shape", SINGLE_SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_int_bool_of_a_single_element(shape, dtype):
    value = np.full(shape, -2.75, dtype=dtype)
    t = mg.tensor(value, requires_grad=True)
    assert float(t) == -2.75 and type(float(t)) is float
    assert int(t) == -2 and type(int(t)) is int              # truncates toward zero
    assert bool(t) is True
    assert bool(mg.tensor(np.zeros(shape, dtype=dtype))) is False
    assert math.exp(t) == pytest.approx(math.exp(-2.75))     # math reads __float__
    assert math.isclose(math.fabs(t), 2.75)
    assert round(float(t), 1) == -2.8


@pytest.mark.parametrize("shape", SINGLE_SHAPES)
def test_index_of_integer_and_bool_tensors(shape):
    three = mg.tensor(np.full(shape, 3, dtype=np.int64))
    assert operator.index(three) == 3 and type(operator.index(three)) is int
    assert list(range(three)) == [0, 1, 2]
    assert ["a", "b", "c", "d"][three] == "d"
    assert "abcdef"[mg.tensor(np.full(shape, 1, dtype=np.uint8)):three] == "bc"
    assert operator.index(mg.tensor(np.full(shape, True))) == 1


@pytest.mark.parametrize("shape", SINGLE_SHAPES)
def test_float_tensors_refuse_to_be_an_index(shape):
    t = mg.tensor(np.full(shape, 2.0))
    with pytest.raises(TypeError, match="integer tensors.*float64"):
        operator.index(t)
    with pytest.raises(TypeError):
        range(t)
    with pytest.raises(TypeError):
        [1, 2, 3][t]


@pytest.mark.parametrize("shape", [(2,), (2, 3), (0,)])
def test_more_than_one_element_is_refused_naming_the_shape(shape):
    t = mg.tensor(np.ones(shape), requires_grad=True)
    i = mg.tensor(np.ones(shape, dtype=np.int64))
    for convert, arg in ((float, t), (int, t), (math.exp, t), (operator.index, i)):
        with pytest.raises(ValueError, match=rf"single-element.*{re.escape(str(shape))}"):
            convert(arg)
    with pytest.raises(ValueError, match=re.escape(str(shape))):
        bool(t)


def test_format_of_a_single_element():
    loss = mg.tensor(np.float64(0.123456), requires_grad=True)
    assert f"{loss:.3f}" == "0.123"
    assert f"{loss:8.2e}" == format(0.123456, "8.2e")
    assert f"{mg.tensor([2.5]):.1f}" == "2.5"                # shape (1,): also its number
    assert f"{mg.tensor([[7]]):03d}" == "007"
    assert f"{mg.tensor(2.5)}" == "2.5"                      # 0-d, empty spec: the number
    assert f"{mg.tensor([2.5])}" == str(mg.tensor([2.5]))    # otherwise: str(t)
    assert f"{mg.tensor(True)}" == "True"


def test_format_of_many_elements_formats_each_one():
    t = mg.tensor(np.array([[0.5, 1.0], [1.5, 2.25]]))
    text = f"{t:.2f}"
    assert text.startswith("tensor([[") and text.endswith("]])")
    numbers = [float(s) for s in text.replace("tensor(", "").replace("[", " ")
               .replace("]", " ").replace(")", " ").replace(",", " ").split()]
    assert numbers == [0.5, 1.0, 1.5, 2.25]
    assert "0.50" in text and "2.25" in text
    assert f"{t}" == str(t)
    with pytest.raises(ValueError):
        format(t, "d")                                       # a spec the numbers reject


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_array_of_0d_tensors_is_an_array_of_their_values(dtype):
    parts = [mg.tensor(dtype(v), requires_grad=True) for v in (1.5, -2.0, 3.25)]
    array = np.array(parts)
    assert array.dtype == dtype and array.shape == (3,)
    np.testing.assert_array_equal(array, [1.5, -2.0, 3.25])
    history = np.array([mg.tensor(0.5), mg.tensor(0.25)])     # e.g. a list of losses
    np.testing.assert_array_equal(history, [0.5, 0.25])
    assert history.dtype.kind == "f"
    np.testing.assert_allclose(np.mean(parts), (1.5 - 2.0 + 3.25) / 3)


def test_asarray_of_a_tensor_that_requires_grad_is_a_read_only_view():
    w = mg.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    view = np.asarray(w)
    assert np.shares_memory(view, w.data)                     # no copy
    assert not view.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 100.0
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(w)[...] += 1.0
    y = (w * w).sum()                                         # graph saved w's array
    y.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0, 3.0])
    assert w.data.flags.writeable                             # the tensor's own array is intact
    nonleaf = w * 2.0
    assert not np.asarray(nonleaf).flags.writeable


def test_asarray_without_grad_shares_and_copies_stay_writable():
    t = mg.tensor(np.array([1.0, 2.0]))
    assert np.asarray(t).flags.writeable and np.shares_memory(np.asarray(t), t.data)
    w = mg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    for copy in (w.numpy(), np.array(w), np.asarray(w, dtype=np.float32)):
        assert copy.flags.writeable and not np.shares_memory(copy, w.data)
        copy[0] = 9.0
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])



def test_device_tensors_give_numbers_explicitly_but_no_implicit_arrays(sim_device):
    t = mg.tensor(np.float64(2.5), device=sim_device)
    assert float(t) == 2.5 and f"{t:.1f}" == "2.5" and int(t) == 2
    assert operator.index(mg.tensor(np.int64(4), device=sim_device)) == 4
    with pytest.raises(TypeError, match="sim"):
        np.array([t, t])                                     # no silent device → host copy


@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
@pytest.mark.parametrize("op", [operator.and_, operator.or_, operator.xor],
                         ids=["and", "or", "xor"])
@pytest.mark.parametrize("scalar", [True, False])
def test_bool_operators_with_a_python_bool_on_either_side(op, scalar, shape, rng):
    a = rng.random(shape) < 0.5
    t = mg.tensor(a)
    for out, expected in [(op(scalar, t), op(scalar, a)), (op(t, scalar), op(a, scalar)),
                          (op(t, t), op(a, a))]:
        assert isinstance(out, mg.Tensor) and out.dtype == np.bool_
        np.testing.assert_array_equal(out.numpy(), expected)
