"""`Tensor.backward(gradient, retain_graph, create_graph)`, from Python down to the engine.

The checks come in PyTorch's order (torch/autograd/__init__.py): `gradient` is made into
a tuple, `_make_grads` checks shapes or makes the ones seed, `retain_graph` defaults to
`create_graph`, and only then does the C++ side look for the root's grad_fn.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from engine import errors
from engine.errors import TorchError
from engine.events import Event
from engine.graph_task import GraphTask
from engine.input_buffer import validate_output
from engine.node import gradient_edge
from engine.tensor import FLOAT32, Tensor, as_values


def backward(output: Any, gradient: Any = None, retain_graph: Any = None,
             create_graph: Any = False) -> Iterator[Event]:
    """Run `output.backward(...)`, yielding the engine's events as it goes."""
    if not isinstance(output, Tensor):
        raise errors.no_attribute(output, "backward")
    gradients = _tensor_or_tensors_to_tuple(gradient)
    grad = _make_grad(output, gradients[0]) if gradients else None
    keep_graph = bool(create_graph) if retain_graph is None else bool(retain_graph)
    if not gradients:
        raise TorchError("RuntimeError", errors.NO_GRADIENTS)
    edge = gradient_edge(output)
    if edge is None or grad is None:
        raise TorchError("RuntimeError", errors.NO_GRAD_FN)
    root_grad = validate_output(grad, edge.function)
    task = GraphTask(edge.function, root_grad, keep_graph, bool(create_graph))
    yield from task.execute()


def _tensor_or_tensors_to_tuple(gradient: Any) -> tuple[Any, ...]:
    """A tensor or None stands for itself; anything else goes through `tuple()`, so a
    list gives its elements (only the first is used) and a number is not iterable."""
    if gradient is None or isinstance(gradient, Tensor):
        return (gradient,)
    if isinstance(gradient, (list, tuple)):
        return tuple(gradient)
    raise errors.not_iterable(gradient)


def _make_grad(output: Tensor, gradient: Any) -> Tensor | None:
    """`_make_grads` for one output: check a given gradient, or make the ones seed."""
    if isinstance(gradient, Tensor):
        if gradient.shape != output.shape:
            raise errors.shape_mismatch(gradient.shape, output.shape)
        return gradient
    if gradient is not None:
        raise errors.bad_gradient_type(gradient)
    if not output.requires_grad:
        return None
    if output.numel() != 1:
        raise TorchError("RuntimeError", errors.NON_SCALAR_OUTPUT)
    return Tensor(as_values(np.ones(output.shape, dtype=FLOAT32), FLOAT32), output.ctx)
