"""The recorded PyTorch corpora, checked through the real command line.

tests/data/conformance/*.jsonl are copies of ../shared/conformance/*.jsonl (the first
minute's cases, the course language's rules, the small network, the modules): programs
with what PyTorch 2.13 did for them (recorded by record_torch.py), so this test needs
neither torch nor the shared directory. Every program is written to a file
and traced by `autograd-lab trace` in batches, as the outside checker does; each
document must match with the conformance README's rules (tests/matching.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.matching import ROOT, differences, load_corpora

CASES = load_corpora()
# Where the lab knowingly differs from PyTorch, and why (README, "Where the lab differs").
KNOWN = {
    "lab-tutorials-0277-builtins_on_tensors": "recorded on a CPU whose PyTorch gave "
        "log(float32(e)) = 1.0 exactly ('tensor(1.)'); PyTorch 2.13 on this AVX512 CPU, "
        "glibc's logf and the lab (Note [Float32 functions]) give the correctly rounded "
        "0.99999994 ('tensor(1.0000)')",
    "lab-tutorials-0288-pass_in_hook": "a backward() inside a tensor hook (reentrant "
        "backward: PyTorch runs a nested graph task at once, listed as a pass after the one "
        "that ran the hook); the lab refuses a pass inside a hook (UnsupportedError)",
    **{case: "a negative float to a fractional power is a complex number in Python; the lab "
       "has no complex numbers and refuses the line (UnsupportedError) where Python goes on"
       for case in ("lab-round7-c094-gradient", "lab-round7-c115-reforward")},
    **{case: "one row times a matrix of 16 columns or more (`x @ W`, k >= 8): MKL's kernel "
       "for it adds in an order not reproduced (blas.py, Note [MKL's summation order]); the "
       "printed values differ in the last bits"
       for case in ("lab-round10-01", "lab-round10-29")},
    "lab-round10-05": "float64 matrix products keep numpy's order; MKL's dgemv adds in "
        "another, and the printed float64 values differ in the last digit",
    "lab-round10-06": "float32 torch.tanh: PyTorch's kernel is not correctly rounded for "
        "about 1.5% of inputs; the lab's tanh is, and a printed loss differs in its last bits",
    "lab-round10-28": "float64 log_softmax: PyTorch's vectorized kernel rounds the last bit "
        "otherwise than numpy's arithmetic (Note [Vectorized softmax] covers float32 only)",
    "lab-round10-30": "float32 torch.exp: PyTorch's (MKL's vector) exp is not correctly "
        "rounded for about 1.1% of inputs; the lab's exp is, and a printed loss differs",
}
BATCH = 25
SHARED_CHECK = ROOT.parent / "shared" / "conformance" / "check.py"


def cli() -> str:
    """The autograd-lab command of the environment running the tests."""
    path = Path(sys.executable).parent / "autograd-lab"
    if not path.exists():
        pytest.skip(f"no autograd-lab command next to {sys.executable}")
    return str(path)


def trace_files(paths: list[Path], *options: str) -> tuple[int, list[Any]]:
    proc = subprocess.run([cli(), "trace", *options, *map(str, paths)], capture_output=True,
                          text=True, timeout=120, check=False, cwd=ROOT)
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines() if line]


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every case's document, traced through the CLI in batches of files."""
    tmp = tmp_path_factory.mktemp("conformance")
    paths = []
    for i, case in enumerate(CASES):
        path = tmp / f"{i:04d}.py"
        path.write_text(case["source"], encoding="utf-8")
        paths.append(path)
    docs: list[Any] = []
    for start in range(0, len(paths), BATCH):
        batch = paths[start:start + BATCH]
        code, out = trace_files(batch)
        assert len(out) == len(batch), "one JSON document per file, in order"
        wants_error = any(c["expected"]["error"] for c in CASES[start:start + BATCH])
        assert code == (1 if wants_error else 0), "non-zero exactly when a document has an error"
        docs.extend(out)
    return {case["id"]: doc for case, doc in zip(CASES, docs, strict=True)}


def test_corpora_are_the_published_ones() -> None:
    counts = {name: sum(c["corpus"] == name for c in CASES)
              for name in ("cases", "rules", "network", "modules")}
    assert counts == {"cases": 65, "rules": 50, "network": 40, "modules": 24}
    assert sum(c["id"].startswith("lab-") for c in CASES) >= 500     # the lab's own
    assert sum(c["corpus"] == "tutorials_extra" for c in CASES) >= 280  # tutorial code
    assert sum(c["corpus"] == "autograd_round3" for c in CASES) >= 215  # autograd's corners
    assert sum(c["corpus"] == "docs_round3" for c in CASES) >= 200  # the reference docs
    assert sum(c["corpus"] == "round8" for c in CASES) >= 570      # autograd's extras
    assert sum(c["corpus"] == "round12" for c in CASES) >= 553     # reprs, overloads, gradcheck
    assert len({c["id"] for c in CASES}) == len(CASES)
    if SHARED_CHECK.exists():       # the copies are current
        shared = SHARED_CHECK.parent
        for name in counts:
            assert (shared / f"{name}.jsonl").read_text(encoding="utf-8") == (
                ROOT / "tests" / "data" / "conformance" / f"{name}.jsonl").read_text(
                encoding="utf-8"), f"refresh tests/data/conformance/{name}.jsonl"


def _param(case: dict[str, Any]) -> Any:
    known = case["id"] in KNOWN
    marks = [pytest.mark.xfail(strict=True, reason=KNOWN[case["id"]])] if known else []
    return pytest.param(case, id=case["id"], marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_case_matches_pytorch(case: dict[str, Any], documents: dict[str, Any]) -> None:
    diffs = differences(documents[case["id"]], case["expected"])
    assert not diffs, "\n".join([case["source"], *diffs])


def test_brief_documents_hold_only_the_contract_fields(tmp_path: Path) -> None:
    path = tmp_path / "p.py"
    path.write_text(CASES[0]["source"], encoding="utf-8")
    code, (doc,) = trace_files([path], "--brief")
    assert code == 0
    assert set(doc) == {"passes", "grads", "error"}
    assert {key for p in doc["passes"] for key in p} == {"output", "steps"}
    assert {key for p in doc["passes"] for s in p["steps"] for key in s} == {
        "name", "seq", "leaf"}
    assert not differences(doc, CASES[0]["expected"])


def test_stdin_is_read_for_dash() -> None:
    proc = subprocess.run([cli(), "trace", "--brief", "-"], input=CASES[0]["source"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0
    assert not differences(json.loads(proc.stdout), CASES[0]["expected"])


@pytest.mark.skipif(not SHARED_CHECK.exists(),
                    reason=f"the shared conformance checker is not at {SHARED_CHECK}")
def test_shared_conformance_checker_passes() -> None:
    """The outside checker itself (standard library only), on its own corpus."""
    proc = subprocess.run([sys.executable, str(SHARED_CHECK), "--show", "5"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    last = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 0, proc.stdout
    matched, total = last.removeprefix("conformance: ").split()[0].split("/")
    assert matched == total, last
