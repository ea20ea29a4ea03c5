"""Drive the ``satchel`` command line, in-process or as the real command in a process of
its own, and write workload folders for it."""

from __future__ import annotations

import json
import subprocess
import sys
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


def satchel(
    *argv: str, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m satchel ARGV`` as a user runs the command (stdin, when given, is
    its input; else it reads an empty one); its exit code, stdout and stderr."""
    return subprocess.run(
        [sys.executable, "-m", "satchel", *argv],
        input=stdin or "",
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def satchels(*commands: Sequence[str]) -> list[subprocess.CompletedProcess[str]]:
    """Run several ``satchel`` commands side by side (each in its own process, as
    :func:`satchel` does); their results, in order."""
    started = [
        subprocess.Popen(
            [sys.executable, "-m", "satchel", *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for argv in commands
    ]
    done = []
    for argv, process in zip(commands, started, strict=True):
        out, err = process.communicate(timeout=300)
        done.append(subprocess.CompletedProcess(argv, process.returncode, out, err))
    return done


def write_workload(folder: Path, entries: Sequence[object]) -> Path:
    """Write ``entries`` as ``folder/entries.jsonl``, one JSON object a line."""
    folder.mkdir()
    lines = (json.dumps(entry) for entry in entries)
    (folder / "entries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder
