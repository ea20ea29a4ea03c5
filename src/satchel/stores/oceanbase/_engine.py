"""The embedded seekdb engine of a ``seekdb:///dir`` URL, and the keeper that lets it
outlive a killed satchel process long enough to roll that process's writes back.

pylibseekdb runs the engine as a child process (``seekdb --embedded``) that serves every
process attached to its directory and exits as soon as none is left. Attached from
satchel's process alone, a ``kill -9`` of that process stopped the engine in the middle
of a write. The engine logs a transaction's changes before its commit (once they pass
16 KB, and at every memtable freeze), so on restart it recovered the half-written
transaction: no session, no deadline (``ob_trx_timeout`` does not survive the log), its
row locks held across every later restart. The scope's next write then waited on the
lock of its write-version row until it timed out, for good.

So a second process, the keeper, attaches to the same engine while the store is open.
When satchel's process dies, the engine stays up: it sees that process's connections
close and rolls their transactions back, as a server does. The keeper reads EOF on its
stdin, waits for the transactions open at that moment to end, and only then detaches,
letting the engine shut down cleanly.

A new engine directory has a second hazard of the same kind: a few seconds after its
first start the engine loads its system packages in a background job (DDL in its own
transactions, about 3 s). An engine stopped in the middle of that job, even cleanly,
recovered one of those transactions with no session on its next start, holding a table
lock that every later ``CREATE TABLE`` waited on for good. So the keeper, closing either
way, first waits for that job to have succeeded once (:data:`PACKAGES_LOADED`). The
same was seen after an ``ALTER TABLE`` that repartitions a table (schema 7): its
statement returns before the engine's DDL tasks have all ended, so the keeper also
waits for the engine to run none (:data:`DDL_TASKS`) before it detaches.

The keeper runs this file as a script and imports only the standard library and
pylibseekdb; it runs in a session of its own, so a terminal's Ctrl-C or hangup never
reaches it.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Final

#: Longest wait for an engine that is shutting down to exit, before starting anew.
ENGINE_EXIT: Final = 60.0
#: Longest wait for the keeper to attach to a started engine.
KEEPER_START: Final = 60.0
#: Longest wait, before the keeper detaches, for a new engine's load of its system
#: packages to succeed; and how long it waits for that job to appear at all (an engine
#: that has none, or ran it long before, says so within seconds).
PACKAGE_LOAD_WAIT: Final = 60.0
PACKAGE_JOB_APPEARS: Final = 20.0
#: Longest wait for the keeper to exit once the store closes (it detaches as soon as the
#: engine's system packages are loaded: at once, but on a new directory).
KEEPER_EXIT: Final = PACKAGE_LOAD_WAIT + 30.0
#: Longest wait, after satchel's process died, for its transactions to be rolled back.
ROLLBACK_WAIT: Final = 60.0
#: What the store writes to the keeper when it closes normally: detach now.
CLOSING: Final = b"close\n"
#: The engine's own logging, set by the keeper on every start (the engine keeps it):
#: errors only, no performance events or trace logs, and one old log file kept. At its
#: defaults the engine wrote 450 MB of log in 18 minutes of a bulk load (a log file
#: grows to 256 MB, and two old ones were kept), and its bookkeeping took much of its
#: CPU; a new small store's folder was 196 MB, 36 MB of it log. The trade-off: an
#: engine fault is diagnosed from its errors alone (set ``syslog_level`` back to
#: ``INFO`` with ``ALTER SYSTEM`` to see more).
QUIET: Final = (
    "ALTER SYSTEM SET syslog_level = 'ERROR'",
    "ALTER SYSTEM SET enable_perf_event = false",
    "ALTER SYSTEM SET enable_record_trace_log = false",
    "ALTER SYSTEM SET max_syslog_file_count = 1",
)
#: The engine's DDL tasks still running (a row each), and the longest wait for them.
DDL_TASKS: Final = "SELECT COUNT(*) FROM oceanbase.__all_ddl_task_status"
DDL_WAIT: Final = 120.0
#: Every transaction the engine holds open, in any session.
OPEN_TRANSACTIONS: Final = "SELECT TX_ID FROM oceanbase.V$OB_TRANSACTION_WRITE_STATE"
#: The state of the engine's one-time job loading its system packages (no row before the
#: job first runs, a few seconds after a new directory's first start).
PACKAGES_LOADED: Final = (
    "SELECT JOB_STATUS FROM oceanbase.DBA_OB_ROOTSERVICE_JOBS"
    " WHERE JOB_TYPE = 'LOAD_MYSQL_SYS_PACKAGE' ORDER BY JOB_ID DESC LIMIT 1"
)


class EmbeddedEngine:
    """An engine attached from this process and from its keeper; :meth:`close`
    detaches both, which stops the engine unless another process is attached."""

    def __init__(self, instance: Any, keeper: subprocess.Popen[bytes]) -> None:
        self._instance = instance
        self._keeper = keeper
        self.socket: str = instance.connection_options()["unix_socket"]

    @classmethod
    def start(cls, directory: str) -> EmbeddedEngine:
        """Start (or attach to) the engine on ``directory`` and its keeper; blocking.

        Raises:
            RuntimeError: the keeper did not attach (with its reason).
        """
        instance = _attach(directory)
        try:
            keeper = subprocess.Popen(
                # -P: the script's folder is not put on sys.path (its modules are private)
                [sys.executable, "-P", __file__, directory],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            try:
                _await_ready(keeper)
            except BaseException:
                keeper.kill()
                _stop(keeper)
                raise
        except BaseException:
            instance.close()
            raise
        return cls(instance, keeper)

    def close(self) -> None:
        """Detach the keeper (it leaves at once), then this process."""
        try:
            if self._keeper.stdin is not None:
                with contextlib.suppress(OSError):  # the keeper is gone already
                    self._keeper.stdin.write(CLOSING)
                with contextlib.suppress(OSError):
                    self._keeper.stdin.close()
            _stop(self._keeper)
        finally:
            self._instance.close()


def _attach(directory: str) -> Any:
    """``pylibseekdb.open``: start the engine, or attach to the one running there. An
    engine that is shutting down (its last process just left) refuses; wait for it to
    exit, then start a new one."""
    import pylibseekdb

    deadline = time.monotonic() + ENGINE_EXIT
    while True:
        try:
            return pylibseekdb.open(directory)
        except Exception:
            if time.monotonic() > deadline or not _engine_running(directory):
                raise
            time.sleep(0.5)


def _engine_running(directory: str) -> bool:
    """Whether the process ``run/seekdb.pid`` names is alive."""
    try:
        pid = int(Path(directory, "run", "seekdb.pid").read_text().strip())
        os.kill(pid, 0)
    except PermissionError:
        return True  # alive, another user's
    except (OSError, ValueError):
        return False
    return True


def _await_ready(keeper: subprocess.Popen[bytes]) -> None:
    assert keeper.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(keeper.stdout, selectors.EVENT_READ)
        if not selector.select(KEEPER_START):
            raise RuntimeError(f"its keeper process did not attach in {KEEPER_START:.0f} s")
    line = keeper.stdout.readline().decode(errors="replace").strip()
    if line != "ready":
        raise RuntimeError(f"its keeper process failed: {line or 'no reason given'}")


def _stop(keeper: subprocess.Popen[bytes]) -> None:
    try:
        keeper.wait(KEEPER_EXIT)
    except subprocess.TimeoutExpired:
        keeper.kill()
        keeper.wait()
    if keeper.stdout is not None:
        keeper.stdout.close()


# -- the keeper process -----------------------------------------------------------------


def keep(directory: str) -> int:
    """The keeper: attach, say ``ready``, wait for the store to close or its process to
    die, then detach (after the dead process's transactions are rolled back, and once
    the engine's system packages are loaded)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        instance = _attach(directory)
    except Exception as exc:
        _say(f"{type(exc).__name__}: {exc}")
        return 1
    attached = time.monotonic()
    _say("ready")
    try:
        _quiet(instance)
        if sys.stdin.buffer.read() != CLOSING:  # EOF alone: satchel's process died
            _await_rollbacks(instance)
        _await_packages(instance, attached)
        _await_ddl(instance)
    finally:
        instance.close()
    return 0


def _say(line: str) -> None:
    """One line to the store's process (the keeper's only output)."""
    sys.stdout.write(line.replace("\n", " ") + "\n")
    sys.stdout.flush()


def _quiet(instance: Any) -> None:
    """Set the engine's logging (:data:`QUIET`); an engine that refuses a setting runs
    with its own."""
    conn = instance.connect(autocommit=True)
    try:
        cursor = conn.cursor()
        for statement in QUIET:
            with contextlib.suppress(Exception):
                cursor.execute(statement)
    finally:
        conn.close()


def _await_rollbacks(instance: Any) -> None:
    """Wait until every transaction open now has ended: the dead process's sessions are
    closed and the engine rolls their transactions back (a fraction of a second)."""
    conn = instance.connect(autocommit=True)
    try:
        cursor = conn.cursor()
        deadline = time.monotonic() + ROLLBACK_WAIT
        waiting = _open_transactions(cursor)
        while waiting and time.monotonic() < deadline:
            time.sleep(0.1)
            waiting &= _open_transactions(cursor)
    finally:
        conn.close()


def _await_packages(instance: Any, attached: float) -> None:
    """Wait until the engine's job loading its system packages has succeeded, so that
    detaching (the last process, perhaps) never stops the engine inside it; at most
    :data:`PACKAGE_LOAD_WAIT`, and no longer than :data:`PACKAGE_JOB_APPEARS` after
    ``attached`` while no such job exists. An engine without the view is not waited for."""
    conn = instance.connect(autocommit=True)
    try:
        cursor = conn.cursor()
        deadline = time.monotonic() + PACKAGE_LOAD_WAIT
        while time.monotonic() < deadline:
            try:
                cursor.execute(PACKAGES_LOADED)
                job = cursor.fetchone()
            except Exception:  # no such view in this engine: nothing to wait for
                return
            if job is not None and job[0] == "SUCCESS":
                return
            if job is None and time.monotonic() - attached > PACKAGE_JOB_APPEARS:
                return
            time.sleep(0.1)
    finally:
        conn.close()


def _await_ddl(instance: Any) -> None:
    """Wait until the engine runs no DDL task (a repartitioning's, say), at most
    :data:`DDL_WAIT`; an engine without the table is not waited for."""
    conn = instance.connect(autocommit=True)
    try:
        cursor = conn.cursor()
        deadline = time.monotonic() + DDL_WAIT
        while time.monotonic() < deadline:
            try:
                cursor.execute(DDL_TASKS)
                (running,) = cursor.fetchone()
            except Exception:  # no such table in this engine: nothing to wait for
                return
            if not running:
                return
            time.sleep(0.1)
    finally:
        conn.close()


def _open_transactions(cursor: Any) -> set[int]:
    cursor.execute(OPEN_TRANSACTIONS)
    return {int(tx) for (tx,) in cursor.fetchall()}


if __name__ == "__main__":
    raise SystemExit(keep(sys.argv[1]))
