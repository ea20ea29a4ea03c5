"""Per-scope readers-writer guards: searches share a scope, writes take it alone.

A prepare acquires the guard per search task and releases it when the task ends, so
nothing must ever hold a scope across rounds. Writers are preferred: once a write
waits, new searches queue behind it, so a busy scope cannot starve its writers.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


class ScopeGuard:
    """One scope's readers-writer guard, for tasks of one event loop."""

    def __init__(self) -> None:
        self.readers = 0
        self.writing = False
        self.waiting_writers = 0
        self.waiting_readers = 0
        self._changed: anyio.Event | None = None

    async def enter_reading(self) -> None:
        """Wait until no writer holds or waits for the scope, then share it."""
        self.waiting_readers += 1
        try:
            while self.writing or self.waiting_writers:
                await self._wait()
        finally:
            self.waiting_readers -= 1
        self.readers += 1

    def leave_reading(self) -> None:
        self.readers -= 1
        if not self.readers:
            self._notify()

    @asynccontextmanager
    async def writing_alone(self) -> AsyncIterator[None]:
        self.waiting_writers += 1
        acquired = False
        try:
            while self.writing or self.readers:
                await self._wait()
            self.writing = acquired = True
        finally:
            self.waiting_writers -= 1
            if not acquired:
                self._notify()  # readers queued behind this writer may go now
        try:
            yield
        finally:
            self.writing = False
            self._notify()

    @property
    def idle(self) -> bool:
        return not (self.readers or self.writing or self.waiting_writers or self.waiting_readers)

    async def _wait(self) -> None:
        if self._changed is None:
            self._changed = anyio.Event()
        await self._changed.wait()

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None


class ScopeGuards:
    """The guards of every scope in use; an idle scope's guard is dropped."""

    def __init__(self) -> None:
        self._guards: dict[str, ScopeGuard] = {}

    def reading(self, scope_id: str) -> _Reading:
        """Share ``scope_id`` with other searches for the ``async with`` block."""
        return _Reading(self, scope_id)

    @asynccontextmanager
    async def writing(self, scope_id: str) -> AsyncIterator[None]:
        guard = self._guards.setdefault(scope_id, ScopeGuard())
        try:
            async with guard.writing_alone():
                yield
        finally:
            self._forget_if_idle(scope_id, guard)

    def guard(self, scope_id: str) -> ScopeGuard | None:
        return self._guards.get(scope_id)

    def written(self, scope_id: str) -> bool:
        """Whether a writer holds ``scope_id`` or waits for it (a search would wait)."""
        guard = self._guards.get(scope_id)
        return guard is not None and (guard.writing or guard.waiting_writers > 0)

    def _forget_if_idle(self, scope_id: str, guard: ScopeGuard) -> None:
        if guard.idle and self._guards.get(scope_id) is guard:
            del self._guards[scope_id]


class _Reading:
    """A search's hold on a scope: :meth:`ScopeGuard.enter_reading` and
    :meth:`ScopeGuard.leave_reading` around the block, without a generator, since every
    search of every round takes one (an uncontended hold never yields)."""

    __slots__ = ("_guard", "_guards", "_scope_id")

    def __init__(self, guards: ScopeGuards, scope_id: str) -> None:
        self._guards = guards
        self._scope_id = scope_id
        self._guard: ScopeGuard | None = None

    async def __aenter__(self) -> None:
        guards = self._guards._guards
        guard = guards.get(self._scope_id)
        if guard is None:
            guard = guards[self._scope_id] = ScopeGuard()
        self._guard = guard
        try:
            await guard.enter_reading()
        except BaseException:  # cancelled while a writer held the scope
            self._guards._forget_if_idle(self._scope_id, guard)
            raise

    async def __aexit__(self, *exc_info: object) -> None:
        guard = self._guard
        assert guard is not None
        guard.leave_reading()
        self._guards._forget_if_idle(self._scope_id, guard)
