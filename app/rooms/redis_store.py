"""The Redis backend: any number of server processes, on any number of machines, serve one
room. A room is a hash and a log list with the idle expiry on both; each change is one
Lua script (fields, version, log, expiry and PUBLISH at once, so every process sees the
changes in version order); each process holds one pattern subscription and hands the
messages to its own followers. Followers are counted in a sorted set whose members each
process renews while their connections last.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import redis.asyncio as aioredis

from app.rooms.memory import LocalQueue
from app.rooms.store import KEEPALIVE, LOG_EVENTS, Event, Record, RoomStore, Subscription

logger = logging.getLogger(__name__)
PREFIX = "lab:room:"

_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'version', 1)
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('DEL', KEYS[2])
redis.call('RPUSH', KEYS[2], '1\\n' .. ARGV[2] .. '\\n' .. ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 1
"""
_PUBLISH = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local v = redis.call('HINCRBY', KEYS[1], 'version', 1)
for i = 6, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
local entry = v .. '\\n' .. ARGV[4] .. '\\n' .. ARGV[5]
redis.call('RPUSH', KEYS[2], entry)
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[2]), -1)
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
redis.call('PUBLISH', ARGV[3], entry)
return v
"""
_END = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local v = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('PUBLISH', ARGV[1], v .. '\\nended\\n' .. ARGV[2])
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return 1
"""


def _keys(code: str) -> tuple[str, str, str]:
    return PREFIX + code, PREFIX + code + ":log", PREFIX + code + ":followers"


class RedisStore(RoomStore):
    FOLLOWER_TTL_S = 30.0
    MAX_CONNECTIONS = 50

    def __init__(self, url: str, idle_s: int) -> None:
        self.idle_s = idle_s
        # A hall's followers connect at once: past MAX_CONNECTIONS they wait for one.
        pool = aioredis.BlockingConnectionPool.from_url(
            url, decode_responses=True, max_connections=self.MAX_CONNECTIONS, timeout=20)
        self._redis: Any = aioredis.Redis(connection_pool=pool)
        self._create = self._redis.register_script(_CREATE)
        self._publish = self._redis.register_script(_PUBLISH)
        self._end = self._redis.register_script(_END)
        self._id = uuid.uuid4().hex[:12]
        self._numbers = itertools.count()
        self._local: dict[str, dict[str, LocalQueue]] = {}
        self._listening: asyncio.Future[None] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._beat_s = max(0.5, min(10.0, idle_s / 4))

    async def create(self, code: str, fields: Mapping[str, str], kind: str, data: str) -> bool:
        pairs = [x for item in fields.items() for x in item]
        keys = _keys(code)[:2]
        return bool(await self._create(keys=keys, args=[self.idle_s, kind, data, *pairs]))

    async def exists(self, code: str) -> bool:
        return bool(await self._redis.exists(PREFIX + code))

    async def record(self, code: str) -> Record | None:
        room, log, _ = _keys(code)
        async with self._redis.pipeline(transaction=True) as pipe:
            fields, entries = await pipe.hgetall(room).lrange(log, 0, -1).execute()
        if not fields:
            return None
        version = int(fields.pop("version"))
        return Record(version, fields, tuple(Event.decode(e) for e in entries))

    async def publish(self, code: str, kind: str, data: str,
                      fields: Mapping[str, str] | None = None) -> int | None:
        pairs = [x for item in (fields or {}).items() for x in item]
        version = await self._publish(keys=_keys(code)[:2], args=[
            self.idle_s, LOG_EVENTS, PREFIX + code, kind, data, *pairs])
        return None if int(version) < 0 else int(version)

    async def end(self, code: str, reason: str) -> bool:
        data = f'{{"reason":"{reason}"}}'
        return bool(await self._end(keys=_keys(code), args=[PREFIX + code, data]))

    async def answer(self, code: str, poll: str, device: str, node: int) -> None:
        key = f"{PREFIX}{code}:answers:{poll}"
        async with self._redis.pipeline(transaction=True) as pipe:
            await pipe.hset(key, device, node).expire(key, self.idle_s).execute()

    async def answers(self, code: str, poll: str) -> dict[str, int]:
        found = await self._redis.hgetall(f"{PREFIX}{code}:answers:{poll}")
        return {device: int(node) for device, node in found.items()}

    @asynccontextmanager
    async def subscribe(self, code: str) -> AsyncIterator[Subscription]:
        await self._listen()
        queue = LocalQueue()
        member = f"{self._id}:{next(self._numbers)}"
        self._local.setdefault(code, {})[member] = queue
        followers = _keys(code)[2]
        try:
            await self._redis.zadd(followers, {member: time.time() + self.FOLLOWER_TTL_S})
            yield queue
        finally:
            local = self._local.get(code, {})
            local.pop(member, None)
            if not local:
                self._local.pop(code, None)
            with contextlib.suppress(Exception):
                await self._redis.zrem(followers, member)

    async def followers(self, code: str) -> int:
        key = _keys(code)[2]
        async with self._redis.pipeline(transaction=True) as pipe:
            _, count = await pipe.zremrangebyscore(key, "-inf", time.time()).zcard(key).execute()
        return int(count)

    async def _listen(self) -> None:
        """Start this process's pattern subscription once, and wait until Redis confirms it:
        from then on every change reaches the local followers."""
        if self._listening is None:
            self._listening = asyncio.get_running_loop().create_future()
            self._tasks.append(asyncio.create_task(self._read()))
            self._tasks.append(asyncio.create_task(self._beat()))
        while not self._listening.done():
            await asyncio.shield(self._listening)

    async def _read(self) -> None:
        while True:
            pubsub = self._redis.pubsub()
            try:
                await pubsub.psubscribe(PREFIX + "*")
                async for message in pubsub.listen():
                    self._deliver(message)
            except asyncio.CancelledError:
                raise
            except Exception:       # the connection dropped: followers resume from the log
                logger.warning("rooms: Redis subscription lost; reconnecting", exc_info=True)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            self._deaf()
            await asyncio.sleep(0.5)

    def _deaf(self) -> None:
        """Not subscribed: followers arriving now wait in _listen for the next subscription
        (else they would miss what is published before it), those following are cut off
        to resume from the log."""
        if self._listening is not None and self._listening.done():
            self._listening = asyncio.get_running_loop().create_future()
        self._cut_off_all()

    def _deliver(self, message: dict[str, Any]) -> None:
        if message["type"] == "psubscribe":
            if self._listening is not None and not self._listening.done():
                self._listening.set_result(None)
            else:   # redis-py reconnected and subscribed again by itself: changes made
                self._cut_off_all()     # meanwhile reached no follower; they resume
        elif message["type"] == "pmessage":
            code = message["channel"][len(PREFIX):]
            event = Event.decode(message["data"])
            for queue in list(self._local.get(code, {}).values()):
                queue.put(event)

    def _cut_off_all(self) -> None:
        for local in self._local.values():
            for queue in local.values():
                queue.put(None)

    async def _beat(self) -> None:
        """Renew this process's followers and tell them when their room has expired."""
        while True:
            await asyncio.sleep(self._beat_s)
            try:
                for code, local in list(self._local.items()):
                    room, _, followers = _keys(code)
                    if not await self._redis.exists(room):
                        event = Event(2**62, "ended", '{"reason":"expired"}')
                        for queue in list(local.values()):
                            queue.put(event)
                        continue
                    for queue in list(local.values()):
                        queue.put(KEEPALIVE)
                    deadline = time.time() + self.FOLLOWER_TTL_S
                    await self._redis.zadd(followers, dict.fromkeys(local, deadline))
                    await self._redis.expire(followers, self.idle_s)
            except Exception:
                logger.warning("rooms: Redis heartbeat failed", exc_info=True)

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                await task
        await self._redis.aclose(close_connection_pool=True)
