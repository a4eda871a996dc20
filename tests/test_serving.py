"""Serving a course on the internet (issue 16), through create_app and its real routes:
body limits while reading, one error document, security headers on every response,
request ids in the JSON logs, /metrics, rate limits per client (in the process and shared
through a real Redis)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from app.ops.logs import JsonFormatter
from app.presets import PRESETS
from app.web.app import create_app
from app.web.settings import Settings

SOURCE = PRESETS[0].source
Client = Any
NO_LIMITS = {"rate_trace": "", "rate_rooms": "", "rate_polls": "", "rate_lookups": ""}


def is_error_document(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body: dict[str, Any] = response.json()
    assert set(body) == {"detail", "errors", "request_id"}, body
    assert isinstance(body["detail"], str) and body["detail"]
    assert body["request_id"] == response.headers["x-request-id"]
    assert "Traceback" not in response.text
    return body


def body_routes(client: Client) -> list[tuple[str, str]]:
    """Every operation that takes a body, from the app's own description."""
    paths = client.get("/openapi.json").json()["paths"]
    return [(method.upper(), path) for path, ops in paths.items()
            for method, op in ops.items() if "requestBody" in op]


# -- bodies ---------------------------------------------------------------------------

def test_every_route_with_a_body_refuses_one_too_large(app_client: Callable[..., Client]) -> None:
    client = app_client(max_body_bytes=4096)
    routes = body_routes(client)
    assert ("POST", "/api/trace") in routes and ("PUT", "/api/rooms/{code}/state") in routes
    assert len(routes) >= 6
    big = orjson.dumps({"source": "a = 1.0\n" + "#" * 8000})
    for method, path in routes:
        url = path.format(code="KMNPRT", poll="p1", kind="pop-order", seed=1)
        response = client.request(method, url, content=big,
                                  headers={"content-type": "application/json"})
        body = is_error_document(response, 413)
        assert "4,096 bytes" in body["detail"], (method, path)


def server_pid(base: str) -> int:
    """The pid of the uvicorn process app_server started for `base` (its port)."""
    import psutil

    port = int(base.rsplit(":", 1)[1])
    for process in psutil.process_iter(["pid"]):
        try:
            if any(c.laddr.port == port and c.status == psutil.CONN_LISTEN
                   for c in process.net_connections("tcp")):
                return int(process.pid)
        except (psutil.AccessDenied, psutil.NoSuchProcess):
            continue
    raise AssertionError(f"no process listens on {port}")


def send_huge_body(base: str, megabytes: int, chunked: bool) -> tuple[bytes, int]:
    """POST /api/trace with a body of `megabytes` MB, announced or chunked, a 64 kB piece
    at a time, until the server answers or closes: (its answer, the bytes it took)."""
    import socket

    host, port = base.removeprefix("http://").split(":")
    length = megabytes * 1024 * 1024
    framing = b"Transfer-Encoding: chunked" if chunked else b"Content-Length: %d" % length
    piece = b"#" * 65536
    sent = 0
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"POST /api/trace HTTP/1.1\r\nHost: lab\r\nContent-Type: application/json"
                  b"\r\n" + framing + b"\r\n\r\n")
        try:
            while sent < length:
                s.sendall(b"10000\r\n" + piece + b"\r\n" if chunked else piece)
                sent += len(piece)
        except OSError:           # the server answered and closed: the rest is refused
            pass
        s.settimeout(10)
        answer = b""
        try:
            while chunk := s.recv(65536):
                answer += chunk
        except OSError:
            pass
    return answer, sent


