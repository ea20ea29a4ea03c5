"""``satchel serve --workers N``: the service in N processes over one store and one
listening socket.

The first process (the one the user started) opens the socket, then starts N-1 more
``satchel serve`` processes with the same arguments, each handed the socket
(``--listen-fd``), and serves beside them: the kernel gives each new connection to one
of the processes waiting on the socket. A worker opens the store and the runtime as
the first process does, says ``ready`` on its stdout (a pipe to the first process) and
serves until SIGINT or SIGTERM, or until its stdin reaches its end: the first process
holds the other end, so a worker never outlives it, even after a ``kill -9``. The first
process, stopping, closes those pipes and waits for its workers to finish their open
requests (at most :data:`WORKER_EXIT`).

The processes share the store as replicas do (docs/service.md, "Replicas"): every
worker sees the others' writes on its next call, and sessions must live in the store
(``--shared-sessions``), since a session's turns may land on any worker.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING, Final

import anyio.to_thread

from ._commands import CommandError

if TYPE_CHECKING:
    import socket
    from collections.abc import Sequence

#: Longest wait for a worker to open the store and say it is ready.
WORKER_START: Final = 60.0
#: Longest wait for a worker to finish once asked to stop (its open requests included).
WORKER_EXIT: Final = 30.0
#: What a worker says on its stdout once it serves.
READY: Final = "ready"


class Workers:
    """The worker processes the first ``satchel serve`` process started."""

    def __init__(self, processes: Sequence[subprocess.Popen[bytes]]) -> None:
        self._processes = list(processes)

    def __len__(self) -> int:
        return len(self._processes)

    @classmethod
    def start(cls, sock: socket.socket, count: int, argv: Sequence[str]) -> Workers:
        """Start ``count`` workers serving ``sock`` with the command line ``argv`` (the
        first process's, ``serve`` first) and wait until each is ready; blocking.

        Raises:
            CommandError: a worker exited or did not say it was ready in time (its own
                error is on stderr, which it shares); the others are stopped first.
        """
        fd = sock.fileno()
        command = [sys.executable, "-m", "satchel", *argv, "--listen-fd", str(fd)]
        started: list[subprocess.Popen[bytes]] = []
        try:
            started.extend(  # one at a time: those started are stopped if one fails
                subprocess.Popen(
                    command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(fd,)
                )
                for _ in range(count)
            )
            deadline = time.monotonic() + WORKER_START
            for number, process in enumerate(started, start=2):
                if not _says_ready(process, deadline):
                    code = process.poll()
                    how = "did not start" if code is None else f"exited with code {code}"
                    raise CommandError(
                        f"worker {number} of {count + 1} {how} (its error, if any, is above)"
                    )
        except BaseException:
            cls(started).stop()
            raise
        return cls(started)

    def stop(self) -> None:
        """Ask every worker to stop (its stdin closed), wait for each, and kill any that
        is still running after :data:`WORKER_EXIT`; blocking."""
        for process in self._processes:
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
        deadline = time.monotonic() + WORKER_EXIT
        for process in self._processes:
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()

    async def astop(self) -> None:
        """:meth:`stop` in a worker thread, so the event loop is not held."""
        await anyio.to_thread.run_sync(self.stop)


def _says_ready(process: subprocess.Popen[bytes], deadline: float) -> bool:
    """Whether ``process`` says :data:`READY` on its stdout before ``deadline``."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(max(0.0, deadline - time.monotonic())):
            return False
    return process.stdout.readline().decode(errors="replace").strip() == READY


def say_ready() -> None:
    """A worker's word to the first process that it serves."""
    sys.stdout.write(READY + "\n")
    sys.stdout.flush()


def stop_with_first_process() -> None:
    """Send this worker SIGTERM (its way to stop gracefully) once its stdin reaches its
    end: the first process closed it, stopping, or died. Watched by a daemon thread,
    which never keeps the worker from exiting."""

    def watch() -> None:
        sys.stdin.buffer.read()
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="satchel-first-process", daemon=True).start()
