"""The HTTP API through its real routes: create_app with TestClient, and a real uvicorn
server for what only a socket shows (the stream is flushed one event at a time, and the
server answers while a trace runs)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient

import app.web.api
from app.limits import Limits
from app.presets import PRESETS
from app.trace import run_source, trace_events, trace_json
from app.web.app import create_app
from app.web.settings import Settings
from tests.matching import ROOT

PROGRAMS = {
    "worked-example": (ROOT / "examples" / "worked_example.py").read_text(encoding="utf-8"),
    "retain-then-second": "w = 2.0\nx = torch.tensor(3.0)\nh = w * x\nl1 = h * h\n"
                          "l2 = h.sin()\nl1.backward(retain_graph=True)\nl2.backward()\n",
    "vector-gradient": "v = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)\n"
                       "b = torch.tensor([0.5, -0.5], requires_grad=True)\ny = (v + b).tanh()\n"
                       "y.backward(gradient=torch.tensor([[1.0, 0.0], [0.5, 2.0]]))\n",
    "second-backward-error": "w = 3.0\nx = torch.tensor(2.0)\nloss = (w * x) ** 2\n"
                             "loss.backward()\nloss.backward()\n",
    "rejected": "a = 2.0\ntry:\n    a = a * 2\nexcept ValueError:\n    pass\n",
    "create-graph": "a = 1.5\ny = a * a\ny.backward(create_graph=True)\nz = a * 3\nz.backward()\n",
}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app()) as c:
        yield c


def cli_documents(tmp_path: Path, sources: list[str]) -> list[Any]:
    paths = []
    for i, source in enumerate(sources):
        path = tmp_path / f"p{i}.py"
        path.write_text(source, encoding="utf-8")
        paths.append(str(path))
    command = Path(sys.executable).parent / "autograd-lab"
    proc = subprocess.run([str(command), "trace", *paths], capture_output=True, text=True,
                          timeout=120, check=False)
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_trace_equals_the_cli_document(client: TestClient, tmp_path: Path) -> None:
    names = list(PROGRAMS)
    documents = cli_documents(tmp_path, [PROGRAMS[n] for n in names])
    assert len(documents) == len(names)
    for name, document in zip(names, documents, strict=True):
        response = client.post("/api/trace", json={"source": PROGRAMS[name]})
        assert response.status_code == 200
        assert response.json() == document, name


def test_trace_is_run_source(client: TestClient) -> None:
    for source in PROGRAMS.values():
        response = client.post("/api/trace", json={"source": source})
        assert response.json() == run_source(source).model_dump(mode="json")


def test_error_documents_come_with_200(client: TestClient) -> None:
    rejected = client.post("/api/trace", json={"source": PROGRAMS["rejected"]})
    assert rejected.status_code == 200
    body = rejected.json()
    assert body["passes"] == [] and body["grads"] == {}
    assert body["error"] == {"kind": "rejected", "type": "UnsupportedError", "line": 2, "col": 1,
                             "end_line": 5, "end_col": 9,
                             "message": body["error"]["message"]}
    failing = client.post("/api/trace", json={"source": PROGRAMS["second-backward-error"]})
    assert failing.status_code == 200
    body = failing.json()
    assert body["error"]["type"] == "RuntimeError" and body["error"]["kind"] == "backward"
    assert body["error"]["message"].startswith("Trying to backward through the graph")
    assert len(body["passes"]) == 2 and body["grads"] == {"w": 24.0}   # Pow failed first


@pytest.mark.parametrize("request_body", [
    {}, {"source": 3}, {"source": None}, {"program": "a = 1.0"}, [], "a = 1.0",
])
def test_malformed_requests_are_http_errors(client: TestClient, request_body: Any) -> None:
    response = client.post("/api/trace", json=request_body)
    assert response.status_code == 422
    assert client.post("/api/trace/stream", json=request_body).status_code == 422


def test_body_that_is_not_json_is_422(client: TestClient) -> None:
    response = client.post("/api/trace", content=b"a = 1.0",
                           headers={"content-type": "application/json"})
    assert response.status_code == 422


def test_limits_come_from_the_settings() -> None:
    with TestClient(create_app(Settings(max_nodes=3))) as small:
        body = small.post("/api/trace", json={"source": "a = 1.0\nb = a * a * a * a * a\n"}).json()
    assert body["error"]["type"] == "UnsupportedError"
    assert "3 backward nodes" in body["error"]["message"]


def test_presets(client: TestClient) -> None:
    response = client.get("/api/presets")
    assert response.status_code == 200
    presets = response.json()
    assert presets == [p.model_dump() for p in PRESETS]
    assert {"id", "title", "goal", "source"} <= set(presets[0])
    assert len({p["id"] for p in presets}) == len(presets)


def test_healthz(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_openapi_and_docs_describe_the_routes(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    paths = schema["paths"]
    assert set(paths["/api/trace"]) == {"post"}
    assert set(paths["/api/trace/stream"]) == {"post"}
    assert set(paths["/api/presets"]) == {"get"}
    assert set(paths["/healthz"]) == {"get"}
    trace = paths["/api/trace"]["post"]
    body_ref = trace["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert body_ref.endswith("/TraceRequest")
    ok = trace["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert ok.endswith("/Trace")
    components = schema["components"]["schemas"]
    assert "source" in components["TraceRequest"]["properties"]
    assert {"passes", "grads", "error"} <= set(components["Trace"]["properties"])
    assert "text/event-stream" in paths["/api/trace/stream"]["post"]["responses"]["200"][
        "content"]
    docs = client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


# -- the stream -----------------------------------------------------------------------

def parse_sse(text: str) -> list[tuple[str, Any]]:
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            if line and not line.startswith(":"):
                key, _, value = line.partition(":")
                fields[key] = fields.get(key, "") + value.removeprefix(" ")
        if "event" in fields:
            events.append((fields["event"], json.loads(fields["data"])))
    return events


def kinds_are_in_order(kinds: list[str]) -> bool:
    """pass graph dependencies step+ ... (once per pass), then done, once, at the end;
    console lines (prints, warnings) between them, where the program wrote them."""
    kinds = [kind for kind in kinds if kind not in ("console", "results", "phase")]
    if not kinds or kinds[-1] != "done" or kinds.count("done") != 1:
        return False
    i = 0
    while kinds[i] == "pass":
        if kinds[i + 1:i + 3] != ["graph", "dependencies"]:
            return False
        i += 3
        start = i
        while kinds[i] == "step":
            i += 1
        if i == start:
            return False
    return kinds[i:] == ["done"]


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_stream_carries_the_same_trace_in_order(client: TestClient, name: str) -> None:
    source = PROGRAMS[name]
    response = client.post("/api/trace/stream", json={"source": source})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(response.text)
    kinds = [kind for kind, _ in events]
    assert kinds_are_in_order(kinds), kinds
    whole = client.post("/api/trace", json={"source": source}).json()
    passes = []
    for kind, data in events:
        if kind == "pass":
            passes.append({**data, "steps": []})
        elif kind == "graph":
            passes[-1]["graph"] = data
        elif kind == "dependencies":
            passes[-1]["dependencies"] = data["dependencies"]
        elif kind == "step":
            passes[-1]["steps"].append(data)
    console = [data for kind, data in events if kind == "console"]
    assert console == whole["console"]
    done = events[-1][1]
    assert done["passes"] == []
    assert (done["grads"], done["error"]) == (whole["grads"], whole["error"])
    assert json.loads(json.dumps(passes)) == whole["passes"]


def parse_sse_ids(text: str) -> list[tuple[str, str, str]]:
    """(id, event, data) of every event, the data as sent."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.partition(": ")[::2] for line in block.split("\n") if line)
        if "event" in fields:
            events.append((fields.get("id", ""), fields["event"], fields["data"]))
    return events


