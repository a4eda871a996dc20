"""The lab page: a Jinja2 shell; native ES modules from static/ do the rest."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ROOT = Path(__file__).resolve().parent.parent
router = APIRouter(tags=["pages"])


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
async def index() -> HTMLResponse:
    return HTMLResponse("<!doctype html><title>Autograd Lab</title><p>The lab page is coming.")


def mount_static(app: FastAPI) -> None:
    app.mount("/static", StaticFiles(directory=ROOT / "static"), name="static")
