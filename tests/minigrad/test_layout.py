"""Rearranging elements: pad, roll, flip, tril/triu, tile, repeat, diagonal, diag, unfold,
meshgrid, flatten/unflatten and einsum. Forward against NumPy, float64 gradients against finite
differences (0-d and size-1 shapes included), and the errors."""

import numpy as np
import pytest

import minigrad as mg

from .primitive_checks import check_primitive, leaf


def _numpy_unfold(a, axis, size, step):
    """Windows a[i·step : i·step + size] along axis, stacked, window axis last."""
    n = a.shape[axis]
    windows = [np.take(a, range(i, i + size), axis=axis) for i in range(0, n - size + 1, step)]
    return np.moveaxis(np.stack(windows, axis=axis), axis + 1, -1)


# name: (minigrad function, NumPy reference, input shape)
CASES = {
    "pad constant": (lambda x: mg.pad(x, ((1, 2), (0, 1)), constant_values=2.5),
                     lambda a: np.pad(a, ((1, 2), (0, 1)), constant_values=2.5), (2, 3)),
    "pad constant 1-d": (lambda x: mg.pad(x, 2), lambda a: np.pad(a, 2), (1,)),
    "pad 0-d": (lambda x: mg.pad(x, 1), lambda a: np.pad(a, 1), ()),
    "pad reflect": (lambda x: mg.pad(x, ((2, 1), (1, 3)), "reflect"),
                    lambda a: np.pad(a, ((2, 1), (1, 3)), "reflect"), (3, 3)),
    "pad reflect twice around": (lambda x: mg.pad(x, 5, "reflect"),
                                 lambda a: np.pad(a, 5, "reflect"), (3,)),
    "pad edge": (lambda x: mg.pad(x, (1, 2), "edge"), lambda a: np.pad(a, (1, 2), "edge"),
                 (2, 3)),
    "pad replicate of length 1": (lambda x: mg.pad(x, 2, "replicate"),
                                  lambda a: np.pad(a, 2, "edge"), (1,)),
    "pad symmetric": (lambda x: mg.pad(x, 4, "symmetric"),
                      lambda a: np.pad(a, 4, "symmetric"), (3,)),
    "pad wrap": (lambda x: mg.pad(x, ((0, 0), (2, 5)), "wrap"),
                 lambda a: np.pad(a, ((0, 0), (2, 5)), "wrap"), (2, 3)),
    "roll": (lambda x: mg.roll(x, 2, 1), lambda a: np.roll(a, 2, 1), (2, 3)),
    "roll two axes": (lambda x: x.roll((1, -1), (0, 1)),
                      lambda a: np.roll(a, (1, -1), (0, 1)), (2, 3)),
    "roll flattened": (lambda x: mg.roll(x, 4), lambda a: np.roll(a, 4), (2, 3)),
    "roll 0-d": (lambda x: mg.roll(x, 3), lambda a: np.roll(a, 3), ()),
    "roll (1,)": (lambda x: mg.roll(x, 1, 0), lambda a: np.roll(a, 1, 0), (1,)),
    "flip": (lambda x: mg.flip(x, 1), lambda a: np.flip(a, 1), (2, 3)),
    "flip all": (lambda x: x.flip(), lambda a: np.flip(a), (2, 1, 3)),
    "flip 0-d": (mg.flip, np.flip, ()),
    "flip (1,)": (lambda x: mg.flip(x, dims=(0,)), lambda a: np.flip(a, 0), (1,)),
    "tril": (mg.tril, np.tril, (3, 4)),
    "tril -1 batched": (lambda x: x.tril(-1), lambda a: np.tril(a, -1), (2, 3, 3)),
    "triu 1": (lambda x: mg.triu(x, diagonal=1), lambda a: np.triu(a, 1), (3, 4)),
    "triu (1, 1)": (mg.triu, np.triu, (1, 1)),
    "tile": (lambda x: mg.tile(x, (2, 2)), lambda a: np.tile(a, (2, 2)), (2, 3)),
    "tile more reps than axes": (lambda x: x.tile((2, 1, 3)), lambda a: np.tile(a, (2, 1, 3)),
                                 (3,)),
    "tile 0-d": (lambda x: mg.tile(x, 3), lambda a: np.tile(a, 3), ()),
    "repeat": (lambda x: mg.repeat(x, 2, axis=1), lambda a: np.repeat(a, 2, axis=1), (2, 3)),
    "repeat counts": (lambda x: x.repeat([1, 0, 3], axis=1),
                      lambda a: np.repeat(a, [1, 0, 3], axis=1), (2, 3)),
    "repeat flattened": (lambda x: mg.repeat(x, 3), lambda a: np.repeat(a, 3), (2, 2)),
    "repeat 0-d": (lambda x: mg.repeat(x, 2), lambda a: np.repeat(a, 2), ()),
    "repeat_interleave": (lambda x: x.repeat_interleave(2, dim=0),
                          lambda a: np.repeat(a, 2, axis=0), (1,)),
    "diagonal": (mg.diagonal, np.diagonal, (3, 4)),
    "diagonal offset axes": (lambda x: x.diagonal(1, 0, 2),
                             lambda a: np.diagonal(a, 1, 0, 2), (3, 2, 4)),
    "diagonal below": (lambda x: mg.diagonal(x, -1, dim1=1, dim2=0),
                       lambda a: np.diagonal(a, -1, 1, 0), (3, 4)),
    "diag of a vector": (lambda x: mg.diag(x, 1), lambda a: np.diag(a, 1), (3,)),
    "diag of (1,)": (mg.diag, np.diag, (1,)),
    "diag of a matrix": (lambda x: x.diag(-1), lambda a: np.diag(a, -1), (3, 3)),
    "unfold": (lambda x: x.unfold(1, 3, 2), lambda a: _numpy_unfold(a, 1, 3, 2), (2, 7)),
    "unfold overlapping": (lambda x: mg.unfold(x, 0, 2, 1), lambda a: _numpy_unfold(a, 0, 2, 1),
                           (4, 2)),
    "unfold (1,)": (lambda x: mg.unfold(x, 0, 1, 1), lambda a: _numpy_unfold(a, 0, 1, 1), (1,)),
    "flatten": (lambda x: mg.flatten(x, 1), lambda a: a.reshape(2, -1), (2, 3, 4)),
    "flatten middle": (lambda x: x.flatten(1, 2), lambda a: a.reshape(2, 12, 1), (2, 3, 4, 1)),
    "flatten 0-d": (mg.flatten, lambda a: a.reshape(1), ()),
    "unflatten": (lambda x: x.unflatten(1, (3, -1)), lambda a: a.reshape(2, 3, 4), (2, 12)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_rearrangement(name, device, rng):
    fn, reference, shape = CASES[name]
    check_primitive(fn, reference, [rng.standard_normal(shape)], device)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("shapes", [[(3,), (2,)], [(2,), (1,), (3,)], [(), (2,)]])
def test_meshgrid(shapes, indexing, device, rng):
    arrays = [rng.standard_normal(s) for s in shapes]
    for k in range(len(arrays)):          # each output against NumPy's
        check_primitive(lambda *xs: mg.meshgrid(*xs, indexing=indexing)[k],
                        lambda *a: np.meshgrid(*a, indexing=indexing)[k], arrays, device)


EINSUM = {  # subscripts: operand shapes
    "ij,jk->ik": [(2, 3), (3, 4)],
    "bqd,bkd->bqk": [(2, 3, 4), (2, 5, 4)],
    "i,i->": [(3,), (3,)],
    "i,j->ij": [(2,), (3,)],
    "ii->i": [(3, 3)],
    "ii": [(3, 3)],
    "iij->ji": [(2, 2, 3)],
    "ij->": [(2, 3)],
    "ij,jk": [(2, 3), (3, 2)],
    "ba": [(2, 3)],
    "...ij,...jk->...ik": [(2, 1, 2, 3), (4, 3, 2)],
    "i...->...": [(3, 2)],
    "...i,i": [(2, 3), (3,)],
    "ij,ij->ij": [(1, 3), (2, 3)],
    "ik,kj,jl->il": [(2, 3), (3, 1), (1, 2)],
    "ijk,k->i": [(2, 3, 4), (4,)],
    ",i->i": [(), (3,)],
    "i->": [(1,)],
}


@pytest.mark.parametrize("subscripts", list(EINSUM))
def test_einsum(subscripts, device, rng):
    arrays = [rng.standard_normal(s) for s in EINSUM[subscripts]]
    check_primitive(lambda *xs: mg.einsum(subscripts, *xs),
                    lambda *a: np.asarray(np.einsum(subscripts, *a)), arrays, device)


def test_einsum_sums_an_ellipsis_the_output_leaves_out_and_takes_a_list(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal(3)
    out = mg.einsum("...i->i", [mg.tensor(a)])
    np.testing.assert_allclose(out.numpy(), a.sum(0))
    assert mg.einsum("i,i", mg.tensor(b), b).shape == ()       # an array operand is lifted


def test_einsum_second_derivative_of_a_diagonal():
    """Σ_i (A_ii)² differentiated twice: ∂/∂A = 2 diag(A_ii) placed on the diagonal, and the
    second derivative along a direction V is 2·diag(V_ii)."""
    a = leaf(np.arange(9.0).reshape(3, 3), "cpu")
    (g,) = mg.grad((mg.einsum("ii->i", a) ** 2).sum(), a, create_graph=True)
    np.testing.assert_allclose(g.numpy(), np.diag(2 * np.diag(a.numpy())))
    v = np.arange(9.0).reshape(3, 3) + 1
    (h,) = mg.grad((g * mg.tensor(v)).sum(), a)
    np.testing.assert_allclose(h.numpy(), np.diag(2 * np.diag(v)))


def test_tile_and_repeat_follow_numpy_not_pytorch_repeat():
    x = mg.tensor([1.0, 2.0])
    assert x.repeat(2, axis=0).tolist() == [1.0, 1.0, 2.0, 2.0]     # NumPy's repeat
    assert mg.repeat(x, 2).tolist() == [1.0, 1.0, 2.0, 2.0]
    with pytest.raises(TypeError, match=r"repeat: x.repeat\(2\) means different things.*"
                                        r"x.tile\(\(2,\)\)"):
        x.repeat(2)                                                  # ambiguous: refused
    assert x.tile(2).tolist() == [1.0, 2.0, 1.0, 2.0]               # PyTorch's x.repeat(2)


def test_meshgrid_wants_indexing_where_numpy_and_pytorch_differ():
    gx, gy = mg.meshgrid(mg.arange(3), mg.arange(2), indexing="xy")    # NumPy's default
    assert gx.shape == gy.shape == (2, 3)
    assert mg.meshgrid(mg.arange(3), mg.arange(2), indexing="ij")[0].shape == (3, 2)
    with pytest.raises(TypeError, match='meshgrid: without indexing=.*indexing="ij"'):
        mg.meshgrid(mg.arange(3), mg.arange(2))
    (only,) = mg.meshgrid(mg.arange(3))                  # one tensor: both libraries agree
    assert only.tolist() == [0, 1, 2]


def test_pad_gradient_counts_each_copy():
    """Reflected and edge copies send their gradient back to the element they copy."""
    x = leaf([1.0, 2.0, 3.0], "cpu")
    mg.pad(x, (2, 2), "reflect").sum().backward()     # 3 2 | 1 2 3 | 2 1
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 3.0, 2.0])
    x.grad = None
    mg.pad(x, (2, 0), "edge").sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 1.0, 1.0])


