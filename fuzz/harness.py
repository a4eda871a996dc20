"""Coverage-guided fuzzing of the parser and the interpreter with atheris (`make fuzz`).

Each input is decoded as program text and run through `run_source` under small limits. A
crash is what the lab must never do: an exception out of run_source, an `internal` error
(a bug of the lab's, answered as a 500-like document), or an error without its line (and
a refused text without its column). atheris writes the input to `crash-*`; add it to
tests/test_fuzz.py's REGRESSIONS so it stays fixed.

    python fuzz/harness.py -max_total_time=60 build/fuzz-corpus
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import atheris

with atheris.instrument_imports():
    from app.limits import Limits
    from app.trace import run_source

LIMITS = Limits(max_seconds=1.0, max_statements=20_000, max_iterations=5_000,
                max_nodes=2_000, max_elements=10_000)
ROOT = Path(__file__).resolve().parents[1]


class LabBug(Exception):
    """What the fuzzer reports: the lab failed on a program instead of answering it."""


def decode(data: bytes) -> str:
    """The input as the text a student sends: UTF-8, what is not replaced. (atheris'
    FuzzedDataProvider would spend the first byte on choosing ASCII, UTF-16 or UTF-32, so
    the seeded conformance programs would lose their first letter or turn to noise.)"""
    return data.decode("utf-8", errors="replace")


def test_one_input(data: bytes) -> None:
    error = run_source(decode(data), LIMITS).error
    if error is None:
        return
    if error.kind == "internal":
        raise LabBug(f"internal error: {error.type}: {error.message}")
    if error.line is None or (error.kind == "rejected" and error.col is None):
        raise LabBug(f"an error without its place: {error}")


def seed(corpus: Path) -> None:
    """The public conformance programs as the first inputs, once."""
    corpus.mkdir(parents=True, exist_ok=True)
    if any(corpus.iterdir()):
        return
    for path in sorted((ROOT / "tests" / "data" / "conformance").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                (corpus / case["id"]).write_text(case["source"], encoding="utf-8")


def main() -> None:
    corpora = [Path(a) for a in sys.argv[1:] if not a.startswith("-")]
    for corpus in corpora:
        seed(corpus)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
