"""The OceanBase store's layout since schema 6: vectors without an HNSW index unless asked
for (and the migration that drops it), and the full-text channel reading a scope's
holders unordered when their postings fit."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio
import numpy as np
import pytest

import satchel
from satchel.stores import OceanBaseStore, PoolRequest, StoreError, ThreadNeighbours
from satchel.stores.oceanbase import _held_texts, _schema, _search
from satchel.stores.testing import memories
from satchel.vocabulary import Family, analyse_query

from .test_oceanbase import admin

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

pytestmark = pytest.mark.anyio

BASIS = np.eye(4, dtype=np.float32)
#: A statement the engine refuses, with the full-text statements' five parameters.
BROKEN = "not even SQL %s %s %s %s %s"


async def _indexes(seekdb: str, database: str) -> set[str]:
    found = await admin(
        seekdb,
        "SELECT index_name FROM information_schema.statistics WHERE table_schema = %s"
        " AND table_name = 'satchel_vectors'",
        (database,),
    )
    return {name for (name,) in found}


async def _nearest_texts(store: OceanBaseStore, scope: str, axis: int) -> list[str | None]:
    pool = await store.retrieve("memory", scope, PoolRequest(analyse_query("x"), BASIS[axis], 4))
    found = await store.evidence("memory", scope, pool.vector_keys[:1].tolist())
    return [item.text for item in found.values()]


async def _seed(store: OceanBaseStore) -> None:
    """Eight notes along the first axis, then one along the last."""
    await store.bind_embedder("test", 4)
    notes = [satchel.MemoryEntry(text=f"note {n}") for n in range(8)]
    await memories(store, "s", notes, np.repeat(BASIS[:1], 8, 0))
    await memories(store, "s", [satchel.MemoryEntry(text="fresh")], BASIS[3:4])


async def test_the_vectors_have_no_hnsw_index_and_large_scopes_are_scanned_exactly(
    new_oceanbase: Callable[..., OceanBaseStore], seekdb: str
) -> None:
    """By default the vectors table is made without the HNSW index; a scope above
    ``exact_rows`` whose vectors the process does not hold is scanned exactly (the
    approximate statement is never sent); ``vector_index=True`` makes the index."""
    store = new_oceanbase(exact_rows=4, vector_cache_bytes=0)
    await _seed(store)
    assert await _indexes(seekdb, store._database) == {"PRIMARY"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_schema, "APPROXIMATE_NEAREST", "not even SQL")
        assert await _nearest_texts(store, "s", 3) == ["fresh"]
    await store.aclose()

    indexed = new_oceanbase(exact_rows=4, vector_index=True)
    await admin(seekdb, f"DROP TABLE {indexed._database}.satchel_vectors")
    await admin(seekdb, f"DELETE FROM {indexed._database}.satchel_meta WHERE name = 'dimension'")
    await memories(indexed, "t", [satchel.MemoryEntry(text="kept")], BASIS[:1])
    assert "by_vector" in await _indexes(seekdb, indexed._database)
    await indexed.aclose()


async def test_a_schema_5_database_loses_its_hnsw_index_and_keeps_its_vectors(
    new_oceanbase: Callable[..., OceanBaseStore], seekdb: str
) -> None:
    """A database at schema 5 (its vectors table with the HNSW index) opened by this
    store: the index is dropped, the schema is 6, every vector still searches, and a
    second open (another process that migrated too) finds nothing left to do."""
    store = new_oceanbase(exact_rows=4, vector_index=True)
    await _seed(store)
    await store.aclose()
    database = store._database
    assert "by_vector" in await _indexes(seekdb, database)
    await admin(seekdb, f"UPDATE {database}.satchel_meta SET value = '5' WHERE name = 'schema'")

    migrated = new_oceanbase(exact_rows=4, vector_cache_bytes=0)
    assert await _nearest_texts(migrated, "s", 3) == ["fresh"]
    assert await _nearest_texts(migrated, "s", 0) != ["fresh"]
    await migrated.aclose()
    assert await _indexes(seekdb, database) == {"PRIMARY"}
    rows = await admin(seekdb, f"SELECT value FROM {database}.satchel_meta WHERE name = 'schema'")
    assert rows == [(str(_schema.SCHEMA_VERSION),)]

    await admin(seekdb, f"UPDATE {database}.satchel_meta SET value = '5' WHERE name = 'schema'")
    again = new_oceanbase(vector_cache_bytes=0)  # the index is gone already: no fault
    assert await _nearest_texts(again, "s", 3) == ["fresh"]
    await again.aclose()


async def test_holders_whose_postings_fit_are_read_unordered_and_the_same(
    oceanbase: Callable[..., OceanBaseStore], seekdb: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query whose terms' postings fit the scan is answered by the unordered statement
    alone, and the pool is the same as the ordered statement's; when the scope's
    frequencies understate what the engine holds, the ordered statement is sent (the
    engine searches: the scope's terms are not held in the process)."""
    monkeypatch.setattr(_held_texts, "MOST_ROWS", 0)
    store = oceanbase()
    await store.bind_embedder("test", 4)
    texts = [f"kestrel survey note {n}" for n in range(6)] + ["heron count"]
    await memories(
        store, "s", [satchel.MemoryEntry(text=t) for t in texts], np.ones((7, 4), dtype=np.float32)
    )
    request = PoolRequest(analyse_query("kestrel survey"), None, 8)
    ordered = await store.retrieve("memory", "s", request)
    assert len(ordered.lexical_keys) == 6

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_schema, "HOLDERS", BROKEN)
        unordered = await store.retrieve("memory", "s", request)
    assert unordered.lexical_keys.tolist() == ordered.lexical_keys.tolist()
    assert unordered.lexical_scores.tolist() == ordered.lexical_scores.tolist()

    await admin(seekdb, f"UPDATE {store._database}.satchel_terms SET df = 1")  # understated
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_search, "POSTINGS_BUDGET", 3)  # 6 holders > 3, though df says 1
        patch.setattr(_schema, "HOLDERS", BROKEN)
        with pytest.raises(StoreError, match="retrieve failed"):  # the ordered one was sent
            await store.retrieve("memory", "s", PoolRequest(analyse_query("kestrel"), None, 2))
    await store.aclose()


