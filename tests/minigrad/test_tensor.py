"""Tensor creation, dtypes, conversions and devices, as `help(minigrad.Tensor)` and
`minigrad.tensor` document them."""

import sys
import types

import numpy as np
import pytest

import minigrad as mg
from minigrad.backend import CupyBackend


# -- creation ------------------------------------------------------------------------------

def test_python_floats_default_to_float32_and_numpy_keeps_its_dtype():
    assert mg.tensor(1.5).dtype == np.float32
    assert mg.tensor([[1.0, 2.0], [3.0, 4.5]]).dtype == np.float32
    assert mg.tensor([1, 2.5]).dtype == np.float32          # a mixed list is a float list
    assert mg.tensor(np.array([1.0, 2.0])).dtype == np.float64
    assert mg.tensor(np.float64(1.0)).dtype == np.float64
    assert mg.tensor(np.array([1.0], dtype=np.float16)).dtype == np.float16
    assert mg.tensor([1, 2]).dtype == np.int64
    assert mg.tensor(np.array([1, 2], dtype=np.int32)).dtype == np.int32
    assert mg.tensor([True, False]).dtype == np.bool_


@pytest.mark.parametrize("dtype", [np.float64, "float64", mg.float64, np.dtype("float64")])
def test_dtype_argument_accepts_numpy_dtypes_and_names(dtype):
    t = mg.tensor([1.0, 2.0], dtype=dtype)
    assert t.dtype == np.float64
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
    assert mg.tensor(np.array([1.5, 2.5]), dtype="float32").dtype == np.float32


def test_tensor_copies_its_data():
    source = np.array([1.0, 2.0, 3.0])
    t = mg.tensor(source)
    source[0] = 100.0
    assert t.numpy()[0] == 1.0
    u = mg.tensor(t)
    assert u.data is not t.data and u.dtype == t.dtype
    np.testing.assert_array_equal(u.numpy(), t.numpy())


def test_tensor_of_a_tensor_is_a_new_leaf():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = mg.tensor(x * 2)
    assert y.is_leaf and not y.requires_grad
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0])
    stacked = mg.tensor([mg.tensor([1.0, 2.0]), mg.tensor([3.0, 4.0])])   # nested tensors
    np.testing.assert_array_equal(stacked.numpy(), [[1.0, 2.0], [3.0, 4.0]])


def test_tensor_refuses_data_that_is_not_numbers():
    with pytest.raises(TypeError, match="tensor.*dict"):
        mg.tensor({"a": 1})
    with pytest.raises(TypeError, match="tensor.*NoneType"):
        mg.tensor(None)
    with pytest.raises(TypeError, match="tensor"):
        mg.tensor(["a", "b"])
    with pytest.raises(ValueError, match="tensor: nested lists must be rectangular"):
        mg.tensor([[1.0, 2.0], [3.0]])


@pytest.mark.parametrize("make, fill", [(mg.zeros, 0.0), (mg.ones, 1.0), (mg.empty, 0.0)])
def test_filled_constructors(make, fill):
    for t in (make(2, 3), make((2, 3)), make([2, 3])):
        assert t.shape == (2, 3) and t.dtype == np.float32
        np.testing.assert_array_equal(t.numpy(), np.full((2, 3), fill))
    assert make(4, dtype="float64").dtype == np.float64
    assert make(()).shape == ()
    t = make(3, requires_grad=True)
    assert t.requires_grad and t.is_leaf


def test_full_like_and_eye():
    t = mg.full((2, 2), 7.5)
    np.testing.assert_array_equal(t.numpy(), np.full((2, 2), 7.5, dtype=np.float32))
    assert t.dtype == np.float32
    assert mg.full(3, -1.0).shape == (3,)
    assert mg.full((2,), 1, dtype="int64").dtype == np.int64
    base = mg.tensor(np.arange(6.0).reshape(2, 3))
    z, o = mg.zeros_like(base), mg.ones_like(base)
    assert z.shape == o.shape == (2, 3) and z.dtype == o.dtype == np.float64
    np.testing.assert_array_equal(z.numpy() + 1, o.numpy())
    assert mg.ones_like(mg.tensor([1, 2])).dtype == np.int64
    assert mg.zeros_like(base, dtype="float32").dtype == np.float32
    np.testing.assert_array_equal(mg.eye(3).numpy(), np.eye(3))
    assert mg.eye(3).dtype == np.float32 and mg.eye(2, dtype="float64").dtype == np.float64


