"""The OceanBase store's tables, their versioned migrations and its SQL text.

Every table and every index is led by the scope, so every query reads one scope's rows;
since schema 7 the tables a retrieve reads per scope are partitioned by it
(:data:`SCOPED`), so that a scoped statement reads one partition's rows and postings.
Names compare as exact bytes, as in the embedded store: a scope column is ``VARBINARY``
(the engine's ``utf8mb4_bin`` is a PAD SPACE collation, under which ``'pad '`` equals
``'pad'``), and a key, id, title or thread is compared with :data:`EXACT`. Creation is
idempotent (``IF NOT EXISTS``), so processes opening one database at once agree; the
schema version lives in ``satchel_meta``. A table that exists is not asked for again:
an open of a made database runs no DDL (which waits on every table lock the engine
holds).
"""

from __future__ import annotations

from typing import Final

from ...vocabulary._speakers import MAY_SAY_NOTHING_SQL, TIMELINE_GAP, TURN_SQL

#: The version :data:`MIGRATIONS` brings a database to.
SCHEMA_VERSION: Final = 9
#: Longest resource URI the ``rid`` column holds (bytes of an index key are bounded).
MAX_RID_CHARS: Final = 2048

BIN: Final = "DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin"
#: A scope column: its name's UTF-8 bytes (at most 256 characters of four bytes).
SCOPE: Final = "VARBINARY(1024)"
#: A name parameter compared byte for byte with a text column (``col = EXACT``): still a
#: range of the column's index, without the trailing spaces PAD SPACE ignores.
EXACT: Final = "CAST(%s AS BINARY)"

BASE_TABLES: Final = (
    f"""CREATE TABLE IF NOT EXISTS satchel_meta (
        name VARCHAR(64) NOT NULL PRIMARY KEY,
        value TEXT NOT NULL) {BIN}""",
    # The tombstones of erased memory entries (``_rules.tombstone``: a hash, no content).
    # Made on every open rather than by a migration: a satchel without erase ignores it.
    f"""CREATE TABLE IF NOT EXISTS satchel_erased (
        tombstone CHAR(64) NOT NULL PRIMARY KEY) {BIN}""",
    # Sessions (``_sessions``), likewise made on every open: each one's last turn, and
    # the identities its turns served (keyed by their digest: an identity may be longer
    # than an index key allows).
    f"""CREATE TABLE IF NOT EXISTS satchel_sessions (
        session_key CHAR(64) NOT NULL PRIMARY KEY,
        turn BIGINT NOT NULL,
        seen_at DOUBLE NOT NULL,
        KEY by_age (seen_at)) {BIN}""",
    f"""CREATE TABLE IF NOT EXISTS satchel_session_items (
        session_key CHAR(64) NOT NULL,
        item_key CHAR(64) NOT NULL,
        identity TEXT NOT NULL,
        turn BIGINT NOT NULL,
        PRIMARY KEY (session_key, item_key)) {BIN}""",
)

