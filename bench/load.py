"""Load benchmark: many clients at once against one real `autograd-lab serve` process on
loopback, mixing the ways a course's clients use and misuse it.

Kinds of client (in these shares): `trace` posts a program to /api/trace (presets with
changed numbers, a quarter of them the worked example, which the cache answers) and
waits a moment; `stream` reads /api/trace/stream to its `done`; `room` follows a live
room's events (a presenter steps it every half second) for a few seconds, then
reconnects with Last-Event-ID; `slow` reads a trace stream or the room one event a
second; `drop` opens a trace stream and disconnects after its first event. Every client
is a coroutine of this one process (httpx, asyncio), so the client shares the machine's
cores with the server.

Printed: p50/p99 per kind (the whole response for `trace` and `stream`, the first event
for the others), every status per kind (a 5xx loudly), failures, and the server's event
loop tasks, threads, open streams (its /metrics) and resident memory before, at the
peak during, and after the clients stop (once its thread pools have let their idle
threads go: a pool's threads are not a leak, more threads than before would be).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field

import httpx

from app.rooms.store import KEEPALIVE_S
from bench.hall import HOST, ROOT, _free_port, _status, percentile, programs, rss_mb

CLIENTS, SECONDS = 500, 60.0
QUICK_CLIENTS, QUICK_SECONDS = 50, 10.0
SHARES = (("trace", 40), ("stream", 20), ("room", 20), ("slow", 10), ("drop", 10))
WARM_S = 3.0
POOL_THREADS = 2         # the traces' pool (LAB_TRACE_WORKERS) makes its threads on need
POOL_IDLE_S = 11.0       # anyio's WorkerThread.MAX_IDLE_TIME (10 s), and a little
MEMORY_SLACK_MB = 50.0     # "back near its baseline": the trace cache may keep this much


@dataclass
class Tally:
    """Everything the clients saw, by kind."""

    seconds: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))

    def note(self, kind: str, status: str, started: float | None = None) -> None:
        self.statuses[kind][status] += 1
        if started is not None:
            self.seconds[kind].append(time.perf_counter() - started)

    def server_errors(self) -> int:
        return sum(n for c in self.statuses.values() for s, n in c.items() if s[:1] == "5")

    def failures(self) -> int:
        return sum(n for c in self.statuses.values() for s, n in c.items()
                   if not s[:1].isdigit())


@dataclass
class Sample:
    tasks: float
    threads: float
    streams: float
    rss_mb: float

    def __str__(self) -> str:
        return (f"{self.tasks:.0f} tasks, {self.threads:.0f} threads, {self.streams:.0f} "
                f"streams, {self.rss_mb:.0f} MB")


@contextmanager
def serve() -> Iterator[tuple[str, int]]:
    """`autograd-lab serve` (python -m app.cli) on a free port: its base URL and pid."""
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--host", HOST,
                             "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while _status(port, "GET", "/healthz") != 200:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("autograd-lab serve did not start")
            time.sleep(0.1)
        yield f"http://{HOST}:{port}", proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def cpu_s(pid: int) -> float:
    """A process's CPU seconds so far (user and system), from /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def sample(client: httpx.AsyncClient, pid: int) -> Sample:
    text = (await client.get("/metrics")).text

    def value(name: str) -> float:
        return sum(float(v) for v in re.findall(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M))

    return Sample(value("lab_event_loop_tasks"), value("lab_threads"),
                  value("lab_active_streams"), rss_mb(pid))


async def events(response: httpx.Response) -> AsyncIterator[str]:
    """The kinds of a Server-Sent Events response's events, as they arrive."""
    async for line in response.aiter_lines():
        if line.startswith("event: "):
            yield line[7:]


