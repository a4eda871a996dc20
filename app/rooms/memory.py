"""The in-process backend: rooms in a dict, one server process, nothing to set up.

Followers' queues belong to the event loop that opened them; a change made on another
loop (a test client's thread) is handed over thread-safely.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from app.rooms.store import (
    KEEPALIVE,
    KEEPALIVE_S,
    LOG_EVENTS,
    Event,
    Record,
    RoomStore,
    Subscription,
)

QUEUE_EVENTS = LOG_EVENTS   # a follower this far behind is cut off, to resume from the log


class LocalQueue(Subscription):
    """One follower's events in this process (both backends hand them over through it)."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue()

    def put(self, event: Event | None) -> None:
        """From any thread; None ends the subscription (the follower fell behind)."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self._put(event)
        else:
            self.loop.call_soon_threadsafe(self._put, event)

    def _put(self, event: Event | None) -> None:
        if event is not None and event is not KEEPALIVE and self.queue.qsize() >= QUEUE_EVENTS:
            event = None
        self.queue.put_nowait(event)

    async def __aiter__(self) -> AsyncIterator[Event]:
        while (event := await self.queue.get()) is not None:
            yield event


@dataclass
class _Room:
    fields: dict[str, str]
    expires: float
    version: int = 0
    log: deque[Event] = field(default_factory=lambda: deque(maxlen=LOG_EVENTS))
    followers: set[LocalQueue] = field(default_factory=set)
    answers: dict[str, dict[str, int]] = field(default_factory=dict)


class MemoryStore(RoomStore):
    SWEEP_S = 5.0

    def __init__(self, idle_s: int) -> None:
        self.idle_s = idle_s
        self._rooms: dict[str, _Room] = {}
        self._lock = threading.Lock()
        self._sweeper: asyncio.Task[None] | None = None

    def _live(self, code: str) -> _Room | None:
        room = self._rooms.get(code)
        if room is not None and room.expires <= time.monotonic():
            self._expire(code)
            return None
        return room

    def _expire(self, code: str) -> None:
        room = self._rooms.pop(code)
        self._send(room, Event(room.version + 1, "ended", '{"reason":"expired"}'))

    @staticmethod
    def _send(room: _Room, event: Event) -> None:
        for follower in list(room.followers):
            follower.put(event)

    def _change(self, room: _Room, kind: str, data: str, fields: Mapping[str, str]) -> int:
        room.fields.update(fields)
        room.version += 1
        event = Event(room.version, kind, data)
        room.log.append(event)
        room.expires = time.monotonic() + self.idle_s
        self._send(room, event)
        return room.version

    async def create(self, code: str, fields: Mapping[str, str], kind: str, data: str) -> bool:
        self._start_sweeper()
        with self._lock:
            if self._live(code) is not None:
                return False
            room = self._rooms[code] = _Room(fields={}, expires=0.0)
            self._change(room, kind, data, fields)
            return True

    async def exists(self, code: str) -> bool:
        with self._lock:
            return self._live(code) is not None

    async def record(self, code: str) -> Record | None:
        with self._lock:
            room = self._live(code)
            if room is None:
                return None
            return Record(room.version, dict(room.fields), tuple(room.log))

    async def publish(self, code: str, kind: str, data: str,
                      fields: Mapping[str, str] | None = None) -> int | None:
        with self._lock:
            room = self._live(code)
            return None if room is None else self._change(room, kind, data, fields or {})

    async def end(self, code: str, reason: str) -> bool:
        with self._lock:
            room = self._live(code)
            if room is None:
                return False
            del self._rooms[code]
            self._send(room, Event(room.version + 1, "ended", f'{{"reason":"{reason}"}}'))
            return True

    async def answer(self, code: str, poll: str, device: str, node: int) -> None:
        with self._lock:
            room = self._live(code)
            if room is not None:
                room.answers.setdefault(poll, {})[device] = node

    async def answers(self, code: str, poll: str) -> dict[str, int]:
        with self._lock:
            room = self._live(code)
            return dict(room.answers.get(poll, {})) if room else {}

    @asynccontextmanager
    async def subscribe(self, code: str) -> AsyncIterator[Subscription]:
        queue = LocalQueue()
        with self._lock:
            room = self._live(code)
            if room is not None:
                room.followers.add(queue)
        try:
            yield queue
        finally:
            with self._lock:
                if room is not None:
                    room.followers.discard(queue)

    async def followers(self, code: str) -> int:
        with self._lock:
            room = self._live(code)
            return len(room.followers) if room else 0

    def _start_sweeper(self) -> None:
        """Rooms past their idle time end (and their followers are told) within SWEEP_S."""
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep())

    async def _sweep(self) -> None:
        """Also sends every follower a keep-alive comment every KEEPALIVE_S."""
        ticks = 0
        while self._rooms:
            await asyncio.sleep(self.SWEEP_S)
            ticks += 1
            with self._lock:
                for code in list(self._expired()):
                    self._expire(code)
                if ticks * self.SWEEP_S >= KEEPALIVE_S:
                    ticks = 0
                    for room in self._rooms.values():
                        self._send(room, KEEPALIVE)

    def _expired(self) -> Iterator[str]:
        now = time.monotonic()
        return (code for code, room in self._rooms.items() if room.expires <= now)

    async def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
