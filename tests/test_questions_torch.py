"""Every kind of question over 200 seeds, each model answer checked against live PyTorch.

The programs of a question (and of its choices, for the second-backward fixes) run in
real torch through tests/torch_recorder.py's Recorder, extended to note what the
questions ask about: each pass's graph (nodes, edges, saved tensors) and, in every node's
pre-hook, which earlier nodes' saved tensors are already freed. Each program runs in a
fresh thread (a fresh sequence counter), all in this process: 200 seeds of every kind
take seconds, not the minutes a process per program would.
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass, field
from typing import Any

import pytest

from app import questions as bank
from app.questions.kinds import KINDS, errors
from app.questions.model import NumericPart
from tests.matching import close, grads_equal
from tests.torch_recorder import ACCUMULATE, Recorder

pytestmark = pytest.mark.torch
SEEDS = range(200)
UINT64_MAX = 2**64 - 1


@dataclass
class TorchPass:
    order: list[str] = field(default_factory=list)              # node keys, in pop order
    edges: dict[str, list[str]] = field(default_factory=dict)   # key → next keys
    saved: dict[str, list[str]] = field(default_factory=dict)   # key → tensor saved names
    seqs: dict[str, int] = field(default_factory=dict)
    freed_after: dict[str, int] = field(default_factory=dict)   # key → its own pop (1-based)

    def producers(self, node: str) -> list[str]:
        return [k for k, nexts in self.edges.items() for n in nexts if n == node]

    def ready_before(self, j: int) -> set[str]:
        """Nodes every producer of which has popped, not popped themselves, before pop j."""
        done = set(self.order[:j])
        return {k for k in self.edges if k not in done
                and all(p in done for p in self.producers(k))}


class FactsRecorder(Recorder):
    """The conformance Recorder, also noting graphs, saved tensors and freeing."""

    def __init__(self, torch: Any) -> None:
        super().__init__(torch)
        self.torch_passes: list[TorchPass] = []
        self.nodes: dict[int, Any] = {}

    def key(self, node: Any) -> str:
        if node.name() == ACCUMULATE:
            return f"AccumulateGrad({self.leaf_name(node)})"
        return f"{node.name()}#{node._sequence_nr()}"

    def saved_names(self, node: Any) -> list[str]:
        names = []
        for attr in dir(node):
            if attr.startswith("_saved_") and not attr.endswith("_raw"):
                try:
                    value = getattr(node, attr)
                except RuntimeError:
                    continue
                if isinstance(value, self.torch.Tensor):
                    names.append(attr.removeprefix("_saved_"))
        return sorted(names)

    def freed(self, node: Any, names: list[str]) -> bool:
        try:
            for name in names:
                getattr(node, f"_saved_{name}")
        except RuntimeError:
            return True
        return False

    def graph(self, root: Any) -> TorchPass:
        p = TorchPass()
        stack, seen = [root], set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            k = self.key(node)
            self.nodes[id(node)] = node
            p.edges[k] = [self.key(n) for n, _ in node.next_functions if n is not None]
            p.saved[k] = [] if node.name() == ACCUMULATE else self.saved_names(node)
            p.seqs[k] = node._sequence_nr()
            stack.extend(n for n, _ in node.next_functions)
        return p

    def probe(self, p: TorchPass) -> None:
        by_key = {self.key(n): n for n in self.nodes.values()}
        for j, k in enumerate(p.order, 1):
            if k not in p.freed_after and p.saved.get(k) and self.freed(by_key[k], p.saved[k]):
                p.freed_after[k] = j

    def make_prehook(self, node: Any) -> Any:
        inner = super().make_prehook(node)

        def prehook(grad_outputs: Any) -> None:
            inner(grad_outputs)
            p = self.torch_passes[-1]
            self.probe(p)
            p.order.append(self.key(node))

        return prehook

    def record_backward(self, output_name: str, tensor: Any, *args: Any, **kwargs: Any) -> Any:
        root = tensor.grad_fn if tensor.grad_fn is not None else None
        self.torch_passes.append(self.graph(root) if root is not None else TorchPass())
        try:
            return super().record_backward(output_name, tensor, *args, **kwargs)
        finally:
            self.probe(self.torch_passes[-1])
            if not self.torch_passes[-1].order:
                self.torch_passes.pop()


@dataclass
class TorchRun:
    passes: list[TorchPass]
    grads: dict[str, Any]
    error: str


def run_torch(torch: Any, source: str) -> TorchRun:
    """Real PyTorch's facts for one program, in a fresh thread (sequence numbers from 0)."""
    box: list[TorchRun] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            recorder = FactsRecorder(torch)
            document = recorder.run(source)
            error = document["error"]
            box.append(TorchRun(recorder.torch_passes, document["grads"],
                                errors.NO_ERROR if error is None
                                else f"{error['type']}: {error['message']}"))
        except BaseException as e:  # re-raised in the test's thread
            failure.append(e)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    if failure:
        raise failure[0]
    return box[0]


def seq_text(seq: int) -> str:
    return "MAX (2**64 - 1)" if seq == UINT64_MAX else str(seq)


def check_pop_order(torch: Any, q: Any) -> None:
    t = run_torch(torch, q.program).passes[0]
    assert q.facts["order"] == t.order
    order_part, seq_part = q.parts
    keys = q.facts["keys"]
    texts = {o.id: o.text for o in seq_part.options}
    assert {keys[s]: texts[o] for s, o in seq_part.answer.items()} == {
        k: seq_text(t.seqs[k]) for k in t.order}
    assert [keys[i] for i in order_part.answer] == t.order


