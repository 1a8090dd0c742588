"""Matrix products: matmul with NumPy's rules (1-D operands, broadcast batch dimensions)."""

from __future__ import annotations

import math
import numbers
import string


from ..function import Function
from ..tensor import Tensor
from .common import lift, normalize_axis, pair
from .shape import permute, reshape


class MatMul(Function):
    """C = A @ B, over the last two axes, with batch axes broadcast."""

    needs_output = False

    def forward(self, a, b):
        if a.ndim > 2 and b.ndim == 2:
            # (..., K) @ (K, N) as one (rows, K) @ (K, N) product: NumPy's matmul would
            # otherwise run one per leading index, packing B again for each
            out = a.reshape(_rows(a.shape), a.shape[-1]) @ b
            return out.reshape(a.shape[:-1] + (b.shape[1],))
        return a @ b

    def gradients(self, g, a, b):
        needs_a, needs_b = self.inputs[0]._requires_grad, self.inputs[1]._requires_grad
        # ∂L/∂A = G Bᵀ, ∂L/∂B = Aᵀ G (the engine sums both over broadcast batch axes)
        if a.ndim == 2 and b.ndim == 2:          # the common case, with nothing to promote
            return (g @ b.T if needs_a else None), (a.T @ g if needs_b else None)
        if a.ndim > 2 and b.ndim == 2:
            # a stack of rows times one matrix, as in forward: (rows, K) @ (K, N), so that ∂B
            # is one product over all rows instead of one per leading index summed afterwards
            rows = _rows(a.shape)
            a2, g2 = a.reshape((rows, a.shape[-1])), g.reshape((rows, b.shape[1]))
            grad_a = (g2 @ b.T).reshape(a.shape) if needs_a else None
            return grad_a, (a2.T @ g2 if needs_b else None)
        # 1-D operands act as a row (a) or a column (b) vector; promote, then drop again
        a2 = a.reshape((1,) + a.shape) if a.ndim == 1 else a
        b2 = b.reshape(b.shape + (1,)) if b.ndim == 1 else b
        g2 = g.reshape(_batch_shape(a2.shape, b2.shape) + (a2.shape[-2], b2.shape[-1]))
        grad_a = grad_b = None
        if needs_a:
            grad_a = g2 @ b2.swapaxes(-1, -2)            # (..., M, K)
            grad_a = grad_a[..., 0, :] if a.ndim == 1 else grad_a
        if needs_b:
            grad_b = a2.swapaxes(-1, -2) @ g2            # (..., K, N)
            grad_b = grad_b[..., 0] if b.ndim == 1 else grad_b
        return grad_a, grad_b


def _rows(shape) -> int:
    """The number of rows (..., K) holds: spelled out, since reshape(-1, K) is ambiguous when
    K = 0."""
    return math.prod(shape[:-1])


def _batch_shape(shape_a, shape_b):
    batch_a, batch_b = shape_a[:-2], shape_b[:-2]
    n = max(len(batch_a), len(batch_b))
    batch_a = (1,) * (n - len(batch_a)) + batch_a
    batch_b = (1,) * (n - len(batch_b)) + batch_b
    out = []
    for x, y in zip(batch_a, batch_b):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(out)


def matmul(a, b) -> Tensor:
    """a @ b: 1-D, 2-D and batched N-D operands, as numpy.matmul."""
    a, b = pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands must have at least one dimension, got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    shape_a = (1,) + a.shape if a.ndim == 1 else a.shape
    shape_b = b.shape + (1,) if b.ndim == 1 else b.shape
    if k_a != k_b or _batch_shape(shape_a, shape_b) is None:
        what = (f"inner dimensions {k_a} and {k_b} differ" if k_a != k_b
                else "batch dimensions do not broadcast")
        raise ValueError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} are "
                         f"incompatible ({what})")
    return MatMul.apply(a, b)


# ---------------------------------------------------------------------------------------------
# einsum: sums of products named by index letters, as numpy.einsum and torch.einsum.
#
#     einsum("bqd,bkd->bqk", q, k)        attention scores, q kᵀ per batch
#     einsum("ii->i", a)                  a diagonal;   einsum("ij->", a)   a total
#
# The subscripts are rewritten once into explicit form (ellipses become letters of their own), and
# one primitive computes the sum. Its gradient for an operand is another einsum: the output's
# gradient contracted with the other operands, onto the operand's own letters. Two cases need more
# than that: a letter only that operand has (it was summed out, so its gradient is copied along it)
# and a letter repeated within the operand (a diagonal, whose gradient is placed back on the
# diagonal with identity matrices).

