"""One program's whole way: text → Program → run → the document, and its JSON.

`trace_json` is the one way in for the command line and the API alike; `trace_events`
gives the same document as pieces, as the engine produces them, for the streaming
route; `run_source` returns the document itself (tests, tools).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any, cast

import numpy as np
import orjson
from pydantic import BaseModel

from app.language.export import as_pytorch
from app.language.interpreter import Interpreter
from app.language.parse import SourceError, parse
from app.language.program import Program
from app.limits import DEFAULT_LIMITS, Limits, RunClock
from app.trace.document import (
    Dependencies,
    ErrorInfo,
    Graph,
    GraphNode,
    Pass,
    ProgramInfo,
    Results,
    Scheduler,
    Shorthand,
    Step,
    Trace,
)
from app.trace.gcpause import GC_PAUSE
from app.trace.kept import KeptPasses
from app.trace.layout import clear_cache as clear_layouts
from app.trace.lenses import Lenses
from app.trace.pieces import Piece, PieceBuilder, Send, TraceEvent

__all__ = ["Graph", "GraphNode", "Step", "Trace", "TraceEvent", "clear_caches", "document_bytes",
           "document_json", "quiet_floats", "run_source", "trace_events", "trace_json"]

logger = logging.getLogger(__name__)


def program_info(source: str, program: Program, leaves: list[str]) -> ProgramInfo:
    return ProgramInfo(
        kind=program.kind,  # type: ignore[arg-type]
        shorthand=[Shorthand(name=s.name, line=s.span.line, col=s.span.col,
                             end_line=s.span.end_line, end_col=s.span.end_col,
                             expanded=s.expanded) for s in program.shorthand],
        implicit_output=program.implicit_output,
        as_pytorch=as_pytorch(source, program.shorthand, program.implicit_output, leaves))


def run(source: str, limits: Limits, send: Send, seed: int | None = None,
        scheduler: Scheduler = "ready_queue", passes_from: int = 0,
        clock: RunClock | None = None) -> None:
    """Parse and run one program, sending the document's pieces; the last is `done`.
    `scheduler` is a setting of the run (its AutogradContext's), which every backward
    and autograd.grad call of the program then uses; `passes_from` is the first pass
    kept in full (Note [Passes kept in full]); `clock` is the run's time against its
    budget, when its sender may wait for a reader."""
    try:
        program = parse(source, limits)
    except SourceError as e:
        send("done", Trace(error=ErrorInfo(kind="limit" if e.limit else "rejected",
                                           type=e.type, message=e.message, line=e.line,
                                           col=e.col, end_line=e.end_line, end_col=e.end_col),
                           scheduler=scheduler))
        return
    finished = _HoldDone(send)
    builder = PieceBuilder(finished.send, KeptPasses(limits, passes_from))
    lenses = Lenses(builder.emit, send, builder.keeps_this_pass)
    interpreter = Interpreter(program, limits, lenses.emit, clock)
    interpreter.keeps_next_pass = builder.keeps_next_pass
    interpreter.keeps_next_update = builder.keeps_next_update
    if seed is not None:
        interpreter.ctx.replay_seed = seed
    interpreter.ctx.scheduler = scheduler
    try:
        with quiet_floats():
            interpreter.run()
    except Exception as bug:   # a bug of the lab's: report it, keep serving everyone else
        logger.exception("internal error while tracing")
        send("done", Trace(error=ErrorInfo(
            kind="internal", type="InternalError", message=f"the lab failed on this program "
            f"({type(bug).__name__}: {bug}); this is a bug in the lab, not in your program"),
            scheduler=scheduler))
        return
    trace = finished.trace
    assert trace is not None
    lenses.finish(trace)
    trace.program = program_info(source, program, list(trace.grads))
    trace.seed = interpreter.ctx.fresh_seed
    trace.scheduler = scheduler
    send("done", trace)


class _HoldDone:
    """Passes every piece on but `done`'s Trace, which `run` completes (with the lenses
    and the program) before sending it.

    A class rather than a closure: the compiled build (mypyc) keeps a closure's variables
    in an environment object that the closure and the environment both point to, a cycle
    that would hold the whole document alive until the cycle collector walked it (MEASURED:
    0.14 s of a 0.9 s 10,000-step trace, once collection resumed)."""

    def __init__(self, send: Send) -> None:
        self.pass_on = send
        self.trace: Trace | None = None

    def send(self, kind: str, piece: Piece) -> None:
        if kind == "done":
            self.trace = cast(Trace, piece)
        else:
            self.pass_on(kind, piece)


class _Collector:
    """The pieces folded into one Trace document."""

    def __init__(self) -> None:
        self.passes: list[Pass] = []
        self.trace: Trace | None = None

    def send(self, kind: str, piece: Piece) -> None:
        if kind == "step":
            self.passes[-1].steps.append(cast(Step, piece))
        elif kind == "pass":
            self.passes.append(cast(Pass, piece))
        elif kind == "graph":
            self.passes[-1].graph = cast(Graph, piece)
        elif kind == "dependencies":
            self.passes[-1].dependencies = cast(Dependencies, piece).dependencies
        elif kind == "optimizer":      # already in the done piece's optimizer_steps
            pass
        elif kind == "results":
            self.passes[-1].returned = cast(Results, piece).returned
        elif kind == "done":
            trace = cast(Trace, piece)
            trace.passes = self.passes
            self.trace = trace


def run_source(source: str, limits: Limits = DEFAULT_LIMITS, seed: int | None = None,
               scheduler: Scheduler = "ready_queue", passes_from: int = 0) -> Trace:
    """Parse, run and trace one program, as a document to inspect (tests, tools)."""
    collector = _Collector()
    with GC_PAUSE:
        run(source, limits, collector.send, seed, scheduler, passes_from)
    assert collector.trace is not None
    return collector.trace


def trace_json(source: str, limits: Limits = DEFAULT_LIMITS, include: Any = None,
               seed: int | None = None, scheduler: Scheduler = "ready_queue",
               passes_from: int = 0) -> tuple[bytes, bool]:
    """Parse, run and trace one program and write its document: (the JSON as UTF-8, whether
    it reports an error). The CLI's and the API's way in; both send bytes on. The document
    is written and dropped before the collector resumes (see gcpause.py)."""
    collector = _Collector()
    with GC_PAUSE:
        run(source, limits, collector.send, seed, scheduler, passes_from)
        trace = collector.trace
        assert trace is not None
        failed = trace.error is not None
        text = (trace.model_dump_json(include=include).encode() if include
                else document_bytes(trace))
        del trace, collector
    return text, failed


class _Cancelled(Exception):
    """The streaming client went away: the run stops at its next piece."""


STACK_BYTES = 64 * 1024 * 1024   # a run's thread: deep programs must not reach its end
QUEUE_PIECES = 256               # pieces waiting for a slow reader before the run waits


def trace_events(source: str, limits: Limits = DEFAULT_LIMITS,
                 seed: int | None = None, scheduler: Scheduler = "ready_queue",
                 passes_from: int = 0) -> Iterator[TraceEvent]:
    """The document's pieces as the run produces them: the run works on a thread of its
    own and hands each piece over through a bounded queue (so a slow reader slows the run
    instead of piling up memory); closing the iterator stops the run."""
    pieces: queue.Queue[TraceEvent | None] = queue.Queue(QUEUE_PIECES)
    cancelled = threading.Event()
    clock = RunClock()

    def send(kind: str, piece: Piece) -> None:
        if cancelled.is_set():
            raise _Cancelled
        try:
            pieces.put_nowait((kind, piece))
            return
        except queue.Full:
            pass
        began = time.monotonic()        # the reader's time, not the program's (RunClock)
        try:
            while True:
                if cancelled.is_set():
                    raise _Cancelled
                try:
                    pieces.put((kind, piece), timeout=0.1)
                    return
                except queue.Full:
                    continue
        finally:
            clock.waited += time.monotonic() - began

    def work() -> None:
        try:
            with GC_PAUSE:
                run(source, limits, send, seed, scheduler, passes_from, clock)
        except _Cancelled:
            pass
        finally:
            with contextlib.suppress(queue.Full):
                pieces.put(None, timeout=1)

    thread = _start(work)
    try:
        while True:
            item = pieces.get()
            if item is None:
                return
            yield item
            if item[0] == "done":
                return
    finally:
        cancelled.set()
        thread.join(timeout=5)


_STACK_LOCK = threading.Lock()


def _start(work: Any) -> threading.Thread:
    with _STACK_LOCK:
        previous = threading.stack_size(STACK_BYTES)
        try:
            thread = threading.Thread(target=work, name="trace", daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous)
    return thread


def clear_caches() -> None:
    """Forget what earlier traces taught the layout (graph shapes), so that the next trace
    starts cold, as a program never seen before does."""
    clear_layouts()


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


def quiet_floats() -> np.errstate:
    """inf and nan are values in PyTorch, not warnings: numpy's overflow, invalid-value
    and divide-by-zero warnings are silenced while a program runs."""
    return np.errstate(all="ignore")


__all__ += ["program_info", "run"]
