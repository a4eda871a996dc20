"""The page shell: CSP, hashed static URLs, no inline script or style, nothing from
another host, and static files cached only when their URL carries the current hash."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.web.app import create_app
from app.web.pages import PRESENTER_ONLY, STATIC, TEMPLATES, static_tree

FIRST_LOAD_BUDGET = 150_000


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


@pytest.fixture(scope="module")
def shell(client: TestClient) -> str:
    response = client.get("/")
    assert response.status_code == 200
    return str(response.text)


def test_shell_has_csp_and_no_inline_script_or_style(client: TestClient, shell: str) -> None:
    csp = client.get("/").headers["content-security-policy"]
    assert "script-src 'self'" in csp and "style-src 'self'" in csp
    assert "unsafe-inline" not in csp
    for script in re.findall(r"<script\b[^>]*>(.*?)</script>", shell, re.S):
        assert script.strip() == "", "inline script"
    assert all("src=" in tag for tag in re.findall(r"<script\b[^>]*>", shell))
    assert "<style" not in shell
    assert not re.search(r"\sstyle\s*=", shell)
    assert not re.search(r"\son[a-z]+\s*=", shell), "inline event handler"


def test_static_urls_carry_the_content_hash(shell: str) -> None:
    version = static_tree().version
    assert re.fullmatch(r"[0-9a-f]{12}", version)
    urls = re.findall(r'(?:src|href)="(/static/[^"]+)"', shell)
    assert f"/static/{version}/js/app.js" in urls
    assert f"/static/{version}/css/lab.css" in urls
    assert all(u.startswith(f"/static/{version}/") for u in urls)
    preloaded = {u.removeprefix(f"/static/{version}/") for u in urls}
    modules = {p.relative_to(STATIC).as_posix() for p in STATIC.rglob("*.js")}
    lab = {m for m in modules if not m.startswith(PRESENTER_ONLY)}
    assert lab <= preloaded, "every module of the lab page is preloaded under the hash"
    assert not (modules - lab) & preloaded, "the presenter's are loaded only where used"


def test_hashed_files_are_immutable_and_others_revalidate(client: TestClient) -> None:
    version = static_tree().version
    current = client.get(f"/static/{version}/js/app.js")
    assert current.status_code == 200
    assert "immutable" in current.headers["cache-control"]
    assert current.headers["content-type"].startswith(("text/javascript", "application/javascript"))
    old = client.get("/static/000000000000/js/app.js")
    assert old.status_code == 200 and old.headers["cache-control"] == "no-cache"
    assert client.get("/").headers["cache-control"] == "no-cache"
    assert client.get(f"/static/{version}/js/nope.js").status_code == 404
    assert client.get(f"/static/{version}/../app/web/app.py").status_code == 404


def test_the_version_follows_the_content(tmp_path: Path) -> None:
    (tmp_path / "a.js").write_text("export const a = 1;\n")
    first = static_tree(tmp_path).version
    (tmp_path / "a.js").write_text("export const a = 2;\n")
    assert static_tree(tmp_path).version != first


def test_modules_import_only_relative_urls_and_no_other_host() -> None:
    files = [*STATIC.rglob("*.js"), *STATIC.rglob("*.css"), *TEMPLATES.rglob("*.html")]
    for path in files:
        text = path.read_text()
        for spec in re.findall(r"^\s*import\b[^;]*?from\s+'([^']+)'", text, re.M):
            assert spec.startswith(("./", "../")), f"{path.name}: {spec}"
        hosts = re.findall(r"https?://[^\s'\"`)]+", text)
        assert all(h.startswith("http://www.w3.org/") for h in hosts), f"{path.name}: {hosts}"
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text, path.name


def test_first_load_is_small(client: TestClient, shell: str) -> None:
    """The bytes a browser receives (static files gzipped, the shell and the presets as
    they are), and each file is the same once decoded."""
    version = static_tree().version
    total = len(shell.encode())
    for url in set(re.findall(r'(?:src|href)="(/static/[^"]+)"', shell)):
        response = client.get(url, headers={"Accept-Encoding": "gzip"})
        assert response.headers["content-encoding"] == "gzip", url
        assert response.headers["vary"] == "Accept-Encoding"
        assert response.content == (STATIC / url.split("/", 3)[3]).read_bytes()
        total += int(response.headers["content-length"])
    total += len(client.get("/api/presets").content)
    assert total < FIRST_LOAD_BUDGET, f"{total} bytes"
    assert version in shell


def test_static_files_are_sent_whole_without_gzip(client: TestClient, shell: str) -> None:
    url = re.findall(r'src="(/static/[^"]+\.js)"', shell)[0]
    response = client.get(url, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in response.headers
    assert response.content == (STATIC / url.split("/", 3)[3]).read_bytes()
    etag = response.headers["etag"]
    again = client.get(url, headers={"Accept-Encoding": "gzip", "If-None-Match": etag})
    assert again.status_code == 304
