"""Kind 4, accumulation: "What is w.grad after two training steps without zero_grad()?"
Two forward passes on two data points, each followed by backward(); `.grad` keeps the
sum. The explanation gives each step's own gradient, read from its AccumulateGrad pop."""

from __future__ import annotations

from app.questions import facts
from app.questions.kinds.base import Kind, question
from app.questions.kinds.gradients import numeric_parts
from app.questions.model import Question
from app.questions.programs import FUNCS, NAMES, SMALL, VALUES, Program
from app.questions.variants import Shape, Space, Variant

ID, NUMBER, TITLE = "accumulation", 4, "Accumulation"
DATA = (("x1", SMALL), ("x2", SMALL))
SPACE = Space(ID, (
    Shape("squared", (("names", NAMES), ("v1", VALUES), ("v2", VALUES), *DATA,
                      ("t1", (-1.0, 0.0, 1.0, 2.0)), ("t2", (-1.0, 0.0, 1.0, 2.0)))),
    Shape("activation", (("names", NAMES), ("f", FUNCS), ("v1", VALUES), ("v2", VALUES), *DATA)),
))


def program(v: Variant) -> Program:
    w, b, _ = v["names"]
    if v.shape == "squared":
        data = {"x1": v["x1"], "t1": v["t1"], "x2": v["x2"], "t2": v["t2"]}
        steps = [f"loss = ({w} * x1 + {b} - t1) ** 2", f"loss = ({w} * x2 + {b} - t2) ** 2"]
    else:
        data = {"x1": v["x1"], "x2": v["x2"]}
        steps = [f"loss = torch.{v['f']}({w} * x1 + {b})", f"loss = torch.{v['f']}({w} * x2 + {b})"]
    return Program({w: v["v1"], b: v["v2"]}, [steps[0], "loss.backward()", steps[1]], data=data)


def build(v: Variant) -> Question:
    source = program(v).source()
    document = facts.run(source)
    grads = document["grads"]
    first, second = document["passes"]
    parts = numeric_parts(grads, "backward() adds into .grad: the two steps' gradients sum.")
    explanation = []
    for leaf, total in grads.items():
        g1, g2 = _received(first, leaf), _received(second, leaf)
        explanation.append(
            f"`{leaf}`: the first step's backward writes {leaf}.grad = {facts.number(g1)}; the "
            f"second step's gradient is {facts.number(g2)}, and AccumulateGrad adds it: "
            f"{leaf}.grad = {facts.number(total)}. With `{leaf}.grad = None` (what "
            f"`optimizer.zero_grad()` does) between the steps it would be {facts.number(g2)}.")
    names = " and ".join(f"`{n}.grad`" for n in grads)
    return question(ID, NUMBER, TITLE, v, prompt=f"Two training steps run without "
                    f"`zero_grad()` in between. What are {names} after the second "
                    "`loss.backward()`? Give at least 5 significant figures.",
                    program=source, parts=parts, explanation=explanation, document=document,
                    at=(1, len(second["steps"]) - 1), focus_line=len(source.splitlines()),
                    facts_={"grads": grads, "steps": {leaf: [_received(first, leaf),
                                                             _received(second, leaf)]
                                                      for leaf in grads}})


def _received(pass_: facts.Doc, leaf: str) -> object:
    """What the leaf's AccumulateGrad received in this pass (the step's own gradient)."""
    return next(s["grad"] for s in pass_["steps"] if s["leaf"] == leaf)


KIND = Kind(ID, NUMBER, TITLE, SPACE, build)
