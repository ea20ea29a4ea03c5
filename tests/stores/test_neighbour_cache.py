"""The neighbour cache: a row's thread neighbours are read once while its scope is
unchanged, and never served after a write to the scope."""

from __future__ import annotations

import gc
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest

import satchel
from satchel.stores import SqliteStore
from satchel.stores._neighbour_cache import NeighbourCache
from satchel.stores.sqlite import _search
from satchel.stores.testing import EMBEDDER, every_key
from satchel.vocabulary import ThreadNeighbours
from tests._collector import tracked_within

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from pathlib import Path

DAY = datetime(2023, 5, 7, 14, 3, tzinfo=UTC)


def test_kept_neighbours_come_back_as_read_and_a_row_without_any_stays_absent() -> None:
    """A row found with neighbours comes back equal; a row the read did not find (not
    live, or in no thread) is known to have none: absent, and not read again."""
    cache = NeighbourCache()
    found = {1: ThreadNeighbours((4, 3), (5,)), 2: ThreadNeighbours((), (1,))}
    cache.remember("memory", "s", 2, 7, ([1, 2, 3], found))
    assert cache.split("memory", "s", 2, 7, [3, 1, 2, 9]) == (found, [9])
    assert len(cache) == 3


@pytest.mark.parametrize(
    ("family", "scope", "reach", "version"),
    [
        ("experience", "s", 2, 7),
        ("memory", "t", 2, 7),
        ("memory", "s", 1, 7),
        ("memory", "s", 2, 8),
    ],
)
def test_neighbours_are_kept_for_one_family_scope_reach_and_version(
    family: str, scope: str, reach: int, version: int
) -> None:
    """Another family, scope, reach or write version of the scope reads again."""
    cache = NeighbourCache()
    cache.remember("memory", "s", 2, 7, ([1], {1: ThreadNeighbours((2,), ())}))
    assert cache.split(family, scope, reach, version, [1]) == ({}, [1])  # type: ignore[arg-type]


def test_a_newer_version_replaces_the_scope_s_kept_rows() -> None:
    """Rows kept at an older version are dropped, not counted, once a newer one is kept."""
    cache = NeighbourCache()
    cache.remember("memory", "s", 1, 1, ([1, 2], {1: ThreadNeighbours((2,), ())}))
    cache.remember("memory", "s", 1, 2, ([3], {}))
    assert len(cache) == 1
    assert cache.split("memory", "s", 1, 2, [1, 3]) == ({}, [1])


def test_a_full_cache_drops_its_oldest_scopes_whole() -> None:
    cache = NeighbourCache(capacity=4)
    for scope in ("a", "b", "c"):
        cache.remember("memory", scope, 1, 0, ([1, 2], {}))
    assert len(cache) == 4
    assert cache.split("memory", "a", 1, 0, [1]) == ({}, [1])
    assert cache.split("memory", "c", 1, 0, [1, 2]) == ({}, [])


def test_kept_rows_are_nothing_the_garbage_collector_walks() -> None:
    """However many rows it keeps, the cache is a handful of tracked objects once a
    collection ran: each row's neighbours is a tuple of ints, not an object."""
    cache = NeighbourCache()
    found = {n: ThreadNeighbours((n + 1, n + 2), (n - 1,)) for n in range(500)}
    cache.remember("memory", "s", 2, 0, (list(found), found))
    del found
    gc.collect()
    assert tracked_within(cache) <= 4  # the cache, its places, a place and its rows


# -- in the store -----------------------------------------------------------------------


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncIterator[tuple[SqliteStore, satchel.Runtime]]:
    """A store (and the runtime writing it) whose scope ``s`` holds five turns of one
    thread, a day apart, in the order of their keys."""
    store = await SqliteStore.open(str(tmp_path / "n.db"))
    async with satchel.open_runtime(store=store, embedder=EMBEDDER) as rt:
        turns = [
            satchel.MemoryEntry(text=f"turn {n}", thread="t", created_at=DAY + timedelta(n))
            for n in range(0, 10, 2)
        ]
        await rt.add_memories("s", turns)
        await rt.add_memories("other", [satchel.MemoryEntry(text="elsewhere", thread="t")])
        yield store, rt


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """The rows of every neighbours read that reached the database."""
    read: list[list[int]] = []
    real = _search.thread_neighbours

    def counted(conn: object, family: str, key: int, rows: Sequence[int], reach: int) -> object:
        read.append(list(rows))
        return real(conn, family, key, rows, reach)  # type: ignore[arg-type]

    monkeypatch.setattr(_search, "thread_neighbours", counted)
    return read


@pytest.mark.anyio
async def test_neighbours_are_read_once_while_the_scope_is_unchanged(
    opened: tuple[SqliteStore, satchel.Runtime], reads: list[list[int]]
) -> None:
    """Asked again, the same rows come from the cache; only rows never asked are read."""
    store, _ = opened
    first, second, third, fourth, _ = sorted(await every_key(store))
    asked = await store.neighbours("memory", "s", [second, first])
    assert await store.neighbours("memory", "s", [second, first]) == asked
    assert asked == {
        second: ThreadNeighbours((first,), (third,)),
        first: ThreadNeighbours((), (second,)),
    }
    both = await store.neighbours("memory", "s", [first, third])
    assert both == {first: asked[first], third: ThreadNeighbours((second,), (fourth,))}
    assert reads == [[second, first], [third]]


@pytest.mark.anyio
async def test_a_write_to_the_scope_is_seen_by_the_next_read(
    opened: tuple[SqliteStore, satchel.Runtime], reads: list[list[int]]
) -> None:
    """A turn added between two kept rows becomes their neighbour at once; a write to
    another scope leaves the kept rows kept."""
    store, rt = opened
    first, second, *_ = before = sorted(await every_key(store))
    await store.neighbours("memory", "s", [first])
    await rt.add_memories("other", [satchel.MemoryEntry(text="more", thread="t")])
    assert await store.neighbours("memory", "s", [first]) == {
        first: ThreadNeighbours((), (second,))
    }
    assert len(reads) == 1
    between = satchel.MemoryEntry(text="a walk between", thread="t", created_at=DAY + timedelta(1))
    await rt.add_memories("s", [between])
    (new,) = set(await every_key(store)) - set(before)
    assert await store.neighbours("memory", "s", [first]) == {first: ThreadNeighbours((), (new,))}
    assert len(reads) == 2


@pytest.mark.anyio
async def test_neighbours_read_while_the_scope_was_written_are_not_kept(
    opened: tuple[SqliteStore, satchel.Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that lands during a read moves the scope's version: what that read found
    may predate the write, so the next look reads again."""
    store, _ = opened
    first = min(await every_key(store))
    read: list[int] = []
    real = _search.thread_neighbours

    def written_meanwhile(
        conn: object, family: str, key: int, rows: Sequence[int], reach: int
    ) -> object:
        read.append(1)
        store._versions["s"] += 1  # as a write's commit does
        return real(conn, family, key, rows, reach)  # type: ignore[arg-type]

    monkeypatch.setattr(_search, "thread_neighbours", written_meanwhile)
    await store.neighbours("memory", "s", [first])
    await store.neighbours("memory", "s", [first])
    assert read == [1, 1]
