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


# -- PyTorch's spellings of the Transformer layers: its meaning, or an error saying what to write

@pytest.mark.parametrize("make", [
    lambda: nn.TransformerEncoderLayer(8, nhead=2), lambda: nn.TransformerEncoderLayer(
        d_model=8, nhead=2), lambda: nn.TransformerDecoderLayer(8, nhead=2),
    lambda: nn.TransformerEncoder(8, nhead=2, dim_feedforward=16, num_layers=1),
    lambda: nn.TransformerDecoder(8, nhead=2, dim_feedforward=16, num_layers=1),
    lambda: nn.Transformer(8, nhead=2), lambda: nn.Transformer(nhead=2)])
def test_nhead_says_to_write_num_heads(make):
    with pytest.raises(TypeError, match=r"PyTorch's nhead= is spelled num_heads= here: write "
                                        r"num_heads=2"):
        make()


@pytest.mark.parametrize("stack, layer", [("TransformerEncoder", "TransformerEncoderLayer"),
                                          ("TransformerDecoder", "TransformerDecoderLayer")])
def test_stack_from_a_layer_says_what_to_write(stack, layer, rng):
    built = getattr(nn, layer)(8, 2, 16, dropout=0.0, norm_first=True)
    with pytest.raises(TypeError, match=rf"PyTorch's {stack}\(layer, num_layers\).*"
                                        rf"{stack}\(8, 2, 16, 3, dropout=0.0, norm_first=True\)"):
        getattr(nn, stack)(built, 3)
    with pytest.raises(TypeError, match=rf"{stack}\(8, 2, 16, 3, .*final_norm=True"):
        getattr(nn, stack)(built, num_layers=3, norm=nn.LayerNorm(8))
    with pytest.raises(TypeError, match=rf"{stack}: PyTorch's norm= .* is final_norm=True"):
        getattr(nn, stack)(8, 2, 16, 3, norm=nn.LayerNorm(8))
    # the call the message gives builds 3 such layers
    stack_module = getattr(nn, stack)(8, 2, 16, 3, dropout=0.0, norm_first=True)
    assert len(stack_module.layers) == 3
    assert {k: v.shape for k, v in stack_module.layers[0].state_dict().items()} == \
        {k: v.shape for k, v in built.state_dict().items()}
    with pytest.raises(TypeError, match=f"{stack}: missing the argument dim_feedforward"):
        getattr(nn, stack)(8, 2)


def _layer_calls(rng):
    """(name, module, call with extra keywords) for every Transformer module, float64."""
    src, tgt = _t(rng, 2, 5, 8), _t(rng, 2, 4, 8)
    make = dict(dropout=0.0)
    enc_layer = nn.TransformerEncoderLayer(8, 2, 16, **make).double()
    dec_layer = nn.TransformerDecoderLayer(8, 2, 16, **make).double()
    enc = nn.TransformerEncoder(8, 2, 16, 2, **make).double()
    dec = nn.TransformerDecoder(8, 2, 16, 2, **make).double()
    model = nn.Transformer(8, 2, 1, 1, 16, **make).double()
    return {
        "TransformerEncoderLayer": lambda *m, **kw: enc_layer(src, *m, **kw),
        "TransformerEncoder": lambda *m, **kw: enc(src, *m, **kw),
        "TransformerDecoderLayer": lambda *m, **kw: dec_layer(tgt, src, *m, **kw),
        "TransformerDecoder": lambda *m, **kw: dec(tgt, src, *m, **kw),
        "Transformer": lambda *m, **kw: model(src, tgt, *m, **kw),
    }


@pytest.mark.parametrize("name, keyword, ours", [
    ("TransformerEncoderLayer", "src_mask", "mask"),
    ("TransformerEncoderLayer", "src_key_padding_mask", "mask"),
    ("TransformerEncoder", "src_key_padding_mask", "mask"),
    ("TransformerDecoderLayer", "tgt_key_padding_mask", "tgt_mask"),
    ("TransformerDecoderLayer", "memory_key_padding_mask", "memory_mask"),
    ("TransformerDecoder", "tgt_key_padding_mask", "tgt_mask"),
    ("TransformerDecoder", "memory_key_padding_mask", "memory_mask"),
    ("Transformer", "src_key_padding_mask", "src_mask"),
    ("Transformer", "tgt_key_padding_mask", "tgt_mask"),
    ("Transformer", "memory_key_padding_mask", "memory_mask"),
])
def test_pytorch_mask_keywords_name_minigrads_and_its_convention(name, keyword, ours, rng):
    call = _layer_calls(rng)[name]
    with pytest.raises(TypeError, match=rf"{name}.forward: PyTorch's {keyword}= .* pass "
                                        rf"{ours}=\. minigrad's bool masks are True = attention "
                                        rf"allowed, PyTorch's True = masked"):
        call(**{keyword: np.zeros((2, 5), bool)})
    with pytest.raises(TypeError, match="unexpected keyword argument 'src_mask_'"):
        call(src_mask_=None)


