"""The profiler's timeline: the events `torch.autograd.profiler.profile()` records for a
program, derived from what the engine reports (reference §12).

For each pass: the forward ops that created its graph's nodes (each carrying its node's
sequence number, not shown again in a later pass), one `aten::ones_like` per seed that
`_make_grads` made, then for every pop `autograd::engine::evaluate_function: NAME` with,
inside it, the node's own event and the ops its formula runs, then the ops that sum
gradients back to their inputs' shapes and add them into input buffers. AccumulateGrad's
events carry -1, as `Node::operator()` casts UINT64_MAX to int64.

The depth kept is the profiler's first three levels of a backward event and the first of
a forward one (PyTorch's own internals below those, `aten::empty_strided` and such, are
left out). Which ops a formula runs comes from engine/functions/profiled.py; a node not
recorded there, a pass that records a graph, or a pop whose hooks ran keeps its events
but marks them `known: false` and lists no ops.

# Note [Shared gradients]
Whether AccumulateGrad copies a gradient or takes it, and whether an input buffer adds in
place, depends in PyTorch on who else holds the tensor. The lab follows each gradient as
a token: the seed (held by Python for the whole call), a pass-through formula's output
(the incoming tensor itself), an expanded view, or a fresh tensor; a token still waiting
in another buffer, or held by Python, is shared.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import TypedDict

from app.language.events import PassStarted, ProgramFinished, RunEvent
from engine.context import UINT64_MAX
from engine.events import GraphRecorded, NodeInfo, NodePopped
from engine.functions import profiled

EVALUATE = "autograd::engine::evaluate_function: "
ACCUMULATE = "torch::autograd::AccumulateGrad"
MAX_STEPS = 500             # a pass of more nodes keeps no timeline: too long to read


ProfileEvent = TypedDict("ProfileEvent", {
    "index": int,
    "name": Annotated[str, Field(description="as the profiler names it: `aten::mul`, "
                                             "`autograd::engine::evaluate_function: ...`")],
    "kind": Literal["forward", "backward"],
    "seq": Annotated[int, Field(description="the profiler's sequence_nr: the node's, or -1")],
    "node": Annotated[int | None, Field(description="the graph node it belongs to")],
    "parent": Annotated[int | None, Field(description="index of the event it is inside")],
    "depth": int,
    "pass": Annotated[int, Field(description="the pass (`Pass.index`)")],
    "step": Annotated[int | None, Field(description="backward: the pass's step (1 is the "
                                                    "first pop); null for a pop that ran "
                                                    "no node")],
    "known": Annotated[bool, Field(description="false where the lab has no recording of "
                                               "the ops inside")],
})
"""One event of the profiler's list, in the order the profiler records them."""


class _Pass:
    """One backward or grad call's events while it runs, and its gradients' tokens."""

    def __init__(self, started: PassStarted, kept: bool) -> None:
        self.started = started
        self.kept = kept                     # a pass kept in full: its events are kept
        self.nodes: dict[int, NodeInfo] = {}
        self.events: list[ProfileEvent] = []
        self.steps = 0
        self.held: dict[int, int] = {}       # node id -> the token waiting in its buffer
        self.holders: dict[int, int] = {}    # token -> how many buffers hold it
        self.pinned: set[int] = set()        # tokens Python holds (the root gradients)
        self.expanded: set[int] = set()      # tokens that are expanded views
        self.tokens = 0

    def token(self) -> int:
        self.tokens += 1
        return self.tokens

    def hold(self, node: int, token: int) -> None:
        old = self.held.get(node)
        if old is not None:
            self.holders[old] -= 1
        self.held[node] = token
        self.holders[token] = self.holders.get(token, 0) + 1

    def take(self, node: int) -> int | None:
        token = self.held.pop(node, None)
        if token is not None:
            self.holders[token] -= 1
        return token

    def shared(self, token: int, owner: int) -> bool:
        """Held by Python, an expanded view, or waiting in a buffer other than owner's."""
        others = self.holders.get(token, 0) - (self.held.get(owner) == token)
        return token in self.pinned or token in self.expanded or others > 0


