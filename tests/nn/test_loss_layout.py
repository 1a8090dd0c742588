"""Which axis cross_entropy and nll_loss read as the classes.

The class axis is the last (minigrad's (..., C)); `axis=1` reads PyTorch's (N, C, d1, ...).
Inputs of three or more axes that fit both layouts raise instead of silently picking one. The
expected numbers were printed by torch 2.x on the same inputs (formulas below), so the module
passes without torch; where torch is installed, the last test recomputes them.
"""

import numpy as np
import pytest

import minigrad as mg
import nn
from nn import functional as F


def _z(shape, k=0.0):
    n = int(np.prod(shape))
    return (np.cos(np.arange(n) * 0.61 + k) * 1.3).reshape(shape)


def _t(a, grad=False):
    return mg.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


SQUARE, SQUARE_T = _z((2, 3, 3)), np.array([[0, 2, 1], [1, 1, 0]])       # C == T: ambiguous
WIDE, WIDE_T = _z((2, 3, 4), 0.3), np.array([[0, 2, 1, 2], [1, 1, 0, 0]])  # (N, C, T), C != T
WEIGHT = np.array([0.5, 1.0, 2.0])
_q = np.abs(_z((2, 3, 4), 1.1))
PROBS = _q / _q.sum(1, keepdims=True)                                    # (N, C, T) over C
FOUR, FOUR_T = _z((2, 3, 2, 2), 0.7), np.array([[[0, 2], [1, 2]], [[1, 1], [0, 0]]])

# printed by torch 2.x: torch.nn.functional on the same float64 inputs
TORCH = {
    "square": 1.2285291115161876,
    "square_none": [[0.24952118761772207, 1.9035856642247437, 2.4192912368300337],
                    [0.8887925614562132, 1.6651170596968545, 0.24486695927155866]],
    "square_grad": [[[-0.03680437136360726, 0.12577343515838746, 0.08460512678196497],
                     [0.025362467949141064, 0.016054352053556986, -0.15183588930553196],
                     [0.011441903414466182, -0.14182778721194444, 0.067230762523567]],
                    [[0.08802333074434796, 0.12494285127093385, -0.036198553874838627],
                     [-0.09814135103231919, -0.13513858122048372, 0.017535956505473918],
                     [0.010118020287971239, 0.010195729949549877, 0.018662597369364712]]],
    "square_classes_last": 1.2093705410025037,           # on logits.permute(0, 2, 1)
    "wide_weight_smoothing": 1.384295602767427,
    "wide_ignore_sum": 12.565508987812713,
    "wide_probabilities": 1.4420143144075668,
    "wide_nll_none": [[0.473893986251685, 0.5854791672465204, 2.5208667457926004,
                       0.40857678025301586],
                      [2.725714692223127, 1.8796269087475483, 2.3286665650620324,
                       2.636740089735719]],
    "four_axes": 1.544216361037255,
}


def test_square_input_raises_and_names_both_layouts():
    with pytest.raises(ValueError, match=r"cross_entropy: input \(2, 3, 3\) and targets "
                                         r"\(2, 3\).*axis=-1 or axis=1"):
        F.cross_entropy(_t(SQUARE), SQUARE_T)
    with pytest.raises(ValueError, match="nll_loss: .*axis=-1 or axis=1"):
        F.nll_loss(_t(SQUARE), SQUARE_T)
    with pytest.raises(ValueError, match="axis=-1 or axis=1"):
        nn.CrossEntropyLoss()(_t(SQUARE), SQUARE_T)


def test_square_input_with_the_axis_said_gives_each_layouts_number():
    x = _t(SQUARE, grad=True)
    loss = F.cross_entropy(x, SQUARE_T, axis=1)
    np.testing.assert_allclose(loss.item(), TORCH["square"], rtol=1e-12)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), TORCH["square_grad"], rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(F.cross_entropy(_t(SQUARE), SQUARE_T, reduction="none",
                                               dim=1).numpy(), TORCH["square_none"], rtol=1e-12)
    np.testing.assert_allclose(nn.CrossEntropyLoss(axis=1)(_t(SQUARE), SQUARE_T).item(),
                               TORCH["square"], rtol=1e-12)
    for last in (-1, 2):
        np.testing.assert_allclose(F.cross_entropy(_t(SQUARE), SQUARE_T, axis=last).item(),
                                   TORCH["square_classes_last"], rtol=1e-12)


