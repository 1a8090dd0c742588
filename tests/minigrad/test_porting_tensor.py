"""Snippets written for PyTorch 2.x, run on minigrad: each gives PyTorch's numbers (stored below,
printed by torch 2.13.0 when this file was written) or raises saying what to write. Then the new
PyTorch names: gradchecks at shapes () and (1,) and forward values against plain NumPy."""

import math

import numpy as np
import pytest

import minigrad as mg
import nn
import nn.functional as F

X = [[1.0, 5.0, 3.0], [7.0, 2.0, 7.0]]


def _x(requires_grad=False):
    return mg.tensor(np.array(X), requires_grad=requires_grad)


def close(t, expected):
    np.testing.assert_allclose(np.asarray(t.tolist() if hasattr(t, "tolist") else t), expected,
                               rtol=1e-12, atol=1e-12)


# -- snippets, with PyTorch's stored outputs ---------------------------------------------------

def test_max_with_dim_is_values_and_indices_and_its_gradient_goes_to_the_index():
    x = _x(True)
    values, indices = x.max(dim=1)
    close(values, [5.0, 7.0])
    assert indices.tolist() == [1, 0] and indices.dtype == np.int64
    r = x.max(dim=1)
    assert r.values is r[0] and r.indices is r[1]
    r.values.sum().backward()
    close(x.grad, [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])      # PyTorch: the first maximum


def test_min_with_keepdim():
    v, i = _x().min(0, keepdim=True)
    close(v, [[1.0, 2.0, 3.0]])
    assert i.tolist() == [[0, 1, 0]]


def test_sum_with_keepdim():
    close(_x().sum(1, keepdim=True), [[9.0], [16.0]])


def test_split_with_dim_cuts_parts_of_a_size():
    parts = mg.arange(10.0).reshape(5, 2).split(2, dim=0)
    assert [p.shape for p in parts] == [(2, 2), (2, 2), (1, 2)]
    assert [p.shape for p in mg.arange(10.0).reshape(5, 2).split(2)] == [(2, 2), (2, 2), (1, 2)]


def test_std_and_var_with_dim_use_correction_one():
    close(_x().std(dim=0), [4.242640687119285, 2.1213203435596424, 2.8284271247461903])
    close(_x().var(dim=1), [4.0, 8.333333333333334])


def test_chunk_and_unbind():
    assert [c.tolist() for c in mg.arange(5.0).chunk(3)] == [[0.0, 1.0], [2.0, 3.0], [4.0]]
    assert [u.tolist() for u in _x().unbind(1)] == [[1.0, 7.0], [5.0, 2.0], [3.0, 7.0]]


def test_permute_and_expand():
    assert mg.arange(6.0).reshape(1, 2, 3).permute(2, 0, 1).shape == (3, 1, 2)
    close(mg.tensor([[1.0], [2.0]]).expand(-1, 3), [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])


def test_norms():
    x = _x()
    assert x.norm().item() == pytest.approx(11.704699910719626, rel=1e-14)
    close(mg.linalg.vector_norm(x, dim=1), [5.916079783099616, 10.099504938362077])
    assert mg.linalg.vector_norm(x, ord=1).item() == 25.0
    close(F.normalize(x, dim=1), [[0.1690308509457033, 0.8451542547285166, 0.50709255283711],
                                  [0.6931032800836721, 0.19802950859533489, 0.6931032800836721]])


def test_clamp_with_tensor_bounds():
    out = _x().clamp(min=mg.tensor(2.0, dtype="float64"),
                     max=mg.tensor([3.0, 4.0, 6.0], dtype="float64"))
    close(out, [[2.0, 4.0, 3.0], [3.0, 2.0, 6.0]])


def test_one_hot_is_int64():
    out = F.one_hot(mg.tensor([0, 2]), 3)
    assert out.tolist() == [[1, 0, 0], [0, 0, 1]] and out.dtype == mg.int64


