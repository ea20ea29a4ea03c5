"""The embedded store's conversation support: per-scope BM25, the time channel, thread
neighbours, and the migration of a version 1 database."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np
import pytest

import satchel
from satchel.stores import PoolRequest, SqliteStore, ThreadNeighbours
from satchel.stores.sqlite import _schema as sql
from satchel.stores.testing import memories
from satchel.vocabulary._analysis import analyse_query

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.anyio

EMBEDDER = satchel.HashingEmbedder()
MAY_8 = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)


async def add(
    store: SqliteStore, scope: str, entries: list[satchel.MemoryEntry]
) -> list[satchel.MemoryRef]:
    vectors = await EMBEDDER.embed([entry.text for entry in entries])
    return await memories(store, scope, entries, vectors)


async def rows_of(store: SqliteStore, scope: str, refs: list[satchel.MemoryRef]) -> list[int]:
    """The store keys of ``refs``, read the way a search reads them."""
    key = store._scope_keys[scope]
    conn = store._conns._writer
    found = dict(
        conn.execute(
            "SELECT rid, row FROM records WHERE scope_key = ? AND live = 1", (key,)
        ).fetchall()
    )
    return [found[ref.entry_id] for ref in refs]


def turn(text: str, minutes: int, thread: str | None = "t1") -> satchel.MemoryEntry:
    return satchel.MemoryEntry(
        text=text, created_at=MAY_8 + timedelta(minutes=minutes), thread=thread
    )


async def test_bm25_uses_the_scopes_own_term_statistics() -> None:
    """A term common in another, larger scope still counts as rare in this one: the
    candidate holding the scope's rare term ranks first."""
    store = await SqliteStore.open()
    # In "big", "lantern" is everywhere and "harbour" rare; globally "lantern" is common.
    await add(
        store, "big", [satchel.MemoryEntry(text=f"lantern festival note {n}") for n in range(300)]
    )
    small = [
        satchel.MemoryEntry(text="harbour harbour walk with friends"),
        satchel.MemoryEntry(text="lantern by the door"),
        *[satchel.MemoryEntry(text=f"harbour visit number {n}") for n in range(30)],
    ]
    await add(store, "small", small)
    pool = await store.retrieve(
        "memory", "small", PoolRequest(analyse_query("lantern harbour"), None, 16)
    )
    conn = store._conns._writer
    first = conn.execute("SELECT text FROM records WHERE row = ?", (int(pool.lexical_keys[0]),))
    # In "small", lantern (1 of 32) is the rare term; FTS5's global idf says harbour.
    assert first.fetchone()[0] == "lantern by the door"
    assert pool.lexical_scores.tolist() == sorted(pool.lexical_scores.tolist())
    await store.aclose()


async def test_a_query_date_selects_entries_recorded_in_its_window() -> None:
    """ "on 7 May 2023" finds what was said on 8 May (a day's margin), not a week later."""
    store = await SqliteStore.open()
    refs = await add(
        store,
        "c",
        [
            turn("Alice: I went to a pottery class yesterday!", 0),
            turn("Alice: the weather is nice", 60 * 24 * 7, thread="t2"),
            satchel.MemoryEntry(text="Alice: undated remark"),
        ],
    )
    rows = await rows_of(store, "c", refs)
    query = analyse_query("What did Alice do on 7 May 2023?")
    vector = (await EMBEDDER.embed([query.text]))[0]
    pool = await store.retrieve("memory", "c", PoolRequest(query, vector, 16))
    assert pool.time_keys.tolist() == [rows[0]]
    await store.aclose()


async def test_relative_dates_resolve_against_today_in_a_live_scope() -> None:
    """ "yesterday" in a live scope is the day before today."""
    store = await SqliteStore.open()
    refs = await add(
        store,
        "c",
        [
            turn("Bob: started reading a novel", 0),
            turn("Bob: finished the novel", 60 * 24 * 3, thread="t2"),
            turn("Bob: quiet day", 60 * 24 * 4, thread="t3"),
        ],
    )
    rows = await rows_of(store, "c", refs)
    now = (MAY_8 + timedelta(days=4, hours=2)).timestamp()  # 12 May: the scope is live
    request = PoolRequest(analyse_query("What did Bob do yesterday?"), None, 16, now)
    pool = await store.retrieve("memory", "c", request)
    # Today is 12 May; yesterday is 11 May, widened to 10..13 May.
    assert sorted(pool.time_keys.tolist()) == sorted(rows[1:])
    await store.aclose()


