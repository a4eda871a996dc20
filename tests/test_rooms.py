"""A live session through its real surfaces: app processes (uvicorn) and Server-Sent Events
read off the socket. Every test runs twice: on one process with the in-process backend,
and across two processes sharing a real redis-server, the presenter on one and followers
on both."""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from app.presets import Preset, preset
from app.rooms.models import AnswerSubmit, ViewState
from app.rooms.polls import next_pop
from app.trace import run_source


def chosen(preset_id: str) -> Preset:
    found = preset(preset_id)
    assert found is not None, preset_id
    return found


WORKED = chosen("worked-example")
MIXED = chosen("mixed")


@dataclass
class Event:
    kind: str
    id: int
    data: Any


@dataclass
class EventStream:
    """GET /api/rooms/CODE/events read in a thread, one Event at a time."""

    url: str
    last_event_id: int | None = None
    events: queue.Queue[Event | None] = field(default_factory=queue.Queue)
    status: int | None = None
    retry: int | None = None        # the stream's `retry:` field: the reconnection delay, ms

    def __post_init__(self) -> None:
        self._client = httpx.Client(timeout=httpx.Timeout(30, read=None))
        self._opened = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        assert self._opened.wait(10), "the stream did not open"

    def _read(self) -> None:
        headers = {"Accept": "text/event-stream"}
        if self.last_event_id is not None:
            headers["Last-Event-ID"] = str(self.last_event_id)
        try:
            with self._client.stream("GET", self.url, headers=headers) as response:
                self.status = response.status_code
                self._socket = response.extensions["network_stream"].get_extra_info("socket")
                self._opened.set()
                fields: dict[str, str] = {}
                for line in response.iter_lines():
                    if line == "":
                        if "retry" in fields:
                            self.retry = int(fields["retry"])
                        if "event" in fields:
                            self.events.put(Event(fields["event"], int(fields["id"]),
                                                  json.loads(fields["data"])))
                        fields = {}
                    elif not line.startswith(":"):
                        key, _, value = line.partition(":")
                        fields[key] = value.removeprefix(" ")
        except httpx.HTTPError:
            pass
        finally:
            self._opened.set()
            self.events.put(None)

    def next(self, timeout: float = 10) -> Event:
        event = self.events.get(timeout=timeout)
        assert event is not None, "the stream ended"
        return event

    def quiet(self, seconds: float) -> bool:
        """Whether no event arrives for this long."""
        try:
            return self.events.get(timeout=seconds) is None
        except queue.Empty:
            return True

    def close(self) -> None:
        """Drop the connection, as a phone going into a tunnel does."""
        sock = getattr(self, "_socket", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=10)
        self._client.close()


@dataclass
class Hall:
    """A room's two ends: the presenter's server and the followers' servers."""

    presenter: str
    followers: list[str]
    streams: list[EventStream] = field(default_factory=list)
    http: httpx.Client = field(default_factory=httpx.Client)

    def create(self, source: str = WORKED.source) -> tuple[str, dict[str, str]]:
        r = httpx.post(f"{self.presenter}/api/rooms",
                       json={"state": {"source": source, "pass": 0, "step": 0}})
        assert r.status_code == 201, r.text
        body = r.json()
        return body["code"], {"Authorization": f"Bearer {body['token']}"}

    def follow(self, code: str, server: int = -1, last_event_id: int | None = None) -> EventStream:
        stream = EventStream(f"{self.followers[server]}/api/rooms/{code}/events", last_event_id)
        self.streams.append(stream)
        return stream

    def put(self, code: str, token: dict[str, str], step: int, source: str = WORKED.source,
            pass_: int = 0) -> None:
        r = self.http.put(f"{self.presenter}/api/rooms/{code}/state", headers=token,
                      json={"source": source, "pass": pass_, "step": step,
                            "settings": {"speed": 2}})
        assert r.status_code == 204, r.text


@pytest.fixture(params=["memory", "redis"])
def hall(request: pytest.FixtureRequest, app_server: Callable[..., str]) -> Iterator[Hall]:
    if request.param == "memory":
        one = app_server()
        h = Hall(one, [one, one])
    else:
        redis_url = request.getfixturevalue("redis_url")
        h = Hall(app_server(redis_url=redis_url), [])
        h.followers = [h.presenter, app_server(redis_url=redis_url)]
    yield h
    for stream in h.streams:
        stream.close()
    h.http.close()


def states(stream: EventStream, n: int) -> list[Event]:
    out = [stream.next() for _ in range(n)]
    assert all(e.kind == "state" for e in out), out
    return out


def test_steps_reach_every_follower_in_order(hall: Hall) -> None:
    code, token = hall.create()
    streams = [hall.follow(code, 0), hall.follow(code, 1)]
    firsts = [s.next() for s in streams]
    assert [(e.kind, e.data["step"]) for e in firsts] == [("state", 0), ("state", 0)]
    for step in range(1, 6):
        hall.put(code, token, step)
    for stream, first in zip(streams, firsts, strict=True):
        got = states(stream, 5)
        assert [e.data["step"] for e in got] == [1, 2, 3, 4, 5]
        assert [e.id for e in got] == list(range(first.id + 1, first.id + 6))
        assert got[-1].data == {"source": WORKED.source, "pass": 0, "step": 5,
                                "settings": {"speed": 2}}


