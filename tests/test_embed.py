"""The embed page's shell and headers: only /embed takes the settings' frame-ancestors,
every other page keeps 'none'; its panels and controls are the known names asked for."""

from __future__ import annotations

import re
from typing import Any

EMBEDDER = "https://course.example.org"


def test_only_the_embed_may_be_framed_where_settings_say(app_client: Any) -> None:
    client = app_client(embed_frame_ancestors=EMBEDDER)
    embed = client.get("/embed", params={"p": "eA", "s": 2})
    assert embed.status_code == 200
    assert f"frame-ancestors {EMBEDDER};" in embed.headers["content-security-policy"]
    assert "x-frame-options" not in embed.headers
    for path in ("/", "/present", "/quiz", "/join"):
        other = client.get(path)
        assert "frame-ancestors 'none'" in other.headers["content-security-policy"], path
        assert other.headers["x-frame-options"] == "DENY", path


def test_by_default_nobody_may_frame_the_embed(app_client: Any) -> None:
    embed = app_client().get("/embed")
    assert "frame-ancestors 'none'" in embed.headers["content-security-policy"]
    assert embed.headers["x-frame-options"] == "DENY"


def test_the_shell_has_no_editor_and_only_known_parts(app_client: Any) -> None:
    html = app_client().get("/embed", params={
        "panels": "queue,<script>,leaves", "controls": "step,evil"}).text
    assert "<textarea" not in html and "contenteditable" not in html
    assert 'id="run"' not in html and "<script>," not in html and "evil" not in html
    assert 'id="queue"' in html and 'id="leaves"' in html and 'id="lines"' not in html
    hidden = set(re.findall(r'id="(first|back|play|forward-step|last|scrub)"[^>]*hidden', html))
    assert hidden == {"play", "scrub"}
    assert not re.search(r"\sstyle\s*=", html) and not re.search(r"\son[a-z]+\s*=", html)


def test_a_step_that_is_not_a_count_is_refused(app_client: Any) -> None:
    response = app_client().get("/embed", params={"s": "-1"})
    assert response.status_code == 422
    assert response.json()["errors"][0]["loc"] == ["query", "s"]
