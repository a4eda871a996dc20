"""Kind 7, predict the next pop: shown one moment of a run with its ready queue, choose
which node pops next. The candidates are the queue and the nodes still waiting with the
largest numbers (they would pop first if they were ready); the answer is the pop the
engine really made next."""

from __future__ import annotations

from app.questions import facts, programs
from app.questions.kinds.base import Kind, listing, question, shuffled_options
from app.questions.model import ChoicePart, Question
from app.questions.variants import Space, Variant

ID, NUMBER, TITLE = "next-pop", 7, "Predict the next pop"
SPACE = Space(ID, programs.shapes(tuple(programs.SHAPES), (("pick", (0, 1, 2)),)))
MAX_WAITING = 2


def moment(pass_: facts.Doc, pick: int) -> int:
    """The pop asked about: preferably one with a choice to make (two or more ready, or a
    larger number still waiting), the pick-th of those."""
    steps = range(1, len(pass_["steps"]))
    def choosy(j: int) -> bool:
        return len(facts.queue_before(pass_, j)) >= 2 or bool(_waiting(pass_, j, 1))
    good = [j for j in steps if choosy(j)] or list(steps) or [0]
    return good[pick % len(good)]


def _waiting(pass_: facts.Doc, j: int, limit: int) -> list[facts.Node]:
    """Nodes not yet ready whose number beats the best ready one, the largest first."""
    by_id = facts.nodes(pass_)
    ready = facts.queue_before(pass_, j)
    best = max(by_id[i]["seq"] for i in ready)
    done = {s["node"] for s in pass_["steps"][:j]}
    counts = facts.counts_before(pass_, j)
    late = [n for n in by_id.values() if n["id"] not in done and n["id"] not in ready
            and counts.get(n["id"], 0) > 0 and n["seq"] > best]
    return sorted(late, key=lambda n: -n["seq"])[:limit]


def build(v: Variant) -> Question:
    source = programs.build(v.shape, v.values).source()
    document = facts.run(source)
    pass_ = document["passes"][0]
    sources = facts.node_sources(source)
    by_id = facts.nodes(pass_)
    j = moment(pass_, v["pick"])
    ready = [by_id[i] for i in facts.queue_before(pass_, j)]
    waiting = _waiting(pass_, j, MAX_WAITING)
    answer = by_id[pass_["steps"][j]["node"]]
    options, ids = shuffled_options(v, "choices", [(facts.key(n), facts.full_label(n, sources))
                                                   for n in ready + waiting])
    shown = [facts.full_label(n, sources) for n in ready]
    v.rng("queue").shuffle(shown)
    just = facts.full_label(by_id[pass_["steps"][j - 1]["node"]], sources) if j else None
    counts = facts.counts_before(pass_, j)
    prompt = (f"`loss.backward()` has made {j} pop{'s' if j != 1 else ''}"
              + (f"; the last was {just}" if just else "")
              + f". The ready queue now holds {listing(shown)} (in no particular order). "
              "Which node pops next?")
    why = _why(answer, [n for n in ready if n["id"] != answer["id"]], waiting, counts)
    parts = [ChoicePart(id="next", prompt="Which node pops next?", options=options,
                        answer=[ids[facts.key(answer)]], why=why)]
    return question(ID, NUMBER, TITLE, v, prompt=prompt, program=source, parts=parts,
                    explanation=[why], document=document, at=(0, j - 1),
                    focus_line=len(source.splitlines()),
                    facts_={"pop": j, "ready": sorted(facts.key(n) for n in ready),
                            "answer": facts.key(answer)})


def _why(answer: facts.Node, others: list[facts.Node], waiting: list[facts.Node],
         counts: dict[int, int]) -> str:
    name = facts.label(answer)
    if not others:
        text = f"{name} is the only node in the ready queue"
    elif all(n["seq"] == answer["seq"] for n in others):
        text = (f"the ready nodes all have the number {facts.seq_text(answer)}, and PyTorch's "
                f"heap pops {name} first (the one pushed first, the left operand)")
    else:
        text = (f"{name} has the largest sequence number in the ready queue "
                f"({facts.seq_text(answer)}): the queue pops the latest operation first, and "
                "AccumulateGrad's number is the largest of all")
    for n in waiting:
        left = counts.get(n["id"], 0)
        text += (f"; {facts.label(n)} has a larger number but still waits for {left} "
                 f"gradient{'s' if left != 1 else ''}")
    return text[0].upper() + text[1:] + "."


KIND = Kind(ID, NUMBER, TITLE, SPACE, build)
