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

The bottom of the layers, below the vocabulary: the one module every layer that runs
on the loop (embedders, stores, orchestration) may import to take turns. It must never
import anything of satchel, start a task or hold the turn itself. Worker threads' side
of the same courtesy is ``vocabulary._turns.let_loop_in``.
"""

from __future__ import annotations

from typing import Final

import anyio
from anyio.lowlevel import RunVar

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
