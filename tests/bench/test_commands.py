"""``python -m bench COMMAND``: every command names a module with a ``main``, and a
command imports only its own module, so one benchmark needs only its own extras."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from bench import __main__ as bench_main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(bench_main.COMMANDS))
def test_every_command_names_a_module_with_a_main(name: str) -> None:
    module, _ = bench_main.COMMANDS[name]
    assert callable(importlib.import_module(f"bench.{module}").main)


def test_a_command_imports_only_its_own_benchmark() -> None:
    """`locomo --help` loads neither the LangGraph client benchmark nor the others."""
    probe = (
        "import sys\n"
        "from bench import __main__ as m\n"
        "sys.argv = ['bench', 'locomo', '--help']\n"
        "try:\n    m.main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(n for n in sys.modules if n.startswith('bench.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = done.stdout.strip().splitlines()[-1]
    assert "'bench.locomo'" in loaded
    assert "'bench.client'" not in loaded
    assert "'bench.service'" not in loaded


def test_an_unknown_command_prints_the_list_and_fails(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["bench", "nosuch"])
    with pytest.raises(SystemExit) as exited:
        bench_main.main()
    assert exited.value.code == 2
    assert "locomo" in capsys.readouterr().out
