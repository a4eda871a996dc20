"""The lab against live PyTorch, one program at a time: what test_differential.py asserts.

`differences` (tests/matching.py) applies the conformance README's rules. `rounding_only`
is the narrow escape hatch of the random tests: a difference that PyTorch itself does
not keep when the same program runs in float64, so that float32 rounding alone decides
it (a grad far from its float64 value, a printed digit on a rounding edge, the digits
of a gradient that is rounding noise around 0).
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from app.trace import run_source
from tests.matching import differences, printed_text
from tests.torch_recorder import record

NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?")


def lab(source: str) -> dict[str, Any]:
    return run_source(source).model_dump(mode="json")


def _unit(text: str) -> float:
    """One unit in the last written digit of a number's text."""
    try:
        exponent = Decimal(text).as_tuple().exponent
    except InvalidOperation:
        return 0.0
    return 10.0 ** exponent if isinstance(exponent, int) else 0.0


def numbers_close(a: str, b: str) -> bool:
    """The same text but for numbers that differ by at most one unit in their last digit
    or within the grads' tolerance."""
    if [" ".join(t.split()) for t in NUMBER.split(a)] != [
            " ".join(t.split()) for t in NUMBER.split(b)]:
        return False
    pairs = zip(NUMBER.findall(a), NUMBER.findall(b), strict=True)
    return all(abs(float(x) - float(y)) <= max(1.01 * max(_unit(x), _unit(y)),
                                                1e-5 + 1e-4 * abs(float(y)))
               for x, y in pairs)


def rounding_only(source: str, got: dict[str, Any], want: dict[str, Any]) -> bool:
    """Only grads and printed numbers differ, and each of those differences is one that
    PyTorch shows between its own float32 and float64 runs of the program."""
    diffs = differences(got, want)
    if not diffs or not all(d.startswith(("grads[", "printed:")) for d in diffs):
        return False
    wide = record(source, float64=True)
    if any(d.startswith("grads[") for d in diffs) and not differences(
            {**want, "grads": wide["grads"]}, want):
        return False
    printed, wanted = got.get("printed") or [], want.get("printed", [])
    if len(printed) != len(wanted) or len(wide.get("printed", [])) != len(wanted):
        return False
    lines = zip(printed, wanted, wide.get("printed", []), strict=True)
    return all(printed_text(g) == printed_text(w) or (
        numbers_close(printed_text(g), printed_text(w)) and printed_text(f) != printed_text(w))
        for g, w, f in lines)


def report(source: str, diffs: list[str]) -> str:
    return "\n".join([source.rstrip(), "----", *diffs, f"(source: {json.dumps(source)})"])
