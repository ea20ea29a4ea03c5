"""An asyncio event loop on a thread of its own, where a store's asyncio-only driver runs.

asyncmy speaks the MySQL protocol on asyncio only. Every call of the OceanBase store
runs here, whichever backend the host uses, so there is one SQL code path for asyncio
and trio, and the host's loop never parses a result row: it waits on an event that the
bridge sets when the call is done.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

T = TypeVar("T")


def _waker() -> Callable[[Callable[[], object]], object]:
    """How another thread schedules a callback on the calling task's event loop."""
    try:
        return asyncio.get_running_loop().call_soon_threadsafe
    except RuntimeError:  # no asyncio loop runs here: anyio's other backend is trio
        import trio.lowlevel

        return trio.lowlevel.current_trio_token().run_sync_soon


class LoopThread:
    """One asyncio loop on one daemon thread; :meth:`run` awaits a coroutine on it."""

    def __init__(self, name: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._thread.start()

    async def run(self, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run ``work()`` on the bridge's loop and return its result. Cancelling the
        caller cancels the work there (its connection is then discarded)."""
        done = anyio.Event()
        wake = _waker()

        def finished(_: object) -> None:
            with contextlib.suppress(RuntimeError):  # the caller's loop is gone
                wake(done.set)

        future = asyncio.run_coroutine_threadsafe(work(), self._loop)
        future.add_done_callback(finished)
        try:
            await done.wait()
        except BaseException:
            future.cancel()
            raise
        return future.result()

    def call(self, work: Callable[[], Coroutine[Any, Any, T]], timeout: float = 30.0) -> T:
        """Run ``work()`` from a thread that is not an event loop's (closing, tests)."""
        return asyncio.run_coroutine_threadsafe(work(), self._loop).result(timeout)

    def close(self) -> None:
        """Stop the loop and its thread; idempotent."""
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
