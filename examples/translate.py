"""Translate a small invented language with a GRU encoder–decoder, with or without attention.

The source language is English-like (subject–verb–object, adjectives before the noun):

    my green cat eats the red fish
    -> kato verda mi ga fiŝo ruĝa la wo manĝas

The target language (Esperanto-flavoured words) is subject–object–verb, puts adjectives after
their noun in mirrored order and the determiner last, marks subject and object with the
particles "ga" and "wo", turns prepositions into postpositions and moves an adverb from the
end of the sentence to just after the subject. Sentences have 3 to 12 source words, so the
decoder has to find words far from where it is writing: the case for attention.

`--attention` picks the decoder:

    none      the classic encoder–decoder: the decoder starts from the encoder's last state and
              never sees the other states, so the whole sentence passes through one vector (C12)
    dot       scores h_tᵀ s_j / √H between decoder state h_t and encoder state s_j (Luong)
    general   scores h_tᵀ W s_j (bilinear, Luong's "general")
    additive  scores vᵀ tanh(W_q h_t + W_k s_j) (Bahdanau)
    location  the PyTorch seq2seq tutorial's decoder (C13): α_t = softmax(W_a [h_{t−1}; x̃_t]
              + b_a) over the L_max source positions, c_t = H^E α_t, z_t = ReLU(W_c [x̃_t; c_t]
              + b_c), h_t = GRU(z_t, h_{t−1})

For none/dot/general/additive the decoder GRU reads the target words (teacher forcing) and
attention then looks at every encoder state from every decoder state in one batched call:

    c_t = Σ_j α_tj s_j,   h̃_t = tanh(W_c [h_t; c_t] + b_c),   p(y_t | ...) = softmax(W_o h̃_t + b_o)

Training pads each batch, masks padded source positions out of the attention (True =
allowed) and ignores padded target positions in the cross-entropy. Evaluation decodes
held-out sentences greedily and with beam search and reports exact match and token
accuracy; attention heat-maps show which source word each output word looked at (C14).
C12, C13, C14 are claims of the texts the examples check: see examples/README.md.

Run (from the repository root):

    python3 examples/translate.py                          # additive attention
    python3 examples/translate.py --attention none         # the one-vector bottleneck
    python3 examples/translate.py --attention location     # the seq2seq tutorial's decoder
    python3 examples/translate.py --quick                  # a few-second smoke run
    python3 examples/translate.py --resume                 # continue from <out>/checkpoint.npz

Outputs in --out (default runs/translate-<attention>): loss.png, attention.png (not for
--attention none), metrics.json, samples.txt (the showcase sentences translated),
checkpoint.npz.
"""

from __future__ import annotations

# _common first: it sets the BLAS thread count before NumPy loads
from _common import (CHECKPOINT_NAME, Checkpoint, LossBar, add_compile_flag, add_config_flags,
                     base_parser, compile_summary, eval_mode, make_config, parse_args,
                     plot_batch_losses, positive_int, prepare_run, print_outputs, pyplot,
                     restore_history, save_figure, setting, write_metrics)

import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

import minigrad as mg
import nn
from _seq2seq import (Batch, EOS, SPECIALS, Vocab, attention_figure, compiled_forward_backward,
                      make_batch, search, train_step)

ATTENTIONS = ("none", "dot", "general", "additive", "location")

# ------------------------------------------------------------------------------------------
# The two languages. Each source word has one target word; the grammar does the reordering.

DETERMINERS = {"the": "la", "a": "un", "my": "mi", "your": "vi", "his": "lia", "her": "ŝia"}
ADJECTIVES = {"green": "verda", "red": "ruĝa", "big": "granda", "small": "eta",
              "old": "maljuna", "young": "juna", "happy": "gaja", "sad": "trista",
              "blue": "blua", "quick": "rapida"}