DRAWS = ("import torch\nw = torch.randn(3, requires_grad=True)\n"
         "for i in range(3):\n    loss = (w * w).sum() * (i + 1)\n    loss.backward()\n"
         "print(w.grad)\n")


def test_a_broken_stream_resumes_after_its_last_event(client: TestClient) -> None:
    """A program that draws without manual_seed: the resumed stream draws from the same
    seed, so it goes on with exactly the events the broken one would have sent."""
    whole = parse_sse_ids(client.post("/api/trace/stream", json={"source": DRAWS}).text)
    seed = whole[0][0].split("-")[0]
    assert [i for i, _, _ in whole] == [f"{seed}-{n}" for n in range(len(whole))]
    for cut in (0, 4, len(whole) - 2):
        rest = client.post("/api/trace/stream", json={"source": DRAWS},
                           headers={"Last-Event-ID": whole[cut][0]})
        assert parse_sse_ids(rest.text) == whole[cut + 1:]
    again = parse_sse_ids(client.post("/api/trace/stream", json={"source": DRAWS}).text)
    assert again[0][0] != whole[0][0], "a new stream draws a new seed"
    assert json.loads(again[-1][2])["seed"] != json.loads(whole[-1][2])["seed"]


def test_a_seed_runs_a_program_that_draws_again(client: TestClient) -> None:
    first = client.post("/api/trace", json={"source": DRAWS}).json()
    assert first["seed"] is not None
    again = client.post("/api/trace", json={"source": DRAWS, "seed": first["seed"]}).json()
    assert again == first
    other = client.post("/api/trace", json={"source": DRAWS, "seed": first["seed"] ^ 1})
    assert other.json()["grads"] != first["grads"]
    streamed = parse_sse_ids(client.post("/api/trace/stream", json={
        "source": DRAWS, "seed": first["seed"]}).text)
    assert json.loads(streamed[-1][2])["grads"] == first["grads"]
    assert streamed[0][0] == f"{first['seed']}-0"


@pytest.mark.parametrize("header", ["12", "x-3", "1-2-3", "99999999999999999999999-1",
                                    "9999999999999999-1"])
def test_a_malformed_last_event_id_is_refused(client: TestClient, header: str) -> None:
    response = client.post("/api/trace/stream", json={"source": DRAWS},
                           headers={"Last-Event-ID": header})
    assert response.status_code == 422


