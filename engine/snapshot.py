"""What the views see of a node: a snapshot of it as the graph shows it (NodeInfo)."""

from __future__ import annotations

from engine.accumulate_grad import AccumulateGrad
from engine.custom_function import FunctionNode
from engine.events import NodeInfo, SavedInfo
from engine.node import Node, SavedVariable
from engine.tensor import Tensor


def step_name(node: Node) -> str:
    """The node's name as the contract writes it: AccumulateGrad without its namespace."""
    return "AccumulateGrad" if type(node) is AccumulateGrad else node.node_name


def describe(node: Node) -> NodeInfo:
    """A snapshot of a node for the graph view."""
    leaf = node.variable if type(node) is AccumulateGrad else None
    return NodeInfo(
        id=node.id,
        name=step_name(node),
        seq=node.sequence_nr,
        next_ids=[e.function.id if e else None for e in node.next_edges],
        bound_to=node.bound_to,
        leaf=leaf.name if leaf is not None else None,
        leaf_value=leaf.data.copy() if leaf is not None else None,
        shape=node.input_metadata[0].shape if node.input_metadata else (),
        saved=[SavedInfo(name, _saved_value(var.value), var.is_tensor, var.released,
                         var.saved_version, _version_now(var))
               for name, var in node.saved.items() if not name.startswith("_")],
        line=node.line,
        scope=node.scope,
        code=node.backward_lines if isinstance(node, FunctionNode) else None,
    )


def _version_now(var: SavedVariable) -> int:
    counter = var.version_counter
    return var.saved_version if counter is None else int(counter.version)


def _saved_value(value: object) -> object:
    if isinstance(value, Tensor):
        return value.data
    return value
