"""Schemathesis against the app's own /openapi.json: every operation, every check, a
bounded number of generated requests each (valid and invalid ones). Every answer must be
a documented status with its documented body and headers, never a 5xx.

The rooms' event stream never ends by design, so it is left out here (tests/test_rooms.py
reads it); everything else is generated."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from app.web.app import create_app
from app.web.settings import Settings

APP = create_app(Settings(rate_trace="", rate_rooms="", rate_polls="", rate_lookups="",
                           max_seconds=2.0))
schema = schemathesis.openapi.from_asgi("/openapi.json", APP).exclude(
    path="/api/rooms/{code}/events")


@pytest.mark.timeout(600)
@schema.parametrize()
@settings(max_examples=12, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
def test_the_api_answers_as_it_documents(case: Any) -> None:
    case.call_and_validate()
