"""Views: how a view's history follows its base through in-place ops.

A view remembers its base (the tensor at the root of its view chain) and the version of
the shared counter when its grad_fn was last set (`attr_version`). An in-place op on the
base, or on another view of it, moves the version on; the next read of the view's
`grad_fn` (an op using it, `.grad_fn`, `is_leaf`, printing, backward from it) then gives
it a new AsStridedBackward0 onto the base's current grad_fn, with a sequence number
taken at that moment, as `VariableHooks::grad_fn` does.
A view whose creation forbids that (made under no_grad or inference_mode, one output of
unbind, returned by a custom Function) raises PyTorch's error instead, as it does for an
in-place op on the view itself (engine/functions/inplace.py `check_inplace`). A view also requires
grad when its base does, as `DifferentiableViewMeta::requires_grad` says.
"""

from __future__ import annotations

import re

import numpy as np

from engine import errors
from engine.node import InputMetadata, Node
from engine.tensor import Tensor

# How a view was made (CreationMeta): what may happen to it when its base changes in place.
DEFAULT = "default"
NO_GRAD_MODE = "no_grad"
INFERENCE_MODE = "inference_mode"
MULTI_OUTPUT_NODE = "multi_output"
IN_CUSTOM_FUNCTION = "custom_function"


def make_view(out: Tensor, source: Tensor, multi_output: bool = False) -> None:
    """Make `out` a view of `source`: the same version counter, the root base, and how it
    was made (`as_view`'s CreationMeta, propagated along a chain of views)."""
    ctx = source.ctx
    out.base = source.base if source.base is not None else source
    out.version_counter = source.version_counter
    out.attr_version = source.version_counter.version
    out.is_inference = source.is_inference
    if ctx.inference_mode:
        meta = INFERENCE_MODE
    elif not ctx.grad_mode:
        meta = NO_GRAD_MODE
    elif multi_output:
        meta = MULTI_OUTPUT_NODE
    else:
        meta = DEFAULT
    if source.base is not None:                  # propagate_creation_meta
        previous = source.creation_meta
        if meta == DEFAULT or previous == INFERENCE_MODE:
            meta = previous
    out.creation_meta = meta


_VIEW_REBASE_ADVICE = (      # what each CreationMeta adds to the message
    (MULTI_OUTPUT_NODE, " This view is the output of a function that returns multiple views. "
    "Such functions do not allow the output views to be modified inplace. You should replace "
    "the inplace operation by an out-of-place one."),
    (NO_GRAD_MODE, " Given that this use case is ambiguous and error-prone, it is forbidden. "
    "You can clarify your code by moving both the view and the inplace either both inside "
    "the no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
    "want the inplace to be tracked)."),
    (INFERENCE_MODE, " Given that this use case is ambiguous and error-prone, it is forbidden. "
    "You can clarify your code by moving both the view and the inplace either both inside "
    "the inference_mode block (if you don't want the inplace to be tracked) or both outside "
    "(if you want the inplace to be tracked)."),
    (IN_CUSTOM_FUNCTION, " This view was created inside a custom Function (or because an input "
    "was returned as-is) and the autograd logic to handle view+inplace would override the "
    "custom backward associated with the custom Function, leading to incorrect gradients. "
    "This behavior is forbidden. You can fix this by cloning the output of the custom "
    "Function."),
)


def check_view_rebase(view: Tensor, indirect: bool) -> None:
    """variable.cpp `handle_view_on_rebase`: only a view made the default way may have its
    history rebased, by an in-place op on it or (`indirect`) on its base or another view."""
    meta = view.creation_meta
    if meta == DEFAULT:
        return
    node = view.stored_grad_fn
    modified = "its base or another view of its base has been" if indirect else "is being"
    name = None if node is None else re.sub(r"Backward\d*$", "", node.node_name)
    if meta in (INFERENCE_MODE, NO_GRAD_MODE) or node is None:
        prefix = ("A view was created in" if node is None else
                  f"Output {view.output_nr} of {name} is a view of a view which was created in")
        if meta == INFERENCE_MODE:
            message = f"{prefix} inference mode and {modified} modified inplace in normal mode."
        else:
            message = (f"{prefix} no_grad mode and {modified} modified inplace with grad mode "
                       "enabled.")
    else:
        message = f"Output {view.output_nr} of {name} is a view and {modified} modified inplace."
    advice = next(text for m, text in _VIEW_REBASE_ADVICE if m == meta)
    raise errors.TorchError("RuntimeError", message + advice)