def test_arange_follows_numpy():
    np.testing.assert_array_equal(mg.arange(5).numpy(), np.arange(5))
    assert mg.arange(5).dtype == np.int64
    np.testing.assert_array_equal(mg.arange(1, 7, 2).numpy(), [1, 3, 5])
    halves = mg.arange(0.0, 1.0, 0.25)
    assert halves.dtype == np.float32                      # float arguments: float32
    np.testing.assert_array_equal(halves.numpy(), [0.0, 0.25, 0.5, 0.75])
    assert mg.arange(3, dtype="float64").dtype == np.float64


def test_random_tensors_are_reproducible_after_manual_seed():
    mg.manual_seed(123)
    a, b, m = mg.randn(200, 3), mg.rand(500), mg.dropout(mg.ones(50), 0.5)
    mg.manual_seed(123)
    np.testing.assert_array_equal(mg.randn(200, 3).numpy(), a.numpy())
    np.testing.assert_array_equal(mg.rand(500).numpy(), b.numpy())
    np.testing.assert_array_equal(mg.dropout(mg.ones(50), 0.5).numpy(), m.numpy())
    assert a.dtype == b.dtype == np.float32
    assert 0.0 <= b.numpy().min() and b.numpy().max() < 1.0
    assert abs(a.numpy().mean()) < 0.2 and 0.8 < a.numpy().std() < 1.2
    assert abs(b.numpy().mean() - 0.5) < 0.05
    assert mg.randn(2, dtype="float64", requires_grad=True).requires_grad
    mg.manual_seed(124)
    assert not np.array_equal(mg.randn(200, 3).numpy(), a.numpy())


# -- attributes and conversions ------------------------------------------------------------

def test_attributes():
    t = mg.tensor(np.arange(24.0).reshape(2, 3, 4))
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.size == 24
    assert t.dtype == np.float64 and t.device == "cpu"
    assert t.T.shape == (4, 3, 2)
    np.testing.assert_array_equal(t.T.numpy(), np.arange(24.0).reshape(2, 3, 4).T)
    assert len(t) == 2
    np.testing.assert_array_equal(np.stack([r.numpy() for r in t]), t.numpy())
    assert t.name is None
    t.name = "activations"
    assert t.name == "activations"


def test_numpy_returns_a_host_copy():
    t = mg.tensor([1.0, 2.0])
    host = t.numpy()
    assert isinstance(host, np.ndarray)
    host[0] = 50.0
    assert t.numpy()[0] == 1.0
    copied = np.array(t)                                   # np.array copies, as for any array
    copied[1] = 60.0
    assert t.numpy()[1] == 2.0
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float64), [1.0, 2.0])


def test_item_and_tolist():
    assert mg.tensor(3).item() == 3 and isinstance(mg.tensor(3).item(), int)
    value = mg.tensor(np.array([[2.5]])).item()
    assert value == 2.5 and isinstance(value, float)
    assert mg.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert mg.tensor([0.5, 1.5]).tolist() == [0.5, 1.5]
    with pytest.raises(ValueError, match=r"item.*\(2,\)"):
        mg.tensor([1.0, 2.0]).item()


def test_truth_value_len_and_immutability():
    assert bool(mg.tensor([1.0])) and not bool(mg.tensor(0.0))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(mg.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="0-d"):
        len(mg.tensor(1.0))
    t = mg.tensor([1.0, 2.0])
    t[0] = 3.0                                        # in place: t requires no grad
    np.testing.assert_array_equal(t.numpy(), [3.0, 2.0])
    assert t._version == 1


def test_repr_shows_values_dtype_and_graph():
    assert repr(mg.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert "dtype=float64" in repr(mg.tensor(np.array([1.0])))
    x = mg.tensor([1.0], requires_grad=True)
    assert "requires_grad=True" in repr(x)
    assert "grad_fn=Mul" in repr(x * 2)


def test_astype_is_differentiable_between_floats():
    x = mg.tensor([1.0, -2.0], requires_grad=True)         # float32
    y = x.astype("float64")
    assert y.dtype == np.float64 and y.requires_grad
    (y * y).sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, -4.0])
    assert x.double().dtype == np.float64 and x.double().float().dtype == np.float32
    assert x.astype("float32") is x                        # same dtype: no new node


