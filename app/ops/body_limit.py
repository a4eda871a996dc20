"""Request bodies are limited while they are read, not after: a body announced larger than
the limit is refused before a byte of it is read, and one that grows past it (chunked, or
lying about its length) is cut off at the limit. Either way the client gets 413 with the
error document, and the server never holds more than `max_bytes` of any one body, however
many arrive at once."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.ops.context import error_response, request_id_of


class BodyTooLarge(Exception):
    """Raised into the app's read of the body; answered with 413."""


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        announced = _content_length(scope)
        if announced is not None and announced > self.max_bytes:
            await self._refuse(scope, send)
            return
        received = 0
        too_large = False
        started = False

        async def limited_receive() -> Message:
            nonlocal received, too_large
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    too_large = True
                    raise BodyTooLarge
            return message

        async def guarded_send(message: Message) -> None:
            # FastAPI turns an exception while reading the body into its own 400: once the
            # body was too large, whatever the app answers becomes the 413.
            nonlocal started
            if too_large:
                if not started:
                    started = True
                    await self._refuse(scope, send)
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except BodyTooLarge:
            if not started:
                started = True
                await self._refuse(scope, send)

    async def _refuse(self, scope: Scope, send: Send) -> None:
        response = error_response(
            413, f"the request body is larger than this server takes ({self.max_bytes:,} "
                 "bytes)", request_id_of(scope), headers={"Connection": "close"})
        await response(scope, _nothing, send)


async def _nothing() -> Message:
    return {"type": "http.disconnect"}


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
