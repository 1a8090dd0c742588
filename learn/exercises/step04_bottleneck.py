"""Step 4 exercises: teacher forcing and greedy decoding for an encoder–decoder."""

from __future__ import annotations

import numpy as np

import minigrad as mg


# -- exercise 4.1 -------------------------------------------------------------------------------

def shift_right(target: np.ndarray, bos: int) -> np.ndarray:
    """The decoder's inputs under teacher forcing: target (B, T) int -> (B, T) int, each row
    `bos` followed by the row's first T − 1 tokens. (At step t the decoder reads the true
    previous token and must predict target[:, t].) Do not change `target`."""
    raise NotImplementedError


# -- exercise 4.2 -------------------------------------------------------------------------------

def greedy_decode(step, state, bos: int, length: int) -> np.ndarray:
    """Generate `length` tokens, each the most likely one given those before.

    step(token, state) -> (logits, new_state) runs the decoder once: token is an int Tensor
    (B,), logits a Tensor (B, V). Start from token `bos` for every row of the batch (B is
    state.shape[1]), feed each step's argmax back as the next token, and return the chosen
    tokens as a NumPy int array (B, length).
    """
    raise NotImplementedError
