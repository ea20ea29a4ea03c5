"""Writing records as rows of the embedded store: inserts, retirements, revisions and
the per-scope term statistics that follow them. Runs inside one write transaction."""

from __future__ import annotations

import sqlite3
import uuid
from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

import attrs

from ..vocabulary._analysis import index_text
from ..vocabulary._dates import mentioned_days
from ..vocabulary._errors import NotFoundError, StoreError
from ..vocabulary._turns import PIECE_CHARS, let_loop_in, pieces
from . import _sqlite_schema as sql

if TYPE_CHECKING:
    from ..vocabulary._families import Family
    from ..vocabulary._records import MemoryEntry, MemoryRef

#: Records re-analysed per round trip of :func:`reanalyse`.
_REANALYSE_BATCH: Final = 4096


@attrs.frozen
class Written:
    """What one write transaction changed, applied to memory after it commits."""

    scope_id: str
    scope_key: int
    family: Family
    refs: list[Any]
    added_rows: list[int] = attrs.Factory(list)
    removed_rows: list[int] = attrs.Factory(list)


def require_features(conn: sqlite3.Connection) -> None:
    """Fail clearly when this SQLite lacks what the store uses: FTS5 and JSON functions.

    Raises:
        StoreError: naming the missing feature and the SQLite version.
    """
    for feature, probe in (
        ("FTS5", "SELECT sqlite_compileoption_used('ENABLE_FTS5') OR EXISTS"
         " (SELECT 1 FROM pragma_module_list WHERE name = 'fts5')"),
        ("JSON functions", "SELECT json_array(1)"),
    ):  # fmt: skip
        try:
            available = conn.execute(probe).fetchone()[0]
        except sqlite3.Error:
            available = None
        if not available:
            raise StoreError(
                f"this SQLite ({sqlite3.sqlite_version}) lacks {feature}, which the embedded"
                " store needs; use a Python whose sqlite3 module has them (3.38+ has both)"
            )


def create_schema(
    conn: sqlite3.Connection,
) -> tuple[dict[str, int], int | None, dict[tuple[Family, int], int], set[int]]:
    require_features(conn)
    _refuse_foreign(conn)
    _run(conn, sql.DDL)
    for table in sql.FTS_TABLES.values():
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        if not exists:
            for statement in sql.FTS_DDL.format(table=table).split(";"):
                if statement.strip():
                    conn.execute(statement)
    found = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    if found is None:
        conn.execute("INSERT INTO meta VALUES ('schema', ?)", (sql.SCHEMA_VERSION,))
    elif found[0] in ("1", "2", "3", "4", "5"):
        if found[0] == "1":
            _migrate_from_1(conn)
        if found[0] in ("1", "2"):
            _migrate_from_2(conn)
        if found[0] in ("1", "2", "3"):
            _migrate_from_3(conn)
        if found[0] in ("1", "2", "3", "4"):
            _migrate_from_4(conn)
        _migrate_from_5(conn)
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (sql.SCHEMA_VERSION,))
    elif found[0] != sql.SCHEMA_VERSION:
        raise StoreError(f"database schema {found[0]} is not {sql.SCHEMA_VERSION}")
    _run(conn, sql.INDEXES)
    return load_state(conn)


def load_state(
    conn: sqlite3.Connection,
) -> tuple[dict[str, int], int | None, dict[tuple[Family, int], int], set[int]]:
    """What the store keeps in memory: scope keys, the vector dimension, searchable
    records per family and scope, and the scopes holding threaded entries."""
    scopes = dict(conn.execute("SELECT scope, scope_key FROM scopes").fetchall())
    row = conn.execute("SELECT length(embedding) FROM records WHERE embedding IS NOT NULL LIMIT 1")
    size = row.fetchone()
    counts = {
        (family, key): df
        for family, key, df in conn.execute(
            "SELECT family, scope_key, df FROM term_stats WHERE term = ?", (sql.DOCUMENTS,)
        )
    }
    threaded = {
        key
        for (key,) in conn.execute(
            "SELECT DISTINCT scope_key FROM records"
            " WHERE family = 'memory' AND live = 1 AND thread IS NOT NULL"
        )
    }
    return scopes, None if size is None else int(size[0]) // 4, counts, threaded


