"""Per-scope readers-writer guards: shared reads, exclusive writes, writer preference.

Every ordering is proved with events and ``wait_all_tasks_blocked()``, never with sleeps;
``fail_after(5)`` is only a safety net against a deadlock hanging the suite.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from satchel.orchestration._locks import ScopeGuard, ScopeGuards

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from contextlib import AbstractAsyncContextManager

pytestmark = pytest.mark.anyio

SAFETY_NET = 5


@asynccontextmanager
async def reading(guard: ScopeGuard) -> AsyncIterator[None]:
    """A reader's hold on one guard, as ``ScopeGuards.reading`` takes it."""
    await guard.enter_reading()
    try:
        yield
    finally:
        guard.leave_reading()


class Holder:
    """A task that enters a guard, reports it, and leaves when told to."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log
        self.inside = anyio.Event()
        self.release = anyio.Event()
        self.left = anyio.Event()

    async def hold(self, guard: AbstractAsyncContextManager[None]) -> None:
        async with guard:
            self.log.append(f"{self.name} in")
            self.inside.set()
            await self.release.wait()
            self.log.append(f"{self.name} out")
        self.left.set()


async def test_readers_share_a_scope() -> None:
    """Two readers are inside the same scope at once."""
    guard = ScopeGuard()
    log: list[str] = []
    first, second = Holder("r1", log), Holder("r2", log)
    with anyio.fail_after(SAFETY_NET):
        async with anyio.create_task_group() as tg:
            tg.start_soon(first.hold, reading(guard))
            tg.start_soon(second.hold, reading(guard))
            await first.inside.wait()
            await second.inside.wait()  # only reachable while r1 is still inside
            assert guard.readers == 2
            assert sorted(log) == ["r1 in", "r2 in"]
            first.release.set()
            second.release.set()
    assert guard.idle


async def test_writer_waits_for_readers_to_leave() -> None:
    """A writer does not enter while a reader is inside; it enters once the reader leaves."""
    guard = ScopeGuard()
    log: list[str] = []
    reader, writer = Holder("r", log), Holder("w", log)
    with anyio.fail_after(SAFETY_NET):
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader.hold, reading(guard))
            await reader.inside.wait()
            tg.start_soon(writer.hold, guard.writing_alone())
            await wait_all_tasks_blocked()
            assert not writer.inside.is_set()
            assert guard.waiting_writers == 1
            reader.release.set()
            await writer.inside.wait()
            assert guard.readers == 0
            writer.release.set()
    assert log == ["r in", "r out", "w in", "w out"]


@pytest.mark.parametrize("second_kind", ["reading", "writing_alone"])
async def test_writer_excludes_readers_and_writers(second_kind: str) -> None:
    """Nobody enters while a writer is inside; the next one enters once the writer leaves."""
    guard = ScopeGuard()
    log: list[str] = []
    writer, second = Holder("w", log), Holder("next", log)
    with anyio.fail_after(SAFETY_NET):
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.hold, guard.writing_alone())
            await writer.inside.wait()
            hold = reading(guard) if second_kind == "reading" else guard.writing_alone()
            tg.start_soon(second.hold, hold)
            await wait_all_tasks_blocked()
            assert not second.inside.is_set()
            writer.release.set()
            await second.inside.wait()
            second.release.set()
    assert log == ["w in", "w out", "next in", "next out"]


async def test_reader_arriving_while_a_writer_waits_queues_behind_it() -> None:
    """Writer preference: a new reader does not join a reader ahead of a waiting writer."""
    guard = ScopeGuard()
    log: list[str] = []
    early, writer, late = Holder("r1", log), Holder("w", log), Holder("r2", log)
    with anyio.fail_after(SAFETY_NET):
        async with anyio.create_task_group() as tg:
            tg.start_soon(early.hold, reading(guard))
            await early.inside.wait()
            tg.start_soon(writer.hold, guard.writing_alone())
            await wait_all_tasks_blocked()
            tg.start_soon(late.hold, reading(guard))
            await wait_all_tasks_blocked()
            assert not late.inside.is_set()  # r1 is still inside, yet r2 may not share
            early.release.set()
            await writer.inside.wait()
            await wait_all_tasks_blocked()
            assert not late.inside.is_set()
            writer.release.set()
            await late.inside.wait()
            late.release.set()
    assert log == ["r1 in", "r1 out", "w in", "w out", "r2 in", "r2 out"]


async def test_cancelled_waiting_writer_lets_queued_readers_proceed() -> None:
    """A writer cancelled while waiting wakes the readers queued behind it: no deadlock."""
    guard = ScopeGuard()
    log: list[str] = []
    early, late = Holder("r1", log), Holder("r2", log)
    writer_cancelled = anyio.Event()

    async def impatient_writer(scope: anyio.CancelScope) -> None:
        with scope:
            async with guard.writing_alone():
                log.append("w in")  # pragma: no cover - never reached
        writer_cancelled.set()

    with anyio.fail_after(SAFETY_NET):
        async with anyio.create_task_group() as tg:
            tg.start_soon(early.hold, reading(guard))
            await early.inside.wait()
            writer_scope = anyio.CancelScope()
            tg.start_soon(impatient_writer, writer_scope)
            await wait_all_tasks_blocked()
            tg.start_soon(late.hold, reading(guard))
            await wait_all_tasks_blocked()
            assert not late.inside.is_set()  # queued behind the waiting writer
            writer_scope.cancel()
            await writer_cancelled.wait()
            await late.inside.wait()  # joins r1, which never left
            assert not early.left.is_set()
            assert guard.readers == 2
            assert guard.waiting_writers == 0
            early.release.set()
            late.release.set()
    assert "w in" not in log
    assert guard.idle


async def test_cancelled_waiting_writer_lets_the_next_writer_in() -> None:
    """A writer cancelled while waiting leaves no trace that blocks a later writer."""
    guards = ScopeGuards()
    log: list[str] = []
    reader, writer = Holder("r", log), Holder("w", log)
    with anyio.fail_after(SAFETY_NET):
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader.hold, guards.reading("a"))
            await reader.inside.wait()
            with anyio.CancelScope() as scope:
                scope.cancel()
                async with guards.writing("a"):
                    log.append("cancelled writer in")  # pragma: no cover - never reached
            reader.release.set()
            await reader.left.wait()
            tg.start_soon(writer.hold, guards.writing("a"))
            await writer.inside.wait()
            writer.release.set()
    assert log == ["r in", "r out", "w in", "w out"]
    assert guards.guard("a") is None


async def test_different_scopes_do_not_block_each_other() -> None:
    """A writer in one scope blocks neither a writer nor a reader in another."""
    guards = ScopeGuards()
    log: list[str] = []
    a_writer, b_writer, c_reader = Holder("a", log), Holder("b", log), Holder("c", log)
    with anyio.fail_after(SAFETY_NET):
        async with anyio.create_task_group() as tg:
            tg.start_soon(a_writer.hold, guards.writing("scope:a"))
            await a_writer.inside.wait()
            tg.start_soon(b_writer.hold, guards.writing("scope:b"))
            tg.start_soon(c_reader.hold, guards.reading("scope:c"))
            await b_writer.inside.wait()  # while scope:a is held alone
            await c_reader.inside.wait()
            assert not a_writer.left.is_set()
            for holder in (a_writer, b_writer, c_reader):
                holder.release.set()


async def test_scope_guards_share_reads_and_exclude_writes_per_scope() -> None:
    """Through ScopeGuards, readers of one scope share it and its writer waits for them."""
    guards = ScopeGuards()
    log: list[str] = []
    first, second, writer = Holder("r1", log), Holder("r2", log), Holder("w", log)
    with anyio.fail_after(SAFETY_NET):
        async with anyio.create_task_group() as tg:
            tg.start_soon(first.hold, guards.reading("a"))
            tg.start_soon(second.hold, guards.reading("a"))
            await first.inside.wait()
            await second.inside.wait()
            tg.start_soon(writer.hold, guards.writing("a"))
            await wait_all_tasks_blocked()
            assert not writer.inside.is_set()
            first.release.set()
            await first.left.wait()
            await wait_all_tasks_blocked()
            assert not writer.inside.is_set()
            second.release.set()
            await writer.inside.wait()
            writer.release.set()
    assert log[-2:] == ["w in", "w out"]


async def test_idle_scope_guard_is_dropped() -> None:
    """ScopeGuards keeps a guard only while its scope is in use."""
    guards = ScopeGuards()
    assert guards.guard("a") is None
    async with guards.reading("a"):
        held = guards.guard("a")
        assert held is not None
        assert held.readers == 1
    assert guards.guard("a") is None
    async with guards.writing("a"):
        held = guards.guard("a")
        assert held is not None
        assert held.writing
    assert guards.guard("a") is None


async def test_guard_is_kept_while_any_task_uses_the_scope() -> None:
    """A scope's guard survives the first reader leaving while a second is still inside."""
    guards = ScopeGuards()
    log: list[str] = []
    first, second = Holder("r1", log), Holder("r2", log)
    with anyio.fail_after(SAFETY_NET):
        async with anyio.create_task_group() as tg:
            tg.start_soon(first.hold, guards.reading("a"))
            tg.start_soon(second.hold, guards.reading("a"))
            await first.inside.wait()
            await second.inside.wait()
            guard = guards.guard("a")
            first.release.set()
            await first.left.wait()
            assert guards.guard("a") is guard
            second.release.set()
    assert guards.guard("a") is None


