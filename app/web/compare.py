"""`/compare`: two programs, or two passes of one, side by side (static/js/compare.js)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from app.web.pages import TEMPLATES, StaticTree

router = APIRouter(tags=["pages"])
_templates = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape())
LEFT = "x = 2.0\ny = x * x\nloss = y + x\n"
RIGHT = "x = 2.0\ny = x * x * x\nloss = y + x\n"


@router.get("/compare", response_class=HTMLResponse, include_in_schema=False)
async def compare(request: Request) -> HTMLResponse:
    tree: StaticTree = request.app.state.static_tree
    html = _templates.get_template("compare.html").render(static=tree.url, left=LEFT, right=RIGHT)
    return HTMLResponse(html, headers={"Cache-Control": "no-cache"})
