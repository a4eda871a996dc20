"""Kind 6, dependencies: "How many gradients does AddBackward0 wait for, and when does it
become ready?" The count is the node's incoming edges; it becomes ready at the pop that
sends the last of them, which the trace's `ready` lists say."""

from __future__ import annotations

from app.questions import facts, programs
from app.questions.kinds.base import Kind, question, shuffled_options
from app.questions.model import ChoicePart, NumericPart, Part, Question
from app.questions.variants import Space, Variant

ID, NUMBER, TITLE = "dependencies", 6, "Dependencies"
SPACE = Space(ID, programs.shapes(tuple(programs.SHAPES), (("target", (0, 1)),)))


def target(pass_: facts.Doc, pick: int) -> facts.Node:
    """The node asked about: among those waiting for the most gradients (the latest
    first), the pick-th."""
    deps = facts.dependencies(pass_)
    ranked: list[facts.Node] = sorted((n for n in pass_["graph"]["nodes"] if deps[n["id"]] > 0),
                    key=lambda n: (-deps[n["id"]], -n["seq"] if not facts.is_acc(n) else 0,
                                   n["id"]))
    return ranked[min(pick, len(ranked) - 1)]


def build(v: Variant) -> Question:
    source = programs.build(v.shape, v.values).source()
    document = facts.run(source)
    pass_ = document["passes"][0]
    sources = facts.node_sources(source)
    by_id = facts.nodes(pass_)
    node = target(pass_, v["target"])
    count = facts.dependencies(pass_)[node["id"]]
    ready = facts.ready_at(pass_, node["id"])
    pusher = by_id[pass_["steps"][ready]["node"]]
    name = facts.describe(node, sources)
    others = [n for n in facts.popped(pass_) if n["id"] != node["id"]]
    options, ids = shuffled_options(v, "after", [(facts.key(n), facts.full_label(n, sources))
                                                 for n in others])
    parts: list[Part] = [
        NumericPart(id="count", prompt=f"How many gradients does {name} wait for?",
                    answer=float(count), tolerance=0.0,
                    why="One for each edge that points at it."),
        ChoicePart(id="ready", prompt="Right after which node's pop does it become ready?",
                   options=options, answer=[ids[facts.key(pusher)]],
                   why=f"{facts.full_label(pusher, sources)} sends the last of them."),
    ]
    return question(ID, NUMBER, TITLE, v, prompt=f"During `loss.backward()`, how many "
                    f"gradients does {name} wait for, and when does it become ready?",
                    program=source, parts=parts,
                    explanation=_explain(pass_, node, sources), document=document,
                    at=(0, ready), focus_line=len(source.splitlines()),
                    facts_={"node": facts.key(node), "count": count,
                            "ready_after": facts.key(pusher)})


def _explain(pass_: facts.Doc, node: facts.Node, sources: list[str]) -> list[str]:
    by_id = facts.nodes(pass_)
    senders = [by_id[p] for p in facts.producers(pass_)[node["id"]]]
    name = facts.full_label(node, sources)
    lines = [f"{name} has {len(senders)} incoming edge{'s' if len(senders) != 1 else ''}, "
             f"from {', '.join(facts.full_label(s, sources) for s in senders)}: the engine "
             f"counts {len(senders)} before it starts."]
    for j, step in enumerate(pass_["steps"], 1):
        left = step["dependencies"].get(str(node["id"]))
        if left is not None:
            sender = facts.label(by_id[step["node"]])
            lines.append(f"Pop {j}: {sender} sends it a gradient; {left} still to come"
                         + (": it is pushed onto the ready queue." if left == 0 else "."))
    return lines


KIND = Kind(ID, NUMBER, TITLE, SPACE, build)
