"""Convolution and pooling over one and two axes (nn/convolution.py): forward against plain-NumPy
loops written from the definitions, float64 gradchecks of input, weight and bias, PyTorch's
conventions (first maximum at ties in row-major order, NaN, −inf padding, ceil_mode,
count_include_pad, divisor_override, indices flat within each plane), errors that name the
operation and the shapes, the modules' parameters and initialisation, and values, gradients
and indices against PyTorch where it is installed."""

import itertools
import math

import numpy as np
import pytest

import minigrad as mg
import nn
import nn.functional as F

CONV = {1: F.conv1d, 2: F.conv2d}
MAX_POOL = {1: F.max_pool1d, 2: F.max_pool2d}
AVG_POOL = {1: F.avg_pool1d, 2: F.avg_pool2d}
ADAPTIVE = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d}


def f64(array, requires_grad=True):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


def _each(value, dims):
    """An option given as an int or one int per axis, as one int per axis."""
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * dims


# -- references, one output element at a time ------------------------------------------------

def conv_numpy(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """y[n, o, i] = b[o] + Σ_c Σ_k w[o, c, k] · x[n, g·C_g + c, i·s + k·d − p_before], i the
    output position and k the tap (one index each per spatial axis, D = w.ndim − 2), with x
    zero outside the input; "same" pads d(K − 1) in all on each axis, the odd one after."""
    dims = w.ndim - 2
    unbatched = x.ndim == dims + 1
    if unbatched:
        x = x[None]
    stride, dilation = _each(stride, dims), _each(dilation, dims)
    c_out, c_group, *kernel = w.shape
    totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
    if padding == "same":
        before = [t // 2 for t in totals]
        after = [t - t // 2 for t in totals]
    else:
        before = after = (0,) * dims if padding == "valid" else _each(padding, dims)
    spatial = x.shape[2:]
    out_shape = [(n + p + q - t - 1) // s + 1
                 for n, p, q, t, s in zip(spatial, before, after, totals, stride)]
    y = np.zeros((x.shape[0], c_out, *out_shape))
    for n, o in itertools.product(range(x.shape[0]), range(c_out)):
        group = o // (c_out // groups)
        for i in np.ndindex(*out_shape):
            acc = 0.0 if b is None else b[o]
            for c, k in itertools.product(range(c_group), np.ndindex(*kernel)):
                at = [i[a] * stride[a] + k[a] * dilation[a] - before[a] for a in range(dims)]
                if all(0 <= at[a] < spatial[a] for a in range(dims)):
                    acc += w[(o, c) + k] * x[(n, group * c_group + c, *at)]
            y[(n, o) + i] = acc
    return y[0] if unbatched else y


def pool_numpy(x, kind, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               count_include_pad=True, divisor_override=None, dims=1):
    """PyTorch's max or average pooling of x (N, C, *S) or (C, *S), S of `dims` axes, one
    window at a time. Returns (values, indices); the index of a max window is the position
    within its plane (flat, row-major) of its first maximum, or of its last NaN, as PyTorch's
    scan `if v > best or isnan(v)` over the taps in row-major order finds it."""
    unbatched = x.ndim == dims + 1
    if unbatched:
        x = x[None]
    kernel, padding, dilation = (_each(v, dims) for v in (kernel_size, padding, dilation))
    stride = kernel if stride is None else _each(stride, dims)
    spatial = x.shape[2:]
    out_shape = []
    for a in range(dims):
        reach = spatial[a] + 2 * padding[a] - dilation[a] * (kernel[a] - 1) - 1
        size = (-(-reach // stride[a]) if ceil_mode else reach // stride[a]) + 1
        if ceil_mode and (size - 1) * stride[a] >= spatial[a] + padding[a]:
            size -= 1
        out_shape.append(size)
    values = np.zeros(x.shape[:2] + tuple(out_shape))
    indices = np.zeros(x.shape[:2] + tuple(out_shape), dtype=np.int64)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for i in np.ndindex(*out_shape):
            taps = [tuple(i[a] * stride[a] - padding[a] + k[a] * dilation[a] for a in range(dims))
                    for k in np.ndindex(*kernel)]
            inside = [t for t in taps if all(0 <= t[a] < spatial[a] for a in range(dims))]
            if kind == "max":
                best, where = -math.inf, inside[0]
                for t in inside:
                    if x[(n, c) + t] > best or math.isnan(x[(n, c) + t]):
                        best, where = x[(n, c) + t], t
                values[(n, c) + i] = best
                indices[(n, c) + i] = np.ravel_multi_index(where, spatial)
                continue
            if divisor_override is not None:
                count = divisor_override
            elif count_include_pad:
                count = sum(all(-padding[a] <= t[a] < spatial[a] + padding[a]
                                for a in range(dims)) for t in taps)
            else:
                count = len(inside)
            values[(n, c) + i] = sum(x[(n, c) + t] for t in inside) / count
    if unbatched:
        return values[0], indices[0]
    return values, indices


def adaptive_numpy(x, sizes):
    """Output position i averages the box of rows ⌊i_a·S_a/M_a⌋ … ⌈(i_a + 1)·S_a/M_a⌉ − 1 on
    each spatial axis a (the last len(sizes) axes)."""
    spatial = x.shape[x.ndim - len(sizes):]
    y = np.zeros(x.shape[:x.ndim - len(sizes)] + tuple(sizes))
    for i in np.ndindex(*sizes):
        box = tuple(slice(i[a] * spatial[a] // sizes[a], -(-(i[a] + 1) * spatial[a] // sizes[a]))
                    for a in range(len(sizes)))
        y[(Ellipsis,) + i] = x[(Ellipsis,) + box].mean(axis=tuple(range(-len(sizes), 0)))
    return y


# -- convolution ---------------------------------------------------------------------------

# (stride, padding, dilation, groups, bias), for x (N, 4, *S) and weight
# (C_OUT, 4/groups, *KERNEL)
CONV_CASES = {
    1: [(1, 0, 1, 1, True), (2, 1, 1, 1, True), (1, 2, 2, 1, False), (3, 0, 1, 2, True),
        (1, "same", 2, 2, True), (1, "valid", 1, 1, True), (2, 1, 3, 4, False),
        ((2,), (1,), (1,), 1, True)],
    2: [(1, 0, 1, 1, True), ((2, 1), (1, 0), 1, 1, True), (1, 1, (2, 1), 2, False),
        (1, "same", (1, 2), 2, True), (1, "same", 1, 1, True), ((1, 2), (2, 1), 2, 4, True),
        (3, 1, 1, 1, True), (2, "valid", 1, 2, False)]}
C_OUT = {1: 8, 2: 4}
KERNEL = {1: (3,), 2: (3, 2)}        # kW = 2 even: "same" puts the odd padding on the right
CONV_PARAMS = [(dims,) + case for dims in (1, 2) for case in CONV_CASES[dims]]


def _conv_arrays(rng, dims, shape, groups, bias):
    return [rng.standard_normal(shape),
            rng.standard_normal((C_OUT[dims], 4 // groups) + KERNEL[dims]),
            rng.standard_normal(C_OUT[dims]) if bias else None]


@pytest.mark.parametrize("dims, stride, padding, dilation, groups, bias", CONV_PARAMS)
@pytest.mark.parametrize("batched", [True, False])
def test_conv_matches_numpy(dims, batched, stride, padding, dilation, groups, bias, rng):
    shape = {1: (2, 4, 7), 2: (2, 4, 6, 5)}[dims][0 if batched else 1:]
    x, w, b = _conv_arrays(rng, dims, shape, groups, bias)
    y = CONV[dims](mg.tensor(x), mg.tensor(w), None if b is None else mg.tensor(b), stride,
                   padding, dilation, groups)
    expected = conv_numpy(x, w, b, stride, padding, dilation, groups)
    assert y.shape == expected.shape and y.dtype == np.float64
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12, atol=1e-12)
    y32 = CONV[dims](mg.tensor(x, dtype="float32"), mg.tensor(w, dtype="float32"),
                     None if b is None else mg.tensor(b, dtype="float32"), stride, padding,
                     dilation, groups)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32.numpy(), expected, rtol=1e-5, atol=1e-5)


GRAD_SHAPES = {1: [(2, 4, 6), (4, 5), (1, 4, 3)], 2: [(1, 4, 4, 3), (4, 3, 4), (1, 4, 2, 2)]}


@pytest.mark.parametrize("dims, stride, padding, dilation, groups, bias", CONV_PARAMS)
@pytest.mark.parametrize("which", [0, 1, 2])
def test_conv_gradcheck(dims, which, stride, padding, dilation, groups, bias, rng):
    """∂/∂x, ∂/∂W and ∂/∂b against central differences, batched and unbatched, also where the
    kernel's span is the whole padded input (a 3-long axis with "valid")."""
    shape = GRAD_SHAPES[dims][which]
    inputs = [f64(a) for a in _conv_arrays(rng, dims, shape, groups, bias) if a is not None]
    call = lambda *t: CONV[dims](*t, stride=stride, padding=padding,         # noqa: E731
                                 dilation=dilation, groups=groups)
    spans = [d * (k - 1) + 1 for d, k in zip(_each(dilation, dims), KERNEL[dims])]
    if padding == "same":
        pads = [span - 1 for span in spans]
    else:
        pads = [2 * p for p in _each(0 if padding == "valid" else padding, dims)]
    if any(n + p < span for n, p, span in zip(shape[-dims:], pads, spans)):
        with pytest.raises(ValueError, match=f"conv{dims}d: padded input"):
            call(*inputs)
        return
    assert mg.gradcheck(call, inputs)


SECOND_SHAPES = {1: [(2, 2, 5), (4, 2, 3)], 2: [(1, 2, 4, 3), (4, 2, 2, 2)]}


@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("padding, groups", [(1, 1), ("same", 2)])
def test_conv_second_derivative(dims, padding, groups, rng):
    """create_graph records a backward whose own gradient is right: x ↦ ⟨u, ∂⟨v, y⟩/∂W⟩ and
    W ↦ ⟨u', ∂⟨v, y⟩/∂x⟩ (the cross terms; y is bilinear in x and W)."""
    x_shape, (c_out, c_in, *kernel) = SECOND_SHAPES[dims]
    x, w, b = (f64(rng.standard_normal(s))
               for s in [x_shape, (c_out, c_in // groups, *kernel), (c_out,)])
    conv = CONV[dims]
    v = mg.tensor(rng.standard_normal(conv(x, w, b, padding=padding, groups=groups).shape))
    u_x, u_w = (mg.tensor(rng.standard_normal(t.shape)) for t in (x, w))

    def projected(x, w, b):
        y = conv(x, w, b, padding=padding, groups=groups)
        gx, gw = mg.grad((y * v).sum(), [x, w], create_graph=True)
        return (gx * u_x).sum() + (gw * u_w).sum()
    assert mg.gradcheck(projected, (x, w, b), atol=1e-4)


@pytest.mark.parametrize("kernel, widths", [((4,), [(1, 2)]), ((4, 2), [(1, 2), (0, 1)])])
def test_conv_same_puts_the_odd_padding_after(kernel, widths, rng):
    """K = 4: "same" pads 1 before and 2 after, as PyTorch; kW = 2: 0 on the left, 1 on the
    right."""
    dims = len(kernel)
    x, w = rng.standard_normal((1, 1, 6, 5)[:dims + 2]), rng.standard_normal((1, 1) + kernel)
    y = CONV[dims](mg.tensor(x), mg.tensor(w), padding="same").numpy()
    padded = np.pad(x, [(0, 0), (0, 0)] + widths)
    np.testing.assert_allclose(y, conv_numpy(padded, w), rtol=1e-12)
    assert y.shape == x.shape


@pytest.mark.parametrize("dims", [1, 2])
def test_conv_takes_integer_input_in_the_weight_dtype(dims, rng):
    shape = (1, 2, 5, 3)[:dims + 2]
    x = np.arange(math.prod(shape)).reshape(shape)
    w = rng.standard_normal((3, 2, 2, 2)[:dims + 2])
    y = CONV[dims](mg.tensor(x), mg.tensor(w))
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.numpy(), conv_numpy(x.astype(float), w), rtol=1e-12)


# -- pooling -------------------------------------------------------------------------------

# (kernel_size, stride, padding, dilation, ceil_mode), for inputs of sizes 7 and 8 (one axis),
# (7, 6) and (6, 7) (two axes)
POOL_CASES = {
    1: [(2, None, 0, 1, False), (3, 2, 1, 1, False), (3, 2, 1, 1, True), (2, 2, 0, 1, True),
        (3, 1, 1, 2, False), (3, 2, 1, 2, True), (4, 3, 2, 1, True), (1, 1, 0, 1, False),
        ((3,), (2,), (1,), (1,), True)],
    2: [(2, None, 0, 1, False), (3, 2, 1, 1, True), ((3, 2), (2, 1), (1, 0), 1, False),
        ((2, 3), 2, (1, 1), (2, 1), True), (3, 1, 1, 2, False), (1, 1, 0, 1, False),
        ((4, 3), (3, 2), (2, 1), 1, True)]}
POOL_PARAMS = [(dims,) + case for dims in (1, 2) for case in POOL_CASES[dims]]
POOL_SHAPES = {1: [(2, 3, 7), (3, 8)], 2: [(2, 3, 7, 6), (3, 6, 7)]}


def _one(value):
    return value[0] if isinstance(value, tuple) else value


def _distinct(rng, shape):
    """Values 0.1 apart in random order: no ties, so the maxima stay put under differences."""
    return f64(rng.permutation(math.prod(shape)).reshape(shape) * 0.1)


@pytest.mark.parametrize("dims, k, s, p, d, ceil_mode", POOL_PARAMS)
@pytest.mark.parametrize("which", [0, 1])
def test_max_pool_values_and_indices_match_numpy(dims, which, k, s, p, d, ceil_mode, rng):
    x = rng.standard_normal(POOL_SHAPES[dims][which])
    y, indices = MAX_POOL[dims](mg.tensor(x), k, s, p, d, ceil_mode, return_indices=True)
    expected, expected_indices = pool_numpy(x, "max", k, s, p, d, ceil_mode, dims=dims)
    np.testing.assert_array_equal(y.numpy(), expected)
    np.testing.assert_array_equal(indices.numpy(), expected_indices)
    assert indices.dtype == np.int64 and not indices.requires_grad
    np.testing.assert_array_equal(MAX_POOL[dims](mg.tensor(x), k, s, p, d, ceil_mode).numpy(),
                                  expected)


@pytest.mark.parametrize("dims, k, s, p, d, ceil_mode", POOL_PARAMS)
def test_max_pool_gradcheck(dims, k, s, p, d, ceil_mode, rng):
    """Away from ties, the gradient is that of the maxima."""
    x = _distinct(rng, {1: (2, 3, 7), 2: (1, 2, 7, 6)}[dims])
    assert mg.gradcheck(lambda t: MAX_POOL[dims](t, k, s, p, d, ceil_mode), [x])


AVG_PARAMS = [(dims, k, s, p, ceil_mode, divisor)
              for dims, k, s, p, d, ceil_mode in POOL_PARAMS if _one(d) == 1
              for divisor in ([None] if dims == 1 else [None, 3])]


def _avg_options(dims, divisor):
    """avg_pool1d has no divisor_override."""
    return {} if dims == 1 else {"divisor_override": divisor}


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("dims, k, s, p, ceil_mode, divisor", AVG_PARAMS)
@pytest.mark.parametrize("which", [0, 1])
def test_avg_pool_matches_numpy(dims, which, k, s, p, ceil_mode, count_include_pad, divisor,
                                rng):
    x = rng.standard_normal(POOL_SHAPES[dims][which])
    y = AVG_POOL[dims](mg.tensor(x), k, s, p, ceil_mode, count_include_pad,
                       **_avg_options(dims, divisor))
    expected, _ = pool_numpy(x, "avg", k, s, p, 1, ceil_mode, count_include_pad, divisor,
                             dims=dims)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("dims, k, s, p, ceil_mode, divisor",
                         [(1, 3, 2, 1, True, None), (1, 4, 3, 2, True, None),
                          (1, 2, None, 0, False, None), (2, 3, 2, 1, True, None),
                          (2, (4, 3), (3, 2), (2, 1), True, -2), (2, (2, 1), 1, 0, False, None)])
def test_avg_pool_gradcheck(dims, k, s, p, ceil_mode, count_include_pad, divisor, rng):
    x = f64(rng.standard_normal({1: (2, 3, 7), 2: (1, 2, 7, 6)}[dims]))
    options = _avg_options(dims, divisor)
    assert mg.gradcheck(lambda t: AVG_POOL[dims](t, k, s, p, ceil_mode, count_include_pad,
                                                 **options), [x])


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


def test_max_pool2d_ties_nan_and_padding_follow_row_major_order():
    """Within a window, row 0 is scanned before row 1: the first maximum in that order gets
    the index and the gradient, the last NaN wins, and a window of −inf elements picks its
    first real one (index h·W + w), never the padding, as PyTorch."""
    x = f64([[[1.0, 2.0], [2.0, 0.0]]])                      # (C, H, W) = (1, 2, 2)
    y, indices = F.max_pool2d(x, 2, return_indices=True)
    y.sum().backward()
    np.testing.assert_array_equal(indices.numpy(), [[[1]]])
    np.testing.assert_array_equal(x.grad.numpy(), [[[0.0, 1.0], [0.0, 0.0]]])
    _, at_nan = F.max_pool2d(f64([[[np.nan, 1.0], [np.nan, 0.0]]]), 2, return_indices=True)
    np.testing.assert_array_equal(at_nan.numpy(), [[[2]]])
    z, at = F.max_pool2d(f64(np.full((1, 3, 3), -np.inf)), 3, stride=2, padding=1,
                         return_indices=True)
    np.testing.assert_array_equal(z.numpy(), np.full((1, 2, 2), -np.inf))
    np.testing.assert_array_equal(at.numpy(), [[[0, 1], [3, 4]]])


@pytest.mark.parametrize("shape", [(1, 2, 5), (1, 2, 3, 4)])
def test_max_pool_gradient_differentiates_as_a_routing(shape, rng):
    """Under create_graph, ∂L/∂x = route(g) sends each window's upstream gradient g to its
    chosen element: its derivative in g reads u back at those elements (the indices, flat
    within each plane), its derivative in x is zero."""
    x = _distinct(rng, shape)
    y, indices = MAX_POOL[len(shape) - 2](x, 2, stride=1, return_indices=True)
    g = f64(rng.standard_normal(y.shape))
    (gx,) = mg.grad((y * g).sum(), [x], create_graph=True)
    u = rng.standard_normal(x.shape)
    grad_g, grad_x = mg.grad((gx * mg.tensor(u)).sum(), [g, x], allow_unused=True)
    at = indices.numpy().reshape(1, 2, -1)
    np.testing.assert_array_equal(grad_g.numpy().reshape(1, 2, -1),
                                  np.take_along_axis(u.reshape(1, 2, -1), at, axis=-1))
    assert grad_x is None or not grad_x.numpy().any()


ADAPTIVE_CASES = [((7,), 3, (3,)), ((5,), 5, (5,)), ((3,), 7, (7,)), ((10,), 4, (4,)),
                  ((6,), 1, (1,)), ((7, 5), (3, 2), (3, 2)), ((4, 4), 4, (4, 4)),
                  ((3, 5), (7, 2), (7, 2)), ((6, 1), (4, 1), (4, 1)),
                  ((5, 6), (None, 4), (5, 4))]


@pytest.mark.parametrize("spatial, size, sizes", ADAPTIVE_CASES)
def test_adaptive_avg_pool_matches_numpy_and_gradcheck(spatial, size, sizes, rng):
    dims = len(spatial)
    x = rng.standard_normal((2, 3) + spatial)
    expected = adaptive_numpy(x, sizes)
    np.testing.assert_allclose(ADAPTIVE[dims](mg.tensor(x), size).numpy(), expected,
                               rtol=1e-12)
    module = {1: nn.AdaptiveAvgPool1d, 2: nn.AdaptiveAvgPool2d}[dims](size)
    np.testing.assert_allclose(module(mg.tensor(x[0])).numpy(), expected[0], rtol=1e-12)
    assert mg.gradcheck(lambda t: ADAPTIVE[dims](t, size), [f64(x[:1])])


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
    (lambda: F.conv1d(_zeros(2, 3, 5), _zeros(4, 3, 3), stride=(1, 2)), ValueError,
     r"conv1d: stride must be an int or a 1-tuple of ints, got \(1, 2\)"),
    (lambda: F.conv2d(_zeros(2, 3, 5, 4), _zeros(4, 2, 3, 3)), ValueError,
     r"conv2d: input shape \(2, 3, 5, 4\) has 3 channels, but weight shape \(4, 2, 3, 3\)"),
    (lambda: F.conv2d(_zeros(2, 3, 5, 4), _zeros(4, 3, 3)), ValueError,
     r"conv2d: weight must be 4-D \(C_out, C_in/groups, kH, kW\), got shape \(4, 3, 3\)"),
    (lambda: F.conv2d(_zeros(3, 5), _zeros(4, 3, 3, 3)), ValueError,
     r"conv2d: input must be \(N, C, H, W\) or unbatched \(C, H, W\), got shape \(3, 5\)"),
    (lambda: F.conv2d(_zeros(2, 3, 5, 4), _zeros(4, 3, 2, 5)), ValueError,
     r"conv2d: padded input width 4 .*\(2, 3, 5, 4\).* span .* 5 \(weight shape \(4, 3, 2, 5\)"),
    (lambda: F.conv2d(_zeros(2, 3, 5, 4), _zeros(4, 3, 3, 3), padding=(1, 2, 3)), ValueError,
     r"conv2d: padding must be an int or a 2-tuple of ints, got \(1, 2, 3\)"),
    (lambda: F.conv2d(_zeros(2, 3, 5, 4), _zeros(4, 3, 3, 3), stride=(1, 2), padding="same"),
     ValueError, r"conv2d: padding='same' is not supported with stride \(1, 2\)"),
    (lambda: F.conv2d(_zeros(2, 4, 5, 4), _zeros(3, 2, 3, 3), groups=2), ValueError,
     r"conv2d: weight shape \(3, 2, 3, 3\) has 3 output channels, which groups=2"),
    (lambda: F.conv2d(_zeros(2, 3, 5, 4), _zeros(4, 3, 3, 3), _zeros(4, 1)), ValueError,
     r"conv2d: bias shape \(4, 1\) must be \(C_out,\) = \(4,\)"),
    (lambda: F.conv2d(_zeros(2, 3, 5, 4), _zeros(4, 3, 3, 3), dilation=(1, 0)), ValueError,
     "conv2d: dilation must be >= 1, got 0"),
    (lambda: F.max_pool2d(_zeros(2, 3, 5, 5), (3, 2), padding=(1, 2)), ValueError,
     r"max_pool2d: padding should be at most half of kernel size, got padding=\(1, 2\) and "
     r"kernel_size=\(3, 2\)"),
    (lambda: F.max_pool2d(_zeros(2, 3, 5, 4), (2, 5)), ValueError,
     r"max_pool2d: input shape \(2, 3, 5, 4\) with kernel_size=\(2, 5\).* gives no output "
     r"position \(the padded width 4"),
    (lambda: F.max_pool2d(_zeros(3, 5), 2), ValueError,
     r"max_pool2d: input must be \(N, C, H, W\) or unbatched \(C, H, W\), got shape"),
    (lambda: F.max_pool2d(mg.zeros((2, 5, 5), dtype="int64"), 2), TypeError,
     "max_pool2d: input must be floating, got dtype int64"),
    (lambda: F.avg_pool2d(_zeros(2, 3, 5, 5), 2, divisor_override=0), ValueError,
     "avg_pool2d: divisor_override must not be zero"),
    (lambda: F.avg_pool2d(_zeros(2, 3, 5, 5), 2, divisor_override=2.5), TypeError,
     "avg_pool2d: divisor_override must be an int or None, got float 2.5"),
    (lambda: F.avg_pool2d(_zeros(2, 3, 5, 5), (2, 0)), ValueError,
     "avg_pool2d: kernel_size must be >= 1, got 0"),
    (lambda: F.adaptive_avg_pool2d(_zeros(2, 3, 5, 5), (2, 0)), ValueError,
     "adaptive_avg_pool2d: output_size must be >= 1, got 0"),
    (lambda: F.adaptive_avg_pool2d(_zeros(2, 3, 5, 5), (2, 2, 2)), ValueError,
     r"adaptive_avg_pool2d: output_size must be an int or a 2-tuple, got \(2, 2, 2\)"),
    (lambda: F.adaptive_avg_pool2d(_zeros(2, 3, 0, 5), 2), ValueError,
     r"adaptive_avg_pool2d: input shape \(2, 3, 0, 5\) has no position to average"),
    (lambda: nn.Conv2d(4, 6, (3, 2), groups=4), ValueError,
     "Conv2d: out_channels=6 must be divisible by groups=4"),
    (lambda: nn.Conv2d(4, 6, 3, padding_mode="mirror"), ValueError,
     "Conv2d: padding_mode must be one of"),
    (lambda: nn.Conv2d(4, 6, (3, 3, 3)), ValueError,
     r"Conv2d: kernel_size must be an int or a 2-tuple of ints, got \(3, 3, 3\)"),
    (lambda: nn.Conv2d(4, 6, 3, stride=(2, 1), padding="same"), ValueError,
     r"Conv2d: padding='same' is not supported with stride \(2, 1\)"),
    (lambda: nn.Conv2d(4, 6, 3)(_zeros(2, 3, 5, 5)), ValueError,
     r"conv2d: input shape \(2, 3, 5, 5\) has 3 channels"),
    (lambda: F.conv1d(_zeros(2, 0, 3), _zeros(2, 0, 2), _zeros(2)), ValueError,
     r"conv1d: weight shape \(2, 0, 2\) reads 0 input channels"),
    (lambda: F.conv2d(_zeros(0, 3, 3), _zeros(4, 0, 2, 2)), ValueError,
     r"conv2d: weight shape \(4, 0, 2, 2\) reads 0 input channels"),
    (lambda: nn.MaxPool2d((2, 0)), ValueError, "MaxPool2d: kernel_size must be >= 1, got 0"),
    (lambda: nn.AvgPool2d(2, divisor_override=0), ValueError,
     "AvgPool2d: divisor_override must not be zero"),
    (lambda: nn.AdaptiveAvgPool2d((0, 2)), ValueError,
     "AdaptiveAvgPool2d: output_size must be >= 1, got 0"),
]


@pytest.mark.parametrize("call, kind, message", ERRORS,
                         ids=[str(i) for i in range(len(ERRORS))])
def test_bad_input_raises_naming_the_operation_and_the_shapes(call, kind, message):
    with pytest.raises(kind, match=message):
        call()


# -- modules -------------------------------------------------------------------------------

@pytest.mark.parametrize("dims, options, kept", [
    (1, {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2}, ((3,), (2,), (1,), (2,))),
    (2, {"kernel_size": (3, 2), "stride": (2, 1), "padding": 1, "dilation": (2, 1)},
     ((3, 2), (2, 1), (1, 1), (2, 1)))])
def test_conv_module_parameters_state_dict_and_forward(dims, options, kept, rng):
    layer = {1: nn.Conv1d, 2: nn.Conv2d}[dims](4, 6, groups=2, **options)
    assert tuple(layer.weight.shape) == (6, 2) + kept[0] and tuple(layer.bias.shape) == (6,)
    assert list(layer.state_dict()) == ["weight", "bias"]
    assert (layer.kernel_size, layer.stride, layer.padding, layer.dilation) == kept
    assert layer.groups == 2 and layer.padding_mode == "zeros"
    x = rng.standard_normal((2, 4, 9, 7)[:dims + 2]).astype(np.float32)
    sd = layer.state_dict()
    expected = conv_numpy(x, sd["weight"], sd["bias"], kept[1], kept[2], kept[3], 2)
    np.testing.assert_allclose(layer(mg.tensor(x)).numpy(), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(layer(mg.tensor(x[1])).numpy(), expected[1], rtol=1e-5,
                               atol=1e-5)
    no_bias = {1: nn.Conv1d, 2: nn.Conv2d}[dims](4, 6, 3, bias=False)
    assert no_bias.bias is None and list(no_bias.state_dict()) == ["weight"]


@pytest.mark.parametrize("make", [lambda: nn.Conv1d(64, 128, 5, groups=4),
                                  lambda: nn.Conv2d(16, 128, (5, 4), groups=4)])
def test_conv_init_is_uniform_with_bound_one_over_sqrt_fan_in(make):
    mg.manual_seed(3)
    layer = make()                                         # fan_in = C_in/groups · ΠK = 80
    bound = 1 / math.sqrt(80)
    w, b = layer.weight.numpy(), layer.bias.numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # U(−a, a): standard deviation a/√3, mean 0; 10,240 samples
    assert abs(w.std() - bound / math.sqrt(3)) < 0.03 * bound
    assert abs(w.mean()) < 0.03 * bound
    assert np.abs(b).max() > 0.8 * bound                   # spread over the range, not zeros
    assert w.dtype == np.float32
    layer64 = type(layer)(2, 3, 2, dtype="float64")
    assert layer64.weight.dtype == np.float64 and layer64.bias.dtype == np.float64


@pytest.mark.parametrize("mode, numpy_mode", [("reflect", "reflect"), ("replicate", "edge"),
                                              ("circular", "wrap")])
@pytest.mark.parametrize("kernel, padding, widths", [
    (4, 2, [(2, 2)]), (4, "same", [(1, 2)]),
    ((4, 3), (2, 1), [(2, 2), (1, 1)]), ((4, 2), "same", [(1, 2), (0, 1)])])
def test_conv_padding_modes_pad_the_input_first(mode, numpy_mode, kernel, padding, widths, rng):
    dims = len(widths)
    layer = {1: nn.Conv1d, 2: nn.Conv2d}[dims](2, 3, kernel, padding=padding,
                                               padding_mode=mode).double()
    x = rng.standard_normal((2, 2, 6, 5)[:dims + 2])
    padded = np.pad(x, [(0, 0), (0, 0)] + widths, mode=numpy_mode)
    sd = layer.state_dict()
    np.testing.assert_allclose(layer(mg.tensor(x)).numpy(),
                               conv_numpy(padded, sd["weight"], sd["bias"]), rtol=1e-12)
    assert mg.gradcheck(lambda t: layer(t), [f64(x[:1])])


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


def test_2d_pool_modules_keep_the_options_as_given_and_call_the_functions(rng):
    pool = nn.MaxPool2d((3, 2), padding=1, dilation=(1, 2), return_indices=True,
                        ceil_mode=True)
    assert (pool.kernel_size, pool.stride, pool.padding, pool.dilation) == \
        ((3, 2), (3, 2), 1, (1, 2))
    x = rng.standard_normal((2, 3, 8, 7))
    y, indices = pool(mg.tensor(x[0]))
    expected, expected_indices = pool_numpy(x[0], "max", (3, 2), (3, 2), 1, (1, 2), True,
                                            dims=2)
    np.testing.assert_array_equal(y.numpy(), expected)
    np.testing.assert_array_equal(indices.numpy(), expected_indices)
    avg = nn.AvgPool2d(3, (2, 1), 1, ceil_mode=True, count_include_pad=False,
                       divisor_override=4)
    assert (avg.kernel_size, avg.stride, avg.padding, avg.divisor_override) == \
        (3, (2, 1), 1, 4)
    np.testing.assert_allclose(avg(mg.tensor(x)).numpy(),
                               pool_numpy(x, "avg", 3, (2, 1), 1, 1, True, False, 4,
                                          dims=2)[0], rtol=1e-12)
    assert nn.AvgPool2d(4).stride == 4 and nn.AvgPool2d(4).divisor_override is None
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
    assert repr(nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 0))).startswith(
        "Conv2d(4, 6, kernel_size=(3, 2), stride=(2, 1), padding=(1, 0))")
    assert repr(nn.Conv2d(4, 6, 3)).startswith("Conv2d(4, 6, kernel_size=(3, 3), stride=(1, 1))")
    assert repr(nn.MaxPool2d(3)) == \
        "MaxPool2d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.AvgPool2d((3, 2), 2, 1)) == "AvgPool2d(kernel_size=(3, 2), stride=2, padding=1)"
    assert repr(nn.AdaptiveAvgPool2d((None, 3))) == "AdaptiveAvgPool2d(output_size=(None, 3))"


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


# PyTorch's conv2d warns that an even kernel with "same" pads a copy of the input
@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("dims, stride, padding, dilation, groups, bias", CONV_PARAMS)
def test_conv_values_and_gradients_match_torch(dims, stride, padding, dilation, groups, bias,
                                               rng):
    torch = pytest.importorskip("torch")
    arrays = _conv_arrays(rng, dims, {1: (3, 4, 9), 2: (2, 4, 7, 6)}[dims], groups, bias)
    conv = getattr(torch.nn.functional, f"conv{dims}d")
    theirs = lambda x, w, b: conv(x, w, b, stride, padding, dilation, groups)      # noqa: E731
    ours = lambda x, w, b: CONV[dims](x, w, b, stride, padding, dilation, groups)  # noqa: E731
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


@pytest.mark.parametrize("dims, k, s, p, d, ceil_mode", POOL_PARAMS)
def test_pooling_values_indices_and_gradients_match_torch(dims, k, s, p, d, ceil_mode, rng):
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    x = rng.standard_normal({1: (2, 3, 8), 2: (2, 3, 8, 7)}[dims])
    x[0, 0, :4] = 0.5                                      # ties: the first maximum wins
    with_inf = x.copy()
    with_inf[1, 1, :3] = -np.inf                           # windows of −inf by the padding
    theirs = lambda t: getattr(TF, f"max_pool{dims}d")(t, k, s, p, d, ceil_mode)  # noqa: E731
    ours = lambda t: MAX_POOL[dims](t, k, s, p, d, ceil_mode)                     # noqa: E731
    out_shape = tuple(theirs(torch.tensor(x)).shape)
    weights = rng.standard_normal(out_shape)
    for values in (x, with_inf):
        with np.errstate(invalid="ignore"):                # Σ w·y of −inf maxima is NaN
            expected, (expected_grad,) = _torch_grads(torch, theirs, [values], weights)
            got, (grad,) = _our_grads(ours, [values], weights)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_allclose(grad, expected_grad, rtol=1e-14, atol=1e-15)  # sums' order
        _, indices = MAX_POOL[dims](mg.tensor(values), k, s, p, d, ceil_mode,
                                    return_indices=True)
        _, expected_indices = getattr(TF, f"max_pool{dims}d")(
            torch.tensor(values), k, s, p, d, ceil_mode, return_indices=True)
        np.testing.assert_array_equal(indices.numpy(), expected_indices.numpy())
    if _one(d) != 1:
        return
    for include, divisor in itertools.product((True, False), [None] if dims == 1 else [None, -3]):
        options = _avg_options(dims, divisor)
        theirs = lambda t: getattr(TF, f"avg_pool{dims}d")(                   # noqa: E731
            t, k, s, p, ceil_mode, include, **options)
        ours = lambda t: AVG_POOL[dims](t, k, s, p, ceil_mode, include, **options)  # noqa: E731
        expected, (expected_grad,) = _torch_grads(torch, theirs, [x], weights)
        got, (grad,) = _our_grads(ours, [x], weights)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(grad, expected_grad, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("size", [(3, 2), 4, (None, 3), (9, 1)])
def test_adaptive_avg_pool2d_values_and_gradients_match_torch(size, rng):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((2, 3, 7, 5))
    weights = rng.standard_normal(tuple(torch.nn.functional.adaptive_avg_pool2d(
        torch.tensor(x), size).shape))
    expected, (expected_grad,) = _torch_grads(
        torch, lambda t: torch.nn.functional.adaptive_avg_pool2d(t, size), [x], weights)
    got, (grad,) = _our_grads(lambda t: F.adaptive_avg_pool2d(t, size), [x], weights)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-12, atol=1e-15)


def test_modules_match_torch_reprs_init_and_padding_modes(rng):
    torch = pytest.importorskip("torch")
    pairs = [lambda lib: lib.Conv1d(4, 6, 3), lambda lib: lib.Conv1d(4, 6, 3, padding="same"),
             lambda lib: lib.Conv1d(4, 6, 3, 2, 1, 2, 2, False, "reflect"),
             lambda lib: lib.MaxPool1d(3, 2, 1, 2, ceil_mode=True),
             lambda lib: lib.AvgPool1d(3, 2, 1, True, False),
             lambda lib: lib.AdaptiveAvgPool1d(5),
             lambda lib: lib.Conv2d(4, 6, 3), lambda lib: lib.Conv2d(4, 6, (3, 2), padding="same"),
             lambda lib: lib.Conv2d(4, 6, (3, 2), (2, 1), (1, 0), 2, 2, False, "circular"),
             lambda lib: lib.MaxPool2d((3, 2), (2, 1), 1, 2, ceil_mode=True),
             lambda lib: lib.AvgPool2d(3, 2, 1, True, False, 4),
             lambda lib: lib.AvgPool2d((3, 2)),
             lambda lib: lib.AdaptiveAvgPool2d((None, 5))]
    for make in pairs:
        ours, theirs = repr(make(nn)), repr(make(torch.nn))
        assert ours.split("  #")[0] == theirs
    for mode in ("zeros", "reflect", "replicate", "circular"):
        for make, shape in ((lambda lib, **o: lib.Conv1d(2, 4, 3, padding=1, **o), (2, 2, 5)),
                            (lambda lib, **o: lib.Conv2d(2, 4, (3, 2), padding=(1, 2), **o),
                             (2, 2, 5, 4))):
            layer = make(nn, padding_mode=mode, dtype="float64")
            twin = make(torch.nn, padding_mode=mode, dtype=torch.float64)
            twin.load_state_dict({k: torch.tensor(v) for k, v in layer.state_dict().items()})
            x = rng.standard_normal(shape)
            np.testing.assert_allclose(layer(mg.tensor(x)).numpy(),
                                       twin(torch.tensor(x)).detach().numpy(), rtol=1e-12)


# -- three spatial axes: the same primitives, as conv3d, max_pool3d, avg_pool3d --------------

CONV3D_OPTIONS = [{}, {"stride": (2, 1, 2), "padding": 1, "dilation": (1, 2, 1), "groups": 2},
                  {"padding": "same", "groups": 2}]


@pytest.mark.parametrize("options", CONV3D_OPTIONS)
@pytest.mark.parametrize("batched", [True, False])
def test_conv3d_matches_numpy_and_gradchecks(options, batched, rng):
    groups = options.get("groups", 1)
    x = rng.standard_normal((1, 2, 3, 4, 3)[0 if batched else 1:])
    w, b = rng.standard_normal((2, 2 // groups, 2, 2, 2)), rng.standard_normal(2)
    got = F.conv3d(mg.tensor(x), mg.tensor(w), mg.tensor(b), **options)
    np.testing.assert_allclose(got.numpy(), conv_numpy(x, w, b, **options), rtol=1e-12,
                               atol=1e-12)
    assert mg.gradcheck(lambda x, w, b: F.conv3d(x, w, b, **options), (f64(x), f64(w), f64(b)))


@pytest.mark.parametrize("options", [{"kernel_size": 2},
                                     {"kernel_size": (3, 2, 2), "stride": 2, "padding": 1,
                                      "ceil_mode": True}])
def test_max_and_avg_pool3d_match_numpy_and_gradcheck(options, rng):
    x = _distinct(rng, (1, 2, 4, 3, 5)).numpy()
    values, indices = F.max_pool3d(mg.tensor(x), return_indices=True, **options)
    expected, expected_indices = pool_numpy(x, "max", dims=3, **options)
    np.testing.assert_array_equal(values.numpy(), expected)
    np.testing.assert_array_equal(indices.numpy(), expected_indices)
    assert mg.gradcheck(lambda t: F.max_pool3d(t, **options), (f64(x),))
    for include in (True, False):
        np.testing.assert_allclose(
            F.avg_pool3d(mg.tensor(x), count_include_pad=include, **options).numpy(),
            pool_numpy(x, "avg", count_include_pad=include, dims=3, **options)[0], rtol=1e-12)
        assert mg.gradcheck(lambda t: F.avg_pool3d(t, count_include_pad=include, **options),
                            (f64(x),))
    np.testing.assert_allclose(F.adaptive_avg_pool3d(mg.tensor(x), (2, 1, 3)).numpy(),
                               adaptive_numpy(x, (2, 1, 3)), rtol=1e-12)
    assert mg.gradcheck(lambda t: F.adaptive_avg_pool3d(t, (2, None, 2)), (f64(x),))


def test_3d_modules_hold_triples_and_call_the_functions(rng):
    conv = nn.Conv3d(2, 4, (2, 1, 3), stride=2, padding=(1, 0, 1), groups=2)
    assert conv.weight.shape == (4, 1, 2, 1, 3) and conv.bias.shape == (4,)
    assert (conv.kernel_size, conv.stride, conv.padding) == ((2, 1, 3), (2, 2, 2), (1, 0, 1))
    x = mg.tensor(rng.standard_normal((2, 2, 3, 4, 5)).astype(np.float32))
    np.testing.assert_array_equal(conv(x).numpy(), F.conv3d(
        x, conv.weight, conv.bias, stride=2, padding=(1, 0, 1), groups=2).numpy())
    np.testing.assert_array_equal(nn.MaxPool3d(2, 1)(x).numpy(), F.max_pool3d(x, 2, 1).numpy())
    np.testing.assert_array_equal(nn.AvgPool3d(2)(x).numpy(), F.avg_pool3d(x, 2).numpy())
    np.testing.assert_array_equal(nn.AdaptiveAvgPool3d(1)(x).numpy(),
                                  F.adaptive_avg_pool3d(x, 1).numpy())
    with pytest.raises(ValueError, match=r"conv3d: input must be \(N, C, D, H, W\) or "
                                         r"unbatched \(C, D, H, W\), got shape \(3, 4\)"):
        F.conv3d(mg.zeros(3, 4), conv.weight)
    with pytest.raises(ValueError, match=r"Conv3d: kernel_size must be an int or a 3-tuple"):
        nn.Conv3d(2, 4, (2, 2))


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("options", CONV3D_OPTIONS)
def test_3d_values_indices_and_gradients_match_torch(options, rng):
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    groups = options.get("groups", 1)
    arrays = [rng.standard_normal((2, 2, 4, 3, 5)),
              rng.standard_normal((4, 2 // groups, 2, 3, 2)), rng.standard_normal(4)]
    theirs = lambda x, w, b: TF.conv3d(x, w, b, **options)       # noqa: E731
    ours = lambda x, w, b: F.conv3d(x, w, b, **options)          # noqa: E731
    with torch.no_grad():
        weights = rng.standard_normal(tuple(theirs(*map(torch.tensor, arrays)).shape))
    expected, expected_grads = _torch_grads(torch, theirs, arrays, weights)
    got, grads = _our_grads(ours, arrays, weights)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    for g, e in zip(grads, expected_grads):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    x = arrays[0]
    x[0, 0, :2] = 0.5                                              # ties
    pool = {"kernel_size": (2, 3, 2), "stride": (1, 2, 2), "padding": 1, "ceil_mode": True}
    _, ours_i = F.max_pool3d(mg.tensor(x), return_indices=True, **pool)
    _, theirs_i = TF.max_pool3d(torch.tensor(x), return_indices=True, **pool)
    np.testing.assert_array_equal(ours_i.numpy(), theirs_i.numpy())
    for name, kwargs in (("max_pool3d", pool), ("avg_pool3d", pool),
                         ("adaptive_avg_pool3d", {"output_size": (3, None, 2)})):
        weights = rng.standard_normal(tuple(getattr(TF, name)(torch.tensor(x), **kwargs).shape))
        expected, (expected_grad,) = _torch_grads(
            torch, lambda t: getattr(TF, name)(t, **kwargs), [x], weights)
        got, (grad,) = _our_grads(lambda t: getattr(F, name)(t, **kwargs), [x], weights)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(grad, expected_grad, rtol=1e-12, atol=1e-14)