def test_a_vector_literal_gives_back_its_float32_values_exactly() -> None:
    """The engine's text of a vector holds each value to the 9 digits that determine
    its float32: read back, every value is the one written, at any dimension."""
    from satchel.stores.oceanbase._rows import vector_literal

    rng = np.random.default_rng(5)
    for dimension in (1, 4, 256):
        values = (rng.standard_normal(dimension) * 10.0 ** rng.integers(-8, 8)).astype(np.float32)
        text = vector_literal(values)
        assert text.startswith("[")
        assert text.endswith("]")
        back = np.array([float(part) for part in text[1:-1].split(",")], dtype=np.float32)
        assert back.tolist() == values.tolist()
    assert vector_literal([0.5, -1.0]) == "[0.5,-1]"


async def test_a_family_the_scope_holds_nothing_of_is_answered_without_a_snapshot(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A retrieve of a family with no searchable record in the scope (or of a scope
    never written) is answered by the state's one statement: the snapshot's statements
    are never sent, and the pool carries the scope's write version. (A family it holds
    takes a snapshot when its texts are not held in the process.)"""
    monkeypatch.setattr(_held_texts, "MOST_ROWS", 0)
    store = oceanbase()
    await store.bind_embedder("test", 4)
    await memories(store, "s", [satchel.MemoryEntry(text="kestrel survey")], BASIS[:1])
    request = PoolRequest(analyse_query("kestrel"), BASIS[0], 8)
    written = await store.retrieve("memory", "s", request)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_schema, "SNAPSHOT", ("not even SQL",))
        empty = await store.retrieve("experience", "s", request)
        never = await store.retrieve("memory", "never written", request)
        with pytest.raises(StoreError, match="retrieve failed"):  # a family it holds
            await store.retrieve("memory", "s", request)
    assert len(written.lexical_keys) == 1
    assert (empty.version, len(empty.lexical_keys), len(empty.vector_keys)) == (
        written.version,
        0,
        0,
    )
    assert (never.version, never.scope_rows) == (0, 0)
    await store.aclose()


async def test_an_open_checks_every_table_in_one_statement(
    new_oceanbase: Callable[..., OceanBaseStore], seekdb: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An open reads every table the store uses in one statement, which still refuses a
    database missing one of them, naming it."""
    from satchel.stores.oceanbase import _store

    store = new_oceanbase()
    assert await store.scope_counts() == {}
    await store.aclose()
    assert _schema.ALL_KNOWN.count(" UNION ALL ") == len(_schema.TABLES) - 1
    await admin(seekdb, f"DROP TABLE {store._database}.satchel_mentions")
    monkeypatch.setattr(_store, "NEW_SCHEMA_WAIT", -1.0)
    broken = new_oceanbase()
    with pytest.raises(StoreError, match="satchel_mentions"):
        await broken.scope_counts()
    await broken.aclose()


