"""`/metrics` in Prometheus' text format, through prometheus_client.

Requests and their latency per route (the route's template, never the raw path, so that
room codes do not become labels), traces by outcome, streams open now, rooms followed and
their followers, the trace queue's depth, rate-limited requests, and the event loop's
tasks and the process's threads (a leak shows as a line that only grows).

With several worker processes (`autograd-lab serve --workers N` sets
PROMETHEUS_MULTIPROC_DIR), each process writes its values to that directory and any of
them answers for all: counters and histograms summed, gauges summed over the live ones.
"""

from __future__ import annotations

import asyncio
import glob
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client import multiprocess as mp
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.process_collector import ProcessCollector

CONTENT_TYPE = CONTENT_TYPE_LATEST
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


class Metrics:
    """One app's metrics (a registry of its own, so that apps made in one process, as the
    tests make them, do not collide)."""

    def __init__(self) -> None:
        self.shared = multiprocess_dir()
        own = None if self.shared else CollectorRegistry()
        live: dict[str, Any] = {"multiprocess_mode": "livesum"} if self.shared else {}
        self.registry = own
        self.requests = Counter("lab_http_requests", "HTTP requests answered",
                                ["method", "route", "status"], registry=own)
        self.latency = Histogram("lab_http_request_duration_seconds",
                                 "time from a request to the end of its response (a "
                                 "stream's whole length)", ["method", "route"],
                                 buckets=BUCKETS, registry=own)
        self.traces = Counter("lab_traces", "programs traced, by outcome (ok, the error's "
                              "kind, busy, cached)", ["outcome"], registry=own)
        self.streams = Gauge("lab_active_streams", "Server-Sent Event streams open now",
                             ["kind"], registry=own, **live)
        self.rooms = Gauge("lab_rooms_followed", "rooms with a follower connected to this "
                           "server", registry=own, **live)
        self.followers = Gauge("lab_room_followers", "followers connected now",
                               registry=own, **live)
        self.queue_depth = Gauge("lab_trace_queue_depth", "traces waiting for a worker "
                                 "thread", registry=own, **live)
        self.rate_limited = Counter("lab_rate_limited", "requests refused with 429",
                                    ["scope"], registry=own)
        self._rooms: dict[str, int] = {}
        self._lock = threading.Lock()
        if own is not None:
            ProcessCollector(registry=own)
            own.register(_Runtime())

    def trace(self, outcome: str) -> None:
        self.traces.labels(outcome).inc()

    @contextmanager
    def stream(self, kind: str, room: str | None = None) -> Iterator[None]:
        """Counts one open stream (a follower's, with its room) while the block runs."""
        self.streams.labels(kind).inc()
        if room is not None:
            self.followers.inc()
            with self._lock:
                self._rooms[room] = self._rooms.get(room, 0) + 1
                self.rooms.set(len(self._rooms))
        try:
            yield
        finally:
            self.streams.labels(kind).dec()
            if room is not None:
                self.followers.dec()
                with self._lock:
                    self._rooms[room] -= 1
                    if not self._rooms[room]:
                        del self._rooms[room]
                    self.rooms.set(len(self._rooms))

    def exposition(self) -> bytes:
        if self.registry is not None:
            return bytes(generate_latest(self.registry))
        assert self.shared is not None
        _forget_dead_processes(self.shared)
        registry = CollectorRegistry()
        mp.MultiProcessCollector(registry, path=self.shared)  # type: ignore[no-untyped-call]
        registry.register(_Runtime())
        return bytes(generate_latest(registry))


class _Runtime:
    """This process's event-loop tasks and threads, read when scraped."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            tasks = len(asyncio.all_tasks())
        except RuntimeError:    # scraped off the event loop
            tasks = 0
        yield GaugeMetricFamily("lab_event_loop_tasks", "asyncio tasks alive in the "
                                "answering process", value=tasks)
        yield GaugeMetricFamily("lab_threads", "threads alive in the answering process",
                                value=threading.active_count())


_LIVE_FILE = re.compile(r"gauge_live\w+?_(\d+)\.db$")


def _forget_dead_processes(path: str) -> None:
    """A worker that died (and was replaced) leaves its live gauges' files: drop them, as
    gunicorn's child_exit hook would."""
    for name in glob.glob(os.path.join(path, "gauge_live*_*.db")):
        found = _LIVE_FILE.search(name)
        if found and not _alive(int(found.group(1))):
            mp.mark_process_dead(int(found.group(1)), path)  # type: ignore[no-untyped-call]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
