"""The measuring instrument of ``bench loop``: a heartbeat and a step probe on the loop.

:func:`watched` runs a piece of work with a heartbeat task beside it on the same event
loop: the heartbeat sleeps 1 ms, again and again, and records its lateness (the time it
woke minus the time it asked to wake). A stretch in which the loop runs other code
without yielding shows up as lag: what a server sharing the loop would feel. The step
probe times every step the loop takes (a trio instrument; on asyncio a timer around
``Handle._run``, restored afterwards) and names each step's task, so a single stall can
be told from several tasks' steps adding up between two beats. Garbage collections are
timed too: a collection holds the GIL, so it stalls the loop whichever thread ran it.
Each watch starts from a full collection, so every measurement starts from the same
collector state.

Works on asyncio and trio alike; never changes the work it watches.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio
import numpy as np

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

    import trio
    from anyio.abc import TaskStatus

BEAT: Final = 0.001
#: Lag thresholds counted per measurement, in milliseconds (the goals of issue 17).
THRESHOLDS_MS: Final = (2, 5)

T = TypeVar("T")


@dataclass
class Watch:
    """What the loop felt while one piece of work ran."""

    lags: list[float] = field(default_factory=list)
    #: Set by the heartbeat after each sample.
    beaten: anyio.Event = field(default_factory=anyio.Event)
    #: Per task label: steps, total seconds and the longest step's seconds on the loop.
    steps: dict[str, list[float]] = field(default_factory=dict)
    #: Seconds of each garbage collection, by generation.
    collections: dict[int, list[float]] = field(default_factory=dict)

    def step(self, label: str, seconds: float) -> None:
        seen = self.steps.setdefault(label, [0, 0.0, 0.0])
        seen[0] += 1
        seen[1] += seconds
        seen[2] = max(seen[2], seconds)

    def summary(self) -> dict[str, Any]:
        lags = np.asarray(self.lags or [0.0]) * 1e3
        longest = max(self.steps.items(), key=lambda item: item[1][2], default=None)
        return {
            "lag_samples": len(self.lags),
            "lag_p50_ms": float(np.percentile(lags, 50)),
            "lag_p99_ms": float(np.percentile(lags, 99)),
            "lag_max_ms": float(lags.max()),
            **{f"lags_over_{t}ms": int((lags > t).sum()) for t in THRESHOLDS_MS},
            "longest_step_ms": None if longest is None else longest[1][2] * 1e3,
            "longest_step_task": None if longest is None else longest[0],
            **self._collector(),
            "steps": {
                label: {"count": int(n), "total_ms": total * 1e3, "max_ms": most * 1e3}
                for label, (n, total, most) in sorted(self.steps.items())
            },
        }

    def _collector(self) -> dict[str, Any]:
        pauses = [seconds for found in self.collections.values() for seconds in found]
        return {
            "gc_collections": {str(g): len(found) for g, found in sorted(self.collections.items())},
            "gc_max_ms": max(pauses, default=0.0) * 1e3,
            "gc_total_ms": sum(pauses) * 1e3,
        }


async def beat(watch: Watch, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    """Sleep 1 ms at a time and record each wake's lateness, until cancelled."""
    task_status.started()
    while True:
        intended = time.perf_counter() + BEAT
        await anyio.sleep(BEAT)
        watch.lags.append(time.perf_counter() - intended)
        watch.beaten.set()


async def watched(
    work: Callable[[], Awaitable[T]], *, steps: bool, freeze: bool = False
) -> tuple[T, float, Watch]:
    """Run ``work()`` with the heartbeat (and the step probe) beside it on this loop;
    returns its result, its seconds and what the loop felt. With ``freeze`` every object
    alive before the work is moved out of the collector's reach (``gc.freeze()``, as a
    host may do after start-up), so a full collection walks only what came after."""
    watch = Watch()
    gc.collect()
    if freeze:
        gc.freeze()
    with (
        collections_timed(watch),
        step_probe(watch) if steps else contextlib.nullcontext(),
        _frozen() if freeze else contextlib.nullcontext(),
    ):
        async with anyio.create_task_group() as group:
            await group.start(beat, watch)  # the beat sleeps before the work starts
            started = time.perf_counter()
            result = await work()
            seconds = time.perf_counter() - started
            # A stall that ends the work is seen by the beat that was due during it.
            watch.beaten = anyio.Event()
            await watch.beaten.wait()
            group.cancel_scope.cancel()
    return result, seconds, watch


@contextlib.contextmanager
def _frozen() -> Iterator[None]:
    """Give the frozen objects back to the collector when the block ends."""
    try:
        yield
    finally:
        gc.unfreeze()


@contextlib.contextmanager
def collections_timed(watch: Watch) -> Iterator[None]:
    """Record each garbage collection's seconds in ``watch`` while the block runs."""
    started = 0.0

    def timed(phase: str, info: dict[str, int]) -> None:
        nonlocal started
        if phase == "start":
            started = time.perf_counter()
        else:
            seconds = time.perf_counter() - started
            watch.collections.setdefault(info["generation"], []).append(seconds)

    gc.callbacks.append(timed)
    try:
        yield
    finally:
        gc.callbacks.remove(timed)


def step_probe(watch: Watch) -> contextlib.AbstractContextManager[None]:
    """Time every step the running loop takes, labelled by its task."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # anyio's other backend: trio
        return _trio_probe(watch)
    return _asyncio_probe(watch)


@contextlib.contextmanager
def _asyncio_probe(watch: Watch) -> Iterator[None]:
    """Every callback asyncio runs (a task step is one) goes through ``Handle._run``."""
    original = asyncio.Handle._run

    def timed(handle: asyncio.Handle) -> None:
        started = time.perf_counter()
        original(handle)
        watch.step(_asyncio_label(handle), time.perf_counter() - started)

    asyncio.Handle._run = timed  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        asyncio.Handle._run = original  # type: ignore[method-assign]


def _asyncio_label(handle: asyncio.Handle) -> str:
    """The name of the task a step belongs to; a plain callback's own name."""
    callback = handle._callback  # type: ignore[attr-defined]
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        return owner.get_name()
    return str(getattr(callback, "__qualname__", type(callback).__name__))


@contextlib.contextmanager
def _trio_probe(watch: Watch) -> Iterator[None]:
    import trio

    class Steps(trio.abc.Instrument):
        # None until a step begins under the probe (the step adding it is not timed).
        started: float | None = None

        def before_task_step(self, task: trio.lowlevel.Task) -> None:
            self.started = time.perf_counter()

        def after_task_step(self, task: trio.lowlevel.Task) -> None:
            if self.started is not None:
                watch.step(task.name, time.perf_counter() - self.started)
            self.started = None

    instrument = Steps()
    trio.lowlevel.add_instrument(instrument)
    try:
        yield
    finally:
        trio.lowlevel.remove_instrument(instrument)


def lags_only(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary without its per-task steps."""
    return {k: v for k, v in summary.items() if k != "steps"}
