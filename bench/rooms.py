"""Rooms benchmark: a lecture hall on loopback.

1. One room, FOLLOWERS followers connected by Server-Sent Events, the presenter advancing
   STEPS steps: the delay from the start of the presenter's PUT to each follower's receipt
   of that step (p50, p99), and the servers' memory; first one process with the in-process
   backend, then two processes sharing a redis-server (the presenter on one, the followers
   split over both), where redis-server is installed.
2. The burst: BURST clients each posting a different small program (the presets with
   changed numbers) within BURST_S seconds while the room is live and the presenter steps:
   the time to each full trace (p50, p99), the room's delay meanwhile, errors, memory
   before and after.

Counts and durations are bounded; the followers' client runs in this process and shares
the machine's cores with the servers, so the delays it measures include its own work.
"""

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
FOLLOWERS = 500
STEPS = 50
STEP_GAP_S = 0.1          # a presenter pressing the clicker ten times a second
BURST = 300
BURST_S = 3.0
TARGET_P99_MS = 250.0


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


def _pct(values: list[float], q: float) -> float:
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


# -- the runs ------------------------------------------------------------------------------

@dataclass
class HallResult:
    connected: int
    p50: float
    p99: float
    receipts: int
    missing: int
    rss_mb: float


@dataclass
class BurstResult:
    trace_p50: float
    trace_p99: float
    ok: int
    busy: int
    errors: list[str]
    room_p50: float
    room_p99: float
    room_missing: int
    rss_before: float
    rss_after: float
    rss_settled: float


async def _hall(servers_: list[Server], followers: int, step_count: int,
                burst: int) -> tuple[HallResult, BurstResult | None]:
    from app.presets import PRESETS

    presenter = await asyncio.to_thread(Presenter, servers_[0], PRESETS[2].source)
    hall = Hall()
    stop = asyncio.Event()
    tasks = []
    for i in range(followers):
        got: dict[int, float] = {}
        hall.receipts.append(got)
        server = servers_[i % len(servers_)]
        tasks.append(asyncio.ensure_future(follow(server, presenter.code, got, hall, stop)))
    deadline = time.monotonic() + 60
    while hall.connected < followers and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)
    memory = sum(rss_mb(s.pid) for s in servers_)
    ids = await steps(presenter, hall, step_count)
    await asyncio.sleep(1.0)
    delays, missing = hall.delays_ms(ids)
    result = HallResult(hall.connected, _pct(delays, 0.5), _pct(delays, 0.99), len(delays),
                        missing, memory)
    bursted = await _burst(servers_, presenter, hall, burst) if burst else None
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    return result, bursted


async def _burst(servers_: list[Server], presenter: Presenter, hall: Hall,
                 burst: int) -> BurstResult:
    before = sum(rss_mb(s.pid) for s in servers_)
    start = time.perf_counter() + 0.2
    posts = [asyncio.ensure_future(post_trace(servers_[i % len(servers_)], source,
                                              start + BURST_S * i / burst))
             for i, source in enumerate(programs(burst))]
    room = asyncio.ensure_future(steps(presenter, hall, int(BURST_S / STEP_GAP_S)))
    outcomes = await asyncio.gather(*posts)
    ids = await room
    await asyncio.sleep(1.0)
    delays, missing = hall.delays_ms(ids)
    after = sum(rss_mb(s.pid) for s in servers_)
    await asyncio.sleep(3.0)
    times = [t * 1000 for t, outcome in outcomes if outcome == "ok"]
    return BurstResult(
        _pct(times, 0.5), _pct(times, 0.99), len(times),
        sum(outcome == "busy" for _, outcome in outcomes),
        [outcome for _, outcome in outcomes if outcome not in ("ok", "busy")],
        _pct(delays, 0.5), _pct(delays, 0.99), missing, before, after,
        sum(rss_mb(s.pid) for s in servers_))


def run(count: int, redis_url: str | None, followers: int = FOLLOWERS, step_count: int = STEPS,
        burst: int = BURST) -> tuple[HallResult, BurstResult | None]:
    with servers(count, redis_url) as started:
        return asyncio.run(_hall(started, followers, step_count, burst))


def _line(label: str, r: HallResult) -> str:
    return (f"  {label}: PUT→receipt p50 {r.p50:.0f} ms, p99 {r.p99:.0f} ms ({r.receipts:,} "
            f"receipts of {r.connected} followers, {r.missing} missing); servers' memory "
            f"{r.rss_mb:.0f} MB")


def main(followers: int = FOLLOWERS, step_count: int = STEPS, burst: int = BURST) -> bool:
    """Print the report; whether the p99 target is met with no receipt missing."""
    print(f"Rooms: one room, {followers} followers by SSE, the presenter advancing "
          f"{step_count} steps ({STEP_GAP_S * 1000:.0f} ms apart), on loopback")
    one, b = run(1, None, followers, step_count, burst)
    print(_line("in-process, 1 server", one))
    results = [one]
    with redis_server() as redis_url:
        if redis_url is None:
            print("  Redis, 2 servers: not measured (redis-server is not installed)")
        else:
            two, _ = run(2, redis_url, followers, step_count, 0)
            print(_line("Redis, 2 servers    ", two))
            results.append(two)
    met = all(r.p99 < TARGET_P99_MS and not r.missing for r in results)
    print(f"  p99 under {TARGET_P99_MS:.0f} ms, nothing missing? {'yes' if met else 'NO'}")
    if b is not None:
        print(f"Burst: {burst} different programs posted within {BURST_S:.0f} s while the room "
              f"is live ({followers} followers, the presenter stepping)")
        print(f"  to the full trace: p50 {b.trace_p50:.0f} ms, p99 {b.trace_p99:.0f} ms; {b.ok} "
              f"traced, {b.busy} told busy, {len(b.errors)} errors {sorted(set(b.errors))[:3]}")
        print(f"  the room meanwhile: PUT→receipt p50 {b.room_p50:.0f} ms, p99 "
              f"{b.room_p99:.0f} ms, {b.room_missing} missing")
        print(f"  servers' memory: {b.rss_before:.0f} MB before, {b.rss_after:.0f} MB after, "
              f"{b.rss_settled:.0f} MB 3 s later")
    print()
    return met


if __name__ == "__main__":
    main()