ANIMATE_NOUNS = {"cat": "kato", "dog": "hundo", "fish": "fiŝo", "bird": "birdo", "man": "viro",
                 "woman": "virino", "child": "infano", "teacher": "instruisto",
                 "farmer": "farmisto", "horse": "ĉevalo", "king": "reĝo", "queen": "reĝino"}
PLACE_NOUNS = {"house": "domo", "garden": "ĝardeno", "park": "parko", "river": "rivero"}
NOUNS = {**ANIMATE_NOUNS, **PLACE_NOUNS}
TRANSITIVE_VERBS = {"eats": "manĝas", "sees": "vidas", "likes": "ŝatas", "follows": "sekvas",
                    "finds": "trovas", "helps": "helpas", "calls": "vokas",
                    "watches": "rigardas"}
INTRANSITIVE_VERBS = {"sleeps": "dormas", "runs": "kuras", "sings": "kantas",
                      "waits": "atendas", "laughs": "ridas"}
ADVERBS = {"today": "hodiaŭ", "quickly": "rapide", "often": "ofte", "again": "denove"}
PREPOSITIONS = {"in": "en", "near": "apud", "behind": "malantaŭ", "with": "kun"}
SUBJECT_MARK, OBJECT_MARK = "ga", "wo"
LEXICON = {**DETERMINERS, **ADJECTIVES, **NOUNS, **TRANSITIVE_VERBS, **INTRANSITIVE_VERBS,
           **ADVERBS, **PREPOSITIONS}

# sentences shown in the attention figure; they are kept out of the training data
SHOWCASE = ("my green cat eats the red fish",
            "the old farmer watches a big blue horse near the river again",
            "her sad child sees your quick dog in the park today",
            "the king sleeps")

MIN_LEN, MAX_LEN = 3, 12


def translate_words(words: list[str]) -> list[str]:
    """The reference translation of a source sentence produced by `sample_sentence`.

    Source:  NP_subj VERB [NP_obj] [PREP NP] [ADV],   NP = DET ADJ* NOUN
    Target:  NP'_subj ga [ADV'] [NP' PREP'] [NP'_obj wo] VERB',   NP' = NOUN' ADJ'* (mirrored) DET'
    """
    def noun_phrase(i: int) -> tuple[list[str], int]:       # parse DET ADJ* NOUN from word i
        j = i + 1
        while words[j] in ADJECTIVES:
            j += 1
        adjectives = [LEXICON[w] for w in reversed(words[i + 1:j])]
        return [LEXICON[words[j]]] + adjectives + [LEXICON[words[i]]], j + 1

    subject, i = noun_phrase(0)
    verb = words[i]
    i += 1
    obj, place, adverb = [], [], []
    if verb in TRANSITIVE_VERBS:
        phrase, i = noun_phrase(i)
        obj = phrase + [OBJECT_MARK]
    if i < len(words) and words[i] in PREPOSITIONS:
        phrase, j = noun_phrase(i + 1)
        place, i = phrase + [LEXICON[words[i]]], j
    if i < len(words):
        adverb, i = [LEXICON[words[i]]], i + 1
    assert i == len(words), f"not a sentence of the grammar: {' '.join(words)}"
    return subject + [SUBJECT_MARK] + adverb + place + obj + [LEXICON[verb]]


def _sentence_shapes() -> dict[int, list[tuple]]:
    """Every (subject adjectives, object adjectives or None, place adjectives or None, adverb)
    grouped by the source length it gives, so that lengths can be drawn uniformly."""
    shapes: dict[int, list[tuple]] = {}
    for n_subj in range(3):
        for n_obj in (None, 0, 1, 2):
            for n_place in (None, 0, 1, 2):
                for adverb in (False, True):
                    length = (3 + n_subj + (0 if n_obj is None else 2 + n_obj)
                              + (0 if n_place is None else 3 + n_place) + adverb)
                    shapes.setdefault(length, []).append((n_subj, n_obj, n_place, adverb))
    return shapes


SHAPES = _sentence_shapes()


