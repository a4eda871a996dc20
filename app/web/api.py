"""The JSON API: traces (whole or streamed), presets, health."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator

from fastapi import APIRouter, Request, Response
from fastapi.sse import EventSourceResponse, ServerSentEvent
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from app.limits import Limits
from app.presets import PRESETS, Preset
from app.trace import Trace, TraceEvent, document_json, quiet_floats, trace_events, trace_json
from app.web.settings import Settings

router = APIRouter(prefix="/api", tags=["api"])


class TraceRequest(BaseModel):
    source: str = Field(
        description="a program in the lab's language (CONTRACT.md)",
        examples=["w = 3.0\nb = 1.0\nx = torch.tensor(2.0)\nloss = (w * x + b) ** 2\n"])


class Health(BaseModel):
    status: str = "ok"


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


@router.post("/trace", response_model=Trace)
async def trace(body: TraceRequest, request: Request) -> Response:
    """The whole trace of one program. Rejected programs and PyTorch's errors come back as
    a document with `error` set, not as an HTTP error."""
    limits = _settings(request).limits()
    cache: TraceCache = request.app.state.trace_cache
    document = cache.cached(body.source, limits)
    if document is None:
        document = await run_in_threadpool(cache, body.source, limits)
    # Already serialised from the Trace model (its schema is the response_model above).
    return Response(content=document, media_type="application/json")


class TraceCache:
    """Recent documents by (source, limits). A trace is a pure function of its program (a
    fresh run numbers from 0 every time), and a lecture hall sends the same preset from
    every seat at once: those requests are answered without running it again. Only
    documents up to MAX_BYTES are kept; the cache holds ENTRIES of them at most."""

    ENTRIES = 128
    MAX_BYTES = 256_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._documents: OrderedDict[tuple[str, Limits], bytes] = OrderedDict()

    def cached(self, source: str, limits: Limits) -> bytes | None:
        with self._lock:
            document = self._documents.get((source, limits))
            if document is not None:
                self._documents.move_to_end((source, limits))
            return document

    def __call__(self, source: str, limits: Limits) -> bytes:
        document, _ = trace_json(source, limits)
        if len(document) <= self.MAX_BYTES:
            with self._lock:
                self._documents[(source, limits)] = document
                if len(self._documents) > self.ENTRIES:
                    self._documents.popitem(last=False)
        return document


@router.post("/trace/stream", response_class=EventSourceResponse)
async def trace_stream(body: TraceRequest, request: Request) -> AsyncIterator[ServerSentEvent]:
    """The same trace as Server-Sent Events, each sent as the engine produces it:
    `pass`, `graph`, `dependencies`, then one `step` per ready-queue pop, and finally
    `done` (a Trace with grads and error; its passes are empty, having been streamed)."""
    limits = _settings(request).limits()
    events = trace_events(body.source, limits)
    while True:
        piece = await run_in_threadpool(_next_piece, events)
        if piece is None:
            return
        kind, model = piece
        yield ServerSentEvent(event=kind, raw_data=document_json(model))


def _next_piece(events: Iterator[TraceEvent]) -> TraceEvent | None:
    with quiet_floats():
        return next(events, None)


@router.get("/presets", response_model=list[Preset])
async def presets() -> list[Preset]:
    """The presets, each with its one-line teaching goal."""
    return PRESETS


health_router = APIRouter(tags=["health"])


@health_router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    return Health()
