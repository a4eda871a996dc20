"""The server's settings: one pydantic-settings object, read from `LAB_*` variables."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.limits import Limits


class Settings(BaseSettings):
    """`LAB_HOST`, `LAB_PORT`, `LAB_MAX_NODES`, ... (see app/limits.py for the limits)."""

    model_config = SettingsConfigDict(env_prefix="LAB_")

    host: str = "127.0.0.1"
    port: int = 8000
    max_source_bytes: int = Limits.max_source_bytes
    max_lines: int = Limits.max_lines
    max_depth: int = Limits.max_depth
    max_nodes: int = Limits.max_nodes
    max_elements: int = Limits.max_elements
    max_number_bits: int = Limits.max_number_bits
    max_statements: int = Limits.max_statements
    max_iterations: int = Limits.max_iterations
    max_call_depth: int = Limits.max_call_depth
    max_hooks: int = Limits.max_hooks
    max_seconds: float = Limits.max_seconds
    max_full_passes: int = Limits.max_full_passes
    max_full_values: int = Limits.max_full_values
    max_full_steps: int = Limits.max_full_steps
    # Rooms (instructor demo mode): in-process unless LAB_REDIS_URL names a Redis server.
    redis_url: str | None = Field(None, description="redis://HOST:PORT/DB: rooms shared by "
                                                    "every server process that names it")
    room_idle_expiry_s: int = Field(7200, ge=1, description="a room ends after this long "
                                                             "without its presenter")
    lessons_dir: Path | None = Field(None, description="more lessons (*.toml) to offer")
    # Traces run off the event loop in this many threads; this many more may wait.
    trace_workers: int = Field(2, ge=1)
    trace_queue_limit: int = Field(64, ge=0)
    # Serving a course on the internet (app/ops): bodies, rate limits, framing, processes.
    max_body_bytes: int = Field(400_000, ge=1024, description="the largest request body "
                                "read: more is refused with 413 while it arrives (a program "
                                "at max_source_bytes fits even with its text JSON-escaped)")
    rate_trace: str = Field("300/minute", description="traces (and streams) per client; "
                            "`limits` notation (`10/second;300/minute`), empty for none")
    rate_rooms: str = Field("30/hour", description="rooms created per client")
    rate_polls: str = Field("600/minute", description="poll actions per client: opening, "
                            "answering, tallying, revealing")
    rate_lookups: str = Field("120/minute", description="room codes per client that find "
                              "no room: past it, every lookup by a code is refused (429) until "
                              "the window moves, so that codes cannot be found by guessing")
    rate_limit_exempt: str = Field("127.0.0.1,::1", description="addresses never limited, "
                                   "comma-separated (the machine's own checks)")
    forwarded_allow_ips: str = Field("127.0.0.1", description="proxies whose "
                                     "X-Forwarded-For names the client (uvicorn's)")
    embed_frame_ancestors: str = Field("'none'", description="CSP frame-ancestors of the "
                                       "pages under /embed: the sites that may frame them")
    workers: int = Field(1, ge=1, description="server processes (`serve --workers`)")
    log_level: str = Field("info", description="uvicorn's and the lab's log level")

    def rates(self) -> dict[str, str]:
        return {"trace": self.rate_trace, "rooms": self.rate_rooms, "polls": self.rate_polls,
                "lookups": self.rate_lookups}

    def exempt(self) -> list[str]:
        return [a.strip() for a in self.rate_limit_exempt.split(",") if a.strip()]

    def limits(self) -> Limits:
        return Limits(**{name: getattr(self, name) for name in Limits.names()})
