"""Events to the contract's trace document (pydantic), and one function to run a source.

`run_source` is the one way in for the command line and the API alike. `trace_events`
turns the runner's events into JSON-ready pieces one at a time, so the streaming route
can send each as soon as the engine yields it; `run_source` just collects them.
"""

from __future__ import annotations

import gc
import logging
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Union

import numpy as np
from pydantic import BaseModel, Field, TypeAdapter

from app.layout import layout
from app.limits import DEFAULT_LIMITS, Limits
from app.program import Program
from app.runner import PassStarted, ProgramFinished, Runner
from app.source import SourceError, parse
from engine import TORCH_VERSION
from engine.events import DependenciesCounted, GraphRecorded, NodePopped, SavedInfo
from engine.printing import THRESHOLD, format_suffix, format_values

logger = logging.getLogger(__name__)
JSONValue = Union[float, int, str, None, list[Any]]


def encode(values: Any) -> JSONValue:
    """float32 values widened to JSON numbers; nan and infinities as strings."""
    if values is None:
        return None
    if type(values) is np.float32:
        x = float(values)
        return x if math.isfinite(x) else _finite(x)  # type: ignore[no-any-return]
    out: JSONValue = _finite(np.asarray(values).tolist())
    return out


def encode_step(values: Any) -> JSONValue:
    """A gradient inside a step: in full up to PyTorch's print threshold (1000 elements);
    bigger ones only as printed (summarised) text, so that a trace stays proportional to
    its steps and not to steps x elements. Final `grads` are always in full."""
    if values is not None and type(values) is not np.float32 and np.size(values) > THRESHOLD:
        return None
    return encode(values)


