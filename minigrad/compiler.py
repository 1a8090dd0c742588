"""`minigrad.compiler`: where a PyTorch user looks for `torch.compiler.disable`.

    @mg.compiler.disable
    def log_norms(params): ...

`disable(fn)` marks `fn` to run live inside a compiled step: recorded as a call when the step
is captured, and called again at the same point of every replay (see compiled.py).
"""

from .compiled import disable

__all__ = ["disable"]
