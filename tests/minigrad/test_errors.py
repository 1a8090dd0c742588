"""Bad input gets a clear exception that names the operation and the offending shapes, dtypes
or devices."""

import re

import numpy as np
import pytest

import minigrad as mg


def ones(*shape, **kwargs) -> mg.Tensor:
    return mg.ones(*shape, dtype="float64", **kwargs)


# -- shapes --------------------------------------------------------------------------------

@pytest.mark.parametrize("shape_a, shape_b", [((2, 3), (2, 3)), ((2, 3), (4,)), ((5,), (4,)),
                                              ((2, 3, 4), (3, 4, 5))])
def test_matmul_shape_mismatch_names_matmul_and_both_shapes(shape_a, shape_b):
    a, b = ones(*shape_a, requires_grad=True), ones(*shape_b)
    pattern = rf"matmul.*{re.escape(str(shape_a))}.*{re.escape(str(shape_b))}"
    with pytest.raises(ValueError, match=pattern):
        a @ b
    with pytest.raises(ValueError, match=pattern):
        mg.matmul(a, b)


def test_matmul_says_which_dimensions_disagree():
    with pytest.raises(ValueError, match="inner dimensions 3 and 4 differ"):
        ones(2, 3) @ ones(4, 2)
    with pytest.raises(ValueError, match="batch dimensions do not broadcast"):
        ones(2, 3, 4) @ ones(3, 4, 5)
    with pytest.raises(ValueError, match=r"matmul.*at least one dimension.*\(\)"):
        ones(2, 3) @ mg.tensor(2.0)


@pytest.mark.parametrize("op, name", [(lambda a, b: a + b, "Add"), (lambda a, b: a - b, "Sub"),
                                      (lambda a, b: a * b, "Mul"), (lambda a, b: a / b, "Div"),
                                      (lambda a, b: a ** b, "Pow"),
                                      (mg.maximum, "Maximum"), (mg.minimum, "Minimum")])
def test_broadcasting_mismatch_names_the_op_and_both_shapes(op, name):
    a, b = ones(2, 3, requires_grad=True), ones(4)
    with pytest.raises(ValueError, match=rf"{name}.*\(2, 3\).*\(4,\)"):
        op(a, b)


def test_comparison_broadcasting_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"lt.*\(2, 3\).*\(4,\)"):
        ones(2, 3) < ones(4)


def test_shape_errors_of_shape_primitives():
    x = ones(2, 3, requires_grad=True)
    with pytest.raises(ValueError, match=r"Reshape.*\(4, ?2\).*\(2, 3\)"):
        x.reshape(4, 2)
    with pytest.raises(ValueError, match=r"broadcast_to.*\(2, 3\).*\(3, 3\)"):
        x.broadcast_to((3, 3))
    with pytest.raises(ValueError, match=r"concat.*\(2, 3\), \(2, 2\)"):
        mg.concat([x, ones(2, 2)], axis=0)
    with pytest.raises(ValueError, match=r"stack.*\(2, 3\), \(3, 2\)"):
        mg.stack([x, ones(3, 2)])
    with pytest.raises(ValueError, match=r"split.*\(2, 3\).*2 equal parts"):
        mg.split(x, 2, axis=1)
    with pytest.raises(ValueError, match=r"squeeze.*\(2, 3\).*size 2"):
        x.squeeze(0)
    with pytest.raises(ValueError, match=r"transpose.*\(0, 0\)"):
        x.transpose(0, 0)


def test_axis_errors_name_the_op():
    x = ones(2, 3)
    for op, call in [("sum", lambda: x.sum(axis=2)), ("mean", lambda: x.mean(axis=-3)),
                     ("softmax", lambda: x.softmax(axis=2)),
                     ("log_softmax", lambda: x.log_softmax(axis=5)),
                     ("logsumexp", lambda: mg.logsumexp(x, axis=2))]:
        with pytest.raises(ValueError, match=rf"{op}: axis .* out of range for a 2-d tensor"):
            call()
    with pytest.raises(TypeError, match="sum: axis must be an int"):
        x.sum(axis=1.0)


def test_reductions_of_empty_tensors_are_refused():
    with pytest.raises(ValueError, match=r"max.*empty.*\(0,\)"):
        mg.zeros(0).max()
    with pytest.raises(ValueError, match=r"argmax.*\(0, 2\)"):
        mg.zeros(0, 2).argmax()


# -- indices and masks ---------------------------------------------------------------------

@pytest.mark.parametrize("index", [1.5, "a", np.float64(1.0), {0: 1}, (0, 1.0), [0.5, 1.5],
                                   mg.tensor([0.0, 1.0]), np.array([0.0])])
def test_wrong_index_types_raise_type_error(index):
    x = ones(3, 4, requires_grad=True)
    with pytest.raises(TypeError, match="getitem"):
        x[index]


def test_out_of_range_indices_name_getitem():
    x = ones(2, 3)
    with pytest.raises(IndexError, match=r"GetItem.*out of bounds.*\(2, 3\)"):
        x[5]
    with pytest.raises(IndexError, match="GetItem.*too many indices"):
        x[0, 0, 0]


