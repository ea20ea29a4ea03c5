"""Writing records as rows of the embedded store: inserts, retirements, revisions and
the per-scope term statistics that follow them. Runs inside one write transaction.

Every family is written the same way, from its columns (``satchel.vocabulary.Columns``,
one ``records`` column each; a resource's URI is its ``rid``, its body in
``resource_bodies``): :func:`insert_version` writes a version for a caller's write and
a copy alike, and :class:`Placer` answers what placing a record asks (``_placing``)."""

from __future__ import annotations

import functools
import sqlite3
from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

import attrs
import numpy as np

from ...vocabulary._analysis import index_text
from ...vocabulary._dates import mentioned_days
from ...vocabulary._errors import StoreError
from ...vocabulary._families import rules
from ...vocabulary._turns import PIECE_CHARS, let_loop_in, pieces
from .._rules import (
    Live,
    columns_from,
    content_hash_of,
    encode_tags,
    forgotten,
    no_version,
)
from . import _schema as sql

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...vocabulary._families import Family
    from ...vocabulary._records import Columns, MemoryRef

#: Records re-analysed per round trip of :func:`reanalyse`.
_REANALYSE_BATCH: Final = 4096


@attrs.define
class Write:
    """What one write transaction changes, applied to the store's caches once it commits
    (filled in as the transaction runs)."""

    scope_id: str
    scope_key: int
    #: The family whose records it writes; None when it writes none (a profile, or
    #: every family's vectors at once).
    family: Family | None
    refs: list[Any] = attrs.Factory(list)
    added_rows: list[int] = attrs.Factory(list)
    removed_rows: list[int] = attrs.Factory(list)
    #: The position in the write's input of each record it did not write (unchanged),
    #: whose vector is no added row's.
    unwritten: list[int] = attrs.Factory(list)
    #: The analysed terms (unscoped) each searchable version it inserted was indexed
    #: with, by row: what held postings add (``_postings``).
    indexed: dict[int, str] = attrs.Factory(dict)

    @property
    def record_family(self) -> Family:
        """The family whose records it writes (a write of records has one)."""
        assert self.family is not None
        return self.family


#: Where ``records`` keeps a column of :class:`~satchel.vocabulary.Columns` its own name
#: does not say.
_STORED_AS: Final[dict[str, str]] = {
    "uri": "rid",
    "body": "(SELECT body FROM resource_bodies b WHERE b.row = records.row)",
}


@functools.cache
def content_columns(family: Family) -> str:
    """The family's content (``FamilyRules.content``: what its idempotency key
    compares) as ``records`` columns, in order."""
    return ", ".join(_STORED_AS.get(field, field) for field in rules(family).content)


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
        conn.execute("INSERT INTO meta VALUES (?, '1')", (sql.CLEAN_PAGES,))
    elif found[0] in ("1", "2", "3", "4", "5", "6", "7", "8", "9", "10"):
        if found[0] not in ("9", "10"):
            _migrate_to_9(conn)  # the column every later step (a re-analysis) fills
        if found[0] in ("6", "7"):  # version 7's tables are ``sql.DDL``'s
            _migrate_from_7(conn)
        elif found[0] in ("8", "9", "10"):
            _migrate_from_10(conn)
        else:
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
    records per family and scope, and the scopes holding memory entries (those that may
    hold a conversation: a thread, or turns without one)."""
    scopes = dict(conn.execute("SELECT scope, scope_key FROM scopes").fetchall())
    row = conn.execute("SELECT length(embedding) FROM records WHERE embedding IS NOT NULL LIMIT 1")
    size = row.fetchone()
    counts = {
        (family, scope_key): df
        for family, scope_key, df in conn.execute(
            "SELECT family, scope_key, df FROM term_stats WHERE term = ?", (sql.DOCUMENTS,)
        )
    }
    threaded = {
        scope_key for (family, scope_key), df in counts.items() if family == "memory" and df
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
    for row, scope_key, text, created_at in dated.fetchall():
        record_mentions(conn, row, scope_key, text, datetime.fromisoformat(created_at))


def _migrate_from_4(conn: sqlite3.Connection) -> None:
    """Version 5 keeps each record's idempotency key (none for records written before)."""
    conn.execute("ALTER TABLE records ADD COLUMN caller_key TEXT")


def _migrate_from_5(conn: sqlite3.Connection) -> None:
    """Version 6 analyses text with a lemmatiser before the stemmer ("bought" meets
    "buy"): everything derived from record text is derived again."""
    reanalyse(conn)


def _migrate_from_7(conn: sqlite3.Connection) -> None:
    """Version 8 reads chat spellings as the words they spell ("bday" meets
    "birthday"): everything derived from record text is derived again."""
    reanalyse(conn)


def _migrate_from_10(conn: sqlite3.Connection) -> None:
    """Version 11 folds Latin letters without their diacritics ("José" meets "Jose")
    and reads a family's everyday words as the words questions write ("mom" meets
    "mother", "kids" "children", "won" "win"): everything derived from record text is
    derived again (which marks again what says nothing, version 10's change)."""
    reanalyse(conn)


