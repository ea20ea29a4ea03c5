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


def _run(*steps: tuple[str, float]) -> list[str]:
    """A process that says each line on stderr, then sleeps its seconds."""
    said = "".join(
        f"sys.stderr.write({line!r}); sys.stderr.flush(); time.sleep({sleep}); "
        for line, sleep in steps
    )
    return [sys.executable, "-c", f"import sys, time; {said}"]


ZERO, TENTH = "ingesting:   0% (0/3,000)\r", "ingesting:  12% (360/3,000)\r"


def test_a_run_is_killed_within_the_tenth_after_the_one_drawn() -> None:
    """The kill waits for a report at or past the drawn tenth, then a share of the time
    since the report before; a run still going then is killed (when, and its last
    progress line), one that ended first is not, nor one that never reached the tenth."""
    killed = crash.killed_run(_run((ZERO, 0.2), (TENTH, 60)), 1, 0.5)
    assert killed is not None
    assert killed[1] == "ingesting:  12% (360/3,000)"
    assert crash.killed_run(_run((ZERO, 0.5), (TENTH, 0)), 1, 0.99) is None
    assert crash.killed_run(_run((ZERO, 0), (TENTH, 0)), 2, 0.5) is None


def test_the_report_counts_kills_resumes_and_failures() -> None:
    """The summary line, then one table row per kill with the state at the end."""
    cycle = crash.Cycle(
        "crash-0", "50% + 0.25", 9.5, "ingesting:  50% (1,500/3,000)", 0, 12.0, 3000
    )
    result = {
        "kills": 1, "resumed": 1, "failed": 0, "unwritable_at_end": 0, "entries": 3000,
        "batch_size": 100, "embedder": "static", "seed": 7,
        "final": {"crash-0": {"held": 3000, "write": ""}},
        "cycles": [dataclasses.asdict(cycle)],
    }  # fmt: skip
    lines = crash.report(result).splitlines()
    assert lines[0].startswith("kills: 1, resumed: 1, failed: 0, unwritable at the end: 0")
    assert lines[-1] == (
        "| crash-0 | 50% + 0.25 | 9.5 | ingesting:  50% (1,500/3,000) | 0 | 12.0 |"
        " 3,000 | 3,000, ok |"
    )
