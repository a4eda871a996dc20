"""The package as pip installs it (issue 16): the wheel carries static/, templates/ and the
lessons inside the app package (no top-level folders of site-packages), and an installed
copy, away from this checkout, serves the lab's page and its modules from there."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SERVE_FROM_INSTALLED = r"""
import sys
from pathlib import Path
from fastapi.testclient import TestClient
import app, app.lessons, app.web.pages as pages
from app.web.app import create_app

site = Path(sys.argv[1]).resolve()
assert Path(app.__file__).resolve().is_relative_to(site), app.__file__
assert pages.STATIC.is_relative_to(site / "app"), pages.STATIC
assert pages.TEMPLATES.is_relative_to(site / "app"), pages.TEMPLATES
assert app.lessons.shipped_dir().is_relative_to(site / "app"), app.lessons.shipped_dir()
with TestClient(create_app()) as client:
    page = client.get("/")
    assert page.status_code == 200 and "Autograd Lab" in page.text, page.status_code
    module = page.text.split('src="', 1)[1].split('"', 1)[0]
    js = client.get(module)
    assert js.status_code == 200 and js.content == (pages.STATIC / "js/app.js").read_bytes()
    assert client.get("/api/lessons").json(), "the shipped lessons"
    assert client.get("/embed").status_code == 200
print("served from", pages.STATIC)
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The wheel, and what its build printed."""
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                           "--no-build-isolation", "--wheel-dir", str(out), str(ROOT)],
                          check=True, cwd=ROOT, capture_output=True, text=True, timeout=240)
    return next(out.glob("autograd_lab-*.whl")), done.stdout + done.stderr


@pytest.fixture(scope="module")
def wheel(built: tuple[Path, str]) -> Path:
    return built[0]


def test_every_folder_of_the_page_is_a_named_package(built: tuple[Path, str]) -> None:
    """pyproject.toml names each folder under static/ (a new one must be added there), or
    setuptools warns that it "would be ignored" at every install."""
    assert "would be ignored" not in built[1], built[1][-2000:]


def test_the_wheel_carries_the_page_inside_the_app_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith(".dist-info")}
    assert tops == {"app", "engine"}, tops
    for source in [*(ROOT / "static").rglob("*"), *(ROOT / "templates").glob("*.html")]:
        if source.is_file():
            kind = source.relative_to(ROOT).parts[0]
            rest = source.relative_to(ROOT / kind).as_posix()
            assert f"app/{kind}/{rest}" in names, rest
    assert any(n.startswith("app/shipped_lessons/") and n.endswith(".toml") for n in names)


def test_an_installed_copy_serves_the_page_from_it(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--target", str(site), str(wheel)], check=True, capture_output=True,
                   timeout=240)
    away = tmp_path / "elsewhere"
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(site), PYTHONSAFEPATH="1")
    done = subprocess.run([sys.executable, "-c", SERVE_FROM_INSTALLED, str(site)], cwd=away,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "served from" in done.stdout
