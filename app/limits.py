"""The lab's limits: how much one program may ask of the server.

Every limit is checked before or while the program runs, and each violation is a clear
`UnsupportedError` (error kind `limit`) with a line and column, never a hang or a crash.
The web server reads them from settings (`LAB_MAX_...`); `autograd-lab trace --limit
NAME=VALUE` changes them for the command line.

Memory is bounded by the text's size, the elements of any one tensor (or list), the nodes
a run records and the passes kept in full in the trace (how many, and the values they show:
Note [Passes kept in full] in app/trace/kept.py); work is bounded by the statements
executed, the loop iterations and the time budget. A training loop frees each step's graph,
so a loop of a thousand steps is fine.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields, replace


class LimitExceeded(Exception):
    """One of the lab's limits on work (statements, loop iterations, calls, time)."""


@dataclass(frozen=True)
class Limits:
    max_source_bytes: int = 64_000      # program text, UTF-8
    max_lines: int = 2_000
    max_depth: int = 60                 # operators/calls nested inside one another
    max_nodes: int = 50_000             # backward nodes (and AccumulateGrads) one run records
    max_elements: int = 100_000         # elements in one tensor, items in one list
    max_number_bits: int = 256          # size of a Python integer the program computes
    max_statements: int = 500_000       # statements executed, loops and calls included
    max_iterations: int = 200_000       # loop iterations in all (comprehensions included)
    max_call_depth: int = 40            # calls of the program's own functions, nested
    max_hooks: int = 16                 # hooks registered on one tensor
    max_seconds: float = 10.0           # time budget for one program
    max_full_passes: int = 60           # passes kept in full in the trace; others summed up
    max_full_values: int = 20_000       # ... while the values they show stay under this
    max_full_steps: int = 5_000         # a kept pass's first steps in full; the rest summed up

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    def with_values(self, **values: float) -> Limits:
        return replace(self, **values)  # type: ignore[arg-type]


DEFAULT_LIMITS = Limits()


class RunClock:
    """One run's time against `max_seconds`: the time since it began, less the time it
    spent waiting for a slow reader of its pieces. A browser taking in a big trace reads
    slowly, and the run waits for it (app/trace/build.py `trace_events`); that wait is the
    reader's, not the program's, and must not end the program as too slow."""

    __slots__ = ("started", "waited")

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.waited = 0.0

    def elapsed(self) -> float:
        return time.monotonic() - self.started - self.waited
