"""The outermost layer of every request: its id, the security headers, the access log
line, the request metrics, and the one place where a bug of the lab's becomes a 500 with
the error document (the traceback goes to the error log, never to the client).

A pure ASGI middleware (not Starlette's BaseHTTPMiddleware), so that streams pass through
it unbuffered and its headers reach every response: routes', static files', 404s, the
body limit's 413s and the rate limits' 429s alike.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.ops.context import error_response, new_request_id
from app.ops.logs import ACCESS, ERRORS
from app.ops.metrics import Metrics

# No inline script or style and no other host, on every response.
CSP_TEMPLATE = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors {frame_ancestors}; form-action 'self'"
)
CONTENT_SECURITY_POLICY = CSP_TEMPLATE.format(frame_ancestors="'none'")
EMBED_PREFIX = "/embed"     # pages meant to be framed by other sites (the embed route)


@dataclass(frozen=True)
class Headers:
    """Sent on every response that does not set its own. `embed_frame_ancestors` is the
    CSP frame-ancestors of pages under /embed (which sites may frame them); every other
    page may be framed by none."""

    embed_frame_ancestors: str = "'none'"

    def for_path(self, path: str) -> list[tuple[str, str]]:
        embed = path == EMBED_PREFIX or path.startswith(EMBED_PREFIX + "/")
        ancestors = self.embed_frame_ancestors if embed else "'none'"
        headers = [
            ("Content-Security-Policy", CSP_TEMPLATE.format(frame_ancestors=ancestors)),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("Cross-Origin-Opener-Policy", "same-origin"),
            ("Cross-Origin-Resource-Policy", "same-origin"),
            ("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()"),
        ]
        if ancestors == "'none'":
            headers.append(("X-Frame-Options", "DENY"))
        return headers


class Edge:
    def __init__(self, app: ASGIApp, metrics: Metrics, headers: Headers) -> None:
        self.app = app
        self.metrics = metrics
        self.headers = headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_request_id(scope.get("headers", []))
        scope.setdefault("state", {})["request_id"] = request_id
        start = time.perf_counter()
        status = 0
        sent = 0

        async def send_with_headers(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = MutableHeaders(scope=message)
                for name, value in self.headers.for_path(scope["path"]):
                    headers.setdefault(name, value)
                headers["X-Request-ID"] = request_id
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            ERRORS.exception("unhandled error", extra={
                "request_id": request_id, "method": scope["method"], "path": scope["path"]})
            if status == 0:
                status = 500
                response = error_response(500, "the lab failed on this request (a bug: the "
                                          "request id is in the server's log)", request_id)
                await response(scope, receive, send_with_headers)
        finally:
            self._record(scope, request_id, status, sent, time.perf_counter() - start)

    def _record(self, scope: Scope, request_id: str, status: int, sent: int,
                seconds: float) -> None:
        route = route_of(scope)
        method = scope["method"]
        status_text = str(status) if status else "disconnected"
        self.metrics.requests.labels(method, route, status_text).inc()
        self.metrics.latency.labels(method, route).observe(seconds)
        client = scope.get("client")
        ACCESS.info("request", extra={
            "request_id": request_id, "method": method, "path": scope["path"],
            "route": route, "status": status or None, "duration_ms": round(seconds * 1000, 2),
            "bytes": sent, "client": client[0] if client else None})


def route_of(scope: Scope) -> str:
    """The route's template (`/api/rooms/{code}`), a mount's prefix, or `unmatched`: a
    label of bounded count, whatever paths clients send."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path
    root = scope.get("root_path", "")
    if isinstance(root, str) and root:
        return root + "/*"
    return "unmatched"
