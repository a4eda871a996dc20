"""The JSON API: traces (whole or streamed), presets, health."""

from __future__ import annotations

import asyncio
import re
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from typing import Annotated, TypeVar

from fastapi import APIRouter, Depends, Header, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.sse import EventSourceResponse, ServerSentEvent
from pydantic import BaseModel, Field, field_validator

from app.limits import Limits
from app.ops.metrics import CONTENT_TYPE, Metrics
from app.ops.ratelimit import limited
from app.presets import PRESETS, Preset
from app.trace import (
    Trace,
    TraceEvent,
    document_bytes,
    document_json,
    quiet_floats,
    trace_events,
    trace_json,
)
from app.trace.document import ErrorInfo, Scheduler
from app.web.settings import Settings
from engine.context import FRESH_SEED_BITS, fresh_seed

T = TypeVar("T")

router = APIRouter(prefix="/api", tags=["api"])
TRACE_LIMITED = {"dependencies": [Depends(limited("trace"))],
                 "responses": {429: {"description": "too many traces from this client"}}}


# The largest seed a request may send: the lab's fresh seeds have 53 bits (engine/context.py
# `fresh_seed`), so that a JSON number, read as a double, carries one exactly.
MAX_SEED = 2**FRESH_SEED_BITS - 1
MAX_PASSES_FROM = 1_000_000      # more passes than any run's max_statements allows


def json_integer(value: object) -> object:
    """A seed (or a pass's index) as a JSON integer as JSON Schema means it (`7` or `7.0`),
    never `true` or `"7"` (pydantic's lax mode would take both)."""
    if isinstance(value, bool) or not isinstance(value, int | float | None):
        raise ValueError("a JSON integer is expected here")
    return value


class TraceRequest(BaseModel):
    source: str = Field(
        description="a program in the lab's language (CONTRACT.md)",
        examples=["w = 3.0\nb = 1.0\nx = torch.tensor(2.0)\nloss = (w * x + b) ** 2\n"])
    seed: int | None = Field(None, ge=0, le=MAX_SEED,
                             description="the seed to draw from where the program draws "
                             "without torch.manual_seed (a trace's `seed`, to run it again)")
    scheduler: Scheduler = Field(
        "ready_queue", description="the order of each pass's steps: `ready_queue`, "
        "PyTorch's engine (the default, the one conformance checks), or `topological`, a "
        "reverse DFS post-order run in one pass (seed 000, engine/topological.py); the "
        "graph, node ids and gradients mean the same under both")
    passes_from: int = Field(
        0, ge=0, le=MAX_PASSES_FROM, description="the first pass to keep step by step: the "
        "trace keeps passes in full from this one on, while they stay within the lab's "
        "max_full_passes and max_full_values, and summarises the others (send a summarised "
        "pass's `index`, with the trace's `seed`, to step through that pass)")

    _seed_is_an_integer = field_validator("seed", "passes_from", mode="before")(json_integer)


class Health(BaseModel):
    status: str = "ok"


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


@router.post("/trace", response_model=Trace, **TRACE_LIMITED)  # type: ignore[arg-type]
async def trace(body: TraceRequest, request: Request) -> Response:
    """The whole trace of one program. Rejected programs and PyTorch's errors come back as
    a document with `error` set, not as an HTTP error."""
    try:
        if body.seed is None and body.passes_from == 0:
            document = await traced(request, body.source, body.scheduler)
        else:                # a replay or a later window: neither cached nor shared
            queue: TraceQueue = request.app.state.trace_queue
            with queue.admitted():
                document, _ = await queue.run(trace_json, body.source,
                                              _settings(request).limits(), None, body.seed,
                                              body.scheduler, body.passes_from)
    except Busy:
        request.app.state.metrics.trace("busy")
        return Response(content=BUSY_DOCUMENT, media_type="application/json",
                        headers={"Retry-After": "1"})
    # Already serialised from the Trace model (its schema is the response_model above).
    return Response(content=document, media_type="application/json")


async def traced(request: Request, source: str, scheduler: Scheduler = "ready_queue") -> bytes:
    """The document of `source`, from the cache or traced off the event loop; raises Busy
    past the queue's limit. (The rooms' polls trace the room's program through here.)"""
    limits = _settings(request).limits()
    cache: TraceCache = request.app.state.trace_cache
    document = cache.cached(source, limits, scheduler)
    if document is not None:
        request.app.state.metrics.trace("cached")
    else:
        queue: TraceQueue = request.app.state.trace_queue
        document = await queue.document(cache, source, limits, scheduler)
    return document


