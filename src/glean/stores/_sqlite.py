"""``SqliteStore``: the embedded default store.

One SQLite file in WAL mode; FTS5 for text; float32 embeddings in BLOBs, held per scope
as a numpy matrix so a vector search is one BLAS product. All SQLite work runs in anyio
worker threads, so the store behaves identically under asyncio and trio. It never
touches the gate, the coordinator or the Builder.
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.lowlevel
import anyio.to_thread
import attrs
import numpy as np

from .._errors import NotFoundError, StoreError
from .._records import (
    Experience,
    MemoryEntry,
    MemoryRecord,
    MemoryRef,
    Profile,
    RecordRef,
    Resource,
    TopicMemory,
)
from ..recall._analysis import index_text, match_expression
from ..recall._evidence import Evidence, LexicalHit, Pool
from . import _sqlite_schema as sql
from ._connections import Connections
from ._vectors import VectorMatrix

#: Most postings (rows matching any chosen term) one full-text search may rank.
POSTINGS_BUDGET = 2048
#: Searches of a family with at most this many records in the scope run on the calling
#: thread: they take well under a millisecond, less than a worker-thread round trip
#: (measured 0.15 ms on asyncio and 0.6 ms on trio on a 2-core machine).
INLINE_ROWS = 20000

T = TypeVar("T")
_NO_ROWS = np.empty(0, dtype=np.int64)
_NO_SIMILARITIES = np.empty(0, dtype=np.float32)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    import numpy.typing as npt

    from .._families import Family
    from ..recall._analysis import AnalysedQuery

    Vectors = npt.NDArray[np.float32]


@attrs.frozen
class _Written:
    """What one write transaction changed, applied to memory after it commits."""

    scope_id: str
    scope_key: int
    family: Family
    refs: list[Any]
    added_rows: list[int] = attrs.Factory(list)
    removed_rows: list[int] = attrs.Factory(list)


def experience_text(experience: Experience) -> str:
    """How an experience reads in a context pack and in the full-text index."""
    return (
        f"Situation: {experience.situation}\nAction: {experience.action}\n"
        f"Outcome: {experience.outcome}\nLesson: {experience.lesson}"
    )


def topic_text(topic: TopicMemory) -> str:
    """How a topic memory reads in a context pack and in the full-text index."""
    return f"{topic.title}\n\n{topic.text}"


class SqliteStore:
    """The embedded store. Open it with :meth:`open`; close it with :meth:`aclose`."""

    def __init__(
        self,
        connections: Connections,
        scopes: dict[str, int],
        dimension: int | None,
        counts: dict[tuple[Family, int], int],
        *,
        inline_rows: int = INLINE_ROWS,
    ) -> None:
        self._conns = connections
        self._scope_keys = scopes
        self._dimension = dimension
        self._counts = counts
        self._inline_rows = inline_rows
        self._versions: dict[str, int] = {}
        self._matrices: dict[tuple[Family, int], VectorMatrix] = {}
        # Serialises loading a scope's matrix with applying committed writes to loaded
        # ones, so a matrix loaded from a snapshot never misses a write. Searches read
        # ``_matrices`` without it.
        self._load_lock = threading.Lock()
        self._closed = False

    @classmethod
    async def open(cls, database: str = ":memory:", *, readers: int = 4) -> SqliteStore:
        """Open (creating if needed) an embedded store at ``database``."""
        return await anyio.to_thread.run_sync(cls._open_sync, database, readers)

    @classmethod
    def _open_sync(cls, database: str, readers: int) -> SqliteStore:
        try:
            conns = Connections(database, readers=readers)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open database {database!r}: {exc}") from exc
        scopes, dimension, counts = conns.write_now(_create_schema)
        return cls(conns, scopes, dimension, counts)

    async def aclose(self) -> None:
        """Close every connection. Idempotent."""
        if not self._closed:
            self._closed = True
            self._conns.close()

    def scope_version(self, scope_id: str) -> int:
        return self._versions.get(scope_id, 0)

    # -- writes ---------------------------------------------------------------------

    async def add_memories(
        self, scope_id: str, entries: Sequence[MemoryEntry], vectors: Vectors
    ) -> list[MemoryRef]:
        self._check_vectors(vectors, len(entries))

        def work(conn: sqlite3.Connection) -> _Written:
            key = _scope_key(conn, scope_id)
            written = _Written(scope_id, key, "memory", [])
            for entry, vector in zip(entries, vectors, strict=True):
                rid = uuid.uuid4().hex
                written.added_rows.append(_insert_memory(conn, key, rid, 1, entry, vector))
                written.refs.append(MemoryRef(scope_id, rid, 1))
            return written

        return (await self._write(work, vectors)).refs

    async def update_memory(self, ref: MemoryRef, entry: MemoryEntry, vector: Vectors) -> MemoryRef:
        self._check_vectors(vector, 1)

        def work(conn: sqlite3.Connection) -> _Written:
            key = self._known_scope(ref.scope_id)
            row, latest = _live_memory(conn, key, ref)
            _retire(conn, "memory", row)
            new_row = _insert_memory(conn, key, ref.entry_id, latest + 1, entry, vector[0])
            new_ref = MemoryRef(ref.scope_id, ref.entry_id, latest + 1)
            return _Written(ref.scope_id, key, "memory", [new_ref], [new_row], [row])

        return (await self._write(work, vector)).refs[0]  # type: ignore[no-any-return]

    async def forget_memory(self, ref: MemoryRef) -> None:
        def work(conn: sqlite3.Connection) -> _Written:
            key = self._known_scope(ref.scope_id)
            row, _ = _live_memory(conn, key, ref, forgotten_ok=True)
            if row is not None:
                _retire(conn, "memory", row)
            return _Written(ref.scope_id, key, "memory", [], [], [] if row is None else [row])

        await self._write(work, None)

    async def add_experiences(
        self, scope_id: str, experiences: Sequence[Experience]
    ) -> list[RecordRef]:
        def work(conn: sqlite3.Connection) -> _Written:
            key = _scope_key(conn, scope_id)
            written = _Written(scope_id, key, "experience", [])
            for experience in experiences:
                rid = uuid.uuid4().hex
                text = experience_text(experience)
                row = _insert(conn, "experience", key, rid, 1, index_text(text), text=text)
                written.refs.append(RecordRef("experience", scope_id, rid, 1))
                written.added_rows.append(row)
            return written

        return (await self._write(work, None)).refs

    async def add_topic_memories(
        self, scope_id: str, topics: Sequence[TopicMemory], vectors: Vectors
    ) -> list[RecordRef]:
        self._check_vectors(vectors, len(topics))

        def work(conn: sqlite3.Connection) -> _Written:
            key = _scope_key(conn, scope_id)
            written = _Written(scope_id, key, "topic-memory", [])
            for topic, vector in zip(topics, vectors, strict=True):
                rid, revision = _supersede(conn, written, "title", topic.title)
                text = topic_text(topic)
                written.added_rows.append(
                    _insert(
                        conn, "topic-memory", key, rid, revision, index_text(text),
                        text=text, title=topic.title, embedding=vector.tobytes(),
                    )
                )  # fmt: skip
                written.refs.append(RecordRef("topic-memory", scope_id, rid, revision))
            return written

        return (await self._write(work, vectors)).refs

    async def add_resources(
        self, scope_id: str, resources: Sequence[Resource], vectors: Vectors
    ) -> list[RecordRef]:
        self._check_vectors(vectors, len(resources))

        def work(conn: sqlite3.Connection) -> _Written:
            key = _scope_key(conn, scope_id)
            written = _Written(scope_id, key, "resource", [])
            for resource, vector in zip(resources, vectors, strict=True):
                _, revision = _supersede(conn, written, "rid", resource.uri)
                searchable = " ".join(filter(None, (resource.abstract, resource.overview)))
                row = _insert(
                    conn, "resource", key, resource.uri, revision, index_text(searchable),
                    abstract=resource.abstract, overview=resource.overview,
                    embedding=vector.tobytes(),
                )  # fmt: skip
                conn.execute("INSERT INTO resource_bodies VALUES (?, ?)", (row, resource.body))
                written.added_rows.append(row)
                written.refs.append(RecordRef("resource", scope_id, resource.uri, revision))
            return written

        return (await self._write(work, vectors)).refs

    async def set_profile(self, scope_id: str, profile: Profile) -> None:
        def work(conn: sqlite3.Connection) -> _Written:
            key = _scope_key(conn, scope_id)
            conn.execute("INSERT OR REPLACE INTO profiles VALUES (?, ?)", (key, profile.text))
            return _Written(scope_id, key, "profile", [])

        await self._write(work, None)

    # -- reads ----------------------------------------------------------------------

    async def get_memory(self, ref: MemoryRef) -> MemoryRecord:
        key = self._scope_keys.get(ref.scope_id)
        if key is None:
            raise NotFoundError(f"no memory entry {ref.entry_id!r} in scope {ref.scope_id!r}")

        def work(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
            statement = (
                "SELECT text, kind, tags, created_at, thread FROM records"
                " WHERE family = 'memory' AND scope_key = ? AND rid = ? AND revision = ?"
            )
            row: tuple[Any, ...] | None = conn.execute(
                statement, (key, ref.entry_id, ref.version)
            ).fetchone()
            return row

        row = await self._conns.read(work)
        if row is None:
            raise NotFoundError(
                f"no version {ref.version} of memory entry {ref.entry_id!r}"
                f" in scope {ref.scope_id!r}"
            )
        text, kind, tags, created_at, thread = row
        return MemoryRecord(
            ref=ref,
            text=text,
            kind=kind,
            tags=sql.decode_tags(tags),
            created_at=datetime.fromisoformat(created_at) if created_at else None,
            thread=thread,
        )

    async def get_profile(self, scope_id: str) -> Evidence | None:
        key = self._scope_keys.get(scope_id)
        if key is None:
            return None

        def work(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT text FROM profiles WHERE scope_key = ?", (key,)).fetchone()
            return None if row is None else str(row[0])

        text = await self._conns.read(work)
        if text is None:
            return None
        return Evidence(
            family="profile",
            scope_id=scope_id,
            identity=f"profile\x1f{scope_id}",
            citation={"family": "profile", "scope": scope_id},
            text=text,
        )

    async def read_resource_bodies(self, scope_id: str, uris: Sequence[str]) -> Mapping[str, str]:
        key = self._scope_keys.get(scope_id)
        if key is None or not uris:
            return {}

        def work(conn: sqlite3.Connection) -> dict[str, str]:
            marks = ",".join("?" * len(uris))
            statement = (
                "SELECT r.rid, b.body FROM records r JOIN resource_bodies b ON b.row = r.row"
                f" WHERE r.family = 'resource' AND r.scope_key = ? AND r.live = 1"
                f" AND r.rid IN ({marks})"
            )
            return dict(conn.execute(statement, (key, *uris)).fetchall())

        return await self._conns.read(work)

    async def retrieve(
        self,
        family: Family,
        scope_id: str,
        query: AnalysedQuery,
        vector: Vectors | None,
        pool_size: int,
    ) -> Pool:
        version = self.scope_version(scope_id)
        key = self._scope_keys.get(scope_id)
        rows = 0 if key is None else self._counts.get((family, key), 0)
        if key is None or rows == 0:
            return Pool(family, scope_id, version)  # nothing to search: no I/O at all
        terms = frozenset(query.terms)

        def work(conn: sqlite3.Connection) -> Pool:
            lexical = _lexical_rows(conn, family, key, query.terms, pool_size)
            rows, similarities = self._nearest(conn, family, key, vector, pool_size)
            return Pool(
                family,
                scope_id,
                version,
                lexical=tuple(
                    LexicalHit(row, score, terms.intersection(indexed.split()))
                    for row, indexed, score in lexical
                ),
                vector_keys=rows,
                vector_similarities=similarities,
            )

        inline = rows <= self._inline_rows and (
            vector is None or family == "experience" or (family, key) in self._matrices
        )
        return await self._read(work, inline=inline)

    async def evidence(
        self, family: Family, scope_id: str, keys: Sequence[int]
    ) -> Mapping[int, Evidence]:
        """Read the evidence of record versions a pool named; a key whose record was
        retired since is missing from the result (searched versions only)."""
        if not keys:
            return {}

        def work(conn: sqlite3.Connection) -> dict[int, Evidence]:
            return _fetch(conn, family, scope_id, list(keys))

        return await self._read(work, inline=len(keys) <= 256)

    async def _read(self, work: Callable[[sqlite3.Connection], T], *, inline: bool) -> T:
        if inline:
            await anyio.lowlevel.checkpoint()
            done, result = self._conns.read_inline(work)
            if done:
                return result  # type: ignore[return-value]
        return await self._conns.read(work)

    # -- internals ------------------------------------------------------------------

    async def _write(
        self, work: Callable[[sqlite3.Connection], _Written], vectors: Any
    ) -> _Written:
        if self._closed:
            raise StoreError("the store is closed")

        def after(written: _Written) -> None:
            self._scope_keys[written.scope_id] = written.scope_key
            self._versions[written.scope_id] = self._versions.get(written.scope_id, 0) + 1
            if written.family == "profile":
                return
            count = (written.family, written.scope_key)
            delta = len(written.added_rows) - len(written.removed_rows)
            self._counts[count] = self._counts.get(count, 0) + delta
            self._apply_vectors(written, vectors)

        try:
            return await self._conns.write(work, after)
        except sqlite3.Error as exc:
            raise StoreError(f"write failed: {exc}") from exc

    def _apply_vectors(self, written: _Written, vectors: Any) -> None:
        with self._load_lock:
            matrix = self._matrices.get((written.family, written.scope_key))
            if matrix is None:
                return  # not loaded yet: the first search reads the committed rows
            matrix.remove(np.asarray(written.removed_rows, dtype=np.int64))
            if vectors is not None and written.added_rows:
                matrix.add(np.asarray(written.added_rows, dtype=np.int64), vectors)

    def _nearest(
        self,
        conn: sqlite3.Connection,
        family: Family,
        key: int,
        vector: Vectors | None,
        k: int,
    ) -> tuple[Any, Any]:
        if vector is None or family == "experience":
            return _NO_ROWS, _NO_SIMILARITIES
        matrix = self._matrices.get((family, key))
        if matrix is None:
            with self._load_lock:
                matrix = self._matrices.get((family, key))
                if matrix is None:
                    matrix = _load_matrix(conn, family, key, len(vector))
                    self._matrices[(family, key)] = matrix
        return matrix.nearest(vector, k)

    def _check_vectors(self, vectors: Vectors, count: int) -> None:
        if vectors.ndim != 2 or vectors.shape[0] != count:
            raise StoreError(f"expected {count} vectors, got an array of shape {vectors.shape}")
        dimension = int(vectors.shape[1])
        if self._dimension is None:
            self._dimension = dimension
        elif dimension != self._dimension:
            raise StoreError(
                f"this store holds {self._dimension}-dimensional vectors; the embedder"
                f" produced {dimension} dimensions"
            )

    def _known_scope(self, scope_id: str) -> int:
        key = self._scope_keys.get(scope_id)
        if key is None:
            raise NotFoundError(f"scope {scope_id!r} holds no memory")
        return key


def _create_schema(
    conn: sqlite3.Connection,
) -> tuple[dict[str, int], int | None, dict[tuple[Family, int], int]]:
    for statement in sql.DDL.split(";"):
        if statement.strip():
            conn.execute(statement)
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
    elif found[0] != sql.SCHEMA_VERSION:
        raise StoreError(f"database schema {found[0]} is not {sql.SCHEMA_VERSION}")
    scopes = dict(conn.execute("SELECT scope, scope_key FROM scopes").fetchall())
    row = conn.execute("SELECT length(embedding) FROM records WHERE embedding IS NOT NULL LIMIT 1")
    size = row.fetchone()
    counts = {
        (family, key): df
        for family, key, df in conn.execute(
            "SELECT family, scope_key, df FROM term_stats WHERE term = ?", (sql.DOCUMENTS,)
        )
    }
    return scopes, None if size is None else int(size[0]) // 4, counts


def _scope_key(conn: sqlite3.Connection, scope_id: str) -> int:
    conn.execute("INSERT OR IGNORE INTO scopes (scope) VALUES (?)", (scope_id,))
    row = conn.execute("SELECT scope_key FROM scopes WHERE scope = ?", (scope_id,)).fetchone()
    return int(row[0])


def _insert(
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
        columns.get("tags"), columns.get("created_at"), columns.get("thread"),
        columns.get("title"), columns.get("abstract"), columns.get("overview"),
        columns.get("embedding"),
    )  # fmt: skip
    row = conn.execute(sql.INSERT_RECORD, values).lastrowid
    assert row is not None
    table = sql.FTS_TABLES[family]
    conn.execute(
        f"INSERT INTO {table} (rowid, skey, terms) VALUES (?, ?, ?)",
        (row, sql.scope_token(key), terms),
    )
    _count_terms(conn, family, key, terms, +1)
    return row


def _count_terms(conn: sqlite3.Connection, family: Family, key: int, terms: str, step: int) -> None:
    """Keep the scope's document frequencies in step with what is searchable."""
    distinct = {sql.DOCUMENTS, *terms.split()}
    conn.executemany(sql.COUNT_TERMS, [(family, key, term, step) for term in distinct])


