"""Transformer layers and stacks (Vaswani et al. 2017), with PyTorch's submodule names.

Post-LN (the original, norm_first=False) and pre-LN (norm_first=True):

    post-LN:  x = norm1(x + SA(x));        x = norm2(x + FF(x))
    pre-LN:   x = x + SA(norm1(x));        x = x + FF(norm2(x))

with SA = dropout(self-attention) and FF(x) = dropout(linear2(dropout(act(linear1(x))))).
The decoder layer adds cross-attention to the encoder's output (`memory`) between the two.
A pre-LN stack ends with a LayerNorm `norm`, since its residual stream is never normalised
otherwise; nn.Transformer's two stacks always end with one, as PyTorch's. Masks are bool,
True = attention allowed (see MultiHeadAttention).

Layers and stacks are batch-first by default (minigrad's convention; `batch_first=False` reads
(T, B, E) as PyTorch's default does) and accept unbatched (T, E) inputs; `bias=False` drops
the additive bias of every Linear and LayerNorm inside, as in PyTorch. PyTorch's other
spellings get its meaning (is_causal=True and the like apply the causal mask) or an error that
says what to write (nhead=, key padding masks, a stack built from a layer).

TransformerLM is the decoder-only design: token and position embeddings, a causal
self-attention stack, and a linear head to vocabulary logits.
"""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg
from minigrad import Tensor

from . import init
from ._checks import check_flag, check_probability, check_size
from .attention import MultiHeadAttention
from .attention_functional import causal_mask
from .layers import Dropout, Embedding, LayerNorm, Linear
from .module import Module, ModuleList
from .positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding

__all__ = ["FeedForward", "TransformerEncoderLayer", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerDecoder", "Transformer", "TransformerLM"]

_ACTIVATIONS = {"relu": mg.relu, "gelu": mg.gelu, "tanh": mg.tanh}


def _activation(name, owner: str):
    if callable(name):
        return name
    if name not in _ACTIVATIONS:
        raise ValueError(f"{owner}: activation must be one of {', '.join(_ACTIVATIONS)} or a "
                         f"callable, got {name!r}")
    return _ACTIVATIONS[name]


def _check_layer_options(owner: str, d_model, num_heads, dim_feedforward, dropout, norm_first,
                         bias, batch_first) -> None:
    """Refuse wrong types and sizes before any parameter is made (as PyTorch does)."""
    check_size(owner, "d_model", d_model)
    check_size(owner, "num_heads", num_heads)
    check_size(owner, "dim_feedforward", dim_feedforward)
    check_probability(owner, "dropout", dropout)
    for name, value in (("norm_first", norm_first), ("bias", bias),
                        ("batch_first", batch_first)):
        check_flag(owner, name, value)


def _check_heads(owner: str, num_heads, nhead) -> int:
    """num_heads, refusing PyTorch's spelling nhead= (one name per argument here)."""
    if nhead is not None:
        raise TypeError(f"{owner}: PyTorch's nhead= is spelled num_heads= here: write "
                        f"num_heads={nhead!r}")
    if num_heads is None:
        raise TypeError(f"{owner}: missing the argument num_heads (the number of attention "
                        f"heads)")
    return num_heads


def _check_stack_sizes(owner: str, d_model, num_heads, dim_feedforward, num_layers,
                       nhead, norm) -> int:
    """num_heads, after refusing PyTorch's TransformerEncoder(encoder_layer, num_layers,
    norm=None) form (which copies a built layer) with the call that builds the same stack
    here, nhead=, and missing sizes."""
    if isinstance(d_model, Module):
        layer = d_model
        depth = num_heads if num_layers is None else num_layers   # PyTorch's num_layers
        sizes = ""
        if isinstance(layer, (TransformerEncoderLayer, TransformerDecoderLayer)):
            sizes = (f"({layer.linear1.in_features}, {layer.self_attn.num_heads}, "
                     f"{layer.linear1.out_features}, {depth}, dropout={layer.dropout.p}, "
                     f"norm_first={layer.norm_first}) for this layer")
        raise TypeError(f"{owner}: got a {type(layer).__name__} as the first argument, as "
                        f"PyTorch's {owner}(layer, num_layers) takes it; minigrad's builds its "
                        f"layers from their sizes: write {owner}(d_model, num_heads, "
                        f"dim_feedforward, num_layers, dropout=..., norm_first=...), here "
                        f"{owner}{sizes or '(...)'}; a final LayerNorm (PyTorch's norm=) is "
                        f"final_norm=True")
    if norm is not None:
        raise TypeError(f"{owner}: PyTorch's norm= (a final norm module) is final_norm=True "
                        f"here, which adds LayerNorm(d_model) as `norm`")
    num_heads = _check_heads(owner, num_heads, nhead)
    for name, value in (("dim_feedforward", dim_feedforward), ("num_layers", num_layers)):
        if value is None:
            raise TypeError(f"{owner}: missing the argument {name}")
    return num_heads


# PyTorch's mask keywords that minigrad spells otherwise: what each is in PyTorch
_PYTORCH_MASKS = {
    "src_mask": "an attention mask",
    "src_key_padding_mask": "a key padding mask (B, S)",
    "tgt_key_padding_mask": "a key padding mask (B, T)",
    "memory_key_padding_mask": "a key padding mask (B, S)",
}


def _refuse_pytorch_masks(owner: str, given: dict, keyword: dict[str, str]) -> None:
    """Raise for PyTorch's mask keywords that minigrad takes under another name (`keyword`:
    PyTorch's name -> minigrad's), saying what to write: the conventions of bool masks are
    opposite (minigrad's True = allowed, PyTorch's True = masked), so a mask is inverted."""
    for name in given:
        if name not in keyword:
            raise TypeError(f"{owner}() got an unexpected keyword argument {name!r}")
        ours = keyword[name]
        invert = f"~{name}[:, None, :]" if "padding" in name else f"~{name}"
        raise TypeError(
            f"{owner}: PyTorch's {name}= ({_PYTORCH_MASKS[name]}) is not taken here: pass "
            f"{ours}=. minigrad's bool masks are True = attention allowed, PyTorch's True = "
            f"masked, so a PyTorch bool mask becomes {ours}={invert}"
            + (" (bool (B, 1, L) for keys of length L, combined with another mask by &; "
               "nn.padding_mask(lengths) builds it from the lengths)" if "padding" in name
               else ""))


def _with_causal(mask, is_causal, Lq: int, Lk: int, device, owner: str, name: str):
    """`mask` restricted to the causal pattern (query i sees keys j ≤ i) when `is_causal` is
    True, as PyTorch's is_causal hint applies it; unchanged when False or None. A bool mask is
    combined by ∧, a float mask (added to the scores) gets −inf above the diagonal."""
    if is_causal is None or not check_flag(owner, name, is_causal):
        return mask
    causal = np.tril(np.ones((Lq, Lk), dtype=bool))                       # (Lq, Lk)
    if mask is None:
        return mg.tensor(causal, device=device)
    mask = np.asarray(mask) if isinstance(mask, list) else mask
    if np.dtype(mask.dtype) == np.bool_:
        return mg.tensor(causal, device=device) & mask
    return mg.tensor(np.where(causal, 0.0, -np.inf), dtype=mask.dtype, device=device) + mask


def _to_batch_major(x: Tensor, batch_first: bool) -> tuple[Tensor, bool]:
    """(B, T, E) from (B, T, E), (T, B, E) when not batch_first, or unbatched (T, E); and
    whether the input was unbatched."""
    if x.ndim == 2:
        return x.unsqueeze(0), True
    return (x if batch_first else x.swapaxes(0, 1)), False


def _from_batch_major(x: Tensor, batch_first: bool, unbatched: bool) -> Tensor:
    if unbatched:
        return x[0]
    return x if batch_first else x.swapaxes(0, 1)


class FeedForward(Module):
    """The position-wise feed-forward network: the same two-layer MLP at every position.

        FF(x) = linear2(dropout(act(linear1(x))))      x (..., d_model) -> (..., d_model)

    linear1: Linear(d_model, d_ff), linear2: Linear(d_ff, d_model).
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation="relu"):
        super().__init__()
        self.linear1 = Linear(d_model, d_ff)
        self.linear2 = Linear(d_ff, d_model)
        self.dropout = Dropout(dropout)
        self.activation = _activation(activation, "FeedForward")

    def forward(self, x: Tensor) -> Tensor:
        """x: (..., d_model). Returns (..., d_model)."""
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward network, each with a residual connection and
    LayerNorm (after the sum when norm_first=False, before the sublayer when True).

    Submodules as in PyTorch: self_attn (MultiHeadAttention), linear1, linear2, norm1, norm2,
    dropout (inside the FFN), dropout1, dropout2 (on the sublayer outputs).
    forward: src (B, T, E) ((T, B, E) when batch_first=False, or unbatched (T, E)), mask bool
    (T, T) / (B, T, T) / (B, heads, T, T) -> src's shape.
    """

    def __init__(self, d_model: int, num_heads: int | None = None, dim_feedforward: int = 2048,
                 dropout: float = 0.1, norm_first: bool = False, activation="relu",
                 layer_norm_eps: float = 1e-5, *, bias: bool = True, batch_first: bool = True,
                 nhead: int | None = None):
        super().__init__()
        num_heads = _check_heads("TransformerEncoderLayer", num_heads, nhead)
        _check_layer_options("TransformerEncoderLayer", d_model, num_heads, dim_feedforward,
                             dropout, norm_first, bias, batch_first)
        self.norm_first, self.batch_first = bool(norm_first), bool(batch_first)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout, bias=bias)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation, "TransformerEncoderLayer")

    def _self_attention(self, x: Tensor, mask) -> Tensor:
        return self.dropout1(self.self_attn(x, x, x, mask)[0])

    def _feed_forward(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src: Tensor, mask=None, *, is_causal: bool = False,
                **pytorch_masks) -> Tensor:
        """src: (B, T, E) (see the class docstring); mask: bool, True = allowed;
        is_causal=True also applies the causal mask (PyTorch's hint). PyTorch's src_mask= and
        src_key_padding_mask= raise, saying what to pass as mask=. Returns src's shape."""
        _refuse_pytorch_masks("TransformerEncoderLayer.forward", pytorch_masks,
                              {"src_mask": "mask", "src_key_padding_mask": "mask"})
        x, unbatched = _to_batch_major(src, self.batch_first)           # (B, T, E)
        T = x.shape[1]
        mask = _with_causal(mask, is_causal, T, T, x.device, "TransformerEncoderLayer",
                            "is_causal")
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), mask)
            x = x + self._feed_forward(self.norm2(x))
        else:
            x = self.norm1(x + self._self_attention(x, mask))
            x = self.norm2(x + self._feed_forward(x))
        return _from_batch_major(x, self.batch_first, unbatched)


