"""The OceanBase store's vectors held in the process (``_vector_cache``): served only at
the write version the database confirms, bounded in bytes, one snapshot per retrieve."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import TYPE_CHECKING, Any

import anyio
import numpy as np
import pytest

import satchel
from satchel.stores import OceanBaseStore, PoolRequest
from satchel.stores.oceanbase import _held_texts, _search
from satchel.stores.oceanbase._vector_cache import HeldSets, ScopeVectors, parse
from satchel.stores.testing import memories
from satchel.vocabulary import analyse_query

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from satchel.vocabulary import Family, Pool

pytestmark = pytest.mark.anyio

#: Four orthogonal unit vectors: entry n is nearest to query n.
AXES = np.eye(4, dtype=np.float32)


@contextlib.asynccontextmanager
async def _two_stores(
    oceanbase: Callable[..., OceanBaseStore],
) -> AsyncIterator[tuple[OceanBaseStore, OceanBaseStore]]:
    """A writer and a reader over one database, both closed at the end."""
    writer, reader = oceanbase(), oceanbase()
    try:
        yield writer, reader
    finally:
        await writer.aclose()
        await reader.aclose()


def _request(text: str, axis: int, size: int = 8) -> PoolRequest:
    return PoolRequest(analyse_query(text), AXES[axis], size)


async def _vector_texts(store: OceanBaseStore, scope: str, pool: Pool) -> list[str]:
    """The texts of the pool's vector hits, best first; fails on a hit that is not a
    searchable record (a stale vector)."""
    keys = [int(key) for key in pool.vector_keys]
    found = await store.evidence("memory", scope, keys)
    assert set(found) == set(keys), f"vector hits no longer searchable: {set(keys) - set(found)}"
    return [found[key].text or "" for key in keys]


def _held(store: OceanBaseStore, scope: str) -> ScopeVectors | None:
    return store._vector_cache.get("memory", scope)


async def test_writes_forgets_and_erases_of_another_store_are_served_with_the_cache_warm(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    """Two stores on one database, the reader's vectors held: each write, forget, erase
    and scope erase of the writer is what the reader serves on its next call."""
    async with _two_stores(oceanbase) as (writer, reader):
        entries = [satchel.MemoryEntry(text=f"note {n}") for n in range(3)]
        refs = await memories(writer, "s", entries, AXES[:3])
        pool = await reader.retrieve("memory", "s", _request("note", 0))
        assert await _vector_texts(reader, "s", pool) == ["note 0", "note 1", "note 2"]
        held = _held(reader, "s")
        assert held is not None
        assert held.version == pool.version
        assert len(held) == 3

        await memories(writer, "s", [satchel.MemoryEntry(text="note 3")], AXES[3:])
        pool = await reader.retrieve("memory", "s", _request("note", 3))
        assert (await _vector_texts(reader, "s", pool))[0] == "note 3"
        patched = _held(reader, "s")
        assert patched is not None
        assert patched.version == pool.version
        assert len(patched) == 4
        assert len(held) == 3  # the set a search may still hold is unchanged

        await writer.forget_memory(refs[0])
        pool = await reader.retrieve("memory", "s", _request("note", 0))
        assert sorted(await _vector_texts(reader, "s", pool)) == ["note 1", "note 2", "note 3"]

        await writer.erase("memory", "s", refs[1].entry_id)
        pool = await reader.retrieve("memory", "s", _request("note", 1))
        assert sorted(await _vector_texts(reader, "s", pool)) == ["note 2", "note 3"]

        await writer.erase_scope("s")
        pool = await reader.retrieve("memory", "s", _request("note", 2))
        assert list(pool.vector_keys) == []
        # New keys after the scope's erasure: never appended to the vectors held before.
        await memories(writer, "s", [satchel.MemoryEntry(text="fresh note")], AXES[2:3])
        pool = await reader.retrieve("memory", "s", _request("note", 2))
        assert await _vector_texts(reader, "s", pool) == ["fresh note"]


async def test_kept_evidence_and_neighbours_follow_another_stores_writes(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    """Two stores on one database, the reader's evidence and thread neighbours kept
    from its last calls: a forget and a turn added by the writer are what the reader
    serves after its next retrieve (which reads the new write version)."""
    async with _two_stores(oceanbase) as (writer, reader):
        said = [satchel.MemoryEntry(text=f"Ana: kestrel note {n}", thread="chat") for n in range(3)]
        refs = await memories(writer, "s", said, AXES[:3])
        request = _request("kestrel note", 0)
        keys = [int(k) for k in (await reader.retrieve("memory", "s", request)).lexical_keys]
        first = await reader.evidence("memory", "s", keys)
        around = await reader.neighbours("memory", "s", keys)
        assert await reader.evidence("memory", "s", keys) == first  # kept
        assert await reader.neighbours("memory", "s", keys) == around  # kept

        forgotten = refs[1]
        assert isinstance(forgotten, satchel.MemoryRef)
        assert await writer.forget_memory(forgotten)
        await memories(
            writer, "s", [satchel.MemoryEntry(text="Ben: kestrel note 3", thread="chat")], AXES[3:]
        )
        pool = await reader.retrieve("memory", "s", request)
        now = [int(k) for k in pool.lexical_keys]
        texts = sorted(
            str(item.text) for item in (await reader.evidence("memory", "s", keys)).values()
        )
        assert texts == ["Ana: kestrel note 0", "Ana: kestrel note 2"]
        near = await reader.neighbours("memory", "s", now)
        found = await reader.evidence("memory", "s", now)
        by_text = {str(found[key].text): key for key in now}
        newest = by_text["Ben: kestrel note 3"]
        assert near[by_text["Ana: kestrel note 2"]].after == (newest,)
        assert near[by_text["Ana: kestrel note 0"]].after == (by_text["Ana: kestrel note 2"],)


async def test_held_texts_follow_another_stores_writes(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    """Two stores on one database, the reader's full-text postings held: after each
    add, forget, update and erase of the writer, the reader's next full-text search is
    the one a store holding nothing (the engine's search) gives, at the new version."""

    async def write(*texts: str) -> list[Any]:
        entries = [satchel.MemoryEntry(text=text) for text in texts]
        return list(await writer.write("memory", "s", entries, np.resize(AXES, (len(texts), 4))))

    async with _two_stores(oceanbase) as (writer, reader):
        refs = await write(*(f"kestrel note {n}" for n in range(4)), "heron")
        await _lexical(reader, "memory")
        versions = [_held_texts_version(reader, "memory")]
        await write("kestrel kestrel note 9")
        assert await writer.forget_memory(refs[0])
        await writer.update_memory(refs[1], satchel.MemoryEntry(text="a note"), AXES[:1])
        await writer.erase("memory", "s", refs[2].entry_id)
        for step in range(2):
            keys, scores = await _lexical(reader, "memory")
            versions.append(_held_texts_version(reader, "memory"))
            assert (keys, scores) == await _engines_lexical(oceanbase, "memory")
            found = await reader.evidence("memory", "s", keys)
            assert sorted(str(found[key].text) for key in keys) == [
                "a note", "kestrel kestrel note 9", "kestrel note 3",
            ]  # fmt: skip
            if step == 0:
                await write("heron 2")
        assert versions[0] < versions[1] < versions[2]
        assert await writer.erase_scope("s")
        assert (await _lexical(reader, "memory"))[0] == []
        assert reader._held_texts.get("memory", "s") is None  # no erased word kept


async def test_held_texts_follow_records_taken_out_of_search_without_vectors(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    """In a database with no vectors at all (experiences, no embedder bound), a new
    revision and an erase still move the scope's ``removed_at``: the reader's held
    postings lose the records taken out of search."""
    from satchel.stores.testing import records

    def lesson(key: str, text: str) -> satchel.Experience:
        return satchel.Experience(situation=text, action="", outcome="", lesson="", key=key)

    async with _two_stores(oceanbase) as (writer, reader):
        written = [lesson(key, f"kestrel note {key}") for key in "abc"]
        refs = await records(writer, "experience", "s", written)
        await _lexical(reader, "experience")
        held = _held_texts_version(reader, "experience")
        await records(writer, "experience", "s", [lesson("a", "heron only")])
        await writer.erase("experience", "s", refs[1].id)
        keys, scores = await _lexical(reader, "experience")
        assert (keys, scores) == await _engines_lexical(oceanbase, "experience")
        found = await reader.evidence("experience", "s", keys)
        assert [str(found[key].text).split("\n")[0] for key in keys] == [
            "Situation: kestrel note c"
        ]
        assert _held_texts_version(reader, "experience") > held  # patched, not read again


async def _lexical(store: OceanBaseStore, family: Family) -> tuple[list[int], list[float]]:
    pool = await store.retrieve(family, "s", _request("kestrel note", 0))
    return pool.lexical_keys.tolist(), pool.lexical_scores.tolist()


async def _engines_lexical(
    oceanbase: Callable[..., OceanBaseStore], family: Family
) -> tuple[list[int], list[float]]:
    """:func:`_lexical` on a new store that holds no terms: the engine's search."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_held_texts, "MOST_ROWS", 0)
        engine = oceanbase()
        try:
            return await _lexical(engine, family)
        finally:
            await engine.aclose()


def _held_texts_version(store: OceanBaseStore, family: Family) -> int:
    held = store._held_texts.get(family, "s")
    assert held is not None
    return held.version


async def test_the_cache_stays_within_its_bytes_over_many_scopes(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    """Twelve scopes searched through a cache with room for three: never more bytes held
    than the bound, the least recently used dropped, and every scope served right."""
    writer = oceanbase()
    one_scope = ScopeVectors.of(0, 0, np.zeros(1, np.int64), np.zeros((1, 4), np.float32))
    reader = oceanbase(vector_cache_bytes=3 * one_scope.nbytes)
    try:
        for n in range(12):
            await memories(writer, f"s{n}", [satchel.MemoryEntry(text=f"note {n}")], AXES[:1])
        for n in range(12):
            pool = await reader.retrieve("memory", f"s{n}", _request("note", 0))
            assert await _vector_texts(reader, f"s{n}", pool) == [f"note {n}"]
            assert reader._vector_cache.nbytes <= reader._vector_cache.max_bytes
        assert len(reader._vector_cache) == 3
        assert _held(reader, "s11") is not None
        assert _held(reader, "s0") is None
    finally:
        await writer.aclose()
        await reader.aclose()


async def test_held_texts_stay_within_their_bytes_over_many_scopes(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    """Twelve scopes' texts held within room for three: never more bytes held than the
    bound, the least recently searched dropped, every scope's search and evidence right;
    a scope whose texts alone outgrow the bound is left to the engine, not read again."""
    async with _two_stores(oceanbase) as (writer, reader):
        for n in range(12):
            note = satchel.MemoryEntry(text=f"kestrel note {n:02d}")
            await memories(writer, f"s{n}", [note], AXES[:1])
        await reader.retrieve("memory", "s0", _request("kestrel", 0))
        one = reader._held_texts.get("memory", "s0")
        assert one is not None
        reader._held_texts.max_bytes = 3 * one.nbytes
        for n in range(12):
            pool = await reader.retrieve("memory", f"s{n}", _request("kestrel", 0))
            found = await reader.evidence("memory", f"s{n}", pool.lexical_keys.tolist())
            assert [str(item.text) for item in found.values()] == [f"kestrel note {n:02d}"]
            assert reader._held_texts.nbytes <= reader._held_texts.max_bytes
        assert len(reader._held_texts) == 3
        assert reader._held_texts.get("memory", "s11") is not None
        assert reader._held_texts.get("memory", "s0") is None

        long = satchel.MemoryEntry(text="kestrel " + "word " * 600)
        await memories(writer, "big", [long], AXES[:1])
        for _ in range(2):
            pool = await reader.retrieve("memory", "big", _request("kestrel", 0))
            assert len(pool.lexical_keys) == 1
        assert reader._held_texts.get("memory", "big") is None
        assert ("memory", "big") in reader._texts_too_large


async def test_a_retrieve_during_a_write_sees_the_old_version_whole(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write commits while a retrieve has read the scope's state and vectors but not
    yet its full text: every channel of that retrieve serves the old version; the next
    serves the new one."""
    writer, reader = oceanbase(), oceanbase()
    (ref,) = await memories(writer, "s", [satchel.MemoryEntry(text="harbour lantern")], AXES[:1])
    request = _request("harbour lantern", 0)
    before = await reader.retrieve("memory", "s", request)  # the vectors are held
    paused, resume = threading.Event(), threading.Event()
    lexical = _search.lexical

    async def lexical_after_the_write(*args: Any, **kwargs: Any) -> Any:
        paused.set()
        await asyncio.get_running_loop().run_in_executor(None, resume.wait)
        return await lexical(*args, **kwargs)

    monkeypatch.setattr(_search, "lexical", lexical_after_the_write)
    pools: list[Pool] = []
    try:
        async with anyio.create_task_group() as group:

            async def retrieve() -> None:
                pools.append(await reader.retrieve("memory", "s", request))

            group.start_soon(retrieve)
            await anyio.to_thread.run_sync(paused.wait)
            entry = satchel.MemoryEntry(text="harbour lantern relit")
            await writer.update_memory(ref, entry, AXES[:1])
            resume.set()
        monkeypatch.setattr(_search, "lexical", lexical)
        (during,) = pools
        assert during.version == before.version
        assert list(during.lexical_keys) == list(during.vector_keys) == list(before.vector_keys)
        after = await reader.retrieve("memory", "s", request)
        assert after.version > before.version
        assert list(after.lexical_keys) == list(after.vector_keys) != list(before.vector_keys)
        assert await _vector_texts(reader, "s", after) == ["harbour lantern relit"]
    finally:
        resume.set()
        await writer.aclose()
        await reader.aclose()


def test_a_patch_leaves_the_set_it_extends_unchanged() -> None:
    """An extension appends past the held set's rows (or copies): a search over the older
    set sees its rows only; two extensions of one set do not see each other's rows."""
    base = ScopeVectors.of(1, 2, np.array([0, 1]), AXES[:2].copy())
    newer = base.extended(2, 3, np.array([2]), AXES[2:3])
    other = base.extended(3, 4, np.array([3]), AXES[3:4])
    assert base.nearest(AXES[2], 8)[0] == [0, 1] or base.nearest(AXES[2], 8)[0] == [1, 0]
    assert newer.nearest(AXES[2], 1) == ([2], [1.0])
    assert other.nearest(AXES[3], 1) == ([3], [1.0])
    assert 2 not in other.nearest(AXES[2], 8)[0]
    assert list(newer.similarities([2, 0, 9], AXES[2])) == [1.0, 0.0, -1.0]


def test_the_cache_drops_the_least_recently_used_over_its_bound() -> None:
    one = ScopeVectors.of(1, 1, np.array([0]), AXES[:1].copy())
    cache: HeldSets[ScopeVectors] = HeldSets(max_bytes=2 * one.nbytes)
    cache.put("memory", "a", one)
    cache.put("memory", "b", one)
    assert cache.get("memory", "a") is one  # now the most recently used
    cache.put("memory", "c", one)
    assert cache.get("memory", "b") is None
    assert cache.get("memory", "a") is one
    assert cache.nbytes == 2 * one.nbytes
    huge = ScopeVectors.of(1, 9, np.arange(9), np.zeros((9, 4), np.float32))
    cache.put("memory", "a", huge)  # larger than the bound: not held, the old set dropped
    assert cache.get("memory", "a") is None
    assert cache.nbytes == one.nbytes


async def test_a_large_scope_is_searched_by_the_engine_while_its_vectors_are_read(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scope above ``_load_now_rows`` whose vectors are not held: the search does not
    wait for them (the engine answers) while a background read holds them for the next
    search, which answers the same."""
    from satchel.stores.oceanbase import _store

    writer, reader = oceanbase(), oceanbase()
    reader._load_now_rows = 2
    release = threading.Event()

    def parse_when_released(*args: Any) -> Any:
        release.wait()
        return parse(*args)

    monkeypatch.setattr(_store, "parse_vectors", parse_when_released)
    try:
        entries = [satchel.MemoryEntry(text=f"note {n}") for n in range(3)]
        await memories(writer, "s", entries, AXES[:3])
        first = await reader.retrieve("memory", "s", _request("note", 1))
        assert await _vector_texts(reader, "s", first) == ["note 1", "note 0", "note 2"]
        assert _held(reader, "s") is None  # still being read
        release.set()
        await reader._bridge.run(reader._loads_done)
        held = _held(reader, "s")
        assert held is not None
        assert (held.version, len(held)) == (first.version, 3)
        again = await reader.retrieve("memory", "s", _request("note", 1))
        assert list(again.vector_keys) == list(first.vector_keys)
    finally:
        release.set()
        await writer.aclose()
        await reader.aclose()


@pytest.mark.slow
async def test_the_engine_ranks_apart_from_the_common_direction_as_held_vectors_do(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    """With no vectors held (the engine searches, as for a scope too large to hold),
    the vector and time channels rank a scope's records apart from its common
    direction, as the held vectors do; the sum the engine added up is kept for the
    scope's write version only, and an erase drops it."""
    texts = ("hello", "hi", "thanks", "pottery", "hiking")
    vectors = np.array(
        [[1, 0.1, 0, 0, 0], [1, 0, 0.3, 0, 0], [1, 0, 0, 0, 0.2], [0.5, 0, 0, 1, 0],
         [0.5, 0, 0, 0, 1]],
        dtype=np.float32,
    )  # fmt: skip
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = np.array([1, 0, 0, 0.35, 0], dtype=np.float32)
    query /= np.linalg.norm(query)
    orders = []
    for cache_bytes in (0, 1 << 20):
        store = oceanbase(vector_cache_bytes=cache_bytes)
        await store.bind_embedder("test", 5)
        await memories(store, "s", [satchel.MemoryEntry(text=t) for t in texts], vectors)
        pool = await store.retrieve("memory", "s", PoolRequest(analyse_query("x"), query, 3))
        orders.append(await _vector_texts(store, "s", pool))
        if cache_bytes == 0:
            assert store._vector_sums.get("memory", "s", pool.version) is not None
            await store.erase_scope("s")
            assert store._vector_sums.get("memory", "s", pool.version) is None
        await store.aclose()
    assert orders == [["pottery", "hello", "hi"]] * 2