def sample_sentence(rng: np.random.Generator, length: int) -> list[str]:
    """A random source sentence of exactly `length` words (MIN_LEN..MAX_LEN)."""
    def pick(words: dict) -> str:
        keys = list(words)
        return keys[rng.integers(len(keys))]

    def noun_phrase(n_adjectives: int, nouns: dict) -> list[str]:
        adjectives = [list(ADJECTIVES)[k] for k in rng.permutation(len(ADJECTIVES))[:n_adjectives]]
        return [pick(DETERMINERS)] + adjectives + [pick(nouns)]

    shapes = SHAPES[length]
    n_subj, n_obj, n_place, adverb = shapes[rng.integers(len(shapes))]
    words = noun_phrase(n_subj, ANIMATE_NOUNS)
    words.append(pick(INTRANSITIVE_VERBS if n_obj is None else TRANSITIVE_VERBS))
    if n_obj is not None:
        words += noun_phrase(n_obj, NOUNS)
    if n_place is not None:
        words += [pick(PREPOSITIONS)] + noun_phrase(n_place, NOUNS)
    if adverb:
        words.append(pick(ADVERBS))
    return words


Pair = tuple[list[str], list[str]]


def make_corpus(rng: np.random.Generator, n_train: int, n_test: int,
                min_len: int = MIN_LEN, max_len: int = MAX_LEN) -> tuple[list[Pair], list[Pair]]:
    """Distinct (source, target) pairs with source lengths uniform in [min_len, max_len].

    The held-out set is drawn first; training sentences never repeat a held-out one (nor a
    SHOWCASE sentence), so held-out scores measure generalisation.
    """
    seen = set(SHOWCASE)

    def draw(n: int) -> list[Pair]:
        pairs: list[Pair] = []
        tries = 0
        while len(pairs) < n:
            tries += 1
            if tries > 50 * n + 1000:
                raise ValueError(f"make_corpus: cannot find {n} distinct sentences of "
                                 f"{min_len}-{max_len} words")
            words = sample_sentence(rng, int(rng.integers(min_len, max_len + 1)))
            key = " ".join(words)
            if key not in seen:
                seen.add(key)
                pairs.append((words, translate_words(words)))
        return pairs
    test = draw(n_test)
    return draw(n_train), test


# ------------------------------------------------------------------------------------------
# Vocabularies (the Vocab class and padded batches are in _seq2seq.py)

def build_vocabs() -> tuple[Vocab, Vocab]:
    """Source and target vocabularies from the lexicon (independent of the sampled data)."""
    source = Vocab(list(LEXICON), SPECIALS[:1])                     # padding only
    target = Vocab(list(LEXICON.values()) + [SUBJECT_MARK, OBJECT_MARK])
    return source, target


# ------------------------------------------------------------------------------------------
# The model

