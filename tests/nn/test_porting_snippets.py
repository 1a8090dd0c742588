"""PyTorch 2.x snippets ported to minigrad: each gives PyTorch's numbers or raises.

Every snippet below is written as a PyTorch user writes it (torch.nn → nn, torch.tensor →
mg.tensor). Weights and inputs come from formulas (`_fill`, `_inputs`), the same in both
libraries; the expected values in TORCH were printed by torch 2.x running the same snippet, so
the module passes without torch. Where torch is installed, `test_stored_values_are_torch's`
reruns the snippets in torch and compares with the stored numbers.
"""

import numpy as np
import pytest

import minigrad as mg
import nn
from nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def _fill(shape, k):
    n = int(np.prod(shape)) if shape else 1
    return (0.5 * np.sin(np.arange(n) * 0.37 + k)).reshape(shape)


def _inputs(shape, k):
    n = int(np.prod(shape))
    return (np.cos(np.arange(n) * 0.61 + k) * 1.3).reshape(shape)


def _torch_state(key):
    """PyTorch's state dict for module `key`: each tensor by formula from its name and place."""
    return {name: _fill(shape, len(name) + i)
            for i, (name, shape) in enumerate(TORCH_PARAMETERS[key])}


def _loaded(module, key):
    module = module.double()
    module.load_state_dict(_torch_state(key))     # PyTorch's names, in_proj_weight among them
    return module


def _t(a):
    return mg.tensor(np.asarray(a, dtype=np.float64))


def _close(got, key):
    np.testing.assert_allclose(np.asarray(got.numpy() if isinstance(got, mg.Tensor) else got),
                               TORCH[key], rtol=1e-9, atol=1e-11)


TORCH_PARAMETERS = {   # each module's PyTorch state-dict names and shapes, in order
    "mha":
        [("in_proj_weight", (12, 4)), ("in_proj_bias", (12,)), ("out_proj.weight", (4, 4)),
        ("out_proj.bias", (4,))],
    "mha2":
        [("q_proj_weight", (4, 4)), ("k_proj_weight", (4, 3)), ("v_proj_weight", (4, 2)),
        ("in_proj_bias", (12,)), ("out_proj.weight", (4, 4)), ("out_proj.bias", (4,))],
    "gru":
        [("weight_ih_l0", (9, 2)), ("weight_hh_l0", (9, 3)), ("bias_ih_l0", (9,)), ("bias_hh_l0",
        (9,)), ("weight_ih_l0_reverse", (9, 2)), ("weight_hh_l0_reverse", (9, 3)),
        ("bias_ih_l0_reverse", (9,)), ("bias_hh_l0_reverse", (9,))],
    "rnn":
        [("weight_ih_l0", (3, 2)), ("weight_hh_l0", (3, 3)), ("bias_ih_l0", (3,)), ("bias_hh_l0",
        (3,)), ("weight_ih_l1", (3, 3)), ("weight_hh_l1", (3, 3)), ("bias_ih_l1", (3,)),
        ("bias_hh_l1", (3,))],
    "lstmcell":
        [("weight_ih", (12, 2)), ("weight_hh", (12, 3)), ("bias_ih", (12,)), ("bias_hh", (12,))],
    "enc":
        [("self_attn.in_proj_weight", (12, 4)), ("self_attn.out_proj.weight", (4, 4)),
        ("linear1.weight", (6, 4)), ("linear2.weight", (4, 6)), ("norm1.weight", (4,)),
        ("norm2.weight", (4,))],
    "transformer":
        [("encoder.layers.0.self_attn.in_proj_weight", (12, 4)),
        ("encoder.layers.0.self_attn.in_proj_bias", (12,)),
        ("encoder.layers.0.self_attn.out_proj.weight", (4, 4)),
        ("encoder.layers.0.self_attn.out_proj.bias", (4,)), ("encoder.layers.0.linear1.weight",
        (6, 4)), ("encoder.layers.0.linear1.bias", (6,)), ("encoder.layers.0.linear2.weight", (4,
        6)), ("encoder.layers.0.linear2.bias", (4,)), ("encoder.layers.0.norm1.weight", (4,)),
        ("encoder.layers.0.norm1.bias", (4,)), ("encoder.layers.0.norm2.weight", (4,)),
        ("encoder.layers.0.norm2.bias", (4,)), ("encoder.norm.weight", (4,)),
        ("encoder.norm.bias", (4,)), ("decoder.layers.0.self_attn.in_proj_weight", (12, 4)),
        ("decoder.layers.0.self_attn.in_proj_bias", (12,)),
        ("decoder.layers.0.self_attn.out_proj.weight", (4, 4)),
        ("decoder.layers.0.self_attn.out_proj.bias", (4,)),
        ("decoder.layers.0.multihead_attn.in_proj_weight", (12, 4)),
        ("decoder.layers.0.multihead_attn.in_proj_bias", (12,)),
        ("decoder.layers.0.multihead_attn.out_proj.weight", (4, 4)),
        ("decoder.layers.0.multihead_attn.out_proj.bias", (4,)),
        ("decoder.layers.0.linear1.weight", (6, 4)), ("decoder.layers.0.linear1.bias", (6,)),
        ("decoder.layers.0.linear2.weight", (4, 6)), ("decoder.layers.0.linear2.bias", (4,)),
        ("decoder.layers.0.norm1.weight", (4,)), ("decoder.layers.0.norm1.bias", (4,)),
        ("decoder.layers.0.norm2.weight", (4,)), ("decoder.layers.0.norm2.bias", (4,)),
        ("decoder.layers.0.norm3.weight", (4,)), ("decoder.layers.0.norm3.bias", (4,)),
        ("decoder.norm.weight", (4,)), ("decoder.norm.bias", (4,))],
}

