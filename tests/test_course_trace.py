"""What the lab page reads from the trace for the course's programs (issue 11) and does not
find yet: each a strict xfail naming the field, so it turns green when the trace has it.
What PyTorch does is pinned by the program's own output under live torch (the console's
order) and by the reference (hooks fire at AccumulateGrad after the .grad write, §7)."""

from __future__ import annotations

import pytest

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


@pytest.mark.xfail(strict=True, reason="the engine runs post-accumulate-grad hooks "
                   "(engine/accumulate_grad.py) but the step's `hooks` never lists them, so "
                   "the page cannot draw them after the .grad write")
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


@pytest.mark.xfail(strict=True, reason="a print inside a hook's lambda is given the "
                   "backward() call's line, not the lambda's: the console's link marks the "
                   "call instead of the code that printed")
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


@pytest.mark.xfail(strict=True, reason="`outside` gives a for loop's variable the line of "
                   "the body's first statement, not of the `for` that bound it")
def test_a_loop_variable_outside_the_graph_has_the_for_line() -> None:
    (row,) = run_source(LOOP_VARIABLE).outside
    assert (row.name, row.reason, row.line) == ("x", "requires_grad=False", 3)
