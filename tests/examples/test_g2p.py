"""examples/g2p.py and examples/_g2p_report.py: the standard split and its dev slice, the
scores with several references, the paired comparison, decoding, the GRU + attention model's
first 20 training losses against PyTorch's (stored in golden/g2p_torch_trajectory.npz by
benchmarks/g2p_torch_parity.py), a --quick run with checkpoint, resume and --say, and one with
location-aware attention."""

import gzip
import hashlib
import importlib
import json
import math
import sys
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
import nn

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GOLDEN = Path(__file__).resolve().parent / "golden" / "g2p_torch_trajectory.npz"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def g2p():
    sys.path.insert(0, str(EXAMPLES))
    return importlib.import_module("g2p")


@pytest.fixture(scope="module")
def cmudict(g2p):
    return importlib.import_module("_cmudict")


@pytest.fixture(scope="module")
def report(g2p):
    return importlib.import_module("_g2p_report")


@pytest.fixture(scope="module")
def split(g2p):
    return g2p.load_split()


# -- data ---------------------------------------------------------------------------------------

def test_read_pronunciations_keeps_every_pronunciation_of_a_word(cmudict, tmp_path):
    path = tmp_path / "small.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("READ  R IY D\nREAD  R EH D\n'TIS  T IH Z\nREAD  R IY D\n")
    assert cmudict.read_pronunciations(path) == {"read": [("R", "IY", "D"), ("R", "EH", "D")],
                                             "'tis": [("T", "IH", "Z")]}


def test_standard_split_and_dev_slice(cmudict, split):
    lexicon, parts = split
    train_file = cmudict.read_pronunciations(cmudict.DATA / "cmudict-0.7b.train.gz")
    assert len(train_file) == 106794 and len(parts["test"]) == 11994
    assert sorted(parts["train"] + parts["dev"]) == sorted(train_file)
    # no word on two sides, so every pronunciation of a word is on one side
    assert not (set(parts["train"]) & set(parts["dev"]))
    assert not ((set(parts["train"]) | set(parts["dev"])) & set(parts["test"]))
    assert 0.045 < len(parts["dev"]) / len(train_file) < 0.055
    # a fixed function of the spelling, written out independently: no order, no RNG
    assert parts["dev"] == sorted(w for w in train_file
                                  if int(hashlib.md5(w.encode()).hexdigest()[:8], 16) % 100 < 5)
    several = [w for w in parts["dev"] if len(lexicon[w]) > 1]
    assert several and len(lexicon[several[0]]) == len(train_file[several[0]])
    assert all(len(p) == 39 for p in [{x for prons in lexicon.values() for pr in prons
                                       for x in pr}])


def test_quick_slice_is_small_spread_and_keeps_the_sides(g2p, split):
    data = g2p.Data(*split, max_words=600)
    assert {k: len(v) for k, v in data.parts.items()} == {"train": 540, "dev": 30, "test": 30}
    assert set(data.parts["dev"]) <= set(split[1]["dev"])
    assert data.parts["train"][0][0] != data.parts["train"][-1][0]    # not only words on "a"
    assert len(data.train_pairs) == sum(len(split[0][w]) for w in data.parts["train"])
    first = g2p.Data(*split, max_words=600, pronunciations="first")
    assert first.train_pairs == [(w, split[0][w][0]) for w in data.parts["train"]]
    assert len(first.train_pairs) < len(data.train_pairs)     # the slice has alternates


def test_same_length_batches_cover_every_pair_once(g2p, split):
    data = g2p.Data(*split, max_words=600)
    lengths = [len(w) for w, _ in data.train_pairs]
    seq2seq = importlib.import_module("_seq2seq")
    plan = seq2seq.same_length_batches(lengths, 16, np.random.default_rng(1))
    assert sorted(i for batch in plan for i in batch) == list(range(len(lengths)))
    assert all(len(b) <= 16 and len({lengths[i] for i in b}) == 1 for b in plan)
    batch = seq2seq.make_batch([data.train_pairs[i] for i in plan[0]], data.letters,
                               data.phonemes)
    word, pron = data.train_pairs[plan[0][0]]
    assert batch.tgt_in[0, 0] == seq2seq.BOS and batch.tgt_out[0, len(pron)] == seq2seq.EOS
    assert tuple(data.phonemes.decode(batch.tgt_out[0])) == pron
    assert "".join(data.letters.itos[i] for i in batch.src[0]) == word


