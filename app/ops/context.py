"""The request id and the error document's bytes. The id is taken from a well-formed
`X-Request-ID` (a proxy's) or made here, and kept in the ASGI scope's state so that logs,
error documents and the response carry it."""

from __future__ import annotations

import re
import uuid
from typing import Any

import orjson
from starlette.responses import Response

_WELL_FORMED = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")


def new_request_id(headers: list[tuple[bytes, bytes]]) -> str:
    for name, value in headers:
        if name == b"x-request-id":
            text = value.decode("latin-1")
            if _WELL_FORMED.match(text):
                return text
    return uuid.uuid4().hex


def request_id_of(scope: Any) -> str | None:
    state = scope.get("state") or {}
    found = state.get("request_id")
    return found if isinstance(found, str) else None


def error_response(status: int, detail: str, request_id: str | None,
                   headers: dict[str, str] | None = None,
                   errors: list[dict[str, Any]] | None = None) -> Response:
    """The error document (app/web/errors.py describes it) as a response."""
    body = orjson.dumps({"detail": detail, "errors": errors, "request_id": request_id})
    return Response(body, status_code=status, media_type="application/json", headers=headers)
