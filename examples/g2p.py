"""Grapheme-to-phoneme conversion: spelling -> pronunciation, on the standard CMUdict split.

    attention  ->  AH T EH N SH AH N          (ARPAbet without stress: 39 phonemes)

Data (_cmudict.py): the CMU Pronouncing Dictionary 0.7b in the standard train/test split of
published G2P results, shipped; dev: ~5 % of the training words, chosen by a hash of the word.

Model (GRUAttentionG2P's equations): letters -> embedding -> bidirectional GRU encoder; a GRU
decoder reads the previous phoneme and attends (`--attention dot | additive | location-aware`)
over the encoder states (location-aware: additive scores that also see the previous step's
weights, so that attention runs one phoneme at a time); `--readout linear | gru` mixes what it
read with what it attended to (gru: a second decoder GRU, which remembers where it attended
before); `--decoder-input fed` gives the decoder GRU h̃_{t−1} beside the previous phoneme
(input feeding).
Under teacher forcing every decoder input is known in advance, so each decoder GRU runs as ONE
fused nn.GRU call per batch (with input feeding, one call per phoneme). A batch holds words of
one length (no source padding).
`--model transformer`: the g2p-seq2seq design instead (TransformerG2P).

Protocol: Adam (AdamW with `--weight-decay`) with warm-up and cosine decay over a budget of CPU
minutes of this process (evaluation excluded); every `--eval-every` steps greedy WER on every
dev word, and the weights with the best dev WER so far are kept (best.npz). From three
quarters of the run on (`--average-from 0.75`) the weights evaluated and kept are the plain mean
of the weights after each step since (stochastic weight averaging over the end of the decay,
`nn.optim.swa_utils.AveragedModel`); with `--ema β` instead, an exponential moving average,
w̄ ← w̄ + (1 − β)(w − w̄) after every step. At the end the test words are scored once, with the
weights kept, greedy and with beam search:

    WER = words whose output equals no reference of the word / words
    PER = Σ edit distance to the closest reference / Σ that reference's length

    python examples/g2p.py                          # 30 CPU-minutes of training
    python examples/g2p.py --say minigrad attention # pronounce with a trained model
    python examples/g2p.py --quick                  # a few seconds on a slice of the data
"""

from __future__ import annotations

# _common first: it sets the BLAS thread count before NumPy loads
from _common import (CHECKPOINT_NAME, Checkpoint, LossBar, add_compile_flag, add_config_flags,
                     base_parser, budget_progress, check_choices, compile_summary, eval_mode,
                     load_checkpoint, make_config, parse_args, plot_batch_losses, prepare_run,
                     print_outputs, pyplot, restore_history, save_checkpoint, save_figure,
                     setting, warmup_cosine, write_metrics)

import math
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

import minigrad as mg
import nn
from _cmudict import Data, Lexicon, evaluate, hardest_errors, load_split
from _seq2seq import (PAD, Vocab, attention_figure, compiled_forward_backward, make_batch,
                      same_length_batches, search, train_step)

SHIPPED_MODEL = Path(__file__).resolve().parent / "data" / "g2p-model.npz"
BEST_NAME = "best.npz"            # the weights with the best dev WER: test and --say use them
SHOWCASE = ("minigrad", "phoneme", "dorthea", "resenting")   # not in CMUdict; test words


# ------------------------------------------------------------------------------------------
# The model

