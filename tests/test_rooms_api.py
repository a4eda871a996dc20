"""The rooms' routes and their errors, through create_app and Starlette's TestClient (the
streams and the two-process runs are tests/test_rooms.py's)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from app.presets import PRESETS
from app.rooms import codes
from app.trace import run_source

SOURCE = PRESETS[0].source
Client = Any


@pytest.fixture
def client(app_client: Callable[..., Client]) -> Client:
    return app_client()


def create(client: Client, state: dict[str, Any] | None = None) -> tuple[str, dict[str, str]]:
    r = client.post("/api/rooms", json={"state": state} if state else None)
    assert r.status_code == 201, r.text
    body = r.json()
    return body["code"], {"Authorization": f"Bearer {body['token']}"}


def test_a_new_room(client: Client) -> None:
    r = client.post("/api/rooms", json={"state": {"source": SOURCE, "pass": 0, "step": 2}})
    assert r.status_code == 201
    body = r.json()
    assert set(body) == {"code", "token", "join_url", "qr_url"}
    assert codes.normalize(body["code"]) == body["code"]
    assert set(body["code"]) <= set(codes.ALPHABET)
    assert len(body["token"]) >= 40
    assert body["join_url"] == f"http://testserver/join/{body['code']}"
    info = client.get(f"/api/rooms/{body['code']}").json()
    assert info["state"] == {"source": SOURCE, "pass": 0, "step": 2, "settings": {}}
    assert info["version"] == 1 and info["followers"] == 0 and info["poll"] is None


def test_a_room_without_a_first_frame(client: Client) -> None:
    code, token = create(client)
    assert client.get(f"/api/rooms/{code}").json()["state"] is None
    assert client.post(f"/api/rooms/{code}/polls", headers=token).status_code == 409


def test_codes_are_read_as_typed(client: Client) -> None:
    code, _ = create(client)
    typed = f"{code[:3].lower()} {code[3:]}"
    assert client.get(f"/api/rooms/{typed}").json()["code"] == code
    assert client.get(f"/api/rooms/{code[:3]}-{code[3:]}").status_code == 200


@pytest.mark.parametrize("code", ["AAAAAA", "0OIL15", "KM7", "KM7RTXY"])
def test_unknown_or_impossible_codes_are_404(client: Client, code: str) -> None:
    for method, path in [("GET", ""), ("GET", "/events"), ("GET", "/qr.svg"),
                         ("PUT", "/state"), ("DELETE", ""), ("POST", "/polls")]:
        r = client.request(method, f"/api/rooms/{code}{path}",
                           json={"source": SOURCE} if method == "PUT" else None)
        assert r.status_code == 404, (method, path, r.text)


def test_codes_have_no_look_alikes() -> None:
    for c in "0O1IL2Z5S8B6GUVQDN":                # N: said aloud, it is heard as M
        assert c not in codes.ALPHABET
    made = {codes.new_code() for _ in range(200)}
    assert len(made) > 190 and all(codes.normalize(c) == c for c in made)


def test_tokens_are_compared_by_their_hash() -> None:
    token = codes.new_token()
    stored = codes.token_hash(token)
    assert token not in stored
    assert codes.token_matches(token, stored)
    assert not codes.token_matches(token[:-1] + "x", stored)
    assert not codes.token_matches(None, stored) and not codes.token_matches("", stored)


@pytest.mark.parametrize("state", [
    {"source": SOURCE, "pass": -1, "step": 0},
    {"source": SOURCE, "pass": 0, "step": -2},
    {"source": SOURCE, "step": "two"},
    {"pass": 0, "step": 0},
    {"source": "a = 1.0\n" * 9000},
    {"source": SOURCE, "pixels": [1, 2, 3]},
    {"source": SOURCE, "settings": {f"k{i}": i for i in range(17)}},
    {"source": SOURCE, "settings": {"speed": [1, 2]}},
])
def test_a_malformed_view_state_is_422(client: Client, state: dict[str, Any]) -> None:
    code, token = create(client)
    assert client.put(f"/api/rooms/{code}/state", json=state, headers=token).status_code == 422


def test_put_state_needs_the_token(client: Client) -> None:
    code, token = create(client, {"source": SOURCE})
    other, _ = create(client, {"source": SOURCE})
    state = {"source": SOURCE, "pass": 0, "step": 3}
    assert client.put(f"/api/rooms/{code}/state", json=state).status_code == 403
    other_token = {"Authorization": f"Bearer {client.post('/api/rooms').json()['token']}"}
    assert client.put(f"/api/rooms/{code}/state", json=state,
                      headers=other_token).status_code == 403
    assert client.put(f"/api/rooms/{other}/state", json=state, headers=token).status_code == 403
    assert client.put(f"/api/rooms/{code}/state", json=state, headers=token).status_code == 204
    assert client.get(f"/api/rooms/{code}").json()["version"] == 2


def test_polls_and_their_errors(client: Client) -> None:
    code, token = create(client, {"source": SOURCE, "pass": 0, "step": 0})
    assert client.post(f"/api/rooms/{code}/polls", json={"kind": "other"},
                       headers=token).status_code == 422
    created = client.post(f"/api/rooms/{code}/polls", headers=token).json()
    poll = created["question"]["id"]
    nodes = [c["node"] for c in created["question"]["candidates"]]
    answer = f"/api/rooms/{code}/polls/{poll}/answers"
    outside = max(nodes) + 100
    assert client.post(answer, json={"device": "d-1234567", "node": outside}).status_code == 422
    assert client.post(answer, json={"device": "short", "node": nodes[0]}).status_code == 422
    assert client.post(answer, json={"device": "has spaces!!", "node": nodes[0]}).status_code == 422
    assert client.post(f"/api/rooms/{code}/polls/nope/answers",
                       json={"device": "d-1234567", "node": nodes[0]}).status_code == 404
    assert client.post(answer, json={"device": "d-1234567", "node": nodes[0]}).status_code == 201
    assert client.get(f"/api/rooms/{code}/polls/nope", headers=token).status_code == 404
    assert client.post(f"/api/rooms/{code}/polls/{poll}/reveal").status_code == 403
    first = client.post(f"/api/rooms/{code}/polls/{poll}/reveal", headers=token).json()
    assert client.post(f"/api/rooms/{code}/polls/{poll}/reveal", headers=token).json() == first
    assert client.get(f"/api/rooms/{code}").json()["revealed"] == first
    # the presenter moves on: the poll goes with its frame
    client.put(f"/api/rooms/{code}/state", json={"source": SOURCE, "step": 1}, headers=token)
    info = client.get(f"/api/rooms/{code}").json()
    assert info["poll"] is None and info["revealed"] is None
    assert client.post(answer, json={"device": "d-7654321", "node": nodes[0]}).status_code == 404


def test_no_poll_where_nothing_pops_next(client: Client) -> None:
    pops = len(run_source(SOURCE).passes[0].steps)
    code, token = create(client, {"source": SOURCE, "pass": 0, "step": pops})
    r = client.post(f"/api/rooms/{code}/polls", headers=token)
    assert r.status_code == 409 and "nothing pops next" in r.json()["detail"]
    client.put(f"/api/rooms/{code}/state", json={"source": "a = (\n"}, headers=token)
    assert client.post(f"/api/rooms/{code}/polls", headers=token).status_code == 409


def test_ending_a_room(client: Client) -> None:
    code, token = create(client)
    assert client.delete(f"/api/rooms/{code}").status_code == 403
    assert client.delete(f"/api/rooms/{code}", headers=token).status_code == 204
    assert client.get(f"/api/rooms/{code}").status_code == 404
    assert client.delete(f"/api/rooms/{code}", headers=token).status_code == 404


def svg_modules(svg: str) -> set[tuple[int, int]]:
    """The dark modules (row, column) that segno's SVG path draws: `M x y` / `m dx dy`
    move, `h n` draws n modules along the row whose middle is y."""
    path = re.search(r' d="([^"]+)"', svg)
    assert path is not None, svg
    x = y = 0.0
    dark: set[tuple[int, int]] = set()
    for op, a, b in re.findall(r"([Mmh])(-?[\d.]+)(?: (-?[\d.]+))?", path.group(1)):
        if op == "M":
            x, y = float(a), float(b)
        elif op == "m":
            x, y = x + float(a), y + float(b)
        else:
            dark.update((int(y), int(x) + i) for i in range(int(float(a))))
            x += float(a)
    return dark


def test_the_qr_code_is_an_svg_of_the_join_url(client: Client) -> None:
    import segno

    r = client.post("/api/rooms")
    code, join_url = r.json()["code"], r.json()["join_url"]
    r = client.get(f"/api/rooms/{code}/qr.svg")
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    assert r.text.startswith("<svg") and f"Join {code}" in r.text and "<script" not in r.text
    drawn = svg_modules(r.text)
    left, top = min(c for _, c in drawn), min(row for row, _ in drawn)
    drawn = {(row - top, c - left) for row, c in drawn}
    # What it encodes is the join URL: the modules are a QR code of exactly that text.
    encodes = []
    for level in "LMQH":
        qr = segno.make(join_url, error=level, boost_error=False)
        modules = {(i, j) for i, row in enumerate(qr.matrix) for j, v in enumerate(row) if v}
        encodes.append(drawn == modules)
    assert any(encodes), "the QR code is not the join URL's"


def test_join_pages(client: Client) -> None:
    code, _ = create(client)
    r = client.get(f"/join/{code.lower()}", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/?room={code}"
    r = client.get("/join", params={"code": f"{code[:3]} {code[3:]}"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].endswith(f"/join/{code}")
    assert client.get("/join").status_code == 200
    missing = client.get("/join/CCCCCC", follow_redirects=False)
    assert missing.status_code == 404 and "No live session" in missing.text
    assert client.get("/join", params={"code": "???"}).status_code == 404
    for page in ("/present", "/present/notes", "/join"):
        r = client.get(page)
        assert "default-src 'self'" in r.headers["content-security-policy"], page
        assert "<script>" not in r.text and " style=" not in r.text, page


def test_the_routes_are_described_in_openapi(client: Client) -> None:
    schema = client.get("/openapi.json").json()
    paths = schema["paths"]
    assert set(paths["/api/rooms"]) == {"post"}
    assert set(paths["/api/rooms/{code}"]) == {"get", "delete"}
    assert set(paths["/api/rooms/{code}/state"]) == {"put"}
    assert set(paths["/api/rooms/{code}/events"]) == {"get"}
    assert set(paths["/api/rooms/{code}/polls"]) == {"post"}
    assert set(paths["/api/rooms/{code}/polls/{poll}/answers"]) == {"post"}
    assert "text/event-stream" in paths["/api/rooms/{code}/events"]["get"]["responses"]["200"][
        "content"]
    put = paths["/api/rooms/{code}/state"]["put"]
    body = put["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert body.endswith("/ViewState")
    assert "204" in put["responses"] and put["security"]
    assert paths["/api/rooms"]["post"]["responses"]["201"]["content"]["application/json"][
        "schema"]["$ref"].endswith("/RoomCreated")
    view_state = schema["components"]["schemas"]["ViewState"]["properties"]
    assert {"source", "pass", "step", "settings"} == set(view_state)
    assert set(paths["/api/lessons"]) == {"get"}


def test_trace_queue_and_rooms_settings_come_from_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from app.web.settings import Settings

    monkeypatch.setenv("LAB_REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("LAB_ROOM_IDLE_EXPIRY_S", "60")
    monkeypatch.setenv("LAB_TRACE_QUEUE_LIMIT", "5")
    settings = Settings()
    assert (settings.redis_url, settings.room_idle_expiry_s, settings.trace_queue_limit) == \
        ("redis://127.0.0.1:1/0", 60, 5)