class Einsum(Function):
    """y = Σ over the letters missing from the output of Π_k x_k, indexed by their letters."""

    needs_output = False

    def __init__(self, terms: tuple[str, ...], output: str):
        self.terms, self.result_letters = terms, output

    def forward(self, *operands):
        return _contract(self.xp, self.terms, self.result_letters, operands)

    def backward(self, grad):
        g, *operands = self.values(grad, *self.inputs)
        # ∂y/∂x_k: y is linear in each operand, so ∂L/∂x_k[letters_k] = Σ of ∂L/∂y times the
        # other operands over every letter that x_k lacks: one more einsum
        return tuple(self._gradient(k, g, operands) if x._requires_grad else None
                     for k, x in enumerate(self.inputs))

    def _gradient(self, k: int, g, operands):
        xp, terms = self.ops, self.terms
        target, shape = terms[k], self.inputs[k].shape
        unique = "".join(dict.fromkeys(target))                # each letter once, in order
        others = [terms[j] for j in range(len(terms)) if j != k]
        present = set(self.result_letters).union(*others)
        kept = "".join(c for c in unique if c in present)
        rest = [x for j, x in enumerate(operands) if j != k]
        if xp is self.xp:                                   # on arrays: the fast contraction
            partial = _contract(xp, [self.result_letters] + others, kept, [g] + rest)
        else:                                               # recorded: another Einsum
            partial = xp.einsum(",".join([self.result_letters] + others) + "->" + kept, g, *rest)
        size = {c: shape[target.index(c)] for c in unique}
        # a letter of size 1 in x_k that the others broadcast: sum the gradient back to 1
        wide = tuple(i for i, c in enumerate(kept) if size[c] == 1 and partial.shape[i] != 1)
        if wide:
            partial = partial.sum(axis=wide, keepdims=True)
        # letters only x_k has were summed: ∂y/∂x_k is the same along them, copy it
        lonely = "".join(c for c in unique if c not in present)
        if lonely:
            partial = partial.reshape(tuple(partial.shape) + (1,) * len(lonely))
            partial = xp.broadcast_to(partial, tuple(partial.shape[:len(kept)]) +
                                      tuple(size[c] for c in lonely))
            order = kept + lonely
            partial = partial.transpose(tuple(order.index(c) for c in unique))
        if unique == target:
            return partial
        # a repeated letter (a diagonal): only the diagonal was read, so the gradient goes back
        # onto it, through identity matrices δ(c, c′) for each further occurrence c′ of c
        used = "".join(terms) + self.result_letters
        spare = iter(c for c in string.ascii_letters if c not in used)
        placed, eyes, specs = [], [], [unique]
        for c in target:
            if c in placed:
                fresh = next(spare)
                n = size[c]
                eye = self.xp.arange(n)[:, None] == self.xp.arange(n)[None, :]
                eyes.append(eye.astype(self.inputs[k].dtype))
                specs.append(c + fresh)
                placed.append(fresh)
            else:
                placed.append(c)
        return xp.einsum(",".join(specs) + "->" + "".join(placed), partial, *eyes)


def _contract(xp, terms, output: str, arrays):
    """The einsum of `arrays` (explicit letters, no ellipsis) on the array module xp. A pair of
    operands whose letters each appear once per term is one batched matrix product, as
    PyTorch computes it (NumPy's einsum runs no BLAS for batched products and takes several
    times as long): batch letters, then each side's own letters, then the summed ones."""
    if len(arrays) != 2 or any(len(set(t)) != len(t) for t in terms):
        return xp.einsum(",".join(terms) + "->" + output, *arrays,
                         optimize="greedy" if len(arrays) > 2 else False)
    (ta, tb), (a, b) = terms, arrays
    size = {}
    for term, x in ((ta, a), (tb, b)):
        for c, n in zip(term, x.shape):
            if size.setdefault(c, n) != n:                  # size-1 broadcasting: leave it to
                return xp.einsum(f"{ta},{tb}->{output}", a, b)     # einsum
    # letters in one operand alone and not in the output are summed away first
    a = _sum_letters(a, ta, set(tb) | set(output))
    b = _sum_letters(b, tb, set(ta) | set(output))
    ta = "".join(c for c in ta if c in set(tb) | set(output))
    tb = "".join(c for c in tb if c in set(ta) | set(output))
    batch = [c for c in output if c in ta and c in tb]
    free_a = [c for c in output if c in ta and c not in tb]
    free_b = [c for c in output if c in tb and c not in ta]
    summed = [c for c in ta if c in tb and c not in output]
    # batch axes stay separate (merging them would copy a transposed operand)
    lead = tuple(size[c] for c in batch)
    m, k, n = (math.prod(size[c] for c in part) for part in (free_a, summed, free_b))
    a = a.transpose([ta.index(c) for c in batch + free_a + summed]).reshape(lead + (m, k))
    b = b.transpose([tb.index(c) for c in batch + summed + free_b]).reshape(lead + (k, n))
    c = xp.matmul(a, b)                                     # (batch..., free_a, free_b)
    letters = batch + free_a + free_b
    c = c.reshape(tuple(size[x] for x in letters))
    return c.transpose([letters.index(x) for x in output])


