"""Erasure leaves nothing behind where a store can reach: no file of the embedded store
(its database, write-ahead log and shared memory, its vector index folder) holds a byte
of an erased record's text or vector once ``erase`` returns, and no table of the
OceanBase store holds a row of it. What the OceanBase engine's own files keep until it
compacts them is described in docs/stores.md, not tested here."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import numpy as np
import pytest

import satchel
from satchel.stores import MemoryEntry, OceanBaseStore, PoolRequest, SqliteStore, index_text
from satchel.stores.sqlite._ann import AnnMatrix, sidecar_folder
from satchel.stores.testing import memories, records, set_profile
from satchel.vocabulary._analysis import analyse_query

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    import numpy.typing as npt

pytestmark = pytest.mark.anyio

DIMENSION = 64
AT = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
#: Words no other text holds: their bytes in a file can only be the erased record's.
SECRET = "zqxmarker quokkasecret"


def vectors(count: int, seed: int) -> npt.NDArray[np.float32]:
    """Dense random unit vectors: every window of their bytes is unique."""
    found = np.random.default_rng(seed).normal(size=(count, DIMENSION)).astype(np.float32)
    normed: npt.NDArray[np.float32] = found / np.linalg.norm(found, axis=1, keepdims=True)
    return normed


def needles(*rows: npt.NDArray[np.float32]) -> list[bytes]:
    """The secret's words, and three 16-byte windows of each vector's float32 bytes."""
    words = [word.encode() for word in SECRET.split()]
    return words + [row.tobytes()[at : at + 16] for row in rows for at in (0, 96, 200)]


def traces(path: Path, sought: Sequence[bytes]) -> dict[str, list[bytes]]:
    """Which of ``sought`` each file the store keeps holds: the database, every file
    beside it that starts with its name (``-wal``, ``-shm``), and its vector folder."""
    files = [found for found in path.parent.glob(f"{path.name}*") if found.is_file()]
    folder = sidecar_folder(str(path))
    if folder.exists():
        files += [found for found in folder.iterdir() if found.is_file()]
    held: dict[str, list[bytes]] = {}
    for file in files:
        data = file.read_bytes()
        if found := [needle for needle in sought if needle in data]:
            held[file.name] = found
    return held


def found_everywhere(held: dict[str, list[bytes]], sought: Sequence[bytes]) -> bool:
    """Whether every needle is in some file (so that the scan can see them at all)."""
    return {n for names in held.values() for n in names} == set(sought)


async def filler(store: SqliteStore, scope: str, count: int, seed: int) -> None:
    entries = [
        MemoryEntry(text=f"note {n} on kestrel harbour lantern {n % 7}", thread="t")
        for n in range(count)
    ]
    await memories(store, scope, entries, vectors(count, seed))


async def test_no_file_of_the_embedded_store_holds_an_erased_entry(tmp_path: Path) -> None:
    """Every version of an entry (updated, then forgotten, among many others; dated, in a
    thread, under a key) is gone from every file once erase returns: its text, analysed
    terms and vector bytes, from the tables, the full-text index, freed pages and the
    write-ahead log; other records stay readable."""
    path = tmp_path / "team.db"
    store = await SqliteStore.open(str(path))
    try:
        await filler(store, "s", 300, seed=1)
        first, second = vectors(2, seed=2)
        entry = MemoryEntry(text=f"Alice: {SECRET} on 9 May", created_at=AT, thread="t", key="k")
        (ref,) = await memories(store, "s", [entry], first[None])
        later = MemoryEntry(text=f"Alice: {SECRET} changed", created_at=AT, thread="t")
        ref2 = await store.update_memory(ref, later, second[None])
        await filler(store, "s", 200, seed=3)
        await store.forget_memory(ref2)
        sought = needles(first, second)
        assert found_everywhere(traces(path, sought), sought)
        assert await store.erase("memory", "s", ref.entry_id) == 2
        assert traces(path, sought) == {}
        assert (tmp_path / "team.db-wal").stat().st_size == 0
        assert len(await store.read_resource_bodies("s", [])) == 0
        pool = await store.retrieve("memory", "s", PoolRequest(analyse_query("kestrel"), None, 8))
        assert len(pool.lexical_keys) == 8
    finally:
        await store.aclose()
    assert traces(path, sought) == {}


async def test_no_file_holds_an_erased_scope(tmp_path: Path) -> None:
    """erase_scope of a scope holding every family (a resource's body and summaries, a
    topic memory, an experience, a profile, entries) leaves no byte of any of them in
    any file; another scope's records stay."""
    path = tmp_path / "team.db"
    store = await SqliteStore.open(str(path))
    try:
        await filler(store, "keep", 100, seed=4)
        (vector,) = vectors(1, seed=5)
        await memories(store, "s", [MemoryEntry(text=f"the {SECRET} note")], vector[None])
        await records(store, "experience", "s", [satchel.Experience(SECRET, "a", "o", "l")])
        await records(store, "topic-memory", "s", [satchel.TopicMemory("t", SECRET)], vector[None])
        resource = satchel.Resource("docs/s.md", body=SECRET, abstract=SECRET, overview="o")
        await records(store, "resource", "s", [resource], vector[None])
        await set_profile(store, "s", satchel.Profile(SECRET))
        sought = needles(vector)
        assert found_everywhere(traces(path, sought), sought)
        assert await store.erase_scope("s") == 5
        assert traces(path, sought) == {}
        assert (await store.scope_counts()) == {"keep": {"memory": 100}}
    finally:
        await store.aclose()