def test_masks_must_be_bool():
    x = ones(3)
    with pytest.raises(TypeError, match="masked_fill.*bool.*float"):
        x.masked_fill(mg.tensor([1.0, 0.0, 1.0]), 0.0)
    with pytest.raises(TypeError, match="where.*bool.*int64"):
        mg.where(mg.tensor([1, 0, 1]), x, 0.0)


def test_bad_arguments_of_nn_primitives():
    x = ones(2, 3)
    with pytest.raises(ValueError, match=r"dropout: p must be in \[0, 1\], got 1.5"):
        mg.dropout(x, 1.5)
    with pytest.raises(ValueError, match=r"one_hot.*\[0, 3\).*5"):
        mg.one_hot([0, 5], 3)
    with pytest.raises(TypeError, match="one_hot.*integers"):
        mg.one_hot(mg.tensor([0.0, 1.0]), 3)
    with pytest.raises(ValueError, match="gelu.*'fast'"):
        mg.gelu(x, approximate="fast")
    with pytest.raises(ValueError, match="clip"):
        mg.clip(x)


# -- dtypes and grad -------------------------------------------------------------------------

def test_requires_grad_on_integer_data_raises_type_error():
    with pytest.raises(TypeError, match="requires_grad.*int64"):
        mg.tensor([1, 2, 3], requires_grad=True)
    with pytest.raises(TypeError, match="requires_grad.*int64"):
        mg.arange(3).requires_grad_()
    with pytest.raises(TypeError, match="requires_grad.*bool"):
        mg.tensor(True, requires_grad=True)


def test_operands_that_are_not_numbers_raise_type_error():
    x = ones(3)
    for bad in ("a", None, [1.0, 2.0, 3.0], 1 + 2j):
        with pytest.raises(TypeError):
            x + bad


def test_explicit_gradient_errors_name_backward_and_shapes():
    y = ones(2, 3, requires_grad=True) * 2
    with pytest.raises(ValueError, match=r"backward: gradient shape \(3, 2\).*\(2, 3\)"):
        y.backward(np.ones((3, 2)))


# -- devices -------------------------------------------------------------------------------

def test_mixing_devices_names_both_devices(sim_device):
    x = ones(2, 3, requires_grad=True)
    on_device = mg.ones(2, 3, dtype="float64", device=sim_device)
    cases = {
        "Add": lambda: x + on_device,
        "Mul": lambda: on_device * x,
        "MatMul": lambda: x @ on_device.T,
        "Where": lambda: mg.where(x > 0, x, on_device),
        "Concat": lambda: mg.concat([x, on_device]),
    }
    for op, call in cases.items():
        with pytest.raises(RuntimeError, match=rf"{op}: .*one device(?=.*cpu)(?=.*sim)"):
            call()
    with pytest.raises(RuntimeError, match="cpu.*sim"):
        x < on_device
    with pytest.raises(RuntimeError, match="getitem.*sim.*cpu"):
        x[mg.tensor([0], device=sim_device)]
    with pytest.raises(RuntimeError, match="backward: gradient is on sim, output on cpu"):
        (x * 2).backward(mg.ones(2, 3, dtype="float64", device=sim_device))


def test_an_axis_out_of_range_is_both_an_index_error_and_a_value_error():
    x = mg.ones(2, 3)
    calls = [lambda: x.sum(2), lambda: mg.softmax(x, -3), lambda: x.unsqueeze(4),
             lambda: mg.stack([x, x], 4), lambda: x.transpose(0, 2), lambda: x.swapaxes(0, 3),
             lambda: mg.concat([x, x], 2), lambda: x.size(2), lambda: mg.cumsum(x, 5),
             lambda: mg.flip(x, 2), lambda: x.squeeze(3), lambda: mg.argmax(x, 2)]
    for call in calls:
        for error in (IndexError, ValueError):
            with pytest.raises(error, match="axis"):
                call()
    with pytest.raises(mg.AxisError, match="sum: axis 2 is out of range for a 2-d tensor"):
        x.sum(2)


def test_numpy_errors_that_cannot_be_rebuilt_keep_their_kind_and_name_the_operation():
    """NumPy's casting error takes five arguments: the restated error is its nearest base class
    that takes a message (a TypeError), names the operation and chains the original."""
    with pytest.raises(TypeError, match=r"add_: Cannot cast ufunc 'add'.*int64") as caught:
        mg.arange(3).add_(0.5)
    assert "Cannot cast" in str(
        caught.value.__cause__)                        # the original, chained

    class AddHalfInPlace(mg.Function):
        def forward(self, a):
            a = a.copy()
            a += 0.5                                   # NumPy refuses: float into int64
            return a

    with pytest.raises(TypeError, match=r"AddHalfInPlace: Cannot cast.*\(inputs: \(2,\) int64\)"):
        AddHalfInPlace.apply(mg.arange(2))
