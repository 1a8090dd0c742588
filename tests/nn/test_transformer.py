"""Transformer layers, stacks, positional embeddings and the decoder-only LM, against NumPy
references written from the equations (post-LN and pre-LN), plus PyTorch parity."""

import numpy as np
import pytest

import minigrad as mg
import nn
from tests.nn import seq_reference as ref


def _f64(rng, *shape, requires_grad=False):
    return mg.tensor(rng.standard_normal(shape), dtype=np.float64, requires_grad=requires_grad)


def test_feed_forward_matches_numpy(rng):
    ff = nn.FeedForward(4, 6).double()
    x = _f64(rng, 2, 3, 4)
    sd = ff.state_dict()
    expected = np.maximum(x.numpy() @ sd["linear1.weight"].T + sd["linear1.bias"], 0) \
        @ sd["linear2.weight"].T + sd["linear2.bias"]
    np.testing.assert_allclose(ff(x).numpy(), expected, atol=1e-12)
    gelu = nn.FeedForward(4, 6, activation="gelu").double()
    assert not np.allclose(gelu(x).numpy(), nn.FeedForward(4, 6).double()(x).numpy())
    with pytest.raises(ValueError, match="FeedForward: activation must be one of"):
        nn.FeedForward(4, 6, activation="swish")


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_encoder_layer_matches_numpy(norm_first, rng):
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, norm_first=norm_first).double()
    x = _f64(rng, 2, 5, 4)
    mask = nn.causal_mask(5)
    expected = ref.encoder_layer(x.numpy(), layer.state_dict(), 2, norm_first,
                                 mask.numpy())
    np.testing.assert_allclose(layer(x, mask).numpy(), expected, atol=1e-12)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_decoder_layer_matches_numpy(norm_first, rng):
    layer = nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0, norm_first=norm_first).double()
    tgt, memory = _f64(rng, 2, 3, 4), _f64(rng, 2, 5, 4)
    memory_mask = rng.random((2, 3, 5)) < 0.8
    memory_mask[..., 0] = True
    out = layer(tgt, memory, nn.causal_mask(3), memory_mask)
    expected = ref.decoder_layer(tgt.numpy(), memory.numpy(), layer.state_dict(), 2, norm_first,
                                 np.tril(np.ones((3, 3), bool)), memory_mask)
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-12)


def test_layer_gradchecks(rng):
    enc = nn.TransformerEncoderLayer(4, 2, 4, dropout=0.0, norm_first=True).double()
    dec = nn.TransformerDecoderLayer(4, 2, 4, dropout=0.0).double()
    x, memory = _f64(rng, 1, 3, 4, requires_grad=True), _f64(rng, 1, 2, 4, requires_grad=True)
    assert mg.gradcheck(lambda x: enc(x, nn.causal_mask(3)), (x,))
    assert mg.gradcheck(lambda x, m: dec(x, m, nn.causal_mask(3)), (x, memory))


def test_stacks_follow_the_pytorch_layout(rng):
    post = nn.TransformerEncoder(4, 2, 8, num_layers=2, dropout=0.0)
    pre = nn.TransformerEncoder(4, 2, 8, num_layers=2, dropout=0.0, norm_first=True)
    post_names, pre_names = list(post.state_dict()), list(pre.state_dict())
    assert "layers.1.self_attn.out_proj.weight" in post_names
    assert "layers.0.linear1.weight" in post_names and "layers.0.norm2.bias" in post_names
    assert not any(n.startswith("norm.") for n in post_names)
    assert pre_names[-2:] == ["norm.weight", "norm.bias"]
    dec = nn.TransformerDecoder(4, 2, 8, num_layers=1, norm_first=True)
    assert "layers.0.multihead_attn.q_proj.weight" in dec.state_dict()
    assert "layers.0.norm3.weight" in dec.state_dict() and "norm.weight" in dec.state_dict()


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_encoder_decoder_transformer_matches_numpy(norm_first, rng):
    model = nn.Transformer(4, 2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=6,
                           dropout=0.0, norm_first=norm_first).double()
    src, tgt = _f64(rng, 2, 5, 4), _f64(rng, 2, 3, 4)
    tgt_mask = nn.causal_mask(3)
    sd = model.state_dict()
    memory = src.numpy()
    for k in range(2):
        memory = ref.encoder_layer(memory, sd, 2, norm_first, prefix=f"encoder.layers.{k}.")
    # both stacks end with a LayerNorm, post-LN too, as PyTorch's nn.Transformer
    memory = ref.layer_norm(memory, sd["encoder.norm.weight"], sd["encoder.norm.bias"])
    y = tgt.numpy()
    for k in range(2):
        y = ref.decoder_layer(y, memory, sd, 2, norm_first, tgt_mask.numpy(),
                              prefix=f"decoder.layers.{k}.")
    y = ref.layer_norm(y, sd["decoder.norm.weight"], sd["decoder.norm.bias"])
    np.testing.assert_allclose(model(src, tgt, tgt_mask=tgt_mask).numpy(), y, atol=1e-11)