async def test_free_pages_holding_an_old_copy_are_overwritten(tmp_path: Path) -> None:
    """A page freed by an earlier write keeps its bytes on the file's free list (here the
    overflow pages of a long retired version, rewritten without its vector by a
    re-embedding): the erase overwrites every free page."""
    path = tmp_path / "team.db"
    store = await SqliteStore.open(str(path))
    try:
        long = " ".join([SECRET] * 800)  # beyond a page: overflow pages
        (ref,) = await memories(store, "s", [MemoryEntry(text=long)], vectors(1, seed=16))
        await store.update_memory(ref, MemoryEntry(text="short now"), vectors(1, seed=17))
        await store.reembed(satchel.HashingEmbedder(DIMENSION))
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA freelist_count").fetchone()[0] > 0
        conn.close()
        sought = needles()[:2]
        assert found_everywhere(traces(path, sought), sought)
        assert await store.erase("memory", "s", ref.entry_id) == 2
        assert traces(path, sought) == {}
    finally:
        await store.aclose()


async def test_a_file_from_before_zeroed_pages_is_rewritten_by_its_first_erase(
    tmp_path: Path,
) -> None:
    """A database written without zeroing what it deletes keeps old copies of a record in
    its pages' free space: its first erase rewrites the file (once), so they go too."""
    path = tmp_path / "old.db"
    store = await SqliteStore.open(str(path))
    await filler(store, "s", 50, seed=6)
    (ref,) = await memories(
        store, "s", [MemoryEntry(text=f"the {SECRET} note")], vectors(1, seed=7)
    )
    await store.aclose()
    with sqlite3.connect(path) as conn:  # as an older satchel wrote: no secure_delete
        conn.execute("PRAGMA secure_delete = OFF")
        conn.execute("DELETE FROM meta WHERE key = 'clean_pages'")
        conn.execute("UPDATE records SET tags = '[\"a longer value moves the row\"]'")
    conn.close()
    sought = needles()[:2]
    store = await SqliteStore.open(str(path))
    try:
        held = sum(path.read_bytes().count(n) for n in sought)
        assert held > 2  # the live row and at least one stale copy
        assert await store.erase("memory", "s", ref.entry_id) == 1
        assert traces(path, sought) == {}
    finally:
        await store.aclose()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'clean_pages'").fetchone()
    conn.close()


async def test_an_erase_deletes_the_vector_index_holding_its_vectors(tmp_path: Path) -> None:
    """A large scope searched through a vector index: erasing one of its records deletes
    the index files (they hold its vector), the scope is searched exactly meanwhile
    without it, and another scope's index stays."""
    path = tmp_path / "big.db"
    store = await SqliteStore.open(str(path))
    store._vectors.ann_rows = 500
    try:
        for scope, seed in (("s", 8), ("t", 9)):
            await filler(store, scope, 600, seed=seed)
        refs = await memories(store, "s", [MemoryEntry(text=SECRET)], vectors(1, seed=10))
        query = vectors(1, seed=10)[0]
        for scope in ("s", "t"):
            await store.retrieve("memory", scope, PoolRequest(analyse_query("x"), query, 4))
        assert await anyio.to_thread.run_sync(store._vectors.wait_for_builds, 60)
        await store.retrieve("memory", "s", PoolRequest(analyse_query("x"), query, 4))
        key = store._scope_keys["s"]
        assert isinstance(store._vectors.loaded("memory", key), AnnMatrix)
        folder = sidecar_folder(str(path))
        assert list(folder.glob(f"memory-{key}.*"))
        assert await store.erase("memory", "s", refs[0].entry_id) == 1
        assert list(folder.glob(f"memory-{key}.*")) == []
        assert list(folder.glob(f"memory-{store._scope_keys['t']}.*"))
        pool = await store.retrieve("memory", "s", PoolRequest(analyse_query("x"), query, 4))
        texts = await store.evidence("memory", "s", pool.vector_keys.tolist())
        assert len(texts) == 4
        assert SECRET not in {evidence.text for evidence in texts.values()}
    finally:
        await store.aclose()


