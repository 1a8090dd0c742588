"""examples/translate.py: the languages, decoding, scoring, and --quick runs end to end."""

import json
import math
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES))

import translate  # noqa: E402

import minigrad as mg  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run_script(*args: str) -> subprocess.CompletedProcess:
    """Run examples/translate.py in a fresh interpreter (as a user would) and check it exits 0."""
    result = subprocess.run([sys.executable, str(EXAMPLES / "translate.py"), *args],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("translate")
    result = run_script("--quick", "--out", str(out))
    return out, result


# -- the languages ------------------------------------------------------------------------

def test_the_seed_sentence_is_reordered_by_hand():
    # SVO -> SOV, adjective after its noun, determiner last, particles ga / wo
    source = "my green cat eats the red fish".split()
    expected = "kato verda mi ga fiŝo ruĝa la wo manĝas".split()
    assert translate.translate_words(source) == expected


def test_every_part_of_the_grammar_moves_as_described():
    source = "her sad old child sees your quick dog in the big park today".split()
    # subject NP' ga, adverb, place NP' + postposition, object NP' wo, verb
    expected = ("infano maljuna trista ŝia ga hodiaŭ parko granda la en hundo rapida vi wo "
                "vidas").split()
    assert translate.translate_words(source) == expected


def test_sampled_sentences_have_the_requested_length_and_translate_word_for_word():
    rng = np.random.default_rng(0)
    for length in range(translate.MIN_LEN, translate.MAX_LEN + 1):
        for _ in range(20):
            source = translate.sample_sentence(rng, length)
            target = translate.translate_words(source)
            assert len(source) == length
            # the target holds exactly the translated source words plus the particles
            content = [w for w in target if w not in ("ga", "wo")]
            assert Counter(content) == Counter(translate.LEXICON[w] for w in source)
            verbs = {**translate.TRANSITIVE_VERBS, **translate.INTRANSITIVE_VERBS}
            verb = next(w for w in source if w in verbs)
            assert target.count("ga") == 1 and target[-1] == verbs[verb]     # verb last


def test_corpus_is_distinct_and_held_out_sentences_never_appear_in_training():
    rng = np.random.default_rng(1)
    train, test = translate.make_corpus(rng, 600, 200)
    train_keys = {" ".join(s) for s, _ in train}
    test_keys = {" ".join(s) for s, _ in test}
    assert len(train_keys) == 600 and len(test_keys) == 200
    assert not train_keys & test_keys
    assert not train_keys & set(translate.SHOWCASE)
    lengths = Counter(len(s) for s, _ in test)
    assert set(lengths) == set(range(translate.MIN_LEN, translate.MAX_LEN + 1))


def test_batches_are_padded_with_shifted_targets():
    src_vocab, tgt_vocab = translate.build_vocabs()
    pairs = [("the king sleeps".split(), "reĝo la ga dormas".split()),
             ("my green cat eats the red fish".split(),
              "kato verda mi ga fiŝo ruĝa la wo manĝas".split())]
    batch = translate.make_batch(pairs, src_vocab, tgt_vocab)
    assert batch.src.shape == (2, 7) and batch.tgt_in.shape == (2, 10)
    assert list(batch.src_len) == [3, 7]
    assert (batch.src[0, 3:] == 0).all() and (batch.tgt_out[0, 5:] == 0).all()
    bos, eos = tgt_vocab.stoi["<s>"], tgt_vocab.stoi["</s>"]
    assert batch.tgt_in[0, 0] == bos and batch.tgt_out[0, 4] == eos
    # decoder input is the output shifted right by one
    np.testing.assert_array_equal(batch.tgt_in[1, 1:], batch.tgt_out[1, :-1])
    assert tgt_vocab.decode(batch.tgt_out[1]) == pairs[1][1]


# -- decoding and scoring -----------------------------------------------------------------

def test_scores_count_words_up_to_end_of_sentence_only():
    src_vocab, tgt_vocab = translate.build_vocabs()
    pairs = [("the king sleeps".split(), "reĝo la ga dormas".split())] * 3
    batch = translate.make_batch(pairs, src_vocab, tgt_vocab)
    ref = batch.tgt_out[0]                                   # 4 words and </s>
    eos = tgt_vocab.stoi["</s>"]
    wrong_word = ref.copy()
    wrong_word[1] = tgt_vocab.stoi["kato"]
    early_end = np.array([ref[0], ref[1], eos, ref[3], ref[4]])   # right words after </s>
    predicted = np.stack([ref, wrong_word, early_end])
    scores = translate.score_translations(predicted, batch, tgt_vocab)
    assert scores["exact"].tolist() == [True, False, False]
    # words after an early </s> do not count, even where they match the reference
    assert scores["correct"].tolist() == [5, 4, 2]
    assert scores["total"].tolist() == [5, 5, 5]


@pytest.mark.parametrize("attention", ["general", "location"])
def test_beam_search_of_width_one_is_greedy_decoding(attention):
    mg.manual_seed(0)
    rng = np.random.default_rng(0)
    src_vocab, tgt_vocab = translate.build_vocabs()
    pairs = [(s, translate.translate_words(s))
             for s in (translate.sample_sentence(rng, n) for n in (3, 6, 9, 12))]
    batch = translate.make_batch(pairs, src_vocab, tgt_vocab)
    model = translate.Seq2Seq(len(src_vocab), len(tgt_vocab), 8, 16, attention)
    model.eval()
    greedy, weights = translate.decode(model, batch, 15)
    beam = translate.decode(model, batch, 15, beam=1)
    for b in range(len(pairs)):
        assert tgt_vocab.decode(greedy[b]) == tgt_vocab.decode(beam[b])
    # attention rows are distributions over the real (unpadded) source words
    for b, (source, _) in enumerate(pairs):
        np.testing.assert_allclose(weights[b].sum(axis=-1), 1.0, atol=1e-5)
        assert np.all(weights[b][:, len(source):] == 0.0)


def test_teacher_forcing_matches_step_by_step_decoding():
    # the batched decoder (all target steps at once) and the step function used for
    # decoding must compute the same distribution
    mg.manual_seed(1)
    src_vocab, tgt_vocab = translate.build_vocabs()
    pairs = [("my green cat eats the red fish".split(),
              "kato verda mi ga fiŝo ruĝa la wo manĝas".split())]
    batch = translate.make_batch(pairs, src_vocab, tgt_vocab)
    for attention in ("none", "additive", "location"):
        model = translate.Seq2Seq(len(src_vocab), len(tgt_vocab), 8, 16, attention)
        with mg.no_grad():
            logits, _ = model(mg.tensor(batch.src), batch.src_len, mg.tensor(batch.tgt_in))
            expected = mg.log_softmax(logits, axis=-1).numpy()[0]
            memory, state = model.encode(mg.tensor(batch.src), batch.src_len)
            for t in range(batch.tgt_in.shape[1]):
                log_probs, state, _ = model.step(batch.tgt_in[:, t], state, memory)
                np.testing.assert_allclose(log_probs[0], expected[t], atol=1e-5)


# -- the script end to end ----------------------------------------------------------------

def test_quick_run_writes_figures_and_sane_metrics(quick_run):
    out, result = quick_run
    for name in ("loss.png", "attention.png"):
        assert (out / name).read_bytes()[:8] == PNG_SIGNATURE
    assert (out / "checkpoint.npz").stat().st_size > 0
    assert "reference:" in (out / "samples.txt").read_text(encoding="utf-8")
    metrics = json.loads((out / "metrics.json").read_text())
    for key in ("greedy_exact_match", "greedy_token_accuracy", "beam_exact_match",
                "beam_token_accuracy", "first_loss", "final_loss", "train_seconds", "steps"):
        assert key in metrics
    assert math.isfinite(metrics["first_loss"]) and math.isfinite(metrics["final_loss"])
    assert metrics["first_loss"] > metrics["final_loss"]
    for key in ("greedy_exact_match", "greedy_token_accuracy", "beam_exact_match"):
        assert 0.0 <= metrics[key] <= 1.0
    assert str(out) in result.stdout


def test_resume_continues_the_interrupted_run_exactly(tmp_path):
    def run(epochs, out, resume=None):
        config = translate.Config(attention="dot", embed_dim=8, hidden_size=16, n_train=96,
                                  n_test=16, epochs=epochs, batch_size=32, beam=0, max_len=6)
        mg.manual_seed(0)
        _, results = translate.train(config, out, seed=3, resume=resume, show_progress=False,
                                     log=lambda message: None)
        return results

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    straight = run(3, tmp_path / "a")
    run(1, tmp_path / "b")
    resumed = run(3, tmp_path / "b", resume=tmp_path / "b" / "checkpoint.npz")
    assert len(resumed["history"]["loss"]) == len(straight["history"]["loss"]) == 9
    np.testing.assert_allclose(resumed["history"]["loss"], straight["history"]["loss"],
                               rtol=1e-6)
    assert resumed["history"]["epoch_exact"] == straight["history"]["epoch_exact"]

    # Ctrl-C in the middle of an epoch (3 batches each): the checkpoint keeps the epoch's
    # order and position, and the resumed run's losses are the straight run's, bit for bit
    (tmp_path / "c").mkdir()
    calls, original = [], translate.LossBar.update

    def update(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 5:
            signal.raise_signal(signal.SIGINT)
        return original(self, *args, **kwargs)
    translate.LossBar.update = update
    try:
        with pytest.raises(SystemExit):
            run(3, tmp_path / "c")
    finally:
        translate.LossBar.update = original
    resumed = run(3, tmp_path / "c", resume=tmp_path / "c" / "checkpoint.npz")
    np.testing.assert_array_equal(resumed["history"]["loss"], straight["history"]["loss"])


def test_resume_without_a_checkpoint_says_where_it_looked(tmp_path):
    result = subprocess.run([sys.executable, str(EXAMPLES / "translate.py"), "--quick",
                             "--resume", "--out", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "no checkpoint" in result.stderr and str(tmp_path) in result.stderr