#: Statements per schema version; version N's run once, in order, on a database at N-1
#: (each idempotent: processes opening one database at once may both run them).
MIGRATIONS: Final[dict[int, tuple[str, ...]]] = {
    1: (
        # The write version every process shares, and the next record key to hand out.
        f"""CREATE TABLE IF NOT EXISTS satchel_scopes (
            scope {SCOPE} NOT NULL PRIMARY KEY,
            version BIGINT NOT NULL,
            next_key BIGINT NOT NULL) {BIN}""",
        # Searchable records per family, and whether any of them has a thread.
        f"""CREATE TABLE IF NOT EXISTS satchel_counts (
            scope {SCOPE} NOT NULL,
            family VARCHAR(16) NOT NULL,
            live_rows BIGINT NOT NULL,
            threaded BIGINT NOT NULL,
            term_total BIGINT NOT NULL,
            PRIMARY KEY (scope, family)) {BIN}""",
        # Per-scope document frequencies of analysed terms (searchable records only).
        f"""CREATE TABLE IF NOT EXISTS satchel_terms (
            scope {SCOPE} NOT NULL,
            family VARCHAR(16) NOT NULL,
            term VARCHAR(255) NOT NULL,
            df BIGINT NOT NULL,
            PRIMARY KEY (scope, family, term)) {BIN}""",
        # The days a dated memory's own text names, for the time channel.
        f"""CREATE TABLE IF NOT EXISTS satchel_mentions (
            scope {SCOPE} NOT NULL,
            family VARCHAR(16) NOT NULL,
            k BIGINT NOT NULL,
            low DOUBLE NOT NULL,
            high DOUBLE NOT NULL,
            PRIMARY KEY (scope, family, k, low),
            KEY by_day (scope, family, low)) {BIN}""",
        f"""CREATE TABLE IF NOT EXISTS satchel_profiles (
            scope {SCOPE} NOT NULL PRIMARY KEY,
            text LONGTEXT NOT NULL) {BIN}""",
        # Every record version. ``terms`` holds satchel's analysed terms for the FULLTEXT
        # index (see ``indexed_terms``).
        f"""CREATE TABLE IF NOT EXISTS satchel_records (
            scope {SCOPE} NOT NULL,
            family VARCHAR(16) NOT NULL,
            k BIGINT NOT NULL,
            rid VARCHAR({MAX_RID_CHARS}) NOT NULL,
            revision BIGINT NOT NULL,
            live TINYINT NOT NULL,
            caller_key VARCHAR(512),
            content_hash CHAR(64) NOT NULL,
            title TEXT,
            text LONGTEXT,
            kind VARCHAR(255),
            tags TEXT,
            created_at VARCHAR(64),
            created_ts DOUBLE NOT NULL,
            thread VARCHAR(512),
            abstract LONGTEXT,
            overview LONGTEXT,
            body LONGTEXT,
            terms LONGTEXT NOT NULL,
            PRIMARY KEY (scope, family, k),
            KEY by_rid (scope, family, rid, revision),
            KEY by_key (scope, family, caller_key),
            KEY by_time (scope, family, live, created_ts),
            KEY by_thread (scope, family, thread, created_ts, k),
            FULLTEXT KEY by_terms (terms) WITH PARSER space) {BIN}""",
    ),
    # Text analysed with the lemmatiser ("bought" meets "buy"): no new table, the
    # derived data is re-derived (``_rows.STEPS``).
    2: (),
    # Scope names as exact bytes (a no-op on a database migration 1 made so).
    3: tuple(
        f"ALTER TABLE {table} MODIFY scope {SCOPE} NOT NULL"
        for table in (
            "satchel_scopes",
            "satchel_counts",
            "satchel_terms",
            "satchel_mentions",
            "satchel_profiles",
            "satchel_records",
        )
    ),
    # Memory content hashed with its time as an instant: no new table, the hashes are
    # computed again (``_rows.STEPS``).
    4: (),
    # The version of the scope's last write that took a vector out of search: a
    # process's held vectors (``_vector_cache``) are patched with new keys up to it, and
    # read again past it. Run twice, the second says the column exists
    # (:data:`DUPLICATE_COLUMN`, ignored).
    5: ("ALTER TABLE satchel_scopes ADD COLUMN removed_at BIGINT NOT NULL DEFAULT 0",),
    # No HNSW index on the vectors by default (:data:`VECTOR_INDEX`): its upkeep was
    # nine tenths of a vector's insert (414 rows/s with it, 3,962 without, on seekdb)
    # and 1.5 KB of the engine's memory per vector, for searches the process's held
    # vectors (``_vector_cache``) or an exact scan serve. Dropped from the vectors
    # table below (:data:`MIGRATIONS_IF_MADE`).
    6: (),
    # The tables a retrieve reads per scope, partitioned by the scope (:data:`SCOPED`):
    # made so in a new database, repartitioned in one made before (``repartition``).
    7: (),
    # Text analysed with chat spellings read as the words they spell ("bday" meets
    # "birthday", "sooo" is "so"): the derived data is re-derived (``_rows.STEPS``).
    8: (),
    # Text analysed with Latin letters folded without their diacritics ("José" meets
    # "Jose") and a family's everyday words read as questions write them ("mom" meets
    # "mother"): the derived data is re-derived again.
    9: (),
}

