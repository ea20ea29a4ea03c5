"""``SqliteStore``: the embedded default store.

One SQLite file in WAL mode; FTS5 for text; float32 embeddings in BLOBs, held per scope
as a numpy matrix so a vector search is one BLAS product. All SQLite work runs in anyio
worker threads, so the store behaves identically under asyncio and trio. It never
touches the gate, the coordinator or the Builder.
"""

from __future__ import annotations

import sqlite3
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread
import attrs
import numpy as np
from opentelemetry.trace import SpanKind

from ..embedders import fingerprint_of
from ..vocabulary import _telemetry as tracing
from ..vocabulary._analysis import index_text
from ..vocabulary._errors import InvalidRequestError, NotFoundError, StoreError
from ..vocabulary._evidence import Evidence, Pool
from ..vocabulary._families import rules
from ..vocabulary._records import (
    Experience,
    MemoryEntry,
    MemoryRecord,
    MemoryRef,
    Profile,
    RecordRef,
    Resource,
    TopicMemory,
    experience_text,
    topic_text,
)
from ..vocabulary._turns import loop_turn
from . import _sqlite_rows as rows
from . import _sqlite_schema as sql
from . import _sqlite_search as search
from ._connections import Connections
from ._evidence_cache import EvidenceCache
from ._scope_matrices import NO_ROWS, NO_SIMILARITIES, ScopeMatrices

#: What a resource's idempotency key compares: its URI, summaries and body.
RESOURCE_CONTENT = (
    "rid, abstract, overview, (SELECT body FROM resource_bodies b WHERE b.row = records.row)"
)

#: Each scope's searchable records per family (the document count ``term_stats`` keeps
#: under the empty term) and its profile, scopes in order.
SCOPE_COUNTS = (
    "SELECT s.scope, t.family, t.df FROM term_stats t JOIN scopes s USING (scope_key)"
    " WHERE t.term = ? AND t.df > 0"
    " UNION ALL SELECT s.scope, 'profile', 1 FROM profiles p JOIN scopes s USING (scope_key)"
    " ORDER BY 1"
)

#: Searches of a family with at most this many records in the scope run on the calling
#: thread: they take up to about a millisecond (0.6 ms at 2,000 records), and a
#: worker-thread round trip (0.15 ms on asyncio, 0.6 ms on trio, on a 2-core machine,
#: more beside other threads) would cost nearly as much and hold the loop as long in
#: GIL hand-overs: measured at 2,000 records, the heartbeat's lag was the same either
#: way and the prepare 1.9x slower in a thread. A larger scope is searched, and its
#: evidence read, in a worker thread: inline, a 20,000-record search held the loop 5 ms.
INLINE_ROWS = 4096

T = TypeVar("T")

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from contextlib import AbstractContextManager

    import numpy.typing as npt
    from opentelemetry.trace import Span, TracerProvider

    from ..embedders import Embedder
    from ..vocabulary._families import Family
    from ..vocabulary._retrieval import PoolRequest

    Vectors = npt.NDArray[np.float32]


