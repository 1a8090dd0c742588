"""The added operations against PyTorch itself (skipped without torch): values, gradients,
result dtypes for float32 and integer inputs, and the conventions at kinks and ties. The
NumPy references in the other tests are the primary check; this one guards the PyTorch
conventions the docs promise."""

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

# name: (minigrad, torch, kind of inputs); kinds: "real", "unit" (|x| < 1), "positive",
# "pair" (two reals), "pair_nonzero" (a divisor away from 0)
CASES = {
    "sin": (mg.sin, torch.sin, "real"), "tan": (mg.tan, torch.tan, "unit"),
    "asin": (mg.asin, torch.asin, "unit"), "acosh": (lambda x: mg.acosh(x + 2),
                                                     lambda x: torch.acosh(x + 2), "positive"),
    "atanh": (mg.atanh, torch.atanh, "unit"), "log1p": (mg.log1p, torch.log1p, "positive"),
    "expm1": (mg.expm1, torch.expm1, "real"), "exp2": (mg.exp2, torch.exp2, "real"),
    "rsqrt": (mg.rsqrt, torch.rsqrt, "positive"), "erf": (mg.erf, torch.erf, "real"),
    "erfc": (mg.erfc, torch.erfc, "real"), "silu": (mg.silu, torch.nn.functional.silu, "real"),
    "mish": (mg.mish, torch.nn.functional.mish, "real"),
    "gelu": (mg.gelu, torch.nn.functional.gelu, "real"),
    "gelu_tanh": (lambda x: mg.gelu(x, approximate="tanh"),
                  lambda x: torch.nn.functional.gelu(x, approximate="tanh"), "real"),
    "softplus": (lambda x: mg.softplus(x, 2.0, 1.0),
                 lambda x: torch.nn.functional.softplus(x, 2.0, 1.0), "real"),
    "elu": (lambda x: mg.elu(x, 0.5), lambda x: torch.nn.functional.elu(x, 0.5), "real"),
    "celu": (lambda x: mg.celu(x, 2.0), lambda x: torch.nn.functional.celu(x, 2.0), "real"),
    "selu": (mg.selu, torch.nn.functional.selu, "real"),
    "hardswish": (lambda x: mg.hardswish(3 * x), lambda x: torch.nn.functional.hardswish(3 * x),
                  "real"),
    "hardsigmoid": (lambda x: mg.hardsigmoid(3 * x),
                    lambda x: torch.nn.functional.hardsigmoid(3 * x), "real"),
    "logsigmoid": (mg.logsigmoid, torch.nn.functional.logsigmoid, "real"),
    "softsign": (mg.softsign, torch.nn.functional.softsign, "real"),
    "cumsum": (lambda x: mg.cumsum(x, 1), lambda x: torch.cumsum(x, 1), "real"),
    "cumprod": (lambda x: mg.cumprod(x, 0), lambda x: torch.cumprod(x, 0), "real"),
    "logcumsumexp": (lambda x: mg.logcumsumexp(x, 1), lambda x: torch.logcumsumexp(x, 1),
                     "real"),
    "prod": (lambda x: mg.prod(x, 1), lambda x: torch.prod(x, 1), "real"),
    "std_mean": (lambda x: mg.std_mean(x, 1, correction=1)[0],
                 lambda x: torch.std_mean(x, 1)[0], "real"),
    "roll": (lambda x: mg.roll(x, (1, -2), (0, 1)), lambda x: torch.roll(x, (1, -2), (0, 1)),
             "real"),
    "tril": (lambda x: mg.tril(x, -1), lambda x: torch.tril(x, -1), "real"),
    "diagonal": (lambda x: mg.diagonal(x, 1), lambda x: torch.diagonal(x, 1), "real"),
    "tile": (lambda x: mg.tile(x, (2, 1)), lambda x: x.repeat(2, 1), "real"),
    "repeat_interleave": (lambda x: mg.repeat_interleave(x, 2, 1),
                          lambda x: torch.repeat_interleave(x, 2, 1), "real"),
    "unfold": (lambda x: x.unfold(1, 2, 1), lambda x: x.unfold(1, 2, 1), "real"),
    "sort_desc": (lambda x: mg.sort(x, 1, descending=True).values,
                  lambda x: torch.sort(x, 1, descending=True)[0], "real"),
    "topk": (lambda x: mg.topk(x, 2)[0], lambda x: torch.topk(x, 2)[0], "real"),
    "kthvalue": (lambda x: mg.kthvalue(x, 2)[0], lambda x: torch.kthvalue(x, 2)[0], "real"),
    "einsum": (lambda x: mg.einsum("ij,kj->ik", x, x), lambda x: torch.einsum("ij,kj->ik", x, x),
               "real"),
    "softmin": (lambda x: mg.softmin(x, 1), lambda x: torch.nn.functional.softmin(x, 1),
                "real"),
    "atan2": (mg.atan2, torch.atan2, "pair"), "hypot": (mg.hypot, torch.hypot, "pair"),
    "logaddexp": (mg.logaddexp, torch.logaddexp, "pair"),
    "lerp": (lambda a, b: mg.lerp(a, b, 0.3), lambda a, b: torch.lerp(a, b, 0.3), "pair"),
    "fmod": (mg.fmod, torch.fmod, "pair_nonzero"),
    "remainder": (mg.remainder, torch.remainder, "pair_nonzero"),
    "copysign": (mg.copysign, torch.copysign, "pair_nonzero"),
}


