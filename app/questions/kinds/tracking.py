"""Kind 8, switching tracking off and changing gradients: no_grad/detach ("which tensors
get a .grad?"), a hook that changes a gradient, and an in-place change of a saved tensor
("does backward fail, where, with which message?").

These programs need the language of CONTRACT §1b (blocks, `detach`, hooks, in-place
operations with version counters); `Kind.needs` keeps the kind listed as unavailable, with
the parser's reason, on a build whose language rejects them. The three shapes' spaces are
of one size, give or take, so that a set draws each about as often.
"""

from __future__ import annotations

from app.questions import facts
from app.questions.kinds import errors
from app.questions.kinds.base import (
    Kind,
    line_of,
    listing,
    question,
    shuffled_options,
    tolerance,
    walkthrough,
)
from app.questions.model import ChoicePart, NumericPart, Option, Part, Question
from app.questions.programs import NAMES, SMALL, VALUES
from app.questions.variants import Shape, Space, Variant

ID, NUMBER, TITLE = "tracking", 8, "no_grad, detach, hooks and in-place"
SPACE = Space(ID, (
    Shape("no-grad", (("names", NAMES), ("v1", VALUES), ("v2", VALUES),
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
        head.append(f"{c} = torch.tensor({-v['v2']!r}, requires_grad=True)")
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
    pass_ = document["passes"][-1]
    sources = facts.node_sources(source)
    a = v["names"][0]
    if v.shape == "no-grad":
        options = [Option(id=f"g{i}", text=f"`{n}`") for i, n in enumerate(grads, 1)]
        got = [f"g{i}" for i, g in enumerate(grads.values(), 1) if g is not None]
        parts: list[Part] = [ChoicePart(id="grads", prompt="Which leaves get a `.grad`?",
                                        options=options, multiple=True, answer=got,
                                        why="Operations under no_grad, and detached tensors, "
                                            "are not recorded: no gradient flows to them.")]
        prompt = "Which tensors get a `.grad` after `loss.backward()`?"
        explanation = _explain_no_grad(v, pass_, grads)
        focus = line_of(source, "with torch.no_grad():") or line_of(source, "d = ")
    elif v.shape == "hook":
        value = float(grads[a])
        parts = [NumericPart(id=f"{a}.grad", prompt=f"`{a}.grad`", answer=value,
                             tolerance=tolerance(value),
                             why="The hook's result replaces y's gradient before y's own "
                                 "node, the MulBackward0 of `y = ...`, runs.")]
        prompt = f"A hook changes `y`'s gradient. What is `{a}.grad` after backward?"
        explanation = [*walkthrough(pass_, sources),
                       f"So {a}.grad = {facts.number(grads[a])} (float32, as PyTorch "
                       "computes it)."]
        focus = line_of(source, "h = ")
    else:
        outcome = errors.of(document)
        entries = errors.choices(outcome)
        what, ids = shuffled_options(v, "what", entries)
        where = _where(v, document, source)
        parts = [ChoicePart(id="what", prompt="What does `z.backward()` do?", options=what,
                            answer=[ids[k] for k, t in entries if t == outcome], why=outcome),
                 where]
        prompt = "Does backward fail after the in-place change, where, and with which message?"
        change = f"y.{v['change']}" if v["saved"] else f"q.{v['change']}"
        explanation = _explain_in_place(document, sources, change, outcome)
        focus = line_of(source, change)
    last = document["passes"][-1] if document["passes"] else None
    at = (len(document["passes"]) - 1, len(last["steps"]) - 1) if last else (0, -1)
    fails_at = None
    if v.shape == "in-place":
        fails_at = (facts.key(facts.nodes(pass_)[pass_["steps"][-1]["node"]])
                    if document["error"] is not None else "nowhere")
    return question(ID, NUMBER, TITLE, v, prompt=prompt, program=source, parts=parts,
                    explanation=explanation, document=document, at=at, focus_line=focus,
                    facts_={"grads": grads, "error": document["error"], "fails_at": fails_at})


def _explain_no_grad(v: Variant, pass_: facts.Doc, grads: dict[str, object]) -> list[str]:
    """Which leaves the graph of `loss` reaches (its AccumulateGrad nodes), their `.grad`,
    and for each leaf it misses the line that cut it off."""
    a, _, c = v["names"]
    reached = [n["leaf"] for n in pass_["graph"]["nodes"] if facts.is_acc(n)]
    lines = [f"The graph of `loss` reaches an AccumulateGrad for "
             f"{listing([f'`{n}`' for n in reached])}: "
             "backward() writes " + listing([f"`{n}.grad` = {facts.number(grads[n])}"
                                            for n in reached]) + "."]
    for leaf, g in grads.items():
        if g is not None:
            continue
        if leaf == a and v["form"] != "detach":
            lines.append(f"`s = {a} * 2` ran under `torch.no_grad()`: `s` has no grad_fn, so "
                         f"no node leads back to `{a}`, and `{a}.grad` stays None.")
        elif leaf == c and v["form"] != "no_grad":
            lines.append(f"`d = {c}.detach()` is `{c}`'s data without a grad_fn: no node leads "
                         f"back to `{c}`, and `{c}.grad` stays None.")
        else:
            lines.append(f"No node of the graph leads back to `{leaf}`: `{leaf}.grad` stays "
                         "None.")
    return lines


def _explain_in_place(document: facts.Doc, sources: list[str], change: str,
                      outcome: str) -> list[str]:
    """What each node of z's graph saved and at which version, against the versions the
    tensors have when backward runs: a mismatch fails at that node's pop."""
    pass_ = document["passes"][-1]
    lines = []
    for n in sorted(pass_["graph"]["nodes"], key=lambda n: -n["seq"]):
        kept = [s for s in n["saved"] if s["is_tensor"]]
        if facts.is_acc(n) or not kept:
            continue
        versions = listing([f"{s['name']} at version {s['saved_version']} (now "
                            f"{s['version']})" for s in kept])
        lines.append(f"{facts.full_label(n, sources)} saved {versions}.")
    if document["error"] is None:
        lines.append(f"`{change}` changes no tensor that a node of z's graph saved, so every "
                     "version check passes and `z.backward()` runs to the end: "
                     + listing([f"`{n}.grad` = {facts.number(g)}"
                                for n, g in document["grads"].items()]) + ".")
    else:
        node = facts.nodes(pass_)[pass_["steps"][-1]["node"]]
        lines.append(f"`{change}` changed a saved tensor in place, raising its version. When "
                     f"{facts.full_label(node, sources)} pops (pop {len(pass_['steps'])}), the "
                     "version check fails and PyTorch raises:")
        lines.append(outcome)
    return lines


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