_DECODER_PADDING_MASKS = {"tgt_key_padding_mask": "tgt_mask",
                          "memory_key_padding_mask": "memory_mask"}


class TransformerDecoderLayer(Module):
    """Masked self-attention, cross-attention to `memory`, then a feed-forward network; each
    with a residual connection and LayerNorm (post- or pre-LN as in the encoder layer).

    Submodules as in PyTorch: self_attn, multihead_attn (cross-attention), linear1, linear2,
    norm1, norm2, norm3, dropout, dropout1, dropout2, dropout3.
    forward: tgt (B, Tt, E), memory (B, Ts, E) ((T, B, E) when batch_first=False, or both
    unbatched), tgt_mask (Tt, Tt)-broadcastable, memory_mask (Tt, Ts)-broadcastable -> tgt's
    shape. The target mask is not causal unless given.
    """

    def __init__(self, d_model: int, num_heads: int | None = None, dim_feedforward: int = 2048,
                 dropout: float = 0.1, norm_first: bool = False, activation="relu",
                 layer_norm_eps: float = 1e-5, *, bias: bool = True, batch_first: bool = True,
                 nhead: int | None = None):
        super().__init__()
        num_heads = _check_heads("TransformerDecoderLayer", num_heads, nhead)
        _check_layer_options("TransformerDecoderLayer", d_model, num_heads, dim_feedforward,
                             dropout, norm_first, bias, batch_first)
        self.norm_first, self.batch_first = bool(norm_first), bool(batch_first)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout, bias=bias)
        self.multihead_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout, bias=bias)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation, "TransformerDecoderLayer")

    def _self_attention(self, x: Tensor, mask) -> Tensor:
        return self.dropout1(self.self_attn(x, x, x, mask)[0])

    def _cross_attention(self, x: Tensor, memory: Tensor, mask) -> Tensor:
        return self.dropout2(self.multihead_attn(x, memory, memory, mask)[0])

    def _feed_forward(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask=None, memory_mask=None, *,
                tgt_is_causal: bool = False, memory_is_causal: bool = False,
                **pytorch_masks) -> Tensor:
        """tgt: (B, Tt, E); memory: (B, Ts, E) (see the class docstring); masks bool, True =
        allowed; tgt_is_causal / memory_is_causal = True also apply the causal mask to the
        self- / cross-attention (PyTorch's hints). PyTorch's key padding masks raise, saying
        what to pass instead. Returns tgt's shape."""
        _refuse_pytorch_masks("TransformerDecoderLayer.forward", pytorch_masks,
                              _DECODER_PADDING_MASKS)
        x, unbatched = _to_batch_major(tgt, self.batch_first)           # (B, Tt, E)
        memory = _to_batch_major(memory, self.batch_first)[0]           # (B, Ts, E)
        Tt, Ts = x.shape[1], memory.shape[1]
        tgt_mask = _with_causal(tgt_mask, tgt_is_causal, Tt, Tt, x.device,
                                "TransformerDecoderLayer", "tgt_is_causal")
        memory_mask = _with_causal(memory_mask, memory_is_causal, Tt, Ts, x.device,
                                   "TransformerDecoderLayer", "memory_is_causal")
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), tgt_mask)
            x = x + self._cross_attention(self.norm2(x), memory, memory_mask)
            x = x + self._feed_forward(self.norm3(x))
        else:
            x = self.norm1(x + self._self_attention(x, tgt_mask))
            x = self.norm2(x + self._cross_attention(x, memory, memory_mask))
            x = self.norm3(x + self._feed_forward(x))
        return _from_batch_major(x, self.batch_first, unbatched)