def test_outer_addmm_hstack_vstack():
    close(mg.outer(mg.tensor([1.0, 2.0]), mg.tensor([3.0, 4.0, 5.0])),
          [[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]])
    close(mg.addmm(mg.tensor([1.0, 1.0]), mg.tensor([[1.0, 2.0], [3.0, 4.0]]),
                   mg.tensor([[1.0, 0.0], [0.0, 1.0]]), beta=0.5, alpha=2.0),
          [[2.5, 4.5], [6.5, 8.5]])
    close(mg.hstack([mg.ones(2), mg.zeros(1)]), [1.0, 1.0, 0.0])
    close(mg.vstack([mg.ones(2), mg.zeros(2)]), [[1.0, 1.0], [0.0, 0.0]])


def test_nan_to_num_logit_reciprocal():
    close(mg.nan_to_num(mg.tensor([math.nan, 1.0, math.inf]), nan=0.5, posinf=9.0),
          [0.5, 1.0, 9.0])
    close(mg.logit(mg.tensor([0.25, 0.5, 0.9], dtype="float64")),
          [-1.0986122886681098, 0.0, 2.1972245773362196])
    close(mg.logit(mg.tensor([0.0], dtype="float64"), eps=1e-3), [-6.906754778648554])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")    # NumPy's log of a negative number
def test_logit_outside_the_unit_interval_is_nan_with_a_nan_gradient():
    """PyTorch's: where the value is NaN (x < 0 or x > 1), so is the gradient (1/(x(1 − x))
    alone would give a finite slope there); at 0 and 1 the value and slope are infinite."""
    x = mg.tensor([-0.5, 1.5, 0.0, 1.0, 0.25], dtype="float64", requires_grad=True)
    y = mg.logit(x)
    (g,) = mg.grad(y.sum(), [x])
    np.testing.assert_array_equal(y.numpy()[:4], [math.nan, math.nan, -math.inf, math.inf])
    np.testing.assert_array_equal(g.numpy(), [math.nan, math.nan, math.inf, math.inf,
                                              1 / (0.25 * 0.75)])
    (g,) = mg.grad(mg.logit(x, eps=0.1).sum(), [x])       # clamped first: 0 outside [ε, 1 − ε]
    np.testing.assert_array_equal(g.numpy(), [0, 0, 0, 0, 1 / (0.25 * 0.75)])
    close(mg.tensor([2.0, 4.0]).reciprocal(), [0.5, 0.25])


def test_glu_and_rms_norm():
    close(F.glu(_x().reshape(3, 2), dim=1),
          [[0.9933071490757153], [2.997266846416798], [1.9981778976111988]])
    expected = [[0.29277000933727415, 1.4638500466863706, 0.8783100280118225],
                [1.2004900783432961, 0.34299716524094176, 1.2004900783432961]]
    close(F.rms_norm(_x(), (3,), eps=1e-6), expected)
    layer = nn.RMSNorm(3, eps=1e-6, dtype="float64")
    close(layer(_x()), expected)


def test_flatten_and_dtype_conversions():
    assert nn.Flatten()(mg.zeros(2, 3, 4)).shape == (2, 12)
    assert mg.tensor([1.7, -1.7]).long().tolist() == [1, -1]
    x = _x()
    assert x.to(mg.float32).dtype == np.float32 and x.float().dtype == mg.float32
    assert x.to("cpu", "float32").dtype == np.float32 and x.int().dtype == mg.int32
    assert x.bool().dtype == mg.bool and x.double() is x
    assert x.clone() is not x and x.contiguous() is x


def test_from_numpy_shares_memory():
    a = np.zeros(3)
    t = mg.from_numpy(a)
    a[1] = 2.0
    assert t.tolist() == [0.0, 2.0, 0.0]


# -- ambiguous calls raise, saying what to write -----------------------------------------------

def test_a_bare_positional_axis_on_max_and_min_raises():
    with pytest.raises(TypeError, match=r"max\(axis=1\) for the values.*max\(dim=1\)"):
        _x().max(1)
    with pytest.raises(TypeError, match=r"min: x.min\(0\) is ambiguous"):
        mg.min(_x(), 0)
    close(_x().max(axis=1), [5.0, 7.0])                  # NumPy's spelling: the values
    close(_x().max(-1, keepdims=True), [[5.0], [7.0]])