def _migrate_to_9(conn: sqlite3.Connection) -> None:
    """Version 9 marks the records whose text says nothing (``records.quiet``, filled
    by :func:`mark_quiet`), and its thread indexes hold the mark. A file that has the
    column already (an older version's label on newer tables) keeps it."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(records)")}
    if "quiet" not in columns:
        conn.execute("ALTER TABLE records ADD COLUMN quiet INTEGER NOT NULL DEFAULT 0")
    conn.execute("DROP INDEX IF EXISTS records_thread")  # made again with the mark
    conn.execute("DROP INDEX IF EXISTS records_timeline")


def mark_quiet(conn: sqlite3.Connection) -> None:
    """Mark again, with this code, which records say nothing (``records.quiet``): part
    of every re-analysis, since the rule reads the text as the analysis does."""
    conn.create_function("satchel_quiet", 1, sql.quiet, deterministic=True)
    conn.execute(sql.MARK_QUIET.format(passed="satchel_quiet"))


def reanalyse(conn: sqlite3.Connection) -> None:
    """Derive again, with this code, everything the store keeps from record text: each
    FTS5 table's terms (searchable records), the term statistics, the days memory
    texts name, and which records say nothing (:func:`mark_quiet`). The migration of any
    change to analysis or date extraction.

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
        for row, family, scope_key, live, text, abstract, overview, created_at in batch:
            if live:
                kept = {"text": text, "abstract": abstract, "overview": overview}
                terms = index_text(rules(family).indexed_text(columns_from(family, kept, None)))
                indexed.setdefault(family, []).append((row, sql.scoped_terms(scope_key, terms)))
                frequencies.update((family, scope_key, term) for term in counted(terms))
            if family == "memory" and created_at is not None:
                mentions += mention_rows(row, scope_key, text, datetime.fromisoformat(created_at))
        for family, values in indexed.items():
            table = sql.FTS_TABLES[family]
            conn.executemany(f"INSERT INTO {table} (rowid, terms) VALUES (?, ?)", values)
        conn.executemany(sql.INSERT_MENTION, mentions)
    conn.executemany(
        "INSERT INTO term_stats (family, scope_key, term, df) VALUES (?, ?, ?, ?)",
        [(*family_scope_term, df) for family_scope_term, df in frequencies.items()],
    )
    mark_quiet(conn)


@attrs.frozen
class Placer:
    """Answers what placing a record asks (``_placing.Placer``), for the family and
    scope ``write`` writes, inside its transaction: a version is named by its row."""

    conn: sqlite3.Connection
    write: Write

    def key_holder(self, key: str) -> Live[int] | None:
        """The latest version of the family in the scope that holds the key: a live
        one, or a forgotten record's last one with every version the key wrote (a
        version a newer one of its record replaced counts as none)."""
        family, scope_key = self.write.record_family, self.write.scope_key
        found = self.conn.execute(
            f"SELECT row, rid, revision, live, {content_columns(family)} FROM records"
            " WHERE family = ? AND scope_key = ? AND caller_key = ? ORDER BY row DESC LIMIT 1",
            (family, scope_key, key),
        ).fetchone()
        if found is None:
            return None
        row, rid, revision, live, *stored = found
        if not live and self.latest_version(rid) != revision:
            return None  # replaced by a newer version: the key holds nothing
        earlier: dict[str, int] = {}
        if not live:  # forgotten: what the key ever wrote under the record stays so
            for version, *content in self.conn.execute(
                f"SELECT revision, {content_columns(family)} FROM records"
                " WHERE family = ? AND scope_key = ? AND rid = ? AND caller_key = ?",
                (family, scope_key, rid, key),
            ):
                earlier[_content_hash(family, content)] = version
        return Live(row, rid, revision, _content_hash(family, stored), bool(live), earlier)

    def name_holder(self, field: str, name: str) -> Live[int] | None:
        """The live record of the family in the scope whose column ``field`` (a topic
        memory's title, a resource's URI) holds ``name``, if any."""
        found = self.conn.execute(
            f"SELECT row, rid, revision FROM records WHERE family = ? AND scope_key = ?"
            f" AND {_STORED_AS.get(field, field)} = ? AND live = 1",
            (self.write.record_family, self.write.scope_key, name),
        ).fetchone()
        return None if found is None else Live(*found)

    def latest_version(self, record_id: str) -> int:
        (latest,) = self.conn.execute(
            "SELECT max(revision) FROM records WHERE family = ? AND scope_key = ? AND rid = ?",
            (self.write.record_family, self.write.scope_key, record_id),
        ).fetchone()
        return int(latest or 0)

    def retire(self, handle: int) -> None:
        retire(self.conn, self.write.record_family, handle)
        self.write.removed_rows.append(handle)


def _content_hash(family: Family, stored: Sequence[Any]) -> str:
    """The content hash of a version from its :func:`content_columns`."""
    named = dict(zip(rules(family).content, stored, strict=True))
    return content_hash_of(family, columns_from(family, named, None))