# -- scoring ------------------------------------------------------------------------------------

def test_wer_and_per_with_several_references(g2p, cmudict):
    assert cmudict.edit_distance("kitten", "sitting") == 3
    assert cmudict.edit_distance((), ("A", "B")) == 2
    lexicon = {"read": [("R", "IY", "D"), ("R", "EH", "D")], "to": [("T", "UW")],
               "a": [("AH",), ("EY",)], "live": [("L", "IH", "V"), ("L", "AY", "V", "Z")]}
    predictions = {"read": ("R", "EH", "D"),     # the second reference: correct, distance 0
                   "to": ("T", "AH", "W"),       # 2 edits from T UW (length 2)
                   "a": ("EY",),                 # correct
                   "live": ("L", "AY", "V")}     # 1 from both; the shorter (3) counts
    scores = g2p.evaluate(predictions, lexicon)
    assert scores["wer"] == pytest.approx(2 / 4)
    assert scores["per"] == pytest.approx((0 + 2 + 0 + 1) / (3 + 2 + 1 + 3))
    assert scores["per_word"] == "1010"          # a, live, read, to: sorted words
    errors = g2p.hardest_errors(predictions, lexicon)
    assert [e["word"] for e in errors] == ["to", "live"]


def test_paired_comparison_against_a_hand_count(report):
    # 10 words: A alone wrong on 1, B alone wrong on 4, both wrong on 1
    a = "1101111110"
    b = "1010101010"
    p = report.paired(a, b, resamples=4000)
    assert (p["a_only_wrong"], p["b_only_wrong"]) == (1, 4)
    assert p["difference"] == pytest.approx(0.2 - 0.5)
    # exact two-sided binomial test on 5 discordant words: 2·(1 + 5)/32
    assert p["mcnemar_p"] == pytest.approx(12 / 32)
    lo, hi = p["ci95"]
    assert lo <= p["difference"] <= hi and -0.8 < lo < hi < 0.4
    assert report.paired(a, a)["mcnemar_p"] == 1.0 and report.paired(a, a)["ci95"] == [0, 0]
    with pytest.raises(ValueError, match="different word lists"):
        report.paired(a, b[:-1])
    assert report.standard_error(0.25, 12) == pytest.approx(math.sqrt(0.25 * 0.75 / 12))


# -- model and decoding -------------------------------------------------------------------------

def _small(g2p, **changes):
    config = g2p.Config(**{**dict(g2p.QUICK), **changes})
    mg.manual_seed(0)
    return config, g2p.build_model(config, 12, 9)


@pytest.mark.parametrize("changes", [dict(attention="dot"), dict(attention="additive"),
                                     dict(attention="location-aware"),
                                     dict(readout="gru"),
                                     dict(readout="gru", attention="location-aware"),
                                     dict(decoder_input="fed"),
                                     dict(decoder_input="fed", attention="dot"),
                                     dict(model="transformer")])
def test_step_by_step_decoding_equals_teacher_forcing(g2p, changes):
    """Feeding the reference one phoneme at a time through step() gives the log-probabilities
    of the one teacher-forced call (each decoder GRU fused over the sequence; the Transformer's
    causal mask)."""
    _, model = _small(g2p, **changes)
    model.eval()
    rng = np.random.default_rng(0)
    letters = rng.integers(3, 12, size=(3, 5))
    tgt_in = np.concatenate([np.full((3, 1), 1), rng.integers(3, 9, size=(3, 4))], 1)
    with mg.no_grad():
        logits, weights = model(mg.tensor(letters), mg.tensor(tgt_in))
        expected = mg.log_softmax(logits, axis=-1).numpy()
        memory, state = model.encode(mg.tensor(letters))
        for t in range(tgt_in.shape[1]):
            log_probs, state, w = model.step(tgt_in[:, t], state, memory)
            np.testing.assert_allclose(log_probs, expected[:, t], atol=2e-5)
            if weights is not None or w is not None:
                np.testing.assert_allclose(w, weights.numpy()[:, t], atol=2e-6)


