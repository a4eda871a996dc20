"""Kind 8, switching tracking off and changing gradients: no_grad/detach ("which tensors
get a .grad?"), a hook that changes a gradient, and an in-place change of a saved tensor
("does backward fail, where, with which message?").

These programs need the language of CONTRACT §1b. Until the lab accepts them the kind is
listed as unavailable, with the parser's reason (`Kind.needs`); the templates are here so
that the kind lights up the day the language lands, answered by the engine like the rest.
"""

from __future__ import annotations

from app.questions import facts
from app.questions.kinds import errors
from app.questions.kinds.base import Kind, question, shuffled_options, tolerance
from app.questions.model import ChoicePart, NumericPart, Option, Part, Question
from app.questions.programs import NAMES, SMALL, VALUES
from app.questions.variants import Shape, Space, Variant

ID, NUMBER, TITLE = "tracking", 8, "no_grad, detach, hooks and in-place"
SPACE = Space(ID, (
    Shape("no-grad", (("names", NAMES), ("v1", VALUES), ("v2", VALUES), ("v3", VALUES),
                      ("form", ("no_grad", "detach", "both")))),
    Shape("hook", (("names", NAMES), ("v1", VALUES), ("v2", SMALL), ("k", (2, 3, -1)))),
    Shape("in-place", (("names", NAMES), ("v1", VALUES), ("v2", SMALL),
                       ("change", ("mul_(2)", "add_(1)")), ("saved", (True, False)))),
))


def program(v: Variant) -> str:
    a, b, c = v["names"]
    head = ["import torch", f"{a} = torch.tensor({v['v1']!r}, requires_grad=True)",
            f"{b} = torch.tensor({v['v2']!r}, requires_grad=True)"]
    if v.shape == "no-grad":
        head.append(f"{c} = torch.tensor({v['v3']!r}, requires_grad=True)")
        form = v["form"]
        s = (["with torch.no_grad():", f"    s = {a} * 2"] if form != "detach"
             else [f"s = {a} * 2"])
        d = f"d = {c}.detach()" if form != "no_grad" else f"d = {c} * 1"
        body = [*s, d, f"loss = s * {b} + d * {b}", "loss.backward()"]
    elif v.shape == "hook":
        body = [f"y = {a} * {b}", f"h = y.register_hook(lambda g: g * {v['k']})",
                f"loss = y * y + {b}", "loss.backward()"]
    else:
        change = [f"y.{v['change']}"] if v["saved"] else ["q = y + 1", f"q.{v['change']}"]
        body = [f"y = {a} * {b}", "z = y * y", *change, "z.backward()"]
    return "\n".join(head + body) + "\n"


def build(v: Variant) -> Question:
    source = program(v)
    document = facts.run(source)
    grads = document["grads"]
    if v.shape == "no-grad":
        options = [Option(id=f"g{i}", text=f"`{n}`") for i, n in enumerate(grads, 1)]
        got = [f"g{i}" for i, g in enumerate(grads.values(), 1) if g is not None]
        parts: list[Part] = [ChoicePart(id="grads", prompt="Which leaves get a `.grad`?",
                                        options=options, multiple=True, answer=got,
                                        why="Operations under no_grad, and detached tensors, "
                                            "are not recorded: no gradient flows to them.")]
        prompt = "Which tensors get a `.grad` after `loss.backward()`?"
    elif v.shape == "hook":
        name = v["names"][0]
        value = float(grads[name])
        parts = [NumericPart(id=f"{name}.grad", prompt=f"`{name}.grad`", answer=value,
                             tolerance=tolerance(value),
                             why="The hook's result replaces y's gradient before MulBackward0 "
                                 "runs.")]
        prompt = f"A hook changes `y`'s gradient. What is `{name}.grad` after backward?"
    else:
        outcome = errors.of(document)
        entries = errors.choices(outcome)
        what, ids = shuffled_options(v, "what", entries)
        parts = [ChoicePart(id="what", prompt="What does `z.backward()` do?", options=what,
                            answer=[ids[k] for k, t in entries if t == outcome], why=outcome),
                 _where(v, document, source)]
        prompt = "Does backward fail after the in-place change, where, and with which message?"
    last = document["passes"][-1] if document["passes"] else None
    at = (len(document["passes"]) - 1, len(last["steps"]) - 1) if last else (0, -1)
    return question(ID, NUMBER, TITLE, v, prompt=prompt, program=source, parts=parts,
                    explanation=[p.why for p in parts], document=document, at=at,
                    facts_={"grads": grads, "error": document["error"]})


def _where(v: Variant, document: facts.Doc, source: str) -> ChoicePart:
    """At which node backward fails: the last pop of the failing pass, or nowhere."""
    sources = facts.node_sources(source)
    pass_ = document["passes"][-1]
    by_id = facts.nodes(pass_)
    failed = document["error"] is not None
    at = facts.key(by_id[pass_["steps"][-1]["node"]]) if failed else "nowhere"
    entries = [(facts.key(n), facts.full_label(n, sources)) for n in by_id.values()]
    options, ids = shuffled_options(v, "where", [*entries, ("nowhere", "Nowhere: it works")])
    return ChoicePart(id="where", prompt="At which node?", options=options, answer=[ids[at]],
                      why="The version check runs when the node that saved the tensor pops.")


SAMPLE = ("import torch\na = torch.tensor(1.0, requires_grad=True)\nwith torch.no_grad():\n"
          "    s = a * 2\nd = a.detach()\ny = a * a\nh = y.register_hook(lambda g: g * 2)\n"
          "y.mul_(2)\n")

KIND = Kind(ID, NUMBER, TITLE, SPACE, build, needs=SAMPLE)