TORCH = {
    "l1":
        0.765931756848,
    "smooth_l1":
        [[0.347607002371, 0.866494144504, 0.982657422586], [0.654196281707, 0.06229414853,
        0.245072257372]],
    "huber":
        1.87459376175,
    "clip_total":
        2.575049292539,
    "clip_p":
        [-0.168071556219, -0.348141111329, -0.402634787444],
    "clip_q":
        [[-0.399833820507, -0.360373538614], [-0.19092509271, 0.04739079102]],
    "clipv_q":
        [[-0.1, -0.1], [-0.1, 0.04739079102]],
    "mha_out":
        [[[0.070456422694, -0.54097157935, -0.68594442756, -0.305851429961], [0.026867688805,
        -0.963779350501, -0.719029028564, 0.110956672155], [0.389503011152, -0.180630467916,
        -0.939645588149, -0.712199534113]], [[0.151684480664, -1.192232442631,
        -0.885274246378, 0.309262316368], [0.015203139891, -0.375069371679, -0.600605899413,
        -0.456278071679], [0.000190645977, -0.324078168538, -0.576346495055,
        -0.502869995617]]],
    "mha_w":
        [[[0.327904903885, 0.24350988962, 0.428585206495, 0.0, 0.0], [0.675677699146,
        0.144968329577, 0.179353971278, 0.0, 0.0], [0.020660823736, 0.694101243058,
        0.285237933206, 0.0, 0.0]], [[0.422512489391, 0.051675148187, 0.053816988841,
        0.471995373581, 0.0], [0.094876934686, 0.407922882415, 0.381537666804,
        0.115662516094, 0.0], [0.147692753596, 0.223739724991, 0.518252010832,
        0.110315510581, 0.0]]],
    "mha2_out":
        [[[-0.089901741139, -0.394990744289, -0.370054686147, 0.235859801565]], [[0.462500278997,
        -0.160787533944, -0.879985535209, -0.090815925678]], [[-0.844648177292,
        -0.72101734824, 0.325569026408, 0.688033069582]]],
    "mha2_w":
        [[[[0.612229409395, 0.039500072001, 0.348270518604, 0.0, 0.0], [0.075149626179,
        0.782468982633, 0.113103876996, 0.029277514192, 0.0], [0.190596494254,
        0.011639718524, 0.137733718227, 0.635505570302, 0.024524498693]], [[0.479909971112,
        0.022213290747, 0.497876738141, 0.0, 0.0], [0.043559248871, 0.912416398658,
        0.035119743422, 0.00890460905, 0.0], [0.15615869245, 0.011692739438, 0.19548367396,
        0.616203756185, 0.020461137968]]]],
    "gru_packed_out":
        [[[0.553495072338, 0.413522627346, 0.203728758532, 0.720635807742, 0.799388820814,
        0.597730602733], [0.733368684848, 0.643604546553, 0.311933780579, 0.345548145032,
        0.376010193461, 0.292902290403], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0,
        0.0, 0.0, 0.0]], [[0.197566670681, 0.141435756301, 0.068942721992, 0.747337315355,
        0.873459075372, 0.648231234095], [0.65711408109, 0.522821087736, 0.250777377815,
        0.747338521489, 0.826187628781, 0.617870093358], [0.823485699916, 0.743569068929,
        0.364041746628, 0.432715263629, 0.448220111116, 0.326477556552], [0.716539263772,
        0.61164969647, 0.147211112948, 0.070197507084, 0.005250935484, -0.009904994423]],
        [[-0.043346239003, -0.108783789324, -0.178167039525, 0.491613706417, 0.472238289212,
        0.193080686906], [0.073335825492, -0.021469685079, -0.085186158124, 0.569397096216,
        0.62903073721, 0.409693752184], [0.538716907384, 0.372121162821, 0.13509154121,
        0.523067478823, 0.531907657739, 0.358416301708], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]],
    "gru_packed_h":
        [[[0.733368684848, 0.643604546553, 0.311933780579], [0.716539263772, 0.61164969647,
        0.147211112948], [0.538716907384, 0.372121162821, 0.13509154121]], [[0.720635807742,
        0.799388820814, 0.597730602733], [0.747337315355, 0.873459075372, 0.648231234095],
        [0.491613706417, 0.472238289212, 0.193080686906]]],
    "rnn_out":
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
    "rnn_h":
        [[1.072962431844, 1.66290092808, 0.665944485638], [0.0, 0.0, 0.0]],
    "lstmcell_h":
        [0.393574636028, 0.20651311537, 0.049072199211],
    "lstmcell_c":
        [0.499949277288, 0.288897585175, 0.133187385159],
    "enc_out":
        [[[0.709160228509, 0.044707847886, -0.107102527524, -0.446787370357], [-0.17527149382,
        -0.678468906668, 0.158704951999, 0.462597415877], [0.737913579541, 0.024544790045,
        -0.158118249369, -0.414903462653]], [[-0.330019760208, -0.60528393205,
        0.581373324188, 0.203446520841], [-0.080523686291, -0.626822748466, -0.051203516319,
        0.519202840834], [0.618638808368, 0.14284036836, -0.032174784223, -0.506134680995]]],
    "transformer_out":
        [[[-0.455275090555, 0.764473137345, -0.127457464641, 0.415876960375], [-0.487838576784,
        0.777624302699, -0.004366772827, 0.32941941513], [-0.470420232119, 0.742301066686,
        -0.138503716482, 0.472214965991]], [[-0.449774079583, 0.784204725579,
        -0.088313608039, 0.348845558239], [-0.506029816376, 0.766074172648, 0.011301695893,
        0.35284455782], [-0.44631877688, 0.771931306307, -0.128479203984, 0.395961000348]]],
    "layer_norm":
        [[-1.336301914313, 0.267260382863, 1.06904153145]],
}


