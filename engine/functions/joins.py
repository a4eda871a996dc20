"""Copies that join or repeat tensors: cat, stack, repeat, and unbind (iterating
over a tensor), which splits one into views."""

from __future__ import annotations

import numpy as np

from engine import errors, op_errors
from engine.functions._record import record
from engine.functions.reduction import normalize_dim
from engine.functions.shape import Shape
from engine.functions.summation import cascade_sum
from engine.node import InputMetadata, Node
from engine.tensor import Tensor, as_array
from engine.views import make_view


class CatBackward0(Node):
    """cat(tensors, dim): each input gets its slice of the gradient."""

    name = "CatBackward0"
    saved_names = ("dim",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        dim, sizes = self.saved_value("dim"), self.saved_value("_sizes")
        out: list[Tensor | None] = []
        start = 0
        for i, size in enumerate(sizes):
            if len(size) == 1 and size[0] == 0:       # an empty 1-d tensor took no part
                out.append(None)
                continue
            length = size[dim]
            if self.needs_input_grad(i):
                from engine.functions.indexing import slice_dim

                out.append(slice_dim(grad, dim, start, start + length, None))
            else:
                out.append(None)
            start += length
        return out


def cat(tensors: list[Tensor], dim: int = 0) -> Tensor:
    if not tensors:
        raise errors.TorchError("RuntimeError", "torch.cat(): expected a non-empty list of "
                                "Tensors")
    joined = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or tensors[:1]
    ref = joined[0]
    if ref.ndim == 0:
        raise errors.TorchError("RuntimeError", "zero-dimensional tensor (at position 0) "
                                "cannot be concatenated")
    d = normalize_dim(dim, ref.ndim)
    for i, t in enumerate(tensors):
        if t.ndim == 1 and t.shape[0] == 0:
            continue
        if t.ndim != ref.ndim:
            raise errors.TorchError("RuntimeError", op_errors.cat_dims(ref.ndim, i, t.ndim))
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise errors.TorchError("RuntimeError", op_errors.cat_sizes(
                    d, ref.shape[k], t.shape[k], i))
    from engine.functions._record import result_type

    dtype = result_type(*tensors)
    shape = list(ref.shape)
    shape[d] = sum(t.shape[d] for t in joined)
    ref.ctx.check_elements(tuple(shape))
    values = np.concatenate([t.data.astype(dtype.numpy) for t in joined], axis=d)
    out, node = record(CatBackward0, list(tensors), values, ref)
    if node:
        node.save("dim", d)
        node.save("_sizes", [t.shape for t in tensors])
    return out


class StackBackward0(Node):
    """stack(tensors, dim): each input gets its slice of the gradient at dim."""

    name = "StackBackward0"
    saved_names = ("dim",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        dim = self.saved_value("dim")
        out: list[Tensor | None] = []
        for i in range(len(self.next_edges)):
            if self.needs_input_grad(i):
                from engine.functions.indexing import select

                out.append(select(grad, dim, i))
            else:
                out.append(None)
        return out


def stack(tensors: list[Tensor], dim: int = 0) -> Tensor:
    if not tensors:
        raise errors.TorchError("RuntimeError", "stack expects a non-empty TensorList")
    ref = tensors[0]
    for i, t in enumerate(tensors):
        if t.shape != ref.shape:
            raise errors.TorchError("RuntimeError", op_errors.stack_sizes(ref.shape, t.shape, i))
    d = normalize_dim(dim, ref.ndim + 1)
    from engine.functions._record import result_type

    dtype = result_type(*tensors)
    ref.ctx.check_elements((len(tensors), *ref.shape))
    values = np.stack([t.data.astype(dtype.numpy) for t in tensors], axis=d)
    out, node = record(StackBackward0, list(tensors), values, ref)
    if node:
        node.save("dim", d)
    return out


class RepeatBackward0(Node):
    """repeat(sizes): the gradient of every copy summed back onto the source."""

    name = "RepeatBackward0"
    saved_names = ("repeats", "self_sym_sizes")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        repeats, sizes = self.saved_value("repeats"), self.saved_value("self_sym_sizes")
        return [Tensor(as_array(repeat_backward(grad.data, repeats, sizes),
                                grad.dtype.numpy), grad.ctx)]


def repeat_backward(g: np.ndarray, repeats: Shape, sizes: Shape) -> np.ndarray:
    """`repeat_backward` (FunctionsManual.cpp), in its order of additions: the leading
    dims `repeat` added are summed away one `sum(0)` at a time; then each dim repeated
    r > 1 times is split into (r, size) and all the r's are summed in one `sum`."""
    if 0 in repeats:
        return np.zeros(sizes, dtype=g.dtype)
    for _ in range(len(repeats) - len(sizes)):
        g = cascade_sum(g, (0,), False)
    split: list[int] = []
    summed: list[int] = []
    for size, r in zip(sizes, repeats[len(repeats) - len(sizes):], strict=True):
        if r != 1:
            split.append(r)
            summed.append(len(split) - 1)
        split.append(size)
    return cascade_sum(g.reshape(split), tuple(summed), False) if summed else g


def repeat(self: Tensor, repeats: Shape) -> Tensor:
    if len(repeats) < self.ndim:
        raise errors.TorchError("RuntimeError", op_errors.REPEAT_TOO_FEW)
    padded = (1,) * (len(repeats) - self.ndim) + self.shape
    self.ctx.check_elements(tuple(a * b for a, b in zip(padded, repeats, strict=True)))
    values = np.tile(self.data.reshape(padded), repeats)
    out, node = record(RepeatBackward0, [self], values, self)
    if node:
        node.save("repeats", tuple(repeats))
        node.save("self_sym_sizes", self.shape)
    return out


def set_metadata(node: Node, out: Tensor) -> None:
    node.input_metadata = [InputMetadata(out.shape, out.dtype)]


class UnbindBackward0(Node):
    """unbind(dim): the gradients of the pieces stacked back along dim (zeros where a
    piece got none)."""

    name = "UnbindBackward0"
    saved_names = ("dim",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        dim = self.saved_value("dim")
        pieces = [g if g is not None else Tensor(np.zeros(m.shape, dtype=m.dtype.numpy),
                                                 self.ctx)
                  for g, m in zip(grads, self.input_metadata, strict=True)]
        return [stack(pieces, dim)]


def unbind(self: Tensor, dim: int = 0) -> list[Tensor]:
    """`x.unbind(dim)` (and iterating over a tensor): one node, one output per piece, each
    a view of x."""
    from engine.functions._record import record_outputs

    if self.ndim == 0:
        raise errors.TorchError("IndexError", f"Dimension specified as {dim} but tensor has no "
                                "dimensions")
    d = normalize_dim(dim, self.ndim)
    views = [self.data[(slice(None),) * d + (i, Ellipsis)] for i in range(self.shape[d])]
    outputs, node = record_outputs(UnbindBackward0, [self], views, self)
    for out in outputs:
        make_view(out, self, multi_output=True)
    if node:
        node.save("dim", d)
    return outputs
