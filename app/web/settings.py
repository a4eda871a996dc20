"""The server's settings: one pydantic-settings object, read from `LAB_*` variables."""

from __future__ import annotations

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

    def limits(self) -> Limits:
        return Limits(**{name: getattr(self, name) for name in Limits.names()})
