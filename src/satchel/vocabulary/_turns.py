"""Turns on the host's event loop: satchel's stretches of Python run one per loop pass.

The loop is the host's. A prepare runs a few stretches of Python on it (analysing and
embedding the query, a small scope's search, admitting and fusing, fitting the pack),
each well under a millisecond. Run side by side, though, four prepares put four such
stretches in the loop's queue at once, and a timer or socket of the host due meanwhile
waits behind all of them, then often behind the next four, which were queued while
the first ran.

So every such stretch first takes the loop's turn: a fair (first come, first served)
lock, one per running event loop and shared by every runtime on it, held for that one
stretch of synchronous work. A prepare waiting for the turn is parked, not queued to
run, so between two of satchel's stretches the loop always gets back to its timers and
sockets: the host waits behind at most one stretch, however many prepares run. On the
loop's one thread the stretches could never overlap anyway, so taking turns costs no
throughput; taking a free turn is one checkpoint.

Only synchronous code runs inside a turn: never an ``await`` of I/O, a worker thread or
another task, and never a second turn (the lock is not reentrant).

Worker threads share the loop's GIL: :func:`let_loop_in` is their side of the same
courtesy.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import TYPE_CHECKING, Final

import anyio
from anyio.lowlevel import RunVar

if TYPE_CHECKING:
    from collections.abc import Iterator

_TURN: Final = RunVar[anyio.Lock]("satchel_loop_turn")


def loop_turn() -> anyio.Lock:
    """The running event loop's turn, to hold with ``async with`` around one stretch of
    synchronous work on the loop."""
    try:
        return _TURN.get()
    except LookupError:
        turn = anyio.Lock()
        _TURN.set(turn)
        return turn


#: Seconds of Python a worker thread runs between two :func:`let_loop_in` that give up
#: the GIL: giving it up costs about 75 µs (a zero sleep), so at most every millisecond
#: (beside a 1 MB write the loop's lag max was 5.4-6.7 ms at 2 ms, 2.4-2.9 ms at 1 ms,
#: for 8% more write time).
YIELD_EVERY: Final = 0.001

_since = threading.local()


def let_loop_in() -> None:
    """Give up the GIL for a moment, from a long stretch of Python in a worker thread.

    A worker thread running Python keeps the GIL until the interpreter's next forced
    switch (5 ms by default), so an event loop waking meanwhile waits that long. Long
    work in a worker (analysing a 1 MB text, writing thousands of records) calls this
    between its pieces; once ``YIELD_EVERY`` has passed since the thread last gave the
    GIL up, it sleeps for zero seconds, which lets a waiting loop run at once (beside a
    busy Python thread, the loop's lag p50 fell from 5.2 to 0.3 ms). On a thread that
    runs an event loop (a short text analysed or embedded inline) it does nothing.
    """
    now = time.perf_counter()
    if now - getattr(_since, "last", 0.0) >= YIELD_EVERY:
        _since.last = now
        if not _runs_a_loop():  # on the loop's own thread a sleep would only stall it
            time.sleep(0)
            _since.last = time.perf_counter()


def _runs_a_loop() -> bool:
    """Whether this thread is running an event loop (asyncio's or trio's)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        trio = sys.modules.get("trio")
        return trio is not None and trio.lowlevel.in_trio_run()
    return True


#: Characters of a long text processed in one go between two :func:`let_loop_in`:
#: analysing them (stemming words not seen before) takes about a millisecond, and a
#: regular-expression scan of them holds the GIL for a fraction of that.
PIECE_CHARS: Final = 1024


def pieces(text: str, size: int = PIECE_CHARS) -> Iterator[tuple[int, int]]:
    """``text`` as consecutive ``(start, end)`` spans of at most about ``size``
    characters, each ending just after a space or newline where one is near, so that no
    word is cut in two; one span for a short text."""
    start, length = 0, len(text)
    while length - start > size:
        limit = start + size
        cut = max(text.rfind(" ", start, limit), text.rfind("\n", start, limit))
        end = cut + 1 if cut > start else limit
        yield start, end
        start = end
    yield start, length
