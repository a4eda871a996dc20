"""Self-check exam questions (issue 13): templates per kind with seeded variants, model
answers computed by running the engine on each variant's program, grading, and exports
for Moodle (XML, GIFT) and Canvas (QTI 1.2).

`question(kind, seed)` is one question; `practice_set(seed, count, kinds)` is the mixed
set one link hands out. Both are pure functions of their arguments (cached).
"""

from __future__ import annotations

import random
from functools import lru_cache

from app.questions.kinds import KINDS, Kind
from app.questions.model import KindInfo, Question

MAX_COUNT = 50
PER_KIND = 64         # variant seeds reserved for each kind in one practice set
MAX_SEED = 2**31 - 1  # a set's seed
# A set's questions are variants S*64 + j: one question's seed runs this far, so that
# every question of every set can be fetched, checked and revealed on its own.
MAX_VARIANT_SEED = MAX_SEED * PER_KIND + PER_KIND - 1


class UnknownKind(ValueError):
    """A kind that does not exist, or that the language cannot run yet."""


def kinds() -> list[KindInfo]:
    out = []
    for k in KINDS.values():
        available, reason = k.availability()
        out.append(KindInfo(id=k.id, number=k.number, title=k.title, available=available,
                            reason=reason))
    return out


def available_kinds() -> list[str]:
    return [k.id for k in kinds() if k.available]


def kind(name: str) -> Kind:
    found = KINDS.get(name) or next((k for k in KINDS.values() if str(k.number) == name), None)
    if found is None:
        raise UnknownKind(f"no kind of question {name!r}: one of {', '.join(KINDS)}")
    available, reason = found.availability()
    if not available:
        raise UnknownKind(f"{found.id} is unavailable: {reason}")
    return found


@lru_cache(maxsize=1024)
def question(name: str, seed: int) -> Question:
    """One question: the variant of kind `name` that `seed` stands for."""
    return kind(name).question(seed)


def plan(seed: int, count: int, names: list[str] | None = None) -> list[tuple[str, int]]:
    """The (kind, variant seed) of each question of a practice set: kinds in turn, in an
    order drawn from the seed; the j-th question of a kind in set S is variant S*64 + j,
    so sets never share a variant and every variant of a set is different."""
    chosen = [kind(n).id for n in names] if names else available_kinds()
    order = list(dict.fromkeys(chosen))
    random.Random(f"set:{seed}").shuffle(order)
    count = max(1, min(count, MAX_COUNT, PER_KIND * len(order)))
    return [(order[i % len(order)], seed * PER_KIND + i // len(order)) for i in range(count)]


def practice_set(seed: int, count: int, names: list[str] | None = None) -> list[Question]:
    return [question(k, s) for k, s in plan(seed, count, names)]


__all__ = ["KINDS", "MAX_COUNT", "MAX_SEED", "MAX_VARIANT_SEED", "PER_KIND", "UnknownKind",
           "available_kinds", "kind", "kinds", "plan", "practice_set", "question"]