def _insert_memory(
    conn: sqlite3.Connection, key: int, rid: str, revision: int, entry: MemoryEntry, vector: Any
) -> int:
    created_at = entry.created_at.isoformat() if entry.created_at is not None else None
    return _insert(
        conn, "memory", key, rid, revision, index_text(entry.text),
        text=entry.text, kind=entry.kind, tags=sql.encode_tags(entry.tags),
        created_at=created_at, thread=entry.thread, embedding=vector.tobytes(),
    )  # fmt: skip


def _retire(conn: sqlite3.Connection, family: Family, row: int) -> None:
    """Take a record version out of search; it stays readable by its reference."""
    conn.execute("UPDATE records SET live = 0 WHERE row = ?", (row,))
    table = sql.FTS_TABLES[family]
    found = conn.execute(f"SELECT terms FROM {table} WHERE rowid = ?", (row,)).fetchone()
    conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (row,))
    key = conn.execute("SELECT scope_key FROM records WHERE row = ?", (row,)).fetchone()[0]
    _count_terms(conn, family, key, found[0], -1)


def _supersede(
    conn: sqlite3.Connection, written: _Written, column: str, value: str
) -> tuple[str, int]:
    """Retire the live record whose ``column`` equals ``value``; return its id and next revision."""
    found = conn.execute(
        f"SELECT row, rid, revision FROM records WHERE family = ? AND scope_key = ?"
        f" AND {column} = ? AND live = 1",
        (written.family, written.scope_key, value),
    ).fetchone()
    if found is None:
        return (value if column == "rid" else uuid.uuid4().hex), 1
    row, rid, revision = found
    _retire(conn, written.family, row)
    written.removed_rows.append(row)
    return rid, revision + 1


