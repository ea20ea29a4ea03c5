"""The OceanBase store's connections: a small pool of asyncmy connections on the
store's loop thread, discarding every idle one when the engine goes away."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping


def unavailable_errors() -> tuple[type[BaseException], ...]:
    import asyncmy.errors

    return (asyncmy.errors.OperationalError, asyncmy.errors.InterfaceError, OSError, EOFError)


class Connections:
    """A small pool of asyncmy connections, used on the bridge's loop only."""

    def __init__(self, options: Mapping[str, Any], size: int) -> None:
        self._options = dict(options)
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
