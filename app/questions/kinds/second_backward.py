"""Kind 3, second backward: "What happens when backward() is called again on the same
loss? How do you make it work?" The outcome (PyTorch's exact error or none), the node
where it fires, and which changes make the second call work, each change run through
the engine to see whether it really does."""

from __future__ import annotations

from app.questions import facts, programs
from app.questions.kinds import errors
from app.questions.kinds.base import Kind, line_of, question, shuffled_options, tolerance
from app.questions.model import ChoicePart, NumericPart, Option, Part, Question
from app.questions.programs import Program
from app.questions.variants import Space, Variant

ID, NUMBER, TITLE = "second-backward", 3, "Second backward"
SPACE = Space(ID, programs.shapes(tuple(programs.SHAPES)))
NOWHERE = "Nowhere: no node fails"


def fixes(p: Program) -> dict[str, str]:
    """Changes a student might try, as whole programs: text → program."""
    again = [f"{p.output}.backward()"]
    clear = [f"{leaf}.grad = None" for leaf in p.leaves]
    return {
        "Pass `retain_graph=True` to the first call": p.source(
            [f"{p.output}.backward(retain_graph=True)", *again]),
        "Run the forward pass again before the second call": p.source(
            [*again, *p.body, *again]),
        "Pass `retain_graph=True` to the second call only": p.source(
            [*again, f"{p.output}.backward(retain_graph=True)"]),
        "Set every leaf's `.grad` to `None` between the calls": p.source(
            [*again, *clear, *again]),
    }


def build(v: Variant) -> Question:
    p = programs.build(v.shape, v.values)
    source = p.source([f"{p.output}.backward()", f"{p.output}.backward()"])
    document = facts.run(source)
    outcome = errors.of(document)
    failed = document["error"] is not None
    last = document["passes"][-1]
    sources = facts.node_sources(source)
    by_id = facts.nodes(document["passes"][0])
    fails_at = last["steps"][-1]["node"] if failed and len(document["passes"]) == 2 else None
    entries = errors.choices(outcome)
    what, what_ids = shuffled_options(v, "what", entries)
    where_entries = [(facts.key(n), facts.full_label(n, sources))
                     for n in by_id.values()] + [("nowhere", NOWHERE)]
    where, where_ids = shuffled_options(v, "where", where_entries)
    where_key = facts.key(by_id[fails_at]) if fails_at is not None else "nowhere"
    parts: list[Part] = [
        ChoicePart(id="what", prompt="What does the second `loss.backward()` do?", options=what,
                   answer=[what_ids[k] for k, t in entries if t == outcome], why=outcome),
        ChoicePart(id="where", prompt="At which node does it fail?", options=where,
                   answer=[where_ids[where_key]],
                   why=dict(where_entries)[where_key]),
    ]
    tried = {text: facts.run(program) for text, program in fixes(p).items()}
    if failed:
        fix_opts = [Option(id=f"f{i}", text=t) for i, t in enumerate(tried, 1)]
        works = [f"f{i}" for i, d in enumerate(tried.values(), 1) if d["error"] is None]
        parts.append(ChoicePart(id="fix", prompt="Which changes make the second call work?",
                                options=fix_opts, multiple=True, answer=works,
                                why="Each change was run through the engine."))
    parts += _grad_parts(document, failed)
    return question(ID, NUMBER, TITLE, v, prompt="`loss.backward()` is called twice on the "
                    "same graph. What happens on the second call, and how do you make it "
                    "work?", program=source, parts=parts,
                    explanation=_explain(document, outcome, fails_at, by_id, sources, tried),
                    document=document, at=(len(document["passes"]) - 1, len(last["steps"]) - 1),
                    focus_line=line_of(source, "loss.backward()", 2),
                    facts_={"outcome": outcome, "fails_at": where_key,
                            "programs": {t: prog for t, prog in fixes(p).items()}})


def _grad_parts(document: facts.Doc, failed: bool) -> list[Part]:
    """After a failed call: the .grad of a leaf the failing pass still reached, if any;
    after a second call that worked: the first leaf's .grad."""
    last = document["passes"][-1]
    written = [s["leaf"] for s in last["steps"] if s["leaf"] is not None]
    leaf = written[0] if failed and written and len(document["passes"]) == 2 else (
        None if failed else next(iter(document["grads"]), None))
    value = document["grads"].get(leaf) if leaf else None
    if not isinstance(value, (int, float)):
        return []
    when = "after the failed second call" if failed else "after both calls"
    return [NumericPart(id=f"{leaf}.grad", prompt=f"What is `{leaf}.grad` {when}?",
                        answer=float(value), tolerance=tolerance(float(value)),
                        why="Every node popped before the failure really ran." if failed
                        else "The second call adds the same gradients once more.")]


def _explain(document: facts.Doc, outcome: str, fails_at: int | None, by_id: dict[int, facts.Node],
             sources: list[str], tried: dict[str, facts.Doc]) -> list[str]:
    lines = []
    if fails_at is None:
        lines.append("No node of this graph saved a tensor (only additions, subtractions and "
                     "sums), so nothing was freed: the second call runs again and every "
                     "`.grad` grows by the same gradients once more.")
    else:
        node = by_id[fails_at]
        ran = [facts.label(by_id[s["node"]]) for s in document["passes"][-1]["steps"][:-1]]
        lines.append("The first call freed every saved tensor right after its node ran. The "
                     f"second call pops {', '.join(ran) + ', then ' if ran else ''}"
                     f"{facts.full_label(node, sources)}, the first node "
                     "whose saved tensors are gone, and PyTorch raises:")
        lines.append(outcome)
    for text, d in tried.items():
        verdict = "works" if d["error"] is None else "still fails"
        lines.append(f"{text}: {verdict}.")
    return lines


KIND = Kind(ID, NUMBER, TITLE, SPACE, build)
