"""The interpreter's events, turned into the document's pieces one at a time.

A backward or autograd.grad call is a pass only once a node runs in it (CONTRACT §2), so a
pass's opening pieces (`pass`, `graph`, `dependencies`) wait until its first step.
Pops in which `autograd.grad` only captured a gradient ran no node and are not steps.
Passes outside the window that kept.py keeps in full are summarised: their steps keep the
contract's fields (Note [Passes kept in full]).
The models made once per pass, print or optimizer step are made without validation, as
the steps are (Note [Trusted construction] in document.py): a 1,000-step loop makes a
thousand passes, and validating them took 8% of its trace's time (cProfile, compiled
build).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from app.language.events import (
    GradReturned,
    OptimizerStepped,
    PassStarted,
    Printed,
    ProgramError,
    ProgramFinished,
    RunEvent,
    Untracked,
    Warned,
)
from app.trace.document import (
    ConsoleLine,
    Dependencies,
    ErrorInfo,
    Graph,
    GraphNode,
    HookInfo,
    OptimizerStep,
    Outside,
    ParamStep,
    Pass,
    Results,
    Returned,
    SavedValue,
    Sent,
    Step,
    Trace,
)
from app.trace.kept import KeptPasses, size
from app.trace.layout import layout
from app.trace.values import Texts, encode, encode_step
from engine.events import DependenciesCounted, GraphRecorded, NodePopped, SavedInfo

Piece = BaseModel | Graph | Step | ConsoleLine
TraceEvent = tuple[str, Piece]
Send = Callable[[str, Piece], None]


def graph_model(event: GraphRecorded, texts: Texts, kept: KeptPasses) -> Graph:
    drawing = layout(event.root, event.nodes)
    nodes: list[GraphNode] = []
    shown = 0
    # (a drawing has a place and a band per node; Note [Plain zip] in engine/input_buffer.py)
    for n, (layer, x), band in zip(event.nodes, drawing.places, drawing.band_of):  # noqa: B905
        shown += size(n.leaf_value)
        for s in n.saved:
            if s.is_tensor and not s.released:
                shown += size(s.value)
        nodes.append({
            "id": texts.number(n.id), "name": n.name, "seq": texts.number(n.seq),
            "next": n.next_ids,
            "variable": n.bound_to, "leaf": n.leaf, "value": texts.printed(n.leaf_value),
            "data": None if n.leaf_value is None else encode(n.leaf_value),
            "shape": list(n.shape), "saved": [_saved(s, texts) for s in n.saved],
            "line": n.line, "module": n.scope,
            "code": None if n.code is None else list(n.code),
            "layer": texts.number(layer), "x": x, "band": band})
    kept.show(shown)
    return Graph(root=event.root, nodes=nodes, bands=drawing.bands)


def _saved(s: SavedInfo, texts: Texts) -> SavedValue:
    if s.released:
        text = "freed"
    elif s.is_tensor:
        text = texts.printed(s.value) or ""
    else:
        text = str(s.value)
    return {"name": s.name, "value": text, "is_tensor": s.is_tensor, "released": s.released,
            "saved_version": s.saved_version, "version": s.version}


M = TypeVar("M", bound=BaseModel)
_FIELDS: dict[type, tuple[str, ...]] = {}      # a model class's field names, in order


def trusted(cls: type[M], **fields: Any) -> M:
    """A model of every one of its fields, as given (Note [Trusted construction] in
    document.py): what pydantic's `model_construct` makes, without its walk for defaults
    and aliases, which took an eighth of a 1,000-pass loop's trace (cProfile, compiled)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(cls.model_fields)
    model = cls.__new__(cls)
    object.__setattr__(model, "__dict__", {name: fields[name] for name in names})
    object.__setattr__(model, "__pydantic_fields_set__", set(names))
    object.__setattr__(model, "__pydantic_extra__", None)
    object.__setattr__(model, "__pydantic_private__", None)
    return model


