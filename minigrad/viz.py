"""Graph pictures (placeholder module; drawing is added next)."""
