"""The rooms' HTTP surface: a presenter's live session that a lecture hall follows.

`POST /api/rooms` creates a room (its join code, control token, join URL and QR code);
the presenter `PUT`s the view state; followers read `GET /api/rooms/{code}/events`
(Server-Sent Events: the current state first, then each change; `Last-Event-ID` resumes
without a loss or a repeat); polls ask "Which node pops next?" at the current frame.
Every control action needs `Authorization: Bearer TOKEN` (403 without it).
"""

from __future__ import annotations

import io
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import segno
from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException, Query, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.sse import EventSourceResponse
from redis.exceptions import RedisError

from app.ops.metrics import Metrics
from app.ops.ratelimit import limited, misses_limited
from app.rooms import codes
from app.rooms.memory import MemoryStore
from app.rooms.models import (
    AnswerReceived,
    AnswerSubmit,
    PollCreate,
    PollCreated,
    Revealed,
    RoomCreate,
    RoomCreated,
    RoomInfo,
    Tally,
    ViewState,
)
from app.rooms.service import RoomError, Rooms
from app.rooms.store import Event, RoomStore
from app.web import api
from app.web.settings import Settings

logger = logging.getLogger("lab.error")
RETRY_MS = 1500          # how soon a follower's browser reconnects after a dropped stream


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    rooms: Rooms | None = getattr(app.state, "rooms", None)
    if rooms is not None:
        await rooms.store.close()


LIMITED = "too many requests from this client: retry after Retry-After"
# Every route here counts the client's wrong codes (app/ops/ratelimit.py: misses_limited).
router = APIRouter(prefix="/api/rooms", tags=["rooms"], lifespan=lifespan,
                   dependencies=[Depends(misses_limited)], responses={
    404: {"description": "no such room (or poll): ended, expired, or a wrong code"},
    429: {"description": LIMITED},
    503: {"description": "the rooms' store (Redis) is unreachable: retry after Retry-After"}})
ROOMS_LIMITED: dict[str, Any] = {"dependencies": [Depends(limited("rooms"))],
                                 "responses": {429: {"description": LIMITED}}}
POLLS_LIMITED: dict[str, Any] = {"dependencies": [Depends(limited("polls"))],
                                 "responses": {429: {"description": LIMITED}}}
CONTROL: dict[int | str, dict[str, Any]] = {403: {"description": "without the room's token"}}
bearer = HTTPBearer(auto_error=False, description="the room's control token")
Token = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def make_store(settings: Settings) -> RoomStore:
    if settings.redis_url:
        from app.rooms.redis_store import RedisStore

        return RedisStore(settings.redis_url, settings.room_idle_expiry_s)
    return MemoryStore(settings.room_idle_expiry_s)


def rooms_of(request: Request) -> Rooms:
    """The app's rooms, made on first use from its settings."""
    state = request.app.state
    if getattr(state, "rooms", None) is None:
        state.rooms = Rooms(make_store(state.settings))
    rooms: Rooms = state.rooms
    return rooms


RoomsDep = Annotated[Rooms, Depends(rooms_of)]


def room_code(code: str) -> str:
    """The code as typed (any case, spaces or dashes); 404 if it cannot be one."""
    normal = codes.normalize(code)
    if normal is None:
        raise HTTPException(404, "no such room: a join code is six letters and digits")
    return normal


Code = Annotated[str, Depends(room_code)]


def _token(credentials: HTTPAuthorizationCredentials | None) -> str | None:
    return credentials.credentials if credentials else None


def _refused(error: RoomError) -> HTTPException:
    return HTTPException(error.status, error.message)


@router.post("", status_code=201, response_model=RoomCreated, **ROOMS_LIMITED)
async def create_room(request: Request, rooms: RoomsDep,
                      body: RoomCreate | None = None) -> RoomCreated:
    """A new room. Keep `token` secret: it is what makes its holder the presenter."""
    code, token = await rooms.create(body.state if body else None)
    return RoomCreated(code=code, token=token, join_url=str(request.url_for("join", code=code)),
                       qr_url=str(request.url_for("room_qr", code=code)))


@router.get("/{code}", response_model=RoomInfo)
async def room(code: Code, rooms: RoomsDep) -> RoomInfo:
    """The room's current state, its open poll and how many follow it now."""
    try:
        return await rooms.info(code)
    except RoomError as e:
        raise _refused(e) from e


async def existing_room(code: Code, rooms: RoomsDep) -> str:
    """404 before a stream starts, for a room that is not (or no longer) there."""
    if not await rooms.exists(code):
        raise HTTPException(404, "no such room: it has ended, expired, or the code is wrong")
    return code


@router.get("/{code}/events", response_class=Response, responses={200: {
    "description": "the room's events as Server-Sent Events",
    "content": {"text/event-stream": {"schema": {"type": "string"}}}}})
