"""`/embed`: a read-only view of one program at one step, for a course page's iframe.

The page is the lab's own modules (store.js, the graph, narration and queue views) on a
shell without an editor. Which panels and controls it shows comes from the query, read here
against fixed names (anything else is ignored), so the template renders only known parts;
the program itself (`p`, base64url of UTF-8, as the lab's links carry it) and the step
(`s`) are read by static/js/embed.js. Its frame-ancestors policy is the one the settings
give `/embed` (app/ops/edge.py); every other page may be framed by none."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from app.web.pages import TEMPLATES, StaticTree

# modules: the network views in the graph and the leaves (module bands, tensors as heatmaps);
# gradients and optimizer: the lab's "Gradients at this step" and optimizer.step() panels.
# The three load (static/js/views/network/) only for a run with tensors, modules or a step.
PANELS = ("code", "narration", "queue", "leaves", "modules", "gradients", "optimizer")
SIDE_PANELS = ("queue", "leaves", "gradients", "optimizer")
CONTROLS = ("step", "play", "scrub", "speed")
DEFAULT_PANELS = "code,narration"
DEFAULT_CONTROLS = "step,play,scrub"
THEMES = ("auto", "light", "dark")

router = APIRouter(tags=["pages"])
_templates = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape())


def chosen(text: str, names: tuple[str, ...]) -> list[str]:
    """The known names in a comma-separated list, in the page's own order; `none` is none."""
    asked = {part.strip().lower() for part in text.split(",")}
    return [name for name in names if name in asked]


@router.get("/embed", response_class=HTMLResponse, include_in_schema=False)
async def embed(
    request: Request,
    p: str = Query("", max_length=400_000, description="the program, base64url of UTF-8"),
    s: int = Query(0, ge=0, description="the step shown first"),
    panels: str = Query(DEFAULT_PANELS, max_length=200, description=", ".join(PANELS)),
    controls: str = Query(DEFAULT_CONTROLS, max_length=200, description=", ".join(CONTROLS)),
    t: str = Query("auto", max_length=10, description="the colour theme: auto, light, dark"),
) -> HTMLResponse:
    tree: StaticTree = request.app.state.static_tree
    html = _templates.get_template("embed.html").render(
        static=tree.url, panels=chosen(panels, PANELS), controls=chosen(controls, CONTROLS),
        side=SIDE_PANELS, theme=t if t in THEMES else "auto")
    return HTMLResponse(html, headers={"Cache-Control": "no-cache"})
