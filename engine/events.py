"""The events the engine yields as it works: small records, nothing else.

Values are numpy snapshots that nothing mutates afterwards, so a consumer may keep them.
The records are slotted dataclasses but not frozen: a frozen dataclass's `__init__` costs
three to five times as much, and there is one record per pop; nothing changes them once
yielded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.errors import TorchError


@dataclass(slots=True)
class SavedInfo:
    """One `_saved_<name>` of a node: a tensor's values, or a number or sizes."""

    name: str
    value: Any
    is_tensor: bool
    released: bool


@dataclass(slots=True)
class NodeInfo:
    """A backward node as the graph shows it."""

    id: int
    name: str
    seq: int
    next_ids: list[int | None]
    bound_to: str | None
    leaf: str | None                  # AccumulateGrad: the leaf's variable name
    leaf_value: Any                   # AccumulateGrad: the leaf's values
    shape: tuple[int, ...]
    saved: list[SavedInfo]


@dataclass(slots=True)
class GraphRecorded:
    """The graph reachable from the root, root first, every node once."""

    root: int
    nodes: list[NodeInfo]


@dataclass(slots=True)
class DependenciesCounted:
    """`compute_dependencies`: for every reachable node, how many edges point at it."""

    dependencies: dict[int, int]


@dataclass(slots=True)
class GradientSent:
    """The gradient one output of a node sends along edge `edge` to node `to`."""

    edge: int
    to: int
    value: Any


@dataclass(slots=True)
class NodePopped:
    """One ready-queue pop: the node ran (or raised) and what changed because of it."""

    node: int
    name: str
    seq: int
    leaf: str | None
    grad: Any                                   # the summed gradient it received
    sent: list[GradientSent] = field(default_factory=list)
    dependencies: dict[int, int] = field(default_factory=dict)   # counts that changed
    ready: list[int] = field(default_factory=list)      # nodes this pop made ready
    queue: list[int] = field(default_factory=list)      # the ready queue after, in pop order
    released: list[str] = field(default_factory=list)   # saved tensors freed after it ran
    grad_before: Any = None                     # AccumulateGrad: leaf.grad before ...
    grad_after: Any = None                      # ... and after the write
    error: TorchError | None = None


Event = GraphRecorded | DependenciesCounted | NodePopped