#: The version whose step repartitions a database made before it.
REPARTITIONED: Final = 7
#: The tables partitioned by scope since schema 7: a retrieve's statements read them
#: per scope. Measured on seekdb (``python -m bench partitions``), 110,000 records over
#: 101 scopes: a scoped full-text statement 213 ms unpartitioned, 27.6 ms in 16
#: partitions; the small per-scope tables (write versions, counts, profiles) are read by
#: primary key and are left whole.
SCOPED: Final = ("satchel_records", "satchel_terms", "satchel_mentions", "satchel_vectors")
#: Partitions per scoped table in a database this store makes or repartitions (the
#: ``partitions`` option): a scoped statement reads about 1/N of the table's rows, and
#: each partition is a tablet (of the table and of each of its indexes) that the engine
#: keeps in memory and compacts on its own.
PARTITIONS: Final = 16
PARTITIONED: Final = " PARTITION BY KEY(scope) PARTITIONS {partitions}"
#: The scoped tables of database ``%s`` that are partitioned already.
PARTITIONED_TABLES: Final = (
    "SELECT DISTINCT table_name FROM information_schema.partitions WHERE table_schema = %s"
    " AND partition_name IS NOT NULL"
)
#: Longest a repartitioning ``ALTER TABLE`` may run, in microseconds (about 15 s for the
#: records table and its FULLTEXT index even when empty, and 25 s more per 100,000
#: records, measured on seekdb).
REPARTITION_TIMEOUT_US: Final = 86_400_000_000
#: The engine's DDL tasks still running (a row each): a repartitioning returns before
#: every task it started has ended (the keeper's own copy: ``_engine.DDL_TASKS``).
DDL_TASKS: Final = "SELECT COUNT(*) FROM oceanbase.__all_ddl_task_status"


def laid_out(statement: str, partitions: int) -> str:
    """``statement`` as run: a ``CREATE TABLE`` of a :data:`SCOPED` table partitioned by
    scope in ``partitions`` (none when 0)."""
    if partitions and statement.startswith("CREATE TABLE") and created_table(statement) in SCOPED:
        return statement + PARTITIONED.format(partitions=partitions)
    return statement


def repartition(table: str, partitions: int) -> str:
    """The statement that partitions an existing ``table`` by scope."""
    return f"ALTER TABLE {table}" + PARTITIONED.format(partitions=partitions)


#: The engine's errors for a column added twice (ER_DUP_FIELDNAME) and an index dropped
#: twice (ER_CANT_DROP_FIELD_OR_KEY): a migration another process ran first.
DUPLICATE_COLUMN: Final = 1060
DROPPED_ALREADY: Final = 1091

#: Statements of a version's step that run only on a table that exists (the vectors
#: table is made with the first vectors).
MIGRATIONS_IF_MADE: Final[dict[int, dict[str, str]]] = {
    3: {"satchel_vectors": f"ALTER TABLE satchel_vectors MODIFY scope {SCOPE} NOT NULL"},
    6: {"satchel_vectors": "ALTER TABLE satchel_vectors DROP INDEX by_vector"},
}


def name(value: bytes | str) -> str:
    """A scope name as a ``VARBINARY`` column gives it back."""
    return value.decode() if isinstance(value, bytes) else value


#: The searchable versions' vectors (a version leaving search leaves this table), made
#: once the first vector fixes the dimension; ``{index}`` is empty or
#: :data:`VECTOR_INDEX`.
VECTORS_TABLE: Final = f"""CREATE TABLE IF NOT EXISTS satchel_vectors (
    scope {SCOPE} NOT NULL,
    family VARCHAR(16) NOT NULL,
    k BIGINT NOT NULL,
    embedding VECTOR({{dimension}}) NOT NULL,
    PRIMARY KEY (scope, family, k){{index}}
) {BIN}"""
#: The HNSW index a vectors table made with ``OceanBaseStore(vector_index=True)`` has.
VECTOR_INDEX: Final = (
    ",\n    VECTOR INDEX by_vector (embedding) WITH (distance = cosine, type = hnsw, lib = vsag)"
)
#: The vectors table's indexes, a row per column of each (the third value its name):
#: whether it has the HNSW index. (``information_schema.statistics`` answered the same
#: in 75-108 ms on seekdb, this in 2-13 ms.)
VECTOR_INDEXES: Final = "SHOW INDEX FROM satchel_vectors"

