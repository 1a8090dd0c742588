"""NumPy's and PyTorch's spellings side by side: `size` as an int that is also callable,
`numel()`, `dim()`, `std`/`var` with `ddof` or `correction`, `dim=` wherever `axis=` is (both
at once is an error), `cat`, how a gradient is reset, and the single-sourced version."""

import copy
import importlib.metadata
import json
import math
import pickle
import re
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg

from .primitive_checks import assert_forward, leaf

ROOT = Path(__file__).resolve().parents[2]
SHAPES = [(), (1,), (3,), (2, 3, 4), (0, 3)]

# -- size, numel, dim ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_size_is_numpys_count_and_pytorchs_shape(shape, device):
    t = mg.zeros(shape, device=device)
    count = math.prod(shape)
    assert t.size == count and isinstance(t.size, int) and int(t.size) == count
    assert t.size == np.zeros(shape).size               # NumPy's meaning
    assert t.size() == shape and type(t.size()) is tuple
    for d in range(-len(shape), len(shape)):
        assert t.size(d) == shape[d] and t.size(dim=d) == shape[d]
    assert t.numel() == count and type(t.numel()) is int
    assert t.dim() == len(shape) == t.ndim


@pytest.mark.parametrize("shape, bad", [((), 0), ((2, 3), 2), ((2, 3), -3), ((2, 3), 1.0)])
def test_size_of_a_missing_axis_raises_naming_it(shape, bad):
    with pytest.raises(IndexError, match=rf"size: axis {re.escape(repr(bad))} is out of range "
                                          rf"for a {len(shape)}-d tensor"):
        mg.zeros(shape).size(bad)


def test_size_behaves_as_a_plain_int_everywhere_an_int_goes():
    t = mg.zeros((2, 3))
    assert str(t.size) == repr(t.size) == "6" and f"{t.size:>3}" == "  6"
    assert json.dumps({"n": t.size}) == '{"n": 6}'
    assert type(t.size + 1) is int and t.size * 2 == 12 and list(range(t.size)) == list(range(6))
    assert {t.size: "six"}[6] == "six" and hash(t.size) == hash(6)
    for restored in (pickle.loads(pickle.dumps(t.size)), copy.copy(t.size)):
        assert restored == 6 and type(restored) is int
    assert sum(p.size for p in [t, mg.zeros(4)]) == 10


# -- std and var with ddof / correction ----------------------------------------------------------

STD_CASES = [((), None, 0), ((1,), 0, 0), ((3, 4), None, 1), ((3, 4), 1, 0), ((3, 4), (0, 1), 1),
             ((2, 3, 4), (0, 2), 2), ((5,), -1, 1)]


@pytest.mark.parametrize("shape, axis, ddof", STD_CASES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", ["std", "var"])
def test_std_and_var_match_numpy_and_pass_gradcheck(name, shape, axis, ddof, keepdims, device,
                                                   rng):
    host = rng.standard_normal(shape)
    x = leaf(host, device)
    reference = getattr(np, name)(host, axis=axis, ddof=ddof, keepdims=keepdims)
    assert_forward(getattr(mg, name)(x, axis, keepdims=keepdims, ddof=ddof), reference, device)
    assert_forward(getattr(x, name)(dim=axis, keepdims=keepdims, correction=ddof), reference,
                   device)
    if ddof == 0:                                       # NumPy's default, not PyTorch's
        assert_forward(getattr(x, name)(axis), getattr(np, name)(host, axis=axis), device)
    assert mg.gradcheck(lambda t: getattr(t, name)(axis, keepdims=keepdims, ddof=ddof), [x])


def test_std_of_equal_elements_has_zero_gradient_not_nan():
    x = mg.tensor(np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]]), requires_grad=True)
    x.std(axis=1).sum().backward()
    grad = x.grad.numpy()
    np.testing.assert_array_equal(grad[0], 0.0)
    centred = np.array([1.0, 2.0, 4.0]) - 7.0 / 3.0
    np.testing.assert_allclose(grad[1], centred / (3 * np.std([1.0, 2.0, 4.0])), rtol=1e-12)


