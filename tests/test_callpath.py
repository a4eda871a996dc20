"""The call path (app/trace/callpath.py): its phases for backward, autograd.grad and the
non-scalar error, as the document and the stream carry them, and the source route."""

from __future__ import annotations

from typing import Any

from app.trace import run_source, trace_events
from app.trace.callpath import SOURCES

BACKWARD = "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (x * x).sum()\ny.backward()\n"
GRAD = ("x = torch.tensor(2.0, requires_grad=True)\ny = x * x\n"
        "g = torch.autograd.grad(y, x)\n")
NON_SCALAR = "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * x\ny.backward()\n"


def phases(source: str) -> list[tuple[str, int | None, str]]:
    return [(p["phase"], p["step"], p["status"]) for p in run_source(source).callpath]


def test_backward_goes_from_tensor_backward_to_grad() -> None:
    trace = run_source(BACKWARD)
    steps = len(trace.passes[0].steps)
    assert phases(BACKWARD) == [
        ("Tensor.backward", 0, "ok"), ("torch.autograd.backward", 0, "ok"),
        ("_make_grads", 0, "ok"), ("_engine_run_backward", 0, "ok"),
        ("Engine::execute", 0, "ok"), ("compute_dependencies", 0, "ok"),
        ("ready_queue", 1, "ok"), ("evaluate_function", 1, "ok"),
        ("release_variables", 1, "ok"), ("hooks", None, "skipped"), (".grad", steps, "ok")]
    make = trace.callpath[2]
    assert "ones_like(y)" in make["detail"] and make["line"] == 3 and make["pass"] == 0


def test_grad_takes_its_own_branch() -> None:
    found = phases(GRAD)
    names = [n for n, _, _ in found]
    assert names[0] == "torch.autograd.grad" and "Tensor.backward" not in names
    assert names[-1] == "returned" and ".grad" not in names
    run = run_source(GRAD).callpath[names.index("_engine_run_backward")]
    assert "accumulate_grad=False" in run["detail"]


def test_non_scalar_output_stops_in_make_grads() -> None:
    trace = run_source(NON_SCALAR)
    assert trace.passes == [] and trace.error is not None
    assert phases(NON_SCALAR) == [("Tensor.backward", 0, "ok"),
                                  ("torch.autograd.backward", 0, "ok"),
                                  ("_make_grads", 0, "error")]
    assert trace.error.message in trace.callpath[-1]["detail"]
    assert trace.callpath[-1]["pass"] is None


def test_no_grad_fn_stops_at_the_engine_call() -> None:
    source = "x = torch.tensor(2.0)\ny = x * 2\ny.backward()\n"
    assert phases(source)[-1] == ("_engine_run_backward", 0, "error")


def test_hooks_and_retain_graph_are_shown_where_they_act() -> None:
    source = ("x = torch.tensor(2.0, requires_grad=True)\ny = x * 3\n"
              "h = y.register_hook(lambda g: g * 2)\ny.backward(retain_graph=True)\n")
    found = {p["phase"]: p for p in run_source(source).callpath}
    assert found["hooks"]["steps"] == [1] and found["hooks"]["status"] == "ok"
    assert found["release_variables"]["status"] == "skipped"


def test_every_pass_has_its_phases_and_the_stream_sends_them() -> None:
    source = BACKWARD + "z = (x * 3).sum()\nz.backward()\n"
    trace = run_source(source)
    assert [p["pass"] for p in trace.callpath].count(1) == 11
    streamed = [p for kind, piece in trace_events(source) if kind == "phase"
                for p in piece.phases]                              # type: ignore[union-attr]
    assert streamed == trace.callpath


def test_each_phase_links_to_a_function_of_the_engine() -> None:
    from pathlib import Path

    from engine import __file__ as engine_init

    root = Path(engine_init).parent.parent
    for target in SOURCES.values():
        path, name = target.split("#")
        text = (root / path).read_text(encoding="utf-8")
        assert f"def {name}(" in text, target


def test_source_route_serves_the_engine_only(app_client: Any) -> None:
    app_client = app_client()
    for target in SOURCES.values():
        path, name = target.split("#")
        response = app_client.get(f"/source/{path}")
        assert response.status_code == 200
        assert f'id="{name}"' in response.text
    listing = app_client.get("/source/engine/")
    assert listing.status_code == 200 and 'href="/source/engine/graph_task.py"' in listing.text
    for outside in ("app/web/settings.py", "engine/../pyproject.toml", "engine/missing.py",
                    "%2e%2e/pyproject.toml", "engine/__pycache__/node.cpython-311.pyc"):
        assert app_client.get(f"/source/{outside}").status_code == 404, outside


def test_source_page_escapes_the_code(app_client: Any) -> None:
    text = app_client().get("/source/engine/graph_task.py").text
    assert "-&gt; Iterator[Event]" in text and "<script" not in text.split("</head>")[1]


def test_torch_autograd_backward_starts_at_its_own_box() -> None:
    source = "x = torch.tensor(2.0, requires_grad=True)\ny = x * x\ntorch.autograd.backward(y)\n"
    assert phases(source)[0] == ("torch.autograd.backward", 0, "ok")
    failing = "x = torch.tensor([1.0, 2.0], requires_grad=True)\ntorch.autograd.backward(x * x)\n"
    assert phases(failing) == [("torch.autograd.backward", 0, "ok"), ("_make_grads", 0, "error")]


def test_grad_of_a_non_scalar_fails_in_its_own_branch() -> None:
    source = "x = torch.tensor([1.0, 2.0], requires_grad=True)\ng = torch.autograd.grad(x * x, x)\n"
    assert phases(source) == [("torch.autograd.grad", 0, "ok"), ("_make_grads", 0, "error")]