@pytest.mark.timeout(120)
def test_huge_bodies_do_not_reach_memory(app_server: Callable[..., str]) -> None:
    """A real server: 100 MB bodies, announced and chunked, are refused with 413 while they
    arrive, and the server's resident memory stays where it was."""
    import psutil

    base = app_server(max_body_bytes="400000")
    process = psutil.Process(server_pid(base))
    before = process.memory_info().rss
    for chunked in (False, True, True):
        answer, sent = send_huge_body(base, 100, chunked)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 413"), head[:200]
        assert b'"detail"' in body
        assert sent < 20 * 1024 * 1024, "the server went on reading the body"
    grown = process.memory_info().rss - before
    assert grown < 30 * 1024 * 1024, f"the server grew by {grown / 2**20:.0f} MB"


def test_a_body_within_the_limit_is_traced(app_client: Callable[..., Client]) -> None:
    client = app_client(max_body_bytes=4096)
    response = client.post("/api/trace", json={"source": SOURCE})
    assert response.status_code == 200 and response.json()["error"] is None


# -- one error document ---------------------------------------------------------------

@pytest.mark.parametrize("content", [b"{", b"a = 1.0", b'{"source": 3}', b"[]", b"\xff\xfe"])
def test_malformed_bodies_get_the_error_document(app_client: Callable[..., Client],
                                                content: bytes) -> None:
    client = app_client()
    for path in ("/api/trace", "/api/trace/stream"):
        body = is_error_document(client.post(path, content=content, headers={
            "content-type": "application/json"}), 422)
        assert body["errors"], body


def test_other_errors_have_the_same_shape(app_client: Callable[..., Client]) -> None:
    client = app_client()
    is_error_document(client.get("/api/rooms/KMNPRT"), 404)
    is_error_document(client.get("/no/such/page"), 404)
    is_error_document(client.put("/api/rooms/KMNPRT/state", json={"source": "a = 1"}), 404)
    is_error_document(client.delete("/healthz"), 405)