class Seq2Seq(nn.Module):
    """GRU encoder, GRU decoder and one of ATTENTIONS between them.

        s_1..s_S = GRU_enc(embed(x)),   h_0 = s_S (the last real word's state)
        none/dot/general/additive:  h_t = GRU_dec(embed(y_{t−1}), h_{t−1})
            c_t = Σ_j α_tj s_j, α_t = softmax_j(score(h_t, s_j)) over real source words
            logits_t = W_o tanh(W_c [h_t; c_t] + b_c) + b_o     (none: W_c h_t, no c_t)
        location:  h_t, α_t = LocationAttentionDecoderStep(embed(y_{t−1}), h_{t−1}, s),
            logits_t = W_o h_t + b_o

    Shapes: B batch, S source length, T target length, E embedding size, H hidden size,
    V target vocabulary.
    """

    def __init__(self, src_vocab: int, tgt_vocab: int, embed_dim: int, hidden_size: int,
                 attention: str, max_len: int = MAX_LEN):
        super().__init__()
        if attention not in ATTENTIONS:
            raise ValueError(f"Seq2Seq: attention must be one of {ATTENTIONS}, got {attention!r}")
        self.attention_kind = attention
        E, H = embed_dim, hidden_size
        self.src_embed = nn.Embedding(src_vocab, E, padding_idx=0)
        self.encoder = nn.GRU(E, H)
        self.tgt_embed = nn.Embedding(tgt_vocab, E, padding_idx=0)
        if attention == "location":
            self.decoder_step = nn.LocationAttentionDecoderStep(E, H, max_len)
            self.out = nn.Linear(H, tgt_vocab)
            return
        self.decoder = nn.GRU(E, H)
        if attention == "dot":
            self.attention = nn.DotProductAttention(scaled=True)
        elif attention == "general":
            self.attention = nn.BilinearAttention(H, H)
        elif attention == "additive":
            self.attention = nn.AdditiveAttention(H, H, H)
        self.combine = nn.Linear(H if attention == "none" else 2 * H, H)
        self.out = nn.Linear(H, tgt_vocab)

    def encode(self, src, src_len):
        """src (B, S) ids, src_len (B,) lengths (an integer Tensor or array) -> memory (states
        (B, S, H), mask bool (B, 1, S)) and the decoder's first state (the last real word's
        state (B, H),). Both the last state and the mask are operations on the lengths, so a
        compiled training step computes them again for each batch."""
        states, _ = self.encoder(self.src_embed(src))               # (B, S, H)
        B, S, device = states.shape[0], states.shape[1], states.device
        lengths = src_len if isinstance(src_len, mg.Tensor) else mg.tensor(src_len,
                                                                          device=device)
        # the state after each sentence's last real word, not after its padding
        last = states[mg.arange(B, device=device), lengths - 1]     # (B, H)
        # True where the key position holds a real word (nn.padding_mask's mask)
        mask = (mg.arange(S, device=device) < lengths.unsqueeze(1)).unsqueeze(1)  # (B, 1, S)
        return (states, mask), (last,)

    def _readout(self, h, memory, mask):
        """h (B, T, H) decoder states -> (logits (B, T, V), weights (B, T, S) or None)."""
        if self.attention_kind == "none":
            return self.out(mg.tanh(self.combine(h))), None
        context, weights = self.attention(h, memory, memory, mask)   # (B, T, H), (B, T, S)
        attended = mg.tanh(self.combine(mg.concat([h, context], axis=-1)))   # (B, T, H)
        return self.out(attended), weights

    def forward(self, src, src_len: np.ndarray, tgt_in):
        """Teacher forcing: src (B, S), tgt_in (B, T) -> (logits (B, T, V), weights
        (B, T, S) or None)."""
        (memory, mask), (last,) = self.encode(src, src_len)
        if self.attention_kind == "location":
            h, logits, weights = last, [], []
            emb = self.tgt_embed(tgt_in)                            # (B, T, E)
            for t in range(emb.shape[1]):
                h, alpha = self.decoder_step(emb[:, t], h, memory, mask[:, 0])  # (B, H), (B, S)
                logits.append(self.out(h))
                weights.append(alpha)
            return mg.stack(logits, axis=1), mg.stack(weights, axis=1)
        h, _ = self.decoder(self.tgt_embed(tgt_in), last.unsqueeze(0))  # (B, T, H)
        return self._readout(h, memory, mask)

    def step(self, y_prev: np.ndarray, state: tuple, memory: tuple):
        """One decoding step: previous words (B,), state (h (B, H),) -> (log-probs (B, V) as a
        NumPy array, new state, weights (B, S) as NumPy or None)."""
        (h,), (memory, mask) = state, memory
        emb = self.tgt_embed(y_prev)                                # (B, E)
        if self.attention_kind == "location":
            h, alpha = self.decoder_step(emb, h, memory, mask[:, 0])
            logits, weights = self.out(h), alpha
        else:
            out, h_n = self.decoder(emb.unsqueeze(1), h.unsqueeze(0))    # (B, 1, H)
            h = h_n[0]
            logits, weights = self._readout(out, memory, mask)
            logits = logits[:, 0]
            weights = None if weights is None else weights[:, 0]
        log_probs = mg.log_softmax(logits, axis=-1).numpy()
        return log_probs, (h,), None if weights is None else weights.numpy()


# ------------------------------------------------------------------------------------------
# Decoding

def decode(model: Seq2Seq, batch: Batch, max_steps: int, beam: int = 0, device: str = "cpu"):
    """Greedy (beam = 0: (ids (B, steps), weights (B, steps, S) or None)) or beam search
    (ids) on a padded batch, with _seq2seq.py's decoders."""
    memory, state = model.encode(mg.tensor(batch.src, device=device), batch.src_len)
    ids, weights = search(model, memory, state, max_steps, beam)
    return ids if beam else (ids, weights)


def score_translations(predicted: np.ndarray, batch: Batch, tgt_vocab: Vocab) -> dict:
    """Exact match (the whole output, </s> included, equals the reference) and token accuracy
    (reference positions, </s> included, where the output has the same word), per sentence."""
    exact, correct, total = [], [], []
    for b in range(len(batch.src)):
        reference = batch.tgt_out[b][batch.tgt_out[b] != 0]
        output = predicted[b].copy()
        after_eos = np.cumsum(output == EOS) - (output == EOS) > 0
        output[after_eos] = 0                                 # nothing counts after </s>
        output = output[:len(reference)]
        hits = int((output == reference[:len(output)]).sum())
        n_out = len(tgt_vocab.decode(predicted[b]))
        exact.append(hits == len(reference) and n_out == len(reference) - 1)
        correct.append(hits)
        total.append(len(reference))
    return {"exact": np.array(exact), "correct": np.array(correct), "total": np.array(total)}


def evaluate(model: Seq2Seq, pairs: list[Pair], vocabs: tuple[Vocab, Vocab], beam: int = 0,
             batch_size: int = 500, device: str = "cpu") -> dict:
    """Held-out scores with greedy decoding (beam = 0) or beam search; overall and per source
    length."""
    src_vocab, tgt_vocab = vocabs
    parts = []
    with eval_mode(model):
        for i in range(0, len(pairs), batch_size):
            batch = make_batch(pairs[i:i + batch_size], src_vocab, tgt_vocab)
            ids = decode(model, batch, batch.tgt_out.shape[1] + 2, beam, device)
            parts.append((score_translations(ids if beam else ids[0], batch, tgt_vocab),
                          batch.src_len))
    exact = np.concatenate([p["exact"] for p, _ in parts])
    correct = np.concatenate([p["correct"] for p, _ in parts])
    total = np.concatenate([p["total"] for p, _ in parts])
    src_len = np.concatenate([n for _, n in parts])
    by_length = {int(n): {"exact_match": float(exact[src_len == n].mean()),
                          "token_accuracy": float(correct[src_len == n].sum()
                                                  / total[src_len == n].sum()),
                          "count": int((src_len == n).sum())}
                 for n in np.unique(src_len)}
    return {"exact_match": float(exact.mean()), "token_accuracy": float(correct.sum()
                                                                         / total.sum()),
            "by_length": by_length}


# ------------------------------------------------------------------------------------------
# Training

@dataclass
class Config:
    """A run's settings; those with a help text are flags too (--hidden-size 64)."""
    attention: str = "additive"                  # its flag, with the choices, is build_parser's
    embed_dim: int = setting(64, "word embedding size E")
    hidden_size: int = setting(128, "GRU hidden size H")
    n_train: int = setting(12000, "training sentences", positive_int)
    n_test: int = setting(1000, "held-out sentences", positive_int)
    epochs: int = setting(3, "training epochs", positive_int)
    batch_size: int = setting(64, "sentences per batch", positive_int)
    lr: float = setting(5e-3, "Adam learning rate")
    lr_decay: float = setting(0.7, "learning-rate factor per epoch")
    clip: float = 1.0
    beam: int = setting(4, "beam width")
    min_len: int = MIN_LEN
    max_len: int = MAX_LEN


