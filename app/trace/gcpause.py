"""The cycle collector paused while traces are built (see `_GcPause`)."""

from __future__ import annotations

import gc
import threading
import time


class _GcPause:
    """Python's cycle collector paused while any trace is being built.

    A trace allocates a great many small objects that all stay alive until it is done;
    the collector would walk them again and again for nothing (a third of the time of a
    10,000-op trace), and it would walk them once more on resuming if they were still
    alive then: `trace_json` drops the document first. Nested and concurrent traces share
    one pause: the last one out turns collection back on, and it then frees any cycles
    at once. Under a lecture hall's stream of overlapping traces there may never be a
    last one out: then a trace that ends more than `max_pause_s` after the pause began (or
    after the last such collection) collects before it returns, so the cycles of finished
    traces are freed at least that often and memory stays at its baseline.
    """

    def __init__(self, max_pause_s: float = 1.0) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._was_enabled = True
        self._since = 0.0
        self.max_pause_s = max_pause_s

    def __enter__(self) -> None:
        with self._lock:
            self._holders += 1
            if self._holders == 1:
                self._was_enabled = gc.isenabled()
                self._since = time.monotonic()
                gc.disable()

    def __exit__(self, *exc: object) -> None:
        overdue = False
        with self._lock:
            self._holders -= 1
            if self._holders == 0 and self._was_enabled:
                gc.enable()
            elif self._was_enabled and time.monotonic() - self._since > self.max_pause_s:
                self._since = time.monotonic()
                overdue = True
        if overdue:
            gc.collect()


GC_PAUSE = _GcPause()