BAD = [
    (lambda x: mg.pad(x, ((1, 2, 3),)), ValueError, r"pad.*\(2, 3\)"),
    (lambda x: mg.pad(x, -1), ValueError, "non-negative"),
    (lambda x: mg.pad(x, 1, "mirror"), ValueError, "unknown mode 'mirror'"),
    (lambda x: mg.pad(x, 1.5), TypeError, "ints"),
    (lambda x: mg.pad(x[:, :0], 1, "reflect"), ValueError, "length 0"),
    (lambda x: mg.roll(x, 1, 2), mg.AxisError, "roll: axis 2"),
    (lambda x: mg.roll(x, (1, 2), 0), ValueError, "2 shifts for 1 axes"),
    (lambda x: mg.roll(x, 1, axis=0, dims=0), TypeError, "roll"),
    (lambda x: mg.flip(x, 3), IndexError, "flip"),
    (lambda x: mg.tril(x[0]), ValueError, r"tril.*\(3,\)"),
    (lambda x: mg.tile(x, -1), ValueError, "tile"),
    (lambda x: mg.repeat(x, [1, 2], axis=1), ValueError, "2 repeat counts for 3"),
    (lambda x: mg.repeat(x, -1), ValueError, "non-negative"),
    (lambda x: mg.diagonal(x, 0, 1, -1), ValueError, "must differ"),
    (lambda x: mg.diag(x[0, 0]), ValueError, r"diag.*\(\)"),
    (lambda x: mg.unfold(x, 1, 4, 1), ValueError, "size 4 exceeds the length 3"),
    (lambda x: mg.unfold(x, 1, 2, 0), ValueError, "step"),
    (lambda x: mg.flatten(x, 1, 0), ValueError, "start_dim"),
    (lambda x: mg.unflatten(x, 1, (2, 2)), ValueError, r"\(2, 2\).*3"),
    (lambda x: mg.meshgrid(x, indexing="xz"), ValueError, "indexing"),
    (lambda x: mg.einsum("ij,jk", x, x), ValueError, "lengths 3 and 2"),
    (lambda x: mg.einsum("ijk", x), ValueError, "3 letters.*2 axes"),
    (lambda x: mg.einsum("ij->ii", x), ValueError, "output letter"),
    (lambda x: mg.einsum("ij->k", x), ValueError, "output letter 'k'"),
    (lambda x: mg.einsum("ij", x, x), ValueError, "1 operand"),
    (lambda x: mg.einsum("i!", x), ValueError, "letters"),
]