@pytest.mark.parametrize("attention", ["location-aware", "dot"])
def test_fed_decoder_reads_the_last_readout_and_the_plain_one_does_not(g2p, attention):
    """Input feeding: h_t reads h̃_{t−1} = tanh(W_c [h_{t−1}; c_{t−1}]), so a change of W_c
    moves the attention weights from the second phoneme on (never the first); without it the
    decoder's states, and so its weights, do not depend on W_c at all."""
    rng = np.random.default_rng(2)
    letters = mg.tensor(rng.integers(3, 12, size=(3, 5)))
    tgt_in = mg.tensor(np.concatenate([np.ones((3, 1), int), rng.integers(3, 9, (3, 3))], 1))
    for decoder_input in ("fed", "phoneme"):
        _, model = _small(g2p, attention=attention, decoder_input=decoder_input)
        model.eval()
        with mg.no_grad():
            before = model(letters, tgt_in)[1].numpy()
            model.combine.weight.data = model.combine.weight.data * 3.0
            after = model(letters, tgt_in)[1].numpy()
        np.testing.assert_array_equal(after[:, 0], before[:, 0])
        if decoder_input == "fed":
            assert (np.abs(after - before).max(axis=(0, 2))[1:] > 1e-6).all()   # every t ≥ 1
        else:
            np.testing.assert_array_equal(after, before)
    with pytest.raises(ValueError, match="decoder_input 'fed' reads h̃_{t−1} of the linear "
                                         "readout, got readout 'gru'"):
        _small(g2p, decoder_input="fed", readout="gru")
    with pytest.raises(ValueError, match="decoder_input must be 'phoneme' or 'fed', got 'feed'"):
        _small(g2p, decoder_input="feed")


@pytest.mark.parametrize("kind", ["element", "locked"])
def test_dropout_kind_locked_shares_one_draw_along_the_sequence(g2p, kind):
    _, model = _small(g2p, dropout=0.5, dropout_kind=kind)
    x = mg.ones(4, 6, 8)
    mg.manual_seed(1)
    mask = model.drop(x).numpy()
    assert set(np.unique(mask)) == {0.0, 2.0}
    shared = (mask == mask[:, :1]).all()
    assert shared if kind == "locked" else not shared
    assert model.eval().drop(x) is x
    with pytest.raises(ValueError, match="dropout_kind must be 'element' or 'locked', got 'lock'"):
        _small(g2p, dropout_kind="lock")


@pytest.mark.parametrize("changes", [dict(readout="linear"), dict(readout="gru"),
                                     dict(attention="location-aware"), dict(decoder_input="fed"),
                                     dict(model="transformer")])
def test_beam_of_one_is_greedy_and_wider_beams_score_at_least_as_well(g2p, changes):
    seq2seq = importlib.import_module("_seq2seq")
    _, net = _small(g2p, **changes)
    net.eval()
    letters = mg.tensor(np.random.default_rng(1).integers(3, 12, size=(4, 6)))
    greedy, _ = seq2seq.greedy_decode(net, *net.encode(letters), 8)
    beam1 = seq2seq.beam_decode(net, *net.encode(letters), 8, beam=1)
    for row_g, row_b in zip(greedy, beam1):
        cut = list(row_g).index(seq2seq.EOS) + 1 if seq2seq.EOS in row_g else len(row_g)
        np.testing.assert_array_equal(row_b[:cut], row_g[:cut])

    def log_prob(ids):   # Σ log p of a finished output under the model
        seq = [seq2seq.BOS] + list(ids[:list(ids).index(seq2seq.EOS) + 1])
        with mg.no_grad():
            logits, _ = net(letters[:1], mg.tensor(np.array([seq[:-1]])))
            lp = mg.log_softmax(logits, axis=-1).numpy()[0]
        return sum(lp[t, y] for t, y in enumerate(seq[1:]))
    beam4 = seq2seq.beam_decode(net, *net.encode(letters[:1]), 8, beam=4)
    if seq2seq.EOS in beam4[0] and seq2seq.EOS in greedy[0]:
        assert log_prob(beam4[0]) >= log_prob(greedy[0]) - 1e-4


