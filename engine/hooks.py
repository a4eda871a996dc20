"""Registering hooks: on tensors (`register_hook`, `retain_grad`,
`register_post_accumulate_grad_hook`) and on nodes (`register_prehook`, `register_hook`).

Where a hook lives decides when it fires (Note [Hook order]): a leaf's tensor hooks stay
on the leaf and run when its AccumulateGrad pops; a non-leaf's go to its grad_fn, keyed by
which output it is, and run when that node pops, with the summed gradient.

# Note [Hook order]
Within one pop (engine.cpp `call_function`): the tensor hooks registered on the tensors
this node produced, in registration order, each receiving the previous one's result; then
`retain_grad`'s hook (always after them); then the node's pre-hooks; `apply`; then the
node's post-hooks with (grad_inputs, grad_outputs). A hook that returns a value replaces
what it was given. For AccumulateGrad the tensor hooks are its leaf's, and the
post-accumulate-grad hooks run inside `apply`, right after `.grad` is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from engine import errors
from engine.accumulate_grad import AccumulateGrad
from engine.errors import TorchError
from engine.events import HookCall
from engine.node import Node, RemovableHandle
from engine.tensor import Tensor

# Note [Hook lists made when needed]
# A node's four hook containers and a tensor's two hook lists start as None and are made
# by the first registration (a RemovableHandle keeps the list it was made with). Nearly
# no node or tensor ever gets a hook, and the engine makes one per op and pop; the
# checks at each pop (`call_*_hooks`) return at once when there are none, without copying
# the gradients. MEASURED with Note [Plain zip] in engine/input_buffer.py (compiled, best
# of 7): bench/programs.py's 10,000-step recurrence 517 -> 453 ms a trace, its MLP of 200
# steps 57.6 -> 53.2 ms.


class Hook:
    """A hook function with the name PyTorch's messages give it (`'<lambda>'`, `'clip'`)."""

    __slots__ = ("fn", "name")

    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        self.fn = fn
        self.name = name

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)


def hook_name(hook: Any) -> str:
    return hook.name if isinstance(hook, Hook) else str(getattr(hook, "__name__", "hook"))


def register_hook(t: Tensor, hook: Callable[[Tensor], Any]) -> RemovableHandle:
    """`t.register_hook(fn)`: fn(grad) runs when t's gradient is computed; a tensor it
    returns replaces the gradient."""
    if not t.requires_grad:
        raise TorchError("RuntimeError", errors.HOOK_NO_GRAD)
    node = t.grad_fn
    if node is None:
        hooks = t.hooks = t.hooks or []
    else:
        node.tensor_pre_hooks = node.tensor_pre_hooks or {}
        hooks = node.tensor_pre_hooks.setdefault(t.output_nr, [])
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
        if t.grad is None and grad.ctx.grad_mode and grad.requires_grad:
            from engine.functions.shape import clone

            t.grad = clone(grad)          # recorded under create_graph: CloneBackward0
        elif t.grad is None:
            t.grad = Tensor(np.array(grad.data, copy=True), grad.ctx)
        else:
            t.grad = t.grad + grad

    node = t.grad_fn
    node.retains_grad_hooks = node.retains_grad_hooks or {}
    node.retains_grad_hooks[t.output_nr] = retain
    t.retains_grad = True