def test_sort_with_dim_is_values_and_indices():
    values, indices = _x().sort(dim=1, stable=True)
    close(values, [[1.0, 3.0, 5.0], [2.0, 7.0, 7.0]])
    assert indices.tolist() == [[0, 2, 1], [1, 0, 2]]
    values, indices = mg.sort(_x(), 0, descending=True)
    close(values, [[7.0, 5.0, 7.0], [1.0, 2.0, 3.0]])
    assert indices.tolist() == [[1, 0, 1], [0, 1, 0]]
    with pytest.raises(TypeError, match=r"sort\(x, 1\) is ambiguous"):
        _x().sort(1)


def test_max_and_min_of_two_tensors_are_elementwise():
    x, y = _x(True), mg.tensor([7.0, 2.0, 1.0], requires_grad=True)
    close(mg.max(x, y), [[7.0, 5.0, 3.0], [7.0, 2.0, 7.0]])
    close(x.min(y), [[1.0, 2.0, 1.0], [7.0, 2.0, 1.0]])
    x.max(y).sum().backward()                             # ties (7, 7) and (2, 2): ½ each
    close(x.grad, [[0.0, 1.0, 1.0], [0.5, 0.5, 1.0]])
    close(y.grad, [1.5, 0.5, 0.0])
    with pytest.raises(TypeError, match="max: max\\(x, other\\) with a Tensor"):
        mg.max(x, y, dim=0)


def test_var_and_std_with_dim_none_written_out_are_pytorchs():
    """`x.std(dim=None)` is PyTorch's spelling (correction 1 over all axes), as a caller that
    passes its own `dim` through writes it; `x.std()` stays NumPy's."""
    a = np.array(X)
    close(_x().std(dim=None), a.std(ddof=1))
    close(mg.var_mean(_x(), dim=None)[0], a.var(ddof=1))
    close(mg.std_mean(_x(), dim=None, keepdim=True)[0], a.std(ddof=1, keepdims=True))
    close(_x().std(), a.std())
    with pytest.raises(TypeError, match="var: got axis=0 and dim=None"):
        _x().var(axis=0, dim=None)
    for shape in [(), (1,)]:                              # one element: 0/0 with correction 1
        with pytest.warns(RuntimeWarning, match="no degrees of freedom"):
            assert np.isnan(mg.tensor(np.ones(shape)).var(dim=None).item())


def test_var_and_std_take_unbiased():
    a = np.array(X)
    close(_x().var(unbiased=True), a.var(ddof=1))
    close(_x().std(1, unbiased=False, keepdim=True), a.std(1, ddof=0, keepdims=True))
    close(mg.var_mean(_x(), dim=0, unbiased=False)[0], a.var(0))
    with pytest.raises(TypeError, match="var: got unbiased=True with ddof=1"):
        _x().var(ddof=1, unbiased=True)


def test_transpose_of_a_2d_tensor_by_its_own_order_raises():
    """NumPy reads x.transpose(0, 1) of a matrix as the identity permutation, PyTorch as the
    swap: the one call whose two readings differ raises; the others agree."""
    a = np.array(X)
    for d0, d1 in [(0, 1), (-2, -1), (0, -1), (-2, 1)]:
        with pytest.raises(TypeError, match=rf"transpose\({d0}, {d1}\) of a 2-D tensor is "
                                            rf"ambiguous.*x\.T"):
            _x().transpose(d0, d1)
    close(_x().transpose(1, 0), a.T)                      # both libraries: the swap
    close(_x().transpose(-1, 0), a.T)
    close(_x().transpose((0, 1)), a)                      # a tuple is NumPy's alone
    close(mg.transpose(_x(), (1, 0)), a.T)