@pytest.mark.parametrize("attention", ["dot", "additive"])
def test_first_20_losses_match_pytorch(g2p, attention):
    seq2seq = importlib.import_module("_seq2seq")
    golden = nn.load(GOLDEN)[attention]
    known = {f.name for f in fields(g2p.Config)}
    config = g2p.Config(**{k: v for k, v in golden["config"].items() if k in known})
    model = g2p.GRUAttentionG2P(golden["n_letters"], golden["n_phonemes"], config)
    model.load_state_dict(golden["weights"])
    optimizer = nn.optim.Adam(model.parameters(), lr=config.lr)
    losses = []
    for step, b in enumerate(golden["batches"]):
        src = b["letters"].astype(np.int64)
        batch = seq2seq.Batch(src, np.full(len(src), src.shape[1]),
                              *(b[k].astype(np.int64) for k in ("tgt_in", "tgt_out")))
        lr = g2p.learning_rate(config, g2p.run_progress(config, step, 0.0))
        losses.append(g2p.train_step(model, optimizer, (batch.src, batch.tgt_in, batch.tgt_out),
                                     config.clip, "cpu", lr=lr))
    torch_losses = np.asarray(golden["torch_losses"])
    assert len(losses) == 20 and torch_losses[-1] < torch_losses[0]
    np.testing.assert_allclose(losses, torch_losses, rtol=2e-6)


@pytest.mark.parametrize("changes", [dict(attention="dot"), dict(attention="additive"),
                                     dict(attention="location-aware"),
                                     dict(attention="location-aware", decoder_input="fed")])
def test_compiled_training_steps_equal_eager_ones_bit_for_bit(g2p, changes):
    """The scripts train through mg.compile: on batches of three shapes (captures, then
    replays of each, dropout drawn anew at every step) the compiled steps give the eager
    steps' losses and weights exactly, for every attention kind."""
    seq2seq = importlib.import_module("_seq2seq")
    config = g2p.Config(**{**g2p.QUICK, **changes, "dropout": 0.2})
    rng = np.random.default_rng(5)
    shapes = [(4, 3, 5), (3, 1, 2), (4, 3, 5), (2, 6, 4)] * 3      # (B, S, T), shapes recur
    batches = [(rng.integers(1, 20, (b, s)), rng.integers(3, 30, (b, t)),
                rng.integers(3, 30, (b, t))) for b, s, t in shapes]

    def train(compiled: bool):
        mg.manual_seed(0)
        model = g2p.GRUAttentionG2P(20, 30, config)
        optimizer = nn.optim.Adam(model.parameters(), lr=config.lr)
        run = seq2seq.compiled_forward_backward(model, None) if compiled else None
        losses = [g2p.train_step(model, optimizer, batch, config.clip, "cpu", run, lr=1e-2,
                                 label_smoothing=0.1) for batch in batches]
        return losses, {k: np.array(v) for k, v in model.state_dict().items()}, run

    eager_losses, eager_weights, _ = train(False)
    losses, weights, run = train(True)
    assert run.stats.replays >= len(batches) - 2 * 3             # two eager calls per shape
    assert losses == eager_losses
    for name, value in eager_weights.items():
        np.testing.assert_array_equal(weights[name], value, err_msg=name)


# -- runs ---------------------------------------------------------------------------------------

def test_quick_run_learns_keeps_the_best_resumes_and_says(g2p, tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    saved = g2p.main(["--quick", "--out", str(out), "--readout", "gru", "--ema", "0.5"])
    assert saved["config"]["attention"] == "location-aware"     # the default
    assert saved["training_step"]["replays"] > 0, saved["training_step"]   # captured, replayed
    for name in ("curves.png", "attention.png"):
        assert (out / name).read_bytes()[:8] == PNG_SIGNATURE
    assert saved["steps"] == 60 and saved["words"] == {"train": 540, "dev": 30, "test": 30}
    assert saved["final_loss"] < math.log(39 + 3) - 0.5          # below a uniform guess
    curve = saved["curve"]
    assert curve["eval_step"] == [30, 60]
    best = int(np.argmin(curve["dev_wer"]))                    # the first of equals
    assert saved["best_step"] == curve["eval_step"][best]
    assert nn.load(out / "best.npz")["state"]["step"] == saved["best_step"]
    assert saved["dev_greedy"]["words"] == 30 and len(saved["test_beam"]["per_word"]) == 30
    assert saved["test_greedy"]["words"] == saved["test_beam"]["words"] == 30
    # --ema: dev scores, and best.npz keeps, the moving average of the weights
    checkpoint, best = nn.load(out / "checkpoint.npz"), nn.load(out / "best.npz")
    average = checkpoint["state"]["average"]
    assert int(average["n_averaged"]) == 60
    if saved["best_step"] == 60:
        for name, weight in best["model"].items():
            np.testing.assert_array_equal(weight, average["module." + name])
    assert any(not np.array_equal(w, average["module." + k])
               for k, w in checkpoint["model"].items())
    assert best["model"]["attention.filters"].shape == (10, 7)   # location filters × width

    resumed = g2p.main(["--quick", "--out", str(out), "--resume", "--steps", "70"])
    assert resumed["steps"] == 70 and resumed["curve"]["eval_step"] == [30, 60, 70]
    assert resumed["curve"]["dev_wer"][:2] == curve["dev_wer"]
    assert resumed["config"]["readout"] == "gru"               # from the checkpoint
    assert int(nn.load(out / "checkpoint.npz")["state"]["average"]["n_averaged"]) == 70

    capsys.readouterr()
    said = g2p.main(["--out", str(out), "--say", "Minigrad", "attention"])
    assert set(said) == {"minigrad", "attention"} and "minigrad" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="not in the training alphabet"):
        g2p.main(["--out", str(out), "--say", "w0rd"])


