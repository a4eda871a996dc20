"""Kind 1, pop order: "List the nodes in the order the engine runs them, with their
sequence numbers." An order part (graded exactly, or by the dependencies alone at the
instructor's choice) and a matching of each node to its sequence number."""

from __future__ import annotations

from app.questions import facts, programs
from app.questions.kinds.base import Kind, question, walkthrough
from app.questions.model import MatchPart, Option, OrderPart, Part, Question
from app.questions.variants import Space, Variant

ID, NUMBER, TITLE = "pop-order", 1, "Pop order"
SPACE = Space(ID, programs.shapes(tuple(programs.SHAPES)))


def build(v: Variant) -> Question:
    source = programs.build(v.shape, v.values).source()
    document = facts.run(source)
    pass_ = document["passes"][0]
    sources = facts.node_sources(source)
    order = facts.popped(pass_)
    shown = list(order)
    v.rng("items").shuffle(shown)
    ids = {facts.key(n): f"n{i}" for i, n in enumerate(shown, 1)}
    items = [Option(id=ids[facts.key(n)], text=facts.describe(n, sources)) for n in shown]
    by_id = facts.nodes(pass_)
    before = [(ids[facts.key(by_id[a])], ids[facts.key(by_id[b])])
              for a, b in facts.before_pairs(pass_)]
    seqs = sorted({n["seq"] for n in order})
    seq_ids = {s: f"s{i}" for i, s in enumerate(seqs, 1)}
    seq_options = [Option(id=seq_ids[s], text="MAX (2**64 - 1)" if s == facts.UINT64_MAX
                          else str(s)) for s in seqs]
    answer_text = ", ".join(facts.label(n) for n in order)
    parts: list[Part] = [
        OrderPart(id="order", prompt="Put the nodes in the order the engine pops them "
                  "from the ready queue.", items=items,
                  answer=[ids[facts.key(n)] for n in order], before=before,
                  why=f"The engine pops {answer_text}."),
        MatchPart(id="seq", prompt="Give each node its sequence number.", stems=items,
                  options=seq_options,
                  answer={ids[facts.key(n)]: seq_ids[n["seq"]] for n in order},
                  why="Nodes are numbered 0, 1, 2, ... in the order the forward pass "
                      "records them; every AccumulateGrad has the largest number there is."),
    ]
    explanation = [
        "The engine counts each node's incoming edges, pushes the root, then pops the "
        "ready node with the largest sequence number; a node becomes ready when the last "
        "of its gradients has arrived.",
        *walkthrough(pass_, sources),
    ]
    return question(ID, NUMBER, TITLE, v, prompt="List the nodes in the order the engine "
                    "runs them during `loss.backward()`, with their sequence numbers.",
                    program=source, parts=parts, explanation=explanation, document=document,
                    at=(0, -1), focus_line=len(source.splitlines()),
                    facts_={"order": [facts.key(n) for n in order],
                            "keys": {ids[facts.key(n)]: facts.key(n) for n in shown}})


KIND = Kind(ID, NUMBER, TITLE, SPACE, build)