def test_augmented_assignment_changes_the_tensor_in_place():
    """`p -= lr * p.grad` under no_grad is PyTorch's hand-written SGD step: the parameter
    itself changes (a rebinding would leave the model as it was)."""
    lin = nn.Linear(3, 1)
    lin.weight.data[...] = 1.0
    (lin(mg.ones(4, 3)) ** 2).sum().backward()
    expected = lin.weight.numpy() - 0.1 * lin.weight.grad.numpy()
    with mg.no_grad():
        for p in lin.parameters():
            p -= 0.1 * p.grad
    close(lin.weight, expected)
    x = _x()
    row = x[0]                                            # a view of x's first row
    row += 1.0
    row *= 2.0
    row /= 4.0
    row -= 0.5
    close(x, [[0.5, 2.5, 1.5], X[1]])                     # PyTorch's: written through
    leaf = _x(True)
    with pytest.raises(RuntimeError, match="add_: in-place change of a tensor that requires"):
        leaf += 1.0                                       # PyTorch refuses a leaf too
    h = leaf * 2.0
    alias = h
    h += 1.0                                              # recorded: the out-of-place result
    close(h, 2 * np.array(X) + 1)
    close(alias, 2 * np.array(X))                         # the old tensor, as it was
    h.sum().backward()
    close(leaf.grad, np.full((2, 3), 2.0))
    ints = mg.tensor([1, 2])
    with pytest.raises(TypeError, match="add_: .*int64"):
        ints += 0.5                                       # as PyTorch: no float into ints


def test_full_takes_the_dtype_of_its_fill():
    assert mg.full((2,), 7).dtype == np.int64             # NumPy and PyTorch: int64
    assert mg.full((), True).dtype == np.bool_
    assert mg.full((1,), 7.5).dtype == np.float32         # PyTorch's default float
    assert mg.full(2, 7, dtype="float64").dtype == np.float64
    assert mg.full((2, 2), 3).tolist() == [[3, 3], [3, 3]]


def test_calls_numpy_and_pytorch_read_differently_raise():
    with pytest.raises(TypeError, match=r"triu_indices\(3, 3, 1\) is NumPy's \(n, k, m\)"):
        mg.triu_indices(3, 3, 1)
    with pytest.raises(TypeError, match="tril_indices"):
        mg.tril_indices(3, 3)
    rows, cols = mg.triu_indices(3, k=1)
    assert rows.tolist() == [0, 0, 1] and cols.tolist() == [1, 2, 2]   # torch: (3, 3, 1)
    with pytest.raises(TypeError, match="var: got 1 positional argument.*unbiased"):
        _x().var(0, True)                                 # PyTorch's unbiased, NumPy's dtype
    with pytest.raises(TypeError, match="std_mean: got 2 positional"):
        mg.std_mean(_x(), 1, False, 1)
    close(_x().std(1, keepdims=True), np.array(X).std(1, keepdims=True))


def test_matrix_norms_minigrad_lacks_raise_and_vector_norms_match():
    a = np.array(X)
    close(mg.linalg.norm(_x()), np.linalg.norm(a))        # Frobenius, as both libraries
    close(mg.linalg.norm(_x(), "fro"), np.linalg.norm(a, "fro"))
    close(mg.linalg.norm(_x(), 1, dim=1), np.linalg.norm(a, 1, axis=1))
    close(mg.linalg.norm(mg.tensor(a[0]), 3), np.linalg.norm(a[0], 3))
    for ord in (2, 1, math.inf, "nuc"):                   # matrix norms in NumPy and PyTorch
        with pytest.raises(NotImplementedError, match="linalg.norm: ord=.* matrix norm"):
            mg.linalg.norm(_x(), ord)
    close(_x().norm(p="fro"), np.linalg.norm(a))


def test_clip_takes_min_and_max_keywords():
    close(_x().clip(min=2.0), np.clip(X, 2.0, None))
    close(mg.clip(_x(), max=3.0), np.clip(X, None, 3.0))
    with pytest.raises(TypeError, match="clip: got lo/hi and min=/max= together"):
        mg.clip(_x(), 1.0, max=3.0)


