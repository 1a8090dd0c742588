"""nn.functional in PyTorch's forms: pad, activations, losses with weights and probability
targets, cosine similarity, attention with float masks and grouped key/value heads. Each is
checked against a plain-NumPy reference from its definition and with float64 gradchecks; where
torch is installed, also against torch itself."""

import numpy as np
import pytest

import minigrad as mg
import nn
import nn.functional as F


def f64(array, requires_grad=True):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


# -- pad ----------------------------------------------------------------------------------------

def _torch_pad_numpy(a, pad, mode, value=0.0):
    """PyTorch's flat (left, right, top, bottom, …) amounts as numpy.pad widths, negative
    amounts cropping first."""
    widths, crop = [(0, 0)] * a.ndim, [slice(None)] * a.ndim
    for i in range(len(pad) // 2):
        axis = a.ndim - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        widths[axis] = (max(before, 0), max(after, 0))
        crop[axis] = slice(max(-before, 0), a.shape[axis] - max(-after, 0))
    a = a[tuple(crop)]
    if a.ndim == 0:
        return a                              # nothing to pad (numpy.pad refuses 0-d)
    numpy_mode = {"replicate": "edge", "circular": "wrap"}.get(mode, mode)
    if numpy_mode == "constant":
        return np.pad(a, widths, constant_values=value)
    return np.pad(a, widths, numpy_mode)


@pytest.mark.parametrize("pad, mode, shape", [
    ((1, 2), "constant", (2, 3)), ((1, 2, 2, 1), "reflect", (2, 3, 4)),
    ((2, 1, 0, 1), "replicate", (3, 2)), ((1, 3), "circular", (1, 3)),
    ((-1, 2, 1, -1), "constant", (3, 4)), ((2, 2), "constant", (1,)), ((), "constant", ()),
])
def test_pad_in_pytorch_form(pad, mode, shape, rng):
    a = rng.standard_normal(shape)
    x = f64(a)
    np.testing.assert_allclose(F.pad(x, pad, mode).numpy(), _torch_pad_numpy(a, pad, mode))
    assert mg.gradcheck(lambda t: F.pad(t, pad, mode), [x])


def test_pad_value_and_errors():
    x = mg.ones(2, 2)
    assert F.pad(x, (1, 0), value=-1.0).numpy()[:, 0].tolist() == [-1.0, -1.0]
    with pytest.raises(ValueError, match="pad: mode"):
        F.pad(x, (1, 1), "edge")
    with pytest.raises(ValueError, match=r"3 amounts.*\(2, 2\)"):
        F.pad(x, (1, 1, 1))
    with pytest.raises(ValueError, match="only used by mode 'constant'"):
        F.pad(x, (1, 1), "reflect", value=2.0)


def test_pad_matches_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    for pad, mode in [((1, 2), "constant"), ((1, 2, 2, 1), "reflect"),
                      ((2, 1, 0, 1), "replicate"), ((1, 3), "circular")]:
        expected = torch.nn.functional.pad(torch.tensor(a), pad, mode=mode).numpy()
        np.testing.assert_allclose(F.pad(mg.tensor(a), pad, mode).numpy(), expected)


# -- activation modules ---------------------------------------------------------------------------

@pytest.mark.parametrize("module, function", [
    (nn.SiLU(), mg.silu), (nn.Mish(), mg.mish), (nn.Softplus(2.0, 1.0),
                                                 lambda x: mg.softplus(x, 2.0, 1.0)),
    (nn.ELU(0.5), lambda x: mg.elu(x, 0.5)), (nn.CELU(2.0), lambda x: mg.celu(x, 2.0)),
    (nn.SELU(), mg.selu), (nn.LeakyReLU(0.2), lambda x: mg.leaky_relu(x, 0.2)),
    (nn.Hardtanh(-2.0, 2.0), lambda x: mg.hardtanh(x, -2.0, 2.0)), (nn.ReLU6(), mg.relu6),
    (nn.Hardsigmoid(), mg.hardsigmoid), (nn.Hardswish(), mg.hardswish),
    (nn.Softsign(), mg.softsign), (nn.LogSigmoid(), mg.logsigmoid),
    (nn.Softmax(0), lambda x: mg.softmax(x, 0)), (nn.LogSoftmax(), mg.log_softmax),
    (nn.Softmin(1), lambda x: mg.softmin(x, 1)),
])
def test_activation_modules_call_their_functions(module, function, rng):
    x = mg.tensor(4 * rng.standard_normal((3, 4)))
    np.testing.assert_array_equal(module(x).numpy(), function(x).numpy())
    assert type(module).__name__ in repr(module) and not list(module.parameters())


def test_functional_offers_the_activations_by_pytorchs_names():
    for name in ("silu", "mish", "softplus", "elu", "celu", "selu", "leaky_relu", "hardtanh",
                 "relu6", "hardsigmoid", "hardswish", "softsign", "logsigmoid", "softmin"):
        assert getattr(F, name) is getattr(mg, name)
