"""SQLite connections driven from anyio worker threads, identically on asyncio and trio.

One writer connection serialised by a lock, and a small pool of reader connections for
concurrent searches (WAL lets readers run beside the writer). ``:memory:`` databases
have one connection for everything, since each connection would see its own database.

Reads in worker threads are CPU work (a large scope's full-text query, its vector
product, decoding evidence), and the host's event loop needs a core of its own to stay
responsive: so at most one reader thread fewer than the cores this process may use
runs at once (:func:`read_threads`). Measured on two cores with four prepares at a time
on a 100,000-record scope: with up to four reader threads the heartbeat's lag p99 was
4.9 ms, with one 1.4 ms.

Other processes' commits are noticed through SQLite's ``data_version``; only those that
moved the record commit count (``meta``'s :data:`RECORD_COMMITS`, which every write but a
session's moves) make the store reload its caches: a session turn another replica
records costs this one nothing.
"""

from __future__ import annotations

import os
import queue
import sqlite3
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

import anyio
import anyio.to_thread

from ...vocabulary._errors import StoreError
from ._schema import RECORD_COMMITS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

T = TypeVar("T")

MEMORY: str = ":memory:"
#: A record write moves the record commit count by one.
_COUNT_COMMIT: str = (
    f"INSERT INTO meta (key, value) VALUES ('{RECORD_COMMITS}', '1') ON CONFLICT (key)"
    " DO UPDATE SET value = CAST(value AS INTEGER) + 1"
)
#: Every connection's ``secure_delete``; an erase's transaction runs with ``ON``.
SECURE_DELETE: str = "FAST"


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def read_threads(readers: int) -> int:
    """How many reads may run in worker threads at once: ``readers``, but at most the
    usable cores less the one the event loop needs, and at least one."""
    return max(1, min(readers, usable_cores() - 1))


def _connect(database: str) -> sqlite3.Connection:
    conn = sqlite3.connect(database, check_same_thread=False, isolation_level=None)
    if database != MEMORY:
        conn.execute("PRAGMA journal_mode = WAL")
        # Durable when a write returns: FULL syncs the WAL on every commit.
        conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA busy_timeout = 5000")
    # What a write deletes or overwrites inside a page is zeroed, at no extra I/O: no
    # copy of a forgotten or replaced version lingers in a page's free space, which an
    # erase could not find later (it scrubs free pages itself: ``_erase``).
    conn.execute(f"PRAGMA secure_delete = {SECURE_DELETE}")
    return conn


