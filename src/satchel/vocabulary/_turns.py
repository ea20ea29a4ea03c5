"""Long stretches of Python in worker threads: each gives the event loop's thread its turn.

Worker threads share the loop's GIL. A worker analysing a 1 MB text or writing thousands
of records keeps it between the interpreter's forced switches, so the loop waits that
long; :func:`let_loop_in` is their courtesy, called between the :func:`pieces` of such
work. The loop's own side, the turn a stretch of work on the loop takes, is
``satchel._loop.loop_turn``. Nothing here starts a thread or a task, or takes a lock.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Final

from .._loop import running_library

if TYPE_CHECKING:
    from collections.abc import Iterator


#: Seconds of Python a worker thread runs between two :func:`let_loop_in` that give up
#: the GIL; why a millisecond: docs/benchmarks.md, "Measurements behind the worker
#: threads' courtesy".
YIELD_EVERY: Final = 0.001

_since = threading.local()


def let_loop_in() -> None:
    """Give up the GIL for a moment, from a long stretch of Python in a worker thread.

    A worker thread running Python keeps the GIL until the interpreter's next forced
    switch (5 ms by default), so an event loop waking meanwhile waits that long. Long
    work in a worker (analysing a 1 MB text, writing thousands of records) calls this
    between its pieces; once ``YIELD_EVERY`` has passed since the thread last gave the
    GIL up, it sleeps for zero seconds, which lets a waiting loop run at once. On a
    thread that runs an event loop (a short text analysed or embedded inline) it does
    nothing.
    """
    now = time.perf_counter()
    if now - getattr(_since, "last", 0.0) >= YIELD_EVERY:
        _since.last = now
        if not _runs_a_loop():  # on the loop's own thread a sleep would only stall it
            time.sleep(0)
            _since.last = time.perf_counter()


def _runs_a_loop() -> bool:
    """Whether this thread is running an event loop (asyncio's or trio's)."""
    return running_library() is not None


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