#: Every table the store reads or writes but the vectors table (made with the first
#: vectors), and a statement that fails unless the engine knows ``{table}``.
TABLES: Final = (
    "satchel_meta", "satchel_erased", "satchel_sessions", "satchel_session_items",
    "satchel_scopes", "satchel_counts", "satchel_terms", "satchel_mentions",
    "satchel_profiles", "satchel_records",
)  # fmt: skip
KNOWN: Final = "SELECT 1 FROM {table} LIMIT 0"
#: :data:`KNOWN` of every one of :data:`TABLES` in one statement (one round trip of an
#: open, not ten), which fails as soon as the engine does not know one of them.
ALL_KNOWN: Final = " UNION ALL ".join(f"({KNOWN.format(table=table)})" for table in TABLES)
#: An open of a made database (``{database}``) in one round trip: its schema version
#: and vector dimension, then :data:`ALL_KNOWN`.
MADE: Final = (
    "USE {database}; SELECT name, value FROM satchel_meta WHERE name IN ('schema', 'dimension');"
    f" {ALL_KNOWN}"
)
#: The tables of database ``%s`` that exist.
EXISTING: Final = "SELECT table_name FROM information_schema.tables WHERE table_schema = %s"


def created_table(statement: str) -> str:
    """The table a ``CREATE TABLE IF NOT EXISTS name (...)`` statement makes."""
    return statement.split(maxsplit=6)[5]


#: The engine's full-text parser skips tokens under this many characters.
SHORTEST_TOKEN: Final = 3


def indexed_term(term: str) -> str:
    """A term as the FULLTEXT column holds it: a term too short for the engine's parser
    is wrapped in ``_`` (which analysis never produces) so that it is indexed too."""
    return term if len(term) >= SHORTEST_TOKEN else f"_{term}_"


def stored_terms(indexed: str) -> list[str]:
    """The analysed terms back from the FULLTEXT column."""
    return [term.strip("_") for term in indexed.split()]


EVIDENCE_COLUMNS: Final = "k, rid, revision, text, created_at, thread, abstract, overview"

STATE: Final = (
    "SELECT s.version, s.next_key, c.live_rows, c.term_total, s.removed_at FROM satchel_scopes s"
    " LEFT JOIN satchel_counts c ON c.scope = s.scope AND c.family = %s WHERE s.scope = %s"
)

#: :data:`STATE` of every family at once: a row per family the scope counts records of
#: (its name first), or one row with no family when it counts none.
STATES: Final = (
    "SELECT c.family, s.version, s.next_key, c.live_rows, c.term_total, s.removed_at"
    " FROM satchel_scopes s LEFT JOIN satchel_counts c ON c.scope = s.scope WHERE s.scope = %s"
)

#: :data:`STATES` of several scopes (``{marks}``), each row led by its scope.
STATES_OF: Final = (
    "SELECT s.scope, c.family, s.version, s.next_key, c.live_rows, c.term_total, s.removed_at"
    " FROM satchel_scopes s LEFT JOIN satchel_counts c ON c.scope = s.scope"
    " WHERE s.scope IN ({marks})"
)

#: How many of the scope's searchable records hold each term of ``{marks}``.
TERM_FREQUENCIES: Final = (
    "SELECT term, df FROM satchel_terms WHERE scope = %s AND family = %s AND term IN ({marks})"
)

#: The terms of a family in a scope starting with a name's first letters that enough
#: records hold, with how many hold each (``PoolRequest.name_starts``).
TERMS_STARTING: Final = (
    "SELECT term, df FROM satchel_terms WHERE scope = %s AND family = %s"
    " AND term >= %s AND term < %s AND df >= %s"
)

