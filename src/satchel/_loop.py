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

A prepare takes a dozen to two dozen turns, so taking one costs no more than it must:
the turn checkpoints and parks with its event loop library's own primitives (those
anyio's ``checkpoint`` and ``Event`` call once they asked which library runs, on every
call), chosen once per turn object, and within :func:`turn_known` (a prepare)
:func:`loop_turn` answers from a context variable rather than the run variable (whose
lookup asks the library again and reads a weak mapping).

The bottom of the layers, below the vocabulary: the one module every layer that runs
on the loop (embedders, stores, orchestration) may import to take turns. It must never
import anything of satchel, start a task or hold the turn itself. Worker threads' side
of the same courtesy is ``vocabulary._turns.let_loop_in``.
"""

from __future__ import annotations

import sys
from collections import deque
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.lowlevel
from anyio.lowlevel import RunVar

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator


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

    __slots__ = ("_checkpoint", "_event", "_held", "_waiting")

    def __init__(self) -> None:
        self._held = False
        self._waiting: deque[Any] = deque()
        #: The library's own checkpoint and event type (:func:`_primitives`), chosen at
        #: the first turn taken (a turn is made inside a running loop or for one).
        self._checkpoint: Callable[[], Awaitable[None]] | None = None
        self._event: Callable[[], Any] = anyio.Event

    def locked(self) -> bool:
        """Whether a task holds the turn."""
        return self._held

    async def __aenter__(self) -> None:
        checkpoint = self._checkpoint
        if checkpoint is None:
            checkpoint, self._event = _primitives()
            self._checkpoint = checkpoint
        if not self._held:  # nobody holds it, so nobody waits for it either
            self._held = True
            try:
                await checkpoint()
            except BaseException:
                self._release()
                raise
            return
        handed = self._event()
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


def _primitives() -> tuple[Callable[[], Awaitable[None]], Callable[[], Any]]:
    """The running library's checkpoint and event type: those anyio's own call on it
    (``asyncio.sleep(0)`` and ``asyncio.Event`` on asyncio, trio's on trio); anyio's
    on any other."""
    library = running_library()
    if library == "asyncio":
        asyncio = sys.modules["asyncio"]
        sleep = asyncio.sleep

        async def checkpoint() -> None:
            await sleep(0)

        return checkpoint, asyncio.Event
    if library == "trio":
        trio = sys.modules["trio"]
        return trio.lowlevel.checkpoint, trio.Event
    return anyio.lowlevel.checkpoint, anyio.Event


def running_library() -> str | None:
    """``"asyncio"`` or ``"trio"`` when this thread runs that library's event loop, else
    None. Neither is imported here: a loop runs only where its library was imported
    already, and ``import satchel`` need not pay for asyncio's import."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is not None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            return "asyncio"
    trio = sys.modules.get("trio")
    if trio is not None and trio.lowlevel.in_trio_run():
        return "trio"
    return None


_TURN: Final = RunVar[Turn]("satchel_loop_turn")


#: The turn of the loop a prepare runs on, for its duration (:func:`turn_known`).
_KNOWN: Final = ContextVar[Turn | None]("satchel_known_loop_turn", default=None)


def loop_turn() -> Turn:
    """The running event loop's turn, to hold with ``async with`` around one stretch of
    synchronous work on the loop."""
    known = _KNOWN.get()
    if known is not None:
        return known
    try:
        return _TURN.get()
    except LookupError:
        turn = Turn()
        _TURN.set(turn)
        return turn


@contextmanager
def turn_known() -> Iterator[None]:
    """Within the block (one task's call on the running loop, and the tasks it starts),
    :func:`loop_turn` is the loop's turn without looking it up again."""
    token = _KNOWN.set(loop_turn())
    try:
        yield
    finally:
        _KNOWN.reset(token)
