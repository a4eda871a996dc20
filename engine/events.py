"""The events the engine yields as it works: small records, nothing else.

Values are numpy snapshots that nothing mutates afterwards, so a consumer may keep them.
The records are slotted dataclasses, not frozen (a frozen dataclass's `__init__` costs
several times as much, and there is one record per pop); nothing changes them once yielded.
Each spells out its `__init__`: the one the dataclass decorator writes stays interpreted
Python even in the compiled build.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.errors import TorchError


@dataclass(slots=True)
class SavedInfo:
    """One `_saved_<name>` of a node: a tensor's values, or a number or sizes."""

    name: str
    value: Any
    is_tensor: bool
    released: bool
    saved_version: int                # the tensor's version when it was saved ...
    version: int                      # ... and now: they differ after an in-place change

    def __init__(self, name: str, value: Any, is_tensor: bool, released: bool,
                 saved_version: int = 0, version: int = 0) -> None:
        self.name = name
        self.value = value
        self.is_tensor = is_tensor
        self.released = released
        self.saved_version = saved_version
        self.version = version


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
    line: int                         # the program's line that recorded the node
    scope: str | None                 # the module whose forward recorded it
    code: tuple[int, int] | None      # a custom Function's backward(): its first, last line

    def __init__(self, id: int, name: str, seq: int, next_ids: list[int | None],
                 bound_to: str | None, leaf: str | None, leaf_value: Any,
                 shape: tuple[int, ...], saved: list[SavedInfo], line: int = 0,
                 scope: str | None = None, code: tuple[int, int] | None = None) -> None:
        self.id = id
        self.name = name
        self.seq = seq
        self.next_ids = next_ids
        self.bound_to = bound_to
        self.leaf = leaf
        self.leaf_value = leaf_value
        self.shape = shape
        self.saved = saved
        self.line = line
        self.scope = scope
        self.code = code


@dataclass(slots=True)
class GraphRecorded:
    """The graph reachable from the root, root first, every node once."""

    root: int
    nodes: list[NodeInfo]

    def __init__(self, root: int, nodes: list[NodeInfo]) -> None:
        self.root = root
        self.nodes = nodes


@dataclass(slots=True)
class DependenciesCounted:
    """`compute_dependencies`: for every reachable node, how many edges point at it."""

    dependencies: dict[int, int]

    def __init__(self, dependencies: dict[int, int]) -> None:
        self.dependencies = dependencies


@dataclass(slots=True)
class GradientSent:
    """The gradient one output of a node sends along edge `edge` to node `to`."""

    edge: int
    to: int
    value: Any

    def __init__(self, edge: int, to: int, value: Any) -> None:
        self.edge = edge
        self.to = to
        self.value = value


@dataclass(slots=True)
class HookCall:
    """One hook that ran within a pop: which kind, what it got and what came of it.

    `kind` is "tensor" (a tensor's register_hook), "retain_grad", "pre" (a node
    pre-hook), "post" (a node post-hook), "post_accumulate" or "capture"."""

    kind: str
    label: str                        # what the hook was on: a variable or node name
    before: Any
    after: Any
    replaced: bool

    def __init__(self, kind: str, label: str, before: Any, after: Any,
                 replaced: bool) -> None:
        self.kind = kind
        self.label = label
        self.before = before
        self.after = after
        self.replaced = replaced


@dataclass(slots=True)
class NodePopped:
    """One ready-queue pop: the node ran (or raised) and what changed because of it.

    A node popped only for `autograd.grad` to capture a gradient at it does not run
    (`ran` False): it is not a step of the pass, as no pre-hook fires for it."""

    node: int
    name: str
    seq: int
    leaf: str | None
    grad: Any                         # the summed gradient it received (its first input)
    sent: list[GradientSent]
    dependencies: dict[int, int]      # counts that changed
    ready: list[int]                  # nodes this pop made ready
    queue: list[int]                  # the ready queue after, in pop order
    released: list[str]               # saved tensors freed after it ran
    grad_before: Any                  # AccumulateGrad: leaf.grad before ...
    grad_after: Any                   # ... and after the write
    error: TorchError | None
    hooks: list[HookCall]
    ran: bool

    def __init__(self, node: int, name: str, seq: int, leaf: str | None, grad: Any,
                 sent: list[GradientSent] | None = None,
                 dependencies: dict[int, int] | None = None, ready: list[int] | None = None,
                 queue: list[int] | None = None, released: list[str] | None = None,
                 grad_before: Any = None, grad_after: Any = None,
                 error: TorchError | None = None, hooks: list[HookCall] | None = None,
                 ran: bool = True) -> None:
        self.node = node
        self.name = name
        self.seq = seq
        self.leaf = leaf
        self.grad = grad
        self.sent = [] if sent is None else sent
        self.dependencies = {} if dependencies is None else dependencies
        self.ready = [] if ready is None else ready
        self.queue = [] if queue is None else queue
        self.released = [] if released is None else released
        self.grad_before = grad_before
        self.grad_after = grad_after
        self.error = error
        self.hooks = [] if hooks is None else hooks
        self.ran = ran


Event = GraphRecorded | DependenciesCounted | NodePopped
