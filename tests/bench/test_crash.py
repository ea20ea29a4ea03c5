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


def _run(*said: str, sleep: float = 0) -> list[str]:
    """A process that says ``said`` on stderr, then sleeps ``sleep`` seconds."""
    lines = "".join(f"sys.stderr.write({line!r}); sys.stderr.flush(); " for line in said)
    return [sys.executable, "-c", f"import sys, time; {lines}time.sleep({sleep})"]


def test_a_run_is_killed_once_writing_if_it_outlives_its_delay() -> None:
    """The kill's delay counts from the first report of entries written; a run still
    going then is killed (its last progress line returned), one that ended is not, and
    one that ends without writing is not either (None)."""
    writing = ("ingesting:   0% (0/3,000)\r", "ingesting:  10% (300/3,000)\r")
    assert crash.killed_run(_run(*writing, sleep=60), 0.5) == "ingesting:  10% (300/3,000)"
    assert crash.killed_run(_run(*writing), 30.0) is None
    assert crash.killed_run(_run("ingesting:   0% (0/3,000)\n"), 30.0) is None


def test_the_report_counts_kills_resumes_and_failures() -> None:
    """The summary line, then one table row per kill with the state at the end."""
    cycle = crash.Cycle("crash-0", 9.5, "ingesting:  50% (1,500/3,000)", 0, 12.0, 3000)
    result = {
        "kills": 1, "resumed": 1, "failed": 0, "unwritable_at_end": 0, "entries": 3000,
        "batch_size": 100, "embedder": "static", "seed": 7, "uninterrupted_writing_s": 20.0,
        "final": {"crash-0": {"held": 3000, "write": ""}},
        "cycles": [dataclasses.asdict(cycle)],
    }  # fmt: skip
    lines = crash.report(result).splitlines()
    assert lines[0].startswith("kills: 1, resumed: 1, failed: 0, unwritable at the end: 0")
    assert lines[-1] == (
        "| crash-0 | 9.5 | ingesting:  50% (1,500/3,000) | 0 | 12.0 | 3,000 | 3,000, ok |"
    )