def test_average_from_keeps_the_mean_of_the_last_steps_weights(g2p, tmp_path):
    """--average-from 0.5 on 60 steps: the mean of the weights after steps 31..60 (progress
    30/60 and on), scored at step 60 and kept when best; the step-30 evaluation still scores
    the trained weights. --ema beside it is refused."""
    out = tmp_path / "run"
    saved = g2p.main(["--quick", "--out", str(out), "--average-from", "0.5"])
    checkpoint, best = nn.load(out / "checkpoint.npz"), nn.load(out / "best.npz")
    average = checkpoint["state"]["average"]
    assert int(average["n_averaged"]) == 30 and saved["config"]["average_from"] == 0.5
    if saved["best_step"] == 60:
        for name, weight in best["model"].items():
            np.testing.assert_array_equal(weight, average["module." + name])
    with pytest.raises(SystemExit, match="give one"):
        g2p.main(["--quick", "--out", str(tmp_path / "both"), "--ema", "0.9",
                  "--average-from", "0.5"])
    config = lambda *flags: g2p.config_from_args(g2p.parse_args(g2p.build_parser(), list(flags)))
    assert config().average_from == 0.75 and config().ema == 0.0          # the default
    assert config("--ema", "0.9").average_from == 0.0                     # in its place
    assert config("--average-from", "0").average_from == 0.0


class _Killed(BaseException):
    """The end of a process that stops at once (not an error the script could catch)."""


def test_report_resumes_a_stopped_run_to_the_same_end(g2p, report, tmp_path, monkeypatch):
    """A recorded run killed after its first periodic checkpoint (the process gone at once,
    as when a machine goes down) and gone on with by `_g2p_report.py resume` ends where the
    same run made at one go ends: the same dev curve, losses, best step and test words; its
    record keeps the command, start and the resumption."""
    monkeypatch.setattr(report, "RUNS", tmp_path / "runs")
    monkeypatch.setattr(report, "RESULTS", tmp_path / "results")
    arguments = ["--quick", "--steps", "24", "--eval-every", "8", "--average-from", "0.5"]
    whole = g2p.main([*arguments, "--out", str(tmp_path / "whole")])
    out, _ = report.start("stopped", arguments)
    saving = g2p.Checkpoint.step_end

    def killed_after_a_save(self, due, **state):
        saving(self, due, **state)
        if due:
            raise _Killed

    with monkeypatch.context() as patch:
        patch.setattr(g2p.Checkpoint, "step_end", killed_after_a_save)
        with pytest.raises(_Killed):
            g2p.main([*arguments, "--out", str(out)])
    stopped_at = len(nn.load(out / g2p.CHECKPOINT_NAME)["state"]["history"]["loss"])
    assert stopped_at == 8 and not (out / "metrics.json").exists()
    record = json.loads(report.resume("stopped").read_text(encoding="utf-8"))
    assert record["command"] == "python3 examples/g2p.py " + " ".join(arguments)
    assert len(record["resumed"]) == 1 and "arguments" not in record
    assert f"resumed from {out / g2p.CHECKPOINT_NAME}" in (out / "run.log").read_text()
    resumed = record["metrics"]
    assert resumed["steps"] == whole["steps"] == 24
    for key in ("curve", "final_loss", "best_step"):
        expected, got = whole[key], resumed[key]
        if key == "curve":
            expected, got = ({k: v for k, v in c.items() if k != "eval_seconds"}
                             for c in (expected, got))
        assert got == expected, key
    assert resumed["test_beam"]["per_word"] == whole["test_beam"]["per_word"]
    with pytest.raises(SystemExit, match="no run started"):
        report.resume("never")


