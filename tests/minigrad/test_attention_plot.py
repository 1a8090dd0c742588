"""minigrad.viz.attention_map: panels, the values they show, token labels, the shared colour
scale, and clear errors (bad shapes, wrong label counts, matplotlib missing)."""

import sys

import numpy as np
import pytest

import minigrad as mg

pytest.importorskip("matplotlib")


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def images(figure):
    """(axes, image) of each heat-map panel, in panel order (colour bars excluded)."""
    return [(ax, ax.images[0]) for ax in figure.axes if ax.images]


def test_one_panel_per_head_shows_that_heads_weights_with_token_labels(rng):
    weights = softmax_rows(rng.standard_normal((3, 4, 5)))          # (heads, Lq, Lk)
    queries, keys = ["I", "love", "red", "pizza"], ["a", "b", "c", "d", "e"]
    figure = mg.viz.attention_map(mg.tensor(weights), queries, keys)
    panels = images(figure)
    assert len(panels) == 3
    for h, (ax, image) in enumerate(panels):
        np.testing.assert_allclose(image.get_array(), weights[h], rtol=1e-6)   # via float32
        assert [t.get_text() for t in ax.get_yticklabels()] == queries
        assert [t.get_text() for t in ax.get_xticklabels()] == keys
        assert ax.get_title() == f"head {h}"
        # one colour scale for all panels: 0 to the largest weight anywhere
        assert image.get_clim() == pytest.approx((0.0, weights.max()), rel=1e-6)
    assert len(figure.axes) == 3 + 1                                 # panels + one colour bar


def test_layers_and_heads_make_a_grid_and_leading_axes_are_named(rng):
    weights = softmax_rows(rng.standard_normal((2, 3, 4, 4)))       # (layers, heads, Lq, Lk)
    figure = mg.viz.attention_map(weights)
    panels = images(figure)
    assert [ax.get_title() for ax, _ in panels] == [f"layer {a}, head {b}" for a in range(2)
                                                    for b in range(3)]
    rows = {round(ax.get_position().y0, 3) for ax, _ in panels}
    assert len(rows) == 2                                           # one row per layer
    np.testing.assert_allclose(panels[4][1].get_array(), weights[1, 1])
    # no labels given: a few integer positions within the map
    ticks = panels[0][0].get_xticks()
    inside = ticks[(ticks >= -0.5) & (ticks <= 3.5)]
    assert len(inside) >= 2 and np.all(inside == np.round(inside))


def test_a_list_of_maps_of_different_sizes_with_labels_per_map(rng):
    maps = [softmax_rows(rng.standard_normal((2, 3))), softmax_rows(rng.standard_normal((4, 2)))]
    figure = mg.viz.attention_map(maps, [["x", "y"], ["p", "q", "r", "s"]],
                                  [["a", "b", "c"], ["u", "v"]], titles=["one", "two"],
                                  annotate=True)
    panels = images(figure)
    assert [ax.get_title() for ax, _ in panels] == ["one", "two"]
    np.testing.assert_allclose(panels[1][1].get_array(), maps[1])
    assert [t.get_text() for t in panels[1][0].get_yticklabels()] == ["p", "q", "r", "s"]
    # annotate writes each weight, to two decimals, in its cell
    assert sorted(t.get_text() for t in panels[0][0].texts) == sorted(
        f"{v:.2f}" for v in maps[0].ravel())


def test_draws_into_given_axes(rng):
    from matplotlib.figure import Figure
    figure = Figure()
    left, right = figure.subplots(1, 2)
    weights = softmax_rows(rng.standard_normal((2, 3, 3)))
    returned = mg.viz.attention_map(weights, axes=[left, right], vmax=1.0)
    assert returned is figure
    np.testing.assert_allclose(right.images[0].get_array(), weights[1])
    assert right.images[0].get_clim() == (0.0, 1.0)


def test_long_sequences_label_every_kth_token():
    weights = np.full((1, 100), 0.01)
    figure = mg.viz.attention_map(weights, key_labels=[f"t{i}" for i in range(100)])
    ax, _ = images(figure)[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[:3] == ["t0", "t3", "t6"] and len(labels) <= 40


def test_bad_input_raises_clear_errors(rng):
    with pytest.raises(ValueError, match=r"attention_map: weights must have shape \(\.\.\., Lq, "
                                         r"Lk\), got shape \(5,\)"):
        mg.viz.attention_map(np.ones(5))
    with pytest.raises(ValueError, match=r"attention_map: 3 query_labels for Lq = 4 \(a map of "
                                         r"shape \(4, 5\)\)"):
        mg.viz.attention_map(np.ones((4, 5)), ["a", "b", "c"])
    with pytest.raises(ValueError, match="attention_map: 2 key_labels for Lk = 5"):
        mg.viz.attention_map(np.ones((2, 4, 5)), key_labels=["a", "b"])
    with pytest.raises(ValueError, match="attention_map: got 1 titles for 2 panels"):
        mg.viz.attention_map(np.ones((2, 3, 3)), titles=["only one"])


def test_without_matplotlib_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)      # import matplotlib now fails
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        mg.viz.attention_map(np.ones((2, 2)))
