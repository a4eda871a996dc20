"""AccumulateGrad: the node that writes a leaf's `.grad`.

It has sequence number UINT64_MAX (accumulate_grad.h), so among ready nodes it always
runs first. The first write stores a copy of the incoming gradient; later writes add to
it, in place (the same `.grad` object) unless the backward records a graph. Under
`create_graph=True` both are recorded: the first write as a copy (CopyBackwards), an add
as AddBackward0, so `.grad` itself gets a grad_fn. After the write, the leaf's
post-accumulate-grad hooks run with the leaf itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.context import UINT64_MAX
from engine.functions.arithmetic import add
from engine.functions.inplace import copy_
from engine.node import InputMetadata, Node
from engine.tensor import Tensor


class AccumulateGrad(Node):
    """`torch::autograd::AccumulateGrad`, one per leaf that requires grad."""

    name = "torch::autograd::AccumulateGrad"
    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        super().__init__(variable.ctx, [], sequence_nr=UINT64_MAX)
        self.variable = variable
        self.input_metadata = [InputMetadata(variable.shape, variable.dtype)]

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (new_grad,) = grads
        assert new_grad is not None
        if self.variable.requires_grad:   # `requires_grad_(False)` since: nothing written
            accumulate(self.variable, new_grad)
        return []


def _grad_now(leaf: Tensor) -> Tensor | None:
    """`.grad` read afresh: None if a hook set it so (as an SGD step may). Read inline, mypy
    keeps it narrowed to a Tensor by the writes above, and the compiled build checks that."""
    return leaf.grad


def accumulate(leaf: Tensor, new_grad: Tensor) -> None:
    """`.grad` = new_grad (a copy) the first time, `.grad += new_grad` afterwards, then
    the post-accumulate hooks."""
    ctx = leaf.ctx
    if leaf.grad is None:
        if ctx.grad_mode and new_grad.requires_grad:
            fresh = Tensor(np.empty(new_grad.shape, dtype=new_grad.data.dtype), ctx)
            leaf.grad = copy_(fresh, new_grad)         # clone_obey_contract: CopyBackwards
        else:
            leaf.grad = Tensor(np.array(new_grad.data, copy=True), ctx)
    elif ctx.grad_mode:
        leaf.grad = add(leaf.grad, new_grad)          # out of place: .grad gets a grad_fn
    else:
        grad = leaf.grad                              # `variable_grad += new_grad`
        grad.data[...] = grad.data + new_grad.data.astype(grad.data.dtype)
        grad.bump_version()
    for hook in list(leaf.post_accumulate_hooks or ()):
        returned: Any = hook(leaf)
        if ctx.hook_calls is not None:
            from engine.events import HookCall

            after = _grad_now(leaf)
            ctx.hook_calls.append(HookCall("post_accumulate", leaf.name or "leaf",
                                           None if after is None else after.data.copy(), None,
                                           False))
        # _call_hooks: a hook that returns its argument itself counts as returning None
        if returned is not None and returned is not leaf:
            from engine import errors

            if not isinstance(returned, Tensor):
                raise errors.TorchError("TypeError",
                                        errors.hook_returned(type(returned).__name__))
            raise errors.TorchError("RuntimeError", errors.POST_ACCUMULATE_RETURNED)
