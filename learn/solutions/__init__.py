"""Worked solutions, one file per step. The lessons never import these; `python -m learn.run
--solutions` runs the lessons with them in place of the exercises."""