def test_pytorch_aliases_forward_and_gradient(rng):
    """t, mT, mm, bmm, amax/amin, expand_as, view_as, type_as, clamp_min/max, where, neg, pow,
    eq/ne/lt/le/gt/ge and full_like: the NumPy computation each names, and its gradient."""
    a = rng.standard_normal((2, 3))
    b = rng.standard_normal((3, 4))
    x, y = mg.tensor(a, requires_grad=True), mg.tensor(b, requires_grad=True)
    close(x.t(), a.T)
    close(x.mT, a.T)
    assert mg.tensor(rng.standard_normal((2, 2, 3))).mT.shape == (2, 3, 2)
    close(x.mm(y), a @ b)
    close(mg.bmm(x[None], y[None]), (a @ b)[None])
    assert mg.gradcheck(lambda p, q: mg.mm(p, q), [x, y])
    assert mg.gradcheck(lambda p, q: p[None].bmm(q[None]), [x, y])
    close(x.amax(1), a.max(1))
    close(mg.amin(x, dim=0, keepdim=True), a.min(0, keepdims=True))
    close(mg.amax(x, dim=()), a.max())                    # PyTorch's dim=(): every axis
    assert mg.gradcheck(lambda p: p.amax(axis=1), [x])
    close(x[0].expand_as(x), np.broadcast_to(a[0], (2, 3)))
    close(x.view_as(mg.zeros(3, 2)), a.reshape(3, 2))
    close(x.reshape_as(mg.zeros(6)), a.reshape(6))
    assert x.type_as(mg.tensor([1], dtype="int64")).dtype == np.int64
    close(x.clamp_min(0.0), np.maximum(a, 0.0))
    close(x.clamp_max(0.0), np.minimum(a, 0.0))
    close(x.where(x > 0, 0.0), np.where(a > 0, a, 0.0))
    close(x.neg(), -a)
    close(x.pow(2), a ** 2)
    for name, op in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                     ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)):
        out = getattr(x, name)(0.0)
        assert out.dtype == np.bool_ and out.tolist() == op(a, 0.0).tolist()
    filled = mg.full_like(x, 3)
    assert filled.dtype == np.float64 and filled.tolist() == [[3.0] * 3] * 2
    for shape in [(), (1,)]:                              # 0-d and one element
        s = mg.tensor(rng.standard_normal(shape), requires_grad=True)
        close(s.t(), s.numpy())
        close(s.amax(), s.numpy().max())
        assert mg.gradcheck(lambda p: p.clamp_min(-0.5) * p.neg(), [s])


def test_pytorch_aliases_refuse_the_wrong_ranks():
    with pytest.raises(ValueError, match=r"mm: takes two matrices, got shapes \(2, 3\) and"):
        mg.mm(_x(), mg.ones(3))
    with pytest.raises(ValueError, match="bmm: takes two"):
        mg.bmm(_x()[None], mg.ones(2, 3, 1))
    with pytest.raises(ValueError, match="t: takes a tensor of at most 2 axes"):
        mg.ones(2, 2, 2).t()
    with pytest.raises(ValueError, match="mT: needs at least 2 axes"):
        mg.ones(3).mT


def test_repeat_without_an_axis_raises():
    with pytest.raises(TypeError, match=r"x.tile\(\(2, 1\)\) for PyTorch's"):
        _x().repeat(2, 1)
    close(_x().tile((2, 1)), X + X)                       # what PyTorch's x.repeat(2, 1) gives


def test_numpy_spellings_keep_numpy_meanings():
    a = np.array(X)
    close(_x().std(axis=0), a.std(axis=0))
    close(_x().std(), a.std())
    assert [p.shape for p in mg.split(_x(), 3, axis=1)] == [(2, 1)] * 3


def test_inplace_float_into_ints_names_the_operation():
    with pytest.raises(TypeError, match="add_: Cannot cast"):
        mg.arange(3).add_(0.5)
    with pytest.raises(TypeError, match="CrossEntropy: Cannot cast"):
        F.cross_entropy(mg.tensor([[1, 2, 3]]), mg.tensor([0]))


