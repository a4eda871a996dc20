"""The lab page: a Jinja2 shell; native ES modules from static/ do the rest.

Static files are served under `/static/<version>/...`, where the version is a hash of
the whole static tree. Every URL the shell writes carries it, and because ES modules
import each other by relative URLs (`./store.js`), their imports carry it too: a
browser can cache every file forever and still never run a stale module. A request
under another version (an old page) gets today's file with `no-cache`.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.datastructures import Headers
from starlette.responses import FileResponse, Response
from starlette.staticfiles import PathLike
from starlette.types import Scope

ROOT = Path(__file__).resolve().parents[2]
# An installed copy carries static/ and templates/ inside the app package (package data,
# mapped from the repository's own folders in pyproject.toml); a checkout has them at its root.
PACKAGED = Path(__file__).resolve().parents[1]
STATIC = PACKAGED / "static" if (PACKAGED / "static").is_dir() else ROOT / "static"
TEMPLATES = PACKAGED / "templates" if (PACKAGED / "templates").is_dir() else ROOT / "templates"
IMMUTABLE = "public, max-age=31536000, immutable"
# Text that gzip shrinks to about a third; the page's first load is measured compressed
# (tests/test_pages.py, bench/page.py), as a browser receives it.
COMPRESSIBLE = frozenset({".js", ".css", ".svg", ".html", ".json", ".txt"})
# Modules of the presenter and of a page that follows a room, which the lab page loads only
# then (present/follower.js is imported on demand), the quiz page's, and the network views,
# which the lab imports only for a run with tensors, modules or an optimizer: not preloaded
# with the lab's own.
# The embed's entry (/embed) and the exports (loaded at the lab's export buttons) likewise.
PRESENTER_ONLY = ("js/present/", "js/follow.js", "js/quiz/", "js/views/network/",
                  "js/embed.js", "js/export.js", "js/views/derivative.js",
                  "js/compare.js", "js/compare-page.js", "js/views/schedulers.js",
                  "js/views/timeline.js", "js/views/callpath.js")

router = APIRouter(tags=["pages"])
_templates = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape())


@dataclass(frozen=True)
class StaticTree:
    """The static files' version and the modules the page preloads."""

    version: str
    modules: tuple[str, ...]

    def url(self, path: str) -> str:
        return f"/static/{self.version}/{path}"


def static_tree(directory: Path = STATIC) -> StaticTree:
    digest = hashlib.sha256()
    files = sorted(p for p in directory.rglob("*") if p.is_file())
    for path in files:
        digest.update(path.relative_to(directory).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    modules = tuple(p.relative_to(directory).as_posix() for p in files if p.suffix == ".js")
    return StaticTree(version=digest.hexdigest()[:12], modules=modules)


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
async def index(request: Request) -> HTMLResponse:
    tree: StaticTree = request.app.state.static_tree
    html = _templates.get_template("index.html").render(
        static=tree.url, modules=[tree.url(m) for m in tree.modules if m != "js/app.js"
                                  and not m.startswith(PRESENTER_ONLY)])
    return HTMLResponse(html, headers={"Cache-Control": "no-cache"})


# Swagger UI's files, as the fastapi-offline package ships them: /docs needs no other host.
DOCS_ASSETS = Path(str(files("fastapi_offline") / "static"))
DOCS_ASSETS_URL = "/docs-assets"


@router.get("/docs", response_class=HTMLResponse, include_in_schema=False)
async def docs(request: Request) -> HTMLResponse:
    """The API's description in Swagger UI, every file from the lab itself (the page's CSP
    allows no other host and no inline script)."""
    tree: StaticTree = request.app.state.static_tree
    html = _templates.get_template("docs.html").render(
        static=tree.url, assets=DOCS_ASSETS_URL, openapi_url=request.app.openapi_url)
    return HTMLResponse(html, headers={"Cache-Control": "no-cache"})


class VersionedStatic(StaticFiles):
    """`/static/<version>/<path>` serves `static/<path>`; cached forever when the version
    is current, and gzipped for a browser that accepts it (each file compressed once)."""

    def __init__(self, directory: Path, version: str) -> None:
        super().__init__(directory=directory)
        self.version = version
        self._gzipped: dict[tuple[str, int, int], bytes] = {}

    def get_path(self, scope: Scope) -> str:
        _version, _, rest = super().get_path(scope).replace("\\", "/").partition("/")
        return rest or "."

    def file_response(self, full_path: PathLike, stat_result: os.stat_result, scope: Scope,
                      status_code: int = 200) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        current = super().get_path(scope).replace("\\", "/").split("/", 1)[0] == self.version
        response.headers["Cache-Control"] = IMMUTABLE if current else "no-cache"
        if (type(response) is FileResponse and response.status_code == 200
                and Path(full_path).suffix in COMPRESSIBLE
                and "gzip" in Headers(scope=scope).get("accept-encoding", "")):
            return self._compressed(response, Path(full_path), stat_result)
        return response

    def _compressed(self, response: FileResponse, path: Path,
                    stat_result: os.stat_result) -> Response:
        key = (str(path), stat_result.st_mtime_ns, stat_result.st_size)
        body = self._gzipped.get(key)
        if body is None:
            body = self._gzipped[key] = gzip.compress(path.read_bytes(), 9, mtime=0)
        headers = {k: v for k, v in response.headers.items()
                   if k not in ("content-length", "accept-ranges")}
        headers.update({"Content-Encoding": "gzip", "Vary": "Accept-Encoding"})
        return Response(body, headers=headers, media_type=response.media_type)


def mount_static(app: FastAPI) -> None:
    tree = static_tree()
    app.state.static_tree = tree
    app.mount("/static", VersionedStatic(STATIC, tree.version), name="static")
    app.mount(DOCS_ASSETS_URL, StaticFiles(directory=DOCS_ASSETS), name="docs-assets")