# -- losses and clipping ----------------------------------------------------------------------

def test_loss_modules():
    x, y = _t(_inputs((2, 3), 0)), _t(_inputs((2, 3), 1))
    _close(nn.L1Loss()(x, y), "l1")
    _close(nn.SmoothL1Loss(beta=0.5, reduction="none")(x, y), "smooth_l1")
    _close(nn.HuberLoss(delta=0.7, reduction="sum")(x, y), "huber")


def test_clip_grad_norm_and_value():
    p, q = nn.Parameter(_fill((3,), 0)), nn.Parameter(_fill((2, 2), 1))
    p.grad, q.grad = _t(_inputs((3,), 2)), _t(_inputs((2, 2), 3))
    total = nn.utils.clip_grad_norm_([p, q], 0.8)
    _close(total, "clip_total")
    assert total.item() == pytest.approx(TORCH["clip_total"])
    _close(p.grad, "clip_p")
    _close(q.grad, "clip_q")
    nn.utils.clip_grad_value_([p, q], 0.1)
    _close(q.grad, "clipv_q")


# -- attention --------------------------------------------------------------------------------

def test_multihead_attention_batch_first_key_padding_mask():
    mha = _loaded(nn.MultiheadAttention(4, 2, batch_first=True), "mha")
    q, kv = _t(_inputs((2, 3, 4), 4)), _t(_inputs((2, 5, 4), 5))
    key_padding_mask = mg.tensor(np.array([[False, False, False, True, True],
                                           [False, False, False, False, True]]))
    out, weights = mha(q, kv, kv, key_padding_mask=key_padding_mask)
    assert weights.shape == (2, 3, 5)                 # averaged over heads, PyTorch's default
    _close(out, "mha_out")
    _close(weights, "mha_w")