async def test_a_query_naming_no_date_has_no_time_channel() -> None:
    """No date in the query: the time channel is empty."""
    store = await SqliteStore.open()
    await add(store, "c", [turn("Alice: pottery class", 0)])
    pool = await store.retrieve(
        "memory", "c", PoolRequest(analyse_query("pottery class"), None, 16)
    )
    assert len(pool.time_keys) == 0
    await store.aclose()


async def test_neighbours_stay_in_their_thread_and_scope() -> None:
    """A record's neighbours are the turns just before and after it in its own thread,
    ordered by created_at then insertion; other threads, scopes and forgotten turns
    never appear."""
    store = await SqliteStore.open()
    refs = await add(
        store,
        "c",
        [
            turn("first", 0),
            turn("other thread", 1, thread="t2"),
            turn("third", 2),  # inserted before "second" but said later
            turn("second", 1),
            turn("no thread", 1, thread=None),
            turn("fourth", 3),
        ],
    )
    await add(store, "d", [turn("other scope", 1)])
    rows = await rows_of(store, "c", refs)
    first, other, third, second, lone, fourth = rows
    around = await store.neighbours("memory", "c", [second, first, lone, fourth])
    assert around == {
        second: ThreadNeighbours((first,), (third,)),
        first: ThreadNeighbours((), (second,)),
        fourth: ThreadNeighbours((third,), ()),
    }
    await store.forget_memory(refs[2])  # "third"
    around = await store.neighbours("memory", "c", [second])
    assert around == {second: ThreadNeighbours((first,), (fourth,))}
    assert other not in around
    await store.aclose()


async def test_turns_without_a_time_order_by_insertion_in_their_thread() -> None:
    """Within a thread, entries without created_at come first, in insertion order."""
    store = await SqliteStore.open()
    plain = [satchel.MemoryEntry(text=f"turn {n}", thread="t") for n in range(3)]
    refs = await add(store, "c", plain)
    rows = await rows_of(store, "c", refs)
    around = await store.neighbours("memory", "c", [rows[1]])
    assert around == {rows[1]: ThreadNeighbours((rows[0],), (rows[2],))}
    await store.aclose()


def without_quiet(conn: sqlite3.Connection) -> None:
    """Rewrite a current database's records in the layout of schema 8: no mark of the
    records that say nothing, and thread indexes without it."""
    conn.execute("DROP INDEX records_thread")
    conn.execute("DROP INDEX records_timeline")
    conn.execute("ALTER TABLE records DROP COLUMN quiet")
    conn.execute(
        "CREATE INDEX records_thread ON records (family, scope_key, thread, created_ts, row)"
        " WHERE live = 1 AND thread IS NOT NULL"
    )
    conn.execute(
        "CREATE INDEX records_timeline ON records (family, scope_key, created_ts, row)"
        " WHERE live = 1 AND thread IS NULL"
    )
    conn.execute("UPDATE meta SET value = '8' WHERE key = 'schema'")