def _sum_letters(x, term: str, wanted: set):
    """x summed over the axes whose letters are not `wanted`."""
    axes = tuple(i for i, c in enumerate(term) if c not in wanted)
    return x.sum(axis=axes) if axes else x


def einsum(subscripts: str, *operands) -> Tensor:
    """Σ of products over index letters, as numpy.einsum / torch.einsum: "ij,jk->ik" is a
    matrix product, "bhqd,bhkd->bhqk" attention scores, "ii->i" a diagonal, "i,i->" a dot
    product; "..." stands for leading axes (summed when the output leaves it out, as in
    PyTorch), and without "->" the output is the letters used once, in alphabetical order.
    Operands may also be given as one list. Letters of size 1 broadcast. Every operand gets its
    gradient (one more einsum each)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: the subscripts must be a string, got {subscripts!r}")
    like = next((x for x in operands if isinstance(x, Tensor)), None)
    if like is None:
        raise TypeError("einsum: needs at least one Tensor operand")
    tensors = [lift(x, like) if not isinstance(x, Tensor) else x for x in operands]
    terms, output = _explicit(subscripts, [t.shape for t in tensors])
    return Einsum.apply(*tensors, terms=terms, output=output)


def _explicit(subscripts: str, shapes) -> tuple[tuple[str, ...], str]:
    """The subscripts with ellipses spelled out as letters of their own and the output made
    explicit, checked against the operands' shapes."""
    text = subscripts.replace(" ", "")
    lhs, arrow, rhs = text.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {subscripts!r} names {len(terms)} operand(s), got "
                         f"{len(shapes)}")
    used = set(c for c in text if c.isalpha())
    bad = set(text) - used - set(",->.")
    if bad or text.count("->") > 1:
        raise ValueError(f"einsum: {subscripts!r} may hold only letters, ',', '->' and '...'")
    spare = [c for c in string.ascii_letters if c not in used]
    widths = []
    for term, shape in zip(terms, shapes):
        letters = len(term.replace("...", ""))
        if "..." in term:
            if term.count("...") > 1 or term.replace("...", "").count(".") or \
                    len(shape) < letters:
                raise ValueError(f"einsum: term {term!r} does not fit shape {tuple(shape)}")
            widths.append(len(shape) - letters)
        elif "." in term or letters != len(shape):
            raise ValueError(f"einsum: term {term!r} has {letters} letters for an operand of "
                             f"shape {tuple(shape)} ({len(shape)} axes)")
        else:
            widths.append(0)
    ellipsis = "".join(spare[:max(widths, default=0)])
    spelled = tuple(t.replace("...", ellipsis[len(ellipsis) - w:]) for t, w in zip(terms, widths))
    if arrow:
        if rhs.count("...") > 1 or rhs.replace("...", "").count("."):
            raise ValueError(f"einsum: bad output {rhs!r}")
        output = rhs.replace("...", ellipsis)      # without "...", those axes are summed
    else:
        counts = {}
        for term in terms:
            for c in term.replace("...", ""):
                counts[c] = counts.get(c, 0) + 1
        output = ellipsis + "".join(sorted(c for c, n in counts.items() if n == 1))
    for c in output:
        if output.count(c) > 1 or not any(c in t for t in spelled):
            raise ValueError(f"einsum: output letter {c!r} of {subscripts!r} must appear once "
                             f"in the output and in some operand")
    sizes: dict[str, int] = {}
    for term, shape in zip(spelled, shapes):
        for c, n in zip(term, shape):
            if term.count(c) > 1 and shape[term.index(c)] != n:
                raise ValueError(f"einsum: repeated letter {c!r} of term {term!r} has lengths "
                                 f"{shape[term.index(c)]} and {n} (shape {tuple(shape)})")
            if sizes.get(c, 1) not in (1, n) and n != 1:
                raise ValueError(f"einsum: letter {c!r} has lengths {sizes[c]} and {n} in "
                                 f"{subscripts!r} (shapes "
                                 f"{', '.join(str(tuple(s)) for s in shapes)})")
            sizes[c] = n if n != 1 else sizes.get(c, 1)
    return spelled, output


def mm(a: Tensor, b: Tensor) -> Tensor:
    """torch.mm: the product of two matrices, (n, k) @ (k, m) -> (n, m); other ranks raise."""
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"mm: takes two matrices, got shapes {tuple(a.shape)} and "
                         f"{tuple(b.shape)}; matmul broadcasts other ranks")
    return matmul(a, b)


