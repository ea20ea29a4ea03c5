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

#: Records derived per chunk, and in the first: smaller, since no insert goes until it
#: is derived (the engine idles meanwhile); later ones bigger, each costing a round trip
#: or three.
CHUNK: Final = 128
FIRST_CHUNK: Final = 32


def chunks(count: int) -> list[range]:
    """The chunks of a write of ``count`` records, in order."""
    first = min(count, FIRST_CHUNK)
    return [range(first)] + [
        range(start, min(start + CHUNK, count)) for start in range(first, count, CHUNK)
    ]


async def derive_ahead(
    family: Family,
    kept: Sequence[Columns],
    vectors: Sequence[Any],
    place: Callable[[int, list[rows.Derived]], Awaitable[None]],
) -> None:
    """Call ``place(start, derived)`` for each chunk of ``kept`` (paired with
    ``vectors``, None for a record without one) in order (:func:`chunks`), ``derived``
    holding the chunk's :class:`~._rows.Derived` in order; the next chunk is derived
    in a worker thread meanwhile. The first chunk is derived on the loop: a write of
    one chunk makes no thread hop."""

    def derive(chunk: range) -> list[rows.Derived]:
        paired = zip(kept[chunk.start : chunk.stop], vectors[chunk.start : chunk.stop], strict=True)
        return [rows.derive(family, columns, vector) for columns, vector in paired]

    loop = asyncio.get_running_loop()
    pending: asyncio.Future[list[rows.Derived]] | None = None
    cut = chunks(len(kept))
    try:
        derived = derive(cut[0])
        for chunk, following in zip(cut, [*cut[1:], None], strict=True):
            if following is not None:
                pending = loop.run_in_executor(None, derive, following)
            await place(chunk.start, derived)
            if pending is not None:
                derived = await pending
                pending = None
    finally:
        if pending is not None:
            pending.cancel()
