"""Your code: one file per step, each function a stub that raises NotImplementedError until
you write it."""