# -- gradients of the new names, at () and (1,) and a general shape ----------------------------

SHAPES = [(), (1,), (2, 3)]

UNARY = {
    "clone": (mg.clone, lambda a: a),
    "reciprocal": (mg.reciprocal, lambda a: 1 / a),
    "nan_to_num": (mg.nan_to_num, lambda a: a),
    "logit": (lambda t: mg.logit(mg.sigmoid(t)), lambda a: a),
    "norm": (lambda t: t.norm(), lambda a: np.sqrt((a * a).sum())),
    "norm1": (lambda t: mg.vector_norm(t, 1), lambda a: np.abs(a).sum()),
    "clamp": (lambda t: t.clamp(min=-0.5, max=mg.tensor(0.8, dtype="float64")),
              lambda a: np.clip(a, -0.5, 0.8)),
    "expand": (lambda t: t.expand(2, *t.shape), lambda a: np.broadcast_to(a, (2,) + a.shape)),
    "permute": (lambda t: t.permute(*reversed(range(t.ndim))), np.transpose),
    "unbind": (lambda t: mg.stack(t.reshape(-1).unbind()[::-1]), lambda a: a.reshape(-1)[::-1]),
    "chunk": (lambda t: mg.cat(t.reshape(-1).chunk(2)[::-1]),
              lambda a: np.concatenate([a.reshape(-1)[-(a.size // 2):],
                                        a.reshape(-1)[:a.size - a.size // 2]])
              if a.size > 1 else a.reshape(-1)),
    "outer": (lambda t: mg.outer(t.reshape(-1), t.reshape(-1)),
              lambda a: np.outer(a, a)),
    "hstack": (lambda t: mg.hstack([t, t]), lambda a: np.hstack([a, a])),
    "vstack": (lambda t: mg.vstack([t, t]), lambda a: np.vstack([a, a])),
    "rms_norm": (lambda t: F.rms_norm(t, t.shape[-1:]) if t.ndim else t,
                 lambda a: a / np.sqrt((a * a).mean(-1, keepdims=True) + np.finfo(float).eps)
                 if a.ndim else a),
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", list(UNARY))
def test_new_names_forward_and_gradient(name, shape, rng):
    fn, reference = UNARY[name]
    a = rng.uniform(0.3, 0.9, shape) * rng.choice([-1.0, 1.0], shape)
    if name in ("reciprocal", "norm"):
        a = np.abs(a) + 0.2
    if name == "chunk" and a.size % 2 and a.size > 1:
        pytest.skip("odd length")
    x = mg.tensor(a, requires_grad=True)
    np.testing.assert_allclose(fn(x).numpy(), reference(a), rtol=1e-12, atol=1e-12)
    assert mg.gradcheck(fn, [x])


def test_glu_addmm_normalize_gradients(rng):
    x = mg.tensor(rng.standard_normal((2, 4)), requires_grad=True)
    a, b = x.numpy()[:, :2], x.numpy()[:, 2:]
    np.testing.assert_allclose(F.glu(x).numpy(), a / (1 + np.exp(-b)), rtol=1e-12)
    assert mg.gradcheck(lambda t: F.glu(t), [x])
    assert mg.gradcheck(lambda t: F.normalize(t, dim=1), [x])
    m = mg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    c = mg.tensor(rng.standard_normal((1,)), requires_grad=True)
    np.testing.assert_allclose(mg.addmm(c, x, m, beta=0.5).numpy(),
                               0.5 * c.numpy() + x.numpy() @ m.numpy(), rtol=1e-12)
    assert mg.gradcheck(lambda p, q, r: mg.addmm(p, q, r, beta=0.5, alpha=2.0), [c, x, m])


def test_the_norm_of_zero_has_gradient_zero():
    z = mg.zeros(3, dtype="float64", requires_grad=True)
    z.norm().backward()
    assert z.grad.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("p", [3.0, 1.5, 0.5])
@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
def test_p_norms_forward_gradient_and_their_kinks(p, shape, rng):
    """(Σ|x|^p)^(1/p) for another p: NumPy's value, gradcheck away from kinks, and at the zero
    vector (and, for p < 1, at a zero element) gradient 0, PyTorch's, where the composed
    formula gave inf·0 = NaN."""
    a = rng.uniform(0.3, 1.0, shape) * rng.choice([-1.0, 1.0], shape)
    x = mg.tensor(a, requires_grad=True)
    close(mg.linalg.vector_norm(x, p), np.sum(np.abs(a) ** p) ** (1 / p))
    assert mg.gradcheck(lambda t: mg.linalg.vector_norm(t, p, -1 if t.ndim else None), [x])
    zero = mg.zeros(shape, dtype="float64", requires_grad=True)
    mg.linalg.vector_norm(zero, p).backward()
    assert not np.isnan(zero.grad.numpy()).any() and (zero.grad.numpy() == 0).all()
    rows = mg.tensor(np.array([[0.0, 0.0], [3.0, 4.0]]), requires_grad=True)
    F.normalize(rows, p=p, dim=1).sum().backward()        # a zero row (padding) among others
    assert np.isfinite(rows.grad.numpy()).all()
    if p < 1:                                             # a zero element of a nonzero vector
        v = mg.tensor(np.array([0.0, 1.0, 2.0]), requires_grad=True)
        mg.linalg.vector_norm(v, p).backward()
        n = np.sum(np.array([1.0, 2.0]) ** p) ** (1 / p)
        close(v.grad, [0.0, (1.0 / n) ** (p - 1), (2.0 / n) ** (p - 1)])


def test_against_installed_torch():
    torch = pytest.importorskip("torch")
    a = np.array(X)
    t, x = torch.tensor(a), _x()
    np.testing.assert_allclose(x.max(dim=0).values.numpy(), t.max(dim=0).values.numpy())
    np.testing.assert_array_equal(x.min(dim=1).indices.numpy(), t.min(dim=1).indices.numpy())
    np.testing.assert_allclose(x.std(dim=1, keepdim=True).numpy(),
                               t.std(dim=1, keepdim=True).numpy())
    for ours, theirs in zip(x.split([1, 2], dim=1), t.split([1, 2], dim=1)):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    for ours, theirs in zip(x.sort(dim=1, stable=True), t.sort(dim=1, stable=True)):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    other = torch.tensor([7.0, 2.0, 1.0], dtype=torch.float64)
    np.testing.assert_array_equal(x.max(mg.tensor(other.numpy())).numpy(),
                                  t.max(other).numpy())
    np.testing.assert_allclose(x.var(1, unbiased=False).numpy(), t.var(1, unbiased=False).numpy())
    np.testing.assert_array_equal(x.transpose(1, 0).numpy(), t.transpose(1, 0).numpy())
    assert mg.full((2,), 7).dtype == np.dtype(str(torch.full((2,), 7).dtype).split(".")[1])
    np.testing.assert_array_equal(mg.stack(mg.tril_indices(3, k=0, m=4)).numpy(),
                                  torch.tril_indices(3, 4, 0).numpy())
    np.testing.assert_array_equal(x.nonzero(as_tuple=False).numpy(), t.nonzero().numpy())
    for ours, theirs in ((x.t(), t.t()), (x.mT, t.mT), (x.mm(x.t()), t.mm(t.t())),
                         (mg.amax(x, dim=()), torch.amax(t, dim=())), (x.amin(1), t.amin(1)),
                         (x.clamp_min(4.0), t.clamp_min(4.0)), (x.where(x > 2, 0.0),
                                                                 t.where(t > 2, 0.0)),
                         (mg.full_like(x, 3), torch.full_like(t, 3))):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_transpose_of_two_dims_swaps_them():
    a = np.arange(24.0).reshape(2, 3, 4)
    close(mg.tensor(a).transpose(0, 2), a.swapaxes(0, 2))     # torch: shape (4, 3, 2)
    close(mg.tensor(a).transpose(2, 0, 1), a.transpose(2, 0, 1))