async def room_events(
        code: Annotated[str, Depends(existing_room)], rooms: RoomsDep, request: Request,
        last_event_id: Annotated[int | None, Header(ge=0)] = None,
        after: Annotated[int | None, Query(ge=0, description="as Last-Event-ID")] = None,
) -> EventSourceResponse:
    """Server-Sent Events: `state` (the view state), `poll` (a question), `results` (the
    revealed answer), `ended`, each with its `id`. The first events are the current
    state; with `Last-Event-ID` (sent by browsers on reconnection), the events missed
    since. Each event's bytes are made once for every follower (see Event.wire)."""
    events = rooms.events(code, last_event_id if last_event_id is not None else after)
    return EventSourceResponse(_wire(events, request.app.state.metrics, code), headers={
        "Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


async def _wire(events: AsyncIterator[Event], metrics: Metrics,
                code: str) -> AsyncIterator[bytes]:
    """The stream's bytes; if the store fails under it (Redis restarting), the stream ends
    and the browser reconnects after RETRY_MS with Last-Event-ID, missing nothing."""
    yield f"retry: {RETRY_MS}\n\n".encode()
    with metrics.stream("room", code):
        try:
            async for event in events:
                yield event.wire
        except (RedisError, OSError):
            logger.warning("rooms: the store failed under a follower's stream; it will "
                           "reconnect", extra={"room": code}, exc_info=True)


@router.put("/{code}/state", status_code=204, response_class=Response, responses=CONTROL)
async def put_state(code: Code, state: ViewState, token: Token, rooms: RoomsDep) -> Response:
    """The presenter's frame, sent on to every follower."""
    try:
        await rooms.set_state(code, _token(token), state)
    except RoomError as e:
        raise _refused(e) from e
    return Response(status_code=204)


@router.delete("/{code}", status_code=204, response_class=Response, responses=CONTROL)
async def end_room(code: Code, token: Token, rooms: RoomsDep) -> Response:
    """End the session; followers are told."""
    try:
        await rooms.end(code, _token(token))
    except RoomError as e:
        raise _refused(e) from e
    return Response(status_code=204)


@router.post("/{code}/polls", status_code=201, response_model=PollCreated,
             dependencies=POLLS_LIMITED["dependencies"], responses={
                 **CONTROL, 409: {"description": "nothing pops next at the room's frame"},
                 429: {"description": LIMITED + "; or the lab is too busy to trace"}})
async def open_poll(code: Code, token: Token, rooms: RoomsDep, request: Request,
                    body: PollCreate | None = None) -> PollCreated:
    """"Which node pops next?" at the room's frame: the question goes to the followers, the
    answer and its reason only to the presenter, until revealed. 409 where nothing pops
    next; 429 while the server is too busy to trace the program."""
    async def trace(source: str) -> bytes:
        return await api.traced(request, source)

    try:
        return await rooms.open_poll(code, _token(token), trace)
    except api.Busy as e:
        raise HTTPException(429, "the lab is busy: try again in a moment",
                            headers={"Retry-After": "1"}) from e
    except RoomError as e:
        raise _refused(e) from e


@router.post("/{code}/polls/{poll}/answers", status_code=201, response_model=AnswerReceived,
             dependencies=POLLS_LIMITED["dependencies"], responses={
                 **POLLS_LIMITED["responses"], 409: {"description": "the poll is closed"}})
async def answer_poll(code: Code, poll: str, body: AnswerSubmit,
                      rooms: RoomsDep) -> AnswerReceived:
    """A student's answer: one per device (a later one replaces it), never shown to other
    students."""
    try:
        await rooms.answer(code, poll, body)
    except RoomError as e:
        raise _refused(e) from e
    return AnswerReceived(poll=poll, node=body.node)


@router.get("/{code}/polls/{poll}", response_model=Tally,
            dependencies=POLLS_LIMITED["dependencies"],
            responses={**CONTROL, **POLLS_LIMITED["responses"]})
async def poll_tally(code: Code, poll: str, token: Token, rooms: RoomsDep) -> Tally:
    """How the room has answered so far (the presenter's)."""
    try:
        return await rooms.tally(code, _token(token), poll)
    except RoomError as e:
        raise _refused(e) from e


@router.post("/{code}/polls/{poll}/reveal", response_model=Revealed,
             dependencies=POLLS_LIMITED["dependencies"],
             responses={**CONTROL, **POLLS_LIMITED["responses"]})
async def reveal_poll(code: Code, poll: str, token: Token, rooms: RoomsDep) -> Revealed:
    """Close the poll and send the engine's answer, with its reason, to every follower."""
    try:
        return await rooms.reveal(code, _token(token), poll)
    except RoomError as e:
        raise _refused(e) from e


@router.get("/{code}/qr.svg", response_class=Response, name="room_qr",
            responses={200: {"content": {"image/svg+xml": {}}}})
async def room_qr(code: Annotated[str, Depends(existing_room)], request: Request) -> Response:
    """The join URL as a QR code (SVG), made on the server."""
    qr = segno.make(str(request.url_for("join", code=code)), error="m")
    out = io.BytesIO()
    qr.save(out, kind="svg", scale=10, border=2, xmldecl=False, title=f"Join {code}")
    return Response(out.getvalue(), media_type="image/svg+xml",
                    headers={"Cache-Control": "private, max-age=3600"})
