"""A learning path from reverse-mode autodiff to the Transformer, in ten steps with exercises.

Each step is a lesson (`NN_name.py`, a Jupyter notebook written as a plain Python file), the
learner's exercise file (`exercises/stepNN_name.py`), checks that test the learner's own code
(`checks/stepNN_name.py`) and solutions the lessons never import (`solutions/stepNN_name.py`).
See learn/README.md.
"""
