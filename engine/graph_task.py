"""GraphTask: one backward call, run the way engine.cpp runs it.

1. `compute_dependencies`: walk `next_edges` from the root with a stack and a seen-set
   and count, for every node, the edges pointing at it.
2. For `autograd.grad` (and `backward(inputs=...)`), `init_to_execute` marks which nodes
   are needed: those from which an input's node can be reached. Others never run.
3. Push the root with its gradient onto the ready queue.
4. Pop the node with the largest sequence number (see Note [Ready queue order]) and
   `evaluate_function` it: hooks and `apply` (Note [Hook order] in hooks.py), `validate_outputs`,
   free its saved tensors unless the graph is kept, then for each output i = 0..n-1 with
   an edge: decrement the next node's count, add the gradient into its InputBuffer, and
   push it the moment its count reaches 0.

`execute` is a generator: it yields one event per pop as it goes, so a caller can stream
them. Nothing here recurses over the graph; depth is limited only by memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from engine import errors
from engine.accumulate_grad import AccumulateGrad
from engine.errors import TorchError
from engine.events import (
    DependenciesCounted,
    Event,
    GradientSent,
    GraphRecorded,
    HookCall,
    NodePopped,
)
from engine.hooks import call_post_hooks, call_pre_hooks, call_tensor_pre_hooks
from engine.input_buffer import InputBuffer, validate_outputs
from engine.node import Edge, Node
from engine.ready_queue import ReadyQueue
from engine.snapshot import describe, step_name
from engine.tensor import Tensor


class GraphRoot(Node):
    """The root of a backward with several outputs: it hands each its gradient
    (basic_ops.h). It takes a sequence number, and is not a step of the pass."""

    name = "GraphRoot"
    __slots__ = ("outputs",)

    def __init__(self, edges: list[Edge], grads: list[Tensor]) -> None:
        ctx = grads[0].ctx
        super().__init__(ctx, [])
        self.next_edges = list(edges)
        self.outputs = grads

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return list(self.outputs)


class ExecInfo:
    """Which nodes run, and where gradients are captured, for `autograd.grad`."""

    __slots__ = ("needed", "captures")

    def __init__(self) -> None:
        self.needed = False
        self.captures: list[tuple[int, int]] = []      # (input_nr, output index)

    def should_execute(self) -> bool:
        return self.needed or bool(self.captures)


class GraphTask:
    """The state of one backward call: dependencies, waiting buffers, ready queue."""

    def __init__(self, roots: list[Edge], root_grads: list[Tensor], keep_graph: bool,
                 create_graph: bool, inputs: list[Edge] | None = None,
                 accumulate_grad: bool = True) -> None:
        if len(roots) == 1:
            self.root = roots[0].function
            self.root_inputs = (roots[0].input_nr, root_grads[0])
        else:
            self.root = GraphRoot(roots, root_grads)
            self.root_inputs = (0, root_grads[0])
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        self.accumulate_grad = accumulate_grad
        self.dependencies: dict[Node, int] = {}
        self.not_ready: dict[Node, InputBuffer] = {}
        self.ready_queue: ReadyQueue[tuple[Node, InputBuffer]] = ReadyQueue()
        self.exec_info: dict[Node, ExecInfo] = {}
        self.captured: list[Tensor | None] = []
        self.snapshots = True
        if inputs is not None:
            self.init_to_execute(inputs)

    # -- before running ------------------------------------------------------------------
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

    def init_to_execute(self, inputs: list[Edge]) -> None:
        """Mark the inputs (needed for `backward(inputs=)`, captured for `grad`), then
        every node from which a marked one can be reached, with an iterative DFS.

        The root is needed only by that rule too (PyTorch 2.13): `grad(x, x)` of a leaf,
        or `grad(y, z, allow_unused=True)` with z unreachable, pops the root, runs its
        tensor hooks and captures, but never applies it (no `.grad` write, no node hook)."""
        self.exec_info.setdefault(self.root, ExecInfo())
        for i, edge in enumerate(inputs):
            info = self.exec_info.setdefault(edge.function, ExecInfo())
            if self.accumulate_grad:
                info.needed = True
            else:
                info.captures.append((edge.input_nr, i))
        self.captured = [None] * len(inputs)
        visited: set[Node] = set()
        stack: list[tuple[Node, int]] = [(self.root, 0)]
        while stack:
            node, i = stack.pop()
            if i == 0:
                if node in visited:
                    continue
                visited.add(node)
            if i < len(node.next_edges):
                stack.append((node, i + 1))
                next_edge = node.next_edges[i]
                if next_edge is not None and next_edge.function not in visited:
                    stack.append((next_edge.function, 0))
                continue
            known = self.exec_info.get(node)
            if known is not None and known.needed:     # a captured input's node still runs
                continue                               # when it leads to another input
            if any(e is not None and e.function in self.exec_info
                   and self.exec_info[e.function].should_execute() for e in node.next_edges):
                self.exec_info.setdefault(node, ExecInfo()).needed = True

    # -- running ------------------------------------------------------------------------
    def execute(self) -> Iterator[Event]:
        """Run backward, yielding the graph, the dependency counts and then every pop.

        A node that raises (its saved tensors were freed) still yields its pop, with the
        error, and then the error propagates: nothing after it runs, as in PyTorch."""
        nodes = self.compute_dependencies()
        ctx = self.root.ctx
        self.snapshots = ctx.snapshots
        shown = nodes if self.snapshots else []        # Note [Summarised passes]
        yield GraphRecorded(self.root.id, [describe(n) for n in shown])
        yield DependenciesCounted({n.id: self.dependencies.get(n, 0) for n in shown})
        saved_mode = ctx.grad_mode
        ctx.grad_mode = self.create_graph           # backward runs in grad mode only then
        try:
            buffer = InputBuffer(self.root.num_outputs)
            input_nr, grad = self.root_inputs
            if not isinstance(self.root, GraphRoot):
                buffer.add(input_nr, grad)
            self.ready_queue.push(self.root.sequence_nr, (self.root, buffer), self.root.id)
            while self.ready_queue:
                _, (node, inputs) = self.ready_queue.pop()
                popped = self.evaluate_function(node, inputs)
                if not isinstance(node, GraphRoot):
                    yield popped
                if popped.error is not None:
                    raise popped.error
        finally:
            ctx.grad_mode = saved_mode

    def evaluate_function(self, node: Node, buffer: InputBuffer) -> NodePopped:
        """Run one node and hand its gradients on; the event says what happened."""
        hooks: list[HookCall] = []
        grads = buffer.values
        leaf_tensor = node.variable if type(node) is AccumulateGrad else None
        leaf = leaf_tensor.name if leaf_tensor is not None else None
        name = step_name(node)
        first = grads[0].data if grads and grads[0] is not None else None
        before = _grad_values(leaf_tensor) if self.snapshots else None
        info = self.exec_info.get(node) if self.exec_info else None
        if self.exec_info and (info is None or not info.needed):
            grads = call_tensor_pre_hooks(node, grads, hooks)
            for input_nr, index in (info.captures if info else []):
                self.captured[index] = grads[input_nr]
            return NodePopped(node.id, name, node.sequence_nr, leaf, first,
                              queue=self._queue(), hooks=hooks, ran=False)
        if info is not None:
            for input_nr, index in info.captures:
                self.captured[index] = grads[input_nr]
        try:
            grads = call_tensor_pre_hooks(node, grads, hooks)
        except TorchError as error:       # before the node's pre-hooks: not one of its steps
            return NodePopped(node.id, name, node.sequence_nr, leaf, first,
                              queue=self._queue(), error=error, hooks=hooks, ran=False)
        try:       # a node pre-hook that raises comes after the pop was seen (the step
            outputs = self.call_function(      # keeps it, as a recorder's own pre-hook does)
                node, call_pre_hooks(node, grads, hooks), hooks)
        except TorchError as error:
            return NodePopped(node.id, name, node.sequence_nr, leaf, first,
                              queue=self._queue(), grad_before=before, error=error,
                              hooks=hooks)
        released = [] if self.keep_graph else node.release_variables()
        sent, changed, ready = self.send_outputs(node, outputs)
        after = _grad_values(leaf_tensor) if self.snapshots else None
        return NodePopped(node.id, name, node.sequence_nr, leaf, first, sent, changed,
                          ready, self._queue(), released, before, after, hooks=hooks)

    def send_outputs(self, node: Node, outputs: list[Tensor | None]
                     ) -> tuple[list[GradientSent], dict[int, int], list[int]]:
        """For each output with an edge: decrement the next node's count, add the gradient
        into its InputBuffer, push it when the count reaches 0. Returns what was sent, the
        counts that changed and the nodes made ready (engine/topological.py has its own)."""
        sent: list[GradientSent] = []
        changed: dict[int, int] = {}
        ready: list[int] = []
        for i, edge in enumerate(node.next_edges):
            if edge is None:
                continue
            nxt = edge.function
            out = outputs[i]
            count = changed[nxt.id] = self.dependencies[nxt] - 1
            self.dependencies[nxt] = count
            buffer_next = self.not_ready.pop(nxt, None)
            if buffer_next is None:
                if self.exec_info:
                    nxt_info = self.exec_info.get(nxt)
                    if nxt_info is None or not nxt_info.should_execute():
                        continue
                buffer_next = InputBuffer(nxt.num_outputs)
            if out is not None:
                sent.append(GradientSent(i, nxt.id, out.data))
            buffer_next.add(edge.input_nr, out)
            if count == 0:
                self.ready_queue.push(nxt.sequence_nr, (nxt, buffer_next), nxt.id)
                ready.append(nxt.id)
            else:
                self.not_ready[nxt] = buffer_next
        return sent, changed, ready

    def call_function(self, node: Node, grads: list[Tensor | None],
                      hooks: list[HookCall]) -> list[Tensor | None]:
        """`apply` and the post-hooks, the pre-hooks having run (Note [Hook order])."""
        if all(g is None for g in grads) and type(node) is not GraphRoot:
            outputs: list[Tensor | None] = [None] * len(node.next_edges)
        else:
            ctx = node.ctx
            ctx.applying, ctx.exec_info, ctx.hook_calls = node, self.exec_info, hooks
            try:
                outputs = node.apply(_materialize(node, grads))
            finally:
                ctx.applying = ctx.exec_info = ctx.hook_calls = None
        if len(outputs) != len(node.next_edges):
            raise TorchError("RuntimeError", errors.wrong_number_of_gradients(
                node.node_name, len(node.next_edges), len(outputs)))
        return call_post_hooks(node, validate_outputs(node, outputs), grads, hooks)

    def _queue(self) -> list[int]:
        return self.ready_queue.in_pop_order() if self.snapshots else []


# Note [Summarised passes]
# A trace keeps the first max_full_passes passes step by step and only the pops of later
# ones (app/trace/pieces.py), so for those the snapshots above are made for nothing: the
# graph's nodes described (a copy of every leaf's values), the counts, the queue in pop
# order and two copies of `.grad` at every AccumulateGrad. The engine's work is the same
# either way. MEASURED on bench/programs.py's 1,000-step scalar loop (60 passes in full,
# 940 summarised), with Note [Imports at the top] in app/language/interpreter.py: the best
# process time of 8 compiled traces, 89 ms before both, 77 ms after.


def _materialize(node: Node, grads: list[Tensor | None]) -> list[Tensor | None]:
    """A node with several inputs gets zeros where no gradient arrived. A custom
    Function's node does its own (`ctx.set_materialize_grads(False)` keeps the Nones)."""
    if len(grads) <= 1 or all(g is not None for g in grads) or node.materializes_own_grads:
        return grads
    out: list[Tensor | None] = []
    for g, meta in zip(grads, node.input_metadata):  # noqa: B905 (Note [Plain zip])
        out.append(g if g is not None else Tensor(np.zeros(meta.shape, dtype=meta.dtype.numpy),
                                                  node.ctx))
    return out


def _grad_values(leaf: Tensor | None) -> Any:
    return None if leaf is None or leaf.grad is None else leaf.grad.data.copy()