class _Sent:
    """The statements a store sends, each ``execute`` as one entry (one round trip)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from satchel.stores.oceanbase._connections import Connections

        self.statements: list[str] = []
        connection = Connections.connection
        sent = self

        @contextlib.asynccontextmanager
        async def recorded(pool: Any, *, extra: bool = False) -> AsyncIterator[Any]:
            async with connection(pool, extra=extra) as conn:
                yield _RecordedConnection(conn, sent.statements)

        monkeypatch.setattr(Connections, "connection", recorded)


class _RecordedConnection:
    def __init__(self, conn: Any, statements: list[str]) -> None:
        self._conn, self._statements = conn, statements

    def cursor(self) -> Any:
        return _RecordedCursor(self._conn.cursor(), self._statements)


class _RecordedCursor:
    def __init__(self, cursor: Any, statements: list[str]) -> None:
        self._cursor, self._statements = cursor, statements

    async def __aenter__(self) -> _RecordedCursor:
        self._cursor = await self._cursor.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._cursor.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)

    async def execute(self, query: str, args: Any = None) -> Any:
        self._statements.append(query)
        return await self._cursor.execute(query, args)


async def test_a_retrieve_starts_its_snapshot_with_state_and_frequencies_in_one_round_trip(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A retrieve of a family the store last found holding records sends the snapshot's
    start with its state and the terms' frequencies together in one round trip, then
    only the full text's holders (the engine searches: the scope's terms are not held in
    the process) and the commit; a family not known to hold any sends the state alone
    first (an empty one is answered by it)."""
    monkeypatch.setattr(_held_texts, "MOST_ROWS", 0)
    store = oceanbase()
    await store.bind_embedder("test", 4)
    notes = [satchel.MemoryEntry(text=f"kestrel survey note {n}") for n in range(5)]
    await memories(store, "s", notes, np.repeat(BASIS[:1], 5, 0))
    request = PoolRequest(analyse_query("kestrel survey"), BASIS[0], 8)
    sent = _Sent(monkeypatch)
    await store.retrieve("memory", "s", request)  # the vectors held, the schema known
    assert sent.statements[0] == _schema.STATES
    sent.statements.clear()
    pool = await store.retrieve("memory", "s", request)
    first, *holders, commit = sent.statements
    assert first.startswith("; ".join(_schema.SNAPSHOT))
    assert _schema.STATE in first
    assert "satchel_terms" in first
    assert holders
    assert all("MATCH (terms)" in statement for statement in holders)
    assert commit == "COMMIT"
    assert len(pool.lexical_keys) == 5
    assert len(pool.vector_keys) == 5
    await store.aclose()


