"""Node: one backward function of the graph, with its edges and saved values.

Every op that records creates one Node, which takes the next sequence number
(node.h: `Node(edge_list&&)` calls `sequence_number::get_and_increment()`).
`next_edges` lists, in argument order, where each input's gradient goes; an input that
needs no gradient has the edge None, as `next_functions` shows `(None, 0)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from engine import errors
from engine.context import UINT64_MAX

if TYPE_CHECKING:
    from engine.context import AutogradContext


@dataclass(slots=True)
class Edge:
    """`(function, input_nr)`: the node a gradient flows to. Lab nodes have one input."""

    function: Node
    input_nr: int = 0

    def __init__(self, function: Node, input_nr: int = 0) -> None:
        # Spelled out: a dataclass's own `__init__` stays interpreted in the compiled build
        # (five times the cost), and there is an edge for nearly every input of every op.
        self.function = function
        self.input_nr = input_nr


class SavedVariable:
    """A value saved for backward. Tensors are freed after the node runs; numbers stay.

    Reading a freed tensor raises PyTorch's "backward through the graph a second time".
    An output of the node that saves it (tanh's `result`) is kept without its grad_fn,
    which would be that very node, as saved_variable.cpp does: node -> saved -> tensor ->
    node would be a cycle, and a node that backward never reaches (and so never frees)
    would wait for the cycle collector with everything it points to. `unpack(saved_for)`
    gives the output its grad_fn back.
    """

    __slots__ = ("value", "is_tensor", "is_output", "released")

    def __init__(self, value: Any, is_tensor: bool, is_output: bool = False) -> None:
        self.value = Tensor(value.data, value.ctx) if is_output else value
        self.is_tensor = is_tensor
        self.is_output = is_output
        self.released = False

    def unpack(self, saved_for: Node | None = None) -> Any:
        if self.released:
            raise errors.TorchError("RuntimeError", errors.FREED_GRAPH)
        if self.is_output and saved_for is not None:
            return Tensor(self.value.data, self.value.ctx, grad_fn=saved_for)
        return self.value


class Node:
    """A backward function. Subclasses give `name`, save values and implement `apply`."""

    name: ClassVar[str] = "Node"
    __slots__ = ("ctx", "id", "sequence_nr", "next_edges", "saved", "input_shape",
                 "input_dtype", "bound_to")

    def __init__(self, ctx: AutogradContext, inputs: list[Tensor | None],
                 sequence_nr: int | None = None) -> None:
        self.ctx = ctx
        self.sequence_nr = ctx.take_sequence_nr() if sequence_nr is None else sequence_nr
        self.id = ctx.take_node_id()
        self.next_edges: list[Edge | None] = [gradient_edge(t) for t in inputs]
        self.saved: dict[str, SavedVariable] = {}
        # input_metadata(0): the shape and dtype of the tensor this node's output is.
        self.input_shape: tuple[int, ...] = ()
        self.input_dtype: Any = None
        self.bound_to: str | None = None      # the program variable its output was bound to

    def save(self, name: str, value: Any) -> None:
        """Save a value for backward (`_saved_<name>`): a tensor, a number or sizes."""
        if isinstance(value, Tensor):
            self.saved[name] = SavedVariable(value, True, value.grad_fn is self)
        else:
            self.saved[name] = SavedVariable(value, False, False)

    def saved_value(self, name: str) -> Any:
        """One saved value, raising the freed-graph error if it was released."""
        return self.saved[name].unpack(self)

    def needs_input_grad(self, i: int) -> bool:
        """`task_should_compute_output(i)`: input i has somewhere to send its gradient."""
        return self.next_edges[i] is not None

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        """Gradients for each input (None where no edge), from the output's gradient."""
        raise NotImplementedError

    def unpack_saved(self) -> dict[str, Any]:
        """Every saved value, raising the freed-graph error if a tensor was released."""
        return {name: var.unpack(self) for name, var in self.saved.items()}

    def release_variables(self) -> list[str]:
        """Free saved tensors (`release_variables()`); returns the names freed."""
        freed = []
        for name, var in self.saved.items():
            if var.is_tensor and not var.released:
                var.released = True
                var.value = None
                freed.append(name)
        return freed

    def next_functions(self) -> list[tuple[Node | None, int]]:
        return [(e.function, e.input_nr) if e else (None, 0) for e in self.next_edges]

    def __repr__(self) -> str:
        seq = "MAX" if self.sequence_nr == UINT64_MAX else self.sequence_nr
        return f"<{self.name} #{seq}>"


def gradient_edge(t: Tensor | None) -> Edge | None:
    """Where t's gradient goes: its grad_fn, its AccumulateGrad if a leaf, else nowhere."""
    if t is None or not t.requires_grad:
        return None
    if t.grad_fn is not None:
        return Edge(t.grad_fn)
    return Edge(t.grad_accumulator())


from engine.tensor import Tensor  # noqa: E402  (tensor.py's ops need Node first)