def _refuse_foreign(conn: sqlite3.Connection) -> None:
    """Refuse a SQLite file another application made: satchel never writes into it.

    Raises:
        StoreError: the file holds tables but no satchel schema record.
    """
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return  # a new, empty database
    schema = None
    if "meta" in tables:
        schema = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    if schema is None:
        shown = ", ".join(sorted(tables)[:5])
        raise StoreError(
            f"this SQLite file belongs to another application (tables {shown}); open a"
            " new path for satchel, which never writes into another application's file"
        )


def _run(conn: sqlite3.Connection, script: str) -> None:
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def _migrate_from_1(conn: sqlite3.Connection) -> None:
    """Version 2 added each record's sortable time (``created_ts``)."""
    conn.execute(f"ALTER TABLE records ADD COLUMN created_ts REAL NOT NULL DEFAULT {sql.NO_TIME}")
    dated = conn.execute("SELECT row, created_at FROM records WHERE created_at IS NOT NULL")
    conn.executemany(
        "UPDATE records SET created_ts = ? WHERE row = ?",
        [(datetime.fromisoformat(at).timestamp(), row) for row, at in dated.fetchall()],
    )


def _migrate_from_2(conn: sqlite3.Connection) -> None:
    """Version 3 indexes each term with its scope's prefix instead of a scope token
    column: every FTS5 table is rebuilt from its own rows."""
    conn.create_function("satchel_scoped", 2, sql.scoped_terms, deterministic=True)
    for table in sql.FTS_TABLES.values():
        _run(conn, sql.FTS_DDL.format(table=f"{table}_v3"))
        conn.execute(
            f"INSERT INTO {table}_v3 (rowid, terms) SELECT f.rowid, satchel_scoped(r.scope_key,"
            f" f.terms) FROM {table} f JOIN records r ON r.row = f.rowid"
        )
        conn.execute(f"DROP TABLE {table}")
        conn.execute(f"ALTER TABLE {table}_v3 RENAME TO {table}")
    conn.execute("DELETE FROM term_stats WHERE term = ' length'")  # version 2's lengths


def _migrate_from_3(conn: sqlite3.Connection) -> None:
    """Version 4 records the days each dated memory's text names."""
    dated = conn.execute(
        "SELECT row, scope_key, text, created_at FROM records"
        " WHERE family = 'memory' AND created_at IS NOT NULL"
    )
    for row, key, text, created_at in dated.fetchall():
        record_mentions(conn, row, key, text, datetime.fromisoformat(created_at))


def _migrate_from_4(conn: sqlite3.Connection) -> None:
    """Version 5 keeps each record's idempotency key (none for records written before)."""
    conn.execute("ALTER TABLE records ADD COLUMN caller_key TEXT")


def _migrate_from_5(conn: sqlite3.Connection) -> None:
    """Version 6 analyses text with a lemmatiser before the stemmer ("bought" meets
    "buy"): everything derived from record text is derived again."""
    reanalyse(conn)


def reanalyse(conn: sqlite3.Connection) -> None:
    """Derive again, with this code, everything the store keeps from record text: each
    FTS5 table's terms (searchable records), the term statistics, and the days memory
    texts name. The migration of any change to analysis or date extraction.

    Runs in the caller's transaction. Python work is one ``index_text`` (and, for a
    dated memory, one ``mentioned_days``) per record; rows go to SQLite in batches.
    """
    for table in sql.FTS_TABLES.values():  # a fresh table: faster than deleting rows
        conn.execute(f"DROP TABLE {table}")
        _run(conn, sql.FTS_DDL.format(table=table))
    conn.execute("DELETE FROM term_stats")
    conn.execute("DELETE FROM mentioned_days WHERE family = 'memory'")
    frequencies: Counter[tuple[str, int, str]] = Counter()
    records = conn.execute(
        "SELECT row, family, scope_key, live, text, abstract, overview, created_at"
        " FROM records WHERE live = 1 OR (family = 'memory' AND created_at IS NOT NULL)"
    )
    while batch := records.fetchmany(_REANALYSE_BATCH):
        indexed: dict[Family, list[tuple[int, str]]] = {}
        mentions: list[tuple[Any, ...]] = []
        for row, family, key, live, text, abstract, overview, created_at in batch:
            if live:
                terms = index_text(searchable(text, abstract, overview))
                indexed.setdefault(family, []).append((row, sql.scoped_terms(key, terms)))
                frequencies.update((family, key, term) for term in counted(terms))
            if family == "memory" and created_at is not None:
                mentions += mention_rows(row, key, text, datetime.fromisoformat(created_at))
        for family, values in indexed.items():
            table = sql.FTS_TABLES[family]
            conn.executemany(f"INSERT INTO {table} (rowid, terms) VALUES (?, ?)", values)
        conn.executemany(sql.INSERT_MENTION, mentions)
    conn.executemany(
        "INSERT INTO term_stats (family, scope_key, term, df) VALUES (?, ?, ?, ?)",
        [(*family_scope_term, df) for family_scope_term, df in frequencies.items()],
    )


