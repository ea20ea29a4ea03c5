"""What the pieces of a prepare's round machinery cost, on asyncio and trio.

A round of a prepare opens a task group per phase and starts a task per search; every
stretch of work on the loop takes the loop's turn (``satchel._loop.loop_turn``, one
checkpoint; an ``anyio.Lock`` until session 44);
deadlines are cancel scopes; until issue 45 each phase also had a memory object stream,
a clone of it per task and a send per result. An embedded-store read looks for other
processes' commits first (one ``stat`` of the file and ``PRAGMA data_version``). This
measures each piece alone, in a loop on an idle event loop, so a change to the rounds
can be priced before it is made:

- ``task group, empty`` / ``task group, 3 tasks``: open and close a group, with three
  tasks that return at once (a round 0 of one scope and three families);
- ``memory stream``: create and close a stream pair; ``stream send + receive``: one
  item through it;
- ``loop turn``: the loop's turn a stretch takes, uncontended, within a prepare
  (``turn_known``); ``lock acquire + release``: an ``anyio.Lock``, as the turn was;
- ``cancel scope``: enter and exit one with a deadline;
- ``checkpoint``: ``anyio.lowlevel.checkpoint()``;
- ``stat + PRAGMA data_version``: what each store read costs before it reads.

Run: ``python -m bench primitives [--repeat 20000] [--backends asyncio trio]``; microseconds
per operation, the best of three rounds (JSON in ``bench/results/primitives.json``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from satchel import _loop

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

RESULTS = Path(__file__).parent / "results"
#: Rounds of each measurement; the best counts (the machine's other load only slows).
ROUNDS = 3


async def _nothing() -> None:
    return None


async def task_group_empty() -> None:
    async with anyio.create_task_group():
        pass


async def task_group_three() -> None:
    async with anyio.create_task_group() as group:
        for _ in range(3):
            group.start_soon(_nothing)


async def memory_stream() -> None:
    send, receive = anyio.create_memory_object_stream[int](math.inf)
    send.close()
    receive.close()


def _stream_round_trip(
    stream: tuple[MemoryObjectSendStream[int], MemoryObjectReceiveStream[int]],
) -> Callable[[], Awaitable[None]]:
    send, receive = stream

    async def once() -> None:
        await send.send(1)
        await receive.receive()

    return once


async def loop_turn() -> None:
    async with _loop.loop_turn():
        pass


def _lock() -> Callable[[], Awaitable[None]]:
    lock = anyio.Lock()

    async def once() -> None:
        async with lock:
            pass

    return once


async def cancel_scope() -> None:
    # The scope's own cost is what is measured: nothing inside it may wait.
    with anyio.CancelScope(deadline=anyio.current_time() + 60):  # noqa: ASYNC100
        pass


async def checkpoint() -> None:
    await anyio.lowlevel.checkpoint()


def _data_version(path: str, conn: sqlite3.Connection) -> Callable[[], Awaitable[None]]:
    async def once() -> None:
        os.stat(path)
        conn.execute("PRAGMA data_version").fetchone()

    return once


async def _per_call(operation: Callable[[], Awaitable[None]], repeat: int) -> float:
    """Microseconds per call, the best of :data:`ROUNDS` rounds of ``repeat`` calls."""
    best = math.inf
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for _ in range(repeat):
            await operation()
        best = min(best, (time.perf_counter() - started) / repeat * 1e6)
    return best


async def measure(repeat: int, database: str) -> dict[str, float]:
    """Microseconds per call of each piece, on the running backend."""
    send, receive = anyio.create_memory_object_stream[int](math.inf)
    conn = sqlite3.connect(database, isolation_level=None)
    try:
        operations: dict[str, Callable[[], Awaitable[None]]] = {
            "task group, empty": task_group_empty,
            "task group, 3 tasks": task_group_three,
            "memory stream": memory_stream,
            "stream send + receive": _stream_round_trip((send, receive)),
            "loop turn": loop_turn,
            "lock acquire + release": _lock(),
            "cancel scope": cancel_scope,
            "checkpoint": checkpoint,
            "stat + PRAGMA data_version": _data_version(database, conn),
        }
        with _loop.turn_known():
            return {name: await _per_call(op, repeat) for name, op in operations.items()}
    finally:
        send.close()
        receive.close()
        conn.close()


def report(results: dict[str, dict[str, float]]) -> str:
    backends = list(results)
    lines = [
        "| operation | " + " | ".join(f"{backend} us" for backend in backends) + " |",
        "|---|" + "---:|" * len(backends),
    ]
    for name in results[backends[0]]:
        cells = " | ".join(f"{results[backend][name]:.1f}" for backend in backends)
        lines.append(f"| {name} | {cells} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench primitives",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--repeat", type=int, default=20000, help="calls per round")
    parser.add_argument("--backends", nargs="+", default=["asyncio", "trio"])
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        database = str(Path(folder) / "primitives.db")
        setup = sqlite3.connect(database)
        setup.execute("PRAGMA journal_mode = WAL")  # as the store opens its files
        setup.close()
        for backend in args.backends:
            results[backend] = anyio.run(measure, args.repeat, database, backend=backend)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "primitives.json").write_text(json.dumps(results, indent=2) + "\n")
    print(report(results))


if __name__ == "__main__":
    main()
