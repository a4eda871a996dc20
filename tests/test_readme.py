"""The docs' examples produce what they say: README.md and ../shared/CONTRACT.md."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.cli import main as cli_main
from app.limits import Limits
from app.trace import run_source
from app.web.settings import Settings
from tests.matching import ROOT, differences

README = (ROOT / "README.md").read_text(encoding="utf-8")
CONTRACT = ROOT.parent / "shared" / "CONTRACT.md"
WORKED_EXAMPLE = ROOT / "examples" / "worked_example.py"


def fenced_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = ROOT / ".venv" / "bin" / "autograd-lab"
    if not command.exists():
        command = Path(sys.executable).parent / "autograd-lab"
    return subprocess.run([str(command), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=60, check=False)


def test_readme_console_block_is_what_the_cli_prints() -> None:
    (console,) = [b for b in fenced_blocks(README, "console")
                  if "autograd-lab trace --brief" in b]
    command, printed = console.strip().split("\n", 1)
    assert command == "$ autograd-lab trace --brief examples/worked_example.py"
    proc = cli("trace", "--brief", "examples/worked_example.py")
    assert proc.returncode == 0
    assert proc.stdout == printed.strip() + "\n"


def test_readme_shows_the_example_file() -> None:
    assert WORKED_EXAMPLE.read_text(encoding="utf-8") in fenced_blocks(README, "python")


def test_readme_limits_table_is_the_defaults() -> None:
    rows = re.findall(r"^\| `(\w+)` \| ([\d,.]+) \|", README, flags=re.M)
    documented = {name: float(value.replace(",", "")) for name, value in rows}
    defaults = Limits()
    assert documented == {name: getattr(defaults, name) for name in Limits.names()}


def test_every_server_setting_is_in_the_readme() -> None:
    """Each LAB_* setting but the limits (their table is checked above) is named in the
    README, with its default where the README gives one in parentheses."""
    missing = [f"LAB_{name.upper()}" for name in Settings.model_fields
               if name not in Limits.names() and f"LAB_{name.upper()}" not in README]
    assert not missing, missing
    defaults = Settings()
    for name in ("max_body_bytes", "rate_trace", "rate_rooms", "rate_polls", "rate_lookups"):
        shown = re.search(rf"`LAB_{name.upper()}`\s+\(([^):]+)", README)
        assert shown, name
        assert shown[1].replace(",", "") == str(getattr(defaults, name)), (name, shown[1])


def test_limits_are_settable_as_the_readme_says(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("LAB_MAX_NODES", "20000")
    assert Settings().limits().max_nodes == 20000
    program = ROOT / "examples" / "worked_example.py"
    assert cli_main(["trace", "--brief", "--limit", "max_nodes=2", str(program)]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["error"]["type"] == "UnsupportedError"
    assert "2 backward nodes" in document["error"]["message"]


def contract_example() -> tuple[str, dict[str, Any]]:
    if not CONTRACT.exists():
        pytest.skip(f"the shared contract is not at {CONTRACT}")
    text = CONTRACT.read_text(encoding="utf-8")
    (document,) = [json.loads(b) for b in fenced_blocks(text, "json") if '"passes"' in b]
    return text, document


def test_contract_example_document_is_the_labs() -> None:
    text, document = contract_example()
    assert "x = torch.tensor(2.0)" in README       # the contract's example is the worked one
    got = run_source(WORKED_EXAMPLE.read_text(encoding="utf-8")).model_dump(mode="json")
    assert not differences(got, document)
    brief = [{k: s[k] for k in ("name", "seq", "leaf")} for s in got["passes"][0]["steps"]]
    assert brief == document["passes"][0]["steps"]
    assert (got["grads"], got["error"]) == (document["grads"], document["error"])
    assert "18446744073709551615" in text