class TransformerEncoder(Module):
    """`num_layers` TransformerEncoderLayers in the ModuleList `layers`; a pre-LN stack
    (norm_first=True) ends with the LayerNorm `norm`, a post-LN stack has no final norm
    (`final_norm=True` / `False` decides otherwise). bias, batch_first: as in the layers.

    forward: src (B, T, E), mask bool, True = allowed -> (B, T, E).

    PyTorch's TransformerEncoder(encoder_layer, num_layers) form raises, with the call that
    builds the same stack here.
    """

    def __init__(self, d_model: int, num_heads: int | None = None,
                 dim_feedforward: int | None = None, num_layers: int | None = None,
                 dropout: float = 0.1, norm_first: bool = False, activation="relu", *,
                 bias: bool = True, batch_first: bool = True, final_norm: bool | None = None,
                 nhead: int | None = None, norm: Module | None = None):
        super().__init__()
        num_heads = _check_stack_sizes("TransformerEncoder", d_model, num_heads, dim_feedforward,
                                       num_layers, nhead, norm)
        check_size("TransformerEncoder", "num_layers", num_layers)
        final_norm = norm_first if final_norm is None else final_norm
        self.layers = ModuleList(
            TransformerEncoderLayer(d_model, num_heads, dim_feedforward, dropout, norm_first,
                                    activation, bias=bias, batch_first=batch_first)
            for _ in range(num_layers))
        self.norm_first = bool(norm_first)
        self.has_final_norm = check_flag("TransformerEncoder", "final_norm", final_norm)
        if self.has_final_norm:
            self.norm = LayerNorm(d_model, bias=bias)

    def forward(self, src: Tensor, mask=None, *, is_causal: bool | None = None,
                **pytorch_masks) -> Tensor:
        """src: (B, T, E); mask: bool, broadcastable to (B, T, T), True = allowed; is_causal
        as in TransformerEncoderLayer.forward. Returns (B, T, E)."""
        _refuse_pytorch_masks("TransformerEncoder.forward", pytorch_masks,
                              {"src_mask": "mask", "src_key_padding_mask": "mask"})
        x = src
        for layer in self.layers:
            x = layer(x, mask, is_causal=is_causal)
        return self.norm(x) if self.has_final_norm else x


