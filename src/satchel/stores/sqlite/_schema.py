"""The embedded store's schema and statements, and the decoding of rows into evidence.

Searchable records of every family share one table; each family has its own FTS5 table
whose terms carry their scope's prefix (``s12x`` + term), so a scope's search reads only
its own postings and BM25 counts document frequencies per scope.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import TYPE_CHECKING, Final

from ...vocabulary._evidence import Evidence
from ...vocabulary._families import FAMILY_RULES
from ...vocabulary._speakers import MAY_SAY_NOTHING_SQL, TIMELINE_GAP, TURN_SQL, passed_over
from ...vocabulary._turns import PIECE_CHARS, let_loop_in, pieces

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Sequence

    from ...vocabulary._families import Family

#: Version 6 holds text analysed with the lemmatiser (see ``_sqlite_rows.reanalyse``);
#: version 7 counts record commits (:data:`RECORD_COMMITS`) and keeps sessions; version
#: 8 holds text analysed with chat spellings read as the words they spell; version 9
#: marks the records whose text says nothing (``records.quiet``), which a neighbours read
#: passes over; version 10 marks them with fillers as people type them ("hahahah", "okk",
#: "gotcha": ``vocabulary.chat_filler``); version 11 holds text analysed with Latin letters
#: folded without their diacritics ("café" meets "cafe") and a family's everyday words
#: read as questions write them ("mom" meets "mother").
SCHEMA_VERSION: Final = "11"

#: ``records.created_ts`` of a record saved without ``created_at``: before every real
#: time, so a thread orders such records first and no time window ever selects them.
NO_TIME: Final = -1e18

#: Each searchable family's FTS5 table: ``fts_`` and its name's first word
#: (``fts_memory``, ``fts_topic``), made on open when missing.
FTS_TABLES: Final[dict[Family, str]] = {
    family: f"fts_{family.split('-')[0]}"
    for family, family_rules in FAMILY_RULES.items()
    if family_rules.searchable
}
assert len(set(FTS_TABLES.values())) == len(FTS_TABLES), "two families share an FTS5 table"

DDL: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS scopes (
    scope_key INTEGER PRIMARY KEY,
    scope TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS records (
    row INTEGER PRIMARY KEY,
    family TEXT NOT NULL,
    scope_key INTEGER NOT NULL REFERENCES scopes(scope_key),
    rid TEXT NOT NULL,
    revision INTEGER NOT NULL,
    live INTEGER NOT NULL,
    text TEXT,
    kind TEXT,
    tags TEXT,
    created_at TEXT,
    created_ts REAL NOT NULL DEFAULT -1e18,
    thread TEXT,
    title TEXT,
    abstract TEXT,
    overview TEXT,
    embedding BLOB,
    caller_key TEXT,
    quiet INTEGER NOT NULL DEFAULT 0,
    UNIQUE (family, scope_key, rid, revision)
);
CREATE TABLE IF NOT EXISTS resource_bodies (
    row INTEGER PRIMARY KEY REFERENCES records(row),
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS term_stats (
    family TEXT NOT NULL,
    scope_key INTEGER NOT NULL,
    term TEXT NOT NULL,
    df INTEGER NOT NULL,
    PRIMARY KEY (family, scope_key, term)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS profiles (
    scope_key INTEGER PRIMARY KEY REFERENCES scopes(scope_key),
    text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS mentioned_days (
    row INTEGER NOT NULL REFERENCES records(row),
    family TEXT NOT NULL,
    scope_key INTEGER NOT NULL,
    start_ts REAL NOT NULL,
    end_ts REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS mentioned_days_start ON mentioned_days (family, scope_key, start_ts);
CREATE TABLE IF NOT EXISTS erased (tombstone TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions (
    session_key TEXT PRIMARY KEY,
    turn INTEGER NOT NULL,
    seen_at REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sessions_seen ON sessions (seen_at);
CREATE TABLE IF NOT EXISTS session_items (
    session_key TEXT NOT NULL,
    identity TEXT NOT NULL,
    turn INTEGER NOT NULL,
    PRIMARY KEY (session_key, identity)
) WITHOUT ROWID;
"""

