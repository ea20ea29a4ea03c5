"""The OceanBase store's batched writes: a batch's idempotency keys read in one statement
(``_rows.known_keys``) place every record as one read per record would; a batch cut
into chunks, each derived a chunk ahead of its inserts (``_ahead``), writes what it
writes whole, or nothing."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import satchel
from satchel.stores.oceanbase import _ahead
from satchel.stores.oceanbase import _rows as rows
from satchel.stores.testing import memories

from .test_reanalysis import oceanbase_state

if TYPE_CHECKING:
    from collections.abc import Callable

    from satchel.stores import OceanBaseStore

pytestmark = pytest.mark.anyio


def _vectors(count: int) -> np.ndarray:
    return np.eye(count, 4, dtype=np.float32)


async def test_a_key_twice_in_one_batch_is_one_entry_at_its_second_version(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    store = oceanbase()
    try:
        entries = [
            satchel.MemoryEntry(text="kestrel moved to Lisbon", key="k1"),
            satchel.MemoryEntry(text="kestrel moved to Porto", key="k1"),
            satchel.MemoryEntry(text="heron stays in Faro", key="k2"),
            satchel.MemoryEntry(text="kestrel moved to Porto", key="k1"),
        ]
        first, second, other, again = await memories(store, "s", entries, _vectors(4))
        assert first.entry_id == second.entry_id != other.entry_id
        assert (first.version, second.version, other.version) == (1, 2, 1)
        assert again == second  # the same key and content: nothing written
        assert (await store.get_memory(first)).text == "kestrel moved to Lisbon"
        assert (await store.scope_counts())["s"]["memory"] == 2
    finally:
        await store.aclose()


async def test_keys_held_before_the_batch_place_its_records(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    """A live key with its content writes nothing, with new content a next version; a
    forgotten key with its content stays forgotten (read from the table)."""
    store = oceanbase()
    try:
        held = [
            satchel.MemoryEntry(text="alpha note", key="a"),
            satchel.MemoryEntry(text="beta note", key="b"),
        ]
        alpha, beta = await memories(store, "s", held, _vectors(2))
        await store.forget_memory(beta)
        batch = [
            satchel.MemoryEntry(text="alpha note", key="a"),
            satchel.MemoryEntry(text="beta note", key="b"),
            satchel.MemoryEntry(text="alpha note revised", key="a"),
            satchel.MemoryEntry(text="gamma note", key="c"),
        ]
        same, forgotten, revised, new = await memories(store, "s", batch, _vectors(4))
        assert same == alpha
        assert forgotten == beta
        assert (revised.entry_id, revised.version) == (alpha.entry_id, 2)
        assert new.version == 1
        assert new.entry_id not in {alpha.entry_id, beta.entry_id}
        assert (await store.scope_counts())["s"]["memory"] == 2
    finally:
        await store.aclose()


# -- records derived a chunk ahead of their statements (``_ahead``) ----------------------


def _chunked_batch() -> list[satchel.MemoryEntry]:
    """Seven entries over four chunks of two: a key written again with new content and
    again with the same content in later chunks, dated texts that name days, a thread."""
    said = datetime(2023, 5, 8, 12, tzinfo=UTC)
    return [
        satchel.MemoryEntry(text="kestrel moved to Lisbon yesterday", key="a", created_at=said),
        satchel.MemoryEntry(text="heron stays in Faro", thread="t1"),
        satchel.MemoryEntry(text="kestrel moved to Porto last month", key="a", created_at=said),
        satchel.MemoryEntry(text="owl visits Braga", key="b"),
        satchel.MemoryEntry(text="owl visits Braga", key="b"),
        satchel.MemoryEntry(text="heron flies over Faro", thread="t1"),
        satchel.MemoryEntry(text="kestrel moved to Porto last month", key="a", created_at=said),
    ]


async def test_a_batch_in_chunks_writes_what_one_chunk_writes(
    oceanbase: Callable[..., OceanBaseStore],
    new_oceanbase: Callable[..., OceanBaseStore],
    seekdb: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cut into chunks of two, a batch places its records in input order across the
    chunks and leaves every table as the same batch written whole."""
    whole, chunked = new_oceanbase(partitions=0), oceanbase()
    try:
        written = await memories(whole, "s", _chunked_batch(), _vectors(7))
        monkeypatch.setattr(_ahead, "CHUNK", 2)
        refs = await memories(chunked, "s", _chunked_batch(), _vectors(7))
        assert [(ref.version, ref.entry_id == refs[0].entry_id) for ref in refs] == [
            (ref.version, ref.entry_id == written[0].entry_id) for ref in written
        ]
        assert (refs[6], refs[4]) == (refs[2], refs[3])  # the same content: nothing new
        expected = await oceanbase_state(seekdb, whole._database)
        assert await oceanbase_state(seekdb, chunked._database) == expected
        assert (await chunked.get_memory(refs[0])).text == "kestrel moved to Lisbon yesterday"
    finally:
        await whole.aclose()
        await chunked.aclose()