def _inputs(kind, rng):
    shape = (3, 4)
    if kind == "unit":
        return [rng.uniform(-0.9, 0.9, shape)]
    if kind == "positive":
        return [rng.uniform(0.2, 2.0, shape)]
    if kind == "pair":
        return [rng.standard_normal(shape), rng.standard_normal(shape)]
    if kind == "pair_nonzero":
        return [3 * rng.standard_normal(shape),
                rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape)]
    return [rng.standard_normal(shape)]


@pytest.mark.parametrize("name", list(CASES))
def test_values_gradients_and_dtypes_match_torch(name, rng):
    ours, theirs, kind = CASES[name]
    arrays = _inputs(kind, rng)
    mine = [mg.tensor(a, requires_grad=True) for a in arrays]
    reference = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = ours(*mine), theirs(*reference)
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=1e-9, atol=1e-12)
    weights = rng.standard_normal(tuple(expected.shape))
    grads = mg.grad((out * mg.tensor(weights)).sum(), mine)
    expected_grads = torch.autograd.grad((expected * torch.tensor(weights)).sum(), reference)
    for g, e in zip(grads, expected_grads):
        # (rtol 1e-7: PyTorch's hardsigmoid scales by 1/6 rounded to float32, also in float64)
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-7, atol=1e-10)
    single = ours(*[mg.tensor(a.astype(np.float32)) for a in arrays])
    assert single.dtype == np.float32


def test_float_results_of_integers_have_torch_dtypes():
    i = mg.tensor([[1, 2], [3, 4]], dtype="int32")
    t = torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)
    pairs = [(i / 2, t / 2), (i / i, t / t), (mg.exp(i), torch.exp(t)),
             (mg.sqrt(i), torch.sqrt(t)), (i * 0.5, t * 0.5), (i ** 0.5, t ** 0.5),
             (i * mg.tensor(2.5), t * torch.tensor(2.5)), (i + mg.ones(2), t + torch.ones(2)),
             (mg.sin(i), torch.sin(t)), (i // 2, t // 2), (i % 3, t % 3), (mg.cumsum(i, 0),
                                                                            torch.cumsum(t, 0))]
    for k, (mine, theirs) in enumerate(pairs):
        assert str(mine.dtype) == str(theirs.dtype).replace("torch.", ""), k


def test_kink_conventions_match_torch():
    points = np.array([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0])
    for ours, theirs in [(lambda x: mg.leaky_relu(x, 0.1),
                          lambda x: torch.nn.functional.leaky_relu(x, 0.1)),
                         (mg.relu6, torch.nn.functional.relu6),
                         (mg.hardtanh, torch.nn.functional.hardtanh),
                         (mg.hardswish, torch.nn.functional.hardswish),
                         (mg.hardsigmoid, torch.nn.functional.hardsigmoid),
                         (mg.elu, torch.nn.functional.elu), (mg.selu, torch.nn.functional.selu),
                         (mg.floor, torch.floor), (mg.round, torch.round), (mg.sign, torch.sign)]:
        x, t = mg.tensor(points, requires_grad=True), torch.tensor(points, requires_grad=True)
        (g,) = mg.grad(ours(x).sum(), x)
        (e,) = torch.autograd.grad(theirs(t).sum(), t)
        np.testing.assert_allclose(g.numpy(), e.numpy())
    a = np.array([0.0, 0.0, -2.0, 2.0])
    b = np.array([2.0, -1.0, 0.5, 3.0])
    x, y = mg.tensor(a, requires_grad=True), mg.tensor(b, requires_grad=True)
    s, u = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    with np.errstate(all="ignore"):
        ours = mg.grad((x ** y).sum(), [x, y])
    theirs = torch.autograd.grad((s ** u).sum(), [s, u])
    for g, e in zip(ours, theirs):
        np.testing.assert_array_equal(g.numpy(), e.numpy())


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce_values_and_gradients_match_torch(reduce, include_self, rng):
    x, src = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    index = rng.integers(0, 4, (5, 3))
    mine = [mg.tensor(x, requires_grad=True), mg.tensor(src, requires_grad=True)]
    theirs = [torch.tensor(x, requires_grad=True), torch.tensor(src, requires_grad=True)]
    out = mg.scatter_reduce(mine[0], 0, index, mine[1], reduce, include_self=include_self)
    expected = theirs[0].scatter_reduce(0, torch.tensor(index), theirs[1], reduce,
                                        include_self=include_self)
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=1e-12)
    weights = rng.standard_normal((4, 3))
    grads = mg.grad((out * mg.tensor(weights)).sum(), mine)
    expected_grads = torch.autograd.grad((expected * torch.tensor(weights)).sum(), theirs)
    for g, e in zip(grads, expected_grads):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-10, atol=1e-12)


def test_creation_matches_torch():
    for n, m, offset in [(4, 4, 0), (3, 5, 1), (5, 3, -2), (1, 1, 0)]:
        np.testing.assert_array_equal(np.stack(mg.tril_indices(n, k=offset, m=m)),
                                      torch.tril_indices(n, m, offset).numpy())
    np.testing.assert_allclose(mg.logspace(-2, 3, 7).numpy(),
                               torch.logspace(-2, 3, 7).numpy(), rtol=1e-6)
    np.testing.assert_allclose(mg.logspace(0, 4, 5, base=2.0, dtype="float64").numpy(),
                               torch.logspace(0, 4, 5, base=2.0, dtype=torch.float64).numpy())
    assert mg.logspace(-2, 3, 7).dtype == np.float32