def downgrade(path: Path, version: str) -> None:
    """Rewrite a current database in the layout of schema ``version``: 4 has no
    idempotency keys; 3 also no mentioned days; 2 also has FTS5 tables with a scope
    token column and bare terms; 1 also no record times."""
    with sqlite3.connect(path) as conn:
        without_quiet(conn)
        conn.execute("DROP INDEX records_caller_key_all")
        conn.execute("ALTER TABLE records DROP COLUMN caller_key")
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (version,))
        if version == "4":
            return
        conn.execute("DROP TABLE mentioned_days")
        if version == "3":
            return
        conn.execute("DROP INDEX records_time")
        conn.execute("DROP INDEX records_thread")
        conn.execute("DROP INDEX records_timeline")
        if version == "1":
            conn.execute("ALTER TABLE records DROP COLUMN created_ts")
        for table in ("fts_memory", "fts_experience", "fts_topic", "fts_resource"):
            rows = conn.execute(
                f"SELECT f.rowid, r.scope_key, f.terms FROM {table} f"
                " JOIN records r ON r.row = f.rowid"
            ).fetchall()
            conn.execute(f"DROP TABLE {table}")
            conn.execute(f"CREATE VIRTUAL TABLE {table} USING fts5(skey, terms)")
            conn.executemany(
                f"INSERT INTO {table} (rowid, skey, terms) VALUES (?, ?, ?)",
                [(row, f"s{key}", " ".join(t.split("x", 1)[1] for t in terms.split()))
                 for row, key, terms in rows],
            )  # fmt: skip


def as_schema_9(conn: sqlite3.Connection) -> None:
    """Rewrite a current database as schema 9 left it for these tests: no record marked
    (its rule knew neither fillers typed otherwise nor links)."""
    conn.execute("UPDATE records SET quiet = 0")
    conn.execute("UPDATE meta SET value = '9' WHERE key = 'schema'")


@pytest.mark.parametrize("thread", ["t1", None])
@pytest.mark.parametrize("downgrade", [without_quiet, as_schema_9])
async def test_an_older_database_marks_the_records_that_say_nothing(
    tmp_path: Path, thread: str | None, downgrade: Callable[[sqlite3.Connection], None]
) -> None:
    """Opening a schema 8 file (no mark) or a schema 9 file (marked by a rule that knew
    neither fillers typed otherwise, "hahahah", nor links shared alone or an app's
    reactions, however long)
    marks the records whose text says nothing and keeps the thread indexes holding the
    mark: the turns around them are each other's neighbours, in a thread and without
    one, as in a file written now."""
    path = tmp_path / "old.db"
    link = "Bo: https://open.spotify.com/track/4cOdK2wGLETKBW3PvgPWqT?si=" + "a1b2c3d4" * 8
    loved = "Bo: Loved \u201c" + "we adopted a cat and she is lovely " * 3 + "\u201d"
    said = [
        "Ana: we adopted a cat", "Bo: lol", "Bo: <Media omitted>", "Bo: hahahah", link,
        loved, "Bo: what is its name?",
    ]  # fmt: skip
    store = await SqliteStore.open(str(path))
    refs = await add(store, "c", [turn(text, n, thread) for n, text in enumerate(said)])
    await store.aclose()
    with sqlite3.connect(path) as conn:
        downgrade(conn)
    conn.close()
    store = await SqliteStore.open(str(path))
    cat, *quiet, name = await rows_of(store, "c", refs)
    around = await store.neighbours("memory", "c", [cat, name])
    assert around == {cat: ThreadNeighbours((), (name,)), name: ThreadNeighbours((cat,), ())}
    conn = store._conns._writer
    marked = conn.execute("SELECT row FROM records WHERE quiet = 1 ORDER BY row").fetchall()
    assert [row for (row,) in marked] == quiet
    index = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'records_thread'")
    assert "quiet" in index.fetchone()[0]
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0] == (
        sql.SCHEMA_VERSION
    )
    await store.aclose()


@pytest.mark.parametrize("version", ["1", "2", "3", "4"])
async def test_an_older_database_is_migrated(tmp_path: Path, version: str) -> None:
    """Opening a version 1 to 4 database adds what it lacks (record times, terms under
    their scope's prefix, the days texts name, idempotency keys): its entries then
    answer full text and the time channel, and a forget keeps the scope's statistics
    exact."""
    path = tmp_path / "old.db"
    store = await SqliteStore.open(str(path))
    refs = await add(store, "c", [turn("Alice: pottery class yesterday", 0), turn("hello", 1)])
    await add(store, "d", [turn("Bob: pottery wheel", 0)])
    await store.aclose()
    downgrade(path, version)
    store = await SqliteStore.open(str(path))
    rows = await rows_of(store, "c", refs)
    pool = await store.retrieve(
        "memory", "c", PoolRequest(analyse_query("on May 7, 2023"), None, 16)
    )
    assert pool.time_keys.tolist() == rows  # the turn naming 7 May ("yesterday") first
    pool = await store.retrieve("memory", "c", PoolRequest(analyse_query("pottery"), None, 16))
    assert pool.lexical_keys.tolist() == [rows[0]]
    await store.forget_memory(refs[0])
    conn = store._conns._writer
    found = conn.execute("SELECT df FROM term_stats WHERE term = 'potteri'").fetchall()
    assert sorted(df for (df,) in found) == [0, 1]  # "c" lost its one, "d" keeps its own
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0] == (
        sql.SCHEMA_VERSION
    )
    await store.aclose()


