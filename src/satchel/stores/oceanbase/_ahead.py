"""A write's records derived a chunk ahead of their statements.

What a record's rows hold apart from its key (``_rows.derive``: its analysed terms, its
content hash, its vector as the engine's literal, the days it names) is Python work;
the engine runs in a process of its own. Done record by record before a batch's inserts,
that work and the engine's took turns: a 10,000-entry ingest spent 2.3 s of its 8.4 s
in the first with the engine idle, then 5.4 s in statements with Python idle. So a
write of more than :data:`CHUNK` records is cut into chunks: while the store's loop
places chunk k and sends its inserts, a worker thread derives chunk k+1.

Nothing here reads or writes the database, and nothing changes what is written or
when it commits: the chunks' inserts go in the write's one transaction, placed in
input order, and a failure anywhere rolls all of them back. Runs on the store's loop
thread (the bridge's asyncio loop); a worker thread left deriving when the write ends
(it failed or was cancelled) finishes its chunk and its result is dropped.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Final

from . import _rows as rows

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from ...vocabulary._families import Family
    from ...vocabulary._records import Columns

#: Records derived per chunk. Smaller chunks start the engine sooner (the first chunk
#: is derived before any insert can go) and cost a round trip or three each.
CHUNK: Final = 128


async def derive_ahead(
    family: Family,
    kept: Sequence[Columns],
    vectors: Sequence[Any],
    place: Callable[[int, list[rows.Derived]], Awaitable[None]],
) -> None:
    """Call ``place(start, derived)`` for each chunk of ``kept`` (paired with
    ``vectors``, None for a record without one) in order, ``derived`` holding the
    chunk's :class:`~._rows.Derived` in order; the next chunk is derived in a worker
    thread meanwhile. The first chunk is derived on the loop: a write of one chunk
    makes no thread hop."""

    def derive(start: int) -> list[rows.Derived]:
        end = start + CHUNK
        paired = zip(kept[start:end], vectors[start:end], strict=True)
        return [rows.derive(family, columns, vector) for columns, vector in paired]

    loop = asyncio.get_running_loop()
    pending: asyncio.Future[list[rows.Derived]] | None = None
    try:
        derived = derive(0)
        for start in range(0, len(kept), CHUNK):
            if start + CHUNK < len(kept):
                pending = loop.run_in_executor(None, derive, start + CHUNK)
            await place(start, derived)
            if pending is not None:
                derived = await pending
                pending = None
    finally:
        if pending is not None:
            pending.cancel()
