"""``--store URL``: the CLI on any store, with credentials never printed."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path


def _satchel(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "satchel", *args], capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_ingest_then_prepare_on_an_oceanbase_store(tmp_path: Path, seekdb: str) -> None:
    """ingest and prepare through --store reach the same OceanBase database; the URL's
    password appears in no output."""
    workload = tmp_path / "w"
    workload.mkdir()
    lines = [
        {"id": "m1", "scope": "ops", "family": "memory", "text": "the staging cluster freezes"},
        {"id": "m2", "scope": "ops", "family": "memory", "text": "lunch is at noon"},
    ]
    (workload / "entries.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    database = f"cli_{uuid.uuid4().hex[:8]}"
    url = f"oceanbase://root:hunter2@localhost/{database}?unix_socket={seekdb}"
    # root has no password on the test engine: the password is refused, and not shown.
    refused = _satchel("ingest", str(workload), "--store", url, "--embedder", "hashing")
    assert refused.returncode != 0
    assert "hunter2" not in refused.stdout + refused.stderr
    url = url.replace("root:hunter2@", "root@")
    ingested = _satchel("ingest", str(workload), "--store", url, "--embedder", "hashing")
    assert ingested.returncode == 0, ingested.stderr
    assert "ingested 2 entries" in ingested.stdout
    prepared = _satchel(
        "prepare", "--store", url, "--scope", "ops", "--embedder", "hashing", "staging cluster"
    )
    assert prepared.returncode == 0, prepared.stderr
    assert "the staging cluster freezes" in prepared.stdout
    assert "lunch" not in prepared.stdout


def test_db_and_store_are_exclusive(tmp_path: Path) -> None:
    """One of --db and --store, never both."""
    both = _satchel(
        "prepare", "--db", str(tmp_path / "a.db"), "--store", "memory://", "--scope", "s", "q"
    )
    assert both.returncode == 2
    assert "not allowed with argument" in both.stderr