class Busy(Exception):
    """More traces are waiting than the queue's limit."""


BUSY_DOCUMENT = document_bytes(Trace(error=ErrorInfo(
    kind="limit", type="BusyError",
    message="The lab is busy tracing other programs: try again in a moment.")))


class TraceQueue:
    """Traces run in a few threads of their own, never on the event loop, and at most
    `limit` more wait for one: past that a request is answered at once with the busy
    document (HTTP 200 with `Retry-After`, an error document like any other, so the page
    shows it), never a 5xx or a hang. A lecture hall sends the same program from many
    seats at once: requests for a program already being traced wait for that one run."""

    def __init__(self, workers: int, limit: int, metrics: Metrics | None = None) -> None:
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="trace")
        self._lock = threading.Lock()
        self._admitted = 0
        self._workers = workers
        self._capacity = workers + limit
        self._metrics = metrics
        self._running: dict[tuple[str, Limits, str], Future[bytes]] = {}

    @contextmanager
    def admitted(self) -> Iterator[None]:
        with self._lock:
            if self._admitted >= self._capacity:
                raise Busy
            self._admitted += 1
            self._count()
        try:
            yield
        finally:
            with self._lock:
                self._admitted -= 1
                self._count()

    def _count(self) -> None:
        if self._metrics is not None:
            self._metrics.queue_depth.set(max(0, self._admitted - self._workers))

    async def run(self, work: Callable[..., T], *args: object) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, work, *args)

    def submit(self, work: Callable[..., T], *args: object) -> Future[T]:
        return self._executor.submit(work, *args)

    async def document(self, cache: TraceCache, source: str, limits: Limits,
                       scheduler: Scheduler = "ready_queue") -> bytes:
        key = (source, limits, scheduler)
        with self._lock:
            running = self._running.get(key)
        if running is None:
            with self.admitted():
                with self._lock:
                    running = self._running.get(key)
                    fresh = running is None
                    if running is None:
                        running = self._running[key] = self._executor.submit(
                            cache, source, limits, scheduler)
                if fresh:   # (outside the lock: a future already done calls back at once)
                    running.add_done_callback(lambda _: self._forget(key))
                return await asyncio.shield(asyncio.wrap_future(running))
        # shielded: one client that goes away must not cancel the trace the others await
        return await asyncio.shield(asyncio.wrap_future(running))

    def _forget(self, key: tuple[str, Limits, str]) -> None:
        with self._lock:
            self._running.pop(key, None)

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


class TraceCache:
    """Recent documents by (source, limits). A trace is a pure function of its program (a
    fresh run numbers from 0 every time), and a lecture hall sends the same preset from
    every seat at once: those requests are answered without running it again. Only
    documents up to MAX_BYTES are kept; the cache holds ENTRIES of them at most."""

    ENTRIES = 128
    MAX_BYTES = 256_000

    def __init__(self, metrics: Metrics | None = None) -> None:
        self._metrics = metrics
        self._lock = threading.Lock()
        self._documents: OrderedDict[tuple[str, Limits, str], bytes] = OrderedDict()

    def cached(self, source: str, limits: Limits,
               scheduler: Scheduler = "ready_queue") -> bytes | None:
        with self._lock:
            document = self._documents.get((source, limits, scheduler))
            if document is not None:
                self._documents.move_to_end((source, limits, scheduler))
            return document

    def __call__(self, source: str, limits: Limits, scheduler: Scheduler = "ready_queue") -> bytes:
        document, failed = trace_json(source, limits, scheduler=scheduler)
        if self._metrics is not None:
            self._metrics.trace(outcome(document) if failed else "ok")
        if len(document) <= self.MAX_BYTES:
            with self._lock:
                self._documents[(source, limits, scheduler)] = document
                if len(self._documents) > self.ENTRIES:
                    self._documents.popitem(last=False)
        return document


def outcome(document: bytes) -> str:
    """The kind of a failed document's error (the top-level `error`, the last one)."""
    at = document.rfind(b'"error":{"kind":"')
    if at < 0:
        return "error"
    start = at + len(b'"error":{"kind":"')
    return document[start:document.find(b'"', start)].decode() or "error"


async def _held() -> AsyncIterator[ExitStack]:
    """What a stream holds (its place in the queue, its count among open streams, its run),
    released when the response ends: FastAPI never closes a generator that a client left
    while it waited at a `yield` (only the cycle collector would, much later), and each
    one kept a place in the trace queue until the queue answered everyone busy."""
    with ExitStack() as held:
        yield held


EVENT_ID = re.compile(r"^([0-9]{1,16})-([0-9]{1,9})$")