class ProfileBuilder:
    """Receives the run's events and keeps the timeline (`events`); see the module's doc."""

    def __init__(self, kept: Callable[[], bool]) -> None:
        self.kept = kept                      # whether the pass that starts is kept in full
        self.events: list[ProfileEvent] = []
        self.passes = 0
        self.shown: set[int] = set()          # nodes whose forward op is already listed
        self.current: _Pass | None = None

    def emit(self, event: RunEvent) -> None:
        if isinstance(event, PassStarted):
            self.close()
            self.current = _Pass(event, self.kept())
        elif isinstance(event, GraphRecorded) and self.current is not None:
            if self.current.kept:
                self.forward(self.current, event)
        elif isinstance(event, NodePopped) and self.current is not None:
            if self.current.kept:
                self.pop(self.current, event)
            elif event.ran:
                self.current.steps += 1
        elif isinstance(event, ProgramFinished):
            self.close()

    def add(self, p: _Pass, name: str, kind: Literal["forward", "backward"], seq: int,
            node: int | None, parent: int | None, step: int | None = None,
            known: bool = True) -> int:
        depth = 0 if parent is None else p.events[parent]["depth"] + 1
        p.events.append({"index": len(p.events), "name": name, "kind": kind, "seq": seq,
                         "node": node, "parent": parent, "depth": depth, "pass": 0,
                         "step": step, "known": known})
        return len(p.events) - 1

    def forward(self, p: _Pass, event: GraphRecorded) -> None:
        if len(event.nodes) > MAX_STEPS:        # too long to draw: it keeps no timeline
            p.kept = False
            return
        p.nodes = {n.id: n for n in event.nodes}
        for n in sorted(event.nodes, key=lambda n: n.seq):
            if n.name == "AccumulateGrad" or n.id in self.shown:
                continue
            self.shown.add(n.id)
            op = profiled.FORWARD.get(n.name)
            self.add(p, op or n.name, "forward", n.seq, n.id, None, known=op is not None)
        for _ in range(p.started.seeds):
            self.add(p, profiled.SEED, "forward", -1, None, None)
        root = p.token()
        p.pinned.add(root)
        p.hold(event.root, root)

    def pop(self, p: _Pass, e: NodePopped) -> None:
        if e.ran:
            p.steps += 1
        step = p.steps if e.ran else None
        accumulate = e.name == "AccumulateGrad"
        name = ACCUMULATE if accumulate else e.name
        seq = -1 if e.seq == UINT64_MAX else e.seq
        top = self.add(p, EVALUATE + name, "backward", seq, e.node, None, step)
        token = p.take(e.node)
        if token is None:                       # a root of several: Python holds it
            token = p.token()
            p.pinned.add(token)
        if not e.ran:
            return
        known = not (e.hooks or p.started.create_graph or e.error is not None)
        inner = self.add(p, name, "backward", seq, e.node, top, step)
        if accumulate:
            ops = self.accumulate_ops(p, e, token) if known else None
        else:
            ops = self.formula_ops(p, e)
        if ops is None:
            p.events[inner]["known"] = False
            ops = ()
        for op in ops:
            self.add(p, op, "backward", -1, e.node, inner, step)
        if not accumulate and known:
            self.deliver(p, e, token, top, step)

    def formula_ops(self, p: _Pass, e: NodePopped) -> tuple[str, ...] | None:
        info = p.nodes.get(e.node)
        if info is None:
            return None
        needs = "".join("0" if n is None else "1" for n in info.next_ids)
        return profiled.BACKWARD.get(e.name, {}).get(needs)

    def accumulate_ops(self, p: _Pass, e: NodePopped, token: int) -> tuple[str, ...]:
        if e.grad_after is None:                # the leaf stopped requiring grad
            return ()
        if e.grad_before is not None:
            return profiled.ACCUMULATE_ADD
        return profiled.ACCUMULATE_COPY if p.shared(token, e.node) else \
            profiled.ACCUMULATE_TAKE

    def deliver(self, p: _Pass, e: NodePopped, token: int, top: int,
                step: int | None) -> None:
        """What evaluate_function does after the formula: `validate_outputs` sums a
        broadcast gradient back (`sum_to`), then each gradient joins its buffer."""
        info = p.nodes.get(e.node)
        through = profiled.PASS_THROUGH.get(e.name, ())
        sums: list[str] = []
        adds: list[str] = []
        for s in e.sent:
            out = token if s.edge in through else p.token()
            if e.name in profiled.EXPANDED or (e.name in profiled.VIEWS
                                               and token in p.expanded):
                p.expanded.add(out)
            target = p.nodes.get(s.to)
            if (info is not None and target is not None and target.shape != info.shape
                    and s.edge in profiled.BROADCAST.get(e.name, ())):
                sums += ["aten::sum"] + (["aten::view"] if target.shape else [])
                out = p.token()
            old = p.held.get(s.to)
            if old is None:
                p.hold(s.to, out)
            elif p.shared(old, s.to):
                adds.append("aten::add")
                p.hold(s.to, p.token())
            else:
                adds.append("aten::add_")
        for op in sums + adds:
            self.add(p, op, "backward", -1, e.node, top, step)

    def close(self) -> None:
        """The current pass is over: keep its events if it was a pass (a node ran)."""
        p = self.current
        self.current = None
        if p is None or p.steps == 0:
            return
        self.passes += 1
        if not p.kept:
            return
        offset = len(self.events)
        for ev in p.events:
            ev["index"] += offset
            if ev["parent"] is not None:
                ev["parent"] += offset
            ev["pass"] = self.passes - 1
            self.events.append(ev)
