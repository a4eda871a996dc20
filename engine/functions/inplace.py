"""In-place ops: `x.add_(1)`, `x += 1`, `x.zero_()`, `x[0] = v`, and the version counter.

# Note [In-place ops]
An in-place op computes its result as the out-of-place op would, from the tensor as it
was (saving a copy of it where its backward needs the old values, as PyTorch's generated
code saves `original_self`), writes the result into the tensor's own values and bumps its
version. If the op is recorded, the tensor's history is rebased onto the new node: the
same tensor object now has `grad_fn` = that node, whose edge leads to the old `grad_fn`.

Two checks come first, with PyTorch's messages: a leaf that requires grad may change in
place only under no_grad, and an inference tensor only inside inference_mode.

A tensor that is a view (of `base`) is rebased through its base: the base's new grad_fn is
a CopySlices node that runs the op's node on the view's part of the gradient, and the
view's own grad_fn becomes an AsStridedBackward0 onto that (PyTorch regenerates it at
once, so the sequence numbers are: the op's node, CopySlices, AsStridedBackward0).

Every other view of the same base gets its AsStridedBackward0 only when its grad_fn is
next read: see engine/views.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from engine import errors, op_errors
from engine.functions._record import broadcast_shapes, record, wrap, zeros_like
from engine.node import InputMetadata, Node, gradient_edge
from engine.tensor import Number, Tensor, filled
from engine.views import check_view_rebase, set_grad_fn, strided, view_geometry


def check_inplace(self: Tensor) -> None:
    """VariableTypeUtils.h `check_inplace`, in its order: with grad mode on and a tensor
    that requires grad, a view that may not change in place raises, then a view of a leaf,
    then a leaf (whose `is_leaf` reads grad_fn: a stale view is regenerated here)."""
    ctx = self.ctx
    if ctx.grad_mode and self.requires_grad:
        base = self.base
        if base is not None:
            check_view_rebase(self, indirect=False)
            if base.is_leaf:
                raise errors.TorchError("RuntimeError", errors.LEAF_VIEW_INPLACE)
        if self.is_leaf:
            raise errors.TorchError("RuntimeError", errors.LEAF_INPLACE)
    if self.is_inference and not ctx.inference_mode:
        raise errors.TorchError("RuntimeError", errors.INFERENCE_INPLACE)


def _as_before(self: Tensor) -> Tensor:
    """The tensor as it was: its history, and a copy of its values (its own counter).
    check_inplace has already regenerated a stale view's grad_fn where the op records."""
    before = Tensor(self.data.copy(), self.ctx, grad_fn=self.stored_grad_fn,
                    output_nr=self.output_nr)
    before.requires_grad = self.requires_grad
    before._grad_accumulator = self._grad_accumulator
    return before


def _write(self: Tensor, result: Tensor) -> None:
    if result.shape != self.shape:
        raise errors.TorchError("RuntimeError", op_errors.inplace_shape(self.shape, result.shape))
    if result.dtype.category > self.dtype.category:
        raise errors.TorchError("RuntimeError", op_errors.cannot_cast(result.dtype, self.dtype))
    if not self.data.flags.writeable:
        raise errors.TorchError("RuntimeError", op_errors.INPLACE_OVERLAP)
    self.data[...] = result.data             # (cast as astype casts, without a copy)


def inplace(self: Tensor, compute: Callable[[Tensor], Tensor], records: bool = True
            ) -> Tensor:
    """`self.op_(...)`: see Note [In-place ops]. `compute` is the out-of-place op;
    `records` is False where the op cannot record whatever its inputs (fill_ of a tensor
    that does not require grad)."""
    check_inplace(self)
    if not (records and self.ctx.grad_mode):    # Note [In-place ops that record nothing]
        _write(self, compute(self))
        self.bump_version()
        return self
    before = _as_before(self)
    result = compute(before)
    if result.grad_fn is not None:
        _clone_saved_original(result.grad_fn, before)
    _write(self, result)
    self.bump_version()
    if result.grad_fn is not None:
        rebase_history(self, result.grad_fn)
    return self


# Note [In-place ops that record nothing]
# Under no_grad (an optimizer's update, `w -= lr * w.grad`) nothing is recorded, so the
# result can be computed from the tensor itself: no copy of it as it was, and no tensor
# for that copy. Its values are read before they are overwritten either way. MEASURED on
# bench/programs.py's 1,000-step scalar loop (two updates and two zero_ of .grad per
# step), compiled: an update of a 0-d tensor under no_grad took 1.48 us with the copy and
# 1.27 us without (best of 5 x 20,000), about 1 ms of the loop's 50 ms trace.


def _clone_saved_original(node: Node, before: Tensor) -> None:
    """Where the op's node saved the tensor as it was (`sin_`'s self, `mul_`'s self for
    the other's gradient), PyTorch saved `original_self = self.clone()`, made just after
    the node: a CloneBackward0 that takes the next sequence number, and through which a
    second derivative reaches the old history."""
    from engine.functions.shape import CloneBackward0

    if not before.requires_grad:
        return
    for var in node.saved.values():
        if var.is_tensor and not var.is_output and var.value is before:
            clone_node = CloneBackward0(before.ctx, [before])
            clone_node.input_metadata = [InputMetadata(before.shape, before.dtype)]
            before.grad_fn = clone_node
            before.output_nr = 0
            return


