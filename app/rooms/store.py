"""What every rooms backend provides, and the one rule for what a follower receives.

A room is a record of string fields (the token's hash, the view state, the poll...), a
version that every change increments, and a bounded log of its latest events. A change is
one atomic step: fields updated, version incremented, the event appended to the log and
handed to every follower. Both backends (in-process, Redis) keep exactly this; everything
else (validation, tokens, polls) is the service's (`app.rooms.service`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

LOG_EVENTS = 256        # a follower that reconnects within this many events misses none
KEEPALIVE_S = 15.0      # a comment this often on an idle stream, so that proxies keep it


@dataclass(frozen=True, slots=True)
class Event:
    """One change, as followers receive it: its id is the room's version after it. `wire`
    is the event as Server-Sent Events bytes, made once and sent to every follower (a
    lecture hall's 500 connections share it)."""

    id: int
    kind: str
    data: str           # JSON, on one line
    wire: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        text = (f"event: {self.kind}\nid: {self.id}\ndata: {self.data}\n\n" if self.kind
                else ": ping\n\n")
        object.__setattr__(self, "wire", text.encode())

    def encode(self) -> str:
        return f"{self.id}\n{self.kind}\n{self.data}"

    @staticmethod
    def decode(text: str) -> Event:
        id_, kind, data = text.split("\n", 2)
        return Event(int(id_), kind, data)


KEEPALIVE = Event(-1, "", "")     # not a change: a comment that keeps the connection open


@dataclass(frozen=True, slots=True)
class Record:
    version: int
    fields: Mapping[str, str]
    log: tuple[Event, ...]


class Subscription(ABC):
    """A follower's live events, in order, from the moment it was opened. It ends (the
    iterator stops) when the follower falls too far behind: the client reconnects and
    resumes from the log."""

    @abstractmethod
    def __aiter__(self) -> AsyncIterator[Event]: ...


class RoomStore(ABC):
    """The state backend: in-process (`MemoryStore`) or Redis (`RedisStore`)."""

    idle_s: int

    @abstractmethod
    async def create(self, code: str, fields: Mapping[str, str], kind: str,
                     data: str) -> bool:
        """A new room at version 1 whose first event is (kind, data); False if the code is
        taken."""

    @abstractmethod
    async def exists(self, code: str) -> bool: ...

    @abstractmethod
    async def record(self, code: str) -> Record | None:
        """The room's fields, version and log; None for an unknown or expired room."""

    @abstractmethod
    async def publish(self, code: str, kind: str, data: str,
                      fields: Mapping[str, str] | None = None) -> int | None:
        """Apply one change and send it to every follower; its event id, or None if the
        room is gone. Each change also renews the room's idle expiry."""

    @abstractmethod
    async def end(self, code: str, reason: str) -> bool:
        """Send `ended` to every follower and forget the room."""

    @abstractmethod
    async def answer(self, code: str, poll: str, device: str, node: int) -> None:
        """Keep one answer per device (a later one replaces it)."""

    @abstractmethod
    async def answers(self, code: str, poll: str) -> dict[str, int]:
        """The answers to a poll, by device."""

    @abstractmethod
    def subscribe(self, code: str) -> AbstractAsyncContextManager[Subscription]:
        """Follow a room's live events; counted as a follower while open."""

    @abstractmethod
    async def followers(self, code: str) -> int: ...

    @abstractmethod
    async def close(self) -> None:
        """Release connections and tasks."""


def replay(record: Record, snapshot: list[Event], last_id: int | None) -> list[Event]:
    """What a follower is sent first: after a reconnection, the events it missed if the
    log still holds them all (none when it saw the latest); otherwise the room's current
    state (`snapshot`, all with the current version as id)."""
    if last_id is not None and last_id <= record.version:
        if last_id == record.version:
            return []
        if record.log and record.log[0].id <= last_id + 1:
            return [e for e in record.log if e.id > last_id]
    return snapshot
