"""``python -m bench client``: a tiny run measures every call on both sides and both
backends (comparing every pack the Client receives with the Runtime's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.mark.slow
def test_a_tiny_run_reports_every_call(tmp_path: Path) -> None:
    """Each call has p50/p95 for the Runtime and the Client, on asyncio and trio."""
    out = tmp_path / "client.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "client", "--size", "300", "--items", "5",
         "--repeat", "3", "--out", str(out), "--work", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    calls = {"prepare", "get", "add (keyed)", "store get", "store search"}
    for backend in ("asyncio", "trio"):
        assert set(results["backends"][backend]) == calls
        for sides in results["backends"][backend].values():
            assert set(sides) == {"runtime", "client"}
            assert all(side["p50_ms"] > 0 for side in sides.values())
    assert "| trio | store search |" in done.stdout