def test_std_gradient_of_second_order_is_recorded(rng):
    x = mg.tensor(rng.standard_normal(5), requires_grad=True)
    assert mg.gradcheck(lambda t: mg.grad(t.std(ddof=1), t, create_graph=True)[0], [x])


def test_std_and_var_refuse_two_spellings_and_warn_of_missing_degrees_of_freedom():
    x = mg.zeros((2, 3))
    for name in ("std", "var"):
        with pytest.raises(TypeError, match=f"{name}: got ddof=1 and correction=1"):
            getattr(mg, name)(x, ddof=1, correction=1)
        with pytest.warns(RuntimeWarning, match=rf"{name}: ddof=2 leaves no degrees of freedom "
                                                rf"for 2 element\(s\)"):
            getattr(x, name)(axis=0, ddof=2)
        with pytest.raises(ValueError, match=f"{name}: ddof must be a non-negative int"):
            getattr(x, name)(ddof=-1)


# -- dim= wherever axis= is --------------------------------------------------------------------

# (name, axis to use, NumPy reference taking `axis`) for x of shape (2, 3, 4)
def _softmax(a, axis):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


REDUCTIONS = [
    ("sum", 1, lambda a, axis: a.sum(axis=axis)),
    ("mean", (0, 2), lambda a, axis: a.mean(axis=axis)),
    ("max", -1, lambda a, axis: a.max(axis=axis)),
    ("min", 0, lambda a, axis: a.min(axis=axis)),
    ("var", 2, lambda a, axis: a.var(axis=axis)),
    ("std", 1, lambda a, axis: a.std(axis=axis)),
    ("logsumexp", 0, lambda a, axis: np.log(np.exp(a).sum(axis=axis))),
    ("softmax", 1, _softmax),
    ("log_softmax", 0, lambda a, axis: np.log(_softmax(a, axis))),
    ("argmax", 2, lambda a, axis: a.argmax(axis=axis)),
    ("argmin", 1, lambda a, axis: a.argmin(axis=axis)),
    ("any", 1, lambda a, axis: (a > 0.5).any(axis=axis)),
    ("all", 2, lambda a, axis: (a > -1.5).all(axis=axis)),
]


def _operand(name, x):
    return (x > 0.5) if name == "any" else (x > -1.5) if name == "all" else x