class Run:
    def __init__(self, client: httpx.AsyncClient, room: str, until: float) -> None:
        self.client, self.room, self.until = client, room, until
        self.tally = Tally()
        self.sources = programs(200)
        self.worked = self.sources[0]

    def source(self, rng: random.Random) -> str:
        return self.worked if rng.random() < 0.25 else rng.choice(self.sources)

    @asynccontextmanager
    async def stream(self, kind: str, method: str, url: str, **kw: object
                     ) -> AsyncIterator[httpx.Response | None]:
        """A streamed request whose status is noted; None (and the failure noted) if it
        could not be made."""
        try:
            async with self.client.stream(method, url, **kw) as response:  # type: ignore[arg-type]
                self.tally.note(kind, str(response.status_code))
                yield response
        except httpx.HTTPError as e:
            self.tally.note(kind, type(e).__name__)
            yield None

    async def trace(self, rng: random.Random) -> None:
        started = time.perf_counter()
        try:
            r = await self.client.post("/api/trace", json={"source": self.source(rng)})
        except httpx.HTTPError as e:
            self.tally.note("trace", type(e).__name__)
            return
        busy = r.status_code == 200 and b'"BusyError"' in r.content[-2000:]
        self.tally.note("trace", "200 busy" if busy else str(r.status_code), started)
        await asyncio.sleep(rng.uniform(0.5, 2.0))

    async def trace_stream(self, kind: str, rng: random.Random, gap: float = 0.0,
                           first_only: bool = False) -> None:
        started = time.perf_counter()
        body = {"source": self.source(rng)}
        async with self.stream(kind, "POST", "/api/trace/stream", json=body) as r:
            if r is None:
                return
            async for _ in events(r):
                if first_only or (gap and started):
                    self.tally.seconds[kind].append(time.perf_counter() - started)
                    started = 0.0
                if first_only or time.monotonic() > self.until:
                    return              # disconnect mid-stream
                if gap:
                    await asyncio.sleep(gap)
            if not gap:
                self.tally.seconds[kind].append(time.perf_counter() - started)

    async def follow(self, kind: str, rng: random.Random, last: dict[str, str],
                     gap: float = 0.0) -> None:
        started, leave = time.perf_counter(), time.monotonic() + rng.uniform(3, 10)
        headers = {"Last-Event-ID": last["id"]} if "id" in last else {}
        url = f"/api/rooms/{self.room}/events"
        async with self.stream(kind, "GET", url, headers=headers) as r:
            if r is None:
                return
            async for line in r.aiter_lines():
                if line.startswith("id: "):
                    last["id"] = line[4:]
                    if started:
                        self.tally.seconds[kind].append(time.perf_counter() - started)
                        started = 0.0
                    if gap:
                        await asyncio.sleep(gap)
                if time.monotonic() > min(leave, self.until):
                    return

    async def client_loop(self, kind: str, seed: int) -> None:
        rng = random.Random(seed)
        last: dict[str, str] = {}
        await asyncio.sleep(rng.uniform(0, 2))      # not all in the same millisecond
        while time.monotonic() < self.until:
            if kind == "trace":
                await self.trace(rng)
            elif kind == "stream":
                await self.trace_stream(kind, rng)
            elif kind == "room":
                await self.follow(kind, rng, last)
            elif kind == "slow" and seed % 2:
                await self.follow(kind, rng, last, gap=1.0)
            elif kind == "slow":
                await self.trace_stream(kind, rng, gap=1.0)
            else:
                await self.trace_stream(kind, rng, first_only=True)
            if kind != "trace":
                await asyncio.sleep(rng.uniform(0.2, 1.0))

    async def lag(self) -> None:
        """How late this process's own event loop wakes a sleeper: the part of every
        latency above that is the clients', not the server's."""
        while time.monotonic() < self.until:
            started = time.perf_counter()
            await asyncio.sleep(0.1)
            self.tally.seconds["client lag"].append(time.perf_counter() - started - 0.1)

    async def present(self, token: str) -> None:
        """The presenter: a step every half second, through the whole run."""
        step, headers = 0, {"Authorization": f"Bearer {token}"}
        while time.monotonic() < self.until:
            step += 1
            try:
                r = await self.client.put(f"/api/rooms/{self.room}/state", headers=headers,
                                          json={"source": self.worked, "pass": 0,
                                                "step": step % 6})
                self.tally.note("present", str(r.status_code))
            except httpx.HTTPError as e:
                self.tally.note("present", type(e).__name__)
            await asyncio.sleep(0.5)


def kinds(clients: int) -> list[str]:
    """`clients` kinds in SHARES' proportions, interleaved."""
    total = sum(share for _, share in SHARES)
    out = [kind for kind, share in SHARES for _ in range(round(clients * share / total))]
    out = (out + ["trace"] * clients)[:clients]
    return [out[i] for i in sorted(range(clients), key=lambda i: (i * 7919) % clients)]


@dataclass
class Result:
    clients: int
    seconds: float
    tally: Tally
    before: Sample
    peak: Sample
    after: Sample
    cores: tuple[float, float]      # the cores the clients' process and the server used

    def met(self) -> bool:
        return (not self.tally.server_errors() and not self.tally.failures()
                and self.after.streams == 0 and self.after.tasks <= self.before.tasks + 2
                and self.after.threads <= self.before.threads + POOL_THREADS
                and self.after.rss_mb <= self.before.rss_mb + MEMORY_SLACK_MB)


