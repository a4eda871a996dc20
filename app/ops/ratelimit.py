"""Rate limits per client, through the `limits` library: a moving window per scope
(tracing, room creation, polls), kept in the process or, when LAB_REDIS_URL names a
Redis server, in Redis, so that every process behind a load balancer counts the same
client once. A refused request gets 429 with `Retry-After` and the error document.

A client is its address as the server sees it (behind a proxy, the forwarded one: see
`forwarded_allow_ips`); an IPv6 client is its /64, the block one host usually holds. The
limits are for fairness between clients; a lecture hall behind one NAT address shares
one, so the defaults are generous (settings.py). Addresses in `exempt` (the machine
itself, by default: its health checks and benchmarks) are never limited. If the
limiter's Redis is unreachable, requests pass (and the error log says so): a broken
limiter must not take the lab down with it.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

from fastapi import HTTPException, Request
from limits import RateLimitItem, parse_many
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

logger = logging.getLogger("lab.error")


class RateLimits:
    def __init__(self, rates: Mapping[str, str], redis_url: str | None,
                 exempt: list[str]) -> None:
        """`rates`: scope → `"300/minute"` or `"10/second;300/minute"`; empty: no limit."""
        self.items: dict[str, list[RateLimitItem]] = {
            scope: parse_many(rate) for scope, rate in rates.items() if rate.strip()}
        if redis_url:
            storage = storage_from_string("async+" + redis_url, implementation="redispy",
                                          key_prefix="lab:limits")
        else:
            storage = storage_from_string("async+memory://")
        self.limiter = MovingWindowRateLimiter(storage)
        self.exempt = {_client_key(address) for address in exempt}

    async def retry_after(self, scope: str, address: str | None, count: bool = True
                          ) -> int | None:
        """None if the client may go on; else the seconds until it may. This request
        counts unless `count` is false (then only a miss counts: see `misses_limited`)."""
        items = self.items.get(scope)
        client = _client_key(address or "unknown")
        if not items or client in self.exempt:
            return None
        try:
            for item in items:
                allowed = (self.limiter.hit if count else self.limiter.test)
                if not await allowed(item, scope, client):
                    stats = await self.limiter.get_window_stats(item, scope, client)
                    return max(1, math.ceil(stats.reset_time - time.time()))
        except Exception:
            logger.warning("rate limits: the limiter's store failed; letting the request "
                           "through", exc_info=True)
        return None

    async def count(self, scope: str, address: str | None) -> None:
        """Count one against the client's `scope` (a room code that found no room)."""
        await self.retry_after(scope, address)


def _client_key(address: str) -> str:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def limited(scope: str) -> Callable[[Request], Awaitable[None]]:
    """A route dependency: 429 with Retry-After past the client's limit for `scope`."""

    async def check(request: Request) -> None:
        limits: RateLimits = request.app.state.rate_limits
        wait = await limits.retry_after(scope, request.client.host if request.client else None)
        if wait is not None:
            request.app.state.metrics.rate_limited.labels(scope).inc()
            raise HTTPException(429, f"too many requests ({scope}) from this address: try "
                                f"again in {wait} s", headers={"Retry-After": str(wait)})

    return check


async def lookup_allowed(request: Request, scope: str = "lookups") -> None:
    """429 with Retry-After for a client past its limit of wrong room codes (`scope`); a
    lookup itself does not count: only `count_miss` does."""
    limits: RateLimits = request.app.state.rate_limits
    address = request.client.host if request.client else None
    wait = await limits.retry_after(scope, address, count=False)
    if wait is not None:
        request.app.state.metrics.rate_limited.labels(scope).inc()
        raise HTTPException(429, f"too many wrong room codes from this address: try again "
                            f"in {wait} s", headers={"Retry-After": str(wait)})


async def count_miss(request: Request, scope: str = "lookups") -> None:
    await request.app.state.rate_limits.count(
        scope, request.client.host if request.client else None)


async def misses_limited(request: Request) -> AsyncIterator[None]:
    """A dependency of the routes that look a room up by its join code. A code is six of
    sixteen characters (read aloud, typed on a phone), so what keeps codes unguessable is
    this: every 404 a client gets from them counts against its `lookups` limit, and past
    it every lookup of that client is refused until the window moves. Right codes never
    count, so a hall of followers reconnecting at once is never refused."""
    await lookup_allowed(request)
    try:
        yield
    except HTTPException as e:
        if e.status_code == 404:
            await count_miss(request)
        raise