#: Created after any migration: they name columns a version 1 database lacks.
INDEXES: Final = """
CREATE INDEX IF NOT EXISTS records_title ON records (family, scope_key, title) WHERE live = 1;
CREATE INDEX IF NOT EXISTS records_time ON records (family, scope_key, created_ts)
    WHERE live = 1;
CREATE INDEX IF NOT EXISTS records_thread
    ON records (family, scope_key, thread, created_ts, row, quiet)
    WHERE live = 1 AND thread IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_timeline ON records (family, scope_key, created_ts, row, quiet)
    WHERE live = 1 AND thread IS NULL;
DROP INDEX IF EXISTS records_caller_key;
CREATE INDEX IF NOT EXISTS records_caller_key_all ON records (family, scope_key, caller_key)
    WHERE caller_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_first ON records (scope_key, row) WHERE revision = 1;
CREATE INDEX IF NOT EXISTS records_family_first ON records (family, scope_key, row)
    WHERE revision = 1;
"""

FTS_DDL: Final = """
CREATE VIRTUAL TABLE IF NOT EXISTS {table}
    USING fts5(terms, tokenize = "unicode61 remove_diacritics 0");
"""

EVIDENCE_COLUMNS: Final = "row, rid, revision, text, created_at, thread, abstract, overview, live"

#: ``meta`` keys an erase keeps: the highest row it ever deleted (SQLite would give the
#: next insert a deleted top row's number again, and a row is a key that is never
#: reused), and how many erases ran (a vector index built across one is discarded).
LAST_ROW: Final = "last_row"
ERASURES: Final = "erasures"
#: ``meta`` key counting the commits that changed records (every write but a session's):
#: a process seeing another's commit reloads its caches only when this moved
#: (``_connections``), so a replica's session turns never cost another its caches.
RECORD_COMMITS: Final = "record_commits"
#: ``meta`` key of a file no page of which holds deleted bytes: made by a satchel whose
#: connections zero what they delete (``secure_delete``), or rewritten by an erase.
CLEAN_PAGES: Final = "clean_pages"

#: A new row is numbered past every row the table holds and every row an erase deleted.
INSERT_RECORD: Final = f"""
INSERT INTO records (row, family, scope_key, rid, revision, live, text, kind, tags,
                     created_at, created_ts, thread, title, abstract, overview, embedding,
                     caller_key, quiet)
VALUES (max((SELECT coalesce(max(row), 0) FROM records),
            (SELECT coalesce(max(CAST(value AS INTEGER)), 0) FROM meta WHERE key = '{LAST_ROW}'))
        + 1, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""


#: The term_stats row whose ``df`` counts the searchable records of a family in a scope.
DOCUMENTS: Final = ""

COUNT_TERMS: Final = """
INSERT INTO term_stats (family, scope_key, term, df) VALUES (?, ?, ?, ?)
ON CONFLICT (family, scope_key, term) DO UPDATE SET df = df + excluded.df
"""


NEWEST: Final = (
    "SELECT max(created_ts) FROM records WHERE family = ? AND scope_key = ? AND live = 1"
)
IN_WINDOW: Final = """
SELECT row, created_ts FROM records
WHERE family = ? AND scope_key = ? AND live = 1 AND created_ts >= ? AND created_ts < ? LIMIT ?
"""
#: Live records whose text names a span overlapping a window and no wider than the
#: window allows (``TimeWindow.widest_mention``: so only starts from that long before
#: the window can count).
MENTIONING: Final = """
SELECT d.row FROM mentioned_days d JOIN records r ON r.row = d.row
WHERE d.family = ? AND d.scope_key = ? AND d.start_ts >= ? AND d.start_ts < ? AND d.end_ts > ?
  AND d.end_ts - d.start_ts <= ? AND r.live = 1
