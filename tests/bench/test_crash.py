"""The helpers of ``bench/crash.py`` that need no engine: the workload, the kill, the
progress line and the report."""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import TYPE_CHECKING

from bench import crash

if TYPE_CHECKING:
    from pathlib import Path


def test_the_workload_keys_every_entry_by_its_id(tmp_path: Path) -> None:
    """One line per text, ids ``e0``... (the ingest's idempotency keys), one scope."""
    folder = crash.write_workload(tmp_path / "w", "s", ["a b c", "d e f"])
    lines = [json.loads(line) for line in (folder / "entries.jsonl").read_text().splitlines()]
    assert lines == [
        {"id": "e0", "scope": "s", "text": "a b c"},
        {"id": "e1", "scope": "s", "text": "d e f"},
    ]
    assert (folder / "queries.jsonl").read_text() == ""


def test_the_last_progress_line_is_read_through_carriage_returns() -> None:
    """A progress bar's updates end in ``\\r`` or ``\\n``: the last non-blank one wins."""
    assert crash.last_line("ingesting: 10%\ringesting: 20%\r\n  \n") == "ingesting: 20%"
    assert crash.last_line("") == ""


def test_a_run_is_killed_only_if_it_outlives_its_delay() -> None:
    """A run still going at its kill point is killed (its last stderr line returned); one
    that ended before is not (None)."""
    slow = [sys.executable, "-c", "import sys, time; print('started', file=sys.stderr,"
            " flush=True); time.sleep(60)"]  # fmt: skip
    assert crash.killed_run(slow, 1.0) == "started"
    assert crash.killed_run([sys.executable, "-c", "pass"], 30.0) is None


def test_the_report_counts_kills_resumes_and_failures() -> None:
    """The summary line, then one table row per kill with the state at the end."""
    cycle = crash.Cycle("crash-0", 9.5, "ingesting:  50% (1,500/3,000)", 0, 12.0, 3000)
    result = {
        "kills": 1, "resumed": 1, "failed": 0, "unwritable_at_end": 0, "entries": 3000,
        "batch_size": 100, "seed": 7, "uninterrupted_s": 20.0,
        "final": {"crash-0": {"held": 3000, "write": ""}},
        "cycles": [dataclasses.asdict(cycle)],
    }  # fmt: skip
    lines = crash.report(result).splitlines()
    assert lines[0].startswith("kills: 1, resumed: 1, failed: 0, unwritable at the end: 0")
    assert lines[-1] == (
        "| crash-0 | 9.5 | ingesting:  50% (1,500/3,000) | 0 | 12.0 | 3,000 | 3,000, ok |"
    )