def test_transformer_quick_run_trains_resumes_and_says(g2p, tmp_path):
    out = tmp_path / "run"
    saved = g2p.main(["--quick", "--out", str(out), "--model", "transformer", "--steps", "30",
                      "--eval-every", "30"])
    assert saved["config"]["model"] == "transformer" and saved["config"]["lr"] == 1e-2
    assert saved["final_loss"] < math.log(39 + 3) - 0.5          # below a uniform guess
    assert not (out / "attention.png").exists()                  # the GRU model's figure
    resumed = g2p.main(["--quick", "--out", str(out), "--resume", "--steps", "35"])
    assert resumed["config"]["model"] == "transformer" and resumed["steps"] == 35
    assert set(g2p.main(["--out", str(out), "--say", "ab"])) == {"ab"}


def test_weight_decay_makes_adamw_and_zero_keeps_adam(g2p):
    args = g2p.build_parser().parse_args(["--quick", "--weight-decay", "0.05"])
    config = g2p.config_from_args(args)
    model = g2p.build_model(config, 30, 42)
    decayed = g2p.make_optimizer(model, config)
    assert type(decayed) is nn.optim.AdamW and decayed.param_groups[0]["weight_decay"] == 0.05
    plain = g2p.make_optimizer(model, g2p.config_from_args(g2p.build_parser().parse_args(
        ["--quick"])))
    assert type(plain) is nn.optim.Adam and plain.param_groups[0]["weight_decay"] == 0


def test_transformer_defaults_and_unknown_models(g2p):
    args = g2p.build_parser().parse_args(["--model", "transformer"])
    args.quick = False
    config = g2p.config_from_args(args)
    assert (config.lr, config.warmup, config.d_model, config.layers) == (1e-3, 0.05, 256, 3)
    assert g2p.config_from_args(args, {"model": "transformer", "lr": 2e-3}).lr == 2e-3
    with pytest.raises(ValueError, match="'gru' or 'transformer', got 'rnn'"):
        g2p.build_model(g2p.Config(model="rnn"), 5, 5)


def test_alignment_figure_of_a_word_that_never_wrote_the_end(g2p, tmp_path):
    steps = g2p.max_steps_for(3)                               # stopped by the step limit
    predictions = {"abc": ("AH",) * steps, "ab": ("EY", "B")}
    weights = {"abc": np.full((steps, 3), 1 / 3), "ab": np.full((3, 2), 0.5)}
    path = g2p.plot_alignments(predictions, weights, {}, tmp_path / "a.png")
    assert path.read_bytes()[:8] == PNG_SIGNATURE


def test_say_without_a_model_names_the_command_that_makes_one(g2p, tmp_path, monkeypatch):
    monkeypatch.setattr(g2p, "SHIPPED_MODEL", tmp_path / "none.npz")
    with pytest.raises(SystemExit, match=r"make one with: python examples/g2p.py"):
        g2p.main(["--out", str(tmp_path / "empty"), "--say", "word"])


def test_shipped_model_says_words(g2p, tmp_path, capsys):
    if not g2p.SHIPPED_MODEL.exists():
        pytest.skip("no trained model shipped in examples/data/")
    assert g2p.SHIPPED_MODEL.stat().st_size <= 10 * 2 ** 20
    said = g2p.main(["--out", str(tmp_path), "--say", "minigrad", "attention"])
    assert said["attention"] == ("AH", "T", "EH", "N", "SH", "AH", "N")


def test_readme_g2p_regions_agree_with_the_results(report, g2p):
    runs = report.load_runs()
    if not runs:
        pytest.skip("no recorded g2p runs")
    text = report.README.read_text(encoding="utf-8")
    assert report.render(text, runs) == text
    if g2p.SHIPPED_MODEL.exists():              # the model --say uses is the default's
        assert report.shipped_run() == report.default_run(runs)
    chosen = runs[report.default_run(runs)]["metrics"]["config"]
    default = g2p.Config()      # a setting newer than a recorded run ran at its default then
    assert {f.name: chosen.get(f.name, getattr(default, f.name)) for f in fields(g2p.Config)} \
        == {f.name: getattr(default, f.name) for f in fields(g2p.Config)}
