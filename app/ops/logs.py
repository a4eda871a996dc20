"""Structured logs: one JSON object a line on stderr, for the access log (one line a
request, with its request id, route, status and duration) and for errors (with the
traceback as a field, never in a response).

`autograd-lab serve` hands LOG_CONFIG to uvicorn, so that uvicorn's own messages are JSON
lines too; uvicorn's access log is off, the lab writes its own (`lab.access`).
"""

from __future__ import annotations

import copy
import logging
import time
import traceback
from typing import Any

import orjson

ACCESS = logging.getLogger("lab.access")
ERRORS = logging.getLogger("lab.error")
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """`{"time", "level", "logger", "message", ...the record's extra fields}`."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
                    + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = "".join(traceback.format_exception(*record.exc_info))
        return orjson.dumps(entry, default=str).decode()


LOG_CONFIG: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": JsonFormatter}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "json",
                            "stream": "ext://sys.stderr"}},
    "loggers": {
        "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        "lab": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "app": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
    },
}


def log_config(level: str = "info") -> dict[str, Any]:
    """LOG_CONFIG at `level` (LAB_LOG_LEVEL), for uvicorn.run(log_config=...): uvicorn
    applies it in every worker process it starts, so each writes JSON lines."""
    config = copy.deepcopy(LOG_CONFIG)
    for name, logger in config["loggers"].items():
        if name != "uvicorn.access":
            logger["level"] = level.upper()
    return config
