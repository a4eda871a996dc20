"""`autograd-lab trace FILE...`, `autograd-lab serve` and `autograd-lab questions ...`."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any

from app.limits import DEFAULT_LIMITS, Limits
from app.questions.cli import add_parser as add_questions
from app.trace import trace_json

# The contract's fields alone: which nodes popped, in order, and the final grads.
BRIEF: dict[str, Any] = {
    "passes": {"__all__": {"output": True, "steps": {"__all__": {"name", "seq", "leaf"}}}},
    "grads": True,
    "error": True,
}


def _limits(pairs: list[str]) -> Limits:
    """`NAME=VALUE` pairs over the defaults; a limit's value has its default's type."""
    values: dict[str, float] = {}
    for pair in pairs:
        name, _, text = pair.partition("=")
        kind = type(getattr(DEFAULT_LIMITS, name, None))
        try:
            value = kind(text) if kind in (int, float) else None
        except ValueError:
            value = None
        if value is None or value <= 0:
            raise SystemExit(f"autograd-lab: --limit takes NAME=VALUE, a positive number, "
                             f"with NAME one of {', '.join(Limits.names())}")
        values[name] = value
    return DEFAULT_LIMITS.with_values(**values)


def trace(args: argparse.Namespace) -> int:
    """One JSON document per file, one per line, in order; exit 1 if any has an error."""
    limits = _limits(args.limit)
    failed = False
    for path in args.files:
        try:
            if path == "-":
                source = sys.stdin.read()
            else:
                with open(path, encoding="utf-8", errors="replace") as f:
                    source = f.read()
        except OSError as e:
            print(f"autograd-lab: cannot read {path}: {e.strerror}", file=sys.stderr)
            return 2
        document, error = trace_json(source, limits, include=BRIEF if args.brief else None,
                                     scheduler=args.scheduler, passes_from=args.passes_from)
        failed = failed or error
        sys.stdout.flush()
        sys.stdout.buffer.write(document + b"\n")
        sys.stdout.buffer.flush()
    return 1 if failed else 0


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.ops.logs import log_config
    from app.web.app import create_app
    from app.web.settings import Settings

    # The command line's options win over LAB_* settings, which win over the defaults.
    given = {"host": args.host, "port": args.port, "workers": args.workers}
    settings = Settings(**{k: v for k, v in given.items() if v is not None})
    # JSON lines from uvicorn and the lab alike (app/ops/logs.py), in every worker; the
    # lab writes the access log itself (lab.access, with request ids), so uvicorn's is off.
    server: dict[str, Any] = {
        "host": settings.host, "port": settings.port, "proxy_headers": True,
        "forwarded_allow_ips": settings.forwarded_allow_ips, "access_log": False,
        "log_config": log_config(settings.log_level), "log_level": settings.log_level}
    if settings.workers > 1:
        # Each process makes its own app from the same LAB_* settings; rooms must then live
        # in Redis, or a follower landing on another process would not find its room.
        if not settings.redis_url:
            print("autograd-lab: serve --workers N>1 needs LAB_REDIS_URL (redis://HOST:PORT): "
                  "each process would keep its own rooms", file=sys.stderr)
            return 2
        # The workers' metrics meet in one directory, so that any of them answers for all
        # (app/ops/metrics.py); a fresh one unless the deployment names its own.
        if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="autograd-lab-")
        uvicorn.run("app.web.app:create_app", factory=True, workers=settings.workers,
                    **server)
        return 0
    uvicorn.run(create_app(settings), **server)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograd-lab", description="See PyTorch's "
                                     "backward pass, one ready-queue pop at a time.")
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("trace", help="print the trace of each program as JSON Lines")
    t.add_argument("files", nargs="+", metavar="FILE", help="program files; - reads stdin")
    t.add_argument("--brief", action="store_true",
                   help="print only the contract's fields (passes' steps, grads, error)")
    t.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                   help="change one of the lab's limits (see app/limits.py)")
    t.add_argument("--scheduler", choices=["ready_queue", "topological"],
                   default="ready_queue", help="order each pass's steps by PyTorch's ready "
                   "queue (the default) or by a topological sort (engine/topological.py)")
    t.add_argument("--passes-from", type=int, default=0, metavar="N",
                   help="keep passes step by step from pass N (0-based) on, within the "
                   "max_full_passes and max_full_values limits; the others are summarised")
    t.set_defaults(run=trace)
    s = sub.add_parser("serve", help="serve the lab on http://HOST:PORT")
    s.add_argument("--host", help="the address to listen on (LAB_HOST; 127.0.0.1)")
    s.add_argument("--port", type=int, help="the port (LAB_PORT; 8000)")
    s.add_argument("--workers", type=int, metavar="N", help="serve from N processes "
                   "(LAB_WORKERS; 1; rooms then need LAB_REDIS_URL)")
    s.set_defaults(run=serve)
    add_questions(sub)
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
