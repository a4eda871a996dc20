"""Redis restarted under a live room (issue 16, faults): what the lab acknowledged survives.

A presenter's frame is acknowledged when `PUT /api/rooms/CODE/state` answers 204, which
it does only once Redis has answered the change's script; with `appendfsync always` (as
compose.yaml runs it) Redis has written the change to its append-only file before it
answers. So here Redis is killed with SIGKILL (no chance to save anything on the way
out) and started again on the same files: every acknowledged frame is there, the
presenter goes on, and followers resume from Last-Event-ID. While Redis is down, the
rooms' routes answer the documented 503 with Retry-After, and nothing else is a 5xx.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import _wait_until, free_port
from tests.test_rooms import WORKED, Event, Hall


@dataclass
class Redis:
    """A redis-server persisting every write before it answers, restartable on its port
    and its files."""

    directory: Path
    port: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
             str(self.directory), "--save", "", "--appendonly", "yes",
             "--appendfsync", "always"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_until(self.answers, self.process, "redis-server")

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[Redis]:
    if shutil.which("redis-server") is None and not Path("/usr/bin/redis-server").exists():
        pytest.skip("redis-server is missing: this test restarts a real one "
                    "(apt-get install redis-server)")
    server = Redis(tmp_path, free_port())
    server.start()
    yield server
    if server.process is not None and server.process.poll() is None:
        server.process.terminate()
        server.process.wait(timeout=10)


@dataclass
class Follower:
    """A follower as a browser's EventSource is one: when its stream ends, it connects
    again with Last-Event-ID (the server asks for 1.5 s; here at once)."""

    hall: Hall
    code: str
    server: int
    last_id: int | None = None
    reconnections: int = 0

    def __post_init__(self) -> None:
        self.stream = self.hall.follow(self.code, self.server, self.last_id)

    def next(self) -> Event:
        for _ in range(5):
            try:
                event = self.stream.next()
            except AssertionError:          # the stream ended: resume
                self.reconnections += 1
                self.stream = self.hall.follow(self.code, self.server, self.last_id)
                continue
            self.last_id = event.id
            return event
        raise AssertionError("the follower could not resume")


def test_acknowledged_frames_survive_a_redis_restart_and_followers_resume(
        redis: Redis, app_server: Callable[..., str]) -> None:
    presenter, other = app_server(redis_url=redis.url), app_server(redis_url=redis.url)
    hall = Hall(presenter, [other, presenter])
    code, token = hall.create()
    follower = hall.follow(code, 0)
    seen = follower.next()
    for step in (1, 2):
        hall.put(code, token, step)                   # 204: acknowledged
    seen = [follower.next() for _ in range(2)][-1]
    assert seen.data["step"] == 2
    acknowledged = httpx.get(f"{presenter}/api/rooms/{code}").json()

    redis.kill()
    with pytest.raises(AssertionError, match="the stream ended"):
        follower.next(timeout=15)                     # the follower's stream ends: it retries
    down = [
        hall.http.put(f"{presenter}/api/rooms/{code}/state", headers=token,
                      json={"source": WORKED.source, "pass": 0, "step": 5}),
        httpx.get(f"{other}/api/rooms/{code}"),
        httpx.get(f"{other}/api/rooms/{code}/events"),
        httpx.post(f"{presenter}/api/rooms", json={}),
    ]
    assert [r.status_code for r in down] == [503] * 4, [r.text for r in down]
    assert all(r.headers.get("retry-after") and "Redis" in r.json()["detail"] for r in down)
    traced = httpx.post(f"{other}/api/trace", json={"source": WORKED.source})
    assert traced.status_code == 200 and traced.json()["error"] is None, "tracing goes on"

    redis.start()                                     # the same port and files
    statuses = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:                # the pools reconnect on their own
        statuses.append((back := httpx.get(f"{presenter}/api/rooms/{code}")).status_code)
        if back.status_code == 200:
            break
        time.sleep(0.2)
    assert set(statuses) <= {200, 503} and statuses[-1] == 200, statuses
    info = back.json()
    assert (info["version"], info["state"]) == (acknowledged["version"], acknowledged["state"])
    assert info["state"]["step"] == 2, "every acknowledged frame is there, no unacknowledged one"

    hall.put(code, token, 3)                          # the presenter goes on
    resumed = Follower(hall, code, 0, seen.id)
    got = resumed.next()
    assert (got.kind, got.id, got.data["step"]) == ("state", seen.id + 1, 3)
    late = Follower(hall, code, 1)
    assert late.next().data["step"] == 3, "a new follower lands on the current frame"
    hall.put(code, token, 4)
    assert resumed.next().data["step"] == late.next().data["step"] == 4, "live again"
    for stream in hall.streams:
        stream.close()
    hall.http.close()