def test_multihead_attention_sequence_first_kdim_vdim_bool_mask_per_head():
    mha = _loaded(nn.MultiheadAttention(4, 2, kdim=3, vdim=2), "mha2")
    q, k, v = _t(_inputs((3, 1, 4), 6)), _t(_inputs((5, 1, 3), 7)), _t(_inputs((5, 1, 2), 8))
    attn_mask = np.triu(np.ones((3, 5), bool), k=3)   # True = not allowed, as PyTorch
    out, weights = mha(q, k, v, attn_mask=attn_mask, average_attn_weights=False)
    assert out.shape == (3, 1, 4) and weights.shape == (1, 2, 3, 5)
    _close(out, "mha2_out")
    _close(weights, "mha2_w")
    assert mha(q, k, v, attn_mask=attn_mask, need_weights=False)[1] is None


# -- recurrent layers -------------------------------------------------------------------------

def test_gru_packed_bidirectional():
    gru = _loaded(nn.GRU(2, 3, batch_first=True, bidirectional=True), "gru")
    packed = pack_padded_sequence(_t(_inputs((3, 4, 2), 9)), [2, 4, 3], batch_first=True,
                                  enforce_sorted=False)
    out, h = gru(packed)
    padded, lengths = pad_packed_sequence(out, batch_first=True)
    np.testing.assert_array_equal(lengths.numpy(), [2, 4, 3])
    _close(padded, "gru_packed_out")
    _close(h, "gru_packed_h")


def test_rnn_relu_unbatched():
    rnn = _loaded(nn.RNN(2, 3, num_layers=2, nonlinearity="relu", batch_first=False), "rnn")
    out, h = rnn(_t(_inputs((4, 2), 10)))
    assert out.shape == (4, 3) and h.shape == (2, 3)
    _close(out, "rnn_out")
    _close(h, "rnn_h")


def test_lstm_cell_unbatched():
    cell = _loaded(nn.LSTMCell(2, 3), "lstmcell")
    h, c = cell(_t(_inputs((2,), 11)), (_t(_inputs((3,), 12)), _t(_inputs((3,), 13))))
    _close(h, "lstmcell_h")
    _close(c, "lstmcell_c")


# -- Transformer ------------------------------------------------------------------------------

def test_transformer_encoder_layer_without_bias():
    layer = _loaded(nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, bias=False,
                                               batch_first=True), "enc")
    assert layer.norm1.bias is None and layer.linear1.bias is None
    _close(layer(_t(_inputs((2, 3, 4), 14))), "enc_out")


def test_transformer_has_pytorchs_final_norms():
    model = _loaded(nn.Transformer(4, 2, 1, 1, 6, dropout=0.0, batch_first=True),
                    "transformer")
    tgt_mask = nn.causal_mask(3)                      # minigrad's: True = allowed
    out = model(_t(_inputs((2, 4, 4), 15)), _t(_inputs((2, 3, 4), 16)), tgt_mask=tgt_mask)
    _close(out, "transformer_out")


# -- normalisation and dtypes -----------------------------------------------------------------

def test_layer_norm_of_integers_is_float32_with_pytorchs_values():
    out = nn.functional.layer_norm(mg.tensor([[1, 3, 4]]), (3,))   # torch needs floats here
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), TORCH["layer_norm"], rtol=1e-6)
    module = nn.LayerNorm(3)(mg.tensor([[1, 3, 4]]))
    np.testing.assert_allclose(module.numpy(), TORCH["layer_norm"], rtol=1e-6)
    assert nn.Linear(3, 2)(mg.tensor([[1, 3, 4]])).dtype == np.float32
    assert nn.Linear(3, 2).double()(mg.tensor([[1, 3, 4]])).dtype == np.float64


