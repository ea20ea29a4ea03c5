"""Reading a subprocess's announcement (the line a server prints once it listens),
whether a process still runs, and what a killed one left behind."""

from __future__ import annotations

import os
import re
import select
import shutil
import time
from pathlib import Path
from typing import IO, Final

#: How long a test waits for a subprocess to say where it listens.
STARTUP_SECONDS: Final = 60.0


def announced(
    stream: IO[bytes] | None, pattern: bytes, process: str, seconds: float = STARTUP_SECONDS
) -> re.Match[bytes]:
    """The first match of ``pattern`` (ending at a line's end) in what ``stream`` says,
    read as it arrives; fails after ``seconds`` or if the stream closes first."""
    assert stream is not None
    line = re.compile(pattern + rb"[^\n]*\n")
    deadline = time.monotonic() + seconds
    received = b""
    while (found := line.search(received)) is None:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"{process} said nothing like {pattern!r}: {received!r}"
        if select.select([stream], [], [], remaining)[0]:
            chunk = os.read(stream.fileno(), 4096)
            assert chunk, f"{process} exited: {received!r}"
            received += chunk
    return found


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, dead but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def remove_engine_links(pid: int) -> None:
    """Remove the folders pylibseekdb made for process ``pid``, once it is dead. Each
    process attached to a seekdb engine gets one (``/tmp/pylibseekdb-uds-PID-XXXXXX``,
    a link to the engine's socket), removed when it detaches; one killed with SIGKILL
    leaves it in the machine's temp dir for good."""
    for folder in Path("/tmp").glob(f"pylibseekdb-uds-{pid}-*"):
        shutil.rmtree(folder, ignore_errors=True)