async def test_guard_is_dropped_after_a_cancelled_waiting_reader() -> None:
    """A reader cancelled while waiting behind a writer leaves no guard once the writer ends."""
    guards = ScopeGuards()
    log: list[str] = []
    writer = Holder("w", log)
    with anyio.fail_after(SAFETY_NET):
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.hold, guards.writing("a"))
            await writer.inside.wait()
            with anyio.CancelScope() as scope:
                scope.cancel()
                async with guards.reading("a"):
                    log.append("cancelled reader in")  # pragma: no cover - never reached
            writer.release.set()
    assert log == ["w in", "w out"]
    assert guards.guard("a") is None


async def test_reader_woken_by_a_leaving_writer_still_excludes_the_next_writer() -> None:
    """A reader queued behind a writer, once inside, keeps a later writer of the scope out."""
    guards = ScopeGuards()
    log: list[str] = []
    first, reader, second = Holder("w1", log), Holder("r", log), Holder("w2", log)
    with anyio.fail_after(SAFETY_NET):
        async with anyio.create_task_group() as tg:
            tg.start_soon(first.hold, guards.writing("a"))
            await first.inside.wait()
            tg.start_soon(reader.hold, guards.reading("a"))
            await wait_all_tasks_blocked()
            assert not reader.inside.is_set()
            first.release.set()
            await reader.inside.wait()
            tg.start_soon(second.hold, guards.writing("a"))
            await wait_all_tasks_blocked()
            try:
                assert not second.inside.is_set(), "writer entered a scope a reader holds"
            finally:
                reader.release.set()
                second.release.set()
    assert log == ["w1 in", "w1 out", "r in", "r out", "w2 in", "w2 out"]