QUICK = dict(embed_dim=16, hidden_size=32, n_train=640, n_test=64, epochs=3, batch_size=32,
             lr=1e-2, beam=2, max_len=6)


HISTORY = {"loss": [], "epoch_exact": [], "epoch_by_length": [], "curve_step": [],
           "curve_exact": [], "train_seconds": 0.0, "epochs_done": 0}


def train(config: Config, out: Path, seed: int, device: str = "cpu", resume: Path | None = None,
          show_progress: bool = True, log=None, args=None) -> tuple[Seq2Seq, dict]:
    """Build the data and the model, train for config.epochs epochs (checkpointing after each,
    and at the step where Ctrl-C stops it) and return (model, results). `results` holds the
    loss history, per-epoch held-out exact match (greedy; overall and per source length), the
    final greedy and beam scores and the timings. Progress lines go to `log` (default: printed
    above the progress bar). `args`: the script's arguments, for the checkpoint's settings and
    the resume command."""
    rng = np.random.default_rng(seed)
    train_pairs, test_pairs = make_corpus(rng, config.n_train, config.n_test,
                                          config.min_len, config.max_len)
    vocabs = build_vocabs()
    src_vocab, tgt_vocab = vocabs
    model = Seq2Seq(len(src_vocab), len(tgt_vocab), config.embed_dim, config.hidden_size,
                    config.attention, max_len=config.max_len).to(device)
    optimizer = nn.optim.Adam(model.parameters(), lr=config.lr)
    steps_per_epoch = math.ceil(len(train_pairs) / config.batch_size)
    # lr · decay^(epochs done, fractional): steadier final weights, and a schedule that does
    # not depend on --epochs, so a resumed run continues exactly where it stopped
    scheduler = nn.optim.LambdaLR(optimizer,
                                  lambda step: config.lr_decay ** (step / steps_per_epoch))
    # exact match on the first 200 held-out sentences, four times per epoch (not timed)
    curve_pairs, eval_every = test_pairs[:200], max(1, steps_per_epoch // 4)
    order_rng = np.random.default_rng(seed + 1)
    run = compiled_forward_backward(model, args)    # a capture per batch shape (B, S, T)
    # more epochs continue the same run (the schedule does not depend on them)
    settings = {k: v for k, v in asdict(config).items() if k != "epochs"}
    with Checkpoint(out / CHECKPOINT_NAME, args, model, optimizer, scheduler,
                    generators={"order": order_rng}, config=dict(settings, seed=seed),
                    ignore=("epochs", "none_epochs"), resume_from=resume) as checkpoint:
        state = checkpoint.resume()
        history = restore_history(HISTORY, state)
        order, position = None, 0                       # this epoch's order, batches done
        if state:
            position = int(state["position"])
            order = state["order"] if position else None
            (log or print)(f"resumed after epoch {history['epochs_done']} and {position} "
                           f"batches of the next")
        with LossBar(total=config.epochs * steps_per_epoch, desc=f"train [{config.attention}]",
                     initial=len(history["loss"]), disable=not show_progress) as bar:
            for epoch in range(history["epochs_done"], config.epochs):
                start, eval_seconds = time.perf_counter(), 0.0
                if order is None:
                    order = order_rng.permutation(len(train_pairs))
                for i in range(position * config.batch_size, len(order), config.batch_size):
                    batch = make_batch([train_pairs[j] for j in order[i:i + config.batch_size]],
                                       src_vocab, tgt_vocab)
                    loss = train_step(model, optimizer, (batch.src, batch.src_len, batch.tgt_in,
                                                         batch.tgt_out), config.clip, device, run)
                    scheduler.step()
                    history["loss"].append(loss)
                    bar.update(loss, epoch=epoch + 1)
                    if len(history["loss"]) % eval_every == 0:       # the learning curve
                        tick = time.perf_counter()
                        history["curve_step"].append(len(history["loss"]))
                        history["curve_exact"].append(
                            evaluate(model, curve_pairs, vocabs, device=device)["exact_match"])
                        eval_seconds += time.perf_counter() - tick
                    checkpoint.step_end(due=False, **history, order=order,
                                        position=i // config.batch_size + 1)
                history["train_seconds"] += time.perf_counter() - start - eval_seconds
                scores = evaluate(model, test_pairs, vocabs, device=device)
                history["epoch_exact"].append(scores["exact_match"])
                history["epoch_by_length"].append(           # exact match per source length
                    {str(n): entry["exact_match"] for n, entry in scores["by_length"].items()})
                history["epochs_done"] = epoch + 1
                (log or bar.write)(f"epoch {epoch + 1}: loss {bar.running_loss:.4f}, held-out "
                                   f"exact match (greedy) {scores['exact_match']:.3f}, training "
                                   f"time so far {history['train_seconds']:.1f} s")
                order, position = None, 0
                checkpoint.save(**history, order=None, position=0)
    start = time.perf_counter()
    greedy = evaluate(model, test_pairs, vocabs, device=device)
    beam = evaluate(model, test_pairs, vocabs, beam=config.beam, device=device) \
        if config.beam > 1 else None
    results = {"history": history, "greedy": greedy, "beam": beam,
               "eval_seconds": time.perf_counter() - start,
               "n_train": len(train_pairs), "n_test": len(test_pairs),
               "n_parameters": int(sum(p.data.size for p in model.parameters())),
               "steps": len(history["loss"]), "vocabs": vocabs, "test_pairs": test_pairs,
               "training_step": compile_summary(run)}
    return model, results


# ------------------------------------------------------------------------------------------
# Figures

def plot_loss(history: dict, steps_per_epoch: int, title: str, path: Path) -> Path:
    """Training loss per step (and its running mean) with held-out exact match per epoch."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter
    loss = history["loss"]
    fig, ax = pyplot().subplots(figsize=(7, 4))
    plot_batch_losses(ax, np.arange(1, len(loss) + 1), loss, max(1, min(50, len(loss) // 10)),
                      "cross-entropy per target word")
    ax.set_title(title)
    ax2 = ax.twinx()
    ax2.plot(history["curve_step"], history["curve_exact"], ".-", color="tab:orange",
             label="held-out exact match (greedy, 200 sentences)")
    exact = history["epoch_exact"]
    ax2.plot(np.arange(1, len(exact) + 1) * steps_per_epoch, exact, "o", color="tab:red",
             label="held-out exact match (greedy, all, end of epoch)")
    ax2.set_ylim(0, 1.02)
    ax2.set_ylabel("held-out exact match")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    lines = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    labels = ax.get_legend_handles_labels()[1] + ax2.get_legend_handles_labels()[1]
    ax.legend(lines, labels, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2,
              fontsize=8, frameon=False)
    return save_figure(fig, path)


def translate_examples(model: Seq2Seq, pairs: list[Pair], vocabs: tuple[Vocab, Vocab],
                       device: str = "cpu") -> tuple[list[list[str]], np.ndarray]:
    """Greedy translations of `pairs` and the attention weights (B, steps, S) behind them."""
    src_vocab, tgt_vocab = vocabs
    batch = make_batch(pairs, src_vocab, tgt_vocab)
    with eval_mode(model):
        ids, weights = decode(model, batch, batch.tgt_out.shape[1] + 2, device=device)
    return [tgt_vocab.decode(row) for row in ids], weights


def sample_lines(pairs: list[Pair], outputs: list[list[str]]) -> list[str]:
    """Source, model output (marked correct or WRONG) and reference, for samples.txt."""
    lines = []
    for (source, reference), words in zip(pairs, outputs):
        status = "correct" if words == reference else "WRONG"
        lines.append(f"{' '.join(source)}\n  -> {' '.join(words)}   [{status}]\n"
                     f"     reference: {' '.join(reference)}")
    return lines


def plot_attention(pairs: list[Pair], outputs: list[list[str]], weights: np.ndarray,
                   title: str, path: Path) -> Path:
    """Heat-maps of attention weights, one panel per sentence: rows are the words the decoder
    wrote (and </s>), columns the source words; row t sums to 1 over the source."""
    titles = [f"{' '.join(source)}\n(translation {'correct' if words == reference else 'WRONG'})"
              for (source, reference), words in zip(pairs, outputs)]
    return attention_figure([source for source, _ in pairs], outputs, weights, titles, path,
                            xlabel="source word (attended to)",
                            ylabel="output word (being written)", suptitle=title)


# ------------------------------------------------------------------------------------------

def config_from_args(args) -> Config:
    """The defaults (or --quick's), then the flags given."""
    return make_config(Config, args, QUICK if args.quick else None)


def build_parser():
    parser = base_parser(__doc__, default_out="runs/translate-{attention}")
    add_compile_flag(parser)
    parser.add_argument("--attention", choices=ATTENTIONS, default="additive",
                        help="decoder attention (default: additive)")
    add_config_flags(parser, Config)
    return parser


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(build_parser(), argv)
    out = prepare_run(args)
    config = config_from_args(args)
    start = time.perf_counter()
    model, results = train(config, out, args.seed, args.device, args.resume, args=args)
    history, vocabs = results["history"], results["vocabs"]
    steps_per_epoch = math.ceil(results["n_train"] / config.batch_size)
    plot_loss(history, steps_per_epoch,
              f"Training, attention = {config.attention} ({results['n_train']} sentences)",
              out / "loss.png")
    showcase = [(s.split(), translate_words(s.split())) for s in SHOWCASE
                if len(s.split()) <= config.max_len]
    outputs, weights = translate_examples(model, showcase, vocabs, device=args.device)
    lines = sample_lines(showcase, outputs)
    (out / "samples.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if config.attention != "none":
        plot_attention(showcase, outputs, weights,
                       f"Attention weights, attention = {config.attention}: each output word "
                       f"(row) and the source words it looked at", out / "attention.png")
    greedy, beam = results["greedy"], results["beam"]
    metrics = {
        "attention": config.attention, "seed": args.seed, "device": args.device,
        "quick": args.quick, "config": vars(config),
        "n_train": results["n_train"], "n_test": results["n_test"],
        "n_parameters": results["n_parameters"], "steps": results["steps"],
        "training_step": results["training_step"],
        "epochs": history["epochs_done"],
        "first_loss": history["loss"][0], "final_loss": float(np.mean(history["loss"][-20:])),
        "train_seconds": round(history["train_seconds"], 2),
        "eval_seconds": round(results["eval_seconds"], 2),
        "total_seconds": round(time.perf_counter() - start, 2),
        "greedy_exact_match": greedy["exact_match"],
        "greedy_token_accuracy": greedy["token_accuracy"],
        "beam_exact_match": None if beam is None else beam["exact_match"],
        "beam_token_accuracy": None if beam is None else beam["token_accuracy"],
        "epoch_exact_match": history["epoch_exact"],
        "curve": {"step": history["curve_step"], "exact_match": history["curve_exact"]},
        "greedy_by_length": greedy["by_length"],
    }
    write_metrics(out, metrics, args)
    print(f"held-out ({results['n_test']} sentences): greedy exact match "
          f"{greedy['exact_match']:.3f}, token accuracy {greedy['token_accuracy']:.3f}"
          + ("" if beam is None else f"; beam {config.beam}: exact match "
             f"{beam['exact_match']:.3f}, token accuracy {beam['token_accuracy']:.3f}"))
    print(f"training time {history['train_seconds']:.1f} s for {results['steps']} steps")
    print("\n".join(lines[:2]))
    print_outputs(out)
    return metrics


if __name__ == "__main__":
    main()