def searchable(text: str | None, abstract: str | None, overview: str | None) -> str:
    """What a record is indexed on: its text (a memory, experience or topic memory), or
    a resource's abstract and overview (its body is read, never searched)."""
    if text is not None:
        return text
    return " ".join(filter(None, (abstract, overview)))


def keyed(
    conn: sqlite3.Connection, family: Family, key: int, caller_key: str, columns: str
) -> tuple[Any, ...] | None:
    """The live record of ``family`` in the scope with this idempotency key: its row, id
    and revision, then ``columns`` (to tell whether a write changes anything)."""
    found: tuple[Any, ...] | None = conn.execute(
        f"SELECT row, rid, revision, {columns} FROM records"
        " WHERE family = ? AND scope_key = ? AND caller_key = ? AND live = 1",
        (family, key, caller_key),
    ).fetchone()
    return found


def keyed_version(
    conn: sqlite3.Connection,
    written: Written,
    caller_key: str | None,
    columns: str,
    content: tuple[Any, ...],
) -> tuple[str, int, bool] | None:
    """What an idempotency key makes of a write: None when no live record of the
    family holds it (a new record), ``(id, revision, False)`` when the live one holds
    exactly ``content`` (nothing to write), ``(id, next revision, True)`` when it holds
    other content (retired here; the caller writes the next revision)."""
    if caller_key is None:
        return None
    found = keyed(conn, written.family, written.scope_key, caller_key, columns)
    if found is None:
        return None
    row, rid, revision, *stored = found
    if tuple(stored) == content:
        return rid, revision, False
    retire(conn, written.family, row)
    written.removed_rows.append(row)
    return rid, revision + 1, True


def record_mentions(
    conn: sqlite3.Connection, row: int, key: int, text: str, created_at: datetime | None
) -> None:
    """Keep the days a memory's text names, resolved against the day it was said."""
    if created_at is not None:
        conn.executemany(sql.INSERT_MENTION, mention_rows(row, key, text, created_at))


def mention_rows(row: int, key: int, text: str, created_at: datetime) -> list[tuple[Any, ...]]:
    """The ``mentioned_days`` rows of a dated memory."""
    said_on = created_at.astimezone(UTC).date()
    return [(row, "memory", key, start, end) for start, end in mentioned_days(text, said_on)]


def scope_key(conn: sqlite3.Connection, scope_id: str) -> int:
    conn.execute("INSERT OR IGNORE INTO scopes (scope) VALUES (?)", (scope_id,))
    row = conn.execute("SELECT scope_key FROM scopes WHERE scope = ?", (scope_id,)).fetchone()
    return int(row[0])


def insert(
    conn: sqlite3.Connection,
    family: Family,
    key: int,
    rid: str,
    revision: int,
    terms: str,
    **columns: Any,
) -> int:
    values = (
        family, key, rid, revision, columns.get("text"), columns.get("kind"),
        columns.get("tags"), columns.get("created_at"), columns.get("created_ts", sql.NO_TIME),
        columns.get("thread"),
        columns.get("title"), columns.get("abstract"), columns.get("overview"),
        columns.get("embedding"), columns.get("caller_key"),
    )  # fmt: skip
    row = conn.execute(sql.INSERT_RECORD, values).lastrowid
    assert row is not None
    table = sql.FTS_TABLES[family]
    conn.execute(
        f"INSERT INTO {table} (rowid, terms) VALUES (?, ?)", (row, sql.scoped_terms(key, terms))
    )
    count_terms(conn, family, key, terms, +1)
    let_loop_in()  # a batch of thousands is seconds of Python in the write thread
    return row


def count_terms(conn: sqlite3.Connection, family: Family, key: int, terms: str, step: int) -> None:
    """Keep the scope's document frequencies in step with what is searchable."""
    # A generator, not a list: SQLite takes each row as it steps, giving the GIL back
    # between rows (a 1 MB text has tens of thousands of distinct terms).
    conn.executemany(sql.COUNT_TERMS, ((family, key, term, step) for term in counted(terms)))


