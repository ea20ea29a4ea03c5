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

A step of at least :data:`STALL` is a stall, and the probe says why it was long (see
:func:`cause`): the loop thread's own CPU time in the step, the whole process's, the
collections inside it, and where the loop thread was, sampled by a watchdog thread
every millisecond while the step runs (with the innermost frame of every other busy
thread of the process: the GIL's holder is among them when the loop thread waits).
A step whose thread ran all along was satchel's code (the samples name it); one whose
thread barely ran waited: for the GIL that another thread of the process held (the
process's CPU tells), or off the CPU while nothing else of the process ran (a blocking
call, or the machine gave the core to another process).

Works on asyncio and trio alike; never changes the work it watches (the watchdog takes
the GIL for a few microseconds a millisecond while a step runs past half a stall).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
import threading
import time
import traceback
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
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
#: A step at least this long is a stall (the lag p99 goal): its CPU, collections and
#: stacks are recorded.
STALL: Final = 0.002
#: How often the watchdog looks at a running step, and the samples it keeps per stall.
SAMPLE_EVERY: Final = 0.001
SAMPLES: Final = 4
#: Frames kept per sample, innermost last.
FRAMES: Final = 6

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
    #: Seconds of all collections so far (a step's share is the difference).
    collected: float = 0.0
    #: Every step of at least STALL, with what it was doing.
    stalls: list[Stall] = field(default_factory=list)

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
            "stalls": len(self.stalls),
            "stall_causes": dict(Counter(cause(stall) for stall in self.stalls)),
            "stall_places": dict(
                Counter(f"{cause(stall)} @ {stall.place}" for stall in self.stalls).most_common(8)
            ),
            "longest_stalls": [
                {**asdict(stall), "cause": cause(stall)}
                for stall in sorted(self.stalls, key=lambda s: s.wall, reverse=True)[:5]
            ],
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


@dataclass(frozen=True)
class Stall:
    """One step that held the loop at least :data:`STALL` seconds."""

    task: str
    wall: float
    #: CPU seconds of the loop thread, and of the whole process, during the step.
    thread_cpu: float
    process_cpu: float
    #: Seconds of garbage collection inside the step.
    collecting: float
    #: Where the loop thread was while the step ran: up to SAMPLES distinct stacks,
    #: each its innermost FRAMES frames as "file:line function".
    samples: tuple[tuple[str, ...], ...]
    #: The task's awaits when the step ended (where it gave the loop back), innermost
    #: last, in the same form, the whole chain.
    ended_at: tuple[str, ...] = ()

    @property
    def place(self) -> str:
        """Where the step gave the loop back: its innermost await in satchel's code."""
        ours = [frame for frame in self.ended_at if frame.startswith("satchel/")]
        return (ours or self.ended_at or ("?",))[-1]


def cause(stall: Stall) -> str:
    """Why a step was long, from its own measurements.

    ``collection``: garbage collection took half of it or more. ``running``: the loop
    thread was on a CPU for at least 70% of it, so the code in its samples held the loop.
    Otherwise the thread waited: ``gil`` when other threads of the process used at least
    half the time it did not run (they held the GIL, or shared its core), ``off-cpu``
    when they did not (a blocking call, which the samples show, or the core went to
    another process or the host).
    """
    if stall.collecting >= stall.wall / 2:
        return "collection"
    if stall.thread_cpu >= 0.7 * stall.wall:
        return "running"
    idle = stall.wall - stall.thread_cpu
    others = stall.process_cpu - stall.thread_cpu
    return "gil" if others >= idle / 2 else "off-cpu"


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
            watch.collected += seconds

    gc.callbacks.append(timed)
    try:
        yield
    finally:
        gc.callbacks.remove(timed)


class _Timer:
    """Times the steps of one loop: wall and CPU seconds, collections, and a watchdog
    thread's stack samples of any step that runs past :data:`STALL` / 2."""

    def __init__(self, watch: Watch) -> None:
        self.watch = watch
        self.loop_thread = threading.get_ident()
        #: The running step's start (perf_counter, thread and process CPU, collected
        #: seconds) and its samples; None between steps.
        self.running: tuple[float, float, float, float] | None = None
        self.samples: list[tuple[str, ...]] = []
        self.stopped = threading.Event()
        self.watchdog = threading.Thread(target=self._sample, name="bench-watchdog", daemon=True)

    def begin(self) -> None:
        self.samples = []
        self.running = (
            time.perf_counter(),
            time.thread_time(),
            time.process_time(),
            self.watch.collected,
        )

    def end(self, label: str, coroutine: Any = None) -> None:
        running, self.running = self.running, None
        if running is None:
            return
        started, thread_started, process_started, collected = running
        wall = time.perf_counter() - started
        self.watch.step(label, wall)
        if wall >= STALL:
            self.watch.stalls.append(
                Stall(
                    task=label,
                    wall=wall,
                    thread_cpu=time.thread_time() - thread_started,
                    process_cpu=time.process_time() - process_started,
                    collecting=self.watch.collected - collected,
                    samples=tuple(self.samples),
                    ended_at=_awaits(coroutine),
                )
            )

    def _sample(self) -> None:
        while not self.stopped.wait(SAMPLE_EVERY):
            running = self.running
            if running is None or time.perf_counter() - running[0] < STALL / 2:
                continue
            frames = sys._current_frames()
            frame = frames.get(self.loop_thread)
            if frame is None or len(self.samples) >= SAMPLES:
                continue
            stack = tuple(
                f"{_short(entry.filename)}:{entry.lineno} {entry.name}"
                for entry in traceback.extract_stack(frame)[-FRAMES:]
            )
            # Where every other thread of the process is (the one holding the GIL
            # among them, when the loop thread waits for it), innermost frame each.
            others = tuple(
                f"other thread: {_where(other)}"
                for ident, other in frames.items()
                if ident not in (self.loop_thread, threading.get_ident()) and _busy(other)
            )
            if self.running is running and stack + others not in self.samples:
                self.samples.append(stack + others)

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        self.watchdog.start()
        try:
            yield
        finally:
            self.stopped.set()
            self.watchdog.join()


def _where(frame: Any) -> str:
    """A thread's innermost frame of satchel's code (else its innermost)."""
    innermost = frame
    while frame is not None:
        if "satchel" in Path(frame.f_code.co_filename).parts:
            innermost = frame
            break
        frame = frame.f_back
    code = innermost.f_code
    return f"{_short(code.co_filename)}:{innermost.f_lineno} {code.co_name}"


#: Functions an idle thread waits in: such a thread holds no GIL and is left out.
IDLE: Final = frozenset(
    {"wait", "get", "_worker", "select", "accept", "read", "recv", "readline"}
    | {"_wait_for_tstate_lock"}
)


def _busy(frame: Any) -> bool:
    return frame.f_code.co_name not in IDLE


def _short(filename: str) -> str:
    """A frame's file from its package down (``satchel/recall/_fuse.py``)."""
    parts = Path(filename).parts
    for top in ("satchel", "bench", "anyio", "trio", "asyncio", "aiosqlite", "numpy"):
        if top in parts:
            return "/".join(parts[len(parts) - 1 - parts[::-1].index(top) :])
    return parts[-1] if parts else filename


def _awaits(coroutine: Any) -> tuple[str, ...]:
    """The chain of awaits a suspended coroutine waits in, outermost first, whole (the
    innermost frames are often the event loop's own: :attr:`Stall.place` looks past
    them for satchel's)."""
    frames: list[str] = []
    while coroutine is not None and len(frames) < 64:
        frame = getattr(coroutine, "cr_frame", None) or getattr(coroutine, "gi_frame", None)
        if frame is None:
            break
        frames.append(f"{_short(frame.f_code.co_filename)}:{frame.f_lineno} {frame.f_code.co_name}")
        coroutine = getattr(coroutine, "cr_await", None) or getattr(coroutine, "gi_yieldfrom", None)
    return tuple(frames)


def step_probe(watch: Watch) -> contextlib.AbstractContextManager[None]:
    """Time every step the running loop takes, labelled by its task."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # anyio's other backend: trio
        return _trio_probe(_Timer(watch))
    return _asyncio_probe(_Timer(watch))


@contextlib.contextmanager
def _asyncio_probe(timer: _Timer) -> Iterator[None]:
    """Every callback asyncio runs (a task step is one) goes through ``Handle._run``."""
    original = asyncio.Handle._run

    def timed(handle: asyncio.Handle) -> None:
        timer.begin()
        original(handle)
        timer.end(*_asyncio_step(handle))

    asyncio.Handle._run = timed  # type: ignore[method-assign, assignment]
    try:
        with timer.watching():
            yield
    finally:
        asyncio.Handle._run = original  # type: ignore[method-assign]


def _asyncio_step(handle: asyncio.Handle) -> tuple[str, Any]:
    """The name of the task a step belongs to and its coroutine; a plain callback's own
    name and None."""
    callback = handle._callback  # type: ignore[attr-defined]
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        return owner.get_name(), owner.get_coro()
    return str(getattr(callback, "__qualname__", type(callback).__name__)), None


@contextlib.contextmanager
def _trio_probe(timer: _Timer) -> Iterator[None]:
    import trio

    class Steps(trio.abc.Instrument):
        def before_task_step(self, task: trio.lowlevel.Task) -> None:
            timer.begin()

        def after_task_step(self, task: trio.lowlevel.Task) -> None:
            # A step that began before the probe was added has no start: not timed.
            timer.end(task.name, task.coro)

    instrument = Steps()
    trio.lowlevel.add_instrument(instrument)
    try:
        with timer.watching():
            yield
    finally:
        trio.lowlevel.remove_instrument(instrument)


def lags_only(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary without its per-task steps and stall details."""
    return {k: v for k, v in summary.items() if k not in {"steps", "longest_stalls"}}
