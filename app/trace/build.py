"""Events to the contract's trace document (pydantic), and one function to run a source.

`trace_json` is the one way in for the command line and the API alike. `trace_events`
turns the runner's events into JSON-ready pieces one at a time, so the streaming route
can send each as soon as the engine yields it; `run_source` just collects them.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any, cast

import numpy as np
import orjson
from pydantic import BaseModel

from app.language.export import ShorthandLeaf, as_pytorch, leaf_expansion
from app.language.interpreter import PassStarted, ProgramFinished, Runner
from app.language.parse import SourceError, parse
from app.language.program import Assign, Num, Program
from app.language.shapes import clear_cache as clear_shapes
from app.limits import DEFAULT_LIMITS, Limits
from app.trace.document import (
    Dependencies,
    ErrorInfo,
    Graph,
    GraphNode,
    Pass,
    ProgramInfo,
    SavedValue,
    Sent,
    Shorthand,
    Step,
    Trace,
)
from app.trace.layout import clear_cache as clear_layouts
from app.trace.layout import layout
from app.trace.values import Texts, encode, encode_step
from engine.events import DependenciesCounted, GraphRecorded, NodePopped, SavedInfo

__all__ = ["Graph", "GraphNode", "Step", "Trace", "TraceEvent", "clear_caches", "document_bytes",
           "document_json", "quiet_floats", "run_source", "trace_events", "trace_json"]

logger = logging.getLogger(__name__)
# -- events to pieces ----------------------------------------------------------------------

def graph_model(event: GraphRecorded, texts: Texts) -> Graph:
    places = layout(event.root, event.nodes)
    nodes: list[GraphNode] = []
    for n, (layer, x) in zip(event.nodes, places, strict=True):
        nodes.append({
            "id": texts.number(n.id), "name": n.name, "seq": texts.number(n.seq),
            "next": n.next_ids,
            "variable": n.bound_to, "leaf": n.leaf, "value": texts.printed(n.leaf_value),
            "shape": list(n.shape), "saved": [_saved(s, texts) for s in n.saved],
            "layer": texts.number(layer), "x": x})
    return Graph(root=event.root, nodes=nodes)


def _saved(s: SavedInfo, texts: Texts) -> SavedValue:
    text = "freed" if s.released else (texts.printed(s.value) if s.is_tensor else str(s.value))
    return {"name": s.name, "value": text or "", "is_tensor": s.is_tensor,
            "released": s.released}


def step_model(e: NodePopped, texts: Texts, started: PassStarted | None = None) -> Step:
    """One pop as the document shows it (see Note [Trusted construction]). An error
    points at the backward() call whose pass it ended."""
    error = None if e.error is None else ErrorInfo(
        kind="backward", type=e.error.type_name, message=e.error.message,
        line=started.line if started else None, col=started.col if started else None)
    sent: list[Sent] = [{"edge": s.edge, "to": texts.number(s.to),
                         "value": encode_step(s.value), "text": texts.printed(s.value)}
                        for s in e.sent]
    step: Step = {
        "name": e.name, "seq": texts.number(e.seq), "leaf": e.leaf,
        "node": texts.number(e.node),
        "grad": encode_step(e.grad), "grad_text": texts.printed(e.grad), "sent": sent,
        "dependencies": texts.by_id(e.dependencies), "ready": e.ready, "queue": e.queue,
        "released": e.released}
    if e.grad_before is not None or e.grad_after is not None:   # AccumulateGrad wrote .grad
        step["grad_before"] = encode_step(e.grad_before)
        step["grad_after"] = encode_step(e.grad_after)
        step["grad_before_text"] = texts.printed(e.grad_before)
        step["grad_after_text"] = texts.printed(e.grad_after)
    if error is not None:
        step["error"] = error
    return step


Piece = BaseModel | Graph | Step
TraceEvent = tuple[str, Piece]


def trace_events(source: str, limits: Limits = DEFAULT_LIMITS) -> Iterator[TraceEvent]:
    """("pass", Pass) / ("graph", Graph) / ("dependencies", ...) / ("step", Step) pieces,
    as the engine produces them, ending with ("done", Trace) holding grads and error."""
    try:
        program = parse(source, limits)
    except SourceError as e:
        yield "done", Trace(error=ErrorInfo(kind="limit" if e.limit else "rejected",
                                            type=e.type, message=e.message, line=e.line,
                                            col=e.col, end_line=e.end_line,
                                            end_col=e.end_col))
        return
    try:
        yield from _run_events(program, limits, source)
    except Exception as bug:   # a bug of the lab's: report it, keep serving everyone else
        logger.exception("internal error while tracing")
        yield "done", Trace(error=ErrorInfo(
            kind="internal", type="InternalError", message=f"the lab failed on this program "
            f"({type(bug).__name__}: {bug}); this is a bug in the lab, not in your program"))


def _shorthand(program: Program) -> list[ShorthandLeaf]:
    return [ShorthandLeaf(s.name, s.span.line, s.span.col, s.span.end_line, s.span.end_col,
                          leaf_expansion(s.value.value))
            for s in program.statements
            if isinstance(s, Assign) and s.leaf_shorthand and isinstance(s.value, Num)]


def _program_info(source: str, program: Program, leaves: list[str]) -> ProgramInfo:
    shorthand = _shorthand(program)
    plain = program.imports_torch
    return ProgramInfo(
        kind="plain" if plain else "shorthand",
        shorthand=[Shorthand(name=s.name, line=s.line, col=s.col, end_line=s.end_line,
                             end_col=s.end_col, expanded=s.expanded) for s in shorthand],
        implicit_output=program.implicit_output,
        as_pytorch=as_pytorch(source, shorthand, program.implicit_output, leaves))


def _run_events(program: Program, limits: Limits, source: str) -> Iterator[TraceEvent]:
    started: PassStarted | None = None
    texts = Texts()
    for event in Runner(program, limits).run():
        if isinstance(event, PassStarted):
            started = event
            yield "pass", Pass(output=event.output, line=event.line,
                               retain_graph=event.retain_graph, create_graph=event.create_graph)
        elif isinstance(event, GraphRecorded):
            yield "graph", graph_model(event, texts)
        elif isinstance(event, DependenciesCounted):
            yield "dependencies", Dependencies(dependencies=texts.by_id(event.dependencies))
        elif isinstance(event, NodePopped):
            yield "step", step_model(event, texts, started)
        elif isinstance(event, ProgramFinished):
            error = event.error
            yield "done", Trace(
                program=_program_info(source, program, list(event.grads)),
                grads={name: encode(v) for name, v in event.grads.items()},
                error=None if error is None else ErrorInfo(
                    kind=error.kind, type=error.type, message=error.message,
                    line=error.line, col=error.col, end_line=error.end_line, end_col=error.end_col))


def collect(events: Iterator[TraceEvent]) -> Trace:
    """Fold the pieces into one Trace document."""
    passes: list[Pass] = []
    steps: list[Step] = []          # the last pass's (a pydantic attribute costs a lookup)
    for kind, piece in events:
        if kind == "step":
            steps.append(cast(Step, piece))     # a typed dict: no isinstance
        elif kind == "pass":
            assert isinstance(piece, Pass)
            passes.append(piece)
            steps = piece.steps
        elif kind == "graph":
            assert isinstance(piece, Graph)
            passes[-1].graph = piece
        elif kind == "dependencies":
            assert isinstance(piece, Dependencies)
            passes[-1].dependencies = piece.dependencies
        elif kind == "done":
            assert isinstance(piece, Trace)
            piece.passes = passes
            return piece
    raise AssertionError("trace events ended without done")


def clear_caches() -> None:
    """Forget what earlier traces taught the parser (line shapes) and the layout (graph
    shapes), so that the next trace starts cold, as a program never seen before does."""
    clear_shapes()
    clear_layouts()


def run_source(source: str, limits: Limits = DEFAULT_LIMITS) -> Trace:
    """Parse, run and trace one program, as a document to inspect (tests, tools)."""
    with quiet_floats(), GC_PAUSE:
        return collect(trace_events(source, limits))


def trace_json(source: str, limits: Limits = DEFAULT_LIMITS,
               include: Any = None) -> tuple[bytes, bool]:
    """Parse, run and trace one program and write its document: (the JSON as UTF-8, whether
    it reports an error). The CLI's and the API's way in; both send bytes on, so the JSON
    is never decoded into a second copy (6 MB for a 10,000-op program). The document is
    written and dropped before the collector resumes, so the collector never walks the
    objects a big trace is made of (see _GcPause)."""
    with quiet_floats(), GC_PAUSE:
        trace = collect(trace_events(source, limits))
        failed = trace.error is not None
        text = (trace.model_dump_json(include=include).encode() if include
                else document_bytes(trace))
        del trace
    return text, failed


def document_json(document: Piece) -> str:
    """A document, or one streamed piece of one, as JSON: what pydantic's `model_dump_json`
    writes, written by orjson in a third of the time. Steps and graph nodes are typed
    dicts and graphs dataclasses, which orjson writes as they are; a pydantic model's
    fields are its `__dict__`."""
    return document_bytes(document).decode()


def document_bytes(document: Piece) -> bytes:
    """`document_json` as the UTF-8 bytes orjson writes (what `trace_json` returns)."""
    return orjson.dumps(document, default=_model_fields)


def _model_fields(value: object) -> dict[str, Any]:
    if isinstance(value, BaseModel):
        return value.__dict__
    raise TypeError(f"{type(value).__name__} is not part of a trace document")


class _GcPause:
    """Python's cycle collector paused while any trace is being built.

    A trace allocates a great many small objects that all stay alive until it is done;
    the collector would walk them again and again for nothing (a third of the time of a
    10,000-op trace), and it would walk them once more on resuming if they were still
    alive then: `trace_json` drops the document first. Nested and concurrent traces share
    one pause: the last one out turns collection back on, and it then frees any cycles
    at once. Under a lecture hall's stream of overlapping traces there may never be a
    last one out: then a trace that ends more than `max_pause_s` after the pause began (or
    after the last such collection) collects before it returns, so the cycles of finished
    traces are freed at least that often and memory stays at its baseline.
    """

    def __init__(self, max_pause_s: float = 1.0) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._was_enabled = True
        self._since = 0.0
        self.max_pause_s = max_pause_s

    def __enter__(self) -> None:
        with self._lock:
            self._holders += 1
            if self._holders == 1:
                self._was_enabled = gc.isenabled()
                self._since = time.monotonic()
                gc.disable()

    def __exit__(self, *exc: object) -> None:
        overdue = False
        with self._lock:
            self._holders -= 1
            if self._holders == 0 and self._was_enabled:
                gc.enable()
            elif self._was_enabled and time.monotonic() - self._since > self.max_pause_s:
                self._since = time.monotonic()
                overdue = True
        if overdue:
            gc.collect()


GC_PAUSE = _GcPause()


def quiet_floats() -> np.errstate:
    """inf and nan are values in PyTorch, not warnings: numpy's overflow, invalid-value
    and divide-by-zero warnings are silenced while a program runs. (numpy keeps this
    per thread and context, so the streaming route enters it around each step.)"""
    return np.errstate(all="ignore")