def counted(terms: str) -> set[str]:
    """What one searchable record adds 1 to in ``term_stats``: each distinct term, and
    the documents count (``sql.DOCUMENTS``)."""
    if len(terms) <= PIECE_CHARS:
        return {sql.DOCUMENTS, *terms.split()}
    found = {sql.DOCUMENTS}
    for start, end in pieces(terms):  # a long text's terms: see ``vocabulary._turns``
        found.update(terms[start:end].split())
        let_loop_in()
    return found


def insert_memory(
    conn: sqlite3.Connection, key: int, rid: str, revision: int, entry: MemoryEntry, vector: Any
) -> int:
    created_at = entry.created_at.isoformat() if entry.created_at is not None else None
    row = insert(
        conn, "memory", key, rid, revision, index_text(entry.text),
        text=entry.text, kind=entry.kind, tags=sql.encode_tags(entry.tags),
        created_at=created_at, created_ts=sql.created_ts(entry.created_at),
        thread=entry.thread, embedding=vector.tobytes(), caller_key=entry.key,
    )  # fmt: skip
    record_mentions(conn, row, key, entry.text, entry.created_at)
    return row


def retire(conn: sqlite3.Connection, family: Family, row: int) -> None:
    """Take a record version out of search; it stays readable by its reference."""
    conn.execute("UPDATE records SET live = 0 WHERE row = ?", (row,))
    table = sql.FTS_TABLES[family]
    found = conn.execute(f"SELECT terms FROM {table} WHERE rowid = ?", (row,)).fetchone()
    conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (row,))
    key = conn.execute("SELECT scope_key FROM records WHERE row = ?", (row,)).fetchone()[0]
    count_terms(conn, family, key, sql.unscoped_terms(key, found[0]), -1)


def supersede(
    conn: sqlite3.Connection, written: Written, column: str, value: str
) -> tuple[str, int]:
    """Retire the live record whose ``column`` equals ``value``; return its id and next revision."""
    found = conn.execute(
        f"SELECT row, rid, revision FROM records WHERE family = ? AND scope_key = ?"
        f" AND {column} = ? AND live = 1",
        (written.family, written.scope_key, value),
    ).fetchone()
    if found is None and column == "rid":  # a URI back after it left: its next revision
        (latest,) = conn.execute(
            "SELECT max(revision) FROM records WHERE family = ? AND scope_key = ? AND rid = ?",
            (written.family, written.scope_key, value),
        ).fetchone()
        return value, (latest or 0) + 1
    if found is None:
        return uuid.uuid4().hex, 1
    row, rid, revision = found
    retire(conn, written.family, row)
    written.removed_rows.append(row)
    return rid, revision + 1


def live_memory(
    conn: sqlite3.Connection, key: int, ref: MemoryRef, *, forgotten_ok: bool = False
) -> tuple[Any, int]:
    versions = conn.execute(
        "SELECT row, revision, live FROM records WHERE family = 'memory' AND scope_key = ?"
        " AND rid = ? ORDER BY revision DESC",
        (key, ref.entry_id),
    ).fetchall()
    if not any(revision == ref.version for _, revision, _ in versions):
        raise NotFoundError(
            f"no version {ref.version} of memory entry {ref.entry_id!r} in scope {ref.scope_id!r}"
        )
    row, latest, live = versions[0]
    if not live:
        if forgotten_ok:
            return None, latest
        raise NotFoundError(f"memory entry {ref.entry_id!r} was forgotten")
    return row, latest


def record_embedder(conn: sqlite3.Connection, fingerprint: str) -> None:
    """Remember which embedder built the store's vectors (the first one written wins)."""
    conn.execute("INSERT OR IGNORE INTO meta VALUES ('embedder', ?)", (fingerprint,))


def replace_embeddings(
    conn: sqlite3.Connection, rows: list[int], blobs: list[bytes], fingerprint: str
) -> None:
    """Swap in vectors from another embedder: live rows get new ones, retired rows none."""
    conn.executemany(
        "UPDATE records SET embedding = ? WHERE row = ?", zip(blobs, rows, strict=True)
    )
    conn.execute("UPDATE records SET embedding = NULL WHERE live = 0")
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('embedder', ?)", (fingerprint,))
