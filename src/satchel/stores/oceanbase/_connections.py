"""The OceanBase store's connections: a small pool of asyncmy connections on the
store's loop thread, discarding every idle one when the engine goes away.

Each connection sets the engine's limits for its session (:data:`SESSION`), sized for
satchel's calls rather than left at the engine's defaults (10 s per statement, and 24 h
for a transaction, so that a stalled writer held its scope for a day). A write sets its
own transaction limit, sized by its batch (``_locks.write_timeout_us``).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

#: Longest statement, in seconds (``ob_query_timeout``): a search, a batch's multi-row
#: insert, a schema statement on a busy machine. Statements that may run longer say so
#: (the re-analysis of a migration); an approximate search says less (``_search``).
QUERY_TIMEOUT: Final = 120.0
#: Longest pause between two statements of one transaction, in seconds
#: (``ob_trx_idle_timeout``): a write never pauses, so a transaction idle this long
#: belongs to a writer that stalled or vanished, and the engine rolls it back.
TRX_IDLE_TIMEOUT: Final = 120.0
#: Every session's limits: the above, and a transaction's whole life (``ob_trx_timeout``)
#: for a statement outside a write (a write sets its own).
SESSION: Final = (
    f"SET SESSION ob_query_timeout = {int(QUERY_TIMEOUT * 1e6)},"
    f" ob_trx_idle_timeout = {int(TRX_IDLE_TIMEOUT * 1e6)},"
    f" ob_trx_timeout = {int(QUERY_TIMEOUT * 1e6)}"
)
#: The transaction limit of a migration's re-analysis, which reads and rewrites every
#: record in one transaction: the engine's own default, a day.
MIGRATION_TRX: Final = "SET SESSION ob_trx_timeout = 86400000000"


def unavailable_errors() -> tuple[type[BaseException], ...]:
    import asyncmy.errors

    return (asyncmy.errors.OperationalError, asyncmy.errors.InterfaceError, OSError, EOFError)


class Connections:
    """A small pool of asyncmy connections, used on the bridge's loop only."""

    def __init__(self, options: Mapping[str, Any], size: int) -> None:
        self._options = {"init_command": SESSION, **options}
        self._idle: list[Any] = []
        self._size = size
        self._slots = asyncio.Semaphore(size)

    @contextlib.asynccontextmanager
    async def connection(self, *, extra: bool = False) -> AsyncIterator[Any]:
        """A connection for one call. A call holding one may take an ``extra`` one
        beside it without waiting for a slot, so that calls which each hold a slot
        never wait on each other."""
        async with contextlib.nullcontext() if extra else self._slots, self._connected() as conn:
            yield conn

    @contextlib.asynccontextmanager
    async def _connected(self) -> AsyncIterator[Any]:
        import asyncmy

        conn = self._idle.pop() if self._idle else await asyncmy.connect(**self._options)
        try:
            yield conn
        except unavailable_errors():
            conn.close()
            self.discard_idle()  # the engine went away: the idle ones are dead too
            raise
        except BaseException:
            conn.close()  # cancelled or failed mid-statement: its state is unknown
            raise
        if len(self._idle) < 2 * self._size:
            self._idle.append(conn)
        else:
            conn.close()

    def use_database(self, database: str) -> None:
        """Connect later connections straight to ``database`` (it exists now)."""
        self._options["db"] = database

    def discard_idle(self) -> None:
        while self._idle:
            self._idle.pop().close()