def test_a_bug_is_a_500_with_the_document_and_a_logged_traceback(
        app_client: Callable[..., Client], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> None:
        raise RuntimeError("a bug of the lab's")

    app = create_app(Settings())
    monkeypatch.setattr(app.state.trace_cache, "cached", lambda *_: broken())
    with TestClient(app, raise_server_exceptions=False) as client, \
            caplog.at_level(logging.ERROR, logger="lab.error"):
        body = is_error_document(client.post("/api/trace", json={"source": SOURCE}), 500)
    assert "a bug of the lab's" not in json.dumps(body)
    logged = [r for r in caplog.records if r.name == "lab.error"]
    assert logged and logged[0].exc_info is not None
    assert getattr(logged[0], "request_id", None) == body["request_id"]


# -- headers, request ids, logs -------------------------------------------------------

def test_security_headers_on_every_response(app_client: Callable[..., Client]) -> None:
    client = app_client(max_body_bytes=2048, rate_trace="1/minute", rate_limit_exempt="")
    shell = client.get("/")
    static = next(line.split('"')[1] for line in shell.text.split() if "/static/" in line
                  and line.startswith(("src=", "href=")))
    responses = [shell, client.get(static), client.get("/docs"), client.get("/healthz"),
                 client.get("/metrics"), client.get("/nowhere"),
                 client.post("/api/trace", content=b"x" * 4096),
                 client.post("/api/trace", json={"source": SOURCE}),
                 client.post("/api/trace", json={"source": SOURCE})]
    assert [r.status_code for r in responses][-3:] == [413, 200, 429]
    for response in responses:
        h = response.headers
        csp = h["content-security-policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp, response.url
        assert "frame-ancestors 'none'" in csp and h["x-frame-options"] == "DENY"
        assert h["x-content-type-options"] == "nosniff"
        assert h["referrer-policy"] == "no-referrer"
        assert h["cross-origin-opener-policy"] == "same-origin"
        assert len(h["x-request-id"]) == 32


def test_the_embed_routes_frame_ancestors_are_a_setting(
        app_client: Callable[..., Client]) -> None:
    client = app_client(embed_frame_ancestors="https://moodle.example.edu")
    embed = client.get("/embed/anything").headers
    assert "frame-ancestors https://moodle.example.edu;" in embed["content-security-policy"]
    assert "x-frame-options" not in embed
    assert "frame-ancestors 'none'" in client.get("/").headers["content-security-policy"]


def test_a_proxys_request_id_is_kept_and_a_bad_one_replaced(
        app_client: Callable[..., Client]) -> None:
    client = app_client()
    assert client.get("/healthz", headers={"X-Request-ID": "lb-42.a"}).headers[
        "x-request-id"] == "lb-42.a"
    replaced = client.get("/healthz", headers={"X-Request-ID": "<script>"})
    assert replaced.headers["x-request-id"] != "<script>"


def test_the_access_log_is_json_lines_with_the_request_id(
        app_client: Callable[..., Client], caplog: pytest.LogCaptureFixture) -> None:
    client = app_client()
    with caplog.at_level(logging.INFO, logger="lab.access"):
        response = client.get("/api/rooms/KMNPRT")
    record = next(r for r in caplog.records if r.name == "lab.access")
    line = json.loads(JsonFormatter().format(record))
    assert line["request_id"] == response.headers["x-request-id"]
    assert line["route"] == "/api/rooms/{code}" and line["path"] == "/api/rooms/KMNPRT"
    assert line["status"] == 404 and line["method"] == "GET" and line["duration_ms"] >= 0
    assert line["level"] == "info" and line["logger"] == "lab.access"


# -- metrics --------------------------------------------------------------------------

def samples(client: Client) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(response.text)
            for s in family.samples}


def test_metrics_count_requests_traces_and_streams(app_client: Callable[..., Client]) -> None:
    client = app_client(**NO_LIMITS)
    client.post("/api/trace", json={"source": SOURCE})
    client.post("/api/trace", json={"source": SOURCE})                 # from the cache
    client.post("/api/trace", json={"source": "y = foo(\n"})           # rejected
    client.post("/api/trace/stream", json={"source": SOURCE}).read()
    client.get("/api/rooms/KMNPRT")
    found = samples(client)

    def value(name: str, **labels: str) -> float:
        return found.get((name, frozenset(labels.items())), 0.0)

    assert value("lab_http_requests_total", method="POST", route="/api/trace",
                 status="200") == 3
    assert value("lab_http_requests_total", method="GET", route="/api/rooms/{code}",
                 status="404") == 1
    assert value("lab_http_request_duration_seconds_count", method="POST",
                 route="/api/trace") == 3
    assert value("lab_traces_total", outcome="ok") == 2          # one traced, one streamed
    assert value("lab_traces_total", outcome="cached") == 1
    assert value("lab_traces_total", outcome="rejected") == 1
    assert value("lab_active_streams", kind="trace") == 0
    assert value("lab_trace_queue_depth") == 0
    assert ("lab_room_followers", frozenset()) in found and ("lab_threads", frozenset()) in found
    assert value("process_resident_memory_bytes") > 0
    assert not any(dict(labels).get("route", "").startswith("/api/rooms/K")
                   for _, labels in found), "a raw path became a label"


# -- rate limits ----------------------------------------------------------------------

def test_tracing_is_limited_per_client(app_client: Callable[..., Client]) -> None:
    client = app_client(rate_trace="3/minute", rate_limit_exempt="")
    statuses = [client.post("/api/trace", json={"source": SOURCE}).status_code
                for _ in range(3)]
    refused = client.post("/api/trace/stream", json={"source": SOURCE})
    assert statuses == [200, 200, 200]
    body = is_error_document(refused, 429)
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert "trace" in body["detail"]
    assert client.get("/healthz").status_code == 200          # other routes are not limited
    metrics = samples(client)
    assert metrics[("lab_rate_limited_total", frozenset({("scope", "trace")}))] == 1


def test_rooms_and_polls_are_limited(app_client: Callable[..., Client]) -> None:
    client = app_client(rate_rooms="2/hour", rate_polls="2/minute", rate_limit_exempt="")
    made = [client.post("/api/rooms") for _ in range(3)]
    assert [r.status_code for r in made] == [201, 201, 429]
    code = made[0].json()["code"]
    answers = [client.post(f"/api/rooms/{code}/polls/p1/answers",
                           json={"device": "d-1234567", "node": 1}) for _ in range(3)]
    assert [r.status_code for r in answers] == [404, 404, 429]


def test_exempt_addresses_are_not_limited(app_client: Callable[..., Client]) -> None:
    client = app_client(rate_trace="1/minute", rate_limit_exempt="testclient")
    assert {client.post("/api/trace", json={"source": SOURCE}).status_code
            for _ in range(3)} == {200}


def test_the_limits_are_shared_through_redis(app_client: Callable[..., Client],
                                             redis_url: str) -> None:
    rate = "3/minute"
    one = app_client(redis_url=redis_url, rate_trace=rate, rate_limit_exempt="")
    two = app_client(redis_url=redis_url, rate_trace=rate, rate_limit_exempt="")
    statuses = [c.post("/api/trace", json={"source": SOURCE}).status_code
                for c in (one, two, one, two)]
    assert statuses == [200, 200, 200, 429]


# -- `autograd-lab serve` ----------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "env", "want"), [
    ([], {}, ("127.0.0.1", 8000)),
    ([], {"LAB_HOST": "0.0.0.0", "LAB_PORT": "9001"}, ("0.0.0.0", 9001)),
    (["--port", "9002"], {"LAB_PORT": "9001"}, ("127.0.0.1", 9002)),
])
def test_serve_takes_its_options_then_lab_settings(
        monkeypatch: pytest.MonkeyPatch, argv: list[str], env: dict[str, str],
        want: tuple[str, int]) -> None:
    import uvicorn

    from app.cli import main
    for name in ("LAB_HOST", "LAB_PORT", "LAB_WORKERS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(kw))
    assert main(["serve", *argv]) == 0
    assert (seen["host"], seen["port"]) == want
    assert seen["proxy_headers"] and seen["forwarded_allow_ips"] == "127.0.0.1"


def test_serve_with_workers_needs_redis(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.cli import main
    monkeypatch.delenv("LAB_REDIS_URL", raising=False)
    monkeypatch.setenv("LAB_WORKERS", "2")
    assert main(["serve"]) == 2


def test_serve_with_workers_gives_them_one_metrics_directory(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    import uvicorn

    from app.cli import main
    monkeypatch.setenv("LAB_REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", "")    # unset, and put back after the test
    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(
        kw, metrics=os.environ.get("PROMETHEUS_MULTIPROC_DIR")))
    assert main(["serve", "--workers", "2"]) == 0
    assert seen["workers"] == 2 and seen["metrics"] and os.path.isdir(seen["metrics"])
    # Each worker configures its logging from log_config: JSON lines there too.
    assert seen["log_config"]["handlers"]["stderr"]["formatter"] == "json"
    assert seen["access_log"] is False


def test_serve_writes_json_lines_with_request_ids(tmp_path: Any) -> None:
    """A real `autograd-lab serve`: everything it writes is a JSON line (uvicorn's own
    messages too), and each request has its access line with its request id and route;
    uvicorn's plain access log is off."""
    import subprocess
    import sys

    import httpx

    from tests.conftest import _wait_until, free_port

    port, log = free_port(), tmp_path / "stderr"
    url = f"http://127.0.0.1:{port}"
    with log.open("wb") as err:
        process = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port",
                                    str(port)], stdout=err, stderr=err)
        try:
            def healthy() -> bool:
                try:
                    return httpx.get(url + "/healthz", timeout=2).status_code == 200
                except httpx.HTTPError:
                    return False

            _wait_until(healthy, process, "autograd-lab serve")
            ids = [httpx.get(url + "/api/rooms/KMNPRT", headers={"X-Request-ID": "lb-7"}),
                   httpx.post(url + "/api/trace", json={"source": SOURCE})]
        finally:
            process.terminate()
            process.wait(timeout=20)
    lines = [json.loads(line) for line in log.read_text().splitlines()]   # each is JSON
    access = {line["request_id"]: line for line in lines if line["logger"] == "lab.access"}
    assert access["lb-7"]["route"] == "/api/rooms/{code}" and access["lb-7"]["status"] == 404
    traced = access[ids[1].headers["x-request-id"]]
    assert (traced["method"], traced["route"], traced["status"]) == ("POST", "/api/trace", 200)
    assert any(line["logger"].startswith("uvicorn") for line in lines), lines


