"""``satchel serve`` in a subprocess for ``bench service``, and what the machine spent.

:func:`running_server` starts ``python -m satchel serve`` on a free loopback port, reads
where it listens from its start line, waits for ``/healthz`` and stops it with SIGTERM.
The CPU and listen-queue counters read Linux's ``/proc``: the server's CPU, the whole
machine's (what other processes used is the rest), and the kernel's listen-queue
overflows (connects beyond a server's accept backlog, which a client sees as resets).
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import httpx

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

STARTUP_SECONDS: Final = 60.0
STOP_SECONDS: Final = 30.0


@dataclass
class Server:
    """A running ``satchel serve`` subprocess and where it listens."""

    process: subprocess.Popen[bytes]
    url: str
    log: Path


@contextmanager
def running_server(
    db: Path,
    backend: str,
    log: Path,
    *,
    options: Sequence[str] = (),
    file_bytes: int | None = None,
) -> Iterator[Server]:
    """``satchel serve`` on a free loopback port, answering /healthz; stopped with SIGTERM
    (the caller reads its exit code from ``server.process.returncode``).

    Args:
        options: more ``satchel serve`` options (``--token-file``, ``--read-timeout``).
        file_bytes: the largest file the server may write (Linux ``RLIMIT_FSIZE``): a
            write past it fails as on a full disk. Python ignores ``SIGXFSZ``, so the
            server lives on.
    """
    command = [sys.executable, "-m", "satchel", "serve", "--create", "--db", str(db), "--port", "0"]
    with log.open("wb") as sink:
        process = subprocess.Popen([*command, "--backend", backend, *options], stderr=sink)
    try:
        if file_bytes is not None:
            resource.prlimit(process.pid, resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
        server = Server(process, _start_url(process, log), log)
        _wait_until_healthy(server)
        yield server
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=STOP_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _start_url(process: subprocess.Popen[bytes], log: Path) -> str:
    """The URL of the start line (``satchel serve: serving DB at URL (AUTH)``). The log is
    a file, not a pipe, so a server that logs a lot can never block on it."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("satchel serve: serving"):
                return line.split(" at ")[-1].split(" ")[0]
        if process.poll() is not None:
            raise RuntimeError(f"satchel serve exited {process.returncode}: {log.read_text()}")
        time.sleep(0.05)
    raise RuntimeError(f"no start line from satchel serve in {STARTUP_SECONDS} s")


def _wait_until_healthy(server: Server) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    with httpx.Client(base_url=server.url, timeout=STARTUP_SECONDS) as client:
        while time.monotonic() < deadline:
            try:
                if client.get("/healthz").status_code == 200:
                    return
            except httpx.TransportError:
                pass  # not listening yet
            time.sleep(0.05)
    raise RuntimeError(f"satchel serve never answered /healthz: {server.log.read_text()}")


def process_cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of process ``pid``, all its threads (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid: int) -> float:
    """:func:`process_cpu_seconds` of ``pid`` and of the processes it started that still
    run (``satchel serve --workers``), from any of its threads (Linux)."""
    total = process_cpu_seconds(pid)
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            total += process_cpu_seconds(int(child))
    return total


def machine_cpu_seconds() -> float:
    """CPU seconds every process on this machine has used (Linux ``/proc/stat``): what
    the others used is this less the server's and the client's."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def listen_overflows() -> int:
    """Connections the kernel refused because a listen queue was full, on the whole
    machine since boot (Linux ``TcpExt: ListenOverflows``; 0 elsewhere). During the load
    they are the server's: a burst of connects beyond its accept backlog."""
    try:
        lines = Path("/proc/net/netstat").read_text().splitlines()
    except OSError:
        return 0
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith("TcpExt:"):
            return int(dict(zip(names.split(), values.split(), strict=True))["ListenOverflows"])
    return 0


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