#: Exact nearest neighbours: a scan of the scope's rows. The plan cache is off so that
#: no plan made for one scope's size serves another's.
EXACT_NEAREST: Final = (
    "SELECT /*+ USE_PLAN_CACHE(NONE) */ k, cosine_distance(embedding, %s) AS d,"
    " cosine_distance(embedding, %s) FROM satchel_vectors"
    " WHERE scope = %s AND family = %s AND k >= %s ORDER BY d LIMIT %s"
)
#: The sum of a scope's searchable vectors of one family: its common direction, which
#: the vector channel ranks apart from (``apart_from_common``) when the engine searches.
VECTOR_SUM: Final = "SELECT sum(embedding) FROM satchel_vectors WHERE scope = %s AND family = %s"
#: Longest an approximate search may run, in microseconds (it takes 15-40 ms): while the
#: HNSW index is still loading after a restart it waits for it instead, and the vector
#: channel scans exactly (``_search.VectorIndex``).
APPROXIMATE_TIMEOUT_US: Final = 3_000_000
#: Approximate nearest neighbours through the HNSW index (large scopes).
APPROXIMATE_NEAREST: Final = (
    f"SELECT /*+ USE_PLAN_CACHE(NONE) QUERY_TIMEOUT({APPROXIMATE_TIMEOUT_US}) */"
    " k, cosine_distance(embedding, %s) AS d, cosine_distance(embedding, %s)"
    " FROM satchel_vectors WHERE scope = %s AND family = %s ORDER BY d APPROXIMATE LIMIT %s"
)

#: The records holding any of the given terms, with their terms for satchel's own BM25
#: (the engine's best first, should the postings ever exceed the limit).
HOLDERS: Final = (
    "SELECT k, terms FROM satchel_records WHERE scope = %s AND family = %s AND live = 1"
    " AND MATCH (terms) AGAINST (%s) ORDER BY MATCH (terms) AGAINST (%s) DESC LIMIT %s"
)
#: :data:`HOLDERS` in no order, for terms whose postings all fit the limit: satchel
#: ranks every holder itself, and the engine then skips its own relevance and sort
#: (measured at 100k records in a scope: a median 8 ms against 14-18 ms).
EVERY_HOLDER: Final = (
    "SELECT k, terms FROM satchel_records WHERE scope = %s AND family = %s AND live = 1"
    " AND MATCH (terms) AGAINST (%s) LIMIT %s"
)

NEWEST: Final = (
    "SELECT MAX(created_ts) FROM satchel_records WHERE scope = %s AND family = %s AND live = 1"
)
IN_WINDOW: Final = (
    "SELECT k, created_ts FROM satchel_records WHERE scope = %s AND family = %s AND live = 1"
    " AND created_ts >= %s AND created_ts < %s LIMIT %s"
)
MENTIONING: Final = (
    "SELECT m.k FROM satchel_mentions m JOIN satchel_records r"
    " ON r.scope = m.scope AND r.family = m.family AND r.k = m.k"
    " WHERE m.scope = %s AND m.family = %s AND m.low >= %s AND m.low < %s AND m.high > %s"
    " AND m.high - m.low <= %s AND r.live = 1"
)
#: A record's text when it is short enough to say nothing (``vocabulary.passed_over``
#: reads it; a longer text says something: ``_speakers.MAY_SAY_NOTHING_SQL``, longer with a link
#: or a quotation), else NULL: what a neighbour read takes of it.
SHORT_TEXT: Final = f"CASE WHEN {MAY_SAY_NOTHING_SQL['mysql'].format(text='text')} THEN text END"
#: The rows up to ``LIMIT`` places before (``side`` 0) and after (1) one row of a thread,
#: with what orders them and their short texts (``SHORT_TEXT``); a neighbour read is one
#: ``UNION ALL`` of these, a pair per row.
NEAR: Final = (
    f"(SELECT %s AS hit, {{side}} AS side, k, created_ts, {SHORT_TEXT} FROM satchel_records"
    " WHERE scope = %s AND family = %s AND thread = CAST(%s AS BINARY) AND live = 1"
    " AND (created_ts {cmp} %s OR (created_ts = %s AND k {cmp} %s))"
    " ORDER BY created_ts {order}, k {order} LIMIT %s)"
)
BEFORE: Final = NEAR.format(side=0, cmp="<", order="DESC")
AFTER: Final = NEAR.format(side=1, cmp=">", order="ASC")
#: A conversation turn by its form (``vocabulary._speakers.opens_with_speaker``).
TURN: Final = TURN_SQL["mysql"].format(text="text")
#: The scope's write version, and 1 when a live record of the family has a thread or
#: is a conversation turn (NULL otherwise): one statement, so both are of one moment.
THREADED: Final = (
    "SELECT s.version, (SELECT 1 FROM satchel_records r WHERE r.scope = s.scope"
    f" AND r.family = %s AND r.live = 1 AND (r.thread IS NOT NULL OR {TURN}) LIMIT 1)"
    " FROM satchel_scopes s WHERE s.scope = %s"
)
#: The same for a conversation turn without a thread: the scope's turns without one said
#: within ``TIMELINE_GAP`` of it (its time comes twice more, before the thread's place).
NEAR_UNTOLD: Final = (
    f"(SELECT %s AS hit, {{side}} AS side, k, created_ts, {SHORT_TEXT} FROM satchel_records"
    f" WHERE scope = %s AND family = %s AND thread IS NULL AND live = 1 AND {TURN}"
    f" AND created_ts BETWEEN %s - {TIMELINE_GAP} AND %s + {TIMELINE_GAP}"
    " AND (created_ts {cmp} %s OR (created_ts = %s AND k {cmp} %s))"
    " ORDER BY created_ts {order}, k {order} LIMIT %s)"
)
BEFORE_UNTOLD: Final = NEAR_UNTOLD.format(side=0, cmp="<", order="DESC")
AFTER_UNTOLD: Final = NEAR_UNTOLD.format(side=1, cmp=">", order="ASC")