"""
INSERT_MENTION: Final = (
    "INSERT INTO mentioned_days (row, family, scope_key, start_ts, end_ts) VALUES (?, ?, ?, ?, ?)"
)


#: A conversation turn by its form (``vocabulary._speakers.opens_with_speaker``).
_NEAR_TURN: Final = TURN_SQL["sqlite"].format(text="near.text")
_HIT_TURN: Final = TURN_SQL["sqlite"].format(text="hit.text")


#: Marks again which records say nothing (``records.quiet``), as a migration that
#: derives again what records' texts say does; ``{passed}`` names the SQL function of
#: :func:`quiet` (``_rows.mark_quiet``), asked only of texts short enough to say nothing
#: (``vocabulary._speakers.MAY_SAY_NOTHING_SQL``: longer with a link or a quotation).
MARK_QUIET: Final = (
    "UPDATE records SET quiet = {passed}(text) WHERE quiet != 0 OR "
    + MAY_SAY_NOTHING_SQL["sqlite"].format(text="text")
)


def quiet(text: object) -> int:
    """``records.quiet`` of a record of this text: 1 when a neighbours read passes it
    over (``vocabulary.passed_over``: its text says nothing), else 0."""
    return int(isinstance(text, str) and passed_over(text))


@functools.cache
def neighbours_statement() -> str:
    """Those of the rows ``?2`` names (:func:`rows_in`) that are live and in a thread,
    each with the live rows up to ``?1`` places before and after it in that thread,
    nearest first, as one JSON row (:func:`as_one_row`); two range reads of the
    ``records_thread`` index per row, in one statement. A record whose text says nothing
    (``records.quiet``: "Ben: lol") is passed over, as the index tells. A conversation
    turn written without a thread is in its scope's conversation: the turns without a
    thread said within ``TIMELINE_GAP`` of it, read in time order along
    ``records_timeline``."""
    side = (
        "(SELECT json_group_array(row) FROM (SELECT near.row FROM records near"
        " WHERE near.family = hit.family AND near.scope_key = hit.scope_key"
        " AND near.live = 1 AND near.quiet = 0 AND {same}"
        " AND (near.created_ts, near.row) {cmp} (hit.created_ts, hit.row)"
        " ORDER BY near.created_ts {order}, near.row {order} LIMIT ?1))"
    )
    threaded = "near.thread = hit.thread"
    untold = (
        f"near.thread IS NULL AND {_NEAR_TURN} AND near.created_ts"
        f" BETWEEN hit.created_ts - {TIMELINE_GAP} AND hit.created_ts + {TIMELINE_GAP}"
    )

    def either(cmp: str, order: str) -> str:
        return (
            f"CASE WHEN hit.thread IS NULL THEN {side.format(same=untold, cmp=cmp, order=order)}"
            f" ELSE {side.format(same=threaded, cmp=cmp, order=order)} END"
        )

    return as_one_row(
        # A subquery's JSON comes out as text: json() makes each side an array again.
        "row, json(before), json(after)",
        f"SELECT hit.row AS row, {either('<', 'DESC')} AS before,"
        f" {either('>', 'ASC')} AS after FROM records hit"
        f" WHERE {rows_in(2)} AND hit.live = 1"
        f" AND (hit.thread IS NOT NULL OR {_HIT_TURN})",
    )


def embedder_of(conn: sqlite3.Connection) -> str | None:
    """The fingerprint of the embedder that built the database's vectors, if recorded."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
    return None if row is None else str(row[0])


def term_frequencies(term_count: int) -> str:
    marks = ",".join("?" * term_count)
    return (
        f"SELECT term, df FROM term_stats WHERE family = ? AND scope_key = ? AND term IN ({marks})"
    )


#: The terms of a family in a scope starting with a name's first letters, with how many
#: records hold each (``PoolRequest.name_starts``): a range read of the primary key.
TERMS_STARTING: Final = (
    "SELECT term, df FROM term_stats WHERE family = ? AND scope_key = ?"
    " AND term >= ? AND term < ? AND df >= ?"
)


def created_ts(created_at: datetime | None) -> float:
    """The sortable UTC time of a record (``NO_TIME`` without one)."""
    return NO_TIME if created_at is None else created_at.timestamp()


@functools.cache
def lexical_search(family: Family, tokens: int, *, rescue: bool = False) -> str:
    """One family's full-text query: rows in BM25 order with how many of ``tokens``
    (each a scoped term padded with a space on either side) their indexed text holds.

    Parameters, numbered: the tokens (``?1`` to ``?tokens``), then the MATCH expression
    and the limit. With ``rescue``, then a second MATCH expression (the rarest term) and
    its limit, whose rows follow the first query's (a row may come twice).
    """
    table = FTS_TABLES[family]
    held = " + ".join(f"(instr(' ' || terms || ' ', ?{n}) > 0)" for n in range(1, tokens + 1))

    def ranked(match: int) -> str:
        return (
            f"SELECT * FROM (SELECT rowid AS row, rank AS score, {held or '0'} AS held"
            f" FROM {table} WHERE {table} MATCH ?{match} ORDER BY rank LIMIT ?{match + 1})"
        )

    query = ranked(tokens + 1)
    if rescue:
        query = f"{query} UNION ALL {ranked(tokens + 3)}"
    return as_columns(("row", "score", "held"), query)


def term_prefix(scope_key: int) -> str:
    """What every indexed term of one scope starts with. A term is letters and digits
    only and the key is digits up to the ``x``, so two scopes' tokens never collide."""
    return f"s{scope_key}x"


def scoped_terms(scope_key: int, terms: str) -> str:
    """Analysed terms (space-separated) as the FTS5 table of their scope holds them."""
    prefix = term_prefix(scope_key)
    if len(terms) <= PIECE_CHARS:
        return " ".join(prefix + term for term in terms.split())
    scoped = []
    for start, end in pieces(terms):  # a long text's terms: see ``vocabulary._turns``
        piece = terms[start:end].split()
        if piece:
            scoped.append(" ".join(prefix + term for term in piece))
        let_loop_in()
    return " ".join(scoped)


