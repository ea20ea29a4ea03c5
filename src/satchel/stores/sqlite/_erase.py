"""Erasing records from the embedded store: every version of a record, or every record of
a scope, out of every table and the full-text index, with the pages that held them
overwritten, then out of the write-ahead log.

SQLite leaves deleted bytes behind in three places, and an erase clears each:

- **Pages.** A deleted row's bytes stay in its page's free space, and a freed page keeps
  its content on the free list. Every connection runs with ``secure_delete = FAST``, so
  what any write deletes inside a page is zeroed (``_connections``); the erase's own
  transaction runs with ``secure_delete = ON``, so the pages it frees are zeroed too;
  and it first overwrites every page already on the free list (:func:`scrub_free_pages`:
  a page freed under ``FAST`` keeps its content). A file written before satchel set
  ``FAST`` may hold old bytes in its pages' free space: its first erase rewrites the
  whole file once (``VACUUM``, :func:`purge`).
- **The full-text index.** FTS5 keeps a deleted row's tokens in its index segments (and
  writes them again in a delete marker) until segments are merged: the erase merges the
  family's index into one segment (``optimize``), which drops them, whatever the
  version of SQLite. Its ``secure-delete`` option (SQLite 3.42+) is not used: it would
  miss the tokens of versions retired before the erase, and a table once written with
  it cannot be read by an older SQLite ("invalid fts5 file format (found 5, expected
  4)"), which would lock the file out of the Pythons satchel supports.
- **The write-ahead log** holds the pages as they were before: once the erase committed,
  a truncating checkpoint copies the log into the file and empties it (:func:`purge`).

Every function but :func:`purge` runs inside the erase's write transaction.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Final

import attrs

from ...vocabulary._errors import StoreError
from .._rules import records_in, tombstone
from . import _schema as sql
from ._rows import retire

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable

    from ...vocabulary._families import Family

#: Truncating checkpoints an erase tries (each waits up to the busy timeout for readers).
CHECKPOINT_TRIES: Final = 3


@attrs.define
class Erasure:
    """What one erase removed: applied to the store's caches once it commits."""

    scope_id: str
    scope_key: int | None
    #: What the call returns: versions (one record) or records (a scope).
    erased: int = 0
    #: The erased rows per family, and how many of them were searchable.
    rows: dict[Family, list[int]] = attrs.Factory(dict)
    live: Counter[Family] = attrs.Factory(Counter)

    def all_rows(self) -> list[int]:
        return [row for rows in self.rows.values() for row in rows]


def scope_key_of(conn: sqlite3.Connection, scope_id: str) -> int | None:
    row = conn.execute("SELECT scope_key FROM scopes WHERE scope = ?", (scope_id,)).fetchone()
    return None if row is None else int(row[0])


def erase_record(
    conn: sqlite3.Connection, scope_id: str, family: Family, record_id: str | None
) -> Erasure:
    """Erase every version of one record (the profile when ``record_id`` is None)."""
    erasure = Erasure(scope_id, scope_key_of(conn, scope_id))
    scope_key = erasure.scope_key
    if scope_key is None:
        return erasure
    if record_id is None:
        if conn.execute("SELECT 1 FROM profiles WHERE scope_key = ?", (scope_key,)).fetchone():
            scrub_free_pages(conn)
            conn.execute("DELETE FROM profiles WHERE scope_key = ?", (scope_key,))
            erasure.erased = 1
        return erasure
    found = conn.execute(
        "SELECT row, live FROM records WHERE family = ? AND scope_key = ? AND rid = ?",
        (family, scope_key, record_id),
    ).fetchall()
    if not found:
        return erasure
    scrub_free_pages(conn)
    for row, live in found:
        if live:  # out of the full-text index and the term statistics
            retire(conn, family, row)
    merge_index(conn, [family])
    # A term no searchable record holds any more would still name it.
    conn.execute(
        "DELETE FROM term_stats WHERE family = ? AND scope_key = ? AND df <= 0",
        (family, scope_key),
    )
    rows = [row for row, _ in found]
    conn.executemany("DELETE FROM mentioned_days WHERE row = ?", ((row,) for row in rows))
    conn.executemany("DELETE FROM resource_bodies WHERE row = ?", ((row,) for row in rows))
    conn.executemany("DELETE FROM records WHERE row = ?", ((row,) for row in rows))
    erasure.rows[family] = rows
    erasure.live[family] = sum(bool(live) for _, live in found)
    erasure.erased = len(found)
    if family == "memory":
        _bury(conn, scope_id, [record_id])
    return _counted(conn, erasure)