async def test_a_rare_terms_holders_come_from_the_read_of_every_holder(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the scope's frequencies let one statement read every holder of the query's
    terms, the rare term's holders past the pool (the rescue) are taken from that read:
    one full-text statement, the same pool (the contract check
    ``check_lexical_plan_rescues_every_holder_of_a_rare_term`` holds it for every
    store). The engine searches: the scope's terms are not held in the process."""
    monkeypatch.setattr(_held_texts, "MOST_ROWS", 0)
    store = oceanbase()
    await store.bind_embedder("test", 4)
    filler = " ".join(f"word{n}" for n in range(150))
    texts = [
        *[f"common common common {n}" for n in range(12)],
        *[f"rare {filler} {n}" for n in range(3)],
        *[f"unrelated {n}" for n in range(60)],
    ]
    notes = [satchel.MemoryEntry(text=text) for text in texts]
    await memories(store, "s", notes, np.repeat(BASIS[:1], len(notes), 0))
    request = PoolRequest(analyse_query("common rare"), None, 4)
    await store.retrieve("memory", "s", request)
    sent = _Sent(monkeypatch)
    pool = await store.retrieve("memory", "s", request)
    assert sum("MATCH (terms)" in statement for statement in sent.statements) == 1
    assert len(pool.lexical_keys) == 7
    found = await store.evidence("memory", "s", [int(k) for k in pool.lexical_keys])
    assert sorted(str(found[int(k)].text)[-1] for k in pool.lexical_keys[4:]) == ["0", "1", "2"]
    await store.aclose()


#: Texts whose terms the engine's parser would not split as satchel does: short words
#: (held as ``_ox_``), accents, digits, a word said twice.
HELD_TEXTS = (
    "an ox ran to the big red barn",
    "café crème at the barn, twice the barn",
    "kestrel survey 2024 of the red kestrel",
    "heron count by the river",
    *(f"note {n} about the river and a kestrel" for n in range(8)),
    *(f"filler line {n}" for n in range(20)),
)


async def _lexical(store: OceanBaseStore, query: str, size: int = 4) -> tuple[Any, ...]:
    pool = await store.retrieve("memory", "s", PoolRequest(analyse_query(query), None, size))
    return (
        pool.lexical_keys.tolist(),
        pool.lexical_scores.tolist(),
        pool.lexical_matches.tolist(),
        pool.common_terms,
        pool.held_terms,
    )


async def test_a_scope_whose_terms_are_held_is_searched_without_a_full_text_statement(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scope's texts read once are held in the process: its next retrieves send the
    scope's state alone (no snapshot, no full text), and find what the engine's
    full-text search finds, ranked alike (short words, accents, a rare term's rescue)."""
    store = oceanbase()
    await store.bind_embedder("test", 4)
    notes = [satchel.MemoryEntry(text=text) for text in HELD_TEXTS]
    await memories(store, "s", notes, np.repeat(BASIS[:1], len(notes), 0))
    queries = ("red barn ox", "café barn", "kestrel river", "heron kestrel note", "big to")
    await _lexical(store, queries[0])  # reads the scope's terms
    assert store._held_texts.get("memory", "s") is not None
    sent = _Sent(monkeypatch)
    held = [await _lexical(store, query) for query in queries]
    assert [statement for statement in sent.statements if "MATCH" in statement] == []
    assert sent.statements == [_schema.STATES] * len(queries)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_held_texts, "MOST_ROWS", 0)  # a store holding none: the engine's
        engine = oceanbase()
        searched = [await _lexical(engine, query) for query in queries]
        assert engine._held_texts.get("memory", "s") is None
    for mine, theirs in zip(held, searched, strict=True):
        assert mine[0] == theirs[0]
        assert mine[1] == pytest.approx(theirs[1], rel=1e-12)
        assert mine[2:] == theirs[2:]
    assert held[1][0]  # accents found
    assert held[4][0]  # short words found
    await store.aclose()
    await engine.aclose()


async def test_a_held_scope_reads_a_name_it_never_holds_once_per_version(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A question calling Ana "Anna" has the terms the scope holds starting with "a"
    read in a snapshot once at the scope's version (``Kept.spellings``); a held scope
    then answers such questions with its state alone, as it answers any other, and
    finds what the snapshot found. A write reads the terms again."""
    store = oceanbase()
    await store.bind_embedder("test", 4)
    said = [satchel.MemoryEntry(text=f"Ana: kestrel by the mill {n}") for n in range(5)]
    said += [satchel.MemoryEntry(text=f"Ben: river {n}") for n in range(5)]
    await memories(store, "s", said, np.repeat(BASIS[:1], len(said), 0))
    request = PoolRequest(analyse_query("Where did Anna see the kestrel?"), BASIS[0], 8)
    starts = request.name_starts({"kestrel": 5})  # "a", and her nicknames' ("h" Hannah...)
    assert starts[0] == "a"
    await _lexical(store, "kestrel")  # the scope's texts held
    sent = _Sent(monkeypatch)
    first = await store.retrieve("memory", "s", request)
    assert first.spelled_names == ("ana",)
    assert sum(_schema.TERMS_STARTING in statement for statement in sent.statements) == len(starts)
    sent.statements.clear()
    again = await store.retrieve("memory", "s", request)
    assert sent.statements == [_schema.STATES]
    assert again.spelled_names == first.spelled_names
    assert again.lexical_keys.tolist() == first.lexical_keys.tolist()
    assert again.vector_keys.tolist() == first.vector_keys.tolist()
    await memories(store, "s", said[:1], BASIS[:1])
    sent.statements.clear()
    assert (await store.retrieve("memory", "s", request)).spelled_names == ("ana",)
    assert sum(_schema.TERMS_STARTING in statement for statement in sent.statements) == len(starts)
    await store.aclose()


async def test_the_evidence_of_a_held_scope_is_served_without_a_statement(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a retrieve read the scope's texts at its version, the evidence of any of its
    keys is made from the rows held, rated with the held counts, with no statement: the
    same evidence a store holding nothing reads; a key no longer searchable is left out
    as a read leaves it."""
    store = oceanbase()
    await store.bind_embedder("test", 4)
    notes = [satchel.MemoryEntry(text=text) for text in HELD_TEXTS]
    refs = await memories(store, "s", notes, np.repeat(BASIS[:1], len(notes), 0))
    request = PoolRequest(analyse_query("kestrel river note"), BASIS[0], 8)
    pool = await store.retrieve("memory", "s", request)
    keys = [int(key) for key in pool.lexical_keys] + [int(key) for key in pool.vector_keys]
    sent = _Sent(monkeypatch)
    served = await store.evidence("memory", "s", keys)
    assert sent.statements == []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_held_texts, "MOST_ROWS", 0)  # a store holding nothing reads them
        reader = oceanbase()
        await reader.retrieve("memory", "s", request)
        read = await reader.evidence("memory", "s", keys)
    assert set(served) == set(keys)
    assert served == read
    gone = keys[0]
    texts = {str(served[gone].text)}
    assert await store.forget_memory(next(ref for ref, note in zip(refs, notes, strict=True)
                                          if note.text in texts))  # fmt: skip
    await store.retrieve("memory", "s", request)  # the held texts follow the forget
    sent.statements.clear()
    assert set(await store.evidence("memory", "s", keys)) == set(keys) - {gone}
    assert sent.statements == []
    await store.aclose()
    await reader.aclose()


async def test_the_thread_neighbours_of_a_held_scope_are_found_without_a_statement(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a retrieve read the scope's texts at its version, the neighbours of threaded
    keys come from the rows held (each thread by time, then key), with no statement:
    what a store holding nothing reads; a key without a thread has the engine asked."""
    store = oceanbase()
    await store.bind_embedder("test", 4)
    said = [
        *(satchel.MemoryEntry(text=f"Ana: kestrel {n}", thread="a") for n in range(5)),
        *(satchel.MemoryEntry(text=f"Ben: river {n}", thread="b") for n in range(3)),
        satchel.MemoryEntry(text="Cy: no thread kestrel"),
    ]
    await memories(store, "s", said, np.repeat(BASIS[:1], len(said), 0))
    request = PoolRequest(analyse_query("kestrel river"), BASIS[0], 16)
    pool = await store.retrieve("memory", "s", request)
    keys = sorted({int(key) for key in pool.vector_keys})
    threaded = [key for key in keys if key != max(keys)]  # the last one has no thread
    sent = _Sent(monkeypatch)
    near = await store.neighbours("memory", "s", threaded, reach=2)
    assert sent.statements == []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_held_texts, "MOST_ROWS", 0)  # a store holding nothing reads them
        reader = oceanbase()
        await reader.retrieve("memory", "s", request)
        read = await reader.neighbours("memory", "s", threaded, reach=2)
    assert near == read
    assert near[threaded[2]].before == (threaded[1], threaded[0])
    assert near[threaded[2]].after == (threaded[3], threaded[4])
    everyone = await store.neighbours("memory", "s", keys, reach=1)  # one without a thread
    assert sent.statements  # the engine was asked
    assert everyone == await reader.neighbours("memory", "s", keys, reach=1)
    await store.aclose()
    await reader.aclose()


@pytest.mark.parametrize("thread", ["a", None])
async def test_every_read_of_neighbours_passes_over_turns_that_say_nothing(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch, thread: str | None
) -> None:
    """From the rows held, from the threads read whole, and read around each key (a run
    of turns that say nothing longer than ``PASSED_SLACK`` read again, wider), a key's
    neighbours are the nearest turns that say something, in a thread or in the scope's
    turns without one; a link shared alone or an app's reaction says nothing, however long."""
    store = oceanbase()
    await store.bind_embedder("test", 4)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    link = "Ben: https://open.spotify.com/track/4cOdK2wGLETKBW3PvgPWqT?si=" + "a1b2c3d4" * 8
    said = [
        "Ana: we adopted a kestrel", *["Ben: lol", "Ben: <Media omitted>"] * 3, "Ben: lol",
        "Ben: Loved \u201c" + "what a lovely little bird you have there " * 3 + "\u201d",
        "Ben: hahahah", link, "Ben: what is the kestrel called?", "Ana: haha",
        "Ana: Kestrel Miso",
    ]  # fmt: skip
    entries = [
        satchel.MemoryEntry(text=text, thread=thread, created_at=start + timedelta(minutes=n))
        for n, text in enumerate(said)
    ]
    await memories(store, "s", entries, np.repeat(BASIS[:1], len(said), 0))
    request = PoolRequest(analyse_query("kestrel"), BASIS[0], 32)
    keys = sorted(int(key) for key in (await store.retrieve("memory", "s", request)).lexical_keys)
    text = {key: item.text for key, item in (await store.evidence("memory", "s", keys)).items()}
    adopted, called, miso = sorted(keys)  # the three turns naming the kestrel
    expected = {
        adopted: ThreadNeighbours((), (called, miso)),
        called: ThreadNeighbours((adopted,), (miso,)),
        miso: ThreadNeighbours((called, adopted), ()),
    }
    assert set(text.values()) == {said[0], said[11], said[13]}
    assert await store.neighbours("memory", "s", keys, reach=2) == expected
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_held_texts, "MOST_ROWS", 0)  # a store holding nothing reads them
        reader = oceanbase()
        await reader.retrieve("memory", "s", request)
        assert await reader.neighbours("memory", "s", keys, reach=2) == expected
        await reader.aclose()
        patch.setattr(_search, "THREAD_ROWS", 3)  # read around each key
        patch.setattr(_search, "PASSED_SLACK", 2)
        reader = oceanbase()
        await reader.retrieve("memory", "s", request)
        assert await reader.neighbours("memory", "s", keys, reach=2) == expected
        await reader.aclose()
    await store.aclose()


async def test_retrieves_asked_before_a_state_read_was_sent_share_it(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every family's state comes from one statement; a retrieve asked at or before the
    moment a read was sent takes its answer (a prepare's three families send one
    statement), and one asked after it sends its own, which sees a write made since."""
    from satchel.stores.oceanbase import _store

    store, writer = oceanbase(), oceanbase()
    await store.bind_embedder("test", 4)
    notes = [satchel.MemoryEntry(text=f"kestrel note {n}") for n in range(3)]
    await memories(store, "s", notes, np.repeat(BASIS[:1], 3, 0))
    request = PoolRequest(analyse_query("kestrel"), BASIS[0], 8)
    families: tuple[Family, ...] = ("memory", "experience", "topic-memory")
    for family in families:  # the texts held, every family's emptiness known
        await store.retrieve(family, "s", request)
    sent = _Sent(monkeypatch)
    moment = _store.now()
    with pytest.MonkeyPatch.context() as patch:  # every retrieve asked at the same moment
        patch.setattr(_store, "now", lambda: moment)
        pools = [await store.retrieve(family, "s", request) for family in families]
    assert sent.statements == [_schema.STATES]
    assert [len(pool.lexical_keys) for pool in pools] == [3, 0, 0]
    await memories(writer, "s", [satchel.MemoryEntry(text="kestrel note 3")], BASIS[:1])
    sent.statements.clear()
    later = await store.retrieve("memory", "s", request)  # asked after the read was sent
    assert sent.statements[0] == _schema.STATES
    assert later.version > pools[0].version
    assert len(later.lexical_keys) == 4
    await store.aclose()
    await writer.aclose()


class _Registering(dict):  # type: ignore[type-arg]
    """The store's scopes asked and waiting for a state read; ``all_asked`` is set once
    ``expected`` scopes were asked."""

    def __init__(self, expected: int) -> None:
        super().__init__()
        self.expected = expected
        self.all_asked = threading.Event()

    def setdefault(self, key: Any, default: Any = None) -> Any:
        found = super().setdefault(key, default)
        if len(self) >= self.expected:
            self.all_asked.set()
        return found


async def test_retrieves_of_several_scopes_asked_before_a_state_read_share_it(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prepare's scopes are searched at once: the first of their retrieves to read a
    state reads every asked scope's in one statement, and the others take their answers
    (each asked before it was sent); each pool is the one a retrieve of its own gives."""
    store, reader = oceanbase(), oceanbase()
    await store.bind_embedder("test", 4)
    scopes = ("a", "b", "c")
    for n, scope in enumerate(scopes):
        notes = [satchel.MemoryEntry(text=f"kestrel note {k}") for k in range(n + 1)]
        await memories(store, scope, notes, np.repeat(BASIS[:1], n + 1, 0))
    request = PoolRequest(analyse_query("kestrel"), BASIS[0], 8)
    alone = [await reader.retrieve("memory", scope, request) for scope in scopes]
    for scope in scopes:  # the texts held: a retrieve reads the state alone
        await store.retrieve("memory", scope, request)
    asked = _Registering(len(scopes))
    store._asked = asked
    read_states = store._scope_states

    async def once_all_asked(cur: Any, scope_id: str, asked_at: float) -> Any:
        assert await asyncio.to_thread(asked.all_asked.wait, 30)
        return await read_states(cur, scope_id, asked_at)

    monkeypatch.setattr(store, "_scope_states", once_all_asked)
    sent = _Sent(monkeypatch)
    pools: dict[str, Any] = {}

    async def retrieve(scope: str) -> None:
        pools[scope] = await store.retrieve("memory", scope, request)

    async with anyio.create_task_group() as group:
        for scope in scopes:
            group.start_soon(retrieve, scope)
    assert sent.statements == [_schema.STATES_OF.format(marks="%s, %s, %s")]
    for scope, own in zip(scopes, alone, strict=True):
        assert pools[scope].lexical_keys.tolist() == own.lexical_keys.tolist()
        assert pools[scope].version == own.version
    await store.aclose()
    await reader.aclose()


async def test_a_scope_emptied_since_its_last_search_is_answered_empty(
    oceanbase: Callable[..., OceanBaseStore],
) -> None:
    """The snapshot a known holder goes straight to reads the state again: once every
    record is erased the pool is empty, and the next search asks the state alone."""
    store = oceanbase()
    await store.bind_embedder("test", 4)
    notes = [satchel.MemoryEntry(text=f"kestrel survey note {n}") for n in range(3)]
    await memories(store, "s", notes, np.repeat(BASIS[:1], 3, 0))
    request = PoolRequest(analyse_query("kestrel survey"), BASIS[0], 8)
    assert len((await store.retrieve("memory", "s", request)).lexical_keys) == 3
    await store.erase_scope("s")
    emptied = await store.retrieve("memory", "s", request)
    assert emptied.scope_rows == 0
    assert not len(emptied.lexical_keys)
    assert not len(emptied.vector_keys)
    assert ("memory", "s") not in store._holding
    await store.aclose()


async def test_neighbours_are_read_once_per_scope_version(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Notes have no thread: the first neighbours read of the scope's version finds
    none and learns the scope holds no thread or turn; later reads at that version send
    nothing. A turn written moves the version: its neighbours are read, once, and kept
    while the version stands; a turn added to the thread moves it again, and the
    neighbours read then hold it."""
    store = oceanbase()
    await store.bind_embedder("test", 4)
    notes = [satchel.MemoryEntry(text=f"kestrel survey note {n}") for n in range(3)]
    await memories(store, "s", notes, np.repeat(BASIS[:1], 3, 0))
    request = PoolRequest(analyse_query("kestrel survey"), BASIS[0], 8)
    keys = [int(k) for k in (await store.retrieve("memory", "s", request)).lexical_keys]
    assert await store.neighbours("memory", "s", keys) == {}
    sent = _Sent(monkeypatch)
    assert await store.neighbours("memory", "s", keys) == {}
    assert sent.statements == []
    said = [
        satchel.MemoryEntry(text="Ana: the kestrel survey starts", thread="t"),
        satchel.MemoryEntry(text="Ben: kestrel survey, great", thread="t"),
    ]
    await memories(store, "s", said, np.repeat(BASIS[:1], 2, 0))
    pool = await store.retrieve("memory", "s", request)  # the new version seen
    turns = [int(k) for k in pool.lexical_keys if int(k) not in keys]
    around = await store.neighbours("memory", "s", turns)
    assert sent.statements
    assert {key for near in around.values() for key in (*near.before, *near.after)} == set(turns)
    sent.statements.clear()
    assert await store.neighbours("memory", "s", turns) == around
    assert sent.statements == []
    later = [satchel.MemoryEntry(text="Ana: kestrel survey done", thread="t")]
    await memories(store, "s", later, BASIS[:1])
    pool = await store.retrieve("memory", "s", request)
    (last,) = [int(k) for k in pool.lexical_keys if int(k) not in (*keys, *turns)]
    again = await store.neighbours("memory", "s", turns)
    assert sent.statements
    assert last in {key for near in again.values() for key in near.after}
    await store.aclose()


async def test_evidence_read_again_at_the_scope_version_sends_nothing(
    oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The evidence a read served is served again while the scope's write version, as
    the store's last search read it, stands: no statement. A forget moves the version;
    the next search sees it, and the forgotten entry is not served."""
    store = oceanbase()
    await store.bind_embedder("test", 4)
    notes = [satchel.MemoryEntry(text=f"Ana: kestrel survey note {n}") for n in range(3)]
    refs = await memories(store, "s", notes, np.repeat(BASIS[:1], 3, 0))
    request = PoolRequest(analyse_query("kestrel survey"), BASIS[0], 8)
    keys = [int(k) for k in (await store.retrieve("memory", "s", request)).lexical_keys]
    first = await store.evidence("memory", "s", keys)
    sent = _Sent(monkeypatch)
    again = await store.evidence("memory", "s", keys)
    assert sent.statements == []
    assert again == first
    assert all(item.rarity is not None for item in again.values())  # rated turns
    gone = refs[0]
    assert isinstance(gone, satchel.MemoryRef)
    assert await store.forget_memory(gone)
    await store.retrieve("memory", "s", request)  # the new version seen
    after = await store.evidence("memory", "s", keys)
    assert sent.statements
    assert sorted(str(item.text) for item in after.values()) == sorted(n.text for n in notes[1:])
    await store.aclose()


async def test_an_open_of_a_made_database_reads_no_information_schema(
    new_oceanbase: Callable[..., OceanBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store opening a database made at this schema version checks it in one round
    trip and finds its vectors' dimension there: it never reads ``information_schema``
    (75-108 ms a statement on seekdb), which a new database's open does."""
    made = new_oceanbase()
    await _seed(made)
    await made.aclose()
    monkeypatch.setattr(_schema, "EXISTING", "not even SQL %s")
    store = new_oceanbase()
    assert await _nearest_texts(store, "s", 3) == ["fresh"]
    assert store._dimension == 4
    assert not store._indexed
    await store.aclose()

    monkeypatch.setattr(_schema, "SCHEMA_VERSION", _schema.SCHEMA_VERSION + 1)
    newer = new_oceanbase()  # not at this version: the whole path, which reads it
    with pytest.raises(StoreError, match="not even SQL"):
        await newer.scope_counts()
    await newer.aclose()


async def test_a_database_whose_vectors_table_is_gone_still_opens(
    new_oceanbase: Callable[..., OceanBaseStore], seekdb: str
) -> None:
    """A made database that records a vector dimension but has no vectors table (dropped
    by hand) opens, without the HNSW index, and lists its scopes."""
    made = new_oceanbase()
    await _seed(made)
    await made.aclose()
    await admin(seekdb, f"DROP TABLE {made._database}.satchel_vectors")
    store = new_oceanbase()
    assert (await store.scope_counts())["s"]["memory"] == 9
    assert not store._indexed
    await store.aclose()
