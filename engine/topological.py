"""The other engine (seed 000): a topological order, then one single-threaded pass.

No dependency counts and no ready queue. `topo_order` walks `next_edges` once, depth
first, and lists the nodes in reverse post-order: a node comes before everything it
reaches, so by the time a node runs, every node that sends it a gradient has run. Then,
per node in that order: validate versions (the saved values' checks as `apply` reads
them), apply, release the saved values unless the graph is kept. Gradients bound for the
same node are summed in a pending map (one InputBuffer per node) until its turn; the first
write to a leaf's `.grad` moves the gradient in, later ones accumulate (AccumulateGrad).

The pieces are the ready-queue engine's own (GraphTask's hooks, `apply`, validate_outputs,
AccumulateGrad, autograd.grad's exec_info and captures), so only the order differs, and
the events are the same types: a pass here looks like a pass there, step for step.
Where the seed says nothing, it does as PyTorch does; where it speaks, as it says:
`create_graph=True` forces `retain_graph`.

# Note [Topological order]
A reverse DFS post-order with the edges taken first to last: the DFS finishes the first
edge's subtree first, so in the reversed list that subtree runs last. micrograd's
`backward` (build_topo over `_prev`, then `reversed(topo)`) is the same idea, written
recursively; here the walk keeps its own stack, so a chain of 100,000 nodes is fine.
PyTorch's queue instead runs, among the nodes whose counts reached 0, the one with the
largest sequence number (Note [Ready queue order]). Both are topological orders; they
agree on a chain and part wherever several nodes could go next (two leaves of one
product, two branches of a sum), which in the lab's corpus is about a third of the passes.
"""

from __future__ import annotations

from collections.abc import Iterator

from engine.events import DependenciesCounted, Event, GradientSent, GraphRecorded
from engine.graph_task import GraphRoot, GraphTask
from engine.input_buffer import InputBuffer
from engine.node import Edge, Node
from engine.snapshot import describe
from engine.tensor import Tensor


def topo_order(root: Node) -> list[Node]:
    """Every node reachable from `root`, each once, in reverse DFS post-order over
    `next_edges` (see Note [Topological order]). Iterative: no recursion over the graph."""
    post: list[Node] = []
    seen = {root}
    stack: list[tuple[Node, Iterator[Edge | None]]] = [(root, iter(root.next_edges))]
    while stack:
        node, edges = stack[-1]
        for edge in edges:
            if edge is not None and edge.function not in seen:
                seen.add(edge.function)
                stack.append((edge.function, iter(edge.function.next_edges)))
                break
        else:                         # every edge followed: the node is finished
            stack.pop()
            post.append(node)
    post.reverse()
    return post


class TopologicalTask(GraphTask):
    """One backward call run as seed 000's engine runs it (module docstring)."""

    def __init__(self, roots: list[Edge], root_grads: list[Tensor], keep_graph: bool,
                 create_graph: bool, inputs: list[Edge] | None = None,
                 accumulate_grad: bool = True) -> None:
        super().__init__(roots, root_grads, keep_graph or create_graph, create_graph,
                         inputs, accumulate_grad)
        self.pending: dict[Node, InputBuffer] = {}

    def execute(self) -> Iterator[Event]:
        """The graph (the same walk, so the same node list, as the ready-queue engine's),
        no counts, then one event per node run, in `topo_order`."""
        nodes = self.compute_dependencies()     # only for the graph's node list
        yield GraphRecorded(self.root.id, [describe(n) for n in nodes])
        yield DependenciesCounted({})           # this engine counts nothing
        ctx = self.root.ctx
        saved_mode = ctx.grad_mode
        ctx.grad_mode = self.create_graph
        try:
            buffer = InputBuffer(self.root.num_outputs)
            input_nr, grad = self.root_inputs
            if not isinstance(self.root, GraphRoot):
                buffer.add(input_nr, grad)
            self.pending[self.root] = buffer
            for node in topo_order(self.root):
                waiting = self.pending.pop(node, None)
                if waiting is None:           # nothing was sent to it: it does not run
                    continue
                popped = self.evaluate_function(node, waiting)
                if not isinstance(node, GraphRoot):
                    yield popped
                if popped.error is not None:
                    raise popped.error
        finally:
            ctx.grad_mode = saved_mode

    def send_outputs(self, node: Node, outputs: list[Tensor | None]
                     ) -> tuple[list[GradientSent], dict[int, int], list[int]]:
        """Each output's gradient into the pending map, summed with what its node already
        has; no counts change and nothing becomes ready (there is no queue)."""
        sent: list[GradientSent] = []
        for i, edge in enumerate(node.next_edges):
            if edge is None:
                continue
            nxt = edge.function
            if self.exec_info:
                info = self.exec_info.get(nxt)
                if info is None or not info.should_execute():
                    continue
            out = outputs[i]
            if out is not None:
                sent.append(GradientSent(i, nxt.id, out.data))
            buffer = self.pending.get(nxt)
            if buffer is None:
                buffer = self.pending[nxt] = InputBuffer(nxt.num_outputs)
            buffer.add(edge.input_nr, out)
        return sent, {}, []

    def _queue(self) -> list[int]:
        return []
