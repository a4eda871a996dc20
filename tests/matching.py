"""The conformance README's matching rules, as one typed function used by several tests.

A lab document matches a recorded PyTorch trace when `passes` agree exactly on each
step's name, seq and leaf (and on `kind` where the recorded pass has one); `grads` agree
within rtol 1e-4 / atol 1e-5 (with "nan", "inf" and "-inf" standing for themselves);
`error` has the same type and message; and, where the recording has `printed`, the
printed strings agree once memory addresses (0x...) are hidden and trailing whitespace
is stripped. These are ../shared/conformance/check.py's rules.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

RTOL, ATOL = 1e-4, 1e-5
UINT64_MAX = 2**64 - 1
TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
CORPORA_DIR = TESTS / "data" / "conformance"
# Copies of ../shared/conformance/*.jsonl, so the tests need neither torch nor that folder.
CORPORA = ("cases", "rules", "network", "modules")
CASES_PATH = CORPORA_DIR / "cases.jsonl"
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def load_cases(path: Path = CASES_PATH) -> list[dict[str, Any]]:
    """The recorded PyTorch cases: {"id", "source", "expected"} per line."""
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


OWN_CORPUS_DIR = TESTS / "data" / "corpus"


def load_corpora() -> list[dict[str, Any]]:
    """Every public corpus's cases, then the lab's own (tests/data/corpus: course-style
    programs recorded from PyTorch 2.13 the same way), each with its corpus's name under
    "corpus"."""
    public = [{**case, "corpus": name} for name in CORPORA
              for case in load_cases(CORPORA_DIR / f"{name}.jsonl")]
    own = [{**case, "corpus": path.stem} for path in sorted(OWN_CORPUS_DIR.glob("*.jsonl"))
           for case in load_cases(path)]
    return public + own


def printed_text(line: str) -> str:
    return ADDRESS.sub("0x…", line).rstrip()


def as_number(x: object) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str) and x.strip().lower() in SPECIAL:
        return SPECIAL[x.strip().lower()]
    return None


def close(got: object, want: object) -> bool:
    g, w = as_number(got), as_number(want)
    if g is None or w is None:
        return False
    if math.isnan(w) or math.isnan(g):
        return math.isnan(w) and math.isnan(g)
    if math.isinf(w) or math.isinf(g):
        return g == w
    return abs(g - w) <= ATOL + RTOL * abs(w)


def grads_equal(got: object, want: object) -> bool:
    if want is None or got is None:
        return got is None and want is None
    if isinstance(want, list):
        return (isinstance(got, list) and len(got) == len(want)
                and all(grads_equal(g, w) for g, w in zip(got, want, strict=True)))
    return not isinstance(got, list) and close(got, want)


def step_key(step: object) -> object:
    if isinstance(step, dict):
        return (step.get("name"), step.get("seq"), step.get("leaf"))
    return step


def step_text(step: object) -> str:
    if not isinstance(step, dict):
        return repr(step)
    text = str(step.get("name"))
    if step.get("seq") != UINT64_MAX:
        text += f"#{step.get('seq')}"
    if step.get("leaf") is not None:
        text += f"({step.get('leaf')})"
    return text


def differences(got: Any, want: dict[str, Any]) -> list[str]:
    """Readable differences between a lab document and an expected trace; [] if they match."""
    if not isinstance(got, dict):
        return [f"no JSON document: {got!r:.200}"]
    diffs: list[str] = []
    gp, wp = got.get("passes"), want["passes"]
    if not isinstance(gp, list):
        return [f"passes is not a list: {gp!r:.80}"]
    if len(gp) != len(wp):
        diffs.append(f"passes: expected {len(wp)}, got {len(gp)}")
    for i, (g, w) in enumerate(zip(gp, wp, strict=False)):
        if g.get("output") != w["output"]:
            diffs.append(f"pass {i} output: expected {w['output']!r}, got {g.get('output')!r}")
        if "kind" in w and g.get("kind") != w["kind"]:
            diffs.append(f"pass {i} kind: expected {w['kind']!r}, got {g.get('kind')!r}")
        gs, ws = g.get("steps", []), w["steps"]
        if [step_key(s) for s in gs] != [step_key(s) for s in ws]:
            diffs.append(f"pass {i} steps:\n    expected: {' '.join(map(step_text, ws))}"
                         f"\n    got:      {' '.join(map(step_text, gs))}")
    gg, wg = got.get("grads"), want["grads"]
    if not isinstance(gg, dict):
        diffs.append(f"grads is not an object: {gg!r:.80}")
    else:
        for name in sorted(set(gg) | set(wg)):
            if name not in gg or name not in wg or not grads_equal(gg[name], wg[name]):
                diffs.append(f"grads[{name}]: expected {json.dumps(wg.get(name, '<missing>'))}, "
                             f"got {json.dumps(gg.get(name, '<missing>'))}")
    ge, we = got.get("error"), want["error"]
    if ge is None or we is None:
        if ge is not None or we is not None:
            diffs.append(f"error: expected {json.dumps(we)}, got {json.dumps(ge)}")
    elif (not isinstance(ge, dict) or ge.get("type") != we["type"]
          or str(ge.get("message", "")).strip() != we["message"].strip()):
        diffs.append(f"error: expected {json.dumps(we)}, got {json.dumps(ge)}")
    if "printed" in want:
        printed = got.get("printed")
        if (not isinstance(printed, list)
                or [printed_text(str(x)) for x in printed]
                != [printed_text(x) for x in want["printed"]]):
            diffs.append(f"printed: expected {want['printed']!r}, got {printed!r}")
    return diffs