class GRUAttentionG2P(nn.Module):
    """Bidirectional GRU encoder, GRU decoder with attention over the encoder states.

        s_1..s_S = BiGRU(embed(x)),  s_j = [→s_j; ←s_j]                    (B, S, 2He)
        h_0 = h̃_0 = tanh(W_b [→s_S; ←s_1] + b_b)                           (B, Hd)
        h_t = GRU(embed(y_{t−1}), h_{t−1}),  fed: GRU([embed(y_{t−1}); h̃_{t−1}], h_{t−1})
        α_t = softmax_j score(h_t, s_j),  dot: (h_t · W_k s_j)/√Hd,
                                         additive: vᵀ tanh(W_q h_t + W_k s_j),
                 location-aware: vᵀ tanh(W_q h_t + W_k s_j + W_f (F * α_{t−1})_j),
                                 α_0 one-hot on the first letter (nn.LocationAwareAttention)
        c_t = Σ_j α_tj s_j,  h̃_t = tanh(W_c [h_t; c_t] + b_c)  or  GRU₂([h_t; c_t], h̃_{t−1})
        logits_t = W_o h̃_t + b_o
    """

    def __init__(self, n_letters: int, n_phonemes: int, config: "Config"):
        super().__init__()
        E, He, Hd = config.embed_dim, config.enc_hidden, config.dec_hidden
        check_choices(config, "GRUAttentionG2P")
        self.attention_kind, self.readout = config.attention, config.readout
        self.fed = config.decoder_input == "fed"
        if self.fed and config.readout != "linear":
            raise ValueError("GRUAttentionG2P: decoder_input 'fed' reads h̃_{t−1} of the linear "
                             f"readout, got readout {config.readout!r}")
        self.src_embed = nn.Embedding(n_letters, E)
        self.encoder = nn.GRU(E, He, num_layers=config.enc_layers, bidirectional=True,
                              dropout=config.dropout)
        self.bridge = nn.Linear(2 * He, Hd)
        self.tgt_embed = nn.Embedding(n_phonemes, E, padding_idx=PAD)
        self.decoder = nn.GRU(E + Hd if self.fed else E, Hd)
        if config.attention == "dot":
            self.key_proj = nn.Linear(2 * He, Hd, bias=False)
            self.attention = nn.DotProductAttention(scaled=True)
        elif config.attention == "location-aware":
            self.attention = nn.LocationAwareAttention(Hd, 2 * He, config.attention_dim,
                                                       config.location_filters,
                                                       config.location_width)
        else:
            self.attention = nn.AdditiveAttention(Hd, 2 * He, config.attention_dim)
        if config.readout == "gru":
            self.decoder2 = nn.GRU(Hd + 2 * He, Hd)
        else:
            self.combine = nn.Linear(Hd + 2 * He, Hd)
        self.out = nn.Linear(Hd, n_phonemes)
        self.dropout = nn.Dropout(config.dropout)
        self.locked = config.dropout_kind == "locked"

    def drop(self, x):
        """Dropout on a (B, T, F) sequence: each element on its own, or (locked) one draw per
        word and feature, shared by all T positions."""
        locked = (x.shape[0], 1, x.shape[2]) if self.locked else None
        return mg.dropout(x, self.dropout.p, self.training, noise_shape=locked)

    def encode(self, letters) -> tuple:
        """letters (B, S) ids -> memory (states (B, S, 2He), keys (B, S, ·)) and the decoder's
        first state (h_0, h̃_0), both (B, Hd), and with location-aware attention α_0 (B, S)."""
        states, h_n = self.encoder(self.drop(self.src_embed(letters)))   # (B, S, 2He)
        last = mg.concat([h_n[-2], h_n[-1]], axis=-1)        # top layer, both ends (B, 2He)
        h0 = mg.tanh(self.bridge(last))                      # (B, Hd)
        if self.attention_kind == "location-aware":       # W_k s_j once, for every step
            return ((states, self.attention.project_keys(states)),
                    (h0, h0, self.attention.initial_weights(states)))
        keys = self.key_proj(states) if self.attention_kind == "dot" else states
        return (states, keys), (h0, h0)

    def _decode(self, emb, state: tuple, memory: tuple) -> tuple:
        """emb (B, T, E) from state (h, h̃) or, location-aware, (h, h̃, α) -> (logits
        (B, T, V), weights (B, T, S), the state after the last step)."""
        if self.fed:
            return self._decode_fed(emb, state, memory)
        (h_prev, attended_prev, *location), (states, keys) = state, memory
        h, h_n = self.decoder(emb, h_prev.unsqueeze(0))      # (B, T, Hd)
        if location:                                         # from α_{t−1}, one step at a time
            context, weights = self.attention(h, states, states, prev=location[0],
                                              projected_keys=keys)
            location = [weights[:, -1]]
        else:
            context, weights = self.attention(h, keys, states)   # (B, T, 2He), (B, T, S)
        both = mg.concat([h, context], axis=-1)              # (B, T, Hd + 2He)
        if self.readout == "gru":
            attended, attended_n = self.decoder2(both, attended_prev.unsqueeze(0))
            last = attended_n[0]
        else:
            attended = mg.tanh(self.combine(both))           # (B, T, Hd)
            last = attended[:, -1]
        return self.out(self.drop(attended)), weights, (h_n[0], last, *location)

    def _decode_fed(self, emb, state: tuple, memory: tuple) -> tuple:
        """`_decode` with input feeding (Luong et al. 2015): h_t = GRU([embed(y_{t−1});
        h̃_{t−1}], h_{t−1}), so the decoder's state knows what it attended to one step before;
        each step needs the last one's h̃, so the decoder runs one step at a time."""
        (h, attended, *location), (states, keys) = state, memory
        outputs, steps = [], []
        for t in range(emb.shape[1]):
            x = mg.concat([emb[:, t], attended], axis=-1).unsqueeze(1)     # (B, 1, E + Hd)
            h = self.decoder(x, h.unsqueeze(0))[1][0]                      # (B, Hd)
            if location:
                context, alpha = self.attention.step(h, states, states, location[0],
                                                     projected_keys=keys)
                location = [alpha]
            else:
                context, alpha = self.attention(h.unsqueeze(1), keys, states)
                context, alpha = context[:, 0], alpha[:, 0]
            attended = mg.tanh(self.combine(mg.concat([h, context], axis=-1)))   # (B, Hd)
            outputs.append(attended)
            steps.append(alpha)
        logits = self.out(self.drop(mg.stack(outputs, axis=1)))            # (B, T, V)
        return logits, mg.stack(steps, axis=1), (h, attended, *location)

    def forward(self, letters, tgt_in) -> tuple:
        """Teacher forcing: letters (B, S), tgt_in (B, T) -> (logits (B, T, V), weights
        (B, T, S))."""
        memory, state = self.encode(letters)
        return self._decode(self.drop(self.tgt_embed(tgt_in)), state, memory)[:2]

    def step(self, y_prev: np.ndarray, state: tuple, memory: tuple) -> tuple:
        """One decoding step (_seq2seq.py's decoders): previous phonemes (N,) -> (log-probs
        (N, V), new state, weights (N, S)), the arrays as NumPy."""
        logits, weights, state = self._decode(self.tgt_embed(y_prev).unsqueeze(1), state, memory)
        return mg.log_softmax(logits[:, 0], axis=-1).numpy(), state, weights[:, 0].numpy()