def erase_scope(conn: sqlite3.Connection, scope_id: str) -> Erasure:
    """Erase every record of the scope, its profile included."""
    erasure = Erasure(scope_id, scope_key_of(conn, scope_id))
    scope_key = erasure.scope_key
    if scope_key is None:
        return erasure
    found = conn.execute(
        "SELECT family, row, live, rid FROM records WHERE scope_key = ?", (scope_key,)
    ).fetchall()
    profile = conn.execute("SELECT 1 FROM profiles WHERE scope_key = ?", (scope_key,)).fetchone()
    erasure.erased = records_in(((family, rid) for family, _, _, rid in found), bool(profile))
    if not erasure.erased:
        return erasure
    scrub_free_pages(conn)
    for family, row, live, _ in found:
        erasure.rows.setdefault(family, []).append(row)
        erasure.live[family] += bool(live)
    for family in erasure.rows:
        table = sql.FTS_TABLES[family]
        conn.execute(
            f"DELETE FROM {table} WHERE rowid IN (SELECT row FROM records"
            " WHERE family = ? AND scope_key = ? AND live = 1)",
            (family, scope_key),
        )
    merge_index(conn, erasure.rows)
    for statement in (
        "DELETE FROM term_stats WHERE scope_key = ?",
        "DELETE FROM mentioned_days WHERE scope_key = ?",
        "DELETE FROM resource_bodies WHERE row IN"
        " (SELECT row FROM records WHERE family = 'resource' AND scope_key = ?)",
        "DELETE FROM records WHERE scope_key = ?",
        "DELETE FROM profiles WHERE scope_key = ?",
    ):
        conn.execute(statement, (scope_key,))
    _bury(conn, scope_id, {rid for family, _, _, rid in found if family == "memory"})
    return _counted(conn, erasure)


def merge_index(conn: sqlite3.Connection, families: Iterable[Family]) -> None:
    """Merge each family's full-text index into one segment, after the erased rows left
    it: FTS5 keeps a deleted row's tokens in its segments (and writes them again in a
    delete marker) until a merge drops them, and ``optimize`` merges every segment."""
    for table in {sql.FTS_TABLES[family] for family in families}:
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")


def scrub_free_pages(conn: sqlite3.Connection) -> None:
    """Overwrite every page on the file's free list with zeros: a blob as large as the
    free list takes its pages (SQLite reuses free pages before it grows the file), and
    deleted under ``secure_delete = ON`` it gives them back zeroed."""
    (free,) = conn.execute("PRAGMA freelist_count").fetchone()
    if free:
        (size,) = conn.execute("PRAGMA page_size").fetchone()
        # An overflow page holds its page size less a 4-byte link.
        conn.execute("INSERT INTO meta VALUES ('scrub', zeroblob(?))", (free * (size - 4),))
        conn.execute("DELETE FROM meta WHERE key = 'scrub'")


def purge(conn: sqlite3.Connection) -> None:
    """After an erase committed: rewrite a file that may hold old deleted bytes once
    (``VACUUM``), then copy the write-ahead log into the file and truncate it.

    Raises:
        StoreError: another connection kept reading the log through every try; the
            records are erased from the tables, but the log still holds their pages
            until a later erase (or checkpoint) empties it.
    """
    (mode,) = conn.execute("PRAGMA journal_mode").fetchone()
    if str(mode).lower() != "wal":
        return  # ":memory:": no file
    clean = conn.execute("SELECT 1 FROM meta WHERE key = ?", (sql.CLEAN_PAGES,)).fetchone()
    if clean is None:
        conn.execute("VACUUM")
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, '1')", (sql.CLEAN_PAGES,))
    for _ in range(CHECKPOINT_TRIES):
        (busy, _, _) = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if not busy:
            return
    raise StoreError(
        "the records are erased from the database, but another connection kept reading"
        " its write-ahead log, which still holds their pages: erase again once it is done"
    )


def _bury(conn: sqlite3.Connection, scope_id: str, entry_ids: Iterable[str]) -> None:
    """Keep the tombstones of erased memory entries (``_rules.tombstone``)."""
    conn.executemany(
        "INSERT OR IGNORE INTO erased VALUES (?)",
        ((tombstone(scope_id, entry_id),) for entry_id in entry_ids),
    )


def _counted(conn: sqlite3.Connection, erasure: Erasure) -> Erasure:
    """Count the erase (a vector index built across it is discarded: ``_ann``), and keep
    the numbers of the rows it deleted from ever being given again (``sql.LAST_ROW``:
    SQLite numbers a new row past the highest one the table holds now)."""
    rows = erasure.all_rows()
    (left,) = conn.execute("SELECT coalesce(max(row), 0) FROM records").fetchone()
    if rows and max(rows) > left:
        conn.execute(
            "INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE"
            " SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
            (sql.LAST_ROW, max(rows)),
        )
    conn.execute(
        "INSERT INTO meta VALUES (?, '1') ON CONFLICT (key) DO UPDATE"
        " SET value = CAST(value AS INTEGER) + 1",
        (sql.ERASURES,),
    )
    return erasure
