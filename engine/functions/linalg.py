"""Matrix products for operands up to 2-D: mm, mv, dot, addmm, and `@` (matmul), which
picks one of them by the operands' dimensions as PyTorch's `matmul` does:
1-D @ 1-D is dot, 2-D @ 2-D is mm, 2-D @ 1-D is mv, and 1-D @ 2-D is
`unsqueeze(0)`, mm, then an in-place `squeeze_(0)` (SqueezeBackward4)."""

from __future__ import annotations

import numpy as np

from engine import errors, op_errors
from engine.functions import blas
from engine.functions._record import record
from engine.functions.arithmetic import mul
from engine.functions.dims import unsqueeze
from engine.functions.shape import reshape, t, unsafe_view
from engine.node import Node
from engine.tensor import Tensor, as_array


def product_values(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a @ b` (a 2-D, b 1-D or 2-D) with PyTorch's signed zeros (Note [Signs of zero
    products]) and, where it is known, MKL's order of the additions (Note [MKL's
    summation order]); elsewhere numpy's sum, the same within float32 rounding."""
    if b.ndim == 2 and a.shape[1] == 1 and a.shape[0] > 1 and b.shape[1] > 1:
        return np.asarray(a * b, dtype=a.dtype)        # an outer product, signs and all
    if b.ndim == 2 and (summed := blas.gemm(a, b)) is not None:
        return summed
    chains = blas.gemm(b[None, :], a.T) if b.ndim == 1 and blas.transposed(a) else None
    if chains is not None:                    # mv(X.t(), g) is g @ X: one row's chains
        out_row: np.ndarray = chains[0]
        return out_row
    if b.ndim == 1 or (b.shape[1] == 1 and a.shape[0] > 1 and a.shape[1] > 1):  # sgemv
        vector = b if b.ndim == 1 else b[:, 0]
        if (rows := blas.gemv(a, vector)) is not None:
            return rows if b.ndim == 1 else rows[:, None]
    one_sample = a.shape[0] == 1 and b.ndim == 2 and b.shape[1] > 1 and blas.transposed(b)
    if one_sample and (row := blas.gemv(b.T, a[0])) is not None:     # x @ W.t(): mv(W, x)
        return row[None, :]
    out = np.asarray(a @ b, dtype=a.dtype)
    out += 0        # -0.0 + 0.0 is +0.0; every other value is unchanged
    return out


# Note [Signs of zero products]
# MKL starts each sum of a matrix product from +0.0, so an entry whose products are all
# -0.0 is +0.0 (a relu unit that no sample activates, times negative inputs), in mm, mv,
# dot and their backward products alike; the exception is gemm with an inner size of 1
# and both outer sizes above 1 (an outer product), which writes each entry's one product,
# its sign included. MEASURED with PyTorch 2.13 on this CPU for every shape up to 5x5x5,
# float32 and float64, each operand transposed or not. numpy's sums do not follow it
# (its outer products lose the sign, its 1-element dot keeps it), hence the two cases.
# (addmm with a bias of -0.0 keeps the bias's sign in some shapes; not reproduced.)


def _same_dtype(op: str, tensors: list[Tensor]) -> None:
    names = [t.dtype for t in tensors]
    if any(d is not names[0] for d in names):
        raise errors.TorchError("RuntimeError", op_errors.mixed_dtypes(op, tensors))


def _column_major(t: Tensor) -> bool:
    """Strides (1, rows): a transposed matrix, for which PyTorch's mm backward computes
    the gradient transposed (mm_mat1_backward / mm_mat2_backward)."""
    if t.ndim != 2:
        return False
    strides = tuple(s // t.data.itemsize for s in t.data.strides)
    return strides[0] == 1 and strides[1] == t.shape[0]


def mm_mat1_backward(grad: Tensor, mat2: Tensor, mat1_column_major: bool) -> Tensor:
    if mat1_column_major:
        return t(mm(mat2, t(grad)))
    return mm(grad, t(mat2))


def mm_mat2_backward(grad: Tensor, mat1: Tensor, mat2_column_major: bool) -> Tensor:
    if mat2_column_major:
        return t(mm(t(grad), mat1))
    return mm(t(mat1), grad)


class MmBackward0(Node):
    """self @ mat2: mat2 gets self.t() @ grad, then self gets grad @ mat2.t()."""

    name = "MmBackward0"
    saved_names = ("mat2", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        grad_mat2 = grad_self = None
        if self.needs_input_grad(1):
            grad_mat2 = mm_mat2_backward(grad, self.saved_value("self"),
                                         self.saved_value("_mat2_column_major"))
        if self.needs_input_grad(0):
            grad_self = mm_mat1_backward(grad, self.saved_value("mat2"),
                                         self.saved_value("_self_column_major"))
        return [grad_self, grad_mat2]


def mm(self: Tensor, mat2: Tensor) -> Tensor:
    if self.ndim != 2:
        raise errors.TorchError("RuntimeError", "self must be a matrix")
    if mat2.ndim != 2:
        raise errors.TorchError("RuntimeError", "mat2 must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise errors.TorchError("RuntimeError", op_errors.mm_shapes(self.shape, mat2.shape))
    _same_dtype("mm", [self, mat2])
    self.ctx.check_elements((self.shape[0], mat2.shape[1]))
    values = product_values(self.data, mat2.data)
    out, node = record(MmBackward0, [self, mat2], values, self)
    if node:
        if node.needs_input_grad(0):
            node.save("mat2", mat2)
        if node.needs_input_grad(1):
            node.save("self", self)
        node.save("_self_column_major", _column_major(self))
        node.save("_mat2_column_major", _column_major(mat2))
    return out


class AddmmBackward0(Node):
    """beta * self + mat1 @ mat2 (nn.Linear on a batch): mat1 and mat2 as in mm, and
    self (the bias) gets the gradient, summed back to its shape."""

    name = "AddmmBackward0"
    saved_names = ("alpha", "beta", "mat1", "mat2")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        grad_mat1 = grad_mat2 = None
        if self.needs_input_grad(1):
            grad_mat1 = mm_mat1_backward(grad, self.saved_value("mat2"),
                                         self.saved_value("_mat1_column_major"))
        if self.needs_input_grad(2):
            grad_mat2 = mm_mat2_backward(grad, self.saved_value("mat1"),
                                         self.saved_value("_mat2_column_major"))
        return [grad if self.needs_input_grad(0) else None, grad_mat1, grad_mat2]


def _expands_to(bias: Tensor, target: tuple[int, int]) -> None:
    """`expand_size(self, {m, n})`: addmm's bias must expand to the product's shape."""
    lead = len(target) - bias.ndim
    for i, own in enumerate(bias.shape):
        size = target[lead + i] if lead + i >= 0 else 1
        if lead + i < 0 or (own != 1 and own != size):
            raise errors.TorchError("RuntimeError", op_errors.expand_mismatch(
                size, own, max(lead + i, 0), target, bias.shape))


def addmm(self: Tensor, mat1: Tensor, mat2: Tensor) -> Tensor:
    if mat1.ndim != 2 or mat2.ndim != 2 or mat1.shape[1] != mat2.shape[0]:
        raise errors.TorchError("RuntimeError", op_errors.mm_shapes(mat1.shape, mat2.shape))
    _same_dtype("addmm", [self, mat1, mat2])
    _expands_to(self, (mat1.shape[0], mat2.shape[1]))
    product = product_values(mat1.data, mat2.data)
    values = as_array(product + self.data, self.data.dtype)
    out, node = record(AddmmBackward0, [self, mat1, mat2], values, mat1)
    if node:
        node.save("alpha", 1)
        node.save("beta", 1)
        if node.needs_input_grad(2):
            node.save("mat1", mat1)
        if node.needs_input_grad(1):
            node.save("mat2", mat2)
        node.save("_mat1_column_major", _column_major(mat1))
        node.save("_mat2_column_major", _column_major(mat2))
    return out


class MvBackward0(Node):
    """self @ vec: self gets the outer product grad ⊗ vec, vec gets self.t() @ grad."""

    name = "MvBackward0"
    saved_names = ("self", "vec")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        grad_self = grad_vec = None
        if self.needs_input_grad(0):
            vec = self.saved_value("vec")
            grad_self = outer(grad, vec)
        if self.needs_input_grad(1):
            grad_vec = mv(t(self.saved_value("self")), grad)
        return [grad_self, grad_vec]


def mv(self: Tensor, vec: Tensor) -> Tensor:
    if self.ndim == 0:                      # ATen sizes the output by self.size(0) first
        raise errors.TorchError("IndexError", "Dimension specified as 0 but tensor has no "
                                "dimensions")
    if self.ndim != 2 or vec.ndim != 1 or self.shape[1] != vec.shape[0]:
        raise errors.TorchError("RuntimeError", op_errors.mv_shapes(self.shape, vec.shape))
    _same_dtype("addmv", [vec, self, vec])
    values = product_values(self.data, vec.data)
    out, node = record(MvBackward0, [self, vec], values, self)
    if node:
        if node.needs_input_grad(1):       # see Note [Saving order]
            node.save("self", self)
        if node.needs_input_grad(0):
            node.save("vec", vec)
    return out


class DotBackward0(Node):
    """self · tensor: self gets grad * tensor, tensor gets grad * self."""

    name = "DotBackward0"
    saved_names = ("self", "tensor")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        grad_self = mul(grad, self.saved_value("tensor")) if self.needs_input_grad(0) else None
        grad_other = mul(grad, self.saved_value("self")) if self.needs_input_grad(1) else None
        return [grad_self, grad_other]


def dot(self: Tensor, other: Tensor) -> Tensor:
    if self.ndim != 1 or other.ndim != 1:
        raise errors.TorchError("RuntimeError", op_errors.dot_dims(self.ndim, other.ndim))
    if self.dtype is not other.dtype:
        raise errors.TorchError("RuntimeError", op_errors.dot_dtypes(self.dtype, other.dtype))
    if self.shape != other.shape:
        raise errors.TorchError("RuntimeError", op_errors.dot_sizes(self.shape, other.shape))
    summed = blas.dot(self.data, other.data)      # see Note [MKL's summation order]
    if summed is None:                            # + 0: Note [Signs of zero products]
        summed = np.dot(self.data, other.data) + 0
    values = as_array(summed, self.data.dtype)
    out, node = record(DotBackward0, [self, other], values, self)
    if node:
        if node.needs_input_grad(1):       # see Note [Saving order]
            node.save("self", self)
        if node.needs_input_grad(0):
            node.save("tensor", other)
    return out


class SqueezeBackward4(Node):
    """squeeze_(dim), in place: the gradient unsqueezed back at dim."""

    name = "SqueezeBackward4"
    saved_names = ("dim",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [unsqueeze(grad, self.saved_value("dim"))]


def matmul(self: Tensor, other: Tensor) -> Tensor:
    """`self @ other` for operands up to 2-D, and a batch of rows times a matrix or a
    vector (folded into one mm or mv, as `_matmul_impl` folds it)."""
    if self.ndim == 0 or other.ndim == 0:
        raise errors.TorchError("RuntimeError", op_errors.matmul_0d(self.ndim, other.ndim))
    if self.ndim >= 3 and other.ndim <= 2 and (
            other.requires_grad or self.data.flags.c_contiguous):
        return _folded(self, other)
    if self.ndim > 2 or other.ndim > 2:
        raise errors.TorchError("UnsupportedError", "the lab multiplies matrices of up to 2 "
                                "dimensions (batched matmul is not supported)")
    if self.ndim == 1 and other.ndim == 1:
        return dot(self, other)
    if self.ndim == 2 and other.ndim == 1:
        return mv(self, other)
    if self.ndim == 2:
        return mm(self, other)
    row = mm(unsqueeze(self, 0), other)
    values = row.data[0, ...]
    out, node = record(SqueezeBackward4, [row], values, row)
    if node:
        node.save("dim", 0)
    return out


def _folded(self: Tensor, other: Tensor) -> Tensor:
    """`should_fold`: self's leading dims folded into rows (`reshape`), one mm or mv, and
    the result given self's leading dims back (`_unsafe_view`)."""
    rows = 1
    for d in self.shape[:-1]:
        rows *= d
    folded = reshape(self, (rows, self.shape[-1]))
    product = mm(folded, other) if other.ndim == 2 else mv(folded, other)
    return unsafe_view(product, self.shape[:-1] + product.shape[1:])


def outer(self: Tensor, vec2: Tensor) -> Tensor:
    """at::outer: `self.reshape({n, 1}) * vec2` (a view of self, nothing done to vec2)."""
    return mul(reshape(self, (self.shape[0], 1)), vec2)