@pytest.mark.parametrize("name, axis, reference", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_dim_means_axis_in_functions_and_methods(name, axis, reference, device, rng):
    host = rng.standard_normal((2, 3, 4))
    x = _operand(name, leaf(host, device))
    expected = reference(host, axis)
    by_dim = {"max": lambda out: out.values, "min": lambda out: out.values}.get(
        name, lambda out: out)                          # PyTorch's (values, indices)
    if name in ("var", "std"):                          # PyTorch's default correction 1
        by_dim_expected = getattr(host, name)(axis=axis, ddof=1)
    else:
        by_dim_expected = expected
    assert_forward(by_dim(getattr(mg, name)(x, dim=axis)), by_dim_expected, device)
    assert_forward(by_dim(getattr(x, name)(dim=axis)), by_dim_expected, device)
    assert_forward(getattr(x, name)(axis=axis), expected, device)
    with pytest.raises(TypeError, match=rf"{name}: got axis=.* and dim=.*pass one of them"):
        getattr(mg, name)(x, axis=axis, dim=axis)
    with pytest.raises(TypeError, match=rf"{name}: got axis=.* and dim="):
        getattr(x, name)(axis, dim=axis)


EVERY_AXIS = [  # PyTorch's dim=() reduces every axis here (NumPy's axis=() reduces none)
    ("sum", lambda a: a.sum()), ("mean", lambda a: a.mean()), ("amax", lambda a: a.max()),
    ("amin", lambda a: a.min()), ("var", lambda a: a.var(ddof=1)),
    ("std", lambda a: a.std(ddof=1)), ("norm", lambda a: np.sqrt((a * a).sum()))]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")    # var, std of one element: NaN
@pytest.mark.parametrize("shape", [(), (1,), (2, 3), (2, 1, 3)])
@pytest.mark.parametrize("name, reference", EVERY_AXIS, ids=[r[0] for r in EVERY_AXIS])
def test_an_empty_dim_reduces_every_axis_and_an_empty_axis_none(name, reference, shape,
                                                                  device, rng):
    host = rng.standard_normal(shape) + 2.0
    x = leaf(host, device)
    for empty in ((), []):
        assert_forward(getattr(x, name)(dim=empty), reference(host), device)
        kept = getattr(x, name)(dim=empty, keepdim=True)
        assert kept.shape == (1,) * len(shape)
    if name != "norm":                                   # NumPy's spelling: no axis reduced
        assert getattr(mg, name)(x, axis=()).shape == shape
    if name in ("sum", "mean", "norm") and host.size > 1:
        assert mg.gradcheck(lambda t: getattr(t, name)(dim=()), [x])


@pytest.mark.parametrize("name", ["prod", "logsumexp"])
def test_an_empty_dim_is_refused_where_pytorch_refuses_it(name):
    x = mg.ones((2, 3))
    with pytest.raises(TypeError, match=rf"{name}: dim=\(\) names no dimension"):
        getattr(x, name)(dim=())
    assert getattr(mg, name)(x, axis=()).shape == (2, 3)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "logsumexp"])
def test_an_explicit_last_axis_and_dim_together_are_still_two(name):
    x = mg.zeros((2, 3))
    assert_forward(getattr(mg, name)(x, -1), getattr(mg, name)(x, dim=1).numpy(), "cpu")
    with pytest.raises(TypeError, match=rf"{name}: got axis=-1 and dim=0"):
        getattr(mg, name)(x, -1, dim=0)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "sum", "std"])
def test_the_gradient_through_dim_is_the_one_through_axis(name, rng):
    x = leaf(rng.standard_normal((3, 4)), "cpu")
    same = {"ddof": 1} if name == "std" else {}         # dim= means PyTorch's correction 1
    assert mg.gradcheck(lambda t: getattr(t, name)(dim=0), [x])
    by_dim, = mg.grad((getattr(x, name)(dim=0) ** 2).sum(), x)
    by_axis, = mg.grad((getattr(x, name)(axis=0, **same) ** 2).sum(), x)
    np.testing.assert_array_equal(by_dim.numpy(), by_axis.numpy())


def test_joins_and_shape_functions_take_dim(device, rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 5))
    ta, tb = leaf(a, device), leaf(b, device)
    assert mg.cat is mg.concat and "cat" in mg.__all__
    assert_forward(mg.cat([ta, tb], dim=1), np.concatenate([a, b], axis=1), device)
    assert_forward(mg.concat([ta, tb], dim=-1), np.concatenate([a, b], axis=-1), device)
    assert_forward(mg.stack([ta, ta], dim=2), np.stack([a, a], axis=2), device)
    parts = mg.split(tb, [1, 4], dim=1)                 # with dim=, PyTorch's part sizes
    for part, expected in zip(parts, np.split(b, [1], axis=1)):
        assert_forward(part, expected, device)
    assert_forward(ta.unsqueeze(dim=1), a[:, None, :], device)
    assert_forward(mg.unsqueeze(ta, dim=-1), a[..., None], device)
    assert_forward(leaf(a[:, None], device).squeeze(dim=1), a, device)
    assert_forward(mg.squeeze(leaf(a[None], device), dim=0), a, device)
    for call in (lambda: mg.cat([ta, ta], axis=0, dim=0), lambda: mg.stack([ta], 1, dim=1),
                 lambda: mg.split(ta, 3, axis=1, dim=1), lambda: ta.unsqueeze(0, dim=0),
                 lambda: ta.squeeze(0, dim=0)):
        with pytest.raises(TypeError, match="got axis=.* and dim="):
            call()
    with pytest.raises(TypeError, match="unsqueeze: missing the axis"):
        ta.unsqueeze()
    assert mg.gradcheck(lambda p, q: mg.cat([p, q], dim=1) * 2.0, [ta, tb])


