"""Performance comparisons of minigrad with hand-written NumPy and with PyTorch (run.py)."""
