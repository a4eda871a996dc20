"""The two builds of the lab a benchmark child can run: the sources as they are (pure
Python), and the compiled build in build/compiled (`make compiled`: the hot modules
compiled with mypyc, as the Docker image deploys them; see setup.py and the Makefile).

A child runs the compiled build with `app` and `engine` first on sys.path from
build/compiled and everything else (`bench`) from the checkout, the current directory
kept off sys.path (PYTHONSAFEPATH), as `make test-compiled` runs the tests.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMPILED_DIR = ROOT / "build" / "compiled"
STAMP = COMPILED_DIR / ".stamp"           # written by `make compiled` once it is complete
PURE, COMPILED = "pure", "compiled"
LABELS = {COMPILED: "compiled (as deployed)", PURE: "pure Python"}
PROBES = ("app.trace.build", "engine.graph_task")   # compiled in the compiled build


def available() -> bool:
    return STAMP.exists()


def deployed() -> str:
    """The build the figures that matter are about: compiled when it has been built."""
    return COMPILED if available() else PURE


def stale_sources() -> list[str]:
    """Sources edited since build/compiled was built (it then measures older code)."""
    if not available():
        return []
    built = STAMP.stat().st_mtime
    sources = [ROOT / "setup.py", ROOT / "pyproject.toml",
               *(ROOT / "app").rglob("*.py"), *(ROOT / "engine").rglob("*.py"),
               *(ROOT / "engine").rglob("*.c")]
    return sorted(str(p.relative_to(ROOT)) for p in sources if p.stat().st_mtime > built)


def child_env(build: str) -> dict[str, str]:
    """The environment of a child process that runs `build`."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if build == COMPILED:
        env.update(PYTHONSAFEPATH="1", PYTHONPATH=f"{COMPILED_DIR}{os.pathsep}{ROOT}")
    else:
        env.pop("PYTHONSAFEPATH", None)
        env["PYTHONPATH"] = str(ROOT)
    return env


def running() -> dict[str, str]:
    """In a child, after importing the lab: which build it really runs, and from where."""
    files = [importlib.import_module(name).__file__ or "" for name in PROBES]
    compiled = [f.endswith(".so") for f in files]
    build = COMPILED if all(compiled) else PURE if not any(compiled) else "mixed"
    return {"build": build, "from": files[0]}


def describe_compiled() -> list[str]:
    """Lines for the report's head about the compiled build."""
    if not available():
        return ["  compiled: build/compiled is missing (run `make compiled`); pure Python only"]
    lines = [f"  compiled: {COMPILED_DIR.relative_to(ROOT)}/ (mypyc), the build the Docker "
             "image deploys; pure = the sources as they are"]
    stale = stale_sources()
    if stale:
        shown = ", ".join(stale[:3]) + (f" and {len(stale) - 3} more" if len(stale) > 3 else "")
        lines.append(f"  WARNING: build/compiled is older than {shown} (run `make compiled`)")
    return lines