async def test_a_failure_in_a_later_chunk_writes_nothing(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record of the second chunk fails to derive (in the worker) after the first
    chunk's inserts went to the engine: the write is rolled back whole, and the scope
    is written to again."""
    store = oceanbase()
    derive = rows.derive

    def failing(family: Any, columns: Any, vector: Any) -> rows.Derived:
        if columns.text == "owl visits Braga":
            raise ValueError("no analysis for owls")
        return derive(family, columns, vector)

    try:
        await memories(store, "s", [satchel.MemoryEntry(text="before the batch")], _vectors(1))
        monkeypatch.setattr(_ahead, "CHUNK", 2)
        monkeypatch.setattr(rows, "derive", failing)
        with pytest.raises(ValueError, match="owls"):
            await memories(store, "s", _chunked_batch(), _vectors(7))
        assert (await store.scope_counts())["s"]["memory"] == 1
        monkeypatch.setattr(rows, "derive", derive)
        refs = await memories(store, "s", _chunked_batch(), _vectors(7))
        assert (await store.scope_counts())["s"]["memory"] == 5
        assert (await store.get_memory(refs[1])).text == "heron stays in Faro"
    finally:
        await store.aclose()


async def test_the_next_chunk_is_derived_in_a_worker_while_the_engine_inserts(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first chunk is derived on the store's loop thread; the second, in a worker
    thread, is still being derived when the first chunk's inserts are sent (it waits for
    them: a write that derived it first would never send them, and the wait fails)."""
    store = oceanbase()
    derive, flush = rows.derive, rows.Write.flush
    sent = threading.Event()
    threads: dict[str, threading.Thread] = {}
    waited: list[bool] = []

    def watched(family: Any, columns: Any, vector: Any) -> rows.Derived:
        threads[columns.text] = threading.current_thread()
        if columns.text == "kestrel moved to Porto last month" and not waited:
            waited.append(sent.wait(timeout=30))
        return derive(family, columns, vector)

    async def flushed(write: rows.Write, cur: Any) -> None:
        sent.set()
        await flush(write, cur)

    try:
        monkeypatch.setattr(rows, "derive", watched)
        monkeypatch.setattr(rows.Write, "flush", flushed)
        await memories(store, "s", [satchel.MemoryEntry(text="first")], _vectors(1))
        loop_thread = threads["first"]  # a write of one chunk: all on the loop
        sent.clear()
        monkeypatch.setattr(_ahead, "CHUNK", 2)
        await memories(store, "s", _chunked_batch(), _vectors(7))
        assert waited == [True]
        assert threads["kestrel moved to Lisbon yesterday"] is loop_thread
        assert threads["heron flies over Faro"] is not loop_thread
    finally:
        await store.aclose()