def bmm(a: Tensor, b: Tensor) -> Tensor:
    """torch.bmm: batched matrix products, (B, n, k) @ (B, k, m) -> (B, n, m), one batch size,
    no broadcasting; other shapes raise."""
    if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0]:
        raise ValueError(f"bmm: takes two (B, n, k) and (B, k, m) batches of one size B, got "
                         f"shapes {tuple(a.shape)} and {tuple(b.shape)}; matmul broadcasts")
    return matmul(a, b)


def outer(a: Tensor, b: Tensor) -> Tensor:
    """numpy.outer / torch.outer: y[i, j] = a_i · b_j for 1-D a (m,) and b (n,): (m, n)."""
    a, b = pair(a, b)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"outer: expects two 1-D tensors, got shapes {tuple(a.shape)} and "
                         f"{tuple(b.shape)}")
    return a.reshape(-1, 1) * b.reshape(1, -1)


def dot(a: Tensor, b: Tensor) -> Tensor:
    """torch.dot: Σ_i a_i b_i for two 1-D tensors of one length, a 0-d tensor (numpy.dot's
    other cases are matmul's)."""
    a, b = pair(a, b)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"dot: expects two 1-D tensors of the same length, got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    return matmul(a, b)


def trace(x: Tensor) -> Tensor:
    """torch.trace: Σ_i x[i, i] of a 2-D tensor (square or not), a 0-d tensor; the gradient is
    the identity's pattern."""
    if x.ndim != 2:
        raise ValueError(f"trace: expects a 2-D tensor, got shape {tuple(x.shape)}")
    return x.diagonal().sum()


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """torch.addmm: beta · input + alpha · (mat1 @ mat2), mat1 (n, m), mat2 (m, p), input
    broadcasting to (n, p). With beta = 0, input is ignored (NaN in it does not spread)."""
    return _scaled_sum("addmm", ("mat1", "mat2"), 2, input, mat1, mat2, beta, alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """torch.baddbmm: beta · input + alpha · (batch1 @ batch2), batch1 (b, n, m), batch2
    (b, m, p), input broadcasting to (b, n, p). With beta = 0, input is ignored."""
    return _scaled_sum("baddbmm", ("batch1", "batch2"), 3, input, batch1, batch2, beta, alpha)


def _scaled_sum(op: str, names: tuple, ndim: int, input, a, b, beta, alpha) -> Tensor:
    """beta · input + alpha · (a @ b), a and b of `ndim` axes."""
    if a.ndim != ndim or b.ndim != ndim:
        raise ValueError(f"{op}: {names[0]} and {names[1]} must be {ndim}-D, got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    product = matmul(a, b)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    return product + (input if beta == 1 else input * beta)


def tensordot(a: Tensor, b: Tensor, dims=2, *, axes=None) -> Tensor:
    """Σ over paired axes of a and b, as torch.tensordot(a, b, dims) and numpy.tensordot(a, b,
    axes): `dims` an int n pairs a's last n axes with b's first n; a pair of int sequences
    names them. The result has a's other axes, then b's. One matmul of the two, flattened."""
    if axes is not None:                                  # NumPy's name for dims
        dims = axes
    if isinstance(dims, numbers.Integral):
        if not 0 <= dims <= min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: dims={dims} for shapes {tuple(a.shape)} and "
                             f"{tuple(b.shape)}")
        pairs_a, pairs_b = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        try:
            pairs_a, pairs_b = ([int(d) for d in (p if isinstance(p, (list, tuple)) else [p])]
                                for p in dims)
        except (TypeError, ValueError) as error:
            raise TypeError(f"tensordot: dims must be an int or a pair of axis lists, got "
                            f"{dims!r}") from error
        pairs_a = list(normalize_axis(tuple(pairs_a), a.ndim, "tensordot"))
        pairs_b = list(normalize_axis(tuple(pairs_b), b.ndim, "tensordot"))
    sizes_a, sizes_b = [a.shape[i] for i in pairs_a], [b.shape[i] for i in pairs_b]
    if sizes_a != sizes_b:
        raise ValueError(f"tensordot: the paired axes {pairs_a} of {tuple(a.shape)} and "
                         f"{pairs_b} of {tuple(b.shape)} differ in size ({sizes_a} vs {sizes_b})")
    free_a = [i for i in range(a.ndim) if i not in pairs_a]
    free_b = [i for i in range(b.ndim) if i not in pairs_b]
    outer_a, outer_b = (tuple(t.shape[i] for i in free) for t, free in ((a, free_a), (b, free_b)))
    inner = math.prod(sizes_a)
    left = reshape(permute(a, free_a + pairs_a) if a.ndim else a, (math.prod(outer_a), inner))
    right = reshape(permute(b, pairs_b + free_b) if b.ndim else b, (inner, math.prod(outer_b)))
    return reshape(matmul(left, right), outer_a + outer_b)
