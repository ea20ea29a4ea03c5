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

While it serves, the first process watches its workers (:meth:`Workers.watch`, a
thread per worker waiting for its end): a worker that dies is replaced by a new one
on the same socket, at most :data:`RESTARTS` times in :data:`RESTART_WINDOW` seconds
(a worker that keeps dying, say on a broken store, is not restarted in a loop: it is
reported on stderr and the others serve on).

The processes share the store as replicas do (docs/service.md, "Replicas"): every
worker sees the others' writes on its next call, and sessions must live in the store
(``--shared-sessions``), since a session's turns may land on any worker.
"""

from __future__ import annotations

import collections
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

from ._running import CommandError

if TYPE_CHECKING:
    import socket
    from collections.abc import Sequence

#: Longest wait for a worker to open the store and say it is ready.
WORKER_START: Final = 60.0
#: Longest wait for a worker to finish once asked to stop (its open requests included).
WORKER_EXIT: Final = 30.0
#: What a worker says on its stdout once it serves.
READY: Final = "ready"
#: Most replacements of dead workers in :data:`RESTART_WINDOW` seconds.
RESTARTS: Final = 5
RESTART_WINDOW: Final = 60.0


class Workers:
    """The worker processes the first ``satchel serve`` process started, and the command
    line that starts another."""

    def __init__(
        self, processes: Sequence[subprocess.Popen[bytes]], command: Sequence[str] = ()
    ) -> None:
        self._processes = list(processes)
        self._command = list(command)
        self._stopping = False
        self._restarted: collections.deque[float] = collections.deque()
        self._lock = threading.Lock()  # the watching threads' and stop's

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
        command = [sys.executable, "-m", "satchel", *argv, "--listen-fd", str(sock.fileno())]
        started: list[subprocess.Popen[bytes]] = []
        try:
            started.extend(_spawn(command) for _ in range(count))  # those started stop if one fails
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
        return cls(started, command)

    def watch(self) -> None:
        """Replace each worker that dies, until :meth:`stop` (see the module): a daemon
        thread per worker, so the event loop never waits on a process."""
        for slot in range(len(self._processes)):
            name = f"satchel-worker-{slot + 2}"
            threading.Thread(target=self.keep, args=(slot,), name=name, daemon=True).start()

    def keep(self, slot: int) -> None:
        """Wait for the worker in ``slot`` to end and start another in its place, within
        the bound on restarts; blocking, until stopped or the bound is reached."""
        number = slot + 2  # the first process is number 1
        while True:
            process = self._processes[slot]
            code = process.wait()
            with self._lock:
                if self._stopping:
                    return
                _release(process)
                now = time.monotonic()
                while self._restarted and now - self._restarted[0] > RESTART_WINDOW:
                    self._restarted.popleft()
                if len(self._restarted) >= RESTARTS:
                    _say(
                        f"worker {number} exited with code {code}; not replaced ({RESTARTS}"
                        f" workers replaced in the last {RESTART_WINDOW:.0f} s already)"
                    )
                    return
                self._restarted.append(now)
                _say(f"worker {number} exited with code {code}; starting another in its place")
                replacement = self._processes[slot] = _spawn(self._command)
            if _says_ready(replacement, time.monotonic() + WORKER_START):
                _say(f"worker {number} replaced")
            else:
                replacement.kill()  # counted: the next turn of the loop meets its end

    def stop(self) -> None:
        """Ask every worker to stop (its stdin closed), wait for each, and kill any that
        is still running after :data:`WORKER_EXIT`; blocking."""
        with self._lock:  # no watching thread starts a worker after this
            self._stopping = True
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
            _release(process)

    async def astop(self) -> None:
        """:meth:`stop` in a worker thread, so the event loop is not held."""
        await anyio.to_thread.run_sync(self.stop)


def _spawn(command: Sequence[str]) -> subprocess.Popen[bytes]:
    """Start one worker with ``command`` (its last argument the socket's descriptor)."""
    fd = int(command[-1])
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(fd,))


def _release(process: subprocess.Popen[bytes]) -> None:
    """Close the pipes to a worker that ended."""
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


def _say(message: str) -> None:
    print(f"satchel serve: {message}", file=sys.stderr, flush=True)


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
