"""Kind 2, gradient values: "What are w.grad and b.grad after backward()?" One numeric
part per leaf (per element for a vector leaf), checked within float32's tolerance."""

from __future__ import annotations

from app.questions import facts, programs
from app.questions.kinds.base import Kind, listing, question, tolerance, walkthrough
from app.questions.model import NumericPart, Part, Question
from app.questions.variants import Space, Variant

ID, NUMBER, TITLE = "gradients", 2, "Gradient values"
SPACE = Space(ID, programs.shapes(tuple(programs.SHAPES)))


def numeric_parts(grads: dict[str, object], why: str) -> list[Part]:
    """A numeric part for each leaf's .grad (each element of a vector's)."""
    parts: list[Part] = []
    for name, value in grads.items():
        if isinstance(value, list):
            for i, x in enumerate(value):
                parts.append(NumericPart(id=f"{name}.grad[{i}]", prompt=f"`{name}.grad[{i}]`",
                                         answer=float(x), tolerance=tolerance(float(x)),
                                         why=why))
        elif isinstance(value, (int, float)):
            parts.append(NumericPart(id=f"{name}.grad", prompt=f"`{name}.grad`",
                                     answer=float(value), tolerance=tolerance(float(value)),
                                     why=why))
    return parts


def build(v: Variant) -> Question:
    source = programs.build(v.shape, v.values).source()
    document = facts.run(source)
    pass_ = document["passes"][0]
    sources = facts.node_sources(source)
    grads = document["grads"]
    names = [f"`{n}.grad`" for n in grads]
    parts = numeric_parts(grads, "Each AccumulateGrad writes the sum of the gradients its "
                                 "leaf received.")
    explanation = [*walkthrough(pass_, sources),
                   "So " + listing([f"{n}.grad = {facts.number(g)}" for n, g in grads.items()])
                   + " (float32, as PyTorch computes it)."]
    return question(ID, NUMBER, TITLE, v, prompt=f"What are {listing(names)} after "
                    "`loss.backward()`? Give at least 5 significant figures.",
                    program=source, parts=parts, explanation=explanation, document=document,
                    at=(0, len(pass_["steps"]) - 1), focus_line=len(source.splitlines()),
                    facts_={"grads": grads})


KIND = Kind(ID, NUMBER, TITLE, SPACE, build)