def test_comparisons_give_bool_tensors_without_grad():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    results = {"<": x < 2, "<=": x <= 2, ">": x > 2, ">=": x >= 2, "==": x == 2, "!=": x != 2}
    expected = {"<": [1, 0, 0], "<=": [1, 1, 0], ">": [0, 0, 1], ">=": [0, 1, 1],
                "==": [0, 1, 0], "!=": [1, 0, 1]}
    for op, t in results.items():
        assert t.dtype == np.bool_ and not t.requires_grad, op
        np.testing.assert_array_equal(t.numpy(), np.array(expected[op], dtype=bool), op)
    np.testing.assert_array_equal((~(x > 2) & (x > 1)).numpy(), [False, True, False])
    np.testing.assert_array_equal((2 < x).numpy(), [False, False, True])     # reflected


# -- dtype promotion -----------------------------------------------------------------------

def test_float32_and_float64_promote_to_float64_with_float32_gradients():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    b = mg.tensor(np.array([3.0, 4.0]), requires_grad=True)
    y = (a * b).sum()
    assert y.dtype == np.float64
    y.backward()
    assert a.grad.dtype == np.float32 and b.grad.dtype == np.float64
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 2.0])


def test_python_numbers_do_not_change_a_float_dtype():
    for dtype in ("float32", "float64"):
        x = mg.tensor(np.array([1.0, 2.0], dtype=dtype))
        for y in (x * 2.5, 2.5 * x, x + 1, x - 0.1, 1 / x, x ** 2.0, 2.0 ** x, -x):
            assert y.dtype == np.dtype(dtype)


