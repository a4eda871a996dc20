"""The trace: the engine's events become the contract's document (events → document →
layout → JSON). `build` is the one way in for the CLI and the API."""

from app.trace.build import (
    Graph,
    GraphNode,
    Step,
    Trace,
    TraceEvent,
    clear_caches,
    document_bytes,
    document_json,
    quiet_floats,
    run_source,
    trace_events,
    trace_json,
)

__all__ = ["Graph", "GraphNode", "Step", "Trace", "TraceEvent", "clear_caches",
           "document_bytes", "document_json", "quiet_floats", "run_source", "trace_events",
           "trace_json"]
