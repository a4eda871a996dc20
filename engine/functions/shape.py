"""Shape ops: views (view, reshape, transpose, t, .T, permute, unsqueeze, squeeze,
flatten, expand) and copies that change shape (clone, contiguous, cat, stack, repeat).

A view shares its source's values (a numpy view of the same array) and its version
counter (Note [Storage and versions]). Each op's backward undoes what it did to the shape:
a view's node maps the gradient back to the source's shape with the inverse view.
"""

from __future__ import annotations

import numpy as np

from engine import errors, op_errors
from engine.functions._record import record
from engine.functions.reduction import normalize_dim
from engine.node import Node
from engine.tensor import Tensor
from engine.views import make_view

Shape = tuple[int, ...]


def record_view(node_type: type[Node], self: Tensor, values: np.ndarray
                ) -> tuple[Tensor, Node | None]:
    """A view op's output: it shares self's values and version counter."""
    out, node = record(node_type, [self], values, self)
    make_view(out, self)
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
        raise errors.TorchError("RuntimeError", op_errors.VIEW_STRIDES)
    out, node = record_view(ViewBackward0, self, _as_view(self.data, shape, strides))
    if node:
        node.save("self_sym_sizes", self.shape)
    return out


class UnsafeViewBackward0(ViewBackward0):
    name = "UnsafeViewBackward0"


class ReshapeAliasBackward0(ViewBackward0):
    """`at::_reshape_alias`: the view that reshape makes of a tensor that is not
    contiguous but whose layout allows one (a contiguous tensor gets `view`)."""

    name = "ReshapeAliasBackward0"


class CloneBackward0(Node):
    """clone: the gradient passes through."""

    name = "CloneBackward0"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return [grads[0]]


def clone(self: Tensor) -> Tensor:
    out, _ = record(CloneBackward0, [self], np.array(self.data, copy=True), self)
    return out


def contiguous(self: Tensor) -> Tensor:
    """A clone in row-major order (clone itself keeps the layout, as preserve_format does)."""
    if self.data.flags.c_contiguous:
        return self
    out, _ = record(CloneBackward0, [self], np.array(self.data, order="C", copy=True), self)
    return out


def reshape(self: Tensor, shape: Shape) -> Tensor:
    """A view when the layout allows one (`view` of a contiguous tensor, else
    ReshapeAliasBackward0), else a contiguous copy (CloneBackward0 then
    UnsafeViewBackward0), as `at::reshape` decides."""
    shape = infer_size(tuple(shape), self.numel())
    strides = compute_stride(self.shape, _element_strides(self.data), shape)
    if strides is None:
        return unsafe_view(clone(self), shape)
    if self.data.flags.c_contiguous:
        return view(self, shape)
    out, node = record_view(ReshapeAliasBackward0, self, _as_view(self.data, shape, strides))
    if node:
        node.save("self_sym_sizes", self.shape)
    return out


def unsafe_view(self: Tensor, shape: Shape) -> Tensor:
    """`at::_unsafe_view`: new sizes for a contiguous result, not tracked as a view."""
    values = np.ascontiguousarray(self.data).reshape(shape)
    out, node = record(UnsafeViewBackward0, [self], values, self)
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
        raise errors.TorchError("RuntimeError", op_errors.t_of(self.ndim))
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
        raise errors.TorchError("RuntimeError", op_errors.permute_length(self.ndim, len(dims)))
    normalized = tuple(normalize_dim(d, self.ndim) for d in dims)
    if len(set(normalized)) != len(normalized):
        raise errors.TorchError("RuntimeError", "permute(): duplicate dims are not allowed.")
    out, node = record_view(PermuteBackward0, self, np.transpose(self.data, normalized))
    if node:
        node.save("dims", normalized)
    return out


class FlipBackward0(Node):
    """flip(dims): the gradient flipped back along the same dims."""

    name = "FlipBackward0"
    saved_names = ("dims",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [flip(grad, self.saved_value("dims"))]


def flip(self: Tensor, dims: tuple[int, ...]) -> Tensor:
    """`x.flip(dims)`: a copy with the order of the values reversed along each dim (not a
    view); `reversed(x)` is `x.flip(0)`."""
    normalized: list[int] = []
    for d in dims:
        n = normalize_dim(d, self.ndim)
        if n in normalized:
            raise errors.TorchError("RuntimeError",
                                    f"dim {n} appears multiple times in the list of dims")
        normalized.append(n)
    values = np.flip(self.data, tuple(normalized)) if self.ndim else self.data
    out, node = record(FlipBackward0, [self], np.array(values, copy=True), self)
    if node:
        node.save("dims", tuple(dims))
    return out


def numpy_t(self: Tensor) -> Tensor:
    """`.T`: permute with the dimensions reversed (PermuteBackward0, as PyTorch records)."""
    return permute(self, tuple(range(self.ndim - 1, -1, -1)))
