"""What every kind of question shares: the `Kind` record, and helpers that turn a trace
into options, lab links and the worked walk through the pops."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from app.language.parse import SourceError, parse
from app.questions import facts
from app.questions.facts import Doc, Node
from app.questions.model import LabLink, Option, Part, Question
from app.questions.variants import Space, Variant

RTOL, ATOL = 1e-4, 1e-5      # float32 values, as the lab's tests compare them with PyTorch


@dataclass(frozen=True)
class Kind:
    """One kind of question: its parameter space and how a variant becomes a question.
    `needs` is a program the language must accept for the kind to be offered at all."""

    id: str
    number: int
    title: str
    space: Space
    build: Callable[[Variant], Question]
    needs: str | None = None

    def availability(self) -> tuple[bool, str | None]:
        return _accepted(self.needs) if self.needs else (True, None)

    def question(self, seed: int) -> Question:
        return self.build(self.space.variant(seed))


@cache
def _accepted(source: str) -> tuple[bool, str | None]:
    try:
        parse(source)
    except SourceError as e:
        return False, (f"the lab's language does not accept these programs yet (line {e.line}: "
                       f"{e.message})")
    return True, None


def tolerance(value: float) -> float:
    return max(ATOL, RTOL * abs(value))


def question(kind: str, number: int, title: str, v: Variant, *, prompt: str, program: str,
             parts: Sequence[Part], explanation: list[str], document: Doc, at: tuple[int, int],
             focus_line: int | None = None, facts_: dict[str, Any] | None = None) -> Question:
    """A question with its lab link at pop `at` = (pass, j) of the program's timeline."""
    step = facts.timeline_step(document, *at)
    return Question(id=f"{kind}-{v.seed}", kind=kind, number=number, seed=v.seed, title=title,
                    prompt=prompt, program=program, focus_line=focus_line, parts=list(parts),
                    explanation=explanation,
                    lab=LabLink(program=program, step=step, url=facts.lab_url(program, step)),
                    facts={"shape": v.shape, **(facts_ or {})})


def line_of(program: str, text: str, nth: int = 1) -> int | None:
    """The 1-based number of the nth line that starts with `text`."""
    seen = 0
    for i, line in enumerate(program.splitlines(), 1):
        if line.startswith(text):
            seen += 1
            if seen == nth:
                return i
    return None


def shuffled_options(v: Variant, purpose: str, entries: list[tuple[str, str]]
                     ) -> tuple[list[Option], dict[str, str]]:
    """Options for (key, text) entries in a seeded order, with ids o1, o2, ... in the order
    shown (so an id says nothing about the answer); returns the options and key → id."""
    order = list(entries)
    v.rng(purpose).shuffle(order)
    options = [Option(id=f"o{i}", text=text) for i, (_, text) in enumerate(order, 1)]
    return options, {k: f"o{i}" for i, (k, _) in enumerate(order, 1)}


def walkthrough(pass_: Doc, sources: list[str]) -> list[str]:
    """One sentence per pop: what the node received and where it sent what."""
    by_id = facts.nodes(pass_)
    lines = []
    for j, step in enumerate(pass_["steps"], 1):
        node = by_id[step["node"]]
        got = facts.number(step["grad"])
        if facts.is_acc(node):
            lines.append(f"Pop {j}: {facts.label(node)} adds {got} into {node['leaf']}.grad.")
            continue
        sent = [f"{facts.number(s['value'])} to {_target(by_id[s['to']])}" for s in step["sent"]]
        hooked = "".join(f"; the hook on `{h['label']}` returns `{h['after']}`, which replaces "
                         "it" for h in step.get("hooks") or []
                         if h.get("kind") == "tensor" and h.get("replaced"))
        where = f"{'; it' if hooked else ' and'} sends {_listing(sent)}" if sent else ""
        lines.append(f"Pop {j}: {facts.label(node)} ({_source(node, sources)}) receives "
                     f"{got}{hooked}{where}.")
    return lines


def _source(node: Node, sources: list[str]) -> str:
    seq = node["seq"]
    return f"`{sources[seq]}`" if seq < len(sources) else "an operation"


def _target(node: Node) -> str:
    return f"{node['leaf']}'s AccumulateGrad" if facts.is_acc(node) else facts.label(node)


def _listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def listing(items: list[str]) -> str:
    return _listing(items) if items else "nothing"


def finite(document: Doc) -> bool:
    """Every gradient of the trace is a finite number (the shapes' values keep it so; a
    question never asks for nan)."""
    def ok(v: Any) -> bool:
        if isinstance(v, list):
            return all(ok(x) for x in v)
        return isinstance(v, (int, float)) and math.isfinite(v)
    return all(v is None or ok(v) for v in document["grads"].values())