class TransformerG2P(nn.Module):
    """`--model transformer`: nn.Transformer (pre-LN) between letter and phoneme embeddings,
    the g2p-seq2seq design:

        memory = Encoder(√d·embed(x) + PE),  out = Decoder(√d·embed(y_<t) + PE, memory)
        logits = W_o out + b_o,  with a causal mask on the decoder's self-attention

    The embeddings are drawn from N(0, 1/d), so that √d·embed has the scale of the sinusoidal
    positions beside it (from N(0, 1) the positions are 1/√d of the sum and the model writes
    the right phonemes in the wrong order).
    """

    def __init__(self, n_letters: int, n_phonemes: int, config: "Config"):
        super().__init__()
        d = config.d_model
        self.scale = math.sqrt(d)
        self.src_embed = nn.Embedding(n_letters, d)
        self.tgt_embed = nn.Embedding(n_phonemes, d)
        for table in (self.src_embed, self.tgt_embed):
            nn.init.normal_(table.weight, std=d ** -0.5)
        self.pos = nn.SinusoidalPositionalEncoding(d, max_len=128)
        self.dropout = nn.Dropout(config.dropout)
        self.transformer = nn.Transformer(d, config.heads, config.layers, config.layers,
                                          config.ff_dim, config.dropout, norm_first=True)
        self.out = nn.Linear(d, n_phonemes)

    def _embed(self, table, ids):
        return self.dropout(self.pos(table(ids) * self.scale))         # (B, L, d)

    def encode(self, letters) -> tuple:
        """letters (B, S) -> memory ((B, S, d),) and the decoder's state: the phonemes written
        so far, none yet (B, 0)."""
        memory = self.transformer.encoder(self._embed(self.src_embed, letters))
        written = mg.tensor(np.zeros((letters.shape[0], 0), dtype=np.int64), device=memory.device)
        return (memory,), (written,)

    def _decode(self, tgt_in, memory):
        mask = nn.causal_mask(tgt_in.shape[1], device=memory.device)
        return self.out(self.transformer.decoder(self._embed(self.tgt_embed, tgt_in), memory, mask))

    def forward(self, letters, tgt_in) -> tuple:
        """Teacher forcing: letters (B, S), tgt_in (B, T) -> (logits (B, T, V), None)."""
        (memory,), _ = self.encode(letters)
        return self._decode(tgt_in, memory), None

    def step(self, y_prev: np.ndarray, state: tuple, memory: tuple) -> tuple:
        """Runs the decoder again over everything written (words are short) and reads the
        last position: (log-probs (N, V), the state with y_prev appended, no weights)."""
        (written,), (mem,) = state, memory
        y = mg.tensor(np.asarray(y_prev, dtype=np.int64)[:, None], device=mem.device)
        written = mg.concat([written, y], axis=1)                     # (N, t)
        logits = self._decode(written, mem)[:, -1]                     # (N, V)
        return mg.log_softmax(logits, axis=-1).numpy(), (written,), None


def build_model(config: "Config", n_letters: int, n_phonemes: int) -> nn.Module:
    check_choices(config, "g2p")
    kind = GRUAttentionG2P if config.model == "gru" else TransformerG2P
    return kind(n_letters, n_phonemes, config)


# ------------------------------------------------------------------------------------------
# Pronouncing and scoring

def make_optimizer(model: nn.Module, config: "Config") -> nn.optim.Optimizer:
    """Adam, or AdamW when the run decays weights (w ← w − lr·λ·w beside Adam's step)."""
    if config.weight_decay:
        return nn.optim.AdamW(model.parameters(), lr=config.lr,
                              weight_decay=config.weight_decay)
    return nn.optim.Adam(model.parameters(), lr=config.lr)


def max_steps_for(length: int) -> int:
    """Decoding stops after this many phonemes for a word of `length` letters."""
    return 2 * length + 4


@mg.no_grad()
def pronounce(model, words: list[str], letters: Vocab, phonemes: Vocab, beam: int = 0,
              batch_size: int = 256, device: str = "cpu") -> tuple[dict, dict]:
    """Greedy (beam ≤ 1) or beam-search pronunciations, in eval mode, a batch of words of one
    length at a time. Returns (word -> phonemes, word -> attention weights (steps, letters),
    the GRU model's and greedy only)."""
    beam = beam if beam > 1 else 0
    predictions, weights = {}, {}
    with eval_mode(model):
        for index in same_length_batches([len(w) for w in words],
                                         max(1, batch_size // max(1, beam))):
            group = [words[i] for i in index]
            src = mg.tensor(np.array([letters.encode(w) for w in group]), device=device)
            ids, w = search(model, *model.encode(src), max_steps_for(len(group[0])), beam)
            for k, word in enumerate(group):
                predictions[word] = tuple(phonemes.decode(ids[k]))
                if w is not None:
                    weights[word] = w[k]
    return predictions, weights


def score(model, data: Data, part: str, beam: int = 0, device: str = "cpu") -> tuple:
    """(WER and PER on every word of a part: "dev" or "test", the outputs)."""
    predictions = pronounce(model, data.parts[part], data.letters, data.phonemes, beam=beam,
                            device=device)[0]
    return evaluate(predictions, data.lexicon), predictions


# ------------------------------------------------------------------------------------------
# Training

@dataclass
class Config:
    """A run's settings; those with a help text are flags too (--enc-hidden 192)."""
    model: str = setting("gru", "transformer: nn.Transformer, pre-LN, with its own defaults "
                         "--lr 1e-3 and warm-up 5 %%", ("gru", "transformer"))
    attention: str = setting("location-aware", "the decoder's attention; location-aware: additive, "
                             "and sees the previous step's weights",
                             ("dot", "additive", "location-aware"))
    readout: str = setting("linear", "h̃ from [h; c]: linear, tanh(W_c [h; c]); gru, a second "
                           "decoder GRU", ("linear", "gru"))
    decoder_input: str = setting("phoneme", "what the decoder GRU reads: phoneme, embed(y_{t−1}); "
                                 "fed, also h̃_{t−1} (input feeding: one step at a time)",
                                 ("phoneme", "fed"))
    embed_dim: int = setting(64, "embedding size")
    enc_hidden: int = setting(256, "encoder GRU size per direction")
    enc_layers: int = setting(2, "encoder GRU layers")
    dec_hidden: int = setting(256, "decoder GRU size")
    attention_dim: int = 128
    location_filters: int = 10    # --attention location-aware: filters over α_{t−1}, and their width
    location_width: int = 7
    d_model: int = setting(256, "Transformer width")
    heads: int = setting(4, "Transformer attention heads")
    layers: int = setting(3, "Transformer layers per stack")
    ff_dim: int = setting(1024, "Transformer feed-forward width")
    dropout: float = setting(0.0, "dropout on the embeddings and the readout")
    dropout_kind: str = setting("element", "dropout of each element, or one draw per word and "
                                "feature for all positions", ("element", "locked"))
    label_smoothing: float = setting(0.1, "label smoothing of the training loss")
    pronunciations: str = setting("all", "train on every pronunciation of a word, or on the "
                                  "first the data lists only", ("all", "first"))
    batch_size: int = setting(256, "words per batch")
    lr: float = setting(3e-3, "peak Adam learning rate")
    weight_decay: float = setting(0.0, "decoupled weight decay of every weight (AdamW); 0: "
                                       "Adam")
    warmup: float = 0.02          # the share of the run that warms the learning rate up
    clip: float = 1.0
    ema: float = setting(0.0, "evaluate and keep a moving average of the weights with this "
                              "decay, e.g. 0.999; 0: the trained weights")
    average_from: float = setting(0.75, "from this share of the run on, evaluate and keep the "
                                        "mean of the weights after each step; 0: the trained "
                                        "weights (--ema alone sets it to 0)")
    minutes: float = setting(30.0, "training budget in minutes")
    clock: str = setting("cpu", "the budget's clock: this process's CPU time, or wall",
                         ("cpu", "wall"))
    steps: int = setting(0, "stop after this many steps; 0: the budget decides")
    eval_every: int = setting(500, "steps between dev evaluations and checkpoints")
    beam: int = setting(5, "beam width for the test set; 0 or 1: none")
    max_words: int = setting(0, "use a slice of this many words; 0: all")


QUICK = dict(embed_dim=16, enc_hidden=32, enc_layers=1, dec_hidden=32, attention_dim=16,
             d_model=32, heads=2, layers=1, ff_dim=64, batch_size=32, lr=1e-2, minutes=1.0,
             steps=60, eval_every=30, beam=3, max_words=600)
# the Transformer wants a gentler start than the GRU model (post-warm-up Adam steps of 3e-3
# unsettle its attention layers)
TRANSFORMER_DEFAULTS = dict(lr=1e-3, warmup=0.05)


def learning_rate(config: Config, progress: float) -> float:
    """Linear warm-up over the first `warmup` of the run, then cosine decay to 5 %."""
    warm = min(1.0, progress / config.warmup) if config.warmup > 0 else 1.0
    return warmup_cosine(config.lr, warm, progress, floor=0.05)


def run_progress(config: Config, steps: int, seconds: float) -> float:
    """How far the run is, 0 to 1: by steps, by training time, whichever is further."""
    return budget_progress(steps, config.steps, seconds, 60.0 * config.minutes)


HISTORY = dict(loss=[], eval_step=[], eval_seconds=[], dev_wer=[], dev_per=[], epoch=0,
               epoch_step=0, train_seconds=0.0, wall_seconds=0.0, best_step=0, best_dev_wer=1.0)


def train(model, optimizer, data: Data, config: Config, out: Path, args) -> tuple[dict, dict]:
    """Train until the step limit or the time budget. Every `eval_every` steps: greedy WER on
    every dev word, a checkpoint to resume from, and best.npz when dev WER is the best so far.
    Ctrl-C saves the checkpoint and prints the command that resumes. Returns the history and
    how the steps ran (compile_summary: captured and replayed, or eagerly and why)."""
    # this process's CPU seconds (one BLAS thread: unaffected by other jobs on the cores), or wall
    clock = time.process_time if config.clock == "cpu" else time.perf_counter
    state = dict(config=asdict(config), letters=data.letters.itos, phonemes=data.phonemes.itos)
    run = compiled_forward_backward(model, args)
    if config.ema and config.average_from:
        raise SystemExit("g2p.py: --ema and --average-from each average the weights: give one")
    swa, average = nn.optim.swa_utils, None
    if config.ema:                      # the moving average, or (no function) the plain mean
        average = swa.AveragedModel(model, multi_avg_fn=swa.get_ema_multi_avg_fn(config.ema))
    elif config.average_from:
        average = swa.AveragedModel(model)

    def evaluated():                    # what dev WER scores: the average once there is one
        started = average is not None and int(average.n_averaged.item()) > 0
        return average.module if started else model
    # the budget (steps, minutes) may grow on --resume; every other setting must match
    checkpoint = Checkpoint(out / CHECKPOINT_NAME, args, model, optimizer,
                            config={k: v for k, v in asdict(config).items()
                                    if k not in ("steps", "minutes", "eval_every", "beam")},
                            ignore=[f.name for f in fields(Config)] + ["say"])
    lengths = [len(w) for w, _ in data.train_pairs]
    with checkpoint:
        resumed = checkpoint.resume()
        if average is not None and "average" in resumed:
            average.load_state_dict(resumed["average"])
        history = restore_history(HISTORY, resumed.get("history"))
        steps = len(history["loss"])
        with LossBar(total=config.steps or None, desc="train", initial=steps) as bar:
            while run_progress(config, steps, history["train_seconds"]) < 1.0:
                # the batch order of every epoch follows from (seed, epoch): resumable exactly
                plan = same_length_batches(lengths, config.batch_size,
                                           np.random.default_rng([args.seed, history["epoch"]]))
                for index in plan[history["epoch_step"]:]:
                    progress = run_progress(config, steps, history["train_seconds"])
                    if progress >= 1.0:
                        break
                    tick, wall = clock(), time.perf_counter()
                    batch = make_batch([data.train_pairs[i] for i in index], data.letters,
                                       data.phonemes)
                    lr = learning_rate(config, progress)
                    loss = train_step(model, optimizer, (batch.src, batch.tgt_in, batch.tgt_out),
                                      config.clip, args.device, run, lr=lr,
                                      label_smoothing=config.label_smoothing)
                    if average is not None and progress >= config.average_from:
                        average.update_parameters(model)
                    history["train_seconds"] += clock() - tick
                    history["wall_seconds"] += time.perf_counter() - wall
                    history["epoch_step"] += 1
                    steps += 1
                    history["loss"].append(loss)
                    bar.update(loss, epoch=history["epoch"] + 1, lr=lr)
                    due = steps % config.eval_every == 0 or run_progress(
                        config, steps, history["train_seconds"]) >= 1.0
                    if due:
                        dev = score(evaluated(), data, "dev", device=args.device)[0]
                        history["eval_step"].append(steps)
                        history["eval_seconds"].append(history["train_seconds"])
                        history["dev_wer"].append(dev["wer"])
                        history["dev_per"].append(dev["per"])
                        bar.write(f"step {steps} ({history['train_seconds'] / 60:.1f} min): "
                                  f"dev WER {dev['wer']:.4f}, PER {dev['per']:.4f}")
                        if not history["best_step"] or dev["wer"] < history["best_dev_wer"]:
                            history["best_step"], history["best_dev_wer"] = steps, dev["wer"]
                            save_checkpoint(out / BEST_NAME, evaluated(), **state, step=steps)
                    checkpoint.step_end(due=due, **state, history=history, **(
                        {} if average is None else {"average": average.state_dict()}))
                else:                                   # the epoch is done
                    history["epoch"], history["epoch_step"] = history["epoch"] + 1, 0
    return history, compile_summary(run)


def plot_curves(history: dict, title: str, path: Path) -> Path:
    """Training loss (left) and dev WER and PER (right) against training steps."""
    fig, (left, right) = pyplot().subplots(1, 2, figsize=(10, 3.8))
    plot_batch_losses(left, np.arange(1, len(history["loss"]) + 1), history["loss"],
                      max(1, min(100, len(history["loss"]) // 20)), "cross-entropy per phoneme")
    for key, style, label in (("dev_wer", "o-", "dev WER"), ("dev_per", "s-", "dev PER")):
        right.plot(history["eval_step"], 100 * np.asarray(history[key]), style, ms=3,
                   label=f"{label} (greedy)")
    right.axvline(history["best_step"], color="grey", ls=":", label="best on dev (kept)")
    right.set(xlabel="training step", ylabel="error rate (%)", ylim=(0, None))
    for ax in (left, right):
        ax.legend(fontsize=8)
    fig.suptitle(title)
    return save_figure(fig, path)


def plot_alignments(predictions: dict, weights: dict, lexicon: Lexicon, path: Path) -> Path:
    """The decoder's attention over the letters of each word, as it wrote each phoneme."""
    words = list(predictions)
    titles = [w + ("" if w not in lexicon else " (correct)" if predictions[w] in lexicon[w]
                   else " (WRONG)") for w in words]
    return attention_figure(words, [predictions[w] for w in words], [weights[w] for w in words],
                            titles, path, xlabel="letter", ylabel="phoneme written",
                            suptitle="Attention of the decoder (best-on-dev weights)")


# ------------------------------------------------------------------------------------------
# Command line

def build_parser():
    parser = base_parser(__doc__, default_out="runs/g2p")
    add_compile_flag(parser)
    add_config_flags(parser, Config)
    parser.add_argument("--say", nargs="+", metavar="WORD", default=None,
                        help="print pronunciations and exit: the model of --resume CKPT, else "
                             "<out>/best.npz, else the one shipped in examples/data/")
    return parser


def config_from_args(args, saved: dict | None = None) -> Config:
    """Defaults (the Transformer's own where it has them, or --quick's), then a resumed
    checkpoint's values, then explicit flags."""
    model = getattr(args, "model", None) or (saved or {}).get("model", "gru")
    config = make_config(Config, args, QUICK if args.quick else
                         TRANSFORMER_DEFAULTS if model == "transformer" else None, saved)
    if getattr(args, "ema", None) and getattr(args, "average_from", None) is None:
        config.average_from = 0.0          # --ema asks for the moving average in its place
    return config


def say(args) -> dict:
    """Pronounce the words of --say with a trained model."""
    candidates = [Path(args.resume)] if args.resume else [args.out / BEST_NAME, SHIPPED_MODEL]
    path = next((p for p in candidates if p.exists()), None)
    if path is None:
        raise SystemExit(f"--say: no trained model at {' or '.join(map(str, candidates))}; "
                         f"make one with: python examples/g2p.py --out {args.out}")
    saved = nn.load(path)
    config = config_from_args(args, saved["state"]["config"])
    # the saved lists are the specials and the sorted symbols: Vocab rebuilds the same ids
    letters, phonemes = (Vocab(map(str, saved["state"][k])) for k in ("letters", "phonemes"))
    model = build_model(config, len(letters), len(phonemes)).to(args.device)
    model.load_state_dict({k: np.asarray(v, dtype=np.float32) for k, v in saved["model"].items()})
    words = [w.lower() for w in args.say]
    unknown = sorted({c for w in words for c in w if c not in letters.stoi})
    if unknown:
        raise SystemExit(f"--say: letters not in the training alphabet: {' '.join(unknown)}")
    result = pronounce(model, words, letters, phonemes, config.beam, device=args.device)[0]
    for word in words:
        print(f"{word:>20}  {' '.join(result[word])}")
    return result


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(build_parser(), argv)
    if args.say:
        return say(args)
    out = prepare_run(args)
    resumed = args.resume is not None and args.resume.is_file()
    config = config_from_args(args, nn.load(args.resume)["state"]["config"] if resumed else None)
    start = time.perf_counter()
    data = Data(*load_split(), config.max_words, config.pronunciations)
    model = build_model(config, len(data.letters), len(data.phonemes)).to(args.device)
    optimizer = make_optimizer(model, config)
    n_parameters = int(sum(p.data.size for p in model.parameters()))
    words = {k: len(v) for k, v in data.parts.items()}
    print(f"words: {words} ({len(data.train_pairs)} training pronunciations); "
          f"{n_parameters:,} parameters")
    history, training_step = train(model, optimizer, data, config, out, args)
    best_step = int(load_checkpoint(out / BEST_NAME, model)["step"])   # the best on dev
    dev = score(model, data, "dev", device=args.device)[0]
    greedy, greedy_pred = score(model, data, "test", device=args.device)   # test: once, here
    beam = score(model, data, "test", config.beam, args.device)[0] if config.beam > 1 else None
    name = "Transformer" if config.model == "transformer" else f"readout {config.readout}"
    plot_curves(history, f"g2p, {name}: training loss and dev error", out / "curves.png")
    showcase, weights = pronounce(model, list(SHOWCASE), data.letters, data.phonemes,
                                  device=args.device)
    if weights:                                   # the GRU model's one attention
        plot_alignments(showcase, weights, data.lexicon, out / "attention.png")
    steps = len(history["loss"])
    metrics = {
        "config": asdict(config), "n_parameters": n_parameters, "words": words,
        "train_pronunciations": len(data.train_pairs), "steps": steps,
        "epochs": history["epoch"] + history["epoch_step"] / max(
            1, math.ceil(len(data.train_pairs) / config.batch_size)),
        "clock": config.clock, "train_seconds": round(history["train_seconds"], 1),
        "train_wall_seconds": round(history["wall_seconds"], 1),
        "steps_per_second": round(steps / max(history["train_seconds"], 1e-9), 3),
        "training_step": training_step, "final_loss": float(np.mean(history["loss"][-50:])),
        "curve": {k: history[k] for k in ("eval_step", "eval_seconds", "dev_wer", "dev_per")},
        "best_step": best_step, "dev_greedy": dev, "test_greedy": greedy, "test_beam": beam,
        "total_seconds": round(time.perf_counter() - start, 1),
        "hardest_errors": hardest_errors(greedy_pred, data.lexicon),
        "showcase": {w: " ".join(p) for w, p in showcase.items()},
    }
    write_metrics(out, metrics, args)
    print("WER = words whose output equals no reference / words; PER = Σ edit distance to the "
          "closest reference / Σ that reference's length")
    print(f"best on dev: step {best_step}, dev WER {100 * dev['wer']:.2f} %; test "
          f"({greedy['words']} words): greedy WER {100 * greedy['wer']:.2f} %, PER "
          f"{100 * greedy['per']:.2f} %" + ("" if beam is None else
                                          f"; beam {config.beam}: WER {100 * beam['wer']:.2f} "
                                          f"%, PER {100 * beam['per']:.2f} %"))
    print_outputs(out)
    return metrics


if __name__ == "__main__":
    main()