def check_gradients(torch: Any, q: Any) -> None:
    t = run_torch(torch, q.program)
    for part in q.parts:
        name, _, index = part.id.removesuffix("]").partition(".grad")
        want = t.grads[name] if not index else t.grads[name][int(index.lstrip("["))]
        assert close(part.answer, want), (part.id, part.answer, want)


def check_second_backward(torch: Any, q: Any) -> None:
    t = run_torch(torch, q.program)
    assert q.facts["outcome"] == t.error
    where = "nowhere" if t.error == errors.NO_ERROR else t.passes[-1].order[-1]
    assert q.facts["fails_at"] == where
    fix = next((p for p in q.parts if p.id == "fix"), None)
    if fix is not None:
        works = {o.id for o in fix.options
                 if run_torch(torch, q.facts["programs"][o.text]).error == errors.NO_ERROR}
        assert set(fix.answer) == works
    for part in q.parts:
        if isinstance(part, NumericPart):
            assert close(part.answer, t.grads[part.id.removesuffix(".grad")])


def check_accumulation(torch: Any, q: Any) -> None:
    t = run_torch(torch, q.program)
    assert q.facts["grads"].keys() == t.grads.keys()
    assert all(grads_equal(q.facts["grads"][k], t.grads[k]) for k in t.grads)
    first = q.program.split("loss.backward()\n")[0] + "loss.backward()\n"
    after_one = run_torch(torch, first).grads
    for leaf, (g1, g2) in q.facts["steps"].items():
        assert close(g1, after_one[leaf])
        assert close(g1 + g2, t.grads[leaf])


def check_saved(torch: Any, q: Any) -> None:
    t = run_torch(torch, q.program).passes[0]
    assert {k: sorted(v) for k, v in q.facts["saved"].items()} == {
        k: v for k, v in t.saved.items() if not k.startswith("AccumulateGrad")}
    assert q.facts["freed_at"] == t.freed_after


def check_dependencies(torch: Any, q: Any) -> None:
    t = run_torch(torch, q.program).passes[0]
    node = q.facts["node"]
    senders = t.producers(node)
    assert q.facts["count"] == len(senders)
    assert q.facts["ready_after"] == max(senders, key=t.order.index)


def check_next_pop(torch: Any, q: Any) -> None:
    t = run_torch(torch, q.program).passes[0]
    j = q.facts["pop"]
    assert q.facts["answer"] == t.order[j]
    assert set(q.facts["ready"]) == t.ready_before(j)


def check_tracking(torch: Any, q: Any) -> None:
    """Kind 8: which leaves get a .grad, a hook's effect, an in-place change's error and
    the node where it fires."""
    t = run_torch(torch, q.program)
    assert {k: v is None for k, v in q.facts["grads"].items()} == {
        k: v is None for k, v in t.grads.items()}
    for part in q.parts:
        if isinstance(part, NumericPart):
            assert close(part.answer, t.grads[part.id.removesuffix(".grad")])
    error = q.facts["error"]
    assert (errors.NO_ERROR if error is None else f"{error['type']}: {error['message']}") == t.error
    if q.facts["fails_at"] is not None:             # the in-place shape: where it fails
        assert q.facts["fails_at"] == ("nowhere" if t.error == errors.NO_ERROR
                                       else t.passes[-1].order[-1])


CHECKS = {"pop-order": check_pop_order, "gradients": check_gradients,
          "second-backward": check_second_backward, "accumulation": check_accumulation,
          "saved": check_saved, "dependencies": check_dependencies, "next-pop": check_next_pop,
          "tracking": check_tracking}


def test_every_available_kind_has_a_differential_check() -> None:
    assert set(bank.available_kinds()) <= set(CHECKS)


@pytest.mark.parametrize("kind", list(KINDS))
def test_model_answers_match_pytorch_over_200_seeds(torch: Any, kind: str) -> None:
    available, reason = KINDS[kind].availability()
    if not available:
        pytest.skip(f"{kind}: {reason}")
    failures = []
    for seed in SEEDS:
        q = bank.question(kind, seed)
        try:
            CHECKS[kind](torch, q)
        except AssertionError as e:
            failures.append(f"seed {seed}: {e}\n{q.program}")
    assert not failures, f"{len(failures)} of {len(SEEDS)} differ:\n" + "\n".join(failures[:3])


def test_recorder_sees_freeing_and_saved_tensors(torch: Any) -> None:
    """The extension itself, on the reference's worked example (§1, §4 #1)."""
    t = run_torch(torch, "import torch\nw = torch.tensor(3.0, requires_grad=True)\n"
                         "b = torch.tensor(1.0, requires_grad=True)\nx = torch.tensor(2.0)\n"
                         "y = w * x + b\nloss = y * y\nloss.backward()\n").passes[0]
    assert t.order == ["MulBackward0#2", "AddBackward0#1", "AccumulateGrad(b)",
                       "MulBackward0#0", "AccumulateGrad(w)"]
    assert t.saved["MulBackward0#2"] == ["other", "self"]
    assert t.saved["MulBackward0#0"] == ["other"]
    assert t.freed_after == {"MulBackward0#2": 1, "MulBackward0#0": 4}
    assert t.ready_before(2) == {"AccumulateGrad(b)", "MulBackward0#0"}