# -- resetting a gradient ----------------------------------------------------------------------

def test_a_gradient_resets_with_none_or_in_place_with_zero_():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    grad = w.grad
    assert grad.zero_() is grad and w.grad is grad
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 0.0])
    (w * w).sum().backward()                            # gradients accumulate ...
    (w * w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [4.0, 8.0])
    w.grad = None                                       # ... until reset
    (w * 3.0).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 3.0])


def test_zeroing_a_gradient_that_a_graph_saved_stops_that_backward():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    v = mg.tensor([5.0, 7.0], requires_grad=True)
    uses_grad = (v * w.grad).sum()                      # Mul saved w.grad for ∂/∂v
    w.grad.zero_()
    with pytest.raises(RuntimeError, match="changed in place"):
        uses_grad.backward()
    assert v.grad is None


# -- version and distribution ----------------------------------------------------------------

def test_version_is_written_once_and_read_by_the_build():
    assert re.fullmatch(r"\d+\.\d+\.\d+", mg.__version__)
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "minigrad.__version__"}
    # a name of its own: these distributions on PyPI install another `minigrad`
    assert project["project"]["name"] not in {"minigrad", "minigrad-framework", "minigrad-python"}
    assert re.search(r'^__version__ = "\d+\.\d+\.\d+"', (ROOT / "minigrad" / "__init__.py")
                     .read_text(), re.MULTILINE)   # a literal: setuptools reads it unimported
    try:                                                # where it is installed, the build
        installed = importlib.metadata.version(project["project"]["name"])   # read the same
    except importlib.metadata.PackageNotFoundError:
        return
    assert installed == mg.__version__


# -- more of PyTorch's small helpers ---------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
def test_is_tensor_numel_is_floating_point_element_size_nbytes_half(shape):
    x = mg.tensor(np.ones(shape, dtype=np.float32))
    assert mg.is_tensor(x) is True and mg.is_tensor(np.ones(2)) is False
    assert mg.numel(x) == int(np.prod(shape)) and x.is_floating_point()
    assert not mg.tensor(np.ones(shape, dtype=np.int64)).is_floating_point()
    assert x.element_size() == 4 and x.nbytes == 4 * int(np.prod(shape))
    h = mg.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape).astype(np.float32),
                  requires_grad=True)
    half = h.half()
    assert half.dtype == np.float16 and mg.float16 == "float16"
    half.float().sum().backward()                       # differentiable, as a cast
    np.testing.assert_array_equal(h.grad.numpy(), np.ones(shape, dtype=np.float32))


@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
def test_in_place_fills_change_the_values_and_the_version(shape):
    a = np.arange(float(np.prod(shape))).reshape(shape)
    x = mg.tensor(a.copy())
    assert x.masked_fill_(x > 1.0, -1.0) is x and x._version == 1
    np.testing.assert_array_equal(x.numpy(), np.where(a > 1.0, -1.0, a))
    if len(shape) == 2:
        m = mg.tensor(a.copy())
        np.testing.assert_array_equal(m.tril_(0).numpy(), np.tril(a))
        np.testing.assert_array_equal(mg.tensor(a.copy()).triu_(1).numpy(), np.triu(a, 1))
    mg.manual_seed(4)
    u = mg.zeros(shape).uniform_(-2.0, 3.0)
    assert u.dtype == np.float32 and np.all((u.numpy() >= -2.0) & (u.numpy() < 3.0))
    mg.manual_seed(4)
    again = mg.zeros(shape).uniform_(-2.0, 3.0)
    np.testing.assert_array_equal(again.numpy(), u.numpy())
    n = mg.zeros(4000).normal_(2.0, 0.5).numpy()
    assert abs(n.mean() - 2.0) < 0.05 and abs(n.std() - 0.5) < 0.05
    w = mg.zeros(shape, requires_grad=True)
    with pytest.raises(RuntimeError, match="uniform_: in-place change of a tensor that requires"):
        w.uniform_()
    with mg.no_grad():
        w.normal_()
    with pytest.raises(RuntimeError, match=r"masked_fill_: the mask broadcasts the tensor"):
        mg.zeros(3).masked_fill_(mg.tensor([[True], [False]]), 1.0)
    with pytest.raises(TypeError, match="uniform_: needs a floating tensor"):
        mg.zeros(3, dtype="int64").uniform_()


