"""What the lab page reads from the trace for the course's programs (issue 11): the fields
it once did not find.
What PyTorch does is pinned by the program's own output under live torch (the console's
order) and by the reference (hooks fire at AccumulateGrad after the .grad write, §7)."""

from __future__ import annotations

from app.trace import run_source

POST_ACCUMULATE = """import torch
w = torch.tensor(2.0, requires_grad=True)
y = w * 5
w.register_post_accumulate_grad_hook(lambda p: print("after the write", p.grad))
y.backward()
"""


def test_a_post_accumulate_hook_runs() -> None:
    trace = run_source(POST_ACCUMULATE)
    assert trace.printed == ["after the write tensor(5.)"]


def test_a_post_accumulate_hook_is_in_its_steps_hooks() -> None:
    step = run_source(POST_ACCUMULATE).passes[0].steps[-1]
    assert step["leaf"] == "w"
    assert [h["kind"] for h in step.get("hooks", [])] == ["post_accumulate"]


HOOK_PRINTS = """import torch
w = torch.tensor(2.0, requires_grad=True)
y = w * 5
y.register_hook(lambda g: print("y's gradient:", g))
y.backward()
"""


def test_a_print_in_a_hook_has_the_hooks_line() -> None:
    (line,) = run_source(HOOK_PRINTS).console
    assert line.text == "y's gradient: tensor(1.)"
    assert line.line == 4


LOOP_VARIABLE = """import torch
w = torch.tensor(0.5, requires_grad=True)
for x in [torch.tensor(2.0)]:
    y = w * x
    y.backward()
"""


def test_a_loop_variable_outside_the_graph_has_the_for_line() -> None:
    (row,) = run_source(LOOP_VARIABLE).outside
    assert (row.name, row.reason, row.line) == ("x", "requires_grad=False", 3)
