"""Views after an in-place op on their base (engine/views.py): the next read of a view's
grad_fn gives it a new AsStridedBackward0 onto the base's grad_fn as it is then, with a
sequence number taken at that read; views made under no_grad or inference_mode, outputs
of unbind and views a custom Function returned raise PyTorch's errors instead.

Each program of CASES is compared with live PyTorch (skipped without torch); RECORDED
holds a few of them with the trace PyTorch 2.13 gave, so that the rule is checked
without torch too.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.differential import lab, report
from tests.matching import differences

_T = "import torch\n"
_A3 = _T + "a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
_A23 = _T + "a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)\n"

_IDENTITY = ("class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
             "        return x\n    @staticmethod\n    def backward(ctx, g):\n        return g\n")
_SLICE = ("class G(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
          "        return x[0:2]\n    @staticmethod\n    def backward(ctx, g):\n"
          "        return torch.cat([g, g.new_zeros(1)])\n")
_DIRTY = ("class D(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
          "        x.mul_(2)\n        ctx.mark_dirty(x)\n        return x\n"
          "    @staticmethod\n    def backward(ctx, g):\n        return g * 2\n")

CASES = {
    # the base changed in place: each view used afterwards gets a new AsStridedBackward0
    "index-and-transpose": _A23 + "b = a * 2\nv = b[0]\nw = b.T\nb.mul_(2)\n"
                                  "(v.sum() + w.sum()).backward()\nprint(a.grad)\n",
    "saved-view-names-as-strided": _A3 + "b = a * 1\nv = b.view(3)\ny = v * v\nb.add_(1)\n"
                                         "y.sum().backward()\n",
    "grad-fn-printed": _A3 + "b = a * 1\nv = b[1:]\nb.mul_(2)\nprint(v)\n"
                             "print(v.grad_fn.name(), v.grad_fn.next_functions)\n"
                             "print(v.grad_fn._saved_size, v.grad_fn._saved_stride, "
                             "v.grad_fn._saved_storage_offset)\n"
                             "y = v * 3\ny.sum().backward()\nprint(a.grad)\n",
    "view-of-a-view": _A23 + "b = a * 1\nv = b[0]\nu = v[1:]\nb.add_(1)\nz = u * v[:2]\n"
                             "print(u.grad_fn._saved_storage_offset)\n"
                             "z.sum().backward()\nprint(a.grad)\n",
    "unsqueeze-transpose-flatten-reshape": _A23 + "b = a + 0\nu = b.unsqueeze(0)\n"
                                                  "t = b.transpose(0, 1)\nf = b.flatten()\n"
                                                  "r = b.reshape(3, 2)\nb.sub_(1)\n"
                                                  "(u.sum() * 2 + t[0].sum() + f[1:].sum() "
                                                  "+ r[2].sum()).backward()\nprint(a.grad)\n",
    "expanded-view-sums": _T + "a = torch.tensor([1.0, 2.0], requires_grad=True)\nb = a * 1\n"
                               "e = b.expand(3, 2)\nb.mul_(3)\nprint(e.grad_fn._saved_stride)\n"
                               "(e * torch.tensor([[1.0], [2.0], [3.0]])).sum().backward()\n"
                               "print(a.grad)\n",
    "base-in-another-layout": _A23 + "b = a.t().clone()\nv = b[1]\nb.mul_(2)\n"
                                     "print(v.grad_fn._saved_stride)\n"
                                     "(v * torch.tensor([1.0, 10.0])).sum().backward()\n"
                                     "print(a.grad)\n",
    "regenerated-once-per-change": _A3 + "b = a * 1\nv = b[0:2]\nb.mul_(2)\np = v * 1\n"
                                         "q = v * 1\nb.mul_(2)\nr = v * 1\n"
                                         "(p.sum() + q.sum() + r.sum()).backward()\n"
                                         "print(a.grad)\n",
    "several-in-place-ops": _T + "a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)\n"
                                 "b = a.exp()\nt = b.t()\nr = b.reshape(4)\nb.mul_(2)\nb.add_(1)\n"
                                 "s = t.sum() + r.sum()\nb.mul_(3)\nq = t * 1\n"
                                 "(s + q.sum()).backward()\nprint(a.grad)\n",
    "backward-from-a-view": _A3 + "b = a * 2\nv = b[0]\nb.mul_(5)\nv.backward()\n"
                                  "print(a.grad)\n",
    "is-leaf-reads-grad-fn": _A3 + "b = a * 1\nv = b[1:]\nb.mul_(2)\nprint(v.requires_grad)\n"
                                   "c = a * 5\nprint(v.is_leaf)\nd = a * 5\n"
                                   "(c.sum() + d.sum() + v.sum()).backward()\n",
    # in place through one view: the base gets CopySlices, the other views follow it
    "through-one-view-others-follow": _A23 + "b = a * 1\nv = b[0]\nw = b[:, 1]\nv.mul_(2)\n"
                                             "print(b.grad_fn, v.grad_fn, w.grad_fn)\n"
                                             "(w * w).sum().backward()\nprint(a.grad)\n",
    "stale-view-changed-in-place": _A23 + "b = a * 1\nv = b[0]\nb.add_(1)\nv.mul_(3)\n"
                                          "(b * 2).sum().backward()\nprint(a.grad)\n",
    "setitem-then-another-row": _T + "a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], "
                                     "requires_grad=True)\nb = a * 1\nrow = b[1]\nb[0] = 5.0\n"
                                     "(row * b[0]).sum().backward()\nprint(a.grad)\n",
    "base-starts-to-require-grad": _T + "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                                        "h = torch.zeros(2, 2)\nv = h[0]\nh[1] = x * 2\n"
                                        "print(v.requires_grad, v.is_leaf)\n"
                                        "(v.sum() + h.sum()).backward()\nprint(x.grad)\n",
    "no-grad-in-place-on-the-base": _A3 + "b = a * 1\nv = b[1:]\nwith torch.no_grad():\n"
                                          "    b.mul_(2)\ny = v * 3\ny.sum().backward()\n"
                                          "print(a.grad, y.grad_fn.next_functions)\n",
    "no-grad-in-place-on-a-leaf": _A3 + "v = a[1:]\nwith torch.no_grad():\n    a.mul_(2)\n"
                                        "print(v.grad_fn)\n(v * v).sum().backward()\n"
                                        "print(a.grad)\n",
    "second-order-through-as-strided": _A3 + "b = a * a\nv = b[0:2]\nb.mul_(2)\n"
                                             "g, = torch.autograd.grad(v.sum(), a, "
                                             "create_graph=True)\nprint(g)\n",
    # hooks: a retain_grad() moves to the new node, a tensor hook stays with the old one
    "tensor-hook-stays": _A3 + "b = a * 1\nv = b[0:2]\n"
                               "v.register_hook(lambda g: print('hook', g))\nb.mul_(2)\n"
                               "(v * 2).sum().backward()\nprint(a.grad)\n",
    "retain-grad-moves": _A3 + "b = a * 1\nv = b[0:2]\nv.retain_grad()\nb.mul_(2)\n"
                               "(v * 2).sum().backward()\nprint(a.grad, v.grad)\n",
    "mark-dirty-moves-retain-grad": _T + _DIRTY + "a = torch.tensor([1.0, 2.0, 3.0], "
                                                  "requires_grad=True)\nb = a * 1\n"
                                                  "b.retain_grad()\nc = D.apply(b)\n"
                                                  "(c * 3).sum().backward()\n"
                                                  "print(c is b, a.grad, b.grad)\n",
    # a view made under no_grad requires grad through its base, without an edge to it
    "no-grad-view-requires-grad": _T + "w = torch.tensor([[1.0, 2.0], [3.0, 4.0]], "
                                       "requires_grad=True)\nwith torch.no_grad():\n"
                                       "    print(w[0], w.view(4).requires_grad, w[0].is_leaf)\n"
                                       "    r = w[1]\nprint(r, r.requires_grad)\ny = r * 2\n"
                                       "print(y.requires_grad, y.grad_fn.next_functions)\n"
                                       "y.sum().backward()\nprint(w.grad)\n",
    # views that may not follow their base
    "no-grad-view-base-changed": _A3 + "b = a * 1\nwith torch.no_grad():\n    v = b[0]\n"
                                       "b.mul_(2)\ny = v * 2\n",
    "no-grad-view-changed-in-place": _A3 + "b = a * 1\nwith torch.no_grad():\n    v = b[0]\n"
                                           "v.mul_(2)\n",
    "view-of-a-no-grad-view": _A3 + "b = a * 1\nwith torch.no_grad():\n    v = b[0:2]\n"
                                    "u = v.view(2)\nb.mul_(2)\ny = u * 2\n",
    "inference-mode-view": _A3 + "b = a * 1\nwith torch.inference_mode():\n    v = b[0:2]\n"
                                 "b.mul_(2)\ny = v * 2\n",
    "unbind-output-base-changed": _A3 + "b = a * 1\np, q, r = b.unbind()\nb.mul_(2)\ny = p * 2\n",
    "unbind-output-changed-in-place": _A3 + "b = a * 1\np, q, r = b.unbind()\nq.add_(1)\n",
    "custom-function-returns-its-input": _T + _IDENTITY + "a = torch.tensor([1.0, 2.0, 3.0], "
                                                          "requires_grad=True)\nb = a * 1\n"
                                                          "o = F.apply(b)\n"
                                                          "print(o.grad_fn, o._base is b)\n"
                                                          "b.mul_(2)\ny = o * 2\n",
    "custom-function-returns-a-view": _T + _SLICE + "a = torch.tensor([1.0, 2.0, 3.0], "
                                                    "requires_grad=True)\nb = a * 1\n"
                                                    "o = G.apply(b)\nb.mul_(2)\ny = o * 2\n",
}

_HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its "
         "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
_MAX = 18446744073709551615


def _steps(*pairs: tuple[str, int]) -> list[dict[str, Any]]:
    return [{"name": name, "seq": seq, "leaf": None} for name, seq in pairs]


# Recorded from PyTorch 2.13 (tests/torch_recorder.py `record`).
RECORDED: dict[str, dict[str, Any]] = {
    "index-and-transpose": {
        "passes": [{"output": "v.sum() + w.sum()", "kind": "backward", "steps": [
            *_steps(("AddBackward0", 8), ("SumBackward0", 6), ("AsStridedBackward0", 7),
                    ("SumBackward0", 4), ("AsStridedBackward0", 5), ("MulBackward0", 3),
                    ("MulBackward0", 0)),
            {"name": "AccumulateGrad", "seq": _MAX, "leaf": "a"}]}],
        "grads": {"a": [[8.0, 8.0, 8.0], [4.0, 4.0, 4.0]]}, "error": None,
        "printed": ["tensor([[8., 8., 8.],\n        [4., 4., 4.]])"]},
    "saved-view-names-as-strided": {
        "passes": [{"output": "y.sum()", "kind": "backward",
                    "steps": _steps(("SumBackward0", 4), ("MulBackward0", 2))}],
        "grads": {"a": None},
        "error": {"type": "RuntimeError", "message": (
            "one of the variables needed for gradient computation has been modified by an "
            "inplace operation: [torch.FloatTensor [3]], which is output 0 of AsStrided, is "
            "at version 1; expected version 0 instead. " + _HINT)}},
    "grad-fn-printed": {
        "passes": [{"output": "y.sum()", "kind": "backward", "steps": [
            *_steps(("SumBackward0", 5), ("MulBackward0", 4), ("AsStridedBackward0", 3),
                    ("MulBackward0", 2), ("MulBackward0", 0)),
            {"name": "AccumulateGrad", "seq": _MAX, "leaf": "a"}]}],
        "grads": {"a": [0.0, 6.0, 6.0]}, "error": None,
        "printed": ["tensor([4., 6.], grad_fn=<AsStridedBackward0>)",
                    "AsStridedBackward0 ((<MulBackward0 object at 0x7f3e0cae1540>, 0),)",
                    "(2,) (1,) 1", "tensor([0., 6., 6.])"]},
    "unbind-output-base-changed": {
        "passes": [], "grads": {"a": None},
        "error": {"type": "RuntimeError", "message": (
            "Output 0 of Unbind is a view and its base or another view of its base has been "
            "modified inplace. This view is the output of a function that returns multiple "
            "views. Such functions do not allow the output views to be modified inplace. You "
            "should replace the inplace operation by an out-of-place one.")}},
    "mark-dirty-moves-retain-grad": {
        "passes": [{"output": "(c * 3).sum()", "kind": "backward", "steps": [
            *_steps(("SumBackward0", 3), ("MulBackward0", 2), ("DBackward", 1),
                    ("MulBackward0", 0)),
            {"name": "AccumulateGrad", "seq": _MAX, "leaf": "a"}]}],
        "grads": {"a": [6.0, 6.0, 6.0]}, "error": None,
        "printed": ["True tensor([6., 6., 6.]) tensor([3., 3., 3.])"]},
}


@pytest.mark.parametrize("name", list(RECORDED))
def test_matches_what_pytorch_recorded(name: str) -> None:
    source = CASES[name]
    diffs = differences(lab(source), RECORDED[name])
    assert not diffs, report(source, diffs)


@pytest.mark.torch
@pytest.mark.parametrize("name", list(CASES))
def test_matches_live_pytorch(torch: Any, name: str) -> None:
    from tests.torch_recorder import record

    source = CASES[name]
    diffs = differences(lab(source), record(source))
    assert not diffs, report(source, diffs)