def record_mentions(
    conn: sqlite3.Connection, row: int, scope_key: int, text: str, created_at: datetime | None
) -> None:
    """Keep the days a memory's text names, resolved against the day it was said."""
    if created_at is not None:
        conn.executemany(sql.INSERT_MENTION, mention_rows(row, scope_key, text, created_at))


def mention_rows(
    row: int, scope_key: int, text: str, created_at: datetime
) -> list[tuple[Any, ...]]:
    """The ``mentioned_days`` rows of a dated memory."""
    said_on = created_at.astimezone(UTC).date()
    return [(row, "memory", scope_key, start, end) for start, end in mentioned_days(text, said_on)]


def ensure_scope(conn: sqlite3.Connection, scope_id: str) -> int:
    """The scope's key, given to it on its first write."""
    conn.execute("INSERT OR IGNORE INTO scopes (scope) VALUES (?)", (scope_id,))
    row = conn.execute("SELECT scope_key FROM scopes WHERE scope = ?", (scope_id,)).fetchone()
    return int(row[0])


def insert(
    conn: sqlite3.Connection,
    family: Family,
    scope_key: int,
    rid: str,
    revision: int,
    terms: str,
    **columns: Any,
) -> int:
    values = (
        family, scope_key, rid, revision, columns.get("text"), columns.get("kind"),
        columns.get("tags"), columns.get("created_at"), columns.get("created_ts", sql.NO_TIME),
        columns.get("thread"),
        columns.get("title"), columns.get("abstract"), columns.get("overview"),
        columns.get("embedding"), columns.get("caller_key"), sql.quiet(columns.get("text")),
    )  # fmt: skip
    row = conn.execute(sql.INSERT_RECORD, values).lastrowid
    assert row is not None
    table = sql.FTS_TABLES[family]
    conn.execute(
        f"INSERT INTO {table} (rowid, terms) VALUES (?, ?)",
        (row, sql.scoped_terms(scope_key, terms)),
    )
    count_terms(conn, family, scope_key, terms, +1)
    let_loop_in()  # a batch of thousands is seconds of Python in the write thread
    return row


def count_terms(
    conn: sqlite3.Connection, family: Family, scope_key: int, terms: str, step: int
) -> None:
    """Keep the scope's document frequencies in step with what is searchable."""
    # A generator, not a list: SQLite takes each row as it steps, giving the GIL back
    # between rows (a 1 MB text has tens of thousands of distinct terms).
    conn.executemany(sql.COUNT_TERMS, ((family, scope_key, term, step) for term in counted(terms)))


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


def insert_version(
    conn: sqlite3.Connection,
    write: Write,
    cited: tuple[str, int],
    columns: Columns,
    vector: Any,
) -> int:
    """Write version ``cited`` (record id, version) of a record that keeps ``columns``,
    searchable, with its full-text terms, term counts, the days a dated text names, a
    body, and its vector if its family has one; returns its row."""
    family, (rid, revision), at = write.record_family, cited, columns.created_at
    terms = index_text(rules(family).indexed_text(columns))
    row = insert(
        conn, family, write.scope_key, rid, revision, terms, text=columns.text,
        kind=columns.kind, tags=None if columns.tags is None else encode_tags(columns.tags),
        created_at=None if at is None else at.isoformat(), created_ts=sql.created_ts(at),
        thread=columns.thread, title=columns.title, abstract=columns.abstract,
        overview=columns.overview, caller_key=columns.key,
        embedding=None if vector is None else np.asarray(vector, dtype=np.float32).tobytes(),
    )  # fmt: skip
    if columns.text is not None:
        record_mentions(conn, row, write.scope_key, columns.text, at)
    if columns.body is not None:  # a resource's body: read, never searched
        conn.execute("INSERT INTO resource_bodies VALUES (?, ?)", (row, columns.body))
    write.indexed[row] = terms
    return row


def retire(conn: sqlite3.Connection, family: Family, row: int) -> None:
    """Take a record version out of search; it stays readable by its reference."""
    conn.execute("UPDATE records SET live = 0 WHERE row = ?", (row,))
    table = sql.FTS_TABLES[family]
    found = conn.execute(f"SELECT terms FROM {table} WHERE rowid = ?", (row,)).fetchone()
    conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (row,))
    scope_key = conn.execute("SELECT scope_key FROM records WHERE row = ?", (row,)).fetchone()[0]
    count_terms(conn, family, scope_key, sql.unscoped_terms(scope_key, found[0]), -1)


def live_memory(
    conn: sqlite3.Connection, scope_key: int, ref: MemoryRef, *, forgotten_ok: bool = False
) -> tuple[Any, int]:
    versions = conn.execute(
        "SELECT row, revision, live FROM records WHERE family = 'memory' AND scope_key = ?"
        " AND rid = ? ORDER BY revision DESC",
        (scope_key, ref.entry_id),
    ).fetchall()
    if not any(revision == ref.version for _, revision, _ in versions):
        raise no_version(ref)
    row, latest, live = versions[0]
    if not live:
        if forgotten_ok:
            return None, latest
        raise forgotten(ref)
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
