"""`create_app(settings)`: the FastAPI application, thin by design.

Around the routes, outermost first: the edge (request id, security headers, access log,
request metrics, a bug's 500 as the error document: app/ops/edge.py), then the body limit
(app/ops/body_limit.py); rate limits are dependencies of the routes they guard."""

from __future__ import annotations

from fastapi import FastAPI

from app.ops.body_limit import BodyLimit
from app.ops.edge import CONTENT_SECURITY_POLICY, Edge, Headers
from app.ops.metrics import Metrics
from app.ops.ratelimit import RateLimits
from app.web import (
    api,
    compare,
    derivatives,
    embed,
    errors,
    pages,
    present,
    questions,
    rooms,
    source,
)
from app.web.settings import Settings

__all__ = ["CONTENT_SECURITY_POLICY", "create_app"]


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    # /docs is the lab's own page (pages.py): FastAPI's loads Swagger UI from another host.
    app = FastAPI(title="Autograd Lab", version="0.1.0", docs_url=None, redoc_url=None,
                  description="See PyTorch's backward pass, one ready-queue pop at a time.")
    app.state.settings = settings
    app.state.metrics = Metrics()
    app.state.rate_limits = RateLimits(settings.rates(), settings.redis_url, settings.exempt())
    app.state.trace_cache = api.TraceCache(app.state.metrics)
    app.state.trace_queue = api.TraceQueue(settings.trace_workers, settings.trace_queue_limit,
                                           app.state.metrics)
    app.include_router(api.router)
    app.include_router(derivatives.router)
    app.include_router(compare.router)
    app.include_router(api.health_router)
    app.include_router(rooms.router)
    app.include_router(present.lessons_router)
    app.include_router(questions.router)
    app.include_router(pages.router)
    app.include_router(present.router)
    app.include_router(embed.router)
    app.include_router(source.router)
    pages.mount_static(app)
    errors.install(app)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(Edge, metrics=app.state.metrics,
                       headers=Headers(embed_frame_ancestors=settings.embed_frame_ancestors))
    return app
