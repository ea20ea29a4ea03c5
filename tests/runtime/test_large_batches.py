"""A large write batch is checked a slice at a time: other tasks on the event loop run
between slices, so no batch holds the loop while satchel validates it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import pytest

import satchel
from satchel.runtime._writes import SLICE

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

pytestmark = pytest.mark.anyio

ENTRIES = 8 * SLICE


def writes(rt: satchel.Runtime) -> dict[str, Callable[[], Awaitable[Any]]]:
    """Each batch write, with a batch whose last record is malformed (nothing is written,
    so only the checking runs)."""
    notes = [satchel.MemoryEntry(text=f"note {n}") for n in range(ENTRIES)]
    experiences = [satchel.Experience("s", "a", "o", f"lesson {n}") for n in range(ENTRIES)]
    topics = [satchel.TopicMemory(f"title {n}", "text") for n in range(ENTRIES)]
    resources = [satchel.Resource(f"doc://{n}", "body") for n in range(ENTRIES)]
    return {
        "memories": lambda: rt.add_memories("s", [*notes, satchel.MemoryEntry(text=" ")]),
        "experiences": lambda: rt.add_experiences(
            "s", [*experiences, satchel.Experience("s", "a", "o", " ")]
        ),
        "topics": lambda: rt.add_topic_memories("s", [*topics, satchel.TopicMemory(" ", "t")]),
        "resources": lambda: rt.add_resources("s", [*resources, satchel.Resource(" ", "b")]),
    }


@pytest.mark.parametrize("family", ["memories", "experiences", "topics", "resources"])
async def test_other_tasks_run_while_a_large_batch_is_checked(family: str) -> None:
    async with satchel.open_runtime(":memory:", embedder=satchel.HashingEmbedder()) as rt:
        write = writes(rt)[family]
        ticks = 0
        checking = True

        async def ticker() -> None:
            nonlocal ticks
            while checking:
                await anyio.lowlevel.checkpoint()
                ticks += 1

        async with anyio.create_task_group() as group:
            group.start_soon(ticker)
            await anyio.lowlevel.checkpoint()  # the ticker is waiting its turn
            start = ticks
            with pytest.raises(satchel.InvalidRequestError, match=rf"\[{ENTRIES}\]"):
                await write()
            checking = False
        assert ticks - start >= ENTRIES // SLICE - 1
        assert await rt.store.scope_counts() == {}
