"""Custom `torch.autograd.Function`s: the node a user's class records, and `apply`.

`MyFn.apply(*args)` (torch/autograd/function.py, python_function.cpp): one node is made
first, and takes a sequence number on every call, even when nothing needs grad and even
under no_grad. It is also the `ctx` that forward and backward receive. Forward runs with
grad mode off, so its ops record nothing; its tensor outputs get the node as grad_fn when
grad mode is on and some tensor argument requires grad. Only tensor arguments get edges.
The node is named after the class: `MyFnBackward`.

Its backward gets one gradient per output (zeros where none arrived), must return one
value per argument of forward (None for the non-tensors), and runs with grad mode on only
under create_graph, like every backward formula.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from engine import errors
from engine.context import UINT64_MAX
from engine.errors import TorchError
from engine.node import InputMetadata, Node, SavedVariable, gradient_edge
from engine.tensor import Tensor
from engine.views import IN_CUSTOM_FUNCTION, make_view, set_grad_fn

Forward = Callable[["FunctionNode", list[Any]], Any]
Backward = Callable[["FunctionNode", list[Tensor]], Any]


class FunctionNode(Node):
    """`BackwardCFunction`: a custom Function's node and its ctx."""

    name = "CustomFunctionBackward"
    materializes_own_grads = True
    keeps_unneeded_grads = True
    __slots__ = ("function", "backward_fn", "arguments", "attributes", "to_save",
                 "input_needs_grad", "materialize_grads", "non_differentiable", "dirty",
                 "backward_lines")

    def __init__(self, function: str, args: list[Any], backward: Backward,
                 ctx_run: Any) -> None:
        tensors: list[Tensor | None] = [a for a in args if isinstance(a, Tensor)]
        super().__init__(ctx_run, tensors)
        self.function = function
        self.backward_fn = backward
        self.arguments = [isinstance(a, Tensor) for a in args]
        self.attributes: dict[str, Any] = {}
        self.to_save: tuple[Any, ...] = ()
        self.input_needs_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        self.materialize_grads = True
        self.non_differentiable: list[Tensor] = []
        self.dirty: list[Tensor] = []          # ctx.mark_dirty(...)
        self.backward_lines: tuple[int, int] | None = None   # the program's backward()

    @property
    def node_name(self) -> str:
        return f"{self.function}Backward"

    @property
    def qualified_name(self) -> str:
        """What the node's repr shows: `torch.autograd.function.MyFnBackward`."""
        return f"torch.autograd.function.{self.node_name}"

    def save_for_backward(self, tensors: tuple[Any, ...]) -> None:
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TorchError("TypeError", errors.SAVE_FOR_BACKWARD_TYPE)
        self.to_save = tensors

    def saved_tensors(self) -> tuple[Any, ...]:
        """`ctx.saved_tensors`: unpacked (freed after backward unless the graph is kept)."""
        values = []
        for i in range(len(self.to_save)):
            var = self.saved.get(f"saved_tensors[{i}]")
            values.append(None if var is None else var.unpack(self))
        return tuple(values)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        inputs: list[Tensor] = []
        for g, meta in zip(grads, self.input_metadata):  # noqa: B905 (Note [Plain zip])
            if g is None and self.materialize_grads and meta.dtype is not None:
                g = Tensor(np.zeros(meta.shape, dtype=meta.dtype.numpy), self.ctx)
            inputs.append(g)  # type: ignore[arg-type]
        returned = self.backward_fn(self, inputs)
        values = list(returned) if isinstance(returned, tuple) else [returned]
        if all(v is None for v in values[len(self.arguments):]):
            values = values[:len(self.arguments)]      # PyNode::apply drops extra Nones
        if len(values) != len(self.arguments):
            raise TorchError("RuntimeError", errors.wrong_number_of_gradients(
                self.node_name, len(self.arguments), len(values)))
        out: list[Tensor | None] = []
        for position, (value, is_tensor) in enumerate(zip(values, self.arguments,
                                                          strict=True), start=1):
            if not is_tensor:
                if value is not None:
                    raise TorchError("RuntimeError", errors.grad_for_non_tensor(
                        self.node_name, position))
                continue
            if value is not None and not isinstance(value, Tensor):
                raise TorchError("RuntimeError", errors.custom_backward_type(
                    self.node_name, type(value).__name__))
            out.append(value)
        return out


