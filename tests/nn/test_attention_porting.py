"""MultiHeadAttention's kdim/vdim, averaged weights and unbatched inputs; Transformer layers'
batch_first, unbatched inputs, bias=False and final norms; checkpoints that are not readable."""

import zipfile

import numpy as np
import pytest

import minigrad as mg
import nn


def _t(rng, *shape, grad=False):
    return mg.tensor(rng.standard_normal(shape), dtype=np.float64, requires_grad=grad)


def test_kdim_vdim_shapes_and_gradcheck(rng):
    mha = nn.MultiHeadAttention(4, 2, kdim=3, vdim=5).double()
    assert mha.k_proj.weight.shape == (4, 3) and mha.v_proj.weight.shape == (4, 5)
    q, k, v = _t(rng, 2, 3, 4, grad=True), _t(rng, 2, 6, 3, grad=True), _t(rng, 2, 6, 5,
                                                                            grad=True)
    out, weights = mha(q, k, v)
    assert out.shape == (2, 3, 4) and weights.shape == (2, 2, 3, 6)
    assert mg.gradcheck(lambda q, k, v: mha(q, k, v)[0], (q, k, v))
    with pytest.raises(ValueError, match=r"key \(B, Lk, 3\)"):
        mha(q, q, v)


def test_average_attn_weights_is_the_mean_over_heads_and_unbatched_drops_b(rng):
    mha = nn.MultiHeadAttention(4, 2).double()
    q, kv = _t(rng, 1, 3, 4), _t(rng, 1, 5, 4)
    out, per_head = mha(q, kv, kv)
    _, averaged = mha(q, kv, kv, average_attn_weights=True)
    np.testing.assert_allclose(averaged.numpy(), per_head.numpy().mean(axis=1), rtol=1e-12)
    single_out, single_w = mha(q[0], kv[0], kv[0])
    assert single_out.shape == (3, 4) and single_w.shape == (2, 3, 5)
    np.testing.assert_allclose(single_out.numpy(), out.numpy()[0], rtol=1e-12)


def test_pytorch_spelled_class_reads_masks_the_other_way(rng):
    ours = nn.MultiHeadAttention(4, 2).double()
    theirs = nn.MultiheadAttention(4, 2, batch_first=True).double()
    theirs.load_state_dict(ours.state_dict())
    q, kv = _t(rng, 2, 3, 4), _t(rng, 2, 5, 4)
    allowed = rng.random((3, 5)) < 0.7
    allowed[:, 0] = True
    expected = ours(q, kv, kv, mask=allowed)
    got = theirs(q, kv, kv, attn_mask=~allowed, average_attn_weights=False)
    np.testing.assert_allclose(got[0].numpy(), expected[0].numpy(), rtol=1e-12)
    np.testing.assert_allclose(got[1].numpy(), expected[1].numpy(), rtol=1e-12)
    padding = np.array([[False] * 4 + [True], [False] * 5])
    additive = np.where(padding, -np.inf, 0.0)[:, None, None, :]
    np.testing.assert_allclose(theirs(q, kv, kv, key_padding_mask=padding)[0].numpy(),
                               ours(q, kv, kv, mask=additive)[0].numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="add_bias_kv"):
        nn.MultiheadAttention(4, 2, add_bias_kv=True)


@pytest.mark.parametrize("kind", ["TransformerEncoderLayer", "TransformerDecoderLayer"])
def test_transformer_layers_batch_first_false_and_unbatched(kind, rng):
    layer = getattr(nn, kind)(4, 2, 6, dropout=0.0).double()
    seq_first = getattr(nn, kind)(4, 2, 6, dropout=0.0, batch_first=False).double()
    seq_first.load_state_dict(layer.state_dict())
    x, memory = _t(rng, 2, 3, 4), _t(rng, 2, 5, 4)
    args = (x,) if kind == "TransformerEncoderLayer" else (x, memory)
    expected = layer(*args).numpy()
    swapped = [a.swapaxes(0, 1) for a in args]
    np.testing.assert_allclose(seq_first(*swapped).numpy().swapaxes(0, 1), expected,
                               rtol=1e-12)
    np.testing.assert_allclose(layer(*[a[1] for a in args]).numpy(), expected[1], rtol=1e-12)


def test_bias_false_removes_every_bias_and_final_norms(rng):
    model = nn.Transformer(4, 2, 1, 1, 6, dropout=0.0, bias=False)
    assert not any(name.endswith("bias") for name in model.state_dict())
    assert "encoder.norm.weight" in model.state_dict()          # post-LN too, as PyTorch
    assert "decoder.norm.weight" in model.state_dict()
    post = nn.TransformerEncoder(4, 2, 6, 1, final_norm=True)
    assert "norm.weight" in post.state_dict()
    assert "norm.weight" not in nn.TransformerEncoder(4, 2, 6, 1, norm_first=True,
                                                      final_norm=False).state_dict()


def test_unreadable_checkpoint_entry_is_one_clear_line(tmp_path):
    nn.save({"a": np.arange(10.0)}, tmp_path / "ok.npz")
    with zipfile.ZipFile(tmp_path / "ok.npz") as good, \
            zipfile.ZipFile(tmp_path / "bad.npz", "w") as bad:
        for name in good.namelist():
            data = good.read(name)
            bad.writestr(name, bytes(range(200, 256)) * 4 if name == "a.npy" else data)
    with pytest.raises(ValueError) as caught:
        nn.load(tmp_path / "bad.npz")
    message = str(caught.value)
    assert "'a.npy' has no valid .npy header" in message
    assert message.isprintable() and "\\x" not in message
