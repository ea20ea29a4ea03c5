"""Drive the ``satchel`` command line in-process and write workload folders for it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from satchel.cli import main

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    import pytest


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the CLI; return its exit code, stdout and stderr."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_workload(folder: Path, entries: Sequence[object]) -> Path:
    """Write ``entries`` as ``folder/entries.jsonl``, one JSON object a line."""
    folder.mkdir()
    lines = (json.dumps(entry) for entry in entries)
    (folder / "entries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder
