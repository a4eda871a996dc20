"""The hall's parts for bench/rooms.py: app and redis-server processes on loopback, a
follower as a raw SSE connection, the presenter's keep-alive PUTs, a student's POST of a
program, and the servers' memory."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
STEP_GAP_S = 0.1          # a presenter pressing the clicker ten times a second


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def rss_mb(pid: int) -> float:
    """The resident memory of a process, from /proc (0 where there is no /proc)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


@dataclass(frozen=True)
class Server:
    host: str
    port: int
    pid: int


@contextlib.contextmanager
def redis_server() -> Iterator[str | None]:
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    port = _free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", HOST, "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection((HOST, port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)
        yield f"redis://{HOST}:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextlib.contextmanager
def servers(count: int, redis_url: str | None) -> Iterator[list[Server]]:
    """`count` uvicorn processes of the lab (one worker each), sharing Redis if given."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if redis_url:
        env["LAB_REDIS_URL"] = redis_url
    procs: list[tuple[subprocess.Popen[bytes], int]] = []
    with tempfile.TemporaryFile("w+") as log:
        try:
            for _ in range(count):
                port = _free_port()
                proc = subprocess.Popen(
                    [sys.executable, "-m", "uvicorn", "app.web.app:create_app", "--factory",
                     "--host", HOST, "--port", str(port), "--log-level", "warning"],
                    cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log)
                procs.append((proc, port))
            for proc, port in procs:
                deadline = time.monotonic() + 30
                while _status(port, "GET", "/healthz") != 200:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        log.seek(0)
                        raise RuntimeError(f"a server did not start: {log.read()[-500:]}")
                    time.sleep(0.1)
            yield [Server(HOST, port, proc.pid) for proc, port in procs]
        finally:
            for proc, _ in procs:
                proc.terminate()
            for proc, _ in procs:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()


def _status(port: int, method: str, path: str) -> int:
    try:
        c = http.client.HTTPConnection(HOST, port, timeout=2)
        c.request(method, path)
        status = c.getresponse().status
        c.close()
        return status
    except OSError:
        return 0


# -- the hall ------------------------------------------------------------------------------

@dataclass
class Hall:
    """Receipt times by event id, for every follower."""

    receipts: list[dict[int, float]] = field(default_factory=list)
    sent: dict[int, float] = field(default_factory=dict)
    connected: int = 0

    def delays_ms(self, ids: list[int]) -> tuple[list[float], int]:
        delays, missing = [], 0
        for got in self.receipts:
            for i in ids:
                if i in got:
                    delays.append((got[i] - self.sent[i]) * 1000)
                else:
                    missing += 1
        return delays, missing


async def follow(server: Server, code: str, got: dict[int, float], hall: Hall,
                 stop: asyncio.Event) -> None:
    """One follower: a raw HTTP/1.0 SSE connection (no chunked framing), noting when each
    event id arrives."""
    reader, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(f"GET /api/rooms/{code}/events HTTP/1.0\r\nHost: {server.host}\r\n"
                 "Accept: text/event-stream\r\n\r\n".encode())
    await writer.drain()
    while (await reader.readline()) not in (b"\r\n", b"\n", b""):
        pass
    hall.connected += 1
    reading = asyncio.ensure_future(_read(reader, got))
    await stop.wait()
    reading.cancel()
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()


async def _read(reader: asyncio.StreamReader, got: dict[int, float]) -> None:
    while line := await reader.readline():
        if line.startswith(b"id: "):
            got[int(line[4:])] = time.perf_counter()


class Presenter:
    """The presenter's keep-alive connection: PUT the view state, one step at a time."""

    def __init__(self, server: Server, source: str) -> None:
        self.conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
        self.source = source
        self.conn.request("POST", "/api/rooms", json.dumps(
            {"state": {"source": source, "pass": 0, "step": 0}}),
            {"Content-Type": "application/json"})
        body = json.loads(self.conn.getresponse().read())
        self.code, self.token = body["code"], body["token"]
        self.version = 1

    def put(self, step: int, hall: Hall) -> int:
        self.version += 1
        body = json.dumps({"source": self.source, "pass": 0, "step": step})
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self.token}"}
        for attempt in (1, 2):      # the server closes a keep-alive connection idle for 5 s
            hall.sent[self.version] = time.perf_counter()
            try:
                self.conn.request("PUT", f"/api/rooms/{self.code}/state", body, headers)
                response = self.conn.getresponse()
                response.read()
                break
            except (ConnectionError, http.client.HTTPException):
                self.conn.close()
                if attempt == 2:
                    raise
        if response.status != 204:
            raise RuntimeError(f"PUT state: HTTP {response.status}")
        return self.version


async def steps(presenter: Presenter, hall: Hall, count: int) -> list[int]:
    ids = []
    for k in range(count):
        ids.append(await asyncio.to_thread(presenter.put, k % 5, hall))
        await asyncio.sleep(STEP_GAP_S)
    return ids


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- the burst -----------------------------------------------------------------------------

def programs(count: int) -> list[str]:
    """Different small programs: the presets with every decimal number changed."""
    from app.presets import PRESETS

    def shifted(source: str, by: float) -> str:
        return re.sub(r"\d+\.\d+", lambda m: f"{float(m.group()) + by:.2f}", source)

    return [shifted(PRESETS[i % len(PRESETS)].source, (1 + i // len(PRESETS)) / 100)
            for i in range(count)]


async def post_trace(server: Server, source: str, at: float) -> tuple[float, str]:
    """POST /api/trace at time `at`: (seconds to the full document, outcome)."""
    await asyncio.sleep(max(0.0, at - time.perf_counter()))
    started = time.perf_counter()
    body = json.dumps({"source": source}).encode()
    try:
        reader, writer = await asyncio.open_connection(server.host, server.port)
        writer.write(b"POST /api/trace HTTP/1.0\r\nHost: lab\r\nContent-Type: application/json"
                     b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), 60)
        writer.close()
    except (TimeoutError, OSError) as e:
        return time.perf_counter() - started, f"failed: {type(e).__name__}"
    head, _, document = raw.partition(b"\r\n\r\n")
    status = head.split(b" ", 2)[1].decode() if b" " in head else "?"
    if status != "200":
        return time.perf_counter() - started, f"HTTP {status}"
    error = json.loads(document).get("error") or {}
    return time.perf_counter() - started, "busy" if error.get("type") == "BusyError" else "ok"