def _resume_point(last_event_id: Annotated[str, Header(
        pattern=r"^([0-9]{1,16}-[0-9]{1,9})?$", description="the `id` of the last event "
        "received, to resume a stream that broke after it")] = "") -> tuple[int, int] | None:
    """(seed, index) of the last event a client received, from its `Last-Event-ID` (a
    dependency, so that a bad one is refused before the stream starts)."""
    match = EVENT_ID.match(last_event_id)
    if match is None:
        return None
    if int(match[1]) > MAX_SEED:
        raise RequestValidationError([{"loc": ("header", "last-event-id"), "type": "value_error",
                                       "msg": f"the seed is above {MAX_SEED}", "input":
                                       last_event_id}])
    return int(match[1]), int(match[2])


@router.post("/trace/stream", response_class=EventSourceResponse,
             **TRACE_LIMITED)  # type: ignore[arg-type]
async def trace_stream(body: TraceRequest, request: Request,
                       held: Annotated[ExitStack, Depends(_held)],
                       resume: Annotated[tuple[int, int] | None, Depends(_resume_point)],
                       ) -> AsyncIterator[ServerSentEvent]:
    """The same trace as Server-Sent Events, each sent as the engine produces it:
    `pass`, `graph`, `dependencies`, then one `step` per ready-queue pop, and finally
    `done` (a Trace with grads and error; its passes are empty, having been streamed).

    Each event's `id` is `SEED-INDEX`: the seed the run draws from if the program draws
    without `manual_seed` (chosen here, as a fresh process would), and the event's place.
    A client whose stream broke (a worker restarted, a network change) sends the same
    request with `Last-Event-ID`: the program runs again from that seed, so the same
    events, and the stream goes on after that one. Any server process can answer it."""
    limits = _settings(request).limits()
    queue: TraceQueue = request.app.state.trace_queue
    metrics: Metrics = request.app.state.metrics
    if resume is not None:
        seed, last = resume
    else:
        seed, last = (fresh_seed() if body.seed is None else body.seed), -1
    try:
        with held:
            held.enter_context(queue.admitted())
            held.enter_context(metrics.stream("trace"))
            pieces = _Pieces(trace_events(body.source, limits, seed=seed,
                                          scheduler=body.scheduler,
                                          passes_from=body.passes_from), queue)
            held.callback(pieces.close)
            index = -1
            while (piece := await pieces.next()) is not None:
                index += 1
                kind, model = piece
                if kind == "done":
                    error = getattr(model, "error", None)
                    metrics.trace(error.kind if error is not None else "ok")
                if index > last:
                    yield ServerSentEvent(event=kind, raw_data=document_json(model),
                                          id=f"{seed}-{index}")
    except Busy:
        metrics.trace("busy")
        yield ServerSentEvent(event="done", raw_data=BUSY_DOCUMENT.decode())


def _next_piece(events: Iterator[TraceEvent]) -> TraceEvent | None:
    with quiet_floats():
        return next(events, None)


class _Pieces:
    """A run's pieces, each taken off the event loop. A client that goes away closes the
    run (which stops it at its next piece) once the piece being taken has come: closed on a
    thread of its own, since closing waits for the run's thread."""

    def __init__(self, events: Iterator[TraceEvent], queue: TraceQueue) -> None:
        self._events = events
        self._queue = queue
        self._pending: Future[TraceEvent | None] | None = None

    async def next(self) -> TraceEvent | None:
        self._pending = self._queue.submit(_next_piece, self._events)
        return await asyncio.wrap_future(self._pending)

    def close(self) -> None:
        close = getattr(self._events, "close", None)    # a generator's: stops the run

        def close_run(_: object = None) -> None:
            if close is not None:
                threading.Thread(target=close, name="trace-close", daemon=True).start()

        if self._pending is not None and not self._pending.done():
            self._pending.add_done_callback(close_run)
        else:
            close_run()


@router.get("/presets", response_model=list[Preset])
async def presets() -> list[Preset]:
    """The presets, each with its one-line teaching goal."""
    return PRESETS


health_router = APIRouter(tags=["health"])


@health_router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    return Health()


@health_router.get("/metrics", response_class=Response, responses={200: {
    "description": "Prometheus' text format", "content": {CONTENT_TYPE: {
        "schema": {"type": "string"}}}}})
async def metrics(request: Request) -> Response:
    """Requests and latency per route, traces by outcome, open streams, rooms and their
    followers, the trace queue's depth (app/ops/metrics.py)."""
    collected: Metrics = request.app.state.metrics
    return Response(collected.exposition(), media_type=CONTENT_TYPE)