#: Each scope's searchable records per family and its profile.
SCOPE_COUNTS: Final = (
    "SELECT scope, family, live_rows FROM satchel_counts WHERE live_rows > 0"
    " UNION ALL SELECT scope, 'profile', 1 FROM satchel_profiles ORDER BY 1"
)

BUMP_SCOPE: Final = (
    "INSERT INTO satchel_scopes (scope, version, next_key) VALUES (%s, 1, 1 + %s)"
    " ON DUPLICATE KEY UPDATE version = version + 1, next_key = next_key + VALUES(next_key) - 1"
)
COUNT_ROWS: Final = (
    "INSERT INTO satchel_counts (scope, family, live_rows, threaded, term_total)"
    " VALUES (%s, %s, %s, %s, %s) ON DUPLICATE KEY UPDATE"
    " live_rows = live_rows + VALUES(live_rows), threaded = threaded + VALUES(threaded),"
    " term_total = term_total + VALUES(term_total)"
)
COUNT_TERMS: Final = (
    "INSERT INTO satchel_terms (scope, family, term, df) VALUES (%s, %s, %s, %s)"
    " ON DUPLICATE KEY UPDATE df = df + VALUES(df)"
)
INSERT_RECORD: Final = (
    "INSERT INTO satchel_records (scope, family, k, rid, revision, live, caller_key,"
    " content_hash, title, text, kind, tags, created_at, created_ts, thread, abstract,"
    " overview, body, terms) VALUES"
    " (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
#: Read-only statements in one snapshot: a retrieve's every read sees the same commits.
SNAPSHOT: Final = ("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", "START TRANSACTION READ ONLY")
#: The scope's vectors of one family with keys in ``[%s, %s)``, as the engine shows them.
VECTORS_BETWEEN: Final = (
    "SELECT k, embedding FROM satchel_vectors WHERE scope = %s AND family = %s"
    " AND k >= %s AND k < %s ORDER BY k"
)
#: The keys below ``%s`` of the scope's searchable vectors of one family.
VECTOR_KEYS: Final = "SELECT k FROM satchel_vectors WHERE scope = %s AND family = %s AND k < %s"
REMOVED: Final = "UPDATE satchel_scopes SET removed_at = %s WHERE scope = %s"
INSERT_VECTOR: Final = (
    "INSERT INTO satchel_vectors (scope, family, k, embedding) VALUES (%s, %s, %s, %s)"
)
INSERT_MENTION: Final = (
    "INSERT IGNORE INTO satchel_mentions (scope, family, k, low, high) VALUES (%s, %s, %s, %s, %s)"
)
