"""matmul on every device: 1-D and 2-D operands, batches and broadcast batch dimensions.
Forward against a NumPy reference written as explicit sums, backward against finite
differences."""

import re

import numpy as np
import pytest

import minigrad as mg

from .primitive_checks import check_primitive, leaf


def _matmul_reference(a, b):
    """C[..., i, j] = Σ_k A[..., i, k] B[..., k, j], with 1-D operands promoted as NumPy does
    (a row for a, a column for b) and the promoted axis dropped again."""
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    c = (a2[..., :, :, None] * b2[..., None, :, :]).sum(axis=-2)
    if a.ndim == 1:
        c = c[..., 0, :]
    if b.ndim == 1:
        c = c[..., 0]
    return c


SHAPES = [((3,), (3,)),                 # inner product, a 0-d result
          ((3,), (3, 2)),               # row vector times matrix
          ((2, 3), (3,)),               # matrix times column vector
          ((2, 3), (3, 4)),
          ((1, 3), (3, 1)),
          ((4, 2, 3), (3, 2)),          # a batch times one matrix
          ((2, 3, 2, 3), (3, 4)),       # rows under two leading axes times one matrix
          ((2, 0, 3), (3, 2)),          # no rows at all
          ((2, 3, 0), (0, 4)),          # an empty inner dimension: a product of zeros
          ((2, 3, 4), (4, 0)),          # no columns
          ((2, 3), (4, 3, 2)),          # one matrix times a batch
          ((2, 1, 2, 3), (3, 3, 2)),    # batch dims broadcast both ways: (2, 1) with (3,)
          ((2, 2, 3), (3,)),            # batched matrix times a vector
          ((3,), (2, 3, 2))]            # a vector times batched matrices


@pytest.mark.parametrize("shape_a, shape_b", SHAPES)
def test_matmul(shape_a, shape_b, device, rng):
    arrays = [rng.standard_normal(shape_a), rng.standard_normal(shape_b)]
    check_primitive(lambda a, b: a @ b, _matmul_reference, arrays, device)


def test_matmul_spellings_agree(device, rng):
    a = mg.tensor(rng.standard_normal((2, 3)), device=device)
    b = mg.tensor(rng.standard_normal((3, 4)), device=device)
    expected = (a @ b).numpy()
    np.testing.assert_array_equal(mg.matmul(a, b).numpy(), expected)
    np.testing.assert_array_equal(a.matmul(b).numpy(), expected)


def test_matmul_with_host_array_on_either_side():
    a = np.arange(6.0).reshape(2, 3)
    b = mg.tensor(np.ones((3, 2)), requires_grad=True)
    out = a @ b
    assert isinstance(out, mg.Tensor)
    np.testing.assert_allclose(out.numpy(), _matmul_reference(a, np.ones((3, 2))))
    out.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), np.repeat(a.sum(axis=0)[:, None], 2, axis=1))


@pytest.mark.parametrize("shape_a, shape_b, reason", [
    ((2, 3), (4, 2), "inner dimensions 3 and 4 differ"),
    ((3,), (4,), "inner dimensions 3 and 4 differ"),
    ((2, 2, 3), (3, 3, 2), "batch dimensions do not broadcast"),
    ((), (3,), "at least one dimension"),
])
def test_matmul_shape_errors_name_both_shapes(shape_a, shape_b, reason, device):
    a, b = mg.ones(shape_a, device=device), mg.ones(shape_b, device=device)
    with pytest.raises(ValueError, match=rf"matmul: .*{reason}"):
        a @ b
    with pytest.raises(ValueError, match=re.escape(f"{tuple(shape_a)} and {tuple(shape_b)}")):
        mg.matmul(a, b)


def test_batch_times_matrix_of_another_dtype(rng):
    """(..., K) @ (K, N) where the operands' dtypes differ: each gradient comes back in its
    operand's dtype, equal to the float64 reference Σ over all leading positions."""
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    b = rng.standard_normal((5, 2))
    g = rng.standard_normal((3, 4, 2))
    ta, tb = mg.tensor(a, requires_grad=True), mg.tensor(b, requires_grad=True)
    out = ta @ tb
    assert out.dtype == np.float64
    out.backward(mg.tensor(g))
    assert ta.grad.dtype == np.float32 and tb.grad.dtype == np.float64
    np.testing.assert_allclose(ta.grad.numpy(), g @ b.T, rtol=1e-6)
    np.testing.assert_allclose(tb.grad.numpy(), np.einsum("tik,tin->kn", a, g), rtol=1e-6)


# -- dot and trace ------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 5])
def test_dot_of_two_vectors(n, device, rng):
    """torch.dot: Σ a_i b_i, a 0-d tensor (0 for empty vectors); gradient b to a and a to b."""
    check_primitive(mg.dot, np.dot, [rng.standard_normal(n), rng.standard_normal(n)], device)
    a = mg.tensor(rng.standard_normal(n), device=device)
    np.testing.assert_array_equal(a.dot(a).numpy(), mg.dot(a, a).numpy())


@pytest.mark.parametrize("shape_a, shape_b", [((3,), (4,)), ((2, 3), (3,)), ((), ()),
                                              ((3,), (3, 1))])
def test_dot_refuses_anything_but_two_vectors_of_one_length(shape_a, shape_b):
    with pytest.raises(ValueError, match=r"dot: expects two 1-D tensors of the same length, "
                                         rf"got shapes {re.escape(str(shape_a))}"):
        mg.dot(mg.zeros(shape_a), mg.zeros(shape_b))


@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4), (4, 2), (0, 3)])
def test_trace_of_a_matrix(shape, device, rng):
    """Σ x[i, i] over the shorter side, square or not; the gradient is the identity's pattern."""
    check_primitive(mg.trace, np.trace, [rng.standard_normal(shape)], device)
    x = leaf(rng.standard_normal(shape), device)
    x.trace().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.eye(*shape))


@pytest.mark.parametrize("shape", [(), (1,), (2, 2, 2)])
def test_trace_refuses_other_than_two_dimensions(shape):
    with pytest.raises(ValueError, match=rf"trace: expects a 2-D tensor, got shape "
                                         rf"{re.escape(str(shape))}"):
        mg.trace(mg.zeros(shape))


def test_dot_and_trace_match_live_torch(rng):
    torch = pytest.importorskip("torch")
    a, b, m = rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal((3, 5))
    np.testing.assert_allclose(mg.dot(mg.tensor(a), mg.tensor(b)).numpy(),
                               torch.dot(torch.tensor(a), torch.tensor(b)).numpy(), rtol=1e-14)
    np.testing.assert_allclose(mg.trace(mg.tensor(m)).numpy(),
                               torch.trace(torch.tensor(m)).numpy(), rtol=1e-14)