def test_integer_tensors_with_python_numbers():
    ints = mg.tensor([1, 2, 3])
    assert (ints + 1.5).dtype == np.float32               # float32, not NumPy's float64
    assert (1.5 * ints).dtype == np.float32
    np.testing.assert_allclose((ints + 1.5).numpy(), [2.5, 3.5, 4.5])
    assert (ints * 2).dtype == np.int64
    assert (mg.tensor([True, False]) * 0.5).dtype == np.float32
    np.testing.assert_array_equal((ints < 1.5).numpy(), [True, False, False])
    # a float result of integers is float32, as in PyTorch (NumPy gives float64); an integer
    # tensor meeting a float tensor takes that tensor's dtype
    assert (ints / 2).dtype == np.float32 and (ints / ints).dtype == np.float32
    assert (ints + mg.tensor([0.5, 0.5, 0.5])).dtype == np.float32
    assert (ints + mg.tensor(np.array([0.5, 0.5, 0.5]))).dtype == np.float64
    assert (ints * mg.tensor(2.5)).dtype == np.float32
    assert (mg.tensor([1, 4], dtype="int32") ** 0.5).dtype == np.float32
    for fn in (mg.exp, mg.log, mg.sqrt, mg.tanh, mg.sigmoid, mg.gelu, mg.softmax, mg.logsumexp,
               mg.log_softmax, mg.mean):
        assert fn(ints).dtype == np.float32, fn.__name__
    assert (ints // 2).dtype == np.int64 and (ints % 2).dtype == np.int64


def test_float64_stays_float64_end_to_end():
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    w = mg.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    h = mg.gelu(x @ w + 0.1)
    loss = (mg.log_softmax(h, axis=-1) * 0.5).sum() + mg.logsumexp(h).mean() + h.var()
    assert h.dtype == loss.dtype == np.float64
    loss.backward()
    assert x.grad.dtype == w.grad.dtype == np.float64


@pytest.mark.parametrize("name, fn", [
    ("softmax", lambda x: mg.softmax(x, axis=-1)),
    ("log_softmax", lambda x: mg.log_softmax(x, axis=0)),
    ("logsumexp", lambda x: mg.logsumexp(x, axis=-1)),
    ("gelu", mg.gelu),
    ("gelu_tanh", lambda x: mg.gelu(x, approximate="tanh")),
    ("mean", lambda x: x.mean(axis=0)),
    ("var", lambda x: x.var(axis=1)),
    ("dropout", lambda x: mg.dropout(x, 0.3)),
    ("sigmoid", mg.sigmoid),
    ("sqrt", lambda x: mg.sqrt(x * x + 1)),
    ("pow", lambda x: (x * x + 1) ** 0.5),
    ("masked_fill", lambda x: x.masked_fill(x > 0, -1e9)),
    ("where", lambda x: mg.where(x > 0, x, 0.1)),
    ("clip", lambda x: mg.clip(x, -0.5, 0.5)),
    ("max", lambda x: x.max(axis=-1)),
])
def test_float32_pipelines_stay_float32(name, fn, rng):
    x = mg.tensor(rng.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
    y = fn(x)
    assert y.dtype == np.float32, name
    (g,) = mg.grad((y * y).sum(), x, create_graph=True)
    assert g.dtype == np.float32, name
    if g.requires_grad:
        (g2,) = mg.grad(g.sum(), x, allow_unused=True)
        assert g2 is None or g2.dtype == np.float32, name


# -- devices -------------------------------------------------------------------------------

def test_to_cpu_is_a_no_op():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    assert x.to("cpu") is x and x.cpu() is x
    assert x.device == "cpu" and mg.zeros(2, device="cpu").device == "cpu"


@pytest.mark.parametrize("device", ["tpu", "", "CPU", "cuda:x", "cpu:-1", "gpu:0"])
def test_bad_device_strings_raise_value_error(device):
    with pytest.raises(ValueError, match="device"):
        mg.tensor([1.0]).to(device)
    with pytest.raises(ValueError, match="device"):
        mg.zeros(2, device=device)


@pytest.mark.skipif("cupy" in sys.modules or mg.cuda_available(), reason="CuPy is installed")
def test_cuda_without_cupy_says_cupy_is_missing():
    assert not mg.cuda_available()
    for make in (lambda: mg.tensor([1.0]).to("cuda"), lambda: mg.tensor([1.0], device="cuda"),
                 lambda: mg.ones(2, device="cuda:0"), lambda: mg.tensor([1.0]).cuda()):
        with pytest.raises(RuntimeError, match="CuPy"):
            make()


def test_cuda_messages_say_what_is_missing(monkeypatch):
    """A fresh CuPy backend against stand-ins for the cupy module: no module, no GPU, a broken
    driver."""
    monkeypatch.setitem(sys.modules, "cupy", None)         # import fails: CuPy missing
    with pytest.raises(RuntimeError, match="needs CuPy, which is not installed"):
        CupyBackend().check_available(None)

    def fake_cupy(count):
        def get_device_count():
            if isinstance(count, Exception):
                raise count
            return count
        runtime = types.SimpleNamespace(getDeviceCount=get_device_count)
        return types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime),
                                     ndarray=type("ndarray", (), {}))

    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(0))
    with pytest.raises(RuntimeError, match="needs a GPU: CuPy is installed but no GPU"):
        CupyBackend().check_available(None)
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(RuntimeError("no CUDA driver")))
    with pytest.raises(RuntimeError, match="needs a GPU.*no CUDA driver"):
        CupyBackend().check_available(0)
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(1))
    CupyBackend().check_available(0)                       # one GPU: fine
    with pytest.raises(RuntimeError, match="cuda:1.*1 GPU"):
        CupyBackend().check_available(1)


def test_moving_to_another_device_and_back_is_differentiable(sim_device):
    x = mg.tensor(np.array([1.0, -2.0, 3.0]), requires_grad=True)
    on_device = x.to(sim_device)
    assert on_device.device == "sim" and on_device.requires_grad
    y = (on_device * on_device).sum()
    assert y.device == "sim"
    y.backward()
    assert x.grad.device == "cpu"
    np.testing.assert_array_equal(x.grad.numpy(), 2 * x.numpy())
    back = on_device.cpu()
    assert back.device == "cpu"
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    with pytest.raises(TypeError, match="sim"):
        np.asarray(on_device)                              # no silent device → host copy
