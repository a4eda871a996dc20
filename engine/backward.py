"""`Tensor.backward`, `torch.autograd.backward` and `torch.autograd.grad`, from Python down
to the engine.

The checks come in PyTorch's order (torch/autograd/__init__.py, then python_engine.cpp):
the gradients are made into a tuple, `_make_grads` checks their shapes or makes the ones
seed, `retain_graph` defaults to `create_graph`, and only then does the C++ side look for
each root's grad_fn. `grad` runs the engine with accumulate_grad off: it captures the
gradients at its inputs and runs no AccumulateGrad node.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from engine import errors, op_errors
from engine.errors import TorchError
from engine.events import Event
from engine.graph_task import GraphTask
from engine.node import Edge, Node, gradient_edge
from engine.tensor import Tensor, filled

CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this function, "
    "make sure to reset the .grad fields of your parameters to None after use to break the "
    "cycle and avoid the leak.")


def _as_tuple(values: Any, length: int) -> tuple[Any, ...]:
    """`_tensor_or_tensors_to_tuple`: None for every output, a tensor for itself, anything
    else through `tuple()` (so a number is not iterable)."""
    if values is None:
        return (None,) * length
    if isinstance(values, Tensor):
        return (values,)
    if isinstance(values, (list, tuple)):
        return tuple(values)
    raise op_errors.not_iterable(values)


def _outputs(tensors: Any) -> tuple[Any, ...]:
    if isinstance(tensors, Tensor):
        return (tensors,)
    if isinstance(tensors, (list, tuple)):
        return tuple(tensors)
    raise op_errors.not_iterable(tensors)


def make_grads(outputs: tuple[Any, ...], grads: tuple[Any, ...]) -> list[Tensor | None]:
    """`_make_grads`: a given gradient must have the output's shape; None becomes the ones
    seed for an output of one element that requires grad."""
    new: list[Tensor | None] = []
    for i, (out, grad) in enumerate(zip(outputs, grads)):  # noqa: B905 (Note [Plain zip])
        if not isinstance(out, Tensor):
            raise op_errors.no_attribute(out, "requires_grad")
        if isinstance(grad, Tensor):
            if grad.shape != out.shape:
                raise errors.shape_mismatch(grad.shape, out.shape, i)
            new.append(grad)
        elif grad is None:
            if out.requires_grad:
                if out.numel() != 1:
                    raise TorchError("RuntimeError", errors.NON_SCALAR_OUTPUT)
                if not out.is_floating_point:
                    raise TorchError("RuntimeError", errors.real_scalar_outputs(out.dtype))
                new.append(Tensor(filled(out.shape, 1, out.dtype.numpy), out.ctx))
            else:
                new.append(None)
        else:
            raise errors.bad_gradient_type(grad)
    return new


def _root_edges(outputs: tuple[Any, ...], grads: list[Tensor | None]
                ) -> tuple[list[Edge], list[Tensor]]:
    """python_engine.cpp: each output's grad_fn, or its accumulator for a leaf."""
    edges: list[Edge] = []
    root_grads: list[Tensor] = []
    for i, (out, grad) in enumerate(zip(outputs, grads)):  # noqa: B905 (Note [Plain zip])
        edge = gradient_edge(out)
        if edge is None:
            raise TorchError("RuntimeError", errors.no_grad_fn(i))
        edges.append(edge)
        assert grad is not None
        root_grads.append(_root_grad(grad, edge))
    return edges, root_grads


def _root_grad(grad: Tensor, edge: Edge) -> Tensor:
    """`validate_outputs` on a root's gradient: cast to the output's dtype."""
    meta = edge.function.input_metadata[edge.input_nr]
    if grad.dtype is not meta.dtype:
        from engine.functions.conversion import to_dtype

        return to_dtype(grad, meta.dtype)
    return grad


