"""`minigrad.linalg`, PyTorch's torch.linalg names for the norms (the operations live in ops)."""

import numbers

from .ops import vector_norm


def norm(x, ord=None, dim=None, keepdim: bool = False):
    """torch.linalg.norm (and numpy.linalg.norm) for what minigrad has: a vector norm, or the
    Frobenius norm of a matrix.

    ord None is the 2-norm of every element taken together (the Frobenius norm of a matrix);
    with a vector (1-D x, or `dim` one axis) any `vector_norm` ord. A matrix (2-D x with dim
    None, or `dim` two axes) with ord 'fro' is the Frobenius norm; its other ords (2, 1, inf,
    'nuc', ...) are matrix norms in NumPy and PyTorch, not the vector norms of the elements,
    and minigrad has none of them, so they raise (for the elements' vector norm, write
    `vector_norm(x, ord)`).
    """
    matrix = (dim is None and x.ndim == 2) or (not isinstance(dim, (numbers.Integral, type(None)))
                                               and len(dim) == 2)
    if ord is None or (matrix and ord == "fro"):
        return vector_norm(x, 2, dim, keepdim)
    if matrix:
        raise NotImplementedError(
            f"linalg.norm: ord={ord!r} of a matrix (shape {tuple(x.shape)}, dim {dim!r}) is a "
            f"matrix norm in NumPy and PyTorch; minigrad has only 'fro' (and ord None). For the "
            f"vector norm of the elements write minigrad.linalg.vector_norm(x, {ord!r})")
    if dim is None and x.ndim > 2:
        raise ValueError(f"linalg.norm: with ord={ord!r} and no dim, x must be 1-D or 2-D (as "
                         f"PyTorch's), got shape {tuple(x.shape)}; pass dim, or write "
                         f"vector_norm(x, {ord!r}) for every element")
    return vector_norm(x, ord, dim, keepdim)


__all__ = ["norm", "vector_norm"]