def test_wrong_room_codes_are_limited_and_right_ones_never(
        app_client: Callable[..., Client]) -> None:
    """Join codes are short; what keeps them from being found by guessing is that each
    wrong one a client tries counts (the API's lookups and the join page alike), and past
    the limit every lookup of that client is refused. Right codes never count."""
    client = app_client(rate_lookups="3/minute", rate_limit_exempt="")
    code = client.post("/api/rooms").json()["code"]
    absent = "KMPRTW" if code != "KMPRTW" else "KMPRTX"
    assert {client.get(f"/api/rooms/{code}").status_code for _ in range(10)} == {200}
    wrong = [client.get(f"/api/rooms/{absent}"), client.get("/api/rooms/not-a-code/events"),
             client.get(f"/join/{absent}", follow_redirects=False),
             client.get(f"/api/rooms/{absent}/qr.svg")]
    assert [r.status_code for r in wrong] == [404, 404, 404, 429]
    body = is_error_document(wrong[-1], 429)
    assert "room codes" in body["detail"] and 1 <= int(wrong[-1].headers["retry-after"]) <= 60
    assert client.get(f"/api/rooms/{code}").status_code == 429, "every lookup, past it"
    assert client.get(f"/join/{code}", follow_redirects=False).status_code == 429
    assert client.post("/api/trace", json={"source": SOURCE}).status_code == 200
    assert samples(client)[("lab_rate_limited_total",
                            frozenset({("scope", "lookups")}))] == 3


