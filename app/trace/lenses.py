"""The run's events seen through two more lenses, the profiler's timeline and the call
path (app/trace/profile.py, callpath.py), beside the document's own pieces."""

from __future__ import annotations

from collections.abc import Callable

from app.language.events import RunEvent
from app.trace.callpath import CallPathBuilder
from app.trace.document import Phases, Trace
from app.trace.profile import ProfileBuilder


class Lenses:
    """Hands every run event to the pieces' builder (`emit`), then to the two lenses;
    the call path's phases go into the stream as `phase` pieces as they are known."""

    def __init__(self, emit: Callable[[RunEvent], None], send: Callable[[str, Phases], None],
                 kept: Callable[[], bool]) -> None:
        self.pieces = emit
        self.send = send
        self.profile = ProfileBuilder(kept)
        self.callpath = CallPathBuilder(kept)

    def emit(self, event: RunEvent) -> None:
        """The pieces' builder first: it decides whether a pass that starts is kept in
        full (Note [Passes kept in full]), which the lenses then ask (`kept`)."""
        self.pieces(event)
        self.profile.emit(event)
        phases = self.callpath.emit(event)
        if phases:
            self.send("phase", Phases(phases=phases))

    def finish(self, trace: Trace) -> None:
        """The document gets both lenses whole (the pieces' builder has sent `done`'s
        Trace before the lenses saw the end)."""
        trace.profile = self.profile.events
        trace.callpath = self.callpath.phases
