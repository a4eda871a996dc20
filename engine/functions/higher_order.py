"""Nodes that only a `create_graph=True` backward records.

With create_graph, backward formulas run in grad mode, so each op inside them records a
node and takes a sequence number, exactly as forward ops do. Formulas made of ordinary
ops (`grad * other`) record MulBackward0 and friends by themselves. Fused backward
kernels (tanh_backward, sigmoid_backward, threshold_backward) and the helpers below
record the nodes named here. The lab's language cannot reach a `.grad`'s graph, so these
nodes are never run: they exist so that later sequence numbers match PyTorch's.
"""

from __future__ import annotations

from typing import Any

from engine.functions._record import record
from engine.node import Node
from engine.tensor import Tensor, Values


class _SecondOrder(Node):
    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        raise NotImplementedError(f"the lab never runs backward through {self.name}")


class TanhBackwardBackward0(_SecondOrder):
    name = "TanhBackwardBackward0"


class SigmoidBackwardBackward0(_SecondOrder):
    name = "SigmoidBackwardBackward0"


class ThresholdBackwardBackward0(_SecondOrder):
    name = "ThresholdBackwardBackward0"


class SgnBackward0(_SecondOrder):
    name = "SgnBackward0"


class WhereBackward0(_SecondOrder):
    name = "WhereBackward0"


class ExpandBackward0(_SecondOrder):
    name = "ExpandBackward0"


class SumBackward1(_SecondOrder):
    name = "SumBackward1"


class ViewBackward0(_SecondOrder):
    name = "ViewBackward0"


def recorded(node_type: type[Node], values: Values, inputs: list[Tensor | None],
             like: Tensor) -> Tensor:
    """A backward kernel's result: a node is recorded when grad mode is on and an input
    requires grad (that is, under create_graph)."""
    out, _ = record(node_type, inputs, values, like)
    return out


def where(condition: Any, zero: Any, t: Tensor) -> Tensor:
    """`at::where(condition, 0, t)`."""
    import numpy as np

    from engine.tensor import as_values

    values = as_values(np.where(condition, zero, t.data), t.dtype)
    return recorded(WhereBackward0, values, [None, None, t], t)