def test_pytorch_layout_alone_raises_until_axis_1_is_given():
    with pytest.raises(ValueError, match=r"targets \(2, 4\) fit input \(2, 3, 4\) with the "
                                         r"classes on axis 1.*pass axis=1"):
        F.cross_entropy(_t(WIDE), WIDE_T)
    with pytest.raises(ValueError, match="pass axis=1"):
        F.cross_entropy(_t(FOUR), FOUR_T)
    w = _t(WEIGHT)
    np.testing.assert_allclose(
        F.cross_entropy(_t(WIDE), WIDE_T, weight=w, label_smoothing=0.1, axis=1).item(),
        TORCH["wide_weight_smoothing"], rtol=1e-12)
    np.testing.assert_allclose(
        F.cross_entropy(_t(WIDE), WIDE_T, ignore_index=2, reduction="sum", axis=1).item(),
        TORCH["wide_ignore_sum"], rtol=1e-12)
    np.testing.assert_allclose(
        F.nll_loss(mg.log_softmax(_t(WIDE), axis=1), WIDE_T, reduction="none", axis=1).numpy(),
        TORCH["wide_nll_none"], rtol=1e-12)
    np.testing.assert_allclose(F.cross_entropy(_t(FOUR), FOUR_T, axis=1).item(),
                               TORCH["four_axes"], rtol=1e-12)


def test_probability_targets_of_three_axes_always_need_the_axis():
    with pytest.raises(ValueError, match="axis=-1 or axis=1"):
        F.cross_entropy(_t(WIDE), PROBS)
    np.testing.assert_allclose(
        F.cross_entropy(_t(WIDE), PROBS, label_smoothing=0.05, axis=1).item(),
        TORCH["wide_probabilities"], rtol=1e-12)
    # the same numbers with the classes moved last by hand
    moved = F.cross_entropy(_t(WIDE.transpose(0, 2, 1)), PROBS.transpose(0, 2, 1).copy(),
                            label_smoothing=0.05, axis=-1)
    np.testing.assert_allclose(moved.item(), TORCH["wide_probabilities"], rtol=1e-12)


def test_gradients_through_axis_1_match_finite_differences():
    assert mg.gradcheck(lambda v: F.cross_entropy(v, WIDE_T, label_smoothing=0.1, axis=1),
                        [_t(WIDE, grad=True)])
    assert mg.gradcheck(lambda v, p: F.cross_entropy(v, p, axis=1),
                        [_t(WIDE, grad=True), _t(PROBS, grad=True)])


def test_unambiguous_inputs_keep_the_last_axis_without_being_told():
    # (N, T, C) with targets (N, T): PyTorch would refuse these targets, so no reading differs
    x = _z((2, 4, 3))
    t = np.array([[0, 1, 2, 0], [2, 2, 1, 0]])
    flat = F.cross_entropy(_t(x.reshape(-1, 3)), t.reshape(-1)).item()
    np.testing.assert_allclose(F.cross_entropy(_t(x), t).item(), flat, rtol=1e-12)
    for shape in [(3,), (1,), (2, 3), (1, 1)]:           # one or two axes: both layouts agree
        targets = np.zeros(shape[:-1], dtype=np.int64)
        assert np.isfinite(F.cross_entropy(_t(_z(shape)), targets, axis=1 if len(shape) > 1
                                           else None).item())


@pytest.mark.parametrize("bad, error", [({"axis": 3}, ValueError), ({"axis": 1.0}, ValueError),
                                        ({"axis": 1, "dim": 1}, TypeError)])
def test_bad_axis_is_refused(bad, error):
    with pytest.raises(error, match="cross_entropy"):
        F.cross_entropy(_t(WIDE), WIDE_T, **bad)


def test_stored_values_are_torchs():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional

    def T(a):
        return torch.tensor(np.asarray(a, dtype=np.float64))

    square_t, wide_t = torch.tensor(SQUARE_T), torch.tensor(WIDE_T)
    got = {
        "square": TF.cross_entropy(T(SQUARE), square_t).item(),
        "square_none": TF.cross_entropy(T(SQUARE), square_t, reduction="none").tolist(),
        "square_classes_last": TF.cross_entropy(T(SQUARE).permute(0, 2, 1), square_t).item(),
        "wide_weight_smoothing": TF.cross_entropy(T(WIDE), wide_t, weight=T(WEIGHT),
                                                  label_smoothing=0.1).item(),
        "wide_ignore_sum": TF.cross_entropy(T(WIDE), wide_t, ignore_index=2,
                                            reduction="sum").item(),
        "wide_probabilities": TF.cross_entropy(T(WIDE), T(PROBS), label_smoothing=0.05).item(),
        "wide_nll_none": TF.nll_loss(TF.log_softmax(T(WIDE), 1), wide_t,
                                     reduction="none").tolist(),
        "four_axes": TF.cross_entropy(T(FOUR), torch.tensor(FOUR_T)).item(),
    }
    x = T(SQUARE).requires_grad_()
    TF.cross_entropy(x, square_t).backward()
    got["square_grad"] = x.grad.tolist()
    for key, value in got.items():
        np.testing.assert_allclose(value, TORCH[key], rtol=1e-12, err_msg=key)
