"""Convolution and pooling over one axis (nn/convolution.py): forward against plain-NumPy loops
written from the definitions, float64 gradchecks of input, weight and bias, PyTorch's
conventions (first maximum at ties, NaN, −inf padding, ceil_mode, count_include_pad, indices),
errors that name the operation and the shapes, the modules' parameters and initialisation, and
values and gradients against PyTorch where it is installed."""

import math

import numpy as np
import pytest

import minigrad as mg
import nn
import nn.functional as F


def f64(array, requires_grad=True):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


# -- references, one output element at a time ------------------------------------------------

def conv1d_numpy(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """y[n, o, l] = b[o] + Σ_c Σ_k w[o, c, k] · x[n, g·C_g + c, l·s + k·d − p_left], with x
    zero outside the input; "same" pads d(K − 1) in all, the odd one on the right."""
    unbatched = x.ndim == 2
    if unbatched:
        x = x[None]
    n_batch, _, length = x.shape
    c_out, c_group, k = w.shape
    total = dilation * (k - 1)
    left, right = {"same": (total // 2, total - total // 2), "valid": (0, 0)}.get(
        padding, (padding, padding))
    out_length = (length + left + right - total - 1) // stride + 1
    y = np.zeros((n_batch, c_out, out_length))
    for n in range(n_batch):
        for o in range(c_out):
            group = o // (c_out // groups)
            for l in range(out_length):
                acc = 0.0 if b is None else b[o]
                for c in range(c_group):
                    for j in range(k):
                        i = l * stride + j * dilation - left
                        if 0 <= i < length:
                            acc += w[o, c, j] * x[n, group * c_group + c, i]
                y[n, o, l] = acc
    return y[0] if unbatched else y


def pool_numpy(x, kind, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               count_include_pad=True):
    """PyTorch's max or average pooling of x (N, C, L) or (C, L), one window at a time.
    Returns (values, indices); the index of a max window is its first maximum, or its last
    NaN, as PyTorch's scan `if v > best or isnan(v)` finds it."""
    unbatched = x.ndim == 2
    if unbatched:
        x = x[None]
    stride = kernel_size if stride is None else stride
    length = x.shape[-1]
    span = dilation * (kernel_size - 1) + 1
    out_length = -(-(length + 2 * padding - span) // stride) + 1 if ceil_mode else \
        (length + 2 * padding - span) // stride + 1
    if ceil_mode and (out_length - 1) * stride >= length + padding:
        out_length -= 1
    values = np.zeros(x.shape[:2] + (out_length,))
    indices = np.zeros(x.shape[:2] + (out_length,), dtype=np.int64)
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            for l in range(out_length):
                start = l * stride - padding
                taps = [start + j * dilation for j in range(kernel_size)]
                inside = [i for i in taps if 0 <= i < length]
                if kind == "max":
                    best, where = -math.inf, inside[0]
                    for i in inside:
                        if x[n, c, i] > best or math.isnan(x[n, c, i]):
                            best, where = x[n, c, i], i
                    values[n, c, l], indices[n, c, l] = best, where
                else:
                    if count_include_pad:
                        count = sum(1 for i in taps if -padding <= i < length + padding)
                    else:
                        count = len(inside)
                    values[n, c, l] = sum(x[n, c, i] for i in inside) / count
    if unbatched:
        return values[0], indices[0]
    return values, indices


# (stride, padding, dilation, groups, bias), for x (N, 4, L) and weight (8, 4/groups, 3)
CONV_CASES = [(1, 0, 1, 1, True), (2, 1, 1, 1, True), (1, 2, 2, 1, False), (3, 0, 1, 2, True),
              (1, "same", 2, 2, True), (1, "valid", 1, 1, True), (2, 1, 3, 4, False),
              ((2,), (1,), (1,), 1, True)]


@pytest.mark.parametrize("stride, padding, dilation, groups, bias", CONV_CASES)
@pytest.mark.parametrize("shape", [(2, 4, 7), (4, 7)])
def test_conv1d_matches_numpy(shape, stride, padding, dilation, groups, bias, rng):
    x = rng.standard_normal(shape)
    w = rng.standard_normal((8, 4 // groups, 3))
    b = rng.standard_normal(8) if bias else None
    y = F.conv1d(mg.tensor(x), mg.tensor(w), None if b is None else mg.tensor(b), stride,
                 padding, dilation, groups)
    one = lambda v: v[0] if isinstance(v, tuple) else v                      # noqa: E731
    expected = conv1d_numpy(x, w, b, one(stride), one(padding), one(dilation), groups)
    assert y.shape == expected.shape and y.dtype == np.float64
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12, atol=1e-12)
    y32 = F.conv1d(mg.tensor(x, dtype="float32"), mg.tensor(w, dtype="float32"),
                   None if b is None else mg.tensor(b, dtype="float32"), stride, padding,
                   dilation, groups)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32.numpy(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("stride, padding, dilation, groups, bias", CONV_CASES)
@pytest.mark.parametrize("shape", [(2, 4, 6), (4, 5), (1, 4, 3)])
def test_conv1d_gradcheck(shape, stride, padding, dilation, groups, bias, rng):
    """∂/∂x, ∂/∂W and ∂/∂b against central differences, also where the kernel's span is the
    whole padded input (length 3 with "valid")."""
    one = lambda v: v[0] if isinstance(v, tuple) else v                      # noqa: E731
    span = one(dilation) * 2 + 1
    pad = {"same": span - 1, "valid": 0}.get(one(padding), 2 * one(padding))
    inputs = [f64(rng.standard_normal(shape)), f64(rng.standard_normal((8, 4 // groups, 3)))]
    if bias:
        inputs.append(f64(rng.standard_normal(8)))
    if shape[-1] + pad < span:
        with pytest.raises(ValueError, match="conv1d: padded input length"):
            F.conv1d(*inputs, stride=stride, padding=padding, dilation=dilation, groups=groups)
        return
    assert mg.gradcheck(lambda *t: F.conv1d(*t, stride=stride, padding=padding,
                                            dilation=dilation, groups=groups), inputs)


@pytest.mark.parametrize("padding, groups", [(1, 1), ("same", 2)])
def test_conv1d_second_derivative(padding, groups, rng):
    """create_graph records a backward whose own gradient is right: x ↦ ⟨u, ∂⟨v, y⟩/∂W⟩ and
    W ↦ ⟨u', ∂⟨v, y⟩/∂x⟩ (the cross terms; y is bilinear in x and W)."""
    x, w, b = (f64(rng.standard_normal(s)) for s in [(2, 2, 5), (4, 2 // groups, 3), (4,)])
    v = mg.tensor(rng.standard_normal(F.conv1d(x, w, b, padding=padding, groups=groups).shape))
    u_x, u_w = (mg.tensor(rng.standard_normal(t.shape)) for t in (x, w))

    def projected(x, w, b):
        y = F.conv1d(x, w, b, padding=padding, groups=groups)
        gx, gw = mg.grad((y * v).sum(), [x, w], create_graph=True)
        return (gx * u_x).sum() + (gw * u_w).sum()
    assert mg.gradcheck(projected, (x, w, b), atol=1e-4)


def test_conv1d_same_puts_the_odd_padding_on_the_right(rng):
    """K = 4: "same" pads 1 on the left and 2 on the right, as PyTorch."""
    x, w = rng.standard_normal((1, 1, 6)), rng.standard_normal((1, 1, 4))
    y = F.conv1d(mg.tensor(x), mg.tensor(w), padding="same").numpy()
    padded = np.pad(x, ((0, 0), (0, 0), (1, 2)))
    np.testing.assert_allclose(y, conv1d_numpy(padded, w), rtol=1e-12)
    assert y.shape == (1, 1, 6)


def test_conv1d_takes_integer_input_in_the_weight_dtype(rng):
    x = np.arange(10).reshape(1, 2, 5)
    w = rng.standard_normal((3, 2, 2))
    y = F.conv1d(mg.tensor(x), mg.tensor(w))
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.numpy(), conv1d_numpy(x.astype(float), w), rtol=1e-12)


# -- pooling -------------------------------------------------------------------------------

# (kernel_size, stride, padding, dilation, ceil_mode), for inputs of length 7 and 8
POOL_CASES = [(2, None, 0, 1, False), (3, 2, 1, 1, False), (3, 2, 1, 1, True),
              (2, 2, 0, 1, True), (3, 1, 1, 2, False), (3, 2, 1, 2, True), (4, 3, 2, 1, True),
              (1, 1, 0, 1, False), ((3,), (2,), (1,), (1,), True)]


def _one(value):
    return value[0] if isinstance(value, tuple) else value


@pytest.mark.parametrize("k, s, p, d, ceil_mode", POOL_CASES)
@pytest.mark.parametrize("shape", [(2, 3, 7), (3, 8)])
def test_max_pool1d_values_and_indices_match_numpy(shape, k, s, p, d, ceil_mode, rng):
    x = rng.standard_normal(shape)
    y, indices = F.max_pool1d(mg.tensor(x), k, s, p, d, ceil_mode, return_indices=True)
    expected, expected_indices = pool_numpy(x, "max", _one(k), _one(s), _one(p), _one(d),
                                            ceil_mode)
    np.testing.assert_array_equal(y.numpy(), expected)
    np.testing.assert_array_equal(indices.numpy(), expected_indices)
    assert indices.dtype == np.int64 and not indices.requires_grad
    np.testing.assert_array_equal(F.max_pool1d(mg.tensor(x), k, s, p, d, ceil_mode).numpy(),
                                  expected)


@pytest.mark.parametrize("k, s, p, d, ceil_mode", POOL_CASES)
def test_max_pool1d_gradcheck(k, s, p, d, ceil_mode, rng):
    """Away from ties (distinct values 0.1 apart), the gradient is that of the maxima."""
    x = f64(rng.permutation(2 * 3 * 7).reshape(2, 3, 7) * 0.1)
    assert mg.gradcheck(lambda t: F.max_pool1d(t, k, s, p, d, ceil_mode), [x])


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("k, s, p, d, ceil_mode", [c for c in POOL_CASES if _one(c[3]) == 1])
@pytest.mark.parametrize("shape", [(2, 3, 7), (3, 8)])
def test_avg_pool1d_matches_numpy(shape, k, s, p, d, ceil_mode, count_include_pad, rng):
    x = rng.standard_normal(shape)
    y = F.avg_pool1d(mg.tensor(x), k, s, p, ceil_mode, count_include_pad)
    expected, _ = pool_numpy(x, "avg", _one(k), _one(s), _one(p), 1, ceil_mode,
                             count_include_pad)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("k, s, p, ceil_mode", [(3, 2, 1, True), (4, 3, 2, True),
                                                (2, None, 0, False)])
def test_avg_pool1d_gradcheck(k, s, p, ceil_mode, count_include_pad, rng):
    x = f64(rng.standard_normal((2, 3, 7)))
    assert mg.gradcheck(lambda t: F.avg_pool1d(t, k, s, p, ceil_mode, count_include_pad), [x])


def test_max_pool1d_gives_ties_gradient_to_the_first_maximum():
    """PyTorch's convention: one element per window gets the gradient, the first maximum;
    an element that wins several windows gets the sum."""
    x = f64([[[1.0, 1.0, 2.0, 2.0, 0.0]]])
    y, indices = F.max_pool1d(x, 2, stride=1, return_indices=True)
    y.sum().backward()
    np.testing.assert_array_equal(y.numpy(), [[[1.0, 2.0, 2.0, 2.0]]])
    np.testing.assert_array_equal(indices.numpy(), [[[0, 2, 2, 3]]])
    np.testing.assert_array_equal(x.grad.numpy(), [[[1.0, 0.0, 2.0, 1.0, 0.0]]])


def test_max_pool1d_pads_with_minus_infinity_and_never_picks_the_padding():
    x = f64([[-5.0, -7.0, -np.inf, -np.inf]])                # (C, L) = (1, 4)
    y, indices = F.max_pool1d(x, 3, stride=2, padding=1, return_indices=True)
    np.testing.assert_array_equal(y.numpy(), [[-5.0, -7.0]])          # never the pad's −inf
    np.testing.assert_array_equal(indices.numpy(), [[0, 1]])
    z, at = F.max_pool1d(f64([[-np.inf, -np.inf, 1.0]]), 2, stride=2, padding=1,
                         return_indices=True)
    np.testing.assert_array_equal(z.numpy(), [[-np.inf, 1.0]])
    np.testing.assert_array_equal(at.numpy(), [[0, 2]])       # the first real −inf, as PyTorch


def test_max_pool1d_propagates_nan_with_the_last_nan_index():
    x = f64([[[1.0, np.nan, 3.0, np.nan, 0.0]]])
    y, indices = F.max_pool1d(x, 5, return_indices=True)
    assert np.isnan(y.numpy()).all()
    np.testing.assert_array_equal(indices.numpy(), [[[3]]])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[[0.0, 0.0, 0.0, 1.0, 0.0]]])


def test_max_pool1d_gradient_differentiates_as_a_routing(rng):
    """Under create_graph, ∂L/∂x = route(g) sends each window's upstream gradient g to its
    chosen element: its derivative in g reads u back at those elements, its derivative in x
    is zero."""
    x = f64(rng.permutation(10).reshape(1, 2, 5) * 0.1)
    y, indices = F.max_pool1d(x, 2, stride=1, return_indices=True)
    g = f64(rng.standard_normal(y.shape))
    (gx,) = mg.grad((y * g).sum(), [x], create_graph=True)
    u = rng.standard_normal(x.shape)
    grad_g, grad_x = mg.grad((gx * mg.tensor(u)).sum(), [g, x], allow_unused=True)
    np.testing.assert_array_equal(grad_g.numpy(),
                                  np.take_along_axis(u, indices.numpy(), axis=-1))
    assert grad_x is None or not grad_x.numpy().any()


@pytest.mark.parametrize("length, size", [(7, 3), (5, 5), (3, 7), (10, 4), (6, 1)])
def test_adaptive_avg_pool1d_matches_numpy_and_gradcheck(length, size, rng):
    x = rng.standard_normal((2, 3, length))
    expected = np.stack([x[..., (i * length) // size:-(-(i + 1) * length // size)].mean(-1)
                         for i in range(size)], axis=-1)
    np.testing.assert_allclose(F.adaptive_avg_pool1d(mg.tensor(x), size).numpy(), expected,
                               rtol=1e-12)
    np.testing.assert_allclose(nn.AdaptiveAvgPool1d(size)(mg.tensor(x[0])).numpy(),
                               expected[0], rtol=1e-12)
    assert mg.gradcheck(lambda t: F.adaptive_avg_pool1d(t, size), [f64(x)])


# -- errors --------------------------------------------------------------------------------

def _zeros(*shape):
    return mg.zeros(shape)


ERRORS = [
    (lambda: F.conv1d(_zeros(2, 3, 5), _zeros(4, 2, 3)), ValueError,
     r"conv1d: input shape \(2, 3, 5\) has 3 channels, but weight shape \(4, 2, 3\)"),
    (lambda: F.conv1d(_zeros(2, 3, 5), _zeros(4, 1, 3), groups=2), ValueError,
     r"conv1d: input shape \(2, 3, 5\).*groups=2 expects 2"),
    (lambda: F.conv1d(_zeros(2, 4, 5), _zeros(3, 2, 3), groups=2), ValueError,
     r"conv1d: weight shape \(3, 2, 3\) has 3 output channels, which groups=2"),
    (lambda: F.conv1d(_zeros(2, 3, 5), _zeros(4, 3, 6)), ValueError,
     r"conv1d: padded input length 5 .*\(2, 3, 5\).* span .* 6 \(weight shape \(4, 3, 6\)"),
    (lambda: F.conv1d(_zeros(2, 3, 5), _zeros(4, 3, 3), stride=0), ValueError,
     "conv1d: stride must be >= 1, got 0"),
    (lambda: F.conv1d(_zeros(2, 3, 5), _zeros(4, 3, 3), padding=-1), ValueError,
     "conv1d: padding must be >= 0"),
    (lambda: F.conv1d(_zeros(2, 3, 5), _zeros(4, 3, 3), dilation=0), ValueError,
     "conv1d: dilation must be >= 1"),
    (lambda: F.conv1d(_zeros(2, 3, 5), _zeros(4, 3, 3), padding="same", stride=2), ValueError,
     "conv1d: padding='same' is not supported with stride 2"),
    (lambda: F.conv1d(_zeros(2, 3, 5), _zeros(4, 3, 3), padding="full"), ValueError,
     "conv1d: padding must be an int, 'valid' or 'same', got 'full'"),
    (lambda: F.conv1d(_zeros(2, 3, 5), _zeros(4, 3, 3), _zeros(3)), ValueError,
     r"conv1d: bias shape \(3,\) must be \(C_out,\) = \(4,\)"),
    (lambda: F.conv1d(_zeros(5), _zeros(4, 3, 3)), ValueError,
     r"conv1d: input must be \(N, C, L\) or unbatched \(C, L\), got shape \(5,\)"),
    (lambda: F.conv1d(_zeros(2, 3, 5), _zeros(4, 3)), ValueError,
     r"conv1d: weight must be 3-D .* got shape \(4, 3\)"),
    (lambda: F.conv1d(_zeros(2, 3, 5), _zeros(4, 3, 3), stride=1.5), TypeError,
     "conv1d: stride must be an int"),
    (lambda: F.max_pool1d(_zeros(2, 3, 5), 3, padding=2), ValueError,
     "max_pool1d: padding should be at most half of kernel size, got padding=2 and "
     "kernel_size=3"),
    (lambda: F.max_pool1d(_zeros(2, 3, 5), 6), ValueError,
     r"max_pool1d: input shape \(2, 3, 5\) with kernel_size=6.* gives no output"),
    (lambda: F.max_pool1d(_zeros(2, 3, 5), 2, stride=0), ValueError,
     "max_pool1d: stride must be >= 1, got 0"),
    (lambda: F.max_pool1d(_zeros(2, 3, 5), 2, dilation=0), ValueError,
     "max_pool1d: dilation must be >= 1, got 0"),
    (lambda: F.max_pool1d(_zeros(5), 2), ValueError,
     r"max_pool1d: input must be \(N, C, L\) or unbatched \(C, L\), got shape \(5,\)"),
    (lambda: F.max_pool1d(mg.zeros((2, 5), dtype="int64"), 2), TypeError,
     "max_pool1d: input must be floating, got dtype int64"),
    (lambda: F.avg_pool1d(_zeros(2, 3, 5), 3, padding=2), ValueError,
     "avg_pool1d: padding should be at most half of kernel size"),
    (lambda: F.avg_pool1d(_zeros(2, 3, 5), 0), ValueError,
     "avg_pool1d: kernel_size must be >= 1, got 0"),
    (lambda: F.avg_pool1d(mg.zeros((2, 5), dtype="int64"), 2), TypeError,
     "avg_pool1d: input must be floating"),
    (lambda: F.adaptive_avg_pool1d(_zeros(2, 3, 5), 0), ValueError,
     "adaptive_avg_pool1d: output_size must be >= 1, got 0"),
    (lambda: nn.Conv1d(4, 6, 3, groups=4), ValueError,
     "Conv1d: out_channels=6 must be divisible by groups=4"),
    (lambda: nn.Conv1d(3, 6, 3, groups=2), ValueError,
     "Conv1d: in_channels=3 must be divisible by groups=2"),
    (lambda: nn.Conv1d(4, 6, 3, padding_mode="mirror"), ValueError,
     "Conv1d: padding_mode must be one of 'zeros', 'reflect', 'replicate', 'circular', got "
     "'mirror'"),
    (lambda: nn.Conv1d(4, 6, 3, stride=2, padding="same"), ValueError,
     "Conv1d: padding='same' is not supported with stride 2"),
    (lambda: nn.Conv1d(4, 6, 0), ValueError, "Conv1d: kernel_size must be >= 1, got 0"),
    (lambda: nn.Conv1d(4, 6, 3, bias="False"), TypeError, "Conv1d: bias must be a bool"),
    (lambda: nn.Conv1d(4, 6, 3)(_zeros(2, 3, 5)), ValueError,
     r"conv1d: input shape \(2, 3, 5\) has 3 channels"),
    (lambda: nn.MaxPool1d(0), ValueError, "MaxPool1d: kernel_size must be >= 1, got 0"),
    (lambda: nn.AvgPool1d(2, stride=-1), ValueError, "AvgPool1d: stride must be >= 1"),
]


@pytest.mark.parametrize("call, kind, message", ERRORS,
                         ids=[str(i) for i in range(len(ERRORS))])
def test_bad_input_raises_naming_the_operation_and_the_shapes(call, kind, message):
    with pytest.raises(kind, match=message):
        call()


# -- modules -------------------------------------------------------------------------------

def test_conv1d_module_parameters_state_dict_and_forward(rng):
    layer = nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2)
    assert tuple(layer.weight.shape) == (6, 2, 3) and tuple(layer.bias.shape) == (6,)
    assert list(layer.state_dict()) == ["weight", "bias"]
    assert (layer.kernel_size, layer.stride, layer.padding, layer.dilation) == \
        ((3,), (2,), (1,), (2,))
    assert layer.groups == 2 and layer.padding_mode == "zeros"
    x = rng.standard_normal((2, 4, 9)).astype(np.float32)
    sd = layer.state_dict()
    expected = conv1d_numpy(x, sd["weight"], sd["bias"], 2, 1, 2, 2)
    np.testing.assert_allclose(layer(mg.tensor(x)).numpy(), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(layer(mg.tensor(x[1])).numpy(), expected[1], rtol=1e-5,
                               atol=1e-5)
    no_bias = nn.Conv1d(4, 6, 3, bias=False)
    assert no_bias.bias is None and list(no_bias.state_dict()) == ["weight"]


def test_conv1d_init_is_uniform_with_bound_one_over_sqrt_fan_in():
    mg.manual_seed(3)
    layer = nn.Conv1d(64, 128, 5, groups=4)               # fan_in = 64/4 · 5 = 80
    bound = 1 / math.sqrt(80)
    w, b = layer.weight.numpy(), layer.bias.numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # U(−a, a): standard deviation a/√3, mean 0; 10,240 samples
    assert abs(w.std() - bound / math.sqrt(3)) < 0.03 * bound
    assert abs(w.mean()) < 0.03 * bound
    assert np.abs(b).max() > 0.8 * bound                   # spread over the range, not zeros
    assert w.dtype == np.float32
    layer64 = nn.Conv1d(2, 3, 2, dtype="float64")
    assert layer64.weight.dtype == np.float64 and layer64.bias.dtype == np.float64


@pytest.mark.parametrize("mode, numpy_mode", [("reflect", "reflect"), ("replicate", "edge"),
                                              ("circular", "wrap")])
@pytest.mark.parametrize("padding", [2, "same"])
def test_conv1d_padding_modes_pad_the_input_first(mode, numpy_mode, padding, rng):
    layer = nn.Conv1d(2, 3, 4, padding=padding, padding_mode=mode).double()
    x = rng.standard_normal((2, 2, 6))
    left, right = (2, 2) if padding == 2 else (1, 2)
    padded = np.pad(x, ((0, 0), (0, 0), (left, right)), mode=numpy_mode)
    sd = layer.state_dict()
    np.testing.assert_allclose(layer(mg.tensor(x)).numpy(),
                               conv1d_numpy(padded, sd["weight"], sd["bias"]), rtol=1e-12)
    assert mg.gradcheck(lambda t: layer(t), [f64(x)])


def test_pool_modules_keep_pytorchs_attributes_and_call_the_functions(rng):
    pool = nn.MaxPool1d(3, padding=1, return_indices=True, ceil_mode=True)
    assert (pool.kernel_size, pool.stride, pool.padding, pool.dilation) == (3, 3, 1, 1)
    x = rng.standard_normal((2, 3, 8))
    y, indices = pool(mg.tensor(x))
    expected, expected_indices = pool_numpy(x, "max", 3, 3, 1, 1, True)
    np.testing.assert_array_equal(y.numpy(), expected)
    np.testing.assert_array_equal(indices.numpy(), expected_indices)
    avg = nn.AvgPool1d(3, 2, 1, ceil_mode=True, count_include_pad=False)
    assert (avg.kernel_size, avg.stride, avg.padding) == ((3,), (2,), (1,))
    np.testing.assert_allclose(avg(mg.tensor(x)).numpy(),
                               pool_numpy(x, "avg", 3, 2, 1, 1, True, False)[0], rtol=1e-12)
    assert nn.AvgPool1d(4).stride == (4,)
    assert not list(pool.parameters()) and not list(avg.parameters())


def test_reprs_follow_pytorch():
    assert repr(nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2, bias=False,
                          padding_mode="reflect")).startswith(
        "Conv1d(4, 6, kernel_size=(3,), stride=(2,), padding=(1,), dilation=(2,), groups=2, "
        "bias=False, padding_mode=reflect)")
    assert repr(nn.Conv1d(4, 6, 3, padding="same")).startswith(
        "Conv1d(4, 6, kernel_size=(3,), stride=(1,), padding=same)")
    assert repr(nn.MaxPool1d(3, 2, 1, 2, ceil_mode=True)) == \
        "MaxPool1d(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)"
    assert repr(nn.AvgPool1d(3)) == "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"
    assert repr(nn.AdaptiveAvgPool1d(4)) == "AdaptiveAvgPool1d(output_size=4)"


def test_a_small_conv_net_trains(rng):
    """Conv1d, ReLU, MaxPool1d, AdaptiveAvgPool1d and Linear in one model: the loss of a fixed
    batch falls under Adam (gradients reach every parameter)."""
    mg.manual_seed(0)
    model = nn.Sequential(nn.Conv1d(2, 8, 3, padding=1), nn.ReLU(), nn.MaxPool1d(2),
                          nn.Conv1d(8, 8, 3, padding="same", groups=2), nn.ReLU(),
                          nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(8, 2))
    x = mg.tensor(rng.standard_normal((16, 2, 12)).astype(np.float32))
    y = mg.tensor((x.numpy()[:, 0].mean(-1) > 0).astype(np.int64))
    opt = nn.optim.Adam(model.parameters(), lr=0.02)
    losses = []
    for _ in range(30):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        assert all(p.grad is not None for p in model.parameters())
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


# -- against PyTorch -----------------------------------------------------------------------

def _torch_grads(torch, fn, arrays, weights):
    tensors = [None if a is None else torch.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*tensors)
    out = out[0] if isinstance(out, tuple) else out
    (out * torch.tensor(weights)).sum().backward()
    return out.detach().numpy(), [None if t is None else t.grad.numpy() for t in tensors]


def _our_grads(fn, arrays, weights):
    tensors = [None if a is None else f64(a) for a in arrays]
    out = fn(*tensors)
    out = out[0] if isinstance(out, tuple) else out
    (out * mg.tensor(weights)).sum().backward()
    return out.numpy(), [None if t is None else t.grad.numpy() for t in tensors]


@pytest.mark.parametrize("stride, padding, dilation, groups, bias", CONV_CASES)
def test_conv1d_values_and_gradients_match_torch(stride, padding, dilation, groups, bias, rng):
    torch = pytest.importorskip("torch")
    arrays = [rng.standard_normal((3, 4, 9)), rng.standard_normal((8, 4 // groups, 3)),
              rng.standard_normal(8) if bias else None]
    theirs = lambda x, w, b: torch.nn.functional.conv1d(x, w, b, stride, padding,  # noqa: E731
                                                        dilation, groups)
    ours = lambda x, w, b: F.conv1d(x, w, b, stride, padding, dilation, groups)  # noqa: E731
    with torch.no_grad():
        out_shape = theirs(*[None if a is None else torch.tensor(a) for a in arrays]).shape
    weights = rng.standard_normal(tuple(out_shape))
    expected, expected_grads = _torch_grads(torch, theirs, arrays, weights)
    got, grads = _our_grads(ours, arrays, weights)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    for g, e in zip(grads, expected_grads):
        assert (g is None) == (e is None)
        if g is not None:
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("k, s, p, d, ceil_mode", POOL_CASES)
def test_pooling_values_indices_and_gradients_match_torch(k, s, p, d, ceil_mode, rng):
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    x = rng.standard_normal((2, 3, 8))
    x[0, 0, :4] = 0.5                                      # ties: the first maximum wins
    theirs = lambda t: TF.max_pool1d(t, k, s, p, d, ceil_mode)          # noqa: E731
    ours = lambda t: F.max_pool1d(t, k, s, p, d, ceil_mode)             # noqa: E731
    out_shape = tuple(theirs(torch.tensor(x)).shape)
    weights = rng.standard_normal(out_shape)
    expected, (expected_grad,) = _torch_grads(torch, theirs, [x], weights)
    got, (grad,) = _our_grads(ours, [x], weights)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-14, atol=1e-15)  # sums' order
    _, indices = F.max_pool1d(mg.tensor(x), k, s, p, d, ceil_mode, return_indices=True)
    _, expected_indices = TF.max_pool1d(torch.tensor(x), k, s, p, d, ceil_mode,
                                        return_indices=True)
    np.testing.assert_array_equal(indices.numpy(), expected_indices.numpy())
    if _one(d) != 1:
        return
    for include in (True, False):
        theirs = lambda t: TF.avg_pool1d(t, k, s, p, ceil_mode, include)    # noqa: E731
        ours = lambda t: F.avg_pool1d(t, k, s, p, ceil_mode, include)       # noqa: E731
        expected, (expected_grad,) = _torch_grads(torch, theirs, [x], weights)
        got, (grad,) = _our_grads(ours, [x], weights)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(grad, expected_grad, rtol=1e-12, atol=1e-15)


def test_modules_match_torch_reprs_init_and_padding_modes(rng):
    torch = pytest.importorskip("torch")
    pairs = [lambda lib: lib.Conv1d(4, 6, 3), lambda lib: lib.Conv1d(4, 6, 3, padding="same"),
             lambda lib: lib.Conv1d(4, 6, 3, 2, 1, 2, 2, False, "reflect"),
             lambda lib: lib.MaxPool1d(3, 2, 1, 2, ceil_mode=True),
             lambda lib: lib.AvgPool1d(3, 2, 1, True, False),
             lambda lib: lib.AdaptiveAvgPool1d(5)]
    for make in pairs:
        ours, theirs = repr(make(nn)), repr(make(torch.nn))
        assert ours.split("  #")[0] == theirs
    for mode in ("zeros", "reflect", "replicate", "circular"):
        layer = nn.Conv1d(2, 4, 3, padding=1, padding_mode=mode, dtype="float64")
        twin = torch.nn.Conv1d(2, 4, 3, padding=1, padding_mode=mode, dtype=torch.float64)
        twin.load_state_dict({k: torch.tensor(v) for k, v in layer.state_dict().items()})
        x = rng.standard_normal((2, 2, 5))
        np.testing.assert_allclose(layer(mg.tensor(x)).numpy(),
                                   twin(torch.tensor(x)).detach().numpy(), rtol=1e-12)
