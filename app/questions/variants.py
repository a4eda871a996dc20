"""Seeded variants: each kind's parameter space, and the one variant a seed stands for.

A space is a list of shapes, each with its own axes (a name and its options), so that no
axis is ever ignored by the shape it belongs to. A seed is mapped to a point of the space
by an affine permutation (`seed * step + offset` modulo the size, `step` coprime with the
size): seeds 0, 1, 2, ... visit every point once before any repeats, so two seeds give the
same question only when the space is used up, and neighbouring seeds land far apart.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Axis = tuple[str, Sequence[Any]]


@dataclass(frozen=True)
class Shape:
    name: str
    axes: tuple[Axis, ...]

    @property
    def size(self) -> int:
        return math.prod(len(options) for _, options in self.axes)

    def point(self, index: int) -> dict[str, Any]:
        """The index-th combination of the axes (mixed radix, the last axis fastest)."""
        values: dict[str, Any] = {}
        for name, options in reversed(self.axes):
            index, digit = divmod(index, len(options))
            values[name] = options[digit]
        return values


@dataclass(frozen=True)
class Variant:
    kind: str
    seed: int
    shape: str
    values: dict[str, Any]

    def rng(self, purpose: str) -> random.Random:
        """A generator for the cosmetic draws of this variant (shuffles), reproducible:
        seeded with a string, which Python hashes the same way on every run."""
        return random.Random(f"{self.kind}:{self.seed}:{purpose}")

    def __getitem__(self, name: str) -> Any:
        return self.values[name]


@dataclass(frozen=True)
class Space:
    kind: str
    shapes: tuple[Shape, ...]

    @property
    def size(self) -> int:
        return sum(s.size for s in self.shapes)

    def variant(self, seed: int) -> Variant:
        index = (seed * _step(self.size) + _offset(self.kind, self.size)) % self.size
        for shape in self.shapes:
            if index < shape.size:
                return Variant(self.kind, seed, shape.name, shape.point(index))
            index -= shape.size
        raise AssertionError("index beyond the space")


def _step(size: int) -> int:
    """The first number from 0.618 of the size on that shares no factor with it."""
    step = max(1, int(size * 0.6180339887))
    while math.gcd(step, size) != 1:
        step += 1
    return step


def _offset(kind: str, size: int) -> int:
    return random.Random(f"offset:{kind}").randrange(size)