def unscoped_terms(scope_key: int, indexed: str) -> str:
    """The analysed terms of an FTS5 row, without their scope's prefix (every term
    starts the row or follows a space, and holds none)."""
    prefix = term_prefix(scope_key)
    return indexed.replace(" " + prefix, " ").removeprefix(prefix)


@functools.cache
def fetch_statement(family: Family) -> str:
    """The evidence columns of the rows ``?1`` names (:func:`rows_in`), each with its
    full-text row's terms (NULL for a row out of search), as one JSON array of arrays
    (see :func:`as_one_row`).

    The terms are read from the FTS5 table's content table (``<table>_content``, whose
    ``c0`` holds the one column, ``terms``, by the row's ``id``: the layout FTS5 keeps
    its content in, a file format it keeps): a primary key lookup, where the same row
    through the virtual table cost twice as much (2.7 against 1.4 us a row)."""
    terms = f"(SELECT c0 FROM {FTS_TABLES[family]}_content WHERE id = records.row)"
    return as_one_row(
        f"{EVIDENCE_COLUMNS}, terms",
        f"SELECT {EVIDENCE_COLUMNS}, {terms} AS terms FROM records WHERE {rows_in(1)}",
    )


def rows_in(parameter: int) -> str:
    """The rows whose keys parameter ``?<parameter>`` lists (:func:`rows_parameter`),
    kept only if they are of the family and scope of the two parameters after it.

    One statement for any number of rows: a statement that spelled one placeholder per
    row was one statement per count, and compiling the neighbours statement costs about
    500 us, ten times running it (a question asked once read through the statements of
    some thirty counts; ``sqlite3`` keeps 128 per connection). ``json_each`` hands the
    keys to rowid lookups, as a list of placeholders did.

    The unary ``+`` keeps the family and scope from choosing the plan: without it SQLite
    prefers an index led by (family, scope_key) over the rowid lookups, and scans the
    whole scope (64 rows of a 100k-record scope took 34 ms instead of 0.8).
    """
    return (
        f"row IN (SELECT value FROM json_each(?{parameter}))"
        f" AND +family = ?{parameter + 1} AND +scope_key = ?{parameter + 2}"
    )


def rows_parameter(rows: Iterable[int]) -> str:
    """The keys of ``rows`` as :func:`rows_in` reads them: one JSON array."""
    return f"[{','.join(map(str, rows))}]"


def as_one_row(columns: str, query: str) -> str:
    """``query``'s rows as a single row holding one JSON array of ``columns`` arrays.

    CPython's sqlite3 releases the GIL inside each step but converts every row while
    holding it, so a read of many rows hands the GIL back and forth once per row, and
    beside a busy thread each hand-back waits its turn: measured on 64-row evidence
    reads, four threads were no faster than one. Built as JSON inside SQLite, the rows
    cost one step and one ``json.loads`` (in C), and two threads read 1.6x as fast as
    one. Text and integers come back exactly; a real keeps 15 significant digits.
    Rows keep ``query``'s order (a subquery with ORDER BY and LIMIT is not flattened).
    """
    return f"SELECT json_group_array(json_array({columns})) FROM ({query})"


def as_columns(columns: Sequence[str], query: str) -> str:
    """``query``'s rows as a single row of JSON arrays, one per column, in row order.

    As :func:`as_one_row`, and for numbers: decoded, each column is one list of numbers,
    where an array per row made a list per row (256 of them per search), objects the
    garbage collector counts and walks. The arrays are filled in one pass over the
    rows, so they stay aligned.
    """
    arrays = ", ".join(f"json_group_array({column})" for column in columns)
    return f"SELECT {arrays} FROM ({query})"


def evidence_from_row(family: Family, scope_id: str, row: Sequence[object]) -> Evidence:
    """Decode one ``EVIDENCE_COLUMNS`` row."""
    _, rid, revision, text, created_at, thread, abstract, overview, _ = row
    assert isinstance(rid, str)
    assert isinstance(revision, int)
    return Evidence.from_record(
        family,
        scope_id,
        rid,
        revision,
        text=text if isinstance(text, str) else None,
        abstract=abstract if isinstance(abstract, str) else None,
        overview=overview if isinstance(overview, str) else None,
        created_at=datetime.fromisoformat(created_at) if isinstance(created_at, str) else None,
        thread=thread if isinstance(thread, str) else None,
    )
