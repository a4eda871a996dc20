""""Which node pops next?": a question at one frame of a trace, its candidates, and the
engine's answer with a one-sentence reason composed from the sequence numbers.

Everything comes from the trace document (a dict as the API writes it): the ready queue
after each pop (`queue`, in pop order), the graph's nodes, the dependency counts, and the
next step's `node`, which is what the engine really popped.
"""

from __future__ import annotations

from typing import Any

from app.rooms.models import Answer, Candidate, Question

UINT64_MAX = 2**64 - 1
MAX_READY = 6          # candidates from the ready queue, in pop order
MAX_WAITING = 2        # distractors: nodes still waiting, the latest (largest numbers) first
QUESTION = "Which node pops next?"


def label(node: dict[str, Any]) -> str:
    """As the page names a node (static/js/labels.js): `MulBackward0 #2`, `AccumulateGrad(w)`."""
    if node["name"] == "AccumulateGrad":
        return f"AccumulateGrad({node['leaf']})"
    return f"{node['name']} {seq_text(node)}"


def seq_text(node: dict[str, Any]) -> str:
    return "MAX" if node["seq"] == UINT64_MAX else f"#{node['seq']}"


def next_pop(trace: dict[str, Any], pass_index: int, step: int,
             poll_id: str) -> tuple[Question, Answer] | None:
    """The question at (pass, step), or None where nothing pops next (the call is over,
    or the frame does not exist)."""
    passes = trace.get("passes") or []
    if pass_index >= len(passes):
        return None
    current = passes[pass_index]
    steps, graph = current["steps"], current.get("graph")
    if graph is None or step >= len(steps):
        return None
    by_id = {n["id"]: n for n in graph["nodes"]}
    ready = [graph["root"]] if step == 0 else list(steps[step - 1]["queue"])
    popped = {s["node"] for s in steps[:step]}
    deps = _dependencies(current, step)
    waiting = sorted((n for n in graph["nodes"] if n["id"] not in popped
                      and n["id"] not in ready and deps.get(n["id"], 0) > 0),
                     key=lambda n: (-n["seq"], n["id"]))[:MAX_WAITING]
    choices = [by_id[i] for i in ready[:MAX_READY]]
    answer = by_id[steps[step]["node"]]
    candidates = [Candidate(node=n["id"], label=label(n), ready=n["id"] in ready)
                  for n in sorted(choices + waiting, key=lambda n: n["id"])]
    question = Question(id=poll_id, question=QUESTION, pass_=pass_index, step=step,
                        candidates=candidates)
    reason = _reason(answer, [by_id[i] for i in ready if i != answer["id"]], waiting, deps)
    return question, Answer(node=answer["id"], label=label(answer), reason=reason)


def _dependencies(current: dict[str, Any], step: int) -> dict[int, int]:
    """Each node's count of gradients still to come, after `step` pops."""
    counts = {int(k): v for k, v in (current.get("dependencies") or {}).items()}
    for s in current["steps"][:step]:
        counts.update({int(k): v for k, v in s["dependencies"].items()})
    return counts


def _reason(answer: dict[str, Any], others: list[dict[str, Any]],
            waiting: list[dict[str, Any]], deps: dict[int, int]) -> str:
    name, seq = label(answer), seq_text(answer)
    equal = [n for n in others if n["seq"] == answer["seq"]]
    lower = sorted({seq_text(n) for n in others if n["seq"] < answer["seq"]}, key=_seq_order)
    if not others:
        sentence = f"{name} is the only node in the ready queue"
    elif not lower:
        every = "both" if len(others) == 1 else f"all {len(others) + 1}"
        sentence = (f"{every} ready nodes have the same sequence number ({seq}), and "
                    f"PyTorch's heap pops {name} first")
    else:
        why = ("AccumulateGrad's number is the largest there is" if seq == "MAX"
               else "the latest operation runs first")
        sentence = (f"{name} has the largest sequence number in the ready queue ({seq}, "
                    f"above {_listing(lower)}): {why}")
        if equal:
            sentence += f"; of the {len(equal) + 1} with {seq}, PyTorch's heap pops it first"
    later = [n for n in waiting if n["seq"] > answer["seq"]]
    if later:
        n = later[0]
        count = deps.get(n["id"], 0)
        sentence += (f"; {label(n)} has a larger number but still waits for {count} "
                     f"gradient{'' if count == 1 else 's'}")
    return sentence[0].upper() + sentence[1:] + "."


def _listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _seq_order(text: str) -> int:
    return UINT64_MAX if text == "MAX" else -int(text[1:])