class TransformerDecoder(Module):
    """`num_layers` TransformerDecoderLayers in the ModuleList `layers`; a pre-LN stack ends
    with the LayerNorm `norm` (`final_norm` as in TransformerEncoder).

    forward: tgt (B, Tt, E), memory (B, Ts, E), tgt_mask, memory_mask -> (B, Tt, E).
    PyTorch's TransformerDecoder(decoder_layer, num_layers) form raises, as in
    TransformerEncoder.
    """

    def __init__(self, d_model: int, num_heads: int | None = None,
                 dim_feedforward: int | None = None, num_layers: int | None = None,
                 dropout: float = 0.1, norm_first: bool = False, activation="relu", *,
                 bias: bool = True, batch_first: bool = True, final_norm: bool | None = None,
                 nhead: int | None = None, norm: Module | None = None):
        super().__init__()
        num_heads = _check_stack_sizes("TransformerDecoder", d_model, num_heads, dim_feedforward,
                                       num_layers, nhead, norm)
        check_size("TransformerDecoder", "num_layers", num_layers)
        final_norm = norm_first if final_norm is None else final_norm
        self.layers = ModuleList(
            TransformerDecoderLayer(d_model, num_heads, dim_feedforward, dropout, norm_first,
                                    activation, bias=bias, batch_first=batch_first)
            for _ in range(num_layers))
        self.norm_first = bool(norm_first)
        self.has_final_norm = check_flag("TransformerDecoder", "final_norm", final_norm)
        if self.has_final_norm:
            self.norm = LayerNorm(d_model, bias=bias)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask=None, memory_mask=None, *,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False,
                **pytorch_masks) -> Tensor:
        """tgt: (B, Tt, E); memory: (B, Ts, E); masks bool, True = allowed: tgt_mask
        broadcastable to (B, Tt, Tt), memory_mask to (B, Tt, Ts); the *_is_causal flags as in
        TransformerDecoderLayer.forward. Returns (B, Tt, E)."""
        _refuse_pytorch_masks("TransformerDecoder.forward", pytorch_masks,
                              _DECODER_PADDING_MASKS)
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask, memory_mask, tgt_is_causal=tgt_is_causal,
                      memory_is_causal=memory_is_causal)
        return self.norm(x) if self.has_final_norm else x


