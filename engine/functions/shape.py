"""Shape ops: views (view, reshape, transpose, t, .T, permute, unsqueeze, squeeze,
flatten, expand) and copies that change shape (clone, contiguous, cat, stack, repeat).

A view shares its source's values (a numpy view of the same array) and its version
counter (Note [Storage and versions]). Each op's backward undoes what it did to the shape:
a view's node maps the gradient back to the source's shape with the inverse view.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import errors
from engine.functions._record import record
from engine.functions.reduction import normalize_dim, sum_to
from engine.node import InputMetadata, Node
from engine.tensor import Tensor, as_array

Shape = tuple[int, ...]


def record_view(node_type: type[Node], self: Tensor, values: np.ndarray
                ) -> tuple[Tensor, Node | None]:
    """A view op's output: it shares self's values and version counter."""
    out, node = record(node_type, [self], values, self)
    out.base = self.base if self.base is not None else self
    out.version_counter = self.version_counter
    out.is_inference = self.is_inference
    return out, node


# -- view and reshape -----------------------------------------------------------------

def infer_size(shape: Shape, numel: int) -> Shape:
    """Sizes with one -1 filled in, or PyTorch's error for sizes that cannot fit."""
    inferred = [i for i, d in enumerate(shape) if d == -1]
    if len(inferred) > 1:
        raise errors.TorchError("RuntimeError", "only one dimension can be inferred")
    known = 1
    for d in shape:
        if d != -1:
            if d < 0:
                raise errors.TorchError("RuntimeError", f"invalid shape dimension {d}")
            known *= d
    text = "[" + ", ".join(str(d) for d in shape) + "]"
    if inferred:
        if known == 0 or numel % known:
            raise errors.TorchError("RuntimeError",
                                    f"shape '{text}' is invalid for input of size {numel}")
        out = list(shape)
        out[inferred[0]] = numel // known
        return tuple(out)
    if known != numel:
        raise errors.TorchError("RuntimeError",
                                f"shape '{text}' is invalid for input of size {numel}")
    return shape