def regenerate_view_grad_fn(view: Tensor) -> Node:
    """`VariableHooks::grad_fn` for a view whose base changed in place since its grad_fn
    was set: a new AsStridedBackward0 (the next sequence number) onto the base's grad_fn
    now; a `retain_grad()` moves to it, the tensor hooks stay with the old node."""
    check_view_rebase(view, indirect=True)
    base = view.base
    assert base is not None
    node = AsStridedBackward0(view.ctx, [base])
    shape, strides, offset = view_geometry(view)
    node.save("size", shape)
    node.save("storage_offset", offset)
    node.save("stride", strides)
    node.save("_indices", _indices_in_base(view))
    node.save("_base_shape", base.shape)
    node.input_metadata = [InputMetadata(view.shape, view.dtype)]
    set_grad_fn(view, node)
    return node


def set_grad_fn(t: Tensor, node: Node, output_nr: int = 0) -> None:
    """Give `t` its new history. As `update_tensor_hooks_on_new_gradfn` does, a
    `retain_grad()` moves to the new node (`.grad` is the gradient of the tensor as it is
    now), while the tensor hooks registered so far stay with the old one."""
    old, old_nr = t.stored_grad_fn, t.output_nr
    t.grad_fn = node
    t.output_nr = output_nr
    t.requires_grad = True
    if t.retains_grad and old is not None and old is not node:
        retain = (old.retains_grad_hooks or {}).pop(old_nr, None)
        if retain is not None:
            node.retains_grad_hooks = node.retains_grad_hooks or {}
            node.retains_grad_hooks[output_nr] = retain


def view_geometry(view: Tensor) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(sizes, strides, storage offset) of a view within its base's values, in elements."""
    assert view.base is not None
    base = view.base.data
    item = base.itemsize
    offset = (view.data.__array_interface__["data"][0]
              - base.__array_interface__["data"][0]) // item
    return view.shape, tuple(s // item for s in view.data.strides), int(offset)


def _indices_in_base(view: Tensor) -> np.ndarray:
    """For each element of the view, the row-major index of the base element it is (the
    base's own layout may be any: its strides are followed)."""
    assert view.base is not None
    base = view.base.data
    item = base.itemsize
    strides = tuple(s // item for s in base.strides)
    extent = 1 + sum((d - 1) * s for d, s in zip(base.shape, strides, strict=True)) \
        if base.size else 0
    memory = np.zeros(max(extent, 1), dtype=np.int64)
    np.lib.stride_tricks.as_strided(memory, base.shape, tuple(
        s * memory.itemsize for s in strides))[...] = np.arange(base.size).reshape(base.shape)
    return np.array(strided(memory.reshape(-1), view_geometry(view)), copy=True)


def strided(values: np.ndarray, geometry: tuple[tuple[int, ...], tuple[int, ...], int]
            ) -> np.ndarray:
    """The elements of `values` (row-major) that a view of that geometry sees."""
    shape, strides, offset = geometry
    flat = values.reshape(-1)
    return np.lib.stride_tricks.as_strided(flat[offset:], shape,
                                           tuple(s * values.itemsize for s in strides))


class AsStridedBackward0(Node):
    """A view's grad_fn regenerated after an in-place op on it or on its base: the
    gradient placed in zeros of the base's shape at the view's elements (summed where
    they overlap, as an expanded view's do)."""

    name = "AsStridedBackward0"
    saved_names = ("size", "storage_offset", "stride")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        shape = self.saved_value("_base_shape")
        indices = self.saved_value("_indices")
        values = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=grad.dtype.numpy)
        np.add.at(values, indices.reshape(-1),                 # overlapping views add up
                  np.broadcast_to(grad.data, indices.shape).reshape(-1))
        return [Tensor(values.reshape(shape), grad.ctx)]
