"""SIGINT and SIGTERM during `satchel ingest` stop it cleanly: the batch being written
commits and is mapped, the store closes, the command exits 130 and never crashes."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

LINES = 40_000


def big_workload(folder: Path) -> Path:
    folder.mkdir()
    with (folder / "entries.jsonl").open("w", encoding="utf-8") as out:
        for n in range(LINES):
            line = {
                "id": f"e{n}",
                "scope": f"s{n % 7}",
                "text": f"kestrel note {n} on the dispatcher",
            }
            out.write(json.dumps(line) + "\n")
    return folder


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_signal_stops_ingest_between_batches(tmp_path: Path, number: int, backend: str) -> None:
    """Signalled mid-ingest, the command exits 130 without a crash; every record the
    database holds is in the id map, and the database passes its integrity check."""
    workload = big_workload(tmp_path / "w")
    db = tmp_path / "g.db"
    id_map = tmp_path / "g.db.ids.jsonl"
    command = [
        sys.executable, "-m", "satchel", "ingest", str(workload), "--db", str(db),
        "--embedder", "hashing", "--batch-size", "100", "--backend", backend,
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    # wait until a batch has been written (a condition, not a guess at timing)
    while not (id_map.exists() and id_map.stat().st_size) and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.02)
    process.send_signal(number)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err.decode()
    assert b"interrupted after" in err
    assert b"Traceback" not in err
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = {key for (key,) in conn.execute("SELECT caller_key FROM records")}
    mapped = {json.loads(line)["id"] for line in id_map.read_text().splitlines()}
    assert stored == mapped
    assert 0 < len(stored) < LINES
