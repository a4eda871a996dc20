"""The rooms' rules, over either backend: who may do what, what a poll asks, and what a
follower is sent, in which order.

The presenter holds the token (only its hash is stored; compared in constant time); every
control action needs it. Followers get the current state at once, then every change in
order; after a reconnection (`Last-Event-ID`), the changes they missed, none twice.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson

from app.rooms import codes
from app.rooms.models import (
    AnswerSubmit,
    PollCreated,
    Question,
    Revealed,
    RoomInfo,
    Tally,
    ViewState,
)
from app.rooms.polls import next_pop
from app.rooms.store import KEEPALIVE, Event, Record, RoomStore, replay

TraceFunction = Callable[[str], Awaitable[bytes]]


class RoomError(Exception):
    """A request the room refuses; `status` is the HTTP status the routes answer."""

    status = 422

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(RoomError):
    status = 404


class Forbidden(RoomError):
    status = 403


class Conflict(RoomError):
    status = 409


def _state_json(state: ViewState | None) -> str:
    return "null" if state is None else state.model_dump_json(by_alias=True)


def _frame(state: ViewState) -> str:
    return orjson.dumps([codes.token_hash(state.source), state.pass_, state.step]).decode()


class Rooms:
    def __init__(self, store: RoomStore) -> None:
        self.store = store

    async def create(self, state: ViewState | None) -> tuple[str, str]:
        token = codes.new_token()
        fields = {"token": codes.token_hash(token), "state": _state_json(state), "poll": "",
                  "frame": "", "answer": "", "revealed": ""}
        for _ in range(16):
            code = codes.new_code()
            if await self.store.create(code, fields, "state", fields["state"]):
                return code, token
        raise Conflict("no free join code: try again")

    async def _record(self, code: str) -> Record:
        record = await self.store.record(code)
        if record is None:
            raise NotFound("no such room: it has ended, expired, or the code is wrong")
        return record

    async def _control(self, code: str, token: str | None) -> Record:
        record = await self._record(code)
        if not codes.token_matches(token, record.fields["token"]):
            raise Forbidden("only the presenter (with the room's token) can do this")
        return record

    async def exists(self, code: str) -> bool:
        return await self.store.exists(code)

    async def info(self, code: str) -> RoomInfo:
        record = await self._record(code)
        f = record.fields
        return RoomInfo(
            code=code, version=record.version,
            state=ViewState.model_validate_json(f["state"]) if f["state"] != "null" else None,
            poll=Question.model_validate_json(f["poll"]) if f["poll"] else None,
            revealed=Revealed.model_validate_json(f["revealed"]) if f["revealed"] else None,
            followers=await self.store.followers(code), idle_expiry_s=self.store.idle_s)

    async def set_state(self, code: str, token: str | None, state: ViewState) -> None:
        record = await self._control(code, token)
        fields = {"state": _state_json(state)}
        if record.fields["frame"] and record.fields["frame"] != _frame(state):
            fields.update(poll="", frame="", answer="", revealed="")   # the frame moved on
        await self._publish(code, "state", fields["state"], fields)

    async def _publish(self, code: str, kind: str, data: str, fields: dict[str, str]) -> int:
        version = await self.store.publish(code, kind, data, fields)
        if version is None:
            raise NotFound("no such room: it has ended or expired")
        return version

    async def open_poll(self, code: str, token: str | None, trace: TraceFunction) -> PollCreated:
        """"Which node pops next?" at the room's current frame, from its program's trace."""
        record = await self._control(code, token)
        if record.fields["state"] == "null":
            raise Conflict("the room shows no program yet")
        state = ViewState.model_validate_json(record.fields["state"])
        document: dict[str, Any] = orjson.loads(await trace(state.source))
        asked = next_pop(document, state.pass_, state.step, secrets.token_hex(4))
        if asked is None:
            raise Conflict("nothing pops next at this frame: step to one where the ready "
                           "queue holds a node")
        question, answer = asked
        data = question.model_dump_json(by_alias=True)
        await self._publish(code, "poll", data, {
            "poll": data, "frame": _frame(state), "answer": answer.model_dump_json(),
            "revealed": ""})
        return PollCreated(question=question, answer=answer)

    async def _poll(self, record: Record, poll: str) -> Question:
        current = record.fields["poll"]
        question = Question.model_validate_json(current) if current else None
        if question is None or question.id != poll:
            raise NotFound("no such poll: the presenter has moved on")
        return question

    async def answer(self, code: str, poll: str, submit: AnswerSubmit) -> None:
        record = await self._record(code)
        question = await self._poll(record, poll)
        if record.fields["revealed"]:
            raise Conflict("this poll is closed: the answer has been revealed")
        if submit.node not in {c.node for c in question.candidates}:
            raise RoomError("that node is not one of the poll's candidates")
        await self.store.answer(code, poll, submit.device, submit.node)

    async def tally(self, code: str, token: str | None, poll: str) -> Tally:
        record = await self._control(code, token)
        question = await self._poll(record, poll)
        answers = await self.store.answers(code, poll)
        counts = {str(c.node): 0 for c in question.candidates}
        for node in answers.values():
            counts[str(node)] = counts.get(str(node), 0) + 1
        return Tally(poll=poll, answers=len(answers), counts=counts,
                     revealed=bool(record.fields["revealed"]))

    async def reveal(self, code: str, token: str | None, poll: str) -> Revealed:
        record = await self._control(code, token)
        await self._poll(record, poll)
        if record.fields["revealed"]:
            return Revealed.model_validate_json(record.fields["revealed"])
        revealed = Revealed.model_validate_json(
            f'{{"poll": "{poll}", "answer": {record.fields["answer"]}}}')
        data = revealed.model_dump_json()
        await self._publish(code, "results", data, {"revealed": data})
        return revealed

    async def end(self, code: str, token: str | None) -> None:
        await self._control(code, token)
        await self.store.end(code, "ended")

    async def events(self, code: str, last_id: int | None) -> AsyncIterator[Event]:
        """The follower's stream: what it missed or the current state, then each change as
        it happens, ending after `ended` (or when it falls too far behind, to resume)."""
        async with self.store.subscribe(code) as live:
            record = await self.store.record(code)
            if record is None:
                yield Event(last_id or 0, "ended", '{"reason":"expired"}')
                return
            sent = last_id if last_id is not None and last_id <= record.version else 0
            for event in replay(record, snapshot(record), last_id):
                yield event
                sent = event.id
            async for event in live:
                if event is KEEPALIVE:
                    yield event
                    continue
                if event.kind == "ended":
                    yield Event(max(event.id, sent + 1), event.kind, event.data)
                    return
                if event.id <= sent:
                    continue
                if event.id > sent + 1:     # a change was lost on the way: fill in from the log
                    record = await self._record(code)
                    for missed in replay(record, snapshot(record), sent):
                        yield missed
                        sent = missed.id
                    if event.id <= sent:
                        continue
                yield event
                sent = event.id


def snapshot(record: Record) -> list[Event]:
    """The room's current state as events, all with its current version as id."""
    f, v = record.fields, record.version
    events = [Event(v, "state", f["state"])]
    if f["poll"]:
        events.append(Event(v, "poll", f["poll"]))
    if f["revealed"]:
        events.append(Event(v, "results", f["revealed"]))
    return events