def _allowed(rng, *shape):
    """A random bool mask, True = allowed, with the diagonal allowed (no empty row)."""
    mask = rng.random(shape) < 0.7
    mask[..., np.arange(min(shape[-2:])), np.arange(min(shape[-2:]))] = True
    return mask


@pytest.mark.parametrize("name, flag, mask_slot", [
    ("TransformerEncoderLayer", "is_causal", 0), ("TransformerEncoder", "is_causal", 0),
    ("TransformerDecoderLayer", "tgt_is_causal", 0), ("TransformerDecoder", "tgt_is_causal", 0),
    ("TransformerDecoderLayer", "memory_is_causal", 1),
    ("TransformerDecoder", "memory_is_causal", 1),
    ("Transformer", "src_is_causal", 0), ("Transformer", "tgt_is_causal", 1),
    ("Transformer", "memory_is_causal", 2),
])
def test_is_causal_applies_the_causal_mask(name, flag, mask_slot, rng):
    call = _layer_calls(rng)[name]
    # (Lq, Lk) of the attention the flag is about: sources of length 5, targets of length 4
    Lq, Lk = {"is_causal": (5, 5), "src_is_causal": (5, 5), "tgt_is_causal": (4, 4),
              "memory_is_causal": (4, 5)}[flag]
    causal = np.tril(np.ones((Lq, Lk), bool))
    slots = [None] * (mask_slot + 1)
    # alone: the causal mask itself
    slots[mask_slot] = causal
    expected = call(*slots).numpy()
    np.testing.assert_allclose(call(**{flag: True}).numpy(), expected, rtol=1e-12)
    # with a bool mask (True = allowed): both apply
    mask = _allowed(rng, 2, Lq, Lk)
    slots[mask_slot] = mask & causal
    expected = call(*slots).numpy()
    slots[mask_slot] = mask
    np.testing.assert_allclose(call(*slots, **{flag: True}).numpy(), expected, rtol=1e-12)
    slots[mask_slot] = mg.tensor(mask)
    np.testing.assert_allclose(call(*slots, **{flag: True}).numpy(), expected, rtol=1e-12)
    # a float mask is added to the scores: −inf above the diagonal on top of it
    bias = rng.standard_normal((Lq, Lk))
    slots[mask_slot] = np.where(causal, bias, -np.inf)
    expected = call(*slots).numpy()
    slots[mask_slot] = bias
    np.testing.assert_allclose(call(*slots, **{flag: True}).numpy(), expected, rtol=1e-12)
    # False and None change nothing; anything else is refused
    slots[mask_slot] = mask
    np.testing.assert_allclose(call(*slots, **{flag: False}).numpy(), call(*slots).numpy(),
                               rtol=1e-12)
    with pytest.raises(TypeError, match="is_causal must be a bool, got str 'True'"):
        call(**{flag: "True"})


def test_is_causal_matches_torch(rng):
    torch = pytest.importorskip("torch")
    from tests.nn.test_transformer import _torch_layer_state
    ours = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0).double()
    theirs = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True
                                              ).double().eval()
    theirs.load_state_dict({k: torch.tensor(v) for k, v in
                            _torch_layer_state(ours.state_dict(), cross=False).items()})
    x = rng.standard_normal((2, 5, 8))
    # PyTorch's is_causal is a hint that comes with the causal mask (True = masked)
    masked = torch.tensor(~np.tril(np.ones((5, 5), bool)))
    expected = theirs(torch.tensor(x), src_mask=masked, is_causal=True).detach().numpy()
    np.testing.assert_allclose(ours(mg.tensor(x), is_causal=True).numpy(), expected,
                               atol=1e-10)


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