@pytest.mark.parametrize("call, error, match", BAD)
def test_bad_input_raises_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call(mg.ones(2, 3))


@pytest.mark.parametrize("k", [-1, 0, 2])
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float32])
@pytest.mark.parametrize("fn, reference", [(mg.tril, np.tril), (mg.triu, np.triu)])
@pytest.mark.parametrize("shape", [(3, 4), (2, 1, 1), (2, 3, 3)])
def test_triangles_keep_the_dtype(fn, reference, dtype, k, shape, rng):
    v = (rng.standard_normal(shape) * 3).astype(dtype)
    out = fn(mg.tensor(v), k)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out.numpy(), reference(v, k))


@pytest.mark.parametrize("shape", [(), (1,)])
def test_triangles_need_two_axes(shape):
    for fn in (mg.tril, mg.triu):
        with pytest.raises(ValueError, match=fn.__name__):
            fn(mg.zeros(shape))


@pytest.mark.parametrize("axis", [(0, 0), (1, -1)])
def test_flip_refuses_an_axis_named_twice(axis):
    # flipping twice would undo the flip silently; NumPy and PyTorch refuse it
    with pytest.raises(ValueError, match=r"flip: axis \(\d, \d\) names an axis twice"):
        mg.flip(mg.zeros((3, 4)), axis)
