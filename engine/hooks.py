"""Registering hooks: on tensors (`register_hook`, `retain_grad`,
`register_post_accumulate_grad_hook`) and on nodes (`register_prehook`, `register_hook`).

Where a hook lives decides when it fires (Note [Hook order]): a leaf's tensor hooks stay
on the leaf and run when its AccumulateGrad pops; a non-leaf's go to its grad_fn, keyed by
which output it is, and run when that node pops, with the summed gradient.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from engine import errors
from engine.errors import TorchError
from engine.node import Node, RemovableHandle
from engine.tensor import Tensor


def register_hook(t: Tensor, hook: Callable[[Tensor], Any]) -> RemovableHandle:
    """`t.register_hook(fn)`: fn(grad) runs when t's gradient is computed; a tensor it
    returns replaces the gradient."""
    if not t.requires_grad:
        raise TorchError("RuntimeError", errors.HOOK_NO_GRAD)
    node = t.grad_fn
    hooks = t.hooks if node is None else node.tensor_pre_hooks.setdefault(t.output_nr, [])
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def retain_grad(t: Tensor) -> None:
    """`t.retain_grad()`: a non-leaf's `.grad` is written when its grad_fn pops (the
    first time a copy, later added), after its other hooks."""
    if not t.requires_grad:
        raise TorchError("RuntimeError", errors.RETAIN_GRAD_NO_GRAD)
    if t.is_leaf or t.retains_grad:
        return
    assert t.grad_fn is not None

    def retain(grad: Tensor) -> None:
        if t.grad is None:
            t.grad = Tensor(np.array(grad.data, copy=True), grad.ctx)
        else:
            t.grad = t.grad + grad

    t.grad_fn.retains_grad_hooks[t.output_nr] = retain
    t.retains_grad = True


def register_post_accumulate_grad_hook(t: Tensor, hook: Callable[[Tensor], Any]
                                       ) -> RemovableHandle:
    """A leaf's hook that runs after AccumulateGrad wrote `.grad`, given the leaf."""
    if not t.requires_grad:
        raise TorchError("RuntimeError", errors.POST_ACCUMULATE_NO_GRAD)
    if not t.is_leaf:
        raise TorchError("RuntimeError", errors.POST_ACCUMULATE_NON_LEAF)
    t.post_accumulate_hooks.append(hook)
    return RemovableHandle(t.post_accumulate_hooks, hook)


def register_prehook(node: Node, hook: Callable[[tuple[Any, ...]], Any]) -> RemovableHandle:
    """`grad_fn.register_prehook(fn)`: fn(grad_outputs) before the node runs."""
    node.pre_hooks.append(hook)
    return RemovableHandle(node.pre_hooks, hook)


def register_node_hook(node: Node, hook: Callable[[tuple[Any, ...], tuple[Any, ...]], Any]
                       ) -> RemovableHandle:
    """`grad_fn.register_hook(fn)`: fn(grad_inputs, grad_outputs) after it ran."""
    node.post_hooks.append(hook)
    return RemovableHandle(node.post_hooks, hook)
