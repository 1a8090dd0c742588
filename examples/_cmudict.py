"""The CMU Pronouncing Dictionary in the standard split of published G2P results, and G2P's
scores.

Data: examples/data/cmudict-standard/, CMUdict 0.7b as split for Yao & Zweig's BiLSTM (106,794
training and 11,994 test words, no word in both, no stress; CMU's BSD licence beside the
files). Dev: the training words whose MD5 hash, mod 100, is below 5 (~5 %), so every
pronunciation of a word stays on one side. Nothing is downloaded.

    WER = words whose output equals no reference of the word / words
    PER = Σ edit distance to the closest reference / Σ that reference's length
"""

from __future__ import annotations

import functools
import gzip
import hashlib
from pathlib import Path

import numpy as np

from _seq2seq import Vocab

DATA = Path(__file__).resolve().parent / "data" / "cmudict-standard"
DEV_PERCENT = 5

Lexicon = dict[str, list[tuple[str, ...]]]       # word -> its pronunciations


# ------------------------------------------------------------------------------------------
# The split


def read_pronunciations(path: Path) -> Lexicon:
    """One gzipped file of the split: `WORD  PH PH ...` a line, a line for each pronunciation
    of a word. Words come back in lower case."""
    lexicon: Lexicon = {}
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            word, *phonemes = line.split()
            prons = lexicon.setdefault(word.lower(), [])
            if tuple(phonemes) not in prons:
                prons.append(tuple(phonemes))
    return lexicon


def is_dev(word: str) -> bool:
    """A training word is held out for development when the first 4 bytes of the MD5 of its
    spelling, big-endian, mod 100, are below DEV_PERCENT."""
    digest = hashlib.md5(word.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % 100 < DEV_PERCENT


@functools.lru_cache(maxsize=2)
def load_split(folder: Path = DATA) -> tuple[Lexicon, dict[str, list[str]]]:
    """The lexicon (both files) and the sorted words of train, dev and test."""
    train = read_pronunciations(folder / "cmudict-0.7b.train.gz")
    test = read_pronunciations(folder / "cmudict-0.7b.test.gz")
    parts = {"train": sorted(w for w in train if not is_dev(w)),
             "dev": sorted(w for w in train if is_dev(w)), "test": sorted(test)}
    return {**train, **test}, parts


class Data:
    """The lexicon, its parts, the vocabularies and the (word, pronunciation) training pairs:
    every pronunciation of a training word, or with `pronunciations="first"` only the first the
    split's file lists (its alternates come in phoneme order, so not CMUdict's primary one).
    `max_words` keeps an evenly spread slice of each part, 90 / 5 / 5 % of that many words."""

    def __init__(self, lexicon: Lexicon, parts: dict[str, list[str]], max_words: int = 0,
                 pronunciations: str = "all"):
        if max_words:
            sizes = {"train": max_words * 9 // 10, "dev": max_words // 20,
                     "test": max_words // 20}
            parts = {name: words[::max(1, len(words) // sizes[name])][:sizes[name]]
                     for name, words in parts.items()}
        self.lexicon, self.parts = lexicon, parts
        self.letters = Vocab(c for word in lexicon for c in word)
        self.phonemes = Vocab(p for prons in lexicon.values() for pron in prons for p in pron)
        keep = 1 if pronunciations == "first" else None
        self.train_pairs = [(w, p) for w in parts["train"] for p in lexicon[w][:keep]]


# ------------------------------------------------------------------------------------------
# Scores

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
    """(correct: equals any reference, edit distance to the closest reference, that
    reference's length); of equally close references, the shorter counts."""
    distance, length = min((edit_distance(output, ref), len(ref)) for ref in references)
    return output in references, distance, length


def evaluate(predictions: dict[str, tuple], lexicon: Lexicon) -> dict:
    """WER and PER (the module docstring's formulas) over the predicted words, and `per_word`:
    "1" (correct) or "0" for each word in sorted order, to compare two runs word by word."""
    correct, distance, length = np.array([score_word(output, lexicon[word]) for word, output
                                          in sorted(predictions.items())]).reshape(-1, 3).T
    return {"wer": float(1.0 - correct.mean()), "per": float(distance.sum() / length.sum()),
            "words": len(correct), "per_word": "".join(str(int(c)) for c in correct)}


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
