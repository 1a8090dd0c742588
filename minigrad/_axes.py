"""Axis defaults that remember they were not passed, so PyTorch's `dim=` may stand in for them."""


class DefaultAxis(int):
    """An axis default that remembers it was not passed (`axis=-1` in a signature), so that
    `dim=` may stand in for it without counting as a second axis. Prints as the plain int."""

    __slots__ = ()


LAST_AXIS = DefaultAxis(-1)     # softmax, log_softmax, logsumexp, sort
FIRST_AXIS = DefaultAxis(0)     # concat, stack, split
