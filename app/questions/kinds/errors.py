"""PyTorch's messages as answer options, each obtained by running a small program through
the engine (the messages are never typed here): a choice between the error a program
really raises and the errors it could be mistaken for."""

from __future__ import annotations

from functools import cache

from app.questions import facts

NO_ERROR = "No error: it runs to the end"

# Programs that raise the errors a student might expect instead (reference §5).
RAISERS = {
    "freed": "import torch\na = torch.tensor(1.0, requires_grad=True)\ny = a * a\n"
             "y.backward()\ny.backward()\n",
    "scalar": "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * 2\n"
              "y.backward()\n",
    "no-grad": "import torch\nx = torch.tensor(1.0)\ny = x * 2\ny.backward()\n",
}


@cache
def message(name: str) -> str:
    """`RuntimeError: ...` as the engine raises it for RAISERS[name]."""
    error = facts.run(RAISERS[name])["error"]
    assert error is not None, name
    return f"{error['type']}: {error['message']}"


def of(document: facts.Doc) -> str:
    """What a program's run ended with: its error as `Type: message`, or NO_ERROR."""
    error = document["error"]
    return NO_ERROR if error is None else f"{error['type']}: {error['message']}"


def choices(actual: str) -> list[tuple[str, str]]:
    """(key, text) entries: the actual outcome and the usual suspects, each once."""
    texts = [actual, NO_ERROR, *(message(n) for n in RAISERS)]
    seen: list[str] = []
    for t in texts:
        if t not in seen:
            seen.append(t)
    return [(f"e{i}", t) for i, t in enumerate(seen)]