def _input_edges(inputs: tuple[Any, ...], accumulate_grad: bool) -> list[Edge]:
    """Where each input's gradient is taken: its grad_fn at its output, or a leaf's
    AccumulateGrad, or a new Identity node for a leaf never used (it takes a seq)."""
    edges: list[Edge] = []
    for t in inputs:
        if not isinstance(t, Tensor):
            raise errors.input_not_a_tensor(t)
        if not t.requires_grad:
            raise TorchError("RuntimeError", errors.INPUT_NO_GRAD)
        if accumulate_grad and not t.is_leaf:
            from engine.hooks import retain_grad

            retain_grad(t)
        # an unused leaf has no accumulator: PyTorch's edge goes to a new Identity (seq +1)
        edge = (Edge(Node(t.ctx, [])) if t.grad_fn is None and t._grad_accumulator is None
                else gradient_edge(t))
        assert edge is not None
        edges.append(edge)
    return edges


def _graph_task(edge: Edge) -> type[GraphTask]:
    """The run's scheduler (`ctx.scheduler`): PyTorch's ready queue, or seed 000's
    topological order (engine/topological.py)."""
    if edge.function.ctx.scheduler == "topological":
        from engine.topological import TopologicalTask

        return TopologicalTask
    return GraphTask


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: Any = None,
             create_graph: Any = False, inputs: Any = None) -> Iterator[Event]:
    """`torch.autograd.backward(...)`, yielding the engine's events as it goes."""
    inputs_tuple: tuple[Any, ...] = ()
    if inputs is not None:
        inputs_tuple = _outputs(inputs) if not isinstance(inputs, dict) else tuple(
            inputs.values())
        if not inputs_tuple:
            raise TorchError("RuntimeError", errors.EMPTY_INPUTS)
    outputs = _outputs(tensors)
    grads = make_grads(outputs, _as_tuple(grad_tensors, len(outputs)))
    if len(grads) != len(outputs):
        raise TorchError("RuntimeError", errors.tensors_and_gradients(len(outputs), len(grads)))
    keep_graph = bool(create_graph) if retain_graph is None else bool(retain_graph)
    if create_graph:
        outputs[0].ctx.warnings.append(CREATE_GRAPH_WARNING)
    edges, root_grads = _root_edges(outputs, grads)
    input_edges = _input_edges(inputs_tuple, True) if inputs_tuple else None
    task = _graph_task(edges[0])(edges, root_grads, keep_graph, bool(create_graph),
                                 input_edges, accumulate_grad=True)
    yield from task.execute()


class GradResult:
    """What `torch.autograd.grad` returns, filled in when its pass has run."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: tuple[Tensor | None, ...] = ()


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: Any = None,
         create_graph: Any = False, allow_unused: Any = None,
         materialize_grads: bool = False, result: GradResult | None = None
         ) -> Iterator[Event]:
    """`torch.autograd.grad(...)`: runs the engine, then puts the gradients captured at
    the inputs into `result.values` (a tuple in the order of `inputs`)."""
    if materialize_grads and allow_unused is False:
        raise TorchError("ValueError", errors.MATERIALIZE_ALLOW_UNUSED)
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = _outputs(outputs)
    inputs_tuple = _outputs(inputs) if not isinstance(inputs, dict) else tuple(inputs.values())
    if not inputs_tuple:
        raise TorchError("RuntimeError", errors.EMPTY_GRAD_INPUTS)
    grads = make_grads(outs, _as_tuple(grad_outputs, len(outs)))
    if len(grads) != len(outs):
        raise TorchError("RuntimeError", errors.grad_outputs_count(len(outs), len(grads)))
    keep_graph = bool(create_graph) if retain_graph is None else bool(retain_graph)
    edges, root_grads = _root_edges(outs, grads)
    input_edges = _input_edges(inputs_tuple, False)
    task = _graph_task(edges[0])(edges, root_grads, keep_graph, bool(create_graph),
                                 input_edges, accumulate_grad=False)
    yield from task.execute()
    values: list[Tensor | None] = []
    for i, captured in enumerate(task.captured):
        if captured is None and not allow_unused:
            raise TorchError("RuntimeError", errors.unused_input(i))
        if captured is None and materialize_grads:
            t = inputs_tuple[i]
            captured = Tensor(np.zeros(t.shape, dtype=t.dtype.numpy), t.ctx)
        values.append(captured)
    if result is not None:
        result.values = tuple(values)
