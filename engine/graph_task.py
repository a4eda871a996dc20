"""GraphTask: one backward call, run the way engine.cpp runs it.

1. `compute_dependencies`: walk `next_edges` from the root with a stack and a seen-set
   and count, for every node, the edges pointing at it.
2. Push the root with its gradient onto the ready queue.
3. Pop the node with the largest sequence number (see Note [Ready queue order]), run it,
   free its saved tensors unless the graph is kept, then for each output i = 0..n-1 with
   an edge: decrement the next node's count, add the gradient into its InputBuffer, and
   push it the moment its count reaches 0.

`execute` is a generator: it yields one event per pop as it goes, so a caller can stream
them. Nothing here recurses over the graph; depth is limited only by memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from engine.accumulate_grad import AccumulateGrad
from engine.errors import TorchError
from engine.events import (
    DependenciesCounted,
    Event,
    GradientSent,
    GraphRecorded,
    NodeInfo,
    NodePopped,
    SavedInfo,
)
from engine.input_buffer import InputBuffer, validate_output
from engine.node import Node
from engine.ready_queue import ReadyQueue
from engine.tensor import NUMPY_SCALAR, Tensor


class GraphTask:
    """The state of one backward call: dependencies, waiting buffers, ready queue."""

    def __init__(self, root: Node, root_grad: Tensor, keep_graph: bool,
                 create_graph: bool) -> None:
        self.root = root
        self.root_grad = root_grad
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        self.dependencies: dict[Node, int] = {}
        self.not_ready: dict[Node, InputBuffer] = {}
        self.ready_queue: ReadyQueue[tuple[Node, InputBuffer]] = ReadyQueue()

    def compute_dependencies(self) -> list[Node]:
        """Count incoming edges for every node reachable from the root; returns the nodes
        in the order the walk first saw them."""
        seen = {self.root}
        order = [self.root]
        stack = [self.root]
        dependencies = self.dependencies
        while stack:
            fn = stack.pop()
            for edge in fn.next_edges:
                if edge is None:
                    continue
                nxt = edge.function
                dependencies[nxt] = dependencies.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    order.append(nxt)
                    stack.append(nxt)
        return order

    def execute(self) -> Iterator[Event]:
        """Run backward, yielding the graph, the dependency counts and then every pop.

        A node that raises (its saved tensors were freed) still yields its pop, with the
        error, and then the error propagates: nothing after it runs, as in PyTorch.
        """
        nodes = self.compute_dependencies()
        yield GraphRecorded(self.root.id, [describe(n) for n in nodes])
        yield DependenciesCounted({n.id: self.dependencies.get(n, 0) for n in nodes})
        ctx = self.root.ctx
        saved_mode = ctx.grad_mode
        ctx.grad_mode = self.create_graph       # backward runs in grad mode only then
        try:
            buffer = InputBuffer()
            buffer.add(self.root_grad)
            self.ready_queue.push(self.root.sequence_nr, (self.root, buffer), self.root.id)
            while self.ready_queue:
                _, (node, inputs) = self.ready_queue.pop()
                popped = self.evaluate_function(node, inputs)
                yield popped
                if popped.error is not None:
                    raise popped.error
        finally:
            ctx.grad_mode = saved_mode

    def evaluate_function(self, node: Node, inputs: InputBuffer) -> NodePopped:
        """Run one node and hand its gradients on; the event says what happened."""
        grad = inputs.total
        assert grad is not None
        leaf_tensor = node.variable if type(node) is AccumulateGrad else None
        before = _grad_values(leaf_tensor)
        leaf = leaf_tensor.name if leaf_tensor is not None else None
        try:
            outputs = node.apply([grad])
        except TorchError as error:
            return NodePopped(node.id, node.name, node.sequence_nr, leaf, grad.data,
                              queue=self._queue(), grad_before=before, error=error)
        released = [] if self.keep_graph else node.release_variables()
        sent: list[GradientSent] = []
        changed: dict[int, int] = {}
        ready: list[int] = []
        dependencies, not_ready = self.dependencies, self.not_ready
        for i, edge in enumerate(node.next_edges):
            if edge is None:
                continue
            nxt = edge.function
            out = validate_output(outputs[i], nxt)   # type: ignore[arg-type]
            sent.append(GradientSent(i, nxt.id, out.data))
            count = changed[nxt.id] = dependencies[nxt] - 1
            dependencies[nxt] = count
            buffer = not_ready.pop(nxt, None)
            if buffer is None:
                buffer = InputBuffer()
            buffer.add(out)
            if count == 0:
                self.ready_queue.push(nxt.sequence_nr, (nxt, buffer), nxt.id)
                ready.append(nxt.id)
            else:
                not_ready[nxt] = buffer
        after = _grad_values(leaf_tensor)
        return NodePopped(node.id, node.name, node.sequence_nr, leaf, grad.data, sent,
                          changed, ready, self._queue(), released, before, after)

    def _queue(self) -> list[int]:
        return self.ready_queue.in_pop_order()


def _grad_values(leaf: Tensor | None) -> Any:
    return None if leaf is None or leaf.grad is None else leaf.grad.data


def describe(node: Node) -> NodeInfo:
    """A snapshot of a node for the graph view."""
    leaf = node.variable if type(node) is AccumulateGrad else None
    return NodeInfo(
        id=node.id,
        name=node.name,
        seq=node.sequence_nr,
        next_ids=[e.function.id if e else None for e in node.next_edges],
        bound_to=node.bound_to,
        leaf=leaf.name if leaf is not None else None,
        leaf_value=leaf.data if leaf is not None else None,
        shape=node.input_shape,
        saved=[SavedInfo(name, _saved_value(var.value), var.is_tensor, var.released)
               for name, var in node.saved.items()],
    )


def _saved_value(value: object) -> object:
    if isinstance(value, Tensor):
        return value.data
    if isinstance(value, NUMPY_SCALAR):
        return value.item()
    return value