def apply(ctx_run: Any, function: str, args: list[Any], forward: Forward,
          backward: Backward) -> Any:
    """`Function.apply(*args)`: see the module's docstring."""
    node = FunctionNode(function, args, backward, ctx_run)
    mode = ctx_run.grad_mode
    ctx_run.grad_mode = False
    try:
        result = forward(node, args)
    finally:
        ctx_run.grad_mode = mode
    differentiable = mode and any(isinstance(a, Tensor) and a.requires_grad for a in args)
    outputs = list(result) if isinstance(result, tuple) else [result]
    wrapped: list[Any] = []
    metadata: list[InputMetadata] = []
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):     # backward still gets a gradient for it: None
            wrapped.append(out)
            metadata.append(InputMetadata((), None))
            continue
        non_differentiable = any(out is n for n in node.non_differentiable)
        if any(out is d for d in node.dirty):       # changed in place: the same tensor,
            out.bump_version()                      # its history rebased on this node
            if differentiable and out.requires_grad and out.grad_fn is None:
                raise TorchError("RuntimeError", errors.LEAF_MARKED_DIRTY)
        elif any(out is a for a in args):           # an input returned: a new alias
            source, out = out, Tensor(out.data, out.ctx)        # (`view_as`, under no_grad)
            mode, ctx_run.grad_mode = ctx_run.grad_mode, False
            make_view(out, source)
            ctx_run.grad_mode = mode
        metadata.append(InputMetadata(out.shape, out.dtype))
        if differentiable and out.is_floating_point and not non_differentiable:
            if any(out is d for d in node.dirty):   # rebase_history: a retain_grad() moves
                set_grad_fn(out, node, i)
            else:
                out.grad_fn = node
                out.output_nr = i
                out.requires_grad = True
            if out.base is not None:                # a view it returned (_wrap_outputs)
                out.creation_meta = IN_CUSTOM_FUNCTION
        wrapped.append(out)
    node.input_metadata = metadata
    if differentiable:
        for i, t in enumerate(node.to_save):
            if t is not None:
                is_output = any(t is w for w in wrapped)
                node.saved[f"saved_tensors[{i}]"] = SavedVariable(t, True, is_output)
    else:
        node.next_edges = [gradient_edge(None) for _ in node.next_edges]
    return tuple(wrapped) if isinstance(result, tuple) else wrapped[0]


class ErrorNode(Node):
    """`torch::autograd::Error`: the node DelayedError gives its outputs; it raises when
    backward reaches it. Like AccumulateGrad it takes no sequence number (basic_ops.h)."""

    name = "torch::autograd::Error"
    __slots__ = ()

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        raise TorchError("RuntimeError", errors.ONCE_DIFFERENTIABLE)


def delayed_error(ctx_run: Any, result: Any) -> Any:
    """@once_differentiable's backward under create_graph, given gradients that require
    grad (torch/autograd/function.py): each tensor it returned is detached into a leaf
    that requires grad, and DelayedError (a node of its own, one sequence number) gives
    them one Error node, so that differentiating them again raises."""
    values = list(result) if isinstance(result, tuple) else [result]
    ctx_run.take_sequence_nr()                       # DelayedError itself
    aliases = [Tensor(v.data, v.ctx, requires_grad=True, base=v) if isinstance(v, Tensor)
               else None for v in values]
    node = ErrorNode(ctx_run, aliases, sequence_nr=UINT64_MAX)
    out = [Tensor(a.data, a.ctx, grad_fn=node, output_nr=i) if a is not None else v
           for i, (a, v) in enumerate(zip(aliases, values, strict=True))]
    node.input_metadata = [InputMetadata(a.shape, a.dtype) for a in aliases if a is not None]
    return tuple(out) if isinstance(result, tuple) else out[0]