def test_a_late_joiner_lands_on_the_current_state_at_once(hall: Hall) -> None:
    code, token = hall.create()
    for step in (1, 2, 3):
        hall.put(code, token, step)
    info = httpx.get(f"{hall.followers[-1]}/api/rooms/{code}").json()
    late = hall.follow(code)
    first = late.next()
    assert (first.kind, first.id, first.data["step"]) == ("state", info["version"], 3)
    assert late.quiet(0.5), "nothing more until the presenter moves"
    hall.put(code, token, 4)
    assert (late.next().data["step"]) == 4


def test_a_dropped_connection_resumes_without_a_loss_or_a_repeat(hall: Hall) -> None:
    from app.web.rooms import RETRY_MS

    code, token = hall.create()
    stream = hall.follow(code)
    seen = [stream.next()]
    assert stream.retry == RETRY_MS, "the stream tells the browser how soon to reconnect"
    hall.put(code, token, 1)
    seen.append(stream.next())
    stream.close()                              # dropped; meanwhile the presenter goes on
    for step in (2, 3, 4):
        hall.put(code, token, step)
    again = hall.follow(code, last_event_id=seen[-1].id)
    resumed = states(again, 3)
    assert [e.data["step"] for e in resumed] == [2, 3, 4]
    assert [e.id for e in resumed] == [seen[-1].id + 1, seen[-1].id + 2, seen[-1].id + 3]
    assert again.quiet(0.5)
    up_to_date = hall.follow(code, last_event_id=resumed[-1].id)
    assert up_to_date.quiet(0.5), "a follower that saw the latest event gets nothing twice"
    hall.put(code, token, 5)
    assert up_to_date.next().data["step"] == again.next().data["step"] == 5


def test_a_follower_too_far_behind_gets_the_current_state(hall: Hall) -> None:
    from app.rooms.store import LOG_EVENTS

    code, token = hall.create()
    first = hall.follow(code).next()
    hall.streams[-1].close()
    for step in range(LOG_EVENTS + 2):
        hall.put(code, token, step % 5)
    late = hall.follow(code, last_event_id=first.id)
    snapshot = late.next()
    info = httpx.get(f"{hall.followers[-1]}/api/rooms/{code}").json()
    assert (snapshot.kind, snapshot.id, snapshot.data) == ("state", info["version"], info["state"])


def test_only_the_token_controls_the_room(hall: Hall) -> None:
    code, token = hall.create()
    wrong = {"Authorization": "Bearer " + "x" * 43}
    state = {"source": WORKED.source, "pass": 0, "step": 1}
    for server in hall.followers:
        for headers in ({}, wrong, {"Authorization": "Basic abc"}):
            assert httpx.put(f"{server}/api/rooms/{code}/state", json=state,
                             headers=headers).status_code == 403
            assert httpx.post(f"{server}/api/rooms/{code}/polls", json={},
                              headers=headers).status_code == 403
            assert httpx.delete(f"{server}/api/rooms/{code}", headers=headers).status_code == 403
    assert httpx.get(f"{hall.followers[-1]}/api/rooms/{code}").json()["state"]["step"] == 0
    hall.put(code, token, 1)


def test_a_poll_counts_one_answer_per_device_and_reveals_only_the_answer(hall: Hall) -> None:
    code, token = hall.create(MIXED.source)
    hall.put(code, token, 1, source=MIXED.source)
    stream = hall.follow(code)
    assert stream.next().data["step"] == 1
    r = httpx.post(f"{hall.presenter}/api/rooms/{code}/polls", headers=token, json={})
    assert r.status_code == 201, r.text
    created = r.json()
    expected = next_pop(json.loads(run_source(MIXED.source).model_dump_json()), 0, 1, "x")
    assert expected is not None
    assert created["answer"] == expected[1].model_dump()
    poll = stream.next()
    assert poll.kind == "poll" and "answer" not in poll.data
    assert poll.data["candidates"] == created["question"]["candidates"]
    poll_id = created["question"]["id"]
    nodes = [c["node"] for c in poll.data["candidates"]]
    answers = {"device-aaaa": nodes[0], "device-bbbb": nodes[1], "device-cccc": nodes[0]}
    for i, (device, node) in enumerate(answers.items()):
        server = hall.followers[i % len(hall.followers)]
        r = httpx.post(f"{server}/api/rooms/{code}/polls/{poll_id}/answers",
                       json={"device": device, "node": node})
        assert r.status_code == 201, r.text
    answers["device-cccc"] = nodes[1]           # changes its mind: still one answer
    assert httpx.post(f"{hall.followers[0]}/api/rooms/{code}/polls/{poll_id}/answers",
                      json={"device": "device-cccc", "node": nodes[1]}).status_code == 201
    tally = httpx.get(f"{hall.presenter}/api/rooms/{code}/polls/{poll_id}", headers=token).json()
    assert tally["answers"] == 3
    assert tally["counts"][str(nodes[0])] == 1 and tally["counts"][str(nodes[1])] == 2
    assert httpx.get(f"{hall.followers[-1]}/api/rooms/{code}/polls/{poll_id}").status_code == 403
    revealed = httpx.post(f"{hall.presenter}/api/rooms/{code}/polls/{poll_id}/reveal",
                          headers=token)
    assert revealed.status_code == 200
    results = stream.next()
    assert results.kind == "results" and results.data == revealed.json()
    assert results.data["answer"]["node"] == run_source(MIXED.source).passes[0].steps[1]["node"]
    assert "counts" not in json.dumps(results.data), "students never see the others' answers"
    late = httpx.post(f"{hall.followers[-1]}/api/rooms/{code}/polls/{poll_id}/answers",
                      json={"device": "device-dddd", "node": nodes[0]})
    assert late.status_code == 409


