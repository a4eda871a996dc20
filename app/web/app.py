"""`create_app(settings)`: the FastAPI application, thin by design."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request, Response

from app.web import api, pages, present, questions, rooms
from app.web.settings import Settings

# No inline script or style and no other host, on every response.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    # /docs is the lab's own page (pages.py): FastAPI's loads Swagger UI from another host.
    app = FastAPI(title="Autograd Lab", version="0.1.0", docs_url=None, redoc_url=None,
                  description="See PyTorch's backward pass, one ready-queue pop at a time.")
    app.state.settings = settings
    app.state.trace_cache = api.TraceCache()
    app.state.trace_queue = api.TraceQueue(settings.trace_workers, settings.trace_queue_limit)
    app.include_router(api.router)
    app.include_router(api.health_router)
    app.include_router(rooms.router)
    app.include_router(present.lessons_router)
    app.include_router(questions.router)
    app.include_router(pages.router)
    app.include_router(present.router)
    pages.mount_static(app)

    @app.middleware("http")
    async def security_headers(request: Request,
                               call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await call_next(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        return response

    return app