async def test_another_store_on_the_file_stops_serving_an_erased_entry(tmp_path: Path) -> None:
    """A second store on the same file (as another process would be) that searched and
    cached an entry serves it no more after the first erased it, and says it was erased."""
    path = tmp_path / "shared.db"
    first, second = await SqliteStore.open(str(path)), await SqliteStore.open(str(path))
    try:
        (vector,) = vectors(1, seed=11)
        (ref,) = await memories(first, "s", [MemoryEntry(text=SECRET)], vector[None])
        request = PoolRequest(analyse_query(SECRET), vector, 4)
        pool = await second.retrieve("memory", "s", request)
        keys = pool.lexical_keys.tolist()
        assert len(await second.evidence("memory", "s", keys)) == 1
        version = second.scope_version("s")
        assert await first.erase("memory", "s", ref.entry_id) == 1
        again = await second.retrieve("memory", "s", request)
        assert (len(again.lexical_keys), len(again.vector_keys)) == (0, 0)
        assert second.scope_version("s") != version
        assert await second.evidence("memory", "s", keys) == {}
        with pytest.raises(satchel.NotFoundError, match="erased"):
            await second.get_memory(ref)
    finally:
        await first.aclose()
        await second.aclose()


# -- OceanBase ---------------------------------------------------------------------------


async def rows_of(store: OceanBaseStore, scope: str) -> dict[str, list[Any]]:
    """Every row of ``scope`` in each table of the store's database that keeps anything
    of a record, and every term row holding a word of the secret (read outside the store)."""
    from satchel.stores.oceanbase._bridge import LoopThread

    tables = ("records", "vectors", "mentions", "counts", "profiles")
    bridge = LoopThread("test-erase")

    async def work() -> dict[str, list[Any]]:
        import asyncmy

        conn = await asyncmy.connect(
            unix_socket=store._server["unix_socket"], user="root", db=store._database
        )
        found: dict[str, list[Any]] = {}
        try:
            async with conn.cursor() as cur:
                for table in tables:
                    await cur.execute(f"SELECT * FROM satchel_{table} WHERE scope = %s", (scope,))
                    found[table] = list(await cur.fetchall())
                terms = tuple(index_text(SECRET).split())
                await cur.execute("SELECT * FROM satchel_terms WHERE term IN %s", (terms,))
                found["terms"] = list(await cur.fetchall())
                await cur.execute("SELECT COUNT(*) FROM satchel_erased")
                found["tombstones"] = list(await cur.fetchall())
        finally:
            conn.close()
        return found

    try:
        return await bridge.run(work)
    finally:
        bridge.close()


async def test_no_table_of_the_oceanbase_store_holds_an_erased_record(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    """An erased entry (dated, updated, forgotten) leaves no row in the records, vectors,
    mentions or term tables, and the scope's counts drop to what is left; erase_scope
    then leaves no row of the scope in any table but its write version, and one
    tombstone per erased entry."""
    store = oceanbase()
    try:
        await memories(store, "s", [MemoryEntry(text="kestrel")], vectors(1, seed=12))
        entry = MemoryEntry(text=f"Alice: {SECRET} on 9 May", created_at=AT, thread="t", key="k")
        (ref,) = await memories(store, "s", [entry], vectors(1, seed=13))
        ref2 = await store.update_memory(ref, MemoryEntry(text=SECRET), vectors(1, seed=14))
        await store.forget_memory(ref2)
        before = await rows_of(store, "s")
        assert (len(before["records"]), len(before["mentions"])) == (3, 1)
        # Forgotten: counted 0 times, but a term's row would still name the record.
        assert [row[3] for row in before["terms"]] == [0, 0]
        assert await store.erase("memory", "s", ref.entry_id) == 2
        after = await rows_of(store, "s")
        assert [row[5] for row in after["records"]] == [1]  # the kestrel note, live
        assert (len(after["vectors"]), after["mentions"], after["terms"]) == (1, [], [])
        assert [row[2] for row in after["counts"]] == [1]  # live_rows
        await records(
            store, "resource", "s", [satchel.Resource("u", SECRET, SECRET)], vectors(1, 15)
        )
        await set_profile(store, "s", satchel.Profile(SECRET))
        assert len((await rows_of(store, "s"))["terms"]) == 2
        assert await store.erase_scope("s") == 3
        gone = await rows_of(store, "s")
        assert gone == {
            "records": [], "vectors": [], "mentions": [], "counts": [], "profiles": [],
            "terms": [], "tombstones": [(2,)],
        }  # fmt: skip
    finally:
        await store.aclose()
