"""Kind 5, saved tensors and memory: "Which values does each node keep for backward, and
which are freed after each step?" Two matchings, read from the graph's saved values and
each pop's list of freed tensors."""

from __future__ import annotations

from app.questions import facts, programs
from app.questions.kinds.base import Kind, question
from app.questions.model import MatchPart, Option, Question
from app.questions.variants import Space, Variant

ID, NUMBER, TITLE = "saved", 5, "Saved tensors and memory"
SPACE = Space(ID, programs.shapes(tuple(programs.SHAPES), (("retain", (False, True)),)))
NOTHING = "no tensor"
KEPT = "not freed: kept for another backward"
USUAL = (NOTHING, "self", "other", "self and other", "result")


def saved_text(names: list[str]) -> str:
    return " and ".join(names) if names else NOTHING


def build(v: Variant) -> Question:
    p = programs.build(v.shape, v.values)
    call = "loss.backward(retain_graph=True)" if v["retain"] else "loss.backward()"
    source = p.source([call])
    document = facts.run(source)
    pass_ = document["passes"][0]
    sources = facts.node_sources(source)
    ops = sorted((n for n in pass_["graph"]["nodes"] if not facts.is_acc(n)),
                 key=lambda n: n["seq"])
    stems = [Option(id=f"n{i}", text=facts.describe(n, sources)) for i, n in enumerate(ops, 1)]
    stem_of = {n["id"]: s.id for n, s in zip(ops, stems, strict=True)}
    texts = list(USUAL) + [t for t in (saved_text(facts.saved_tensors(n)) for n in ops)
                           if t not in USUAL]
    what_ids = {t: f"k{i}" for i, t in enumerate(dict.fromkeys(texts), 1)}
    what = MatchPart(id="saved", prompt="What does each node save for its backward?",
                     stems=stems, options=[Option(id=i, text=t) for t, i in what_ids.items()],
                     answer={stem_of[n["id"]]: what_ids[saved_text(facts.saved_tensors(n))]
                             for n in ops},
                     why="A product saves the inputs the other side's gradient needs; tanh, "
                         "exp, sigmoid and relu save their result; sums save no tensor.")
    freed_at = _freed_at(pass_)
    holders = [n for n in ops if facts.saved_tensors(n)]
    pops = len(pass_["steps"])
    when_ids = {f"after pop {j}": f"t{j}" for j in range(1, pops + 1)} | {KEPT: "t0"}
    when = MatchPart(id="freed", prompt="When are each node's saved tensors freed?",
                     stems=[s for s in stems if s.id in {stem_of[n["id"]] for n in holders}],
                     options=[Option(id=i, text=t) for t, i in when_ids.items()],
                     answer={stem_of[n["id"]]: when_ids[_when(freed_at.get(n["id"]))]
                             for n in holders},
                     why="Without retain_graph, a node's saved tensors are freed right after "
                         "that node runs." if not v["retain"] else
                         "retain_graph=True keeps every saved tensor for another backward.")
    parts = [what, when] if holders else [what]
    return question(ID, NUMBER, TITLE, v, prompt="Which values does each node keep for "
                    f"backward, and which are freed after each step of `{call}`?",
                    program=source, parts=parts, explanation=_explain(pass_, ops, sources,
                                                                      freed_at),
                    document=document, at=(0, len(pass_["steps"]) - 1),
                    focus_line=len(source.splitlines()),
                    facts_={"saved": {facts.key(n): facts.saved_tensors(n) for n in ops},
                            "freed_at": {facts.key(facts.nodes(pass_)[i]): j
                                         for i, j in freed_at.items()}})


def _freed_at(pass_: facts.Doc) -> dict[int, int]:
    """Node id → the pop (1-based) after which its saved tensors were freed."""
    return {s["node"]: j for j, s in enumerate(pass_["steps"], 1) if s["released"]}


def _when(pop: int | None) -> str:
    return KEPT if pop is None else f"after pop {pop}"


def _explain(pass_: facts.Doc, ops: list[facts.Node], sources: list[str],
             freed_at: dict[int, int]) -> list[str]:
    lines = []
    for n in ops:
        saved = [f"{s['name']} = {s['value']}" for s in n["saved"] if s["is_tensor"]]
        held = ", ".join(saved) if saved else "no tensor"
        gone = freed_at.get(n["id"])
        tail = "" if not saved else (f"; freed after pop {gone}, when it ran" if gone
                                     else "; kept after backward")
        lines.append(f"{facts.full_label(n, sources)} saves {held}{tail}.")
    return lines


KIND = Kind(ID, NUMBER, TITLE, SPACE, build)
