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

The turn is satchel's own :class:`Turn` rather than an ``anyio.Lock``: the same first
come, first served order and the same hand-over to the next waiter, but a free turn is
one plain checkpoint, where the lock's is a check for cancellation and a checkpoint
inside a shielded cancel scope (a prepare takes a dozen turns: 8 against 16 us each on
asyncio, measured in docs/benchmarks.md).

Only synchronous code runs inside a turn: never an ``await`` of I/O, a worker thread or
another task, and never a second turn (the lock is not reentrant).

The bottom of the layers, below the vocabulary: the one module every layer that runs
on the loop (embedders, stores, orchestration) may import to take turns. It must never
import anything of satchel, start a task or hold the turn itself. Worker threads' side
of the same courtesy is ``vocabulary._turns.let_loop_in``.
"""

from __future__ import annotations

from collections import deque
from typing import Final

import anyio
import anyio.lowlevel
from anyio.lowlevel import RunVar


class Turn:
    """A fair lock for one event loop's tasks, held with ``async with``.

    Free, it is taken at once and the taker passes one checkpoint while holding it (so
    the loop gets back to its other tasks before the stretch runs, and a cancelled
    taker gives it back); taken, a waiter is parked on an event of its own and woken
    by the holder's release, which hands the turn straight to the first waiter. A
    waiter cancelled before its turn comes leaves the queue; one cancelled as it was
    handed the turn passes it on. Not reentrant: a task holding the turn that asks for
    it again waits for ever.
    """

    __slots__ = ("_held", "_waiting")

    def __init__(self) -> None:
        self._held = False
        self._waiting: deque[anyio.Event] = deque()

    def locked(self) -> bool:
        """Whether a task holds the turn."""
        return self._held

    async def __aenter__(self) -> None:
        if not self._held:  # nobody holds it, so nobody waits for it either
            self._held = True
            try:
                await anyio.lowlevel.checkpoint()
            except BaseException:
                self._release()
                raise
            return
        handed = anyio.Event()
        self._waiting.append(handed)
        try:
            await handed.wait()
        except BaseException:
            if handed.is_set():  # handed the turn as it was cancelled: pass it on
                self._release()
            else:
                self._waiting.remove(handed)
            raise

    async def __aexit__(self, *exc_info: object) -> None:
        self._release()

    def _release(self) -> None:
        if self._waiting:
            self._waiting.popleft().set()  # the turn goes to the first waiter, still held
        else:
            self._held = False


_TURN: Final = RunVar[Turn]("satchel_loop_turn")


def loop_turn() -> Turn:
    """The running event loop's turn, to hold with ``async with`` around one stretch of
    synchronous work on the loop."""
    try:
        return _TURN.get()
    except LookupError:
        turn = Turn()
        _TURN.set(turn)
        return turn