def test_similarities_of_chosen_rows() -> None:
    """The matrix scores just the rows asked for; unknown rows score -1."""
    from satchel.stores.sqlite._vectors import VectorMatrix

    vectors = np.eye(3, dtype=np.float32)
    matrix = VectorMatrix(3, np.array([10, 11, 12]), vectors)
    scores = matrix.similarities(np.array([12, 99, 10]), np.array([0, 0, 1], dtype=np.float32))
    assert scores.tolist() == [1.0, -1.0, 0.0]


async def test_a_window_holding_most_of_the_scope_is_not_a_channel() -> None:
    """ "in 2023" over a scope recorded entirely in 2023 selects nothing: not selective."""
    store = await SqliteStore.open()
    await add(store, "c", [turn(f"Alice: note {n}", 60 * 24 * n) for n in range(40)])
    pool = await store.retrieve(
        "memory", "c", PoolRequest(analyse_query("What did Alice do in 2023?"), None, 8)
    )
    assert pool.time_matched == 40
    assert pool.scope_rows == 40
    assert len(pool.time_candidates) == 0
    pool = await store.retrieve(
        "memory", "c", PoolRequest(analyse_query("on May 9, 2023"), None, 16)
    )
    assert len(pool.time_keys) == len(pool.time_candidates) == 3  # 8..10 May
    await store.aclose()


async def test_a_turn_naming_the_day_is_found_days_later_and_first() -> None:
    """ "I donated blood last Saturday" said on Friday 12 May names 6 May: "on 6 May"
    finds it although it was said six days later, ahead of what was said that day."""
    store = await SqliteStore.open()
    refs = await add(
        store,
        "c",
        [
            turn("Alice: chatting about lunch", 60 * 24 * -2),  # said on 6 May
            turn("Alice: I donated blood last Saturday", 60 * 24 * 4),  # said on 12 May
            turn("Alice: the weather is nice", 60 * 24 * 3),  # 11 May: neither
        ],
    )
    rows = await rows_of(store, "c", refs)
    query = analyse_query("What did Alice do on 6 May 2023?")
    vector = (await EMBEDDER.embed([query.text]))[0]
    await store.retrieve("memory", "c", PoolRequest(query, vector, 16))  # loads the matrix
    pool = await store.retrieve("memory", "c", PoolRequest(query, vector, 16))
    assert pool.time_keys.tolist() == [rows[1], rows[0]]
    await store.aclose()


async def test_a_scope_without_threads_is_never_asked_for_neighbours(tmp_path: Path) -> None:
    """Neighbours of an unthreaded scope cost no read; once a threaded entry is written,
    and after reopening the file, they are looked up."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    def lookups() -> int:
        return sum(s.name == "sqlite neighbours" for s in exporter.get_finished_spans())

    path = str(tmp_path / "t.db")
    store = await SqliteStore.open(path, tracer_provider=provider)
    refs = await add(store, "c", [satchel.MemoryEntry(text="plain note")])
    rows = await rows_of(store, "c", refs)
    assert await store.neighbours("memory", "c", rows) == {}
    assert lookups() == 0
    await add(store, "c", [turn("a turn", 0), turn("the next", 1)])
    await store.neighbours("memory", "c", rows)
    assert lookups() == 1
    await store.aclose()
    store = await SqliteStore.open(path, tracer_provider=provider)
    await store.neighbours("memory", "c", rows)
    assert lookups() == 2
    await store.aclose()
