"""Checks of step 4: your teacher-forcing shift and your greedy decoding loop."""

from __future__ import annotations

import numpy as np

import minigrad as mg

from learn.checks._core import Wrong, exercise, expect_close

FILE = "step04_bottleneck.py"
EXERCISES = {"4.1": ("shift_right",), "4.2": ("greedy_decode",)}


@exercise("4.1", "shift_right", file=FILE)
def shift_right(shift_right) -> str:
    target = np.array([[3, 1, 4, 1], [5, 9, 2, 6]])
    kept = target.copy()
    got = np.asarray(shift_right(target, 10))
    expect_close("shift_right([[3, 1, 4, 1], [5, 9, 2, 6]], bos=10)", got,
                 np.array([[10, 3, 1, 4], [10, 5, 9, 2]]))
    if not np.array_equal(target, kept):
        raise Wrong("shift_right changed its input: build a new array")
    one = np.asarray(shift_right(np.array([[7]]), 10))
    expect_close("shift_right([[7]], bos=10)", one, np.array([[10]]))
    return "rows start with bos and hold the first T − 1 targets; the input is unchanged"


class _CountingDecoder:
    """A fake decoder whose next token is (previous token + row + 1 + steps so far) mod 7, the
    steps so far being carried in the state: the right answer depends on feeding each
    prediction and each new state back."""

    def __call__(self, token: mg.Tensor, state: mg.Tensor):
        token = token.numpy()
        batch = state.shape[1]
        nxt = (token + np.arange(batch) + 1 + int(state.numpy().flat[0])) % 7
        self.seen.append(token.copy())
        return mg.tensor(np.eye(7)[nxt] * 5.0), state + 1

    def __init__(self):
        self.seen = []


@exercise("4.2", "greedy_decode", file=FILE)
def greedy_decode(greedy_decode) -> str:
    fake = _CountingDecoder()
    got = np.asarray(greedy_decode(fake, mg.zeros((1, 3, 2)), 0, 5))
    if got.shape != (3, 5):
        raise Wrong(f"the result has shape {got.shape}, expected (B, length) = (3, 5)")
    if not np.array_equal(fake.seen[0], np.zeros(3)):
        raise Wrong(f"the first token fed to the decoder was {fake.seen[0].tolist()}, expected "
                    f"bos = 0 in every row")
    want, token = [], np.zeros(3, dtype=int)
    for k in range(5):
        token = (token + np.arange(3) + 1 + k) % 7
        want.append(token)
    want = np.stack(want, axis=1)
    if not np.array_equal(got, want):
        row, col = np.argwhere(got != want)[0]
        raise Wrong(f"token [{row}, {col}] is {got[row, col]}, expected {want[row, col]}: "
                    f"feed each step's argmax and new state back into the next step")
    return "starts from bos, feeds each argmax and state back, returns (B, length)"
