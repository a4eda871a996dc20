"""The lecture hall's load: traces run off the event loop in a bounded queue (a clear busy
document past it, never a 5xx or a hang; one run for a program many seats send at once),
and the cycle collector, paused while traces are built, still runs under a stream of
overlapping traces."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import httpx
import pytest

import app.web.api
from app.limits import Limits
from app.presets import PRESETS
from app.trace import trace_json
from app.trace.document import Scheduler
from app.trace.gcpause import GC_PAUSE, _GcPause
from app.web.api import Busy, TraceCache, TraceQueue
from app.web.app import create_app
from app.web.settings import Settings

SOURCE = PRESETS[0].source


class Cycle:
    """Garbage only the cycle collector frees."""

    def __init__(self) -> None:
        self.me = self


def garbage() -> weakref.ref[Cycle]:
    made = Cycle()
    return weakref.ref(made)


def test_the_collector_runs_while_traces_overlap_without_a_gap() -> None:
    """One trace holds the pause the whole time (a big one, or the next of a stream); the
    others, finishing, still free the cycles of those before them."""
    pause = _GcPause(max_pause_s=0.2)
    was = gc.isenabled()
    held = threading.Event()
    done = threading.Event()

    def long_trace() -> None:
        with pause:
            held.set()
            done.wait(20)

    holder = threading.Thread(target=long_trace)
    holder.start()
    assert held.wait(10)
    try:
        with pause:
            dead = garbage()
        assert dead() is not None, "within max_pause_s nothing is collected"
        time.sleep(0.25)
        with pause:
            trace_json(SOURCE)
        assert dead() is None, "a trace ending past max_pause_s collected"
        assert not gc.isenabled() or not was
    finally:
        done.set()
        holder.join(10)
    assert gc.isenabled() == was, "the last one out turns collection back on"


def test_a_finished_trace_leaves_its_document_to_reference_counting() -> None:
    """What a trace made is freed when it is dropped, not left to the collector in a
    cycle: the compiled build once kept `run`'s closure and everything it reached (the
    whole document) in one, and collecting it took a sixth of a long trace's time."""
    program = ("import torch\na = torch.tensor(0.9, requires_grad=True)\nh = torch.tensor(0.1)\n"
               "for t in range(300):\n    h = torch.tanh(a * h + 0.01)\nh.backward()\n")
    gc.collect()
    with GC_PAUSE:
        was_enabled = gc.isenabled()
        trace_json(program)
    assert not was_enabled
    assert gc.collect() < 100       # a few small cycles of the engine's; never ~9 per pop


def test_the_servers_pause_collects_under_sustained_load() -> None:
    """GC_PAUSE itself, as the traces of /api/trace use it."""
    held = threading.Event()
    done = threading.Event()

    def holder() -> None:
        with GC_PAUSE:
            held.set()
            done.wait(20)

    thread = threading.Thread(target=holder)
    thread.start()
    assert held.wait(10)
    try:
        with GC_PAUSE:
            dead = garbage()
        deadline = time.monotonic() + GC_PAUSE.max_pause_s + 5
        while dead() is not None:
            assert time.monotonic() < deadline, "cycles piled up while traces overlapped"
            trace_json(SOURCE)
    finally:
        done.set()
        thread.join(10)