def test_dropout_in_layers_only_in_training(rng):
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.3).double()
    x = _f64(rng, 2, 3, 4)
    train_out = layer(x).numpy()
    layer.eval()
    eval_a, eval_b = layer(x).numpy(), layer(x).numpy()
    np.testing.assert_array_equal(eval_a, eval_b)
    assert np.abs(train_out - eval_a).max() > 1e-4


def test_learned_positional_embedding(rng):
    pos = nn.LearnedPositionalEmbedding(6, 4).double()
    x = _f64(rng, 2, 3, 4, requires_grad=True)
    np.testing.assert_allclose(pos(x).numpy(), x.numpy() + pos.weight.numpy()[:3])
    pos(x).sum().backward()
    np.testing.assert_array_equal(pos.weight.grad.numpy()[:3], 2.0)   # summed over B = 2
    np.testing.assert_array_equal(pos.weight.grad.numpy()[3:], 0.0)
    with pytest.raises(ValueError, match="sequence length 7 exceeds max_len 6"):
        pos(mg.zeros(1, 7, 4))


# -- decoder-only language model -----------------------------------------------------------------

def _lm(**kwargs):
    mg.manual_seed(0)
    options = dict(vocab_size=11, d_model=8, num_heads=2, dim_feedforward=16, num_layers=2,
                   max_len=10, dropout=0.0)
    options.update(kwargs)
    return nn.TransformerLM(**options)


def test_lm_logits_shape_and_causality(rng):
    lm = _lm().double()
    tokens = rng.integers(0, 11, size=(2, 7))
    logits = lm(tokens)
    assert logits.shape == (2, 7, 11)
    changed = tokens.copy()
    changed[:, 4:] = (changed[:, 4:] + 1) % 11             # change the future of position 3
    np.testing.assert_allclose(lm(changed).numpy()[:, :4], logits.numpy()[:, :4], atol=1e-12)
    assert np.abs(lm(changed).numpy()[:, 4:] - logits.numpy()[:, 4:]).max() > 1e-6


def test_lm_matches_its_parts(rng):
    lm = _lm(positional="sinusoidal", activation="relu").double()
    tokens = rng.integers(0, 11, size=(2, 5))
    sd = lm.state_dict()
    x = sd["embed.weight"][tokens]
    t = np.arange(5)[:, None]
    i2 = np.arange(0, 8, 2)[None, :]
    pe = np.zeros((5, 8))
    pe[:, 0::2], pe[:, 1::2] = np.sin(t / 10000 ** (i2 / 8)), np.cos(t / 10000 ** (i2 / 8))
    x = x + pe
    for k in range(2):
        x = ref.encoder_layer(x, sd, 2, True, np.tril(np.ones((5, 5), bool)),
                              prefix=f"blocks.layers.{k}.")
    x = ref.layer_norm(x, sd["blocks.norm.weight"], sd["blocks.norm.bias"])
    expected = x @ sd["head.weight"].T + sd["head.bias"]
    np.testing.assert_allclose(lm(tokens).numpy(), expected, atol=1e-6)


def test_lm_generate_is_reproducible_and_keeps_the_prompt(rng):
    lm = _lm(dropout=0.1)
    prompt = rng.integers(0, 11, size=(3, 4))
    mg.manual_seed(5)
    a = lm.generate(prompt, max_new_tokens=9, temperature=0.8, top_k=5)
    mg.manual_seed(5)
    b = lm.generate(mg.tensor(prompt), max_new_tokens=9, temperature=0.8, top_k=5)
    assert a.shape == (3, 13) and a.dtype == np.int64
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(a.numpy()[:, :4], prompt)
    assert a.numpy().min() >= 0 and a.numpy().max() < 11
    assert lm.training                                      # mode restored after eval sampling
    mg.manual_seed(6)
    assert not np.array_equal(lm.generate(prompt, 9, temperature=0.8, top_k=5).numpy(),
                              a.numpy())