class Transformer(Module):
    """Encoder-decoder Transformer on embedded sequences (no embeddings, positions or output
    head: add them around it).

        memory = encoder(src, src_mask);  out = decoder(tgt, memory, tgt_mask, memory_mask)

    Submodules `encoder` (TransformerEncoder) and `decoder` (TransformerDecoder); each ends
    with a LayerNorm `norm`, post-LN or pre-LN, as PyTorch's nn.Transformer (its encoder_norm
    and decoder_norm). forward: src (B, Ts, E), tgt (B, Tt, E) -> (B, Tt, E) (batch_first and
    unbatched inputs as in the layers). For teacher forcing pass tgt_mask=causal_mask(Tt).

    As PyTorch's nn.Transformer, every weight matrix starts Xavier-uniform (the attention's
    q, k, v projections as the one packed (3E, E) matrix MultiHeadAttention already draws them
    from); biases and norms keep their layers' initial values.
    """

    def __init__(self, d_model: int = 512, num_heads: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, norm_first: bool = False, activation="relu", *,
                 bias: bool = True, batch_first: bool = True, nhead: int | None = None):
        super().__init__()
        _check_heads("Transformer", num_heads, nhead)
        options = dict(bias=bias, batch_first=batch_first, final_norm=True)
        self.encoder = TransformerEncoder(d_model, num_heads, dim_feedforward,
                                          num_encoder_layers, dropout, norm_first, activation,
                                          **options)
        self.decoder = TransformerDecoder(d_model, num_heads, dim_feedforward,
                                          num_decoder_layers, dropout, norm_first, activation,
                                          **options)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight matrix Xavier-uniform again (q, k, v by the packed matrix's bound)."""
        for module in self.modules():
            if isinstance(module, MultiHeadAttention):
                module.reset_parameters()            # q, k, v: the packed matrix's bound
        packed = ("q_proj.weight", "k_proj.weight", "v_proj.weight")
        for name, param in self.named_parameters():
            if param.ndim > 1 and not name.endswith(packed):
                init.xavier_uniform_(param)

    def forward(self, src: Tensor, tgt: Tensor, src_mask=None, tgt_mask=None,
                memory_mask=None, *, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False,
                **pytorch_masks) -> Tensor:
        """src: (B, Ts, E); tgt: (B, Tt, E); masks bool, True = allowed; each *_is_causal=True
        also applies the causal mask there (PyTorch's hints). PyTorch's key padding masks
        raise, saying what to pass instead. Returns (B, Tt, E)."""
        _refuse_pytorch_masks("Transformer.forward", pytorch_masks,
                              {"src_key_padding_mask": "src_mask", **_DECODER_PADDING_MASKS})
        memory = self.encoder(src, src_mask, is_causal=src_is_causal)           # (B, Ts, E)
        return self.decoder(tgt, memory, tgt_mask, memory_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)                 # (B, Tt, E)


class TransformerLM(Module):
    """A decoder-only (GPT-style) language model: every position predicts the next token from
    itself and the positions before it.

        x = dropout(embed(tokens) + positions)                       (B, T, E)
        h = blocks(x, causal_mask(T))        pre-LN by default       (B, T, E)
        logits = head(h)                                             (B, T, V)

    Submodules: embed (Embedding(V, E)), pos (LearnedPositionalEmbedding(max_len, E) or, with
    positional="sinusoidal", SinusoidalPositionalEncoding), dropout, blocks
    (TransformerEncoder with the causal mask), head (Linear(E, V)). The feed-forward networks
    use GELU by default and the token embeddings (and learned positions) start at N(0, 0.02²),
    both as in GPT-2.
    """

    def __init__(self, vocab_size: int, d_model: int, num_heads: int, dim_feedforward: int,
                 num_layers: int, max_len: int, dropout: float = 0.1, norm_first: bool = True,
                 activation="gelu", positional: str = "learned"):
        super().__init__()
        if positional not in ("learned", "sinusoidal"):
            raise ValueError(f"TransformerLM: positional must be 'learned' or 'sinusoidal', "
                             f"got {positional!r}")
        self.vocab_size, self.d_model, self.max_len = int(vocab_size), int(d_model), \
            int(max_len)
        self.embed = Embedding(vocab_size, d_model)
        self.pos = (LearnedPositionalEmbedding(max_len, d_model) if positional == "learned"
                    else SinusoidalPositionalEncoding(d_model, max_len))
        self.dropout = Dropout(dropout)
        self.blocks = TransformerEncoder(d_model, num_heads, dim_feedforward, num_layers,
                                         dropout, norm_first, activation)
        self.head = Linear(d_model, vocab_size)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Token (and learned position) embeddings from N(0, 0.02²), as GPT-2 starts them."""
        init.normal_(self.embed.weight, 0.0, 0.02)
        if isinstance(self.pos, LearnedPositionalEmbedding):
            init.normal_(self.pos.weight, 0.0, 0.02)

    def forward(self, tokens) -> Tensor:
        """tokens: integer (B, T) Tensor or array, T <= max_len. Returns logits (B, T, V)."""
        T = tokens.shape[1] if len(tokens.shape) == 2 else None
        if T is None or T > self.max_len:
            raise ValueError(f"TransformerLM: tokens must be (B, T) with T <= max_len = "
                             f"{self.max_len}, got shape {tuple(tokens.shape)}")
        x = self.dropout(self.pos(self.embed(tokens)))      # (B, T, E)
        mask = causal_mask(T, device=self.head.weight.device)
        return self.head(self.blocks(x, mask))               # (B, T, V)

    def generate(self, prompt, max_new_tokens: int, temperature: float = 1.0,
                 top_k: int | None = None) -> Tensor:
        """Sample `max_new_tokens` tokens after `prompt` (B, T0), one at a time.

        Each step feeds the last max_len tokens, takes the logits of the last position,
        divides them by `temperature` (0 means greedy: always the most likely token), keeps the
        `top_k` largest (when given) and samples from their softmax with minigrad's RNG, so the
        result is reproducible after `minigrad.manual_seed`. Runs under no_grad, in eval mode
        (the previous mode is restored). Returns int64 (B, T0 + max_new_tokens).
        """
        if temperature < 0:
            raise ValueError(f"generate: temperature must be >= 0, got {temperature}")
        if top_k is not None and not 1 <= top_k <= self.vocab_size:
            raise ValueError(f"generate: top_k must be in [1, {self.vocab_size}], got {top_k}")
        tokens = prompt.numpy() if isinstance(prompt, Tensor) else np.asarray(prompt)
        if tokens.ndim != 2 or tokens.dtype.kind not in "iu":
            raise ValueError(f"generate: prompt must be integer (B, T0), got shape "
                             f"{tokens.shape} and dtype {tokens.dtype}")
        tokens = tokens.astype(np.int64)
        device = self.head.weight.device
        was_training = self.training
        self.eval()
        try:
            with mg.no_grad():
                for _ in range(max_new_tokens):
                    context = mg.tensor(tokens[:, -self.max_len:], device=device)
                    logits = self(context)[:, -1].astype(np.float64).numpy()    # (B, V)
                    tokens = np.concatenate([tokens, self._pick(logits, temperature, top_k,
                                                                device)], axis=1)
        finally:
            self.train(was_training)
        return mg.tensor(tokens, device=device)

    @staticmethod
    def _pick(logits: np.ndarray, temperature: float, top_k: int | None, device) -> np.ndarray:
        """One token per row of logits (B, V): greedy, or sampled with minigrad.multinomial
        (from minigrad's RNG). Returns int64 (B, 1)."""
        if temperature == 0:
            return logits.argmax(axis=-1)[:, None]
        logits = logits / temperature
        if top_k is not None:
            kth = np.sort(logits, axis=-1)[:, -top_k][:, None]               # (B, 1)
            logits = np.where(logits < kth, -math.inf, logits)
        weights = np.exp(logits - logits.max(axis=-1, keepdims=True))        # (B, V)
        return mg.multinomial(mg.tensor(weights, device=device), 1).numpy()