# -- calls that must raise, as in PyTorch -----------------------------------------------------

@pytest.mark.parametrize("call, error, match", [
    (lambda: nn.GRU(3, 5, batch_first="False"), TypeError, "GRU: batch_first must be a bool"),
    (lambda: nn.LSTM(3, 5, bias="False"), TypeError, "LSTM: bias must be a bool"),
    (lambda: nn.GRU(0, 5), ValueError, "GRU: input_size must be >= 1"),
    (lambda: nn.GRU("10", 5), TypeError, "GRU: input_size must be an int"),
    (lambda: nn.Linear("10", 3), TypeError, "Linear: in_features must be an int"),
    (lambda: nn.Linear(3, 4, bias="False"), TypeError, "Linear: bias must be a bool"),
    (lambda: nn.MultiheadAttention(0, 2), ValueError, "embed_dim must be >= 1"),
    (lambda: nn.MultiheadAttention(4, 2, bias="False"), TypeError, "bias must be a bool"),
    (lambda: nn.TransformerEncoderLayer(4, 2, 8, batch_first="False"), TypeError,
     "TransformerEncoderLayer: batch_first must be a bool"),
    (lambda: nn.TransformerDecoderLayer(0, 2, 8), ValueError, "d_model must be >= 1"),
    (lambda: nn.GRUCell(3, 0), ValueError, "GRUCell: hidden_size must be >= 1"),
    (lambda: nn.GRU(3, 5, 1, False), TypeError, "positional"),  # torch's 4th is bias
    (lambda: mg.randn(2.5), TypeError, "randn: sizes must be ints, got 2.5"),
    (lambda: nn.MultiheadAttention(4, 2)(mg.zeros(3, 1, 4), mg.zeros(3, 1, 4),
                                         mg.zeros(3, 1, 4), is_causal=True),
     ValueError, "is_causal"),
])
def test_refused_like_pytorch(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- the stored numbers are PyTorch's ---------------------------------------------------------

def test_stored_values_are_torchs():
    torch = pytest.importorskip("torch")
    T = lambda a: torch.tensor(np.asarray(a, dtype=np.float64))

    def load(module, key):
        module = module.double()
        module.load_state_dict({k: T(v) for k, v in _torch_state(key).items()})
        assert [(k, tuple(v.shape)) for k, v in module.state_dict().items()] == \
            [(k, tuple(s)) for k, s in TORCH_PARAMETERS[key]]
        return module

    def same(got, key):
        np.testing.assert_allclose(got.detach().numpy(), TORCH[key], rtol=1e-9, atol=1e-11)

    mha = load(torch.nn.MultiheadAttention(4, 2, batch_first=True), "mha")
    kv = T(_inputs((2, 5, 4), 5))
    out, w = mha(T(_inputs((2, 3, 4), 4)), kv, kv, key_padding_mask=torch.tensor(
        [[False, False, False, True, True], [False, False, False, False, True]]))
    same(out, "mha_out")
    same(w, "mha_w")
    gru = load(torch.nn.GRU(2, 3, batch_first=True, bidirectional=True), "gru")
    packed = torch.nn.utils.rnn.pack_padded_sequence(T(_inputs((3, 4, 2), 9)), [2, 4, 3],
                                                     batch_first=True, enforce_sorted=False)
    out, h = gru(packed)
    same(torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)[0], "gru_packed_out")
    same(h, "gru_packed_h")
    enc = load(torch.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, bias=False,
                                                batch_first=True), "enc")
    same(enc(T(_inputs((2, 3, 4), 14))), "enc_out")
    model = load(torch.nn.Transformer(4, 2, 1, 1, 6, dropout=0.0, batch_first=True),
                 "transformer")
    same(model(T(_inputs((2, 4, 4), 15)), T(_inputs((2, 3, 4), 16)),
               tgt_mask=model.generate_square_subsequent_mask(3)), "transformer_out")
    x, y = T(_inputs((2, 3), 0)), T(_inputs((2, 3), 1))
    same(torch.nn.HuberLoss(delta=0.7, reduction="sum")(x, y), "huber")
