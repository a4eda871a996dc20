"""The question bank's routes and command line: answers left out of what students load,
marking and revealing, exports as downloads equal to the CLI's, /docs, the README's
example."""

from __future__ import annotations

import dataclasses
import json
import re
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app import questions as bank
from app.cli import main
from app.questions.kinds import KINDS
from app.web.app import create_app
from tests.test_questions import perfect


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def test_set_route_leaves_the_answers_out(client: TestClient) -> None:
    body = client.get("/api/questions/set", params={"seed": 3, "count": 7}).json()
    assert body["count"] == 7
    text = json.dumps(body)
    for key in ('"answer"', '"explanation"', '"tolerance"', '"before"'):
        assert key not in text


def test_answer_route_marks_and_reveals(client: TestClient) -> None:
    q = bank.question("gradients", 9)
    r = client.post("/api/questions/gradients/9/answer", json={"answers": perfect(q)})
    assert r.status_code == 200 and r.json()["score"] == 1.0
    assert r.json()["model"]["lab"]["url"].startswith("/#p=")
    reveal = client.get("/api/questions/2/9/answer").json()
    assert reveal["explanation"] == q.explanation


def test_unknown_and_unavailable_kinds_are_404(client: TestClient,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    assert client.get("/api/questions/nope/1").status_code == 404
    assert client.get("/api/questions/tracking/1").status_code == 200
    future = dataclasses.replace(KINDS["tracking"], id="future", number=9,
                                 needs="import torch\nglobal x\n")
    monkeypatch.setitem(KINDS, "future", future)
    for url in ("/api/questions/future/1", "/api/questions/future/1/answer"):
        r = client.get(url)
        assert r.status_code == 404 and "unavailable" in r.json()["detail"]
    assert client.get("/api/questions/set", params={"kind": "future"}).status_code == 404
    assert client.get("/api/questions/set", params={"kind": "nope"}).status_code == 404
    assert client.get("/api/questions/set", params={"count": 0}).status_code == 422


def test_every_question_of_a_set_from_the_largest_seed_opens_on_its_own(
        client: TestClient) -> None:
    """A set's questions are variants S*64 + j: the per-question routes (which the page
    calls to check and reveal) take them all, and nothing beyond."""
    body = client.get("/api/questions/set", params={"seed": bank.MAX_SEED, "count": 9}).json()
    assert body["count"] == 9
    for q in body["questions"]:
        assert client.get(f"/api/questions/{q['kind']}/{q['seed']}").status_code == 200
        assert client.get(f"/api/questions/{q['kind']}/{q['seed']}/answer").status_code == 200
        r = client.post(f"/api/questions/{q['kind']}/{q['seed']}/answer", json={"answers": {}})
        assert r.status_code == 200 and r.json()["score"] == 0
    assert max(q["seed"] for q in body["questions"]) <= bank.MAX_VARIANT_SEED
    too_far = bank.MAX_VARIANT_SEED + 1
    assert client.get(f"/api/questions/gradients/{too_far}").status_code == 422
    assert client.get("/api/questions/set", params={"seed": bank.MAX_SEED + 1}).status_code == 422


def test_cli_takes_the_seeds_the_page_takes(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["answer-key", "--seed", "-1"], ["export", "--seed", str(bank.MAX_SEED + 1)],
                 ["show", "--kind", "1", "--seed", str(bank.MAX_VARIANT_SEED + 1)]):
        with pytest.raises(SystemExit, match="--seed takes 0 to"):
            main(["questions", *argv])
    assert main(["questions", "show", "--kind", "1", "--seed", str(bank.MAX_VARIANT_SEED)]) == 0
    assert f"pop-order-{bank.MAX_VARIANT_SEED}" in capsys.readouterr().out


def test_export_downloads_are_the_cli_exports(client: TestClient,
                                              capsysbinary: pytest.CaptureFixture[bytes]
                                              ) -> None:
    for fmt in ("moodle-xml", "gift", "json"):
        r = client.get("/api/questions/export", params={"format": fmt, "seed": 2, "count": 5})
        assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
        assert main(["questions", "export", "--format", fmt, "--seed", "2", "--count", "5"]) == 0
        assert capsysbinary.readouterr().out == r.content


def test_qti_download_is_the_zip_the_cli_writes(client: TestClient, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The same bytes, even a day apart: the zip's entries carry no clock time."""
    r = client.get("/api/questions/export", params={"format": "qti", "seed": 2, "count": 5})
    assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
    assert 'filename="autograd-lab-questions-2.qti.zip"' in r.headers["content-disposition"]
    later = time.time() + 86_400
    monkeypatch.setattr(time, "time", lambda: later)
    out = tmp_path / "set.zip"
    assert main(["questions", "export", "--format", "qti", "--seed", "2", "--count", "5",
                 "-o", str(out)]) == 0
    assert out.read_bytes() == r.content


def test_docs_describe_the_bank_and_the_exports(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/quiz", "/api/questions/set", "/api/questions/export",
                 "/api/questions/{kind}/{seed}/answer"):
        assert path in paths


def test_readme_answer_key_block_is_what_the_cli_prints(
        capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    (block,) = [b for b in re.findall(r"```console\n(.*?)```", readme, flags=re.S)
                if "questions answer-key" in b]
    command, printed = block.strip().split("\n", 1)
    assert command == "$ autograd-lab questions answer-key --seed 3 --count 3"
    assert main(command.split()[2:]) == 0
    assert capsys.readouterr().out == printed.strip() + "\n"


def test_cli_show_and_answer_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["questions", "show", "--kind", "pop-order", "--seed", "4", "--answers"]) == 0
    out = capsys.readouterr().out
    q = bank.question("pop-order", 4)
    assert q.program.splitlines()[1] in out and "Worked answer" in out
    assert main(["questions", "answer-key", "--seed", "4", "--count", "3"]) == 0
    key = capsys.readouterr().out
    assert key.startswith("1. ") and "3. " in key
    with pytest.raises(SystemExit):
        main(["questions", "show", "--kind", "nope", "--seed", "1"])