def test_lm_greedy_and_top1_pick_the_argmax(rng):
    lm = _lm()
    prompt = rng.integers(0, 11, size=(2, 3))
    greedy = lm.generate(prompt, max_new_tokens=8, temperature=0.0).numpy()   # 11 > max_len
    top1 = lm.generate(prompt, max_new_tokens=8, top_k=1).numpy()
    np.testing.assert_array_equal(greedy, top1)
    lm.eval()
    for t in range(3, 11):
        context = greedy[:, max(0, t - 10):t]
        expected = lm(context).numpy()[:, -1].argmax(-1)
        np.testing.assert_array_equal(greedy[:, t], expected)


def test_lm_sampling_follows_the_softmax():
    """Sampled next tokens follow the model's next-token distribution."""
    lm = _lm(vocab_size=4, d_model=4, num_layers=1, dim_feedforward=4)
    prompt = np.zeros((2000, 1), dtype=np.int64)
    mg.manual_seed(1)
    sampled = lm.generate(prompt, max_new_tokens=1, temperature=1.0).numpy()[:, 1]
    lm.eval()
    probs = ref.softmax(lm(prompt[:1]).numpy()[0, -1].astype(np.float64))
    freq = np.bincount(sampled, minlength=4) / 2000
    # each frequency within 4 standard errors of its probability
    assert np.all(np.abs(freq - probs) <= 4 * np.sqrt(probs * (1 - probs) / 2000) + 1e-3), \
        (freq, probs)
    assert probs.min() > 0.02          # every token is likely enough for the check to mean much


# -- optional PyTorch parity ---------------------------------------------------------------------

def _torch_layer_state(sd, cross):
    """Our layer state dict with q/k/v packed into PyTorch's in_proj_weight / in_proj_bias."""
    out = {}
    attns = ("self_attn", "multihead_attn") if cross else ("self_attn",)
    for key, value in sd.items():
        if not key.startswith(attns):
            out[key] = value
    for attn in attns:
        out[f"{attn}.in_proj_weight"] = np.concatenate([sd[f"{attn}.{p}_proj.weight"]
                                                        for p in "qkv"])
        out[f"{attn}.in_proj_bias"] = np.concatenate([sd[f"{attn}.{p}_proj.bias"]
                                                      for p in "qkv"])
        out[f"{attn}.out_proj.weight"] = sd[f"{attn}.out_proj.weight"]
        out[f"{attn}.out_proj.bias"] = sd[f"{attn}.out_proj.bias"]
    return out


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_pytorch_parity_layers(norm_first, rng):
    torch = pytest.importorskip("torch")
    enc = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, norm_first=norm_first).double()
    t_enc = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                             norm_first=norm_first).double().eval()
    t_enc.load_state_dict({k: torch.tensor(v) for k, v in
                           _torch_layer_state(enc.state_dict(), cross=False).items()})
    x = rng.standard_normal((2, 5, 8))
    causal = np.tril(np.ones((5, 5), bool))
    expected = t_enc(torch.tensor(x), src_mask=torch.tensor(~causal)).detach().numpy()
    np.testing.assert_allclose(enc(mg.tensor(x), causal).numpy(), expected, atol=1e-10)

    dec = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, norm_first=norm_first).double()
    t_dec = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                             norm_first=norm_first).double().eval()
    t_dec.load_state_dict({k: torch.tensor(v) for k, v in
                           _torch_layer_state(dec.state_dict(), cross=True).items()})
    tgt = rng.standard_normal((2, 3, 8))
    expected = t_dec(torch.tensor(tgt), torch.tensor(x),
                     tgt_mask=torch.tensor(~np.tril(np.ones((3, 3), bool)))).detach().numpy()
    np.testing.assert_allclose(dec(mg.tensor(tgt), mg.tensor(x), nn.causal_mask(3)).numpy(),
                               expected, atol=1e-10)


# -- devices -------------------------------------------------------------------------------------

