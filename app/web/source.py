"""`/source/engine/...`: the lab's engine code, read-only, for the call path's links.

Only the Python files of `engine/` are served, from a list made once at startup (no
other path, no traversal can reach a file). Each top-level function and method is a
block with its name as its id, so `/source/engine/graph_task.py#execute` opens at
`GraphTask.execute`, which the page marks (`:target`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from app.web.pages import ROOT, TEMPLATES, StaticTree

ENGINE = ROOT / "engine"
SERVED = frozenset(p.relative_to(ROOT).as_posix() for p in ENGINE.rglob("*.py"))

router = APIRouter(tags=["pages"])
_templates = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape())


@dataclass(frozen=True)
class Block:
    """Lines of a file: a function or method (`name` its id), or the lines between."""

    name: str | None
    first: int                      # 1-based
    lines: list[str]


def blocks(text: str) -> list[Block]:
    """The file cut at its top-level functions and its classes' methods (each id once)."""
    lines = text.splitlines()
    spans: list[tuple[str, int, int]] = []
    seen: set[str] = set()
    for node in ast.parse(text).body:
        inner = node.body if isinstance(node, ast.ClassDef) else [node]
        for fn in inner:
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name not in seen:
                seen.add(fn.name)
                start = min([fn.lineno] + [d.lineno for d in fn.decorator_list])
                spans.append((fn.name, start, fn.end_lineno or fn.lineno))
    out: list[Block] = []
    at = 1
    for name, start, end in spans:
        if start > at:
            out.append(Block(None, at, lines[at - 1:start - 1]))
        out.append(Block(name, start, lines[start - 1:end]))
        at = end + 1
    if at <= len(lines):
        out.append(Block(None, at, lines[at - 1:]))
    return out


@router.get("/source/{path:path}", response_class=HTMLResponse, include_in_schema=False)
async def source(request: Request, path: str) -> HTMLResponse:
    """One engine file as a page, or the list of them (`/source/engine/`)."""
    tree: StaticTree = request.app.state.static_tree
    if path.rstrip("/") == "engine":
        html = _templates.get_template("source.html").render(
            static=tree.url, path="engine/", files=sorted(SERVED), blocks=None)
        return HTMLResponse(html)
    if path not in SERVED:
        raise HTTPException(404, f"no such engine file: {path}")
    text = Path(ROOT / path).read_text(encoding="utf-8")
    html = _templates.get_template("source.html").render(
        static=tree.url, path=path, files=None, blocks=blocks(text))
    return HTMLResponse(html, headers={"Cache-Control": "no-cache"})