def test_the_presenter_sees_how_many_follow(hall: Hall) -> None:
    code, _ = hall.create()
    streams = [hall.follow(code, 0), hall.follow(code, 1), hall.follow(code, 1)]
    for s in streams:
        s.next()
    assert httpx.get(f"{hall.presenter}/api/rooms/{code}").json()["followers"] == 3
    streams[1].close()
    deadline = time.monotonic() + 10
    while httpx.get(f"{hall.presenter}/api/rooms/{code}").json()["followers"] != 2:
        assert time.monotonic() < deadline, "a dropped follower is still counted"
        time.sleep(0.1)


def test_ending_the_room_tells_every_follower(hall: Hall) -> None:
    code, token = hall.create()
    streams = [hall.follow(code, 0), hall.follow(code, 1)]
    for s in streams:
        s.next()
    assert httpx.delete(f"{hall.presenter}/api/rooms/{code}", headers=token).status_code == 204
    for s in streams:
        ended = s.next()
        assert (ended.kind, ended.data) == ("ended", {"reason": "ended"})
    for server in hall.followers:
        assert httpx.get(f"{server}/api/rooms/{code}").status_code == 404
        assert httpx.get(f"{server}/api/rooms/{code}/events").status_code == 404
        assert httpx.put(f"{server}/api/rooms/{code}/state", headers=token,
                         json={"source": "a = 1.0\n"}).status_code == 404


@pytest.mark.parametrize("backend", ["memory", "redis"])
def test_an_idle_room_expires_and_its_followers_are_told(
        backend: str, app_server: Callable[..., str], request: pytest.FixtureRequest) -> None:
    settings = {"room_idle_expiry_s": "2"}
    if backend == "redis":
        settings["redis_url"] = request.getfixturevalue("redis_url")
    hall = Hall(app_server(**settings), [])
    hall.followers = [hall.presenter]
    code, token = hall.create()
    stream = hall.follow(code)
    stream.next()
    hall.put(code, token, 1)                     # activity renews the expiry
    assert stream.next().data["step"] == 1
    ended = stream.next(timeout=20)
    assert (ended.kind, ended.data) == ("ended", {"reason": "expired"})
    assert httpx.get(f"{hall.presenter}/api/rooms/{code}").status_code == 404
    stream.close()


def test_serve_with_workers_shares_rooms_through_redis(redis_url: str) -> None:
    """`autograd-lab serve --workers 2`: followers' connections spread over both processes
    and all follow the room."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tests.conftest import free_port

    port = free_port()
    command = [str(Path(sys.executable).parent / "autograd-lab"), "serve", "--workers", "2",
               "--port", str(port)]
    process = subprocess.Popen(command, env={**os.environ, "LAB_REDIS_URL": redis_url},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    hall = Hall(base, [base])
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/healthz").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.1)
        code, token = hall.create()
        streams = [hall.follow(code) for _ in range(6)]
        assert all(s.next().data["step"] == 0 for s in streams)
        hall.put(code, token, 3)
        assert all(s.next().data["step"] == 3 for s in streams)
    finally:
        for s in hall.streams:
            s.close()
        process.terminate()
        process.wait(timeout=20)


def test_serve_with_workers_needs_redis() -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if k != "LAB_REDIS_URL"}
    done = subprocess.run([str(Path(sys.executable).parent / "autograd-lab"), "serve",
                           "--workers", "2", "--port", "1"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2 and "needs LAB_REDIS_URL" in done.stderr


@pytest.mark.parametrize("value", [3, 3.0])
def test_a_view_state_takes_a_whole_number_as_json_writes_it(value: Any) -> None:
    """JSON Schema's "integer" (what /docs says) takes 3.0; the lab does too."""
    state = ViewState.model_validate({"source": "", "pass": value, "step": value})
    assert (state.pass_, state.step) == (3, 3) and type(state.pass_) is int
    answer = AnswerSubmit.model_validate({"device": "abcdefgh", "node": value})
    assert answer.node == 3 and type(answer.node) is int


@pytest.mark.parametrize("value", [True, "3", 2.5, -1.0])
def test_a_view_state_refuses_what_is_not_a_whole_number(value: Any) -> None:
    with pytest.raises(ValueError, match="pass"):
        ViewState.model_validate({"source": "", "pass": value})

