"""The profiler's events as live PyTorch records them, for tests/test_profile.py.

A program's lines up to a line `# profile` make its leaves; the rest runs under
`torch.autograd.profiler.profile()` in a fresh thread (a fresh sequence counter,
reference §3). The events are kept at the depths the lab's timeline has
(app/trace/profile.py): every top-level event, and inside a backward node's
`evaluate_function` the node's own event, what sits beside it, and the ops inside the
node's event. This file executes program text with real PyTorch (it is the reference).
"""

from __future__ import annotations

import threading
from typing import Any

MARK = "# profile\n"
EVALUATE = "autograd::engine::evaluate_function: "


def _depth(event: Any) -> int:
    depth, parent = 0, event.cpu_parent
    while parent is not None:
        depth, parent = depth + 1, parent.cpu_parent
    return depth


def _kept(event: Any, depth: int) -> bool:
    if depth == 0:
        return True
    top = event
    while top.cpu_parent is not None:
        top = top.cpu_parent
    if not top.name.startswith(EVALUATE):
        return False                        # inside a forward op: PyTorch's own internals
    if depth == 1:
        return True
    return depth == 2 and event.cpu_parent.name == top.name[len(EVALUATE):]


def profile(source: str) -> list[tuple[int, str, int]]:
    """(depth, name, sequence_nr) of each event kept, in the order they began."""
    import torch

    setup, body = source.split(MARK)
    found: list[Any] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            scope: dict[str, Any] = {}
            exec(setup, scope)              # the reference runs the program
            with torch.autograd.profiler.profile() as prof:
                exec(body, scope)
            found.extend(prof.function_events)
        except BaseException as e:          # handed to the test's thread
            failure.append(e)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    ordered = sorted(found, key=lambda e: (e.time_range.start, -e.time_range.end, e.id))
    return [(d, e.name, e.sequence_nr) for e in ordered
            if _kept(e, d := _depth(e))]