def test_detach_in_place_makes_a_leaf_that_stops_the_gradient():
    w = mg.tensor([2.0, 3.0], requires_grad=True)
    h = w * w
    assert h.detach_() is h and h.is_leaf and not h.requires_grad
    y = w * 2.0 + h
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0])       # none through h


@pytest.mark.parametrize("shape, dim, index", [((3,), 0, [0, 2]), ((2, 4), 1, [3]),
                                               ((2, 4), -2, [1]), ((1,), 0, [0]), ((), 0, 0)])
def test_index_fill_matches_a_numpy_reference_and_gradchecks(shape, dim, index):
    a = np.random.default_rng(5).normal(size=shape)
    expected = a.copy()
    if shape:
        np.moveaxis(expected, dim, 0)[np.asarray(index)] = 7.5
    else:
        expected = np.array(7.5)
    x = leaf(a, "cpu")
    out = mg.index_fill(x, dim, mg.tensor(index), 7.5)
    np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(x.index_fill(dim, index, 7.5).numpy(), expected)
    assert mg.gradcheck(lambda t: mg.index_fill(t, dim, mg.tensor(index), 7.5), [x])
    with pytest.raises(TypeError, match="index_fill: index must be a 0-d or 1-D int tensor"):
        mg.index_fill(x, dim, mg.tensor([0.5]), 1.0)


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2.0), (0, 1)])
def test_baddbmm_against_numpy_and_gradcheck(beta, alpha):
    rng = np.random.default_rng(6)
    inp, b1, b2 = rng.normal(size=(1, 2, 4)), rng.normal(size=(3, 2, 5)), rng.normal(size=(3, 5, 4))
    got = mg.baddbmm(leaf(inp, "cpu"), leaf(b1, "cpu"), leaf(b2, "cpu"), beta=beta, alpha=alpha)
    np.testing.assert_allclose(got.numpy(), beta * inp + alpha * (b1 @ b2) if beta else
                               alpha * (b1 @ b2), rtol=1e-12)
    assert mg.gradcheck(lambda i, x, y: mg.baddbmm(i, x, y, beta=beta, alpha=alpha),
                        [leaf(inp, "cpu"), leaf(b1, "cpu"), leaf(b2, "cpu")])
    with pytest.raises(ValueError, match=r"baddbmm: batch1 and batch2 must be 3-D"):
        mg.baddbmm(mg.ones(2, 2), mg.ones(2, 2), mg.ones(2, 2))


def test_where_with_the_condition_alone_gives_the_positions():
    a = np.array([[0.0, 2.0], [3.0, 0.0]])
    rows, cols = mg.where(mg.tensor(a) > 0)
    np.testing.assert_array_equal(rows.numpy(), np.where(a > 0)[0])
    np.testing.assert_array_equal(cols.numpy(), np.where(a > 0)[1])
    np.testing.assert_array_equal(mg.where(mg.tensor(a) > 0, 1.0, 0.0).numpy(), a > 0)
    with pytest.raises(TypeError, match="where: give both a and b, or neither"):
        mg.where(mg.tensor([True]), 1.0)
