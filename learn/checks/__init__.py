"""The checks of each step: each tests the code passed to it (the learner's), never a
solution."""