def register_post_accumulate_grad_hook(t: Tensor, hook: Callable[[Tensor], Any]
                                       ) -> RemovableHandle:
    """A leaf's hook that runs after AccumulateGrad wrote `.grad`, given the leaf."""
    if not t.requires_grad:
        raise TorchError("RuntimeError", errors.POST_ACCUMULATE_NO_GRAD)
    if not t.is_leaf:
        raise TorchError("RuntimeError", errors.POST_ACCUMULATE_NON_LEAF)
    hooks = t.post_accumulate_hooks = t.post_accumulate_hooks or []
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def register_prehook(node: Node, hook: Callable[[tuple[Any, ...]], Any]) -> RemovableHandle:
    """`grad_fn.register_prehook(fn)`: fn(grad_outputs) before the node runs."""
    hooks = node.pre_hooks = node.pre_hooks or []
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def register_node_hook(node: Node, hook: Callable[[tuple[Any, ...], tuple[Any, ...]], Any]
                       ) -> RemovableHandle:
    """`grad_fn.register_hook(fn)`: fn(grad_inputs, grad_outputs) after it ran."""
    hooks = node.post_hooks = node.post_hooks or []
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def call_tensor_pre_hooks(node: Node, grads: list[Tensor | None],
                          hooks: list[HookCall]) -> list[Tensor | None]:
    """The tensor hooks on what this node produced, then retain_grad's."""
    if type(node) is AccumulateGrad:
        leaf_hooks = node.variable.hooks
        if not leaf_hooks:
            return grads              # (most pops have no hooks: nothing to copy)
        tensor_hooks = {0: leaf_hooks}
        label: dict[int, str] = {0: node.variable.name or "leaf"}
    else:
        if not node.tensor_pre_hooks and not node.retains_grad_hooks:
            return grads
        tensor_hooks = node.tensor_pre_hooks or {}
        label = {i: node.bound_to or node.type_name for i in tensor_hooks}
    grads = list(grads)
    for i, hook_list in tensor_hooks.items():
        for hook in list(hook_list):
            grad = grads[i]
            if grad is None:
                continue
            result = hook(grad)
            if result is not None:
                result = _hook_result(result, grad, hook_name(hook))
            hooks.append(HookCall("tensor", label[i], grad.data,
                                  None if result is None else result.data,
                                  result is not None))
            if result is not None:
                grads[i] = result
    for i, retain in (node.retains_grad_hooks or {}).items():
        grad = grads[i]
        if grad is not None:
            retain(grad)
            hooks.append(HookCall("retain_grad", node.bound_to or node.type_name,
                                  grad.data, None, False))
    return grads


def call_pre_hooks(node: Node, grads: list[Tensor | None],
                   hooks: list[HookCall]) -> list[Tensor | None]:
    """The node's pre-hooks, each seeing (and able to replace) its incoming gradients."""
    if not node.pre_hooks:
        return grads
    for hook in list(node.pre_hooks):
        result = hook(tuple(grads))
        hooks.append(HookCall("pre", node.type_name, _datas(grads),
                              None if result is None else _datas(list(result)),
                              result is not None))
        if result is not None:
            grads = _hook_results(list(result), grads, hook_name(hook))
    return grads


def call_post_hooks(node: Node, outputs: list[Tensor | None], grads: list[Tensor | None],
                    hooks: list[HookCall]) -> list[Tensor | None]:
    """The node's post-hooks with (grad_inputs, grad_outputs); a result replaces outputs."""
    if not node.post_hooks:
        return outputs
    for post in list(node.post_hooks):
        result = post(tuple(outputs), tuple(grads))
        hooks.append(HookCall("post", node.type_name, _datas(outputs),
                              None if result is None else _datas(list(result)),
                              result is not None))
        if result is not None:
            outputs = _hook_results(list(result), outputs, hook_name(post))
    return outputs


def _datas(values: list[Tensor | None] | tuple[Any, ...]) -> list[Any]:
    return [v.data if isinstance(v, Tensor) else None for v in values]


def _hook_result(result: Any, grad: Tensor | None, name: str) -> Tensor:
    """python_hook.cpp `check_single_result`: a tensor, of the same dtype and size."""
    if not isinstance(result, Tensor):
        raise TorchError("TypeError", errors.hook_returned(type(result).__name__))
    if grad is not None:
        if result.dtype is not grad.dtype:
            raise TorchError("RuntimeError",
                             errors.hook_changed_type(name, grad.dtype, result.dtype))
        if result.shape != grad.shape:
            raise TorchError("RuntimeError", errors.hook_changed_size(name))
    return result


def _hook_results(result: list[Any], old: list[Tensor | None],
                  name: str) -> list[Tensor | None]:
    if len(result) != len(old):
        raise TorchError("RuntimeError", errors.hook_count(name, len(old), len(result)))
    return [None if r is None else _hook_result(r, g, name)
            for r, g in zip(result, old, strict=True)]