def test_metrics_count_rooms_and_followers_while_they_follow(
        app_server: Callable[..., str]) -> None:
    """A real server: two followers of one room and one of another are 2 rooms and 3
    followers (and 3 room streams) while they follow, none once they have gone."""
    import time

    import httpx

    url = app_server()

    def gauges() -> dict[str, float]:
        text = httpx.get(url + "/metrics", timeout=10).text
        return {f"{s.name}{dict(s.labels)}": s.value
                for family in text_string_to_metric_families(text) for s in family.samples
                if s.name in ("lab_rooms_followed", "lab_room_followers",
                              "lab_active_streams")}

    codes = [httpx.post(url + "/api/rooms", json={}).json()["code"] for _ in range(2)]
    with httpx.Client(base_url=url, timeout=10) as http:
        streams = [http.send(http.build_request("GET", f"/api/rooms/{code}/events"),
                             stream=True) for code in (codes[0], codes[0], codes[1])]
        # Each has its first event. (The line iterators are kept: one dropped mid-way
        # closes its response, and the follower goes.)
        lines = [stream.iter_lines() for stream in streams]
        for each in lines:
            while not next(each).startswith("event:"):
                pass
        during = gauges()
        for stream in streams:
            stream.close()
    assert during["lab_rooms_followed{}"] == 2 and during["lab_room_followers{}"] == 3, during
    assert during["lab_active_streams{'kind': 'room'}"] == 3, during
    deadline = time.monotonic() + 30                    # noticed at the next write at most
    while (after := gauges())["lab_room_followers{}"] and time.monotonic() < deadline:
        time.sleep(0.5)
    assert after["lab_rooms_followed{}"] == after["lab_room_followers{}"] == 0, after
    assert after["lab_active_streams{'kind': 'room'}"] == 0, after
