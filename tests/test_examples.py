"""The examples the README points to run as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parent.parent / "examples"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_quickstart_runs(backend: str) -> None:
    """The quickstart writes every family, prepares a pack and cites the exact version."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py"), backend],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    assert done.stdout.startswith("ready ")
    assert "cited: Backups run nightly at 02:00 UTC" in done.stdout


def test_gate_example_finds_the_paraphrased_evidence() -> None:
    """Gate off: nothing; gate on: the credentials fact, through one admission round."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "gate.py")],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    off, on = done.stdout.split("gate on -> ")
    assert off.startswith("gate off -> empty")
    assert on.startswith("ready")
    assert "signed ticket from Priya" in on
    assert '"expansion_actions": ["admission"]' in on
