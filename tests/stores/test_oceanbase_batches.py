"""The OceanBase store's batched writes: a batch's idempotency keys read in one statement
(``_rows.known_keys``) place every record as one read per record would."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import pytest

import satchel
from satchel.stores.testing import memories

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


class _Noted(satchel.MemoryEntry):
    """An entry that notes each thread reading its text."""

    readers: ClassVar[set[int]] = set()

    def __getattribute__(self, name: str) -> object:
        if name == "text":
            _Noted.readers.add(threading.get_ident())
        return super().__getattribute__(name)


async def test_a_writes_records_are_read_on_the_stores_own_loop(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    """The records of a write are made into columns on the store's own loop, not the
    caller's: for 36,187 notes that took 83 ms, the caller's loop held as long."""
    store = oceanbase()
    try:
        _Noted.readers.clear()
        entries = [_Noted(text=f"note {n}") for n in range(3)]
        refs = await store.write("memory", "s", entries, _vectors(3))
        assert len(refs) == 3
        assert _Noted.readers
        assert threading.get_ident() not in _Noted.readers
    finally:
        await store.aclose()