def error_info(error: ProgramError) -> ErrorInfo:
    return ErrorInfo(kind=error.kind, type=error.type, message=error.message,  # type: ignore[arg-type]
                     line=error.line, col=error.col, end_line=error.end_line,
                     end_col=error.end_col)


class PieceBuilder:
    """Receives the run's events (`emit`) and sends the document's pieces (`send`)."""

    def __init__(self, send: Send, kept: KeptPasses) -> None:
        self.send = send
        self.kept = kept
        self.texts = Texts()
        self.started: PassStarted | None = None
        self.waiting: list[TraceEvent] = []        # a pass's pieces until its first step
        self.open = False                          # the current pass has had a step
        self.passes = 0
        self.steps = 0                             # the current pass's steps so far
        self.summarized = False
        self.last_kept = False                     # the last pass that had steps was kept
        self.printed: list[str] = []
        self.console: list[ConsoleLine] = []
        self.outside: list[Outside] = []
        self.optimizer_steps: list[OptimizerStep] = []

    def emit(self, event: RunEvent) -> None:
        if isinstance(event, NodePopped):
            self.step(event)
        elif isinstance(event, PassStarted):
            self.started = event
            self.open = False
            self.summarized = not self.kept.keeps(self.passes)
            self.waiting = [("pass", trusted(
                Pass, output=event.output, kind=event.kind, index=self.passes,
                line=event.line, iteration=event.iteration, retain_graph=event.retain_graph,
                create_graph=event.create_graph, summarized=self.summarized, graph=None,
                dependencies={}, steps=[], returned=None,
                steps_kept=0 if self.summarized else self.kept.max_steps))]
        elif isinstance(event, GraphRecorded):
            if not self.summarized:
                self.waiting.append(("graph", graph_model(event, self.texts, self.kept)))
        elif isinstance(event, DependenciesCounted):
            if not self.summarized:
                self.waiting.append(("dependencies", Dependencies(
                    dependencies=self.texts.by_id(event.dependencies))))
        elif isinstance(event, (Printed, Warned)):
            if isinstance(event, Printed):
                self.printed.append(event.text)
            # During a pass (a hook printing), before its first step the pass has begun
            starting = event.during_pass and not self.open
            line = ConsoleLine.model_construct(
                kind="print" if isinstance(event, Printed) else "warning", text=event.text,
                line=event.line, passes=self.passes + (1 if starting else 0),
                step=(0 if starting else self.steps) if event.during_pass else None)
            self.console.append(line)
            self.send("console", line)
        elif isinstance(event, GradReturned):
            if self.open and not self.summarized:      # the pass had steps: it is one
                texts = self.texts
                self.send("results", Results(returned=[
                    cast(Returned, {"input": name, "value": encode(v),
                                    "text": texts.printed(v)})
                    for name, v in zip(event.inputs, event.values, strict=False)]))
        elif isinstance(event, OptimizerStepped):
            self.optimizer_step(event)
        elif isinstance(event, Untracked):
            self.outside.append(Outside(name=event.name, reason=event.reason,  # type: ignore[arg-type]
                                        line=event.line))
        elif isinstance(event, ProgramFinished):
            self.finish(event)

    def keeps_this_pass(self) -> bool:
        """Whether the pass under way is kept step by step (the lenses ask)."""
        return not self.summarized

    def keeps_next_pass(self) -> bool:
        """Whether the next pass will be kept step by step (not summarised)."""
        return self.kept.keeps(self.passes)

    def keeps_next_update(self) -> bool:
        """Whether the next optimizer step will be kept with its values: with the pass whose
        gradients it consumes (or, before any pass, with the first)."""
        return self.last_kept if self.passes else self.kept.keeps(0)

    def step(self, e: NodePopped) -> None:
        if not e.ran:
            return
        if not self.open:
            self.open = True
            self.passes += 1
            self.steps = 0
            self.last_kept = not self.summarized
            if self.last_kept:
                self.kept.opened()
            for kind, piece in self.waiting:
                self.send(kind, piece)
            self.waiting = []
        self.steps += 1
        if self.summarized:
            self.send("step", cast(Step, {"name": e.name, "seq": e.seq, "leaf": e.leaf}))
            return
        if self.steps > self.kept.max_steps:            # Note [Steps kept in full]
            step = cast(Step, {"name": e.name, "seq": e.seq, "leaf": e.leaf})
            if e.grad_after is not None:                # what .grad became, as printed
                step["grad_after"] = encode_step(e.grad_after)
                step["grad_after_text"] = self.texts.printed(e.grad_after)
            self.send("step", step)
            return
        self.send("step", self.step_model(e))

    def step_model(self, e: NodePopped) -> Step:
        """One pop as the document shows it (see Note [Trusted construction]). An error
        points at the backward() call whose pass it ended."""
        texts = self.texts
        shown = size(e.grad) + size(e.grad_before) + size(e.grad_after)
        for s in e.sent:
            shown += size(s.value)
        self.kept.show(shown)
        sent: list[Sent] = [{"edge": s.edge, "to": texts.number(s.to),
                             "value": encode_step(s.value), "text": texts.printed(s.value)}
                            for s in e.sent]
        step: Step = {
            "name": e.name, "seq": texts.number(e.seq), "leaf": e.leaf,
            "node": texts.number(e.node),
            "grad": encode_step(e.grad), "grad_text": texts.printed(e.grad), "sent": sent,
            "dependencies": texts.by_id(e.dependencies), "ready": e.ready, "queue": e.queue,
            "released": e.released}
        if e.grad_before is not None or e.grad_after is not None:   # AccumulateGrad wrote
            step["grad_before"] = encode_step(e.grad_before)
            step["grad_after"] = encode_step(e.grad_after)
            step["grad_before_text"] = texts.printed(e.grad_before)
            step["grad_after_text"] = texts.printed(e.grad_after)
        if e.error is not None:
            started = self.started
            step["error"] = ErrorInfo(kind="backward", type=e.error.type_name,
                                      message=e.error.message,
                                      line=started.line if started else None,
                                      col=started.col if started else None)
        if e.hooks:
            step["hooks"] = [_hook(h.kind, h.label, h.before, h.after, h.replaced, texts)
                             for h in e.hooks]
        return step

    def optimizer_step(self, e: OptimizerStepped) -> None:
        summarized = not self.keeps_next_update()
        params: list[ParamStep] = [] if summarized else [
            {"name": u.name, "before": encode_step(u.before), "grad": encode_step(u.grad),
             "after": encode_step(u.after),
             "state": {k: encode_step(v) for k, v in u.state.items()}}
            for u in e.params]
        for u in [] if summarized else e.params:
            self.kept.show(size(u.before) + size(u.grad) + size(u.after)
                           + sum(size(v) for v in u.state.values()))
        step = OptimizerStep.model_construct(
            index=len(self.optimizer_steps), kind=e.kind, line=e.line,  # type: ignore[arg-type]
            iteration=e.iteration, after_pass=self.passes - 1 if self.passes else None,
            hyper={k: encode(v) for k, v in e.hyper.items()}, params=params,
            summarized=summarized)
        self.optimizer_steps.append(step)
        self.send("optimizer", step)

    def finish(self, event: ProgramFinished) -> None:
        self.send("done", Trace(
            grads={name: encode(v) for name, v in event.grads.items()},
            error=None if event.error is None else error_info(event.error),
            printed=self.printed, console=self.console, outside=self.outside,
            optimizer_steps=self.optimizer_steps))


def _hook(kind: str, label: str, before: Any, after: Any, replaced: bool,
          texts: Texts) -> HookInfo:
    return {"kind": kind, "label": label, "before": _printed(before, texts),
            "after": _printed(after, texts), "replaced": replaced}


def _printed(values: Any, texts: Texts) -> str | None:
    if values is None:
        return None
    if isinstance(values, list):
        return "(" + ", ".join(_printed(v, texts) or "None" for v in values) + \
            ("," if len(values) == 1 else "") + ")"
    return texts.printed(values)