async def _run(base: str, pid: int, clients: int, seconds: float) -> Result:
    # A connection per request, as from many devices: no client reuses a connection the
    # server is closing (uvicorn's 5 s keep-alive), which would show as a failure here.
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
    timeout = httpx.Timeout(60.0)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=timeout) as client:
        room = (await client.post("/api/rooms", json={"state": {
            "source": programs(1)[0], "pass": 0, "step": 0}})).json()
        # Warm up: a few clients of every kind for a moment, so that the server's imports,
        # caches and thread pools are made before the baseline is taken.
        warm = Run(client, room["code"], time.monotonic() + WARM_S)
        await asyncio.gather(*(warm.client_loop(kind, i) for i, kind in enumerate(kinds(10))))
        before = await sample(client, pid)
        cpu = time.process_time(), cpu_s(pid), time.perf_counter()
        run = Run(client, room["code"], time.monotonic() + seconds)
        tasks = [asyncio.ensure_future(run.client_loop(kind, i))
                 for i, kind in enumerate(kinds(clients))]
        tasks.append(asyncio.ensure_future(run.present(room["token"])))
        tasks.append(asyncio.ensure_future(run.lag()))
        peak = before
        while time.monotonic() < run.until:
            await asyncio.sleep(min(2.0, max(0.1, run.until - time.monotonic())))
            now = await sample(client, pid)
            peak = Sample(*(max(a, b) for a, b in zip(vars(peak).values(),
                                                      vars(now).values(), strict=True)))
        await asyncio.wait(tasks, timeout=90)
        for task in tasks:
            task.cancel()
        wall = time.perf_counter() - cpu[2]
        used = ((time.process_time() - cpu[0]) / wall, (cpu_s(pid) - cpu[1]) / wall)
    async with httpx.AsyncClient(base_url=base, timeout=timeout) as fresh:
        # The server notices a follower gone at its next write (a keep-alive at the latest).
        deadline = time.monotonic() + KEEPALIVE_S + 5
        while (after := await sample(fresh, pid)).streams and time.monotonic() < deadline:
            await asyncio.sleep(1.0)
        # Thread pools keep idle threads: anyio's (the sync dependencies') prunes those idle
        # for POOL_IDLE_S when it next hands out work, as a room's lookup makes it do.
        await asyncio.sleep(POOL_IDLE_S)
        for _ in range(2):
            await fresh.get(f"/api/rooms/{room['code']}")
        after = await sample(fresh, pid)
    return Result(clients, seconds, run.tally, before, peak, after, used)


def run(clients: int = CLIENTS, seconds: float = SECONDS) -> Result:
    with serve() as (base, pid):
        return asyncio.run(_run(base, pid, clients, seconds))


def report(r: Result) -> None:
    print(f"Load: {r.clients} concurrent clients for {r.seconds:.0f} s against one "
          f"`autograd-lab serve` on loopback ({', '.join(f'{k} {s}%' for k, s in SHARES)})")
    for kind in [k for k, _ in SHARES] + ["present", "client lag"]:
        times = [t * 1000 for t in r.tally.seconds.get(kind, [])]
        what = ("response" if kind in ("trace", "stream", "present") else
                "wake-up" if kind == "client lag" else "first event")
        counts = ", ".join(f"{s}: {n}" for s, n in sorted(r.tally.statuses[kind].items()))
        timing = (f"p50 {percentile(times, 0.5):.0f} ms, p99 {percentile(times, 0.99):.0f} ms"
                  f" to the {what}; " if times else "")
        quiet = "" if kind == "client lag" else "nothing answered"
        print(f"  {kind:10}{timing}{counts or quiet}")
    errors, failures = r.tally.server_errors(), r.tally.failures()
    if errors:
        print(f"  !!! {errors} responses with a 5xx status !!!")
    if failures:
        print(f"  !!! {failures} requests failed without a response !!!")
    print(f"  cores used: the clients {r.cores[0]:.2f}, the server {r.cores[1]:.2f} (of "
          f"{os.cpu_count()})")
    print(f"  server before: {r.before}")
    print(f"  server peak:   {r.peak}")
    print(f"  server after:  {r.after}")
    print(f"  no 5xx, no failure, streams closed, tasks back, threads within {POOL_THREADS} "
          f"and memory within {MEMORY_SLACK_MB:.0f} MB of before? {'yes' if r.met() else 'NO'}")
    print()


def main(clients: int = CLIENTS, seconds: float = SECONDS) -> bool:
    result = run(clients, seconds)
    report(result)
    return result.met()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_CLIENTS} clients for {QUICK_SECONDS:.0f} s")
    args = parser.parse_args()
    sys.exit(0 if main(*((QUICK_CLIENTS, QUICK_SECONDS) if args.quick else ())) else 1)