def _live_memory(
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


def _lexical_rows(
    conn: sqlite3.Connection, family: Family, key: int, terms: Sequence[str], limit: int
) -> list[tuple[int, str, float]]:
    match = match_expression(_selective_terms(conn, family, key, terms))
    if not match:
        return []
    table = sql.FTS_TABLES[family]
    statement = (
        f"SELECT rowid, terms, rank FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT ?"
    )
    return conn.execute(statement, (sql.lexical_query(key, match), limit)).fetchall()


def _selective_terms(
    conn: sqlite3.Connection, family: Family, key: int, terms: Sequence[str]
) -> list[str]:
    """The query terms that drive the full-text search, rarest first.

    BM25 ranking costs per matching row, so a term found in most of a scope would make
    every search scan the scope while adding almost nothing to the ranking. Terms absent
    from the scope are skipped; the rest are taken rarest first while their postings stay
    within ``POSTINGS_BUDGET`` (the rarest term is always taken). Admission still counts
    every query term a candidate contains.
    """
    if not terms:
        return []
    found = dict(conn.execute(sql.term_frequencies(len(terms)), (family, key, *terms)).fetchall())
    chosen: list[str] = []
    postings = 0
    for term in sorted(found, key=found.__getitem__):
        if found[term] <= 0:
            continue
        if chosen and postings + found[term] > POSTINGS_BUDGET:
            break
        chosen.append(term)
        postings += found[term]
    return chosen


def _fetch(
    conn: sqlite3.Connection, family: Family, scope_id: str, rows: list[int]
) -> dict[int, Evidence]:
    if not rows:
        return {}
    found = conn.execute(sql.fetch_statement(len(rows)), rows).fetchall()
    return {row[0]: sql.evidence_from_row(family, scope_id, row) for row in found if row[-1]}


def _load_matrix(
    conn: sqlite3.Connection, family: Family, key: int, dimension: int
) -> VectorMatrix:
    found = conn.execute(
        "SELECT row, embedding FROM records WHERE family = ? AND scope_key = ? AND live = 1"
        " AND embedding IS NOT NULL ORDER BY row",
        (family, key),
    ).fetchall()
    rows = np.fromiter((row for row, _ in found), dtype=np.int64, count=len(found))
    vectors = np.frombuffer(b"".join(blob for _, blob in found), dtype=np.float32)
    return VectorMatrix(dimension, rows, vectors.reshape(len(found), dimension))