def _finite(x: Any) -> Any:
    if isinstance(x, list):
        return [_finite(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def printed(values: Any) -> str | None:
    """The values as PyTorch prints them: `tensor(28.)`."""
    if values is None:
        return None
    return f"tensor({format_values(values)}{format_suffix(values)})"


class ErrorInfo(BaseModel):
    type: str = Field(description="RuntimeError, TypeError, ... or SyntaxError/UnsupportedError")
    message: str = Field(description="PyTorch's message word for word, or the lab's")
    line: int | None = Field(None, description="1-based line of the statement or text")
    col: int | None = Field(None, description="1-based column")
    end_line: int | None = Field(None, description="where the offending text ends, if known")
    end_col: int | None = Field(None, description="1-based column just past its end")


# Note [Trusted construction]
# Graphs and steps are built from the engine's own events, whose types are fixed, so they
# are plain dataclasses, made without validation: a big trace has one Step per pop, and
# validating tens of thousands of pydantic models would cost more than running the engine.
# Pydantic still knows their schema, so /docs describes them and serialisation is native.

@dataclass(slots=True)
class SavedValue:
    name: Annotated[str, Field(description="as in `grad_fn._saved_<name>`")]
    value: Annotated[str, Field(description="printed value")]
    is_tensor: bool
    released: bool


@dataclass(slots=True)
class GraphNode:
    id: int
    name: str
    seq: int
    next: Annotated[list[int | None], Field(description="next_functions, in argument order")]
    variable: Annotated[str | None, Field(
        description="the variable this node's output was bound to")]
    leaf: Annotated[str | None, Field(description="AccumulateGrad: the leaf's name")]
    value: Annotated[str | None, Field(description="AccumulateGrad: the leaf's value, printed")]
    shape: list[int]
    saved: list[SavedValue]
    layer: Annotated[int, Field(description="layout: 0 is the output, leaves at the bottom")]
    x: Annotated[float, Field(description="layout: position within the layer")]


@dataclass(slots=True)
class Graph:
    root: int
    nodes: list[GraphNode]


@dataclass(slots=True)
class Sent:
    edge: Annotated[int, Field(description="index into the node's next_functions")]
    to: int
    value: JSONValue
    text: str | None


@dataclass(slots=True)
class Step:
    """One ready-queue pop. `name`, `seq` and `leaf` are the contract's fields."""

    name: str
    seq: int
    leaf: str | None
    node: int
    grad: Annotated[JSONValue, Field(description="the summed gradient the node received")]
    grad_text: str | None
    sent: list[Sent] = field(default_factory=list)
    dependencies: Annotated[dict[int, int], Field(description="counts that changed")] = field(
        default_factory=dict)
    ready: Annotated[list[int], Field(description="nodes this pop made ready")] = field(
        default_factory=list)
    queue: Annotated[list[int], Field(
        description="the ready queue afterwards, in pop order")] = field(default_factory=list)
    released: Annotated[list[str], Field(
        description="saved tensors freed after the node ran")] = field(default_factory=list)
    grad_before: JSONValue = None
    grad_after: JSONValue = None
    grad_before_text: str | None = None
    grad_after_text: str | None = None
    error: ErrorInfo | None = None


class Pass(BaseModel):
    output: str
    line: int
    retain_graph: bool
    create_graph: bool
    graph: Graph | None = None
    dependencies: dict[int, int] = {}
    steps: list[Step] = []


class Trace(BaseModel):
    """The contract's document (`passes`, `grads`, `error`) with the lab's details."""

    torch_version: str = TORCH_VERSION
    passes: list[Pass] = []
    grads: dict[str, JSONValue] = {}
    error: ErrorInfo | None = None


# -- events to pieces ----------------------------------------------------------------------

def graph_model(event: GraphRecorded) -> Graph:
    places = layout(event.root, event.nodes)
    return Graph(root=event.root, nodes=[
        GraphNode(
            id=n.id, name=n.name, seq=n.seq, next=list(n.next_ids), variable=n.bound_to,
            leaf=n.leaf, value=printed(n.leaf_value), shape=list(n.shape),
            saved=[_saved(s) for s in n.saved], layer=places[n.id][0], x=places[n.id][1])
        for n in event.nodes])


def _saved(s: SavedInfo) -> SavedValue:
    text = "freed" if s.released else (printed(s.value) if s.is_tensor else str(s.value))
    return SavedValue(name=s.name, value=text or "", is_tensor=s.is_tensor,
                                      released=s.released)


def step_model(e: NodePopped, started: PassStarted | None = None) -> Step:
    """One pop as the document shows it (see Note [Trusted construction]). An error
    points at the backward() call whose pass it ended."""
    error = None if e.error is None else ErrorInfo(
        type=e.error.type_name, message=e.error.message,
        line=started.line if started else None, col=started.col if started else None)
    return Step(
        name=e.name, seq=e.seq, leaf=e.leaf, node=e.node, grad=encode_step(e.grad),
        grad_text=printed(e.grad),
        sent=[Sent(edge=s.edge, to=s.to, value=encode_step(s.value),
                                   text=printed(s.value)) for s in e.sent],
        dependencies=e.dependencies, ready=list(e.ready), queue=list(e.queue),
        released=list(e.released), grad_before=encode_step(e.grad_before),
        grad_after=encode_step(e.grad_after), grad_before_text=printed(e.grad_before),
        grad_after_text=printed(e.grad_after), error=error)


Piece = BaseModel | Graph | Step
TraceEvent = tuple[str, Piece]
_GRAPH, _STEP = TypeAdapter(Graph), TypeAdapter(Step)


def piece_json(piece: Piece) -> str:
    """One streamed piece as JSON."""
    if isinstance(piece, BaseModel):
        return piece.model_dump_json()
    adapter: TypeAdapter[Any] = _GRAPH if isinstance(piece, Graph) else _STEP
    return adapter.dump_json(piece).decode()


def trace_events(source: str, limits: Limits = DEFAULT_LIMITS) -> Iterator[TraceEvent]:
    """("pass", Pass) / ("graph", Graph) / ("dependencies", ...) / ("step", Step) pieces,
    as the engine produces them, ending with ("done", Trace) holding grads and error."""
    try:
        program = parse(source, limits)
    except SourceError as e:
        yield "done", Trace(error=ErrorInfo(type=e.type, message=e.message, line=e.line,
                                            col=e.col, end_line=e.end_line,
                                            end_col=e.end_col))
        return
    try:
        yield from _run_events(program, limits)
    except Exception as e:   # a bug of the lab's: report it, keep serving everyone else
        logger.exception("internal error while tracing")
        yield "done", Trace(error=ErrorInfo(
            type="InternalError", message=f"the lab failed on this program ({type(e).__name__}: "
            f"{e}); this is a bug in the lab, not in your program"))


def _run_events(program: Program, limits: Limits) -> Iterator[TraceEvent]:
    started: PassStarted | None = None
    for event in Runner(program, limits).run():
        if isinstance(event, PassStarted):
            started = event
            yield "pass", Pass(output=event.output, line=event.line,
                               retain_graph=event.retain_graph, create_graph=event.create_graph)
        elif isinstance(event, GraphRecorded):
            yield "graph", graph_model(event)
        elif isinstance(event, DependenciesCounted):
            yield "dependencies", Dependencies(dependencies=event.dependencies)
        elif isinstance(event, NodePopped):
            yield "step", step_model(event, started)
        elif isinstance(event, ProgramFinished):
            error = event.error
            yield "done", Trace(
                grads={name: encode(v) for name, v in event.grads.items()},
                error=None if error is None else ErrorInfo(
                    type=error.type, message=error.message, line=error.line, col=error.col,
                    end_line=error.end_line, end_col=error.end_col))


class Dependencies(BaseModel):
    dependencies: dict[int, int]


def collect(events: Iterator[TraceEvent]) -> Trace:
    """Fold the pieces into one Trace document."""
    passes: list[Pass] = []
    for kind, piece in events:
        if kind == "pass":
            assert isinstance(piece, Pass)
            passes.append(piece)
        elif kind == "graph":
            assert isinstance(piece, Graph)
            passes[-1].graph = piece
        elif kind == "dependencies":
            assert isinstance(piece, Dependencies)
            passes[-1].dependencies = piece.dependencies
        elif kind == "step":
            assert isinstance(piece, Step)
            passes[-1].steps.append(piece)
        elif kind == "done":
            assert isinstance(piece, Trace)
            piece.passes = passes
            return piece
    raise AssertionError("trace events ended without done")


def run_source(source: str, limits: Limits = DEFAULT_LIMITS) -> Trace:
    """Parse, run and trace one program: the CLI's and the API's shared entry point."""
    with quiet_floats(), GC_PAUSE:
        return collect(trace_events(source, limits))


class _GcPause:
    """Python's cycle collector paused while any trace is being built.

    A trace allocates a great many small objects that all stay alive until it is done;
    the collector would walk them again and again for nothing (a third of the time of a
    10,000-op trace). Nested and concurrent traces share one pause: the last one out
    turns collection back on, and it then frees any cycles at once.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0

    def __enter__(self) -> None:
        with self._lock:
            self._holders += 1
            if self._holders == 1:
                self._was_enabled = gc.isenabled()
                gc.disable()

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._holders -= 1
            if self._holders == 0 and self._was_enabled:
                gc.enable()


GC_PAUSE = _GcPause()


def quiet_floats() -> np.errstate:
    """inf and nan are values in PyTorch, not warnings: numpy's overflow, invalid-value
    and divide-by-zero warnings are silenced while a program runs. (numpy keeps this
    per thread and context, so the streaming route enters it around each step.)"""
    return np.errstate(all="ignore")
