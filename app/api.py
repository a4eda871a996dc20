"""The JSON API: traces (whole or streamed), presets, health."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from fastapi import APIRouter, Request, Response
from fastapi.sse import EventSourceResponse, ServerSentEvent
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from app.limits import Limits
from app.presets import PRESETS, Preset
from app.settings import Settings
from app.trace import Trace, TraceEvent, piece_json, quiet_floats, run_source, trace_events

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
    document = await run_in_threadpool(_trace_json, body.source, limits)
    # Already serialised from the Trace model (its schema is the response_model above).
    return Response(content=document, media_type="application/json")


def _trace_json(source: str, limits: Limits) -> str:
    return run_source(source, limits).model_dump_json()


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
        yield ServerSentEvent(event=kind, raw_data=piece_json(model))


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
