"""A large write batch is checked, and its texts made ready to embed, a slice at a time:
other tasks on the event loop run between slices, so no batch holds the loop while
satchel validates it; and the bundled model loads off the loop."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.lowlevel
import numpy as np
import pytest

import satchel
from satchel.runtime import _runtime
from satchel.runtime._writes import SLICE, embedding_texts
from satchel.stores import SqliteStore

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

pytestmark = pytest.mark.anyio

T = TypeVar("T")

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


async def ticks_during(work: Callable[[], Awaitable[T]]) -> tuple[T, int]:
    """``work()``'s result, and how many times another task on the loop ran meanwhile."""
    ticks = 0
    working = True

    async def ticker() -> None:
        nonlocal ticks
        while working:
            await anyio.lowlevel.checkpoint()
            ticks += 1

    async with anyio.create_task_group() as group:
        group.start_soon(ticker)
        await anyio.lowlevel.checkpoint()  # the ticker is waiting its turn
        start = ticks
        try:
            result = await work()
        finally:
            working = False
    return result, ticks - start


@pytest.mark.parametrize("family", ["memories", "experiences", "topics", "resources"])
async def test_other_tasks_run_while_a_large_batch_is_checked(family: str) -> None:
    async with satchel.open_runtime(":memory:", embedder=satchel.HashingEmbedder()) as rt:
        write = writes(rt)[family]

        async def refused() -> None:
            with pytest.raises(satchel.InvalidRequestError, match=rf"\[{ENTRIES}\]"):
                await write()

        _, ticks = await ticks_during(refused)
        assert ticks >= ENTRIES // SLICE - 1
        assert await rt.store.scope_counts() == {}


async def test_a_large_batch_is_made_ready_to_embed_a_slice_at_a_time() -> None:
    """The texts a large write embeds are worked out a slice at a time too (36,187 notes
    held the loop 96 ms at once), and they are each record's text in order."""
    notes = [satchel.MemoryEntry(text=f"note {n}") for n in range(ENTRIES)]
    texts, ticks = await ticks_during(lambda: embedding_texts("memory", notes))
    assert texts == [note.text for note in notes]
    assert ticks >= ENTRIES // SLICE - 1


async def test_the_bundled_model_loads_off_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """``open_runtime`` without an embedder loads the bundled model (8 MB read and
    verified, about 0.1 s) in a worker thread, as it loads the lemmatiser's table."""
    loaded_on: list[int] = []

    def loading() -> satchel.HashingEmbedder:
        loaded_on.append(threading.get_ident())
        return satchel.HashingEmbedder()

    monkeypatch.setattr(_runtime, "default_embedder", loading)
    async with satchel.open_runtime(":memory:") as rt:
        await rt.add_memories("s", [satchel.MemoryEntry(text="a note")])
    assert len(loaded_on) == 1
    assert loaded_on[0] != threading.get_ident()


class _Rows(np.ndarray):
    """Vectors that note the thread that goes through them row by row."""

    threads: list[int]

    def __iter__(self) -> Any:
        self.threads.append(threading.get_ident())
        return super().__iter__()


async def test_a_writes_vectors_are_taken_row_by_row_in_its_thread(tmp_path: Path) -> None:
    """The embedded store pairs each record with its vector in the write's worker
    thread: listing 36,187 rows of the array on the host's loop held it 4 ms."""
    store = await SqliteStore.open(str(tmp_path / "s.db"))
    try:
        notes = [satchel.MemoryEntry(text=f"note {n}") for n in range(3)]
        vectors = np.eye(3, 8, dtype=np.float32).view(_Rows)
        vectors.threads = []
        refs = await store.write("memory", "s", notes, vectors)
        assert len(refs) == 3
        assert len(vectors.threads) == 1
        assert vectors.threads[0] != threading.get_ident()
        assert await store.scope_counts() == {"s": {"memory": 3}}
    finally:
        await store.aclose()
