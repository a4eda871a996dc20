"""The kinds of question, in issue 13's order. Adding a kind is one module that defines
`KIND` (its space of variants and its build function) and one line here."""

from __future__ import annotations

from app.questions.kinds import (
    accumulation,
    dependencies,
    gradients,
    next_pop,
    pop_order,
    saved,
    second_backward,
    tracking,
)
from app.questions.kinds.base import Kind

KINDS: dict[str, Kind] = {k.id: k for k in (
    pop_order.KIND,
    gradients.KIND,
    second_backward.KIND,
    accumulation.KIND,
    saved.KIND,
    dependencies.KIND,
    next_pop.KIND,
    tracking.KIND,
)}

__all__ = ["KINDS", "Kind"]