def rebase_history(self: Tensor, node: Node) -> None:
    """Make `node` the tensor's grad_fn (through its base for a view)."""
    for saved in node.saved.values():
        if saved.is_tensor and saved.is_output:      # the result is the tensor itself now
            saved.value = Tensor(self.data, self.ctx)
            saved.value.version_counter = saved.version_counter = self.version_counter
            saved.saved_version = self.version
    node.input_metadata = [InputMetadata(self.shape, self.dtype)]
    if self.base is None:
        set_grad_fn(self, node)
        return
    check_view_rebase(self, indirect=False)
    base = self.base
    set_grad_fn(base, CopySlices(base, self, node))
    assert self.grad_fn is not None      # read at once: regenerated (rebase_history does)


class CopySlices(Node):
    """An in-place op on a view, seen from the base: the base's gradient with the view's
    part replaced by what the op's node makes of that part."""

    name = "torch::autograd::CopySlices"
    __slots__ = ("fn", "geometry", "base_shape")

    def __init__(self, base: Tensor, view: Tensor, fn: Node) -> None:
        super().__init__(base.ctx, [base])
        self.next_edges = [gradient_edge(base), *fn.next_edges[1:]]
        self.fn = fn
        self.geometry = view_geometry(view)
        self.base_shape = base.shape
        self.input_metadata = [InputMetadata(base.shape, base.dtype)]

    @property
    def type_name(self) -> str:
        return "CopySlices"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        result = np.array(np.broadcast_to(grad.data, self.base_shape), copy=True)
        part = strided(result, self.geometry)
        inner = self.fn.apply([Tensor(np.array(part, copy=True), grad.ctx)])
        if inner[0] is None:
            part[...] = 0
        else:
            part[...] = np.broadcast_to(inner[0].data, part.shape)
        return [Tensor(result, grad.ctx), *inner[1:]]

    def release_variables(self) -> list[str]:
        return self.fn.release_variables()


class CopyBackwards(Node):
    """copy_(src): self (overwritten) gets zeros, src gets the gradient."""

    name = "torch::autograd::CopyBackwards"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        grad_self = zeros_like(grad) if self.needs_input_grad(0) else None
        return [grad_self, grad if self.needs_input_grad(1) else None]


def copy_(self: Tensor, src: Tensor | Number) -> Tensor:
    """`self.copy_(src)`: src's values (broadcast, cast) written into self."""
    source = wrap(src, self)

    def compute(before: Tensor) -> Tensor:
        shape = broadcast_shapes(self.shape, source.shape)
        if shape != self.shape:
            raise errors.TorchError("RuntimeError", op_errors.inplace_shape(self.shape, shape))
        values = np.array(np.broadcast_to(source.data, self.shape), dtype=self.data.dtype)
        out, _ = record(CopyBackwards, [before, source], values, before)
        return out

    check_inplace(self)
    result = compute(_as_before(self))
    self.data[...] = result.data
    self.bump_version()
    if result.grad_fn is not None:
        rebase_history(self, result.grad_fn)
    return self


class FillBackward2(Node):
    """fill_(number): the old values are gone, so the gradient is zeros."""

    name = "FillBackward2"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [zeros_like(grad)]


class ZeroBackward0(FillBackward2):
    name = "ZeroBackward0"


class FillBackward3(Node):
    """fill_(0-d tensor): self gets zeros, the value every element's gradient, summed."""

    name = "FillBackward3"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        from engine.functions.reduction import sum as sum_all

        value = sum_all(grad) if self.needs_input_grad(1) else None
        return [zeros_like(grad) if self.needs_input_grad(0) else None, value]


def fill_(self: Tensor, value: Tensor | Number, node_type: type[Node] = FillBackward2
          ) -> Tensor:
    """`self.fill_(value)`: a number (FillBackward2) or a 0-d tensor (FillBackward3, which
    passes the gradient on to the value's history)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise errors.TorchError("RuntimeError", op_errors.fill_dims(value.ndim))

        def compute_from(before: Tensor) -> Tensor:
            values = filled(self.shape, value.data.item(), self.data.dtype)
            out, _ = record(FillBackward3, [before, value], values, before)
            return out

        return inplace(self, compute_from, records=self.requires_grad or value.requires_grad)

    def compute(before: Tensor) -> Tensor:
        out, _ = record(node_type, [before], filled(self.shape, value, self.data.dtype),
                        before)
        return out

    return inplace(self, compute, records=self.requires_grad)


def zero_(self: Tensor) -> Tensor:
    return fill_(self, 0, ZeroBackward0)


def arithmetic_(op: Callable[[Tensor, Any], Tensor], self: Tensor, other: Any) -> Tensor:
    """`self += other` and `self.add_(other)`: the op's result written into self."""
    return inplace(self, lambda before: op(before, other))


def random_fill(self: Tensor, values: np.ndarray) -> Tensor:
    """uniform_, normal_, random_ and friends: new values drawn, no history recorded
    (PyTorch's derivative for them is zeros, and they are used on fresh tensors)."""
    check_inplace(self)
    self.data[...] = values.astype(self.data.dtype)
    self.bump_version()
    return self