def _identity(path: str) -> tuple[int, int] | None:
    """The device and inode a path names now, None when it names nothing."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


class Connections:
    """Runs blocking SQLite work in worker threads.

    Args:
        database: a file path or ``":memory:"``.
        readers: how many reader connections may search at once.
    """

    def __init__(self, database: str, *, readers: int = 4) -> None:
        self._database = database
        self._shared = database == MEMORY
        self._writer = _connect(database)
        self._write_lock = threading.Lock()
        self._idle: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._opened: list[sqlite3.Connection] = []
        self._open_lock = threading.Lock()
        #: Reads that may run in worker threads at once.
        self.read_threads = read_threads(readers)
        self._limiter = anyio.CapacityLimiter(self.read_threads)
        # The file this store opened: a write first checks the path still names it.
        self._file = None if self._shared else _identity(database)
        # The writer's view of commits by other connections (other processes): SQLite's
        # data_version changes only when another connection commits; of those, the ones
        # that changed records moved the count.
        self._data_version = self._version()
        self._commits = self._record_commits()

    async def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work(connection)`` on a reader connection in a worker thread."""
        return await anyio.to_thread.run_sync(self._read_sync, work, limiter=self._limiter)

    def read_inline(self, work: Callable[[sqlite3.Connection], T]) -> tuple[bool, T | None]:
        """Run ``work`` on the calling thread if a connection is free right now.

        Returns ``(False, None)`` instead of blocking when the only connection (a
        ``:memory:`` database) is busy with a write; the caller then uses :meth:`read`.
        """
        if self._shared:
            if not self._write_lock.acquire(blocking=False):
                return False, None
            try:
                return True, work(self._writer)
            finally:
                self._write_lock.release()
        with self._reader() as conn:
            return True, work(conn)

    async def write(
        self,
        work: Callable[[sqlite3.Connection], T],
        after: Callable[[T], None] | None = None,
        refresh: Callable[[sqlite3.Connection], None] | None = None,
        *,
        purge: Callable[[sqlite3.Connection], None] | None = None,
        records: bool = True,
    ) -> T:
        """Run ``work(connection)`` inside one IMMEDIATE transaction; all or nothing.

        ``refresh(connection)`` runs first if another connection committed since the
        last look (in memory state must follow before this write builds on it);
        ``after(result)`` runs in the same thread once the commit succeeded, still
        holding the write lock, so in-memory state follows the database in commit order.

        With ``purge`` the write is an erase: its transaction runs with
        ``secure_delete`` on (SQLite overwrites with zeros what it deletes and every
        page it frees), and ``purge(connection)`` runs once it committed and ``after``
        ran, outside any transaction and still holding the write lock (to move the
        erased pages out of the write-ahead log).

        With ``records`` false the write changes no record (a session's turn): it moves
        no record commit count, so no process reloads for it, and it neither runs
        ``refresh`` nor absorbs another process's commit (the next write or read does).
        It is durable against a crash of the process, not of the machine.
        """
        if purge is not None:
            return await anyio.to_thread.run_sync(self._erase_sync, work, after, refresh, purge)
        return await anyio.to_thread.run_sync(self._write_sync, work, after, refresh, records)

    def write_now(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """The blocking form of :meth:`write`, for opening the store."""
        return self._write_sync(work, None, None)

    def close(self) -> None:
        with self._open_lock:
            for conn in self._opened:
                conn.close()
            self._opened.clear()
        self._writer.close()

    def _read_sync(self, work: Callable[[sqlite3.Connection], T]) -> T:
        if self._shared:
            with self._write_lock:
                return work(self._writer)
        with self._reader() as conn:
            return work(conn)

    def _erase_sync(
        self,
        work: Callable[[sqlite3.Connection], T],
        after: Callable[[T], None] | None,
        refresh: Callable[[sqlite3.Connection], None] | None,
        purge: Callable[[sqlite3.Connection], None],
    ) -> T:
        with self._write_lock:
            self._writer.execute("PRAGMA secure_delete = ON")
            try:
                result = self._write_locked(work, after, refresh)
            finally:
                self._writer.execute(f"PRAGMA secure_delete = {SECURE_DELETE}")
            purge(self._writer)
            return result

    def _write_sync(
        self,
        work: Callable[[sqlite3.Connection], T],
        after: Callable[[T], None] | None,
        refresh: Callable[[sqlite3.Connection], None] | None,
        records: bool = True,
    ) -> T:
        with self._write_lock:
            if records or self._shared:
                return self._write_locked(work, after, refresh, records)
            # A session's turn need not outlive a power cut (lost, an item is served
            # once more): its commit skips the log sync that makes records durable.
            self._writer.execute("PRAGMA synchronous = NORMAL")
            try:
                return self._write_locked(work, after, refresh, records)
            finally:
                self._writer.execute("PRAGMA synchronous = FULL")

    def _write_locked(
        self,
        work: Callable[[sqlite3.Connection], T],
        after: Callable[[T], None] | None,
        refresh: Callable[[sqlite3.Connection], None] | None,
        records: bool = True,
    ) -> T:
        self._check_file()
        conn = self._writer
        counted = records and not self._shared
        conn.execute("BEGIN IMMEDIATE")
        if counted:
            # Inside the transaction nobody else can commit: what refresh reads is
            # exactly what this write builds on.
            self._sync_locked(refresh)
        try:
            result = work(conn)
            if counted:
                conn.execute(_COUNT_COMMIT)
                commits = self._record_commits()
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        if counted:
            self._data_version = self._version()  # our own commit is no news
            self._commits = commits
        if after is not None:
            after(result)
        return result

    def sync(self, refresh: Callable[[sqlite3.Connection], None]) -> bool:
        """Run ``refresh(connection)`` if another connection committed since the last
        look; whether it looked. Never waits: while this store is writing, it does not
        look (False), and the next look catches up.

        Every read looks first (once per round of searches: ``stores._rounds``), so it
        is also where a read learns that the database file was removed or replaced
        (one ``stat`` of the path, about 2 us): reads would otherwise go on serving the
        old file's pages (a swapped file's original text, by id) while writes are
        refused.

        Raises:
            StoreError: the path no longer names the file this store opened.
        """
        self._check_file("nothing was read from it")
        if self._shared:
            return True  # one connection: nothing else commits
        if not self._write_lock.acquire(blocking=False):
            return False
        try:
            self._sync_locked(refresh)
        finally:
            self._write_lock.release()
        return True

    def _sync_locked(self, refresh: Callable[[sqlite3.Connection], None] | None) -> None:
        version = self._version()
        if version == self._data_version:
            return
        self._data_version = version
        commits = self._record_commits()
        if commits != self._commits:  # not only other processes' session turns
            self._commits = commits
            if refresh is not None:
                refresh(self._writer)

    def _version(self) -> int:
        return int(self._writer.execute("PRAGMA data_version").fetchone()[0])

    def _record_commits(self) -> int | None:
        """The record commit count (None before the schema exists)."""
        try:
            row = self._writer.execute(
                "SELECT value FROM meta WHERE key = ?", (RECORD_COMMITS,)
            ).fetchone()
        except sqlite3.OperationalError:  # no meta table yet: a file being created
            return None
        return None if row is None else int(row[0])

    def _check_file(self, outcome: str = "nothing was written") -> None:
        """Refuse to read or write once the database file was removed or replaced: SQLite
        would go on with the unlinked file, and what it wrote would be gone at close.
        The same file put back (the same device and inode) serves again.

        Raises:
            StoreError: the path no longer names the file this store opened.
        """
        if self._file is not None and _identity(self._database) != self._file:
            raise StoreError(
                f"the database file {self._database!r} was removed or replaced while this"
                f" store had it open; {outcome}. Restore the file, or reopen the runtime"
                " on the new one"
            )

    @contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = self._idle.get_nowait()
        except queue.Empty:
            conn = _connect(self._database)
            with self._open_lock:
                self._opened.append(conn)
        try:
            yield conn
        finally:
            self._idle.put(conn)