def test_sequence_layers_run_on_a_device_without_host_arrays(sim_device, rng):
    """Every hot path reaches arrays only through the device's array module: the same
    results (and gradients) on the simulated device as on the host."""
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    mask = np.tril(np.ones((5, 5), bool))

    def run(make, call):
        results = []
        for device in ("cpu", sim_device):
            mg.manual_seed(0)
            module = make().to(device)
            t = mg.tensor(x, device=device, requires_grad=True)
            out = call(module, t, device)
            (out * out).sum().backward()
            results.append([out.numpy(), t.grad.numpy()]
                           + [p.grad.numpy() for p in module.parameters()])
        for host, sim in zip(*results):
            np.testing.assert_allclose(sim, host, rtol=1e-5, atol=1e-6)

    run(lambda: nn.GRU(8, 4, num_layers=2), lambda m, t, d: m(t)[0])
    run(lambda: nn.GRU(8, 4), lambda m, t, d: m(t, return_gates=True)[2][0].z)
    run(lambda: nn.LSTM(8, 4), lambda m, t, d: m(t)[0])
    run(lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, norm_first=True),
        lambda m, t, d: m(t, mask))
    run(lambda: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0),
        lambda m, t, d: m(t[:, :3], t, nn.causal_mask(3, device=d), nn.padding_mask(
            [5, 2], device=d)))
    run(lambda: nn.AdditiveAttention(8, 8, 4), lambda m, t, d: m(t, t, t, mask)[0])
    run(lambda: nn.HardAttention("exact"), lambda m, t, d: m(t, t, t, mask)[0] + t)
    run(lambda: nn.SinusoidalPositionalEncoding(8, 16, mode="concat"), lambda m, t, d: m(t))
    lm = _lm().to(sim_device)
    mg.manual_seed(2)
    tokens = lm.generate(np.zeros((2, 2), dtype=np.int64), 4, top_k=3)
    assert tokens.device == sim_device and tokens.shape == (2, 6)


# -- gradients of the remaining modules ----------------------------------------------------------

def test_feed_forward_gradcheck(rng):
    ff = nn.FeedForward(3, 5, activation="gelu").double()
    x = _f64(rng, 2, 2, 3, requires_grad=True)
    assert mg.gradcheck(ff, (x,))
    w = rng.standard_normal((2, 2, 3))
    ref.check_parameter_gradients(ff, lambda: (ff(x) * w).sum())


@pytest.mark.parametrize("make", [
    lambda: nn.SinusoidalPositionalEncoding(4, max_len=8, base=100.0),
    lambda: nn.SinusoidalPositionalEncoding(4, max_len=8, mode="concat"),
    lambda: nn.LearnedPositionalEmbedding(8, 4)], ids=["sin-add", "sin-concat", "learned"])
def test_positional_encodings_gradcheck(make, rng):
    pos = make().double()
    x = _f64(rng, 2, 3, 4, requires_grad=True)
    assert mg.gradcheck(pos, (x,))
    if isinstance(pos, nn.LearnedPositionalEmbedding):
        w = rng.standard_normal((2, 3, 4))
        ref.check_parameter_gradients(pos, lambda: (pos(x) * w).sum())


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_encoder_decoder_stacks_gradcheck(norm_first, rng):
    model = nn.Transformer(4, 2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=4,
                           dropout=0.0, norm_first=norm_first).double()
    src, tgt = _f64(rng, 1, 3, 4, requires_grad=True), _f64(rng, 1, 2, 4, requires_grad=True)
    src_mask = np.array([True, True, False])                       # a padded source position
    assert mg.gradcheck(lambda s, t: model(s, t, src_mask=src_mask, tgt_mask=nn.causal_mask(2),
                                           memory_mask=src_mask), (src, tgt))


def test_lm_with_learned_positions_matches_its_parts_and_gradchecks(rng):
    lm = _lm(vocab_size=5, d_model=4, num_heads=2, dim_feedforward=4, num_layers=1,
             max_len=6, activation="relu").double()
    tokens = rng.integers(0, 5, size=(2, 4))
    sd = lm.state_dict()
    x = sd["embed.weight"][tokens] + sd["pos.weight"][:4]
    x = ref.encoder_layer(x, sd, 2, True, np.tril(np.ones((4, 4), bool)),
                          prefix="blocks.layers.0.")
    x = ref.layer_norm(x, sd["blocks.norm.weight"], sd["blocks.norm.bias"])
    np.testing.assert_allclose(lm(tokens).numpy(), x @ sd["head.weight"].T + sd["head.bias"],
                               atol=1e-12)
    targets = rng.integers(0, 5, size=(2, 4))
    ref.check_parameter_gradients(
        lm, lambda: nn.functional.cross_entropy(lm(tokens), targets, label_smoothing=0.1))
