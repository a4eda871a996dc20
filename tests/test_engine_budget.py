"""engine/ stays teachable: small modules, a line budget, no app or web imports, no
module-level mutable state, and no recursion over the graph.

The budget was first set at about 20% above the engine's size (1,761 lines in 17
modules). Growing past it is a decision: raise it in the same commit, saying why.

Raised to 9,000 when the language grew to what courses teach (CONTRACT.md §1b-§1d):
dtypes and type promotion, views and version counters, in-place ops with CopySlices,
every hook kind, autograd.grad and create_graph, custom Functions, about 120 ops with
their backward formulas, PyTorch's generator and printing, and two optimizers, in 7,534
lines over 50 modules, none above 300.

Raised to 9,300 for views that follow their base through in-place ops as PyTorch's do
(engine/views.py: the regenerated AsStridedBackward0, and the CreationMeta errors).

Raised to 9,450 for what a fifth round of recorded programs found courses write:
activations in place (engine/functions/activation_inplace.py), flip, one_hot, and the
notes that say what each of this round's speed changes measured.

Raised to 9,600 for a sixth round's rules: an index taken apart as PyTorch's applySlicing
does it, for reading and for assignment (engine/functions/slicing.py: basic parts as views
first, then one index or index_put_ op, with their checks), and fill_'s two nodes.

Raised to 9,650 for nll_loss's checks of its class weights (one per class, the input's
dtype) and the notes that say what this round's speed changes measured.

Raised to 9,800 for a seventh round's rules: `//` and `%` on tensors recorded as PyTorch
records them (engine/functions/rounding.py: RemainderBackward0/1, DivBackward2 and the
NotImplemented node, which takes no sequence number and raises), and the Note on the
signs of a matrix product's zeros.

Raised to 9,850 for sums in the loops TensorIterator makes of a tensor's layout
(engine/functions/summation.py: the dims' order, their merging and the 2-D kernel's four
cases), which give PyTorch's bits where the one loop before gave others.

Raised to 10,150 for more kernels in PyTorch's order of additions, each held to live
torch's bits: nll_loss's cascade of partial sums (engine/functions/nll_sums.py), var and
std by Welford's updates in double (engine/functions/spread.py), cumsum accumulated in
double, and repeat's backward summed as repeat_backward sums.

Raised to 10,450 for softmax and log_softmax as PyTorch's vectorized kernels compute them
(engine/functions/softmax_kernel.py: SLEEF's expf and logf, the lanes' order of sums),
which a cross-entropy loss printed in full shows.

Raised to 10,700 for matrix products in MKL's order of additions (engine/functions/
blas.py: sgemm's chains of fused multiply-adds, its dot-product kernel for short rows,
sgemv's four-row and one-row kernels, sdot's lanes), which every nn.Linear shows in a
loss printed in full.

Raised to 10,800 for float64 products in dgemm's order (engine/functions/chains.py, by
numpy's BLAS where it sums the same chains) and PyTorch's refusals of bool arithmetic
(subtraction, powers of bools).

Raised to 10,900 for the compiled build's C twins of softmax's SLEEF kernels and of Adam's
step (Note [The kernels in C], Note [Adam in C]): the Python that chooses them and the
notes that say what they measured. The C itself (engine/functions/sleef_kernels.c,
engine/optim_kernels.c, 470 lines) is not counted: the Python beside it stays the
definition a student reads, and tests hold the two to the same bits.

Raised to 11,150 for five more C twins in the compiled build, for a small network's
training loop (issue 14): matrix products' chains (Note [The chains in C]), the sum
kernel's loops (Note [Sums in C]), nll_loss's cascade and its backward's scatter (Note
[The cascade in C]), a float tensor's printed text (Note [Printing in C]) and randn's
Box-Muller rows (Note [Normal samples in C]). Their Python is what it was; the lines are
the notes that say what each measured, the sum loop's path into C, and each module's
import of its C (by name: tests/test_bad_input.py allows no module loader). The C
(engine/**/*.c and its header, 1,788 lines) is not counted.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from app.limits import Limits
from app.trace import run_source
from engine import AutogradContext, run_backward, tensor
from tests.matching import ROOT

ENGINE = ROOT / "engine"
MODULE_LINES = 300
ENGINE_LINES = 11_150
FORBIDDEN = {"app", "fastapi", "pydantic", "pydantic_settings", "starlette", "uvicorn",
             "jinja2", "json"}


def modules() -> list[Path]:
    found = sorted(ENGINE.rglob("*.py"))
    assert found, "no engine modules found"
    return found


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_each_module_is_small() -> None:
    big = {str(p.relative_to(ROOT)): lines(p) for p in modules() if lines(p) > MODULE_LINES}
    assert not big, f"split these modules (over {MODULE_LINES} lines): {big}"


def test_whole_engine_within_its_budget() -> None:
    total = sum(lines(p) for p in modules())
    assert total <= ENGINE_LINES, f"engine/ has {total} lines; the budget is {ENGINE_LINES}"


def imported_packages(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_engine_imports_nothing_from_the_app_or_the_web() -> None:
    bad = {str(p.relative_to(ROOT)): sorted(imported_packages(p) & FORBIDDEN)
           for p in modules() if imported_packages(p) & FORBIDDEN}
    assert not bad


def test_importing_the_engine_loads_none_of_them() -> None:
    code = ("import sys, engine, engine.functions, engine.graph_task\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(FORBIDDEN)!r})))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, check=True)
    assert proc.stdout.strip() == "[]"


MUTABLE_CALLS = {"list", "dict", "set", "defaultdict", "deque", "Counter", "OrderedDict"}


def test_no_module_level_mutable_state() -> None:
    """The sequence counter and all run state live in a per-run object (DESIGN.md)."""
    found = []
    for path in modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                    continue
                value = node.value
                mutable = isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp,
                                             ast.DictComp, ast.SetComp)) or (
                    isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                    and value.func.id in MUTABLE_CALLS)
                if mutable:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
        found += [f"{path.relative_to(ROOT)}:{n.lineno} global" for n in ast.walk(tree)
                  if isinstance(n, ast.Global)]
    assert not found


def test_deep_graphs_need_no_recursion() -> None:
    """A chain ten times deeper than Python's recursion limit records, runs and traces."""
    depth = 10 * sys.getrecursionlimit()
    ctx = AutogradContext(max_nodes=depth + 10)
    a = tensor(1.0, ctx, requires_grad=True)
    y = a
    for _ in range(depth):
        y = y * 1.0
    pops = sum(1 for event in run_backward(y) if type(event).__name__ == "NodePopped")
    assert pops == depth + 1
    assert a.grad is not None and a.grad.tolist() == 1.0
    source = "a = 1.0\ny = a * 1.0\n" + "y = y * 1.0\n" * 3000
    trace = run_source(source, Limits(max_lines=4000, max_nodes=4000))
    assert trace.error is None and len(trace.passes[0].steps) == 3002
