"""One error document for every HTTP error the lab answers, and the OpenAPI description
that says so.

A program's own errors are part of its trace (HTTP 200); an HTTP error is for a request
the lab cannot take: malformed (422), too large (413), too many (429), a room that is not
there (404), a control action without the token (403)... Every one is
`{"detail": "...", "errors": [...] | null, "request_id": "..."}`, so a client reads one
shape: `detail` a sentence, `errors` the fields at fault (for a 422), `request_id` the id
the access log carries for that request.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, Field
from redis.exceptions import RedisError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Match

from app.ops.context import error_response, request_id_of

logger = logging.getLogger("lab.error")


class FieldError(BaseModel):
    loc: list[str | int] = Field(description="where in the request: body, source, ...")
    msg: str
    type: str


class ErrorDocument(BaseModel):
    """Every HTTP error's body."""

    detail: str = Field(description="what was wrong, in a sentence")
    errors: list[FieldError] | None = Field(None, description="the fields at fault (422)")
    request_id: str | None = Field(None, description="as in the access log and X-Request-ID")


# Statuses that any route may answer besides its own, and why (documented on each route).
COMMON = {
    413: "the request body is larger than the server's max_body_bytes",
    422: "the request is malformed: its fields, parameters or JSON",
}
UNAVAILABLE = "the rooms' store (Redis) is unreachable: try again after Retry-After seconds"


def _field_errors(exc: RequestValidationError) -> list[dict[str, Any]]:
    return [{"loc": [str(x) if not isinstance(x, int) else x for x in e.get("loc", ())],
             "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
            for e in exc.errors()]


async def _validation(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    errors = _field_errors(exc)
    first = errors[0] if errors else None
    where = ".".join(str(x) for x in first["loc"]) if first else "request"
    detail = f"malformed request: {where}: {first['msg']}" if first else "malformed request"
    return error_response(422, detail, request_id_of(request.scope), errors=errors)


async def _http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    status = exc.status_code
    if status == 400:   # a body that could not be read as JSON (FastAPI's 400) is malformed
        status = 422
    detail = exc.detail if isinstance(exc.detail, str) else "malformed request"
    headers = dict(exc.headers or {})
    if status == 405:
        headers["Allow"] = ", ".join(_allowed(request))
    return error_response(status, detail, request_id_of(request.scope), headers=headers)


def _allowed(request: Request) -> list[str]:
    """Every method some route takes at this path (Starlette's 405 names only the first
    route's, where a path has several: GET and DELETE of a room)."""
    methods: set[str] = set()
    for route in request.app.router.routes:
        match, _ = route.matches({**request.scope, "method": "GET"})
        if match != Match.NONE:
            methods |= set(getattr(route, "methods", None) or ())
    return sorted(methods)


async def _unavailable(request: Request, exc: Exception) -> Response:
    logger.warning("rooms: the store is unreachable", exc_info=exc,
                   extra={"request_id": request_id_of(request.scope)})
    return error_response(503, UNAVAILABLE, request_id_of(request.scope),
                          headers={"Retry-After": "1"})


def install(app: FastAPI) -> None:
    """The handlers, and an OpenAPI description whose every route lists the error statuses
    it may answer, each with this document."""
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(RedisError, _unavailable)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version,
                                 description=app.description, routes=app.routes)
            app.openapi_schema = describe_errors(schema)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def describe_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """Every operation's error responses point at ErrorDocument: FastAPI's own 422 schema
    is replaced, 422 is listed where the request has parameters or a body, 413 where it
    has a body; the routes' own errors (404, 429, ...) keep their descriptions."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)
    document = ErrorDocument.model_json_schema(ref_template="#/components/schemas/{model}")
    components.update(document.pop("$defs", {}))
    components["ErrorDocument"] = document
    ref = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorDocument"}}}
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            if "requestBody" in operation or operation.get("parameters"):
                responses.setdefault("422", {"description": COMMON[422]})
            if "requestBody" in operation:
                responses.setdefault("413", {"description": COMMON[413]})
            for status, response in responses.items():
                if status[0] in "45":
                    response["content"] = ref
                    if response.get("description") in (None, "", "Validation Error"):
                        response["description"] = COMMON.get(int(status), "an error")
    return schema