def test_past_the_queue_limit_a_trace_is_a_busy_document(monkeypatch: pytest.MonkeyPatch) -> None:
    """One worker busy, one waiting: the next request is answered at once, with 200, the
    busy document and Retry-After; the stream route ends with it as its `done` event."""
    release = threading.Event()
    started = threading.Semaphore(0)

    def slow(source: str, limits: Limits, **options: Any) -> tuple[bytes, bool]:
        started.release()
        release.wait(20)
        return trace_json(source, limits, **options)

    monkeypatch.setattr(app.web.api, "trace_json", slow)
    application = create_app(Settings(trace_workers=1, trace_queue_limit=1))

    async def scenario() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://lab") as client:
            def post(n: int) -> Any:
                return client.post("/api/trace", json={"source": f"{SOURCE}#{n}\n"})

            first = asyncio.create_task(post(1))
            second = asyncio.create_task(post(2))
            await asyncio.to_thread(started.acquire, True, 10)
            await asyncio.sleep(0.2)
            busy = await asyncio.wait_for(post(3), 5)
            stream = await asyncio.wait_for(
                client.post("/api/trace/stream", json={"source": SOURCE + "#4\n"}), 5)
            health = await client.get("/healthz")
            release.set()
            return [busy, stream, health, await first, await second]

    busy, stream, health, first, second = asyncio.run(scenario())
    assert busy.status_code == 200 and busy.headers["retry-after"] == "1"
    error = busy.json()["error"]
    assert (error["kind"], error["type"]) == ("limit", "BusyError")
    assert "try again in a moment" in error["message"]
    assert stream.status_code == 200 and "event: done" in stream.text and "BusyError" in stream.text
    assert health.status_code == 200
    assert first.json()["error"] is None and second.json()["error"] is None


def test_a_program_sent_from_many_seats_at_once_is_traced_once() -> None:
    runs: list[str] = []
    gate = threading.Event()

    class Counting(TraceCache):
        def __call__(self, source: str, limits: Limits,
                     scheduler: Scheduler = "ready_queue") -> bytes:
            runs.append(source)
            gate.wait(10)
            return super().__call__(source, limits, scheduler)

    queue = TraceQueue(workers=2, limit=0)
    cache = Counting()

    async def seats(n: int) -> list[bytes]:
        tasks = [asyncio.create_task(queue.document(cache, SOURCE, Limits())) for _ in range(n)]
        await asyncio.sleep(0.2)
        gate.set()
        return await asyncio.gather(*tasks)

    documents = asyncio.run(seats(50))
    assert runs == [SOURCE], "one run served all fifty"
    assert len(set(documents)) == 1 and json.loads(documents[0])["error"] is None
    queue.shutdown()


def test_busy_is_raised_not_queued_forever() -> None:
    queue = TraceQueue(workers=1, limit=0)
    with queue.admitted(), pytest.raises(Busy), queue.admitted():
        pass
    with queue.admitted():
        pass
    queue.shutdown()


def test_the_room_answers_while_the_hall_traces(app_server: Callable[..., str]) -> None:
    """A burst of different programs does not stop a room's events: each follower still
    receives every step, and no trace request fails with a 5xx."""
    from tests.test_rooms import Hall, chosen

    base = app_server(trace_queue_limit="8")
    hall = Hall(base, [base])
    code, token = hall.create()
    stream = hall.follow(code)
    stream.next()
    sources = [chosen("mixed").source.replace("4.0", f"{4 + i / 100}") for i in range(40)]
    statuses: list[int] = []

    def burst() -> None:
        with httpx.Client(base_url=base, timeout=60) as client:
            for s in sources:
                statuses.append(client.post("/api/trace", json={"source": s}).status_code)

    threads = [threading.Thread(target=burst) for _ in range(4)]
    for t in threads:
        t.start()
    for step in range(1, 11):
        hall.put(code, token, step % 6)
    got = [stream.next(timeout=30).data["step"] for _ in range(10)]
    for t in threads:
        t.join(120)
    assert got == [step % 6 for step in range(1, 11)]
    assert len(statuses) == 160 and set(statuses) == {200}
    stream.close()
    hall.http.close()


def test_the_rooms_benchmark_runs_small() -> None:
    """bench/rooms.py end to end at a tenth of a percent of its size: every follower gets
    every step and every posted program is traced (the timings are printed, never checked)."""
    import contextlib
    import io

    from bench import hall, rooms

    sources = hall.programs(30)
    assert len(set(sources)) == 30
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rooms.main(followers=4, step_count=3, burst=6)
    report = out.getvalue()
    assert "(12 receipts of 4 followers, 0 missing)" in report, report
    assert "6 traced, 0 told busy, 0 errors" in report, report
