"""An index taken apart as PyTorch's `applySlicing` does it, for `x[index]` and
`x[index] = value`.

The basic parts apply in turn: an integer selects, a slice slices (unless it is whole), None
unsqueezes, and so does a bool (which then indexes with [0] or []). Integer and bool
tensors (or lists) are put aside, by the dimension of the resulting view they index, for
one `index` op (getitem) or `index_put_` (setitem) at the end.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import dtypes, errors, op_errors
from engine.functions import indexing
from engine.functions.dims import unsqueeze
from engine.functions.indexing import select, slice_dim
from engine.tensor import Tensor


def is_whole(part: slice, size: int) -> bool:
    """applySlice's test for a slice to skip, on the numbers as written: it starts at 0,
    steps by 1 and reaches the end (`x[-3:]` of 3 rows is still a slice)."""
    return (part.start in (None, 0) and part.step in (None, 1)
            and (part.stop is None or part.stop >= size))


def getitem(self: Tensor, index: Any) -> Tensor:
    """`self[index]` as THPVariable_getitem does it: a lone slice is always `slice`;
    otherwise `apply_slicing`, then one `index` op for the integer or bool tensors."""
    if self.ndim == 0 and isinstance(index, slice):
        raise errors.TorchError("IndexError", op_errors.SLICE_0_DIM)
    if isinstance(index, slice):
        # a lone slice is never skipped, even whole (`x[:]`: SliceBackward0, not an alias):
        # PyTorch's getitem disables applySlice's optimisation outside a tuple index
        return slice_dim(self, 0, index.start, index.stop, index.step)
    sliced, indices = apply_slicing(self, list(index) if isinstance(index, tuple) else [index])
    if indices:
        return indexing.index(sliced, numpy_key(sliced, indices))
    return sliced if sliced is not self else indexing.alias(self)


def apply_slicing(self: Tensor, parts: list[Any]) -> tuple[Tensor, dict[int, np.ndarray]]:
    """`applySlicing`: the basic parts applied in turn (ints select, slices slice unless
    whole, None and bools unsqueeze), giving a view of self (or self), and the index
    tensors found, by the dimension of that view they index (a bool becomes [0] or [])."""
    if self.ndim == 0 and len(parts) == 1 and isinstance(parts[0], int) and \
            not isinstance(parts[0], bool):
        select(self, 0, parts[0])                 # raises, as applySelect does
    used = sum(dims_used(p) for p in parts)
    if used > self.ndim:
        raise errors.TorchError("IndexError", op_errors.too_many_indices(self.ndim, used))
    out, dim, indices = self, 0, {}
    for p in parts:
        if p is Ellipsis:
            dim += self.ndim - used
        elif p is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(p, bool) or (isinstance(p, Tensor) and p.ndim == 0
                                     and p.dtype is dtypes.bool_):
            out = unsqueeze(out, dim)
            indices[dim] = np.zeros(1 if bool(p.data if isinstance(p, Tensor) else p) else 0,
                                    dtype=np.int64)
            dim += 1
        elif isinstance(p, int) or _integer_scalar(p):
            out = select(out, dim, int(p.data) if isinstance(p, Tensor) else p)
        elif isinstance(p, slice):
            out = apply_slice(out, dim, p)
            dim += 1
        elif isinstance(p, (Tensor, list)):
            indices[dim] = _index_array(p)
            dim += dims_used(p)
        else:
            raise errors.TorchError("IndexError", op_errors.BAD_INDEX)
    return out, indices


def apply_slice(self: Tensor, dim: int, part: slice) -> Tensor:
    """`applySlice`: a whole slice (`is_whole`) is no slice at all; otherwise `slice`."""
    if self.ndim == 0:
        raise errors.TorchError("IndexError", op_errors.SLICE_0_DIM)
    if is_whole(part, self.shape[dim]):
        return self
    return slice_dim(self, dim, part.start, part.stop, part.step)


def _integer_scalar(p: Any) -> bool:
    """A 0-d integer tensor, which indexes as its number does (it counts as one dimension,
    so a 0-d tensor has too many indices for it, where `x[1]` is out of bounds)."""
    return isinstance(p, Tensor) and p.ndim == 0 and p.dtype is dtypes.int64


def dims_used(p: Any) -> int:
    """How many of the tensor's dimensions an index part takes (`count_specified_dimensions`):
    none for None, `...` and a bool, a bool mask's own number, one for the others."""
    if p is None or p is Ellipsis or isinstance(p, bool):
        return 0
    if isinstance(p, Tensor) and p.dtype is dtypes.bool_:
        return p.ndim
    return 1


def _index_array(p: Tensor | list[Any]) -> np.ndarray:
    if isinstance(p, list):
        return np.asarray(p)
    if p.dtype is not dtypes.bool_ and p.dtype is not dtypes.int64:
        raise errors.TorchError("IndexError", op_errors.BAD_INDEX_TENSOR)
    return p.data


def numpy_key(self: Tensor, indices: dict[int, np.ndarray]) -> tuple[Any, ...]:
    """The index tensors at their dimensions, whole slices elsewhere (a bool mask stands
    for as many dimensions as it has), after PyTorch's checks of their sizes and values:
    a mask must have the sizes it covers; an integer index's values must fit, its
    dimension numbered among the index tensors (`x[:, [7]]` is out of bounds "for
    dimension 0"); and the index tensors must broadcast together."""
    key: list[Any] = []
    dim = tensors = 0
    while dim < self.ndim:
        where = indices.get(dim)
        if where is None:
            key.append(slice(None))
            dim += 1
            continue
        if where.dtype == np.bool_:
            for i, n in enumerate(where.shape):
                if dim + i >= self.ndim or self.shape[dim + i] != n:
                    raise errors.TorchError("IndexError", (
                        f"The shape of the mask {list(where.shape)} at index {i} does not "
                        f"match the shape of the indexed tensor {list(self.shape)} at index "
                        f"{dim + i}"))
        elif where.dtype.kind in "iu" and where.size:
            size = self.shape[dim]
            bad = where[(where < -size) | (where >= size)]
            if bad.size:
                raise errors.TorchError("IndexError", op_errors.index_out_of_bounds(
                    int(bad.reshape(-1)[0]), tensors, size))
        key.append(where)
        tensors += 1
        dim += where.ndim if where.dtype == np.bool_ else 1
    shapes = [(int(w.sum()),) if w.dtype == np.bool_ else w.shape for w in indices.values()]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise errors.TorchError("IndexError", "shape mismatch: indexing tensors could not be "
                                "broadcast together with shapes " +
                                ", ".join(str(list(s)) for s in shapes)) from None
    return tuple(key)