class SqliteStore:
    """The embedded store. Open it with :meth:`open`; close it with :meth:`aclose`."""

    def __init__(
        self,
        connections: Connections,
        scopes: dict[str, int],
        dimension: int | None,
        counts: dict[tuple[Family, int], int],
    ) -> None:
        self._conns = connections
        self._scope_keys = scopes
        self._dimension = dimension
        self._counts = counts
        self._inline_rows = INLINE_ROWS
        self._versions: dict[str, int] = {}
        # Scopes that ever held a memory entry with a thread (a forget never clears it:
        # the flag only spares unthreaded scopes the neighbour lookup).
        self._threaded: set[int] = set()
        self._vectors = ScopeMatrices()
        self._tracer = tracing.tracer(None)
        self._evidence = EvidenceCache()
        self._embedder: str | None = None  # the fingerprint bound by the runtime
        self._closed = False

    @classmethod
    async def open(
        cls,
        database: str = ":memory:",
        *,
        readers: int = 4,
        tracer_provider: TracerProvider | None = None,
    ) -> SqliteStore:
        """Open (creating if needed) an embedded store at ``database``.

        Args:
            database: a file path or ``":memory:"``.
            readers: reader connections for concurrent searches.
            tracer_provider: where its DB spans go; the global provider when None.

        Raises:
            InvalidRequestError: an argument is malformed (the message names it); nothing
                is opened.
            StoreError: the database cannot be opened.
        """
        if not isinstance(database, str) or not database:
            raise InvalidRequestError("database must be a file path or ':memory:'")
        if isinstance(readers, bool) or not isinstance(readers, int) or readers < 1:
            raise InvalidRequestError("readers must be an integer >= 1")
        tracing.check_provider(tracer_provider)
        tracer = tracing.tracer(tracer_provider)
        store = await anyio.to_thread.run_sync(cls._open_sync, database, readers)
        store._tracer = tracer
        return store

    @classmethod
    def _open_sync(cls, database: str, readers: int) -> SqliteStore:
        try:
            conns = Connections(database, readers=readers)
        except sqlite3.Error as exc:
            raise StoreError(_unopenable(database, exc)) from exc
        try:
            scopes, dimension, counts, threaded = conns.write_now(rows.create_schema)
        except BaseException as exc:
            conns.close()
            if isinstance(exc, sqlite3.Error):
                raise StoreError(_unopenable(database, exc)) from exc
            raise
        store = cls(conns, scopes, dimension, counts)
        store._threaded = threaded
        store._vectors.persist_beside(database)  # large scopes' vector indexes
        return store

    async def aclose(self) -> None:
        """Close every connection. Idempotent."""
        if not self._closed:
            self._closed = True
            self._vectors.close()
            self._conns.close()

    def scope_version(self, scope_id: str) -> int:
        self._check_open()
        return self._versions.get(scope_id, 0)

    async def bind_embedder(self, fingerprint: str, dimension: int) -> None:
        """Accept the embedder the runtime will write and search with.

        The fingerprint of the embedder that built the store's vectors is recorded with
        the first vector written; a different one is refused instead of returning garbage.

        Raises:
            StoreError: the store's vectors were built by another embedder.
        """

        def work(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
            return None if row is None else str(row[0])

        recorded = await self._read("bind_embedder", work, inline=True)
        mismatch = (recorded is not None and recorded != fingerprint) or (
            recorded is None and self._dimension not in (None, dimension)
        )
        if mismatch:
            built = recorded or f"a {self._dimension}-dimensional embedder"
            raise StoreError(
                f"this store's vectors were built by {built}; the runtime was opened with"
                f" {fingerprint}. Open it with the same embedder, or rebuild its vectors with"
                " `satchel reembed`."
            )
        self._embedder = fingerprint

    async def reembed(
        self,
        embedder: Embedder,
        *,
        batch_size: int = 512,
        progress: Callable[[int, int], object] | None = None,
    ) -> int:
        """Rebuild every searchable vector with ``embedder``, atomically; returns how many.

        Run it while no prepare uses the store.
        """
        fingerprint = fingerprint_of(embedder)

        def read(conn: sqlite3.Connection) -> list[tuple[int, str]]:
            return search.embedding_sources(conn)

        sources = await self._read("reembed", read, inline=False)
        vectors: list[Any] = []
        for start in range(0, len(sources), batch_size):
            chunk = sources[start : start + batch_size]
            vectors.append(await embedder.embed([text for _, text in chunk]))
            if progress is not None:
                progress(start + len(chunk), len(sources))
        blobs = [v.tobytes() for block in vectors for v in block]

        def write(conn: sqlite3.Connection) -> rows.Written:
            rows.replace_embeddings(conn, [row for row, _ in sources], blobs, fingerprint)
            return rows.Written("", 0, "profile", [])

        def after(_: rows.Written) -> None:
            self._vectors.forget_all()
            self._dimension = embedder.dimension
            self._embedder = fingerprint
            for scope in list(self._versions):  # every pool read before is stale now
                self._versions[scope] += 1

        await self._conns.write(write, after)
        return len(sources)

    # -- writes ---------------------------------------------------------------------

    async def add_memories(
        self, scope_id: str, entries: Sequence[MemoryEntry], vectors: Vectors
    ) -> list[MemoryRef]:
        self._check_vectors(vectors, len(entries))

        def work(conn: sqlite3.Connection) -> rows.Written:
            key = rows.scope_key(conn, scope_id)
            written = rows.Written(scope_id, key, "memory", [])
            for entry, vector in zip(entries, vectors, strict=True):
                content = (
                    entry.text, entry.kind, sql.encode_tags(entry.tags),
                    None if entry.created_at is None else entry.created_at.isoformat(),
                    entry.thread,
                )  # fmt: skip
                hit = rows.keyed_version(
                    conn, written, entry.key, "text, kind, tags, created_at, thread", content
                )
                rid, version = (uuid.uuid4().hex, 1) if hit is None else hit[:2]
                if hit is None or hit[2]:
                    written.added_rows.append(
                        rows.insert_memory(conn, key, rid, version, entry, vector)
                    )
                written.refs.append(MemoryRef(scope_id, rid, version))
            self._note_threads(key, entries)
            return written

        return (await self._write("add_memories", work, vectors)).refs

    async def update_memory(self, ref: MemoryRef, entry: MemoryEntry, vector: Vectors) -> MemoryRef:
        self._check_vectors(vector, 1)

        def work(conn: sqlite3.Connection) -> rows.Written:
            key = self._known_scope(ref.scope_id)
            row, latest = rows.live_memory(conn, key, ref)
            version = entry
            if entry.key is None:  # a new version keeps the entry's idempotency key
                (kept,) = conn.execute(
                    "SELECT caller_key FROM records WHERE row = ?", (row,)
                ).fetchone()
                version = attrs.evolve(entry, key=kept)
            rows.retire(conn, "memory", row)
            new_row = rows.insert_memory(conn, key, ref.entry_id, latest + 1, version, vector[0])
            self._note_threads(key, [entry])
            new_ref = MemoryRef(ref.scope_id, ref.entry_id, latest + 1)
            return rows.Written(ref.scope_id, key, "memory", [new_ref], [new_row], [row])

        return (await self._write("update_memory", work, vector)).refs[0]  # type: ignore[no-any-return]

    async def forget_memory(self, ref: MemoryRef) -> None:
        def work(conn: sqlite3.Connection) -> rows.Written:
            key = self._known_scope(ref.scope_id)
            row, _ = rows.live_memory(conn, key, ref, forgotten_ok=True)
            if row is not None:
                rows.retire(conn, "memory", row)
            return rows.Written(ref.scope_id, key, "memory", [], [], [] if row is None else [row])

        await self._write("forget_memory", work, None)

    async def add_experiences(
        self, scope_id: str, experiences: Sequence[Experience]
    ) -> list[RecordRef]:
        def work(conn: sqlite3.Connection) -> rows.Written:
            key = rows.scope_key(conn, scope_id)
            written = rows.Written(scope_id, key, "experience", [])
            for experience in experiences:
                text = experience_text(experience)
                hit = rows.keyed_version(conn, written, experience.key, "text", (text,))
                rid, revision = (uuid.uuid4().hex, 1) if hit is None else hit[:2]
                if hit is None or hit[2]:
                    row = rows.insert(
                        conn, "experience", key, rid, revision, index_text(text),
                        text=text, caller_key=experience.key,
                    )  # fmt: skip
                    written.added_rows.append(row)
                written.refs.append(RecordRef("experience", scope_id, rid, revision))
            return written

        return (await self._write("add_experiences", work, None)).refs

    async def add_topic_memories(
        self, scope_id: str, topics: Sequence[TopicMemory], vectors: Vectors
    ) -> list[RecordRef]:
        self._check_vectors(vectors, len(topics))

        def work(conn: sqlite3.Connection) -> rows.Written:
            key = rows.scope_key(conn, scope_id)
            written = rows.Written(scope_id, key, "topic-memory", [])
            for topic, vector in zip(topics, vectors, strict=True):
                text = topic_text(topic)
                hit = rows.keyed_version(
                    conn, written, topic.key, "title, text", (topic.title, text)
                )
                if hit is not None and not hit[2]:
                    written.refs.append(RecordRef("topic-memory", scope_id, *hit[:2]))
                    continue
                if hit is None:  # without a key, the title names the note
                    rid, revision = rows.supersede(conn, written, "title", topic.title)
                else:
                    rid, revision = hit[:2]
                written.added_rows.append(
                    rows.insert(
                        conn, "topic-memory", key, rid, revision, index_text(text),
                        text=text, title=topic.title, embedding=vector.tobytes(),
                        caller_key=topic.key,
                    )
                )  # fmt: skip
                written.refs.append(RecordRef("topic-memory", scope_id, rid, revision))
            return written

        return (await self._write("add_topic_memories", work, vectors)).refs

    async def add_resources(
        self, scope_id: str, resources: Sequence[Resource], vectors: Vectors
    ) -> list[RecordRef]:
        self._check_vectors(vectors, len(resources))

        def work(conn: sqlite3.Connection) -> rows.Written:
            key = rows.scope_key(conn, scope_id)
            written = rows.Written(scope_id, key, "resource", [])
            for resource, vector in zip(resources, vectors, strict=True):
                content = (resource.uri, resource.abstract, resource.overview, resource.body)
                hit = rows.keyed_version(conn, written, resource.key, RESOURCE_CONTENT, content)
                if hit is not None and not hit[2]:
                    written.refs.append(RecordRef("resource", scope_id, *hit[:2]))
                    continue
                if hit is not None and hit[0] == resource.uri:
                    revision = hit[1]
                else:  # a new URI: the URI names the document
                    _, revision = rows.supersede(conn, written, "rid", resource.uri)
                searchable = rows.searchable(None, resource.abstract, resource.overview)
                row = rows.insert(
                    conn, "resource", key, resource.uri, revision, index_text(searchable),
                    abstract=resource.abstract, overview=resource.overview,
                    embedding=vector.tobytes(), caller_key=resource.key,
                )  # fmt: skip
                conn.execute("INSERT INTO resource_bodies VALUES (?, ?)", (row, resource.body))
                written.added_rows.append(row)
                written.refs.append(RecordRef("resource", scope_id, resource.uri, revision))
            return written

        return (await self._write("add_resources", work, vectors)).refs

    async def set_profile(self, scope_id: str, profile: Profile) -> None:
        def work(conn: sqlite3.Connection) -> rows.Written:
            key = rows.scope_key(conn, scope_id)
            conn.execute("INSERT OR REPLACE INTO profiles VALUES (?, ?)", (key, profile.text))
            return rows.Written(scope_id, key, "profile", [])

        await self._write("set_profile", work, None)

    # -- reads ----------------------------------------------------------------------

    async def get_memory(self, ref: MemoryRef) -> MemoryRecord:
        self._check_open()
        self._conns.sync(self._reload)
        key = self._scope_keys.get(ref.scope_id)
        if key is None:
            raise NotFoundError(f"no memory entry {ref.entry_id!r} in scope {ref.scope_id!r}")

        def work(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
            statement = (
                "SELECT text, kind, tags, created_at, thread, caller_key FROM records"
                " WHERE family = 'memory' AND scope_key = ? AND rid = ? AND revision = ?"
            )
            row: tuple[Any, ...] | None = conn.execute(
                statement, (key, ref.entry_id, ref.version)
            ).fetchone()
            return row

        row = await self._read("get_memory", work, inline=True)
        if row is None:
            raise NotFoundError(
                f"no version {ref.version} of memory entry {ref.entry_id!r}"
                f" in scope {ref.scope_id!r}"
            )
        text, kind, tags, created_at, thread, caller_key = row
        return MemoryRecord(
            ref=ref,
            text=text,
            kind=kind,
            tags=sql.decode_tags(tags),
            created_at=datetime.fromisoformat(created_at) if created_at else None,
            thread=thread,
            key=caller_key,
        )

    async def get_profile(self, scope_id: str) -> Evidence | None:
        self._check_open()
        self._conns.sync(self._reload)
        key = self._scope_keys.get(scope_id)
        if key is None:
            return None

        def work(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT text FROM profiles WHERE scope_key = ?", (key,)).fetchone()
            return None if row is None else str(row[0])

        text = await self._read("get_profile", work, inline=True)
        if text is None:
            return None
        return Evidence.from_record("profile", scope_id, text=text)

    async def read_resource_bodies(self, scope_id: str, uris: Sequence[str]) -> Mapping[str, str]:
        self._check_open()
        self._conns.sync(self._reload)
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

        return await self._read("read_resource_bodies", work, inline=True)

    async def scope_counts(self) -> Mapping[str, Mapping[Family, int]]:
        """Every scope holding a searchable record or a profile, with its searchable
        records per family (a profile counts 1).

        Read from the tables in one statement, not from this store's caches: one
        snapshot of what every connection (every process) committed, even while this
        store is writing."""
        self._check_open()

        def work(conn: sqlite3.Connection) -> list[tuple[str, Family, int]]:
            return conn.execute(SCOPE_COUNTS, (sql.DOCUMENTS,)).fetchall()

        counts: dict[str, dict[Family, int]] = {}
        for scope, family, count in await self._read("scope_counts", work, inline=True):
            counts.setdefault(scope, {})[family] = int(count)
        return counts

    async def retrieve(self, family: Family, scope_id: str, request: PoolRequest) -> Pool:
        self._check_open()
        self._conns.sync(self._reload)
        version = self.scope_version(scope_id)
        key = self._scope_keys.get(scope_id)
        rows = 0 if key is None else self._counts.get((family, key), 0)
        if key is None or rows == 0:
            return Pool(family, scope_id, version)  # nothing to search: no I/O at all
        vector = request.vector

        def work(conn: sqlite3.Connection) -> Pool:
            nearest = self._start_nearest(conn, family, key, vector, request.size)
            lexical = search.lexical_hits(conn, family, key, request, rows)
            found, similarities = nearest()
            timed, matched = self._time_channel(conn, family, key, request)
            return Pool(
                family,
                scope_id,
                version,
                scope_rows=rows,
                lexical_keys=lexical.rows,
                lexical_scores=lexical.scores,
                lexical_matches=lexical.matches,
                vector_keys=found,
                vector_similarities=similarities,
                time_keys=timed,
                time_matched=matched,
                common_terms=lexical.common,
            )

        inline = rows <= self._inline_rows and (
            vector is None or not rules(family).vector_channel or self._vectors.loaded(family, key)
        )
        if inline:
            return await self._read("retrieve", work, inline=True)
        self._vectors.threaded_searches += 1
        try:
            return await self._read("retrieve", work, inline=False)
        finally:
            self._vectors.threaded_searches -= 1

    async def neighbours(
        self, family: Family, scope_id: str, keys: Sequence[int]
    ) -> Mapping[int, tuple[int, ...]]:
        """For each key, the searchable records just before and just after it in its
        thread (ordered by ``created_at``, then insertion); keys without a thread, or no
        longer searchable, are absent. Never crosses a thread, a scope or a family."""
        self._check_open()
        key = self._scope_keys.get(scope_id)
        if key is None or not keys or key not in self._threaded:
            return {}  # no entry of the scope has a thread: no I/O at all

        def work(conn: sqlite3.Connection) -> dict[int, tuple[int, ...]]:
            return search.thread_neighbours(conn, family, key, keys)

        return await self._read("neighbours", work, inline=True)

    async def evidence(
        self, family: Family, scope_id: str, keys: Sequence[int]
    ) -> Mapping[int, Evidence]:
        """Read the evidence of record versions a pool named; a key whose record was
        retired since is missing from the result (searched versions only)."""
        self._check_open()
        self._conns.sync(self._reload)
        found, missing = self._evidence.split(keys, family, scope_id)
        key = self._scope_keys.get(scope_id)
        if not missing or key is None:
            return found
        generation = self._evidence.generation

        def work(conn: sqlite3.Connection) -> dict[int, Evidence]:
            return search.fetch(conn, family, key, scope_id, missing)

        # A read in a large scope touches pages all over a large file: 0.8-1.1 ms inline
        # at 20k-100k records against 0.2 ms at 2k, so it goes to a worker thread too.
        small = self._counts.get((family, key), 0) <= self._inline_rows
        fetched = await self._read("evidence", work, inline=small and len(missing) <= 256)
        self._evidence.remember(fetched, generation)
        found.update(fetched)
        return found

    async def _read(
        self, operation: str, work: Callable[[sqlite3.Connection], T], *, inline: bool
    ) -> T:
        """Run a read on the calling thread when ``inline`` and a connection is free, else
        in a worker thread; one DB span either way."""
        self._check_open()
        with self._span(operation):
            try:
                if inline:
                    async with loop_turn():
                        done, result = self._conns.read_inline(work)
                    if done:
                        return result  # type: ignore[return-value]
                return await self._conns.read(work)
            except sqlite3.Error as exc:
                raise StoreError(
                    f"{operation} could not read the database: {exc} (if the file is"
                    " damaged, restore it from a backup)"
                ) from exc

    def _reload(self, conn: sqlite3.Connection) -> None:
        """Follow commits of other connections (another process on the same file): its
        scopes, counts and threads are read again, and every cached vector, evidence and
        pool is dropped (each scope's write version moves), so nothing stale is served."""
        scopes, dimension, counts, threaded = rows.load_state(conn)
        self._evidence.retire_all()
        self._vectors.forget_all()
        self._scope_keys.update(scopes)
        self._counts = counts
        self._threaded = threaded
        if dimension is not None:
            self._dimension = dimension
        for scope in {*self._versions, *scopes}:
            self._versions[scope] = self._versions.get(scope, 0) + 1

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")

    def _span(self, operation: str) -> AbstractContextManager[Span]:
        attributes = {"db.system.name": "sqlite", "db.operation.name": operation}
        return self._tracer.start_as_current_span(
            f"sqlite {operation}", kind=SpanKind.CLIENT, attributes=attributes
        )

    # -- internals ------------------------------------------------------------------

    async def _write(
        self, operation: str, work: Callable[[sqlite3.Connection], rows.Written], vectors: Any
    ) -> rows.Written:
        if self._closed:
            raise StoreError("the store is closed")

        def after(written: rows.Written) -> None:
            self._scope_keys[written.scope_id] = written.scope_key
            self._versions[written.scope_id] = self._versions.get(written.scope_id, 0) + 1
            if written.family == "profile":
                return
            if written.removed_rows:
                self._evidence.retire(written.removed_rows)
            count = (written.family, written.scope_key)
            delta = len(written.added_rows) - len(written.removed_rows)
            self._counts[count] = self._counts.get(count, 0) + delta
            self._vectors.apply(written, vectors)

        def recorded(conn: sqlite3.Connection) -> rows.Written:
            written = work(conn)
            if vectors is not None and self._embedder is not None:
                rows.record_embedder(conn, self._embedder)
            return written

        try:
            with self._span(operation):
                return await self._conns.write(recorded, after, self._reload)
        except sqlite3.Error as exc:
            raise StoreError(f"write failed: {exc}") from exc

    def _start_nearest(
        self,
        conn: sqlite3.Connection,
        family: Family,
        key: int,
        vector: Vectors | None,
        k: int,
    ) -> Callable[[], tuple[Any, Any]]:
        if vector is None or not rules(family).vector_channel:
            return lambda: (NO_ROWS, NO_SIMILARITIES)
        if self._dimension is not None and len(vector) != self._dimension:
            raise StoreError(
                f"this store holds {self._dimension}-dimensional vectors; the query vector"
                f" has {len(vector)} dimensions (was the store built with another embedder?)"
            )
        return self._vectors.start_nearest(conn, family, key, vector, k)

    def _time_channel(
        self, conn: sqlite3.Connection, family: Family, key: int, request: PoolRequest
    ) -> tuple[Any, int]:
        """The time channel's keys and how many records the windows held."""
        size = request.time_size
        if not request.query.dates or not rules(family).time_channel or size <= 0:
            return NO_ROWS, 0
        hits = search.time_hits(conn, family, key, request)
        matrix = self._vectors.loaded(family, key)
        similarities = None
        if request.vector is not None and matrix is not None and len(hits):
            similarities = matrix.similarities(np.asarray(hits.keys), request.vector)
        return hits.ranked(size, similarities), len(hits)

    def _note_threads(self, key: int, entries: Sequence[MemoryEntry]) -> None:
        # Set before the commit: a failed write leaves a flag that costs one lookup.
        if any(entry.thread is not None for entry in entries):
            self._threaded.add(key)

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


def _unopenable(database: str, exc: sqlite3.Error) -> str:
    return (
        f"cannot open database {database!r}: {exc}. Check that it is a satchel database,"
        " that it and its -wal and -shm files are readable and writable, and, if it is"
        " damaged, restore it from a backup"
    )