def compute_stride(old_shape: Shape, old_strides: Shape, new_shape: Shape) -> Shape | None:
    """ATen's `computeStride`: the strides that view `old` as `new_shape` without copying,
    or None when the layout does not allow it (then `view` fails and `reshape` copies)."""
    if not old_shape:
        return tuple(1 for _ in new_shape)
    numel = int(np.prod(old_shape))
    if numel == 0:
        return None if old_shape != new_shape else old_strides
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and old_strides[tensor_d - 1]
                             != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def _element_strides(values: np.ndarray) -> Shape:
    return tuple(s // values.itemsize for s in values.strides)


def _as_view(values: np.ndarray, shape: Shape, strides: Shape) -> np.ndarray:
    return np.lib.stride_tricks.as_strided(
        values, shape, tuple(s * values.itemsize for s in strides))


class ViewBackward0(Node):
    """view(sizes): the gradient reshaped back to the source's sizes."""

    name = "ViewBackward0"
    saved_names = ("self_sym_sizes",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [reshape(grad, self.saved_value("self_sym_sizes"))]


def view(self: Tensor, shape: Shape) -> Tensor:
    shape = infer_size(tuple(shape), self.numel())
    strides = compute_stride(self.shape, _element_strides(self.data), shape)
    if strides is None:
        raise errors.TorchError("RuntimeError", errors.VIEW_STRIDES)
    out, node = record_view(ViewBackward0, self, _as_view(self.data, shape, strides))
    if node:
        node.save("self_sym_sizes", self.shape)
    return out


class UnsafeViewBackward0(ViewBackward0):
    name = "UnsafeViewBackward0"


class CloneBackward0(Node):
    """clone: the gradient passes through."""

    name = "CloneBackward0"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return [grads[0]]


def clone(self: Tensor) -> Tensor:
    out, _ = record(CloneBackward0, [self], np.array(self.data, copy=True), self)
    return out


def contiguous(self: Tensor) -> Tensor:
    return self if self.data.flags.c_contiguous else clone(self)


def reshape(self: Tensor, shape: Shape) -> Tensor:
    """A view when the layout allows one, else a contiguous copy (CloneBackward0 then
    UnsafeViewBackward0), as `at::reshape` decides."""
    shape = infer_size(tuple(shape), self.numel())
    if compute_stride(self.shape, _element_strides(self.data), shape) is not None:
        return view(self, shape)
    copy = clone(self)
    values = np.ascontiguousarray(copy.data).reshape(shape)
    out, node = record(UnsafeViewBackward0, [copy], values, copy)
    if node:
        node.save("self_sym_sizes", self.shape)
    return out


def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if self.ndim == 0:
        return reshape(self, (1,))
    start, end = normalize_dim(start_dim, self.ndim), normalize_dim(end_dim, self.ndim)
    if start > end:
        raise errors.TorchError("RuntimeError",
                                "flatten() has invalid args: start_dim cannot come after "
                                "end_dim")
    if start == end:
        return self
    shape = (*self.shape[:start], -1, *self.shape[end + 1:])
    return reshape(self, shape)


# -- dimensions moved ------------------------------------------------------------------

class TransposeBackward0(Node):
    """transpose(dim0, dim1): the gradient transposed back."""

    name = "TransposeBackward0"
    saved_names = ("dim0", "dim1")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [transpose(grad, self.saved_value("dim0"), self.saved_value("dim1"))]


def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    d0, d1 = normalize_dim(dim0, self.ndim), normalize_dim(dim1, self.ndim)
    axes = list(range(self.ndim))
    if self.ndim:
        axes[d0], axes[d1] = axes[d1], axes[d0]
    out, node = record_view(TransposeBackward0, self, np.transpose(self.data, axes))
    if node:
        node.save("dim0", dim0)
        node.save("dim1", dim1)
    return out


class TBackward0(Node):
    """t(): the gradient transposed back."""

    name = "TBackward0"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [t(grad)]


def t(self: Tensor) -> Tensor:
    if self.ndim > 2:
        raise errors.TorchError("RuntimeError", errors.t_of(self.ndim))
    out, _ = record_view(TBackward0, self, self.data.T)
    return out


class PermuteBackward0(Node):
    """permute(dims): the gradient permuted by the inverse permutation."""

    name = "PermuteBackward0"
    saved_names = ("dims",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        dims = self.saved_value("dims")
        inverse = [0] * len(dims)
        for i, d in enumerate(dims):
            inverse[d] = i
        return [permute(grad, tuple(inverse))]


def permute(self: Tensor, dims: Shape) -> Tensor:
    if len(dims) != self.ndim:
        raise errors.TorchError("RuntimeError", errors.permute_length(self.ndim, len(dims)))
    normalized = tuple(normalize_dim(d, self.ndim) for d in dims)
    if len(set(normalized)) != len(normalized):
        raise errors.TorchError("RuntimeError", "permute(): duplicate dims are not allowed.")
    out, node = record_view(PermuteBackward0, self, np.transpose(self.data, normalized))
    if node:
        node.save("dims", normalized)
    return out


def numpy_t(self: Tensor) -> Tensor:
    """`.T`: permute with the dimensions reversed (PermuteBackward0, as PyTorch records)."""
    return permute(self, tuple(range(self.ndim - 1, -1, -1)))


class UnsqueezeBackward0(Node):
    """unsqueeze(dim): the gradient squeezed at dim."""

    name = "UnsqueezeBackward0"
    saved_names = ("dim",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [squeeze(grad, self.saved_value("dim"))]


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    d = normalize_dim(dim, self.ndim + 1) if self.ndim else normalize_dim(dim, 1)
    if self.ndim == 0 and dim in (0, -1):
        d = 0
    out, node = record_view(UnsqueezeBackward0, self, np.expand_dims(self.data, d))
    if node:
        node.save("dim", d)
    return out


class SqueezeBackward0(Node):
    """squeeze(): the gradient reshaped back to the source's sizes."""

    name = "SqueezeBackward0"
    saved_names = ("self_sym_sizes",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [reshape(grad, self.saved_value("self_sym_sizes"))]


class SqueezeBackward1(Node):
    """squeeze(dim): the gradient unsqueezed at dim (when that dim was squeezed)."""

    name = "SqueezeBackward1"
    saved_names = ("dim", "self_sym_sizes")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        sizes, dim = self.saved_value("self_sym_sizes"), self.saved_value("dim")
        if grad.ndim == len(sizes):
            return [grad]
        return [unsqueeze(grad, dim)]


class SqueezeBackward2(Node):
    """squeeze(dims): the gradient reshaped back."""

    name = "SqueezeBackward2"
    saved_names = ("dim", "self_sym_sizes")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [reshape(grad, self.saved_value("self_sym_sizes"))]


def squeeze(self: Tensor, dim: Any = None) -> Tensor:
    if dim is None:
        out, node = record_view(SqueezeBackward0, self, np.squeeze(self.data))
        if node:
            node.save("self_sym_sizes", self.shape)
        return out
    if isinstance(dim, int):
        d = normalize_dim(dim, self.ndim)
        values = (np.squeeze(self.data, axis=d) if self.ndim and self.shape[d] == 1
                  else self.data.view())
        out, node = record_view(SqueezeBackward1, self, values)
        if node:
            node.save("dim", d)
            node.save("self_sym_sizes", self.shape)
        return out
    dims = tuple(normalize_dim(d, self.ndim) for d in dim)
    axes = tuple(d for d in dims if self.ndim and self.shape[d] == 1)
    out, node = record_view(SqueezeBackward2, self, np.squeeze(self.data, axis=axes))
    if node:
        node.save("dim", dims)
        node.save("self_sym_sizes", self.shape)
    return out


class ExpandBackward0(Node):
    """expand(sizes): the gradient summed back to the source's sizes."""

    name = "ExpandBackward0"
    saved_names = ("self_sym_sizes",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [sum_to(grad, self.saved_value("self_sym_sizes"))]


def expand(self: Tensor, sizes: Shape) -> Tensor:
    sizes = tuple(sizes)
    if len(sizes) < self.ndim:
        raise errors.TorchError("RuntimeError", errors.expand_too_few(sizes, self.ndim))
    lead = len(sizes) - self.ndim
    target = []
    for i, size in enumerate(sizes):
        if i < lead:
            if size < 0:
                raise errors.TorchError("RuntimeError", errors.expand_negative(i, size))
            target.append(size)
            continue
        own = self.shape[i - lead]
        if size == -1:
            size = own
        elif own != 1 and own != size:
            raise errors.TorchError("RuntimeError", errors.expand_mismatch(
                size, own, i, sizes, self.shape))
        target.append(size)
    self.ctx.check_elements(tuple(target))
    out, node = record_view(ExpandBackward0, self, np.broadcast_to(self.data, tuple(target)))
    if node:
        node.save("self_sym_sizes", self.shape)
    return out


# -- tensors joined and repeated ----------------------------------------------------------

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
            raise errors.TorchError("RuntimeError", errors.cat_dims(ref.ndim, i, t.ndim))
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise errors.TorchError("RuntimeError", errors.cat_sizes(
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
            raise errors.TorchError("RuntimeError", errors.stack_sizes(ref.shape, t.shape, i))
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
        lead = len(repeats) - len(sizes)
        g = grad.data
        split_shape: list[int] = []
        for i, r in enumerate(repeats):
            size = sizes[i - lead] if i >= lead else 1
            split_shape += [r, size]
        g = g.reshape(split_shape).sum(axis=tuple(range(0, len(split_shape), 2)))
        return [Tensor(as_array(g.reshape(sizes), grad.dtype.numpy), grad.ctx)]


def repeat(self: Tensor, repeats: Shape) -> Tensor:
    if len(repeats) < self.ndim:
        raise errors.TorchError("RuntimeError", errors.REPEAT_TOO_FEW)
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
        raise errors.TorchError("IndexError", errors.INDEX_0_DIM)
    d = normalize_dim(dim, self.ndim)
    views = [self.data[(slice(None),) * d + (i, Ellipsis)] for i in range(self.shape[d])]
    outputs, node = record_outputs(UnbindBackward0, [self], views, self)
    base = self.base if self.base is not None else self
    for out in outputs:
        out.base = base
        out.version_counter = self.version_counter
    if node:
        node.save("dim", d)
    return outputs