class Server:
    """The app under a real uvicorn, on a free port, in a thread of this process."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        config = uvicorn.Config(create_app(), log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run,
                                       kwargs={"sockets": [self.socket]}, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.socket.close()


@pytest.mark.timeout(60)
def test_stream_is_flushed_one_event_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine is held after its first step until the client has read that step: if
    the server buffered the stream, the client would never see it and this would fail."""
    client_saw_first_step = threading.Event()
    held: list[bool] = []

    def gated(source: str, limits: Limits, **options: Any) -> Iterator[Any]:
        for kind, model in trace_events(source, limits, **options):
            yield kind, model
            if kind == "step" and not held:
                held.append(client_saw_first_step.wait(timeout=20))

    monkeypatch.setattr(app.web.api, "trace_events", gated)
    source = PROGRAMS["worked-example"]
    seen: list[str] = []
    with Server() as server, httpx.Client(base_url=server.url, timeout=30) as http, \
            http.stream("POST", "/api/trace/stream", json={"source": source}) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("event:"):
                seen.append(line.split(":", 1)[1].strip())
            if seen == ["pass", "graph", "dependencies", "step"] and line.startswith("data:"):
                assert not held, "the engine went on before the client saw the first step"
                client_saw_first_step.set()
    assert held == [True], "the first step never reached the client while the engine waited"
    assert [k for k in seen if k != "phase"] == ["pass", "graph", "dependencies"] + \
        ["step"] * 5 + ["done"]


@pytest.mark.timeout(60)
def test_waiting_for_a_slow_reader_does_not_count_against_the_time_limit() -> None:
    """A browser taking in a big trace reads slowly and the run waits for it: that wait is
    the reader's, so the program still finishes within max_seconds of its own work. (The
    10,000-step recurrence of bench/programs.py ran out of time in Chromium this way.)"""
    source = ("import torch\na = torch.tensor(0.9, requires_grad=True)\nh = torch.tensor(0.1)\n"
              "for t in range(200):\n    h = torch.tanh(a * h + 0.01)\nh.backward()\n")
    limits = Limits(max_seconds=0.5)
    assert trace_json(source, limits)[1] is False       # quick enough on its own
    pieces: list[tuple[str, Any]] = []
    for piece in trace_events(source, limits):
        pieces.append(piece)
        if len(pieces) == 1:
            time.sleep(1.5)            # the queue fills and the run waits past max_seconds
    assert [kind for kind, _ in pieces].count("step") == 601
    assert pieces[-1][1].error is None, pieces[-1][1].error


@pytest.mark.timeout(60)
def test_server_answers_while_a_trace_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """CPU work runs off the event loop: /healthz answers while /api/trace is busy."""
    release = threading.Event()
    started = threading.Event()

    def slow(source: str, limits: Limits, **options: Any) -> Any:
        started.set()
        release.wait(timeout=20)
        return trace_json(source, limits, **options)

    monkeypatch.setattr(app.web.api, "trace_json", slow)
    with Server() as server, httpx.Client(base_url=server.url, timeout=30) as http:
        results: list[httpx.Response] = []
        busy = threading.Thread(target=lambda: results.append(
            http.post("/api/trace", json={"source": PROGRAMS["worked-example"]})))
        busy.start()
        assert started.wait(timeout=10)
        health = http.get("/healthz", timeout=5)
        assert health.status_code == 200 and not results
        release.set()
        busy.join(timeout=20)
    assert results and results[0].json()["grads"] == {"w": 28.0, "b": 14.0}


def test_security_headers_on_api_responses(client: TestClient) -> None:
    headers = client.get("/healthz").headers
    assert "default-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"


def test_repeated_programs_are_answered_from_the_trace_cache() -> None:
    app = create_app()
    cache = app.state.trace_cache
    source = "w = 3.0\nb = 1.0\nx = torch.tensor(2.0)\nloss = (w * x + b) ** 2\n"
    with TestClient(app) as c:
        first = c.post("/api/trace", json={"source": source}).content
        assert cache.cached(source, app.state.settings.limits()) == first
        assert c.post("/api/trace", json={"source": source}).content == first
        other = c.post("/api/trace", json={"source": source + "# another program\n"}).text
    assert json.loads(other)["grads"] == json.loads(first)["grads"] == \
        run_source(source).model_dump()["grads"]


@pytest.mark.parametrize(("source", "kind"), [
    ("x = torch.tensor(3, requires_grad=True)\n", "forward"),
    ("v = torch.tensor([1.0, 2.0], requires_grad=True)\n(v * 2).backward()\n", "backward"),
    ("a = 2.0\ny = a * a\ny.backward()\ny.backward()\n", "backward"),
    ("y = foo(\n", "rejected"),
    ("a = 2.0\nb = a * 2 ** 300\n", "limit"),
])
def test_errors_say_where_the_program_stopped(client: TestClient, source: str,
                                               kind: str) -> None:
    """The page words an error by its kind, never by matching PyTorch's message."""
    error = client.post("/api/trace", json={"source": source}).json()["error"]
    assert error["kind"] == kind, error
